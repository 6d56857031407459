"""The notebook and book path is wired: every page is built, every notebook is committed
executed top to bottom, so that nbval (run by ``make test``) checks what readers see.

nbval itself runs the notebooks; these tests catch what it cannot see: a book page left
out of ``_toc.yml`` (never built, since ``only_build_toc_files`` is on), a notebook saved
unexecuted or run out of order, a kernel other than ``python3``.
To re-execute notebooks cleanly after editing them: ``make execute``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
NOTEBOOKS = ROOT / "notebooks"


def _book_pages() -> set[str]:
    """Book sources (.md, .ipynb) as toc entries: relative path without suffix."""
    pages = set()
    for path in BOOK.rglob("*"):
        rel = path.relative_to(BOOK)
        if path.suffix not in {".md", ".ipynb"} or any(
            part.startswith(("_", ".")) for part in rel.parts
        ):
            continue
        pages.add(rel.with_suffix("").as_posix())
    return pages


def _toc_entries(node: object) -> list[str]:
    """All ``root`` and ``file`` entries of a parsed ``_toc.yml``, in order."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in {"root", "file"} and isinstance(value, str):
                found.append(Path(value).with_suffix("").as_posix())
            else:
                found.extend(_toc_entries(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_toc_entries(item))
    return found


def _committed_notebooks() -> list[Path]:
    books = [p for p in BOOK.rglob("*.ipynb") if not _is_build_output(p)]
    return sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(books)


def _is_build_output(path: Path) -> bool:
    return any(part.startswith(("_", ".")) for part in path.relative_to(BOOK).parts)


def test_toc_lists_every_book_page_and_nothing_missing():
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text(encoding="utf-8"))
    entries = _toc_entries(toc)
    pages = _book_pages()
    assert len(entries) == len(set(entries)), f"duplicate toc entries: {entries}"
    assert set(entries) - pages == set(), "toc entries without a page in book/"
    assert pages - set(entries) == set(), "book pages missing from book/_toc.yml"


def test_book_config_executes_pages_and_fails_on_errors():
    config = yaml.safe_load((BOOK / "_config.yml").read_text(encoding="utf-8"))
    assert config["only_build_toc_files"] is True
    assert config["execute"]["execute_notebooks"] == "force"
    assert config["execute"]["allow_errors"] is False
    assert config["sphinx"]["config"]["nb_execution_raise_on_error"] is True


def test_course_notebooks_are_numbered():
    names = [p.name for p in sorted(NOTEBOOKS.glob("*.ipynb"))]
    assert "00_welcome.ipynb" in names
    bad = [n for n in names if not re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", n)]
    assert bad == [], "course notebooks are named NN_topic.ipynb (lower case, underscores)"
    numbers = [n[:2] for n in names]
    assert len(numbers) == len(set(numbers)), f"two notebooks share a number: {names}"


@pytest.mark.parametrize(
    "path", _committed_notebooks(), ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_notebook_is_committed_executed_in_order_with_python3(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    assert code, "a notebook with no code belongs in the book as a .md page"
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"code cells must be executed once, top to bottom, in a fresh kernel "
        f"(execution counts {counts}); run `make execute`"
    )
    errors = [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    assert errors == [], "a committed notebook shows an error output"
    timings = [c["metadata"]["execution"] for c in code if "execution" in c["metadata"]]
    assert timings == [], "cell timing metadata is noise in diffs; run `make execute`"


# nbval (``--nbval-lax``) compares the saved output of the cells tagged
# ``nbval-check-output``; the tag, unlike a ``# NBVAL_CHECK_OUTPUT`` comment, is out of
# the students' sight. How many cells each page checks, at least: a page may check
# more, and checking fewer takes a deliberate edit here. (A lesson's exercise is an
# answer cell, its solution inside, and a checked grade cell.)
CHECK_TAG = "nbval-check-output"
CHECKED_AT_LEAST = {
    "notebooks/00_welcome.ipynb": 1,
    "notebooks/01_chain_rule.ipynb": 9,
    "notebooks/02_tracing.ipynb": 15,
    "notebooks/03_source_transformation.ipynb": 14,
    "notebooks/04_pitfalls.ipynb": 17,
    "notebooks/05_custom_ops.ipynb": 11,
    "notebooks/06_symbolic.ipynb": 8,
    "notebooks/07_training.ipynb": 8,
    "book/explanation/compiler.ipynb": 10,
    "book/explanation/fused_loops.ipynb": 2,
    "book/howto/debug_wrong_gradient.ipynb": 4,
    "book/howto/read_generated_code.ipynb": 3,
    "book/howto/verify_gradients.ipynb": 2,
    "book/howto/write_custom_op.ipynb": 4,
    "book/reference/conventions.ipynb": 1,
    "book/reference/primitives.ipynb": 1,
    "book/tutorial/custom_op.ipynb": 4,
    "book/tutorial/first_gradient.ipynb": 7,
    "book/tutorial/tracing.ipynb": 5,
}


def test_every_notebook_has_a_checked_count():
    names = {p.relative_to(ROOT).as_posix() for p in _committed_notebooks()}
    assert names == set(CHECKED_AT_LEAST), "list each notebook in CHECKED_AT_LEAST"


@pytest.mark.parametrize(
    "path", _committed_notebooks(), ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_checked_outputs_are_tagged_not_commented(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    visible = [c for c in code if "NBVAL" in "".join(c["source"])]
    assert visible == [], "nbval markers belong in cell tags, where students do not see them"
    checked = [c for c in code if CHECK_TAG in c["metadata"].get("tags", [])]
    name = path.relative_to(ROOT).as_posix()
    assert len(checked) >= CHECKED_AT_LEAST.get(name, 1), (
        f"{name} checks {len(checked)} outputs (cells tagged {CHECK_TAG}), "
        f"fewer than the {CHECKED_AT_LEAST.get(name, 1)} it checked before"
    )


def test_readme_puts_the_two_commands_before_the_tour():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.index("## A 30-second tour")
    assert 0 <= readme.index("make lab") < tour
    assert 0 <= readme.index("make test") < tour


def test_what_students_read_names_matlab_not_the_projects_seeds():
    """The MATLAB pages the project was made from are "the seeds" to the team only: a
    lesson, a book page or a docstring of the package says MATLAB (or what it means)."""
    texts = [*NOTEBOOKS.glob("*.ipynb"), *BOOK.rglob("*.ipynb"), *BOOK.rglob("*.md")]
    texts += list((ROOT / "autodiff_tutor").rglob("*.py"))
    jargon = re.compile(r"\bthe seeds\b(?!,)|\bseeds'", re.IGNORECASE)
    found = [
        f"{path.relative_to(ROOT)}: {line.strip()[:80]}"
        for path in texts
        if "_build" not in path.parts
        for line in path.read_text(encoding="utf-8").splitlines()
        if jargon.search(line)
    ]
    assert not found, "\n".join(found)
