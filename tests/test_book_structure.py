"""The book's structure, checked without building it (``make book`` takes about a minute).

What a build would only show as a broken link or a missing section: cross-references
to pages that do not exist, an API reference that leaves out a public name or lists one
that no page documents, an executed page whose widgets have no saved state (they would
not render in the HTML), a page that checks none of its outputs or draws unseeded
random numbers, and a configuration that would need the network. The table of contents
itself is checked by ``tests/test_notebooks_wiring.py``; nbval runs the pages.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
import yaml

import autodiff_tutor

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
API = BOOK / "reference" / "api"

DOC_ROLE = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`")
AUTO_DIRECTIVE = re.compile(r"^\s*\.\. auto(function|class|module|data|exception)::\s*(\S+)", re.M)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _sources() -> list[Path]:
    """Book sources (.md, .ipynb), without build outputs and hidden folders."""
    return sorted(
        p
        for p in BOOK.rglob("*")
        if p.suffix in {".md", ".ipynb"}
        and not any(part.startswith(("_", ".")) for part in p.relative_to(BOOK).parts)
    )


def _notebooks() -> list[Path]:
    return [p for p in _sources() if p.suffix == ".ipynb"]


def _markdown_text(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _code_cells(path: Path) -> list[dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(BOOK).as_posix() for p in paths]


@pytest.mark.parametrize("path", _sources(), ids=_ids(_sources()))
def test_doc_references_point_at_existing_pages(path: Path):
    targets = DOC_ROLE.findall(_markdown_text(path))
    missing = []
    for target in targets:
        base = BOOK if target.startswith("/") else path.parent
        page = (base / target.lstrip("/")).resolve()
        if not any(page.with_suffix(s).exists() for s in (".md", ".ipynb")):
            missing.append(target)
    assert missing == [], f"{{doc}} references to pages that do not exist: {missing}"


IMAGE_REFERENCE = re.compile(r"\{(?:figure|image)\}\s+(\S+)|!\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("path", _sources(), ids=_ids(_sources()))
def test_images_referenced_by_pages_exist(path: Path):
    references = [a or b for a, b in IMAGE_REFERENCE.findall(_markdown_text(path))]
    local = [r for r in references if "://" not in r]
    missing = [r for r in local if not (path.parent / r).is_file()]
    assert missing == [], f"images that do not exist: {missing}"


def _autosummary_entries() -> list[str]:
    """Full names listed in the API index's autosummary tables."""
    text = (API / "index.md").read_text(encoding="utf-8")
    module = re.search(r"\.\. currentmodule:: (\S+)", text)
    assert module, "the API index sets a currentmodule for its autosummary tables"
    entries = []
    for block in re.findall(r"\.\. autosummary::\n((?:\n|   .*\n)+)", text):
        names = [line.strip() for line in block.splitlines() if line.strip()]
        entries += [f"{module.group(1)}.{name}" for name in names if not name.startswith(":")]
    return entries


def _resolve(full_name: str) -> object:
    """The object a dotted name refers to (a module, or an attribute of one)."""
    parts = full_name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute)
        return obj
    raise ImportError(full_name)


def _documented() -> tuple[set[str], set[str]]:
    """Names documented by auto* directives on the API pages, and modules with :members:."""
    names, with_members = set(), set()
    for page in sorted(API.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in AUTO_DIRECTIVE.finditer(text):
            kind, name = match.groups()
            current = _current_module_before(text, match.start())
            full = name if "." in name or current is None else f"{current}.{name}"
            names.add(full)
            if kind == "module":
                following = text[match.end() :].split("\n.. ", 1)[0]
                if ":members:" in following:
                    with_members.add(full)
    return names, with_members


def _current_module_before(text: str, position: int) -> str | None:
    found = re.findall(r"\.\. (?:currentmodule|automodule):: (\S+)", text[:position])
    return found[-1] if found else None


def test_api_index_lists_every_public_name():
    entries = _autosummary_entries()
    objects = {}
    for entry in entries:
        objects[entry] = _resolve(entry)  # an entry that does not import fails here
    listed = {id(obj) for obj in objects.values()}
    missing = [n for n in autodiff_tutor.__all__ if id(getattr(autodiff_tutor, n)) not in listed]
    assert missing == [], f"public names missing from book/reference/api/index.md: {missing}"


def test_every_api_index_entry_is_documented_on_a_page():
    names, with_members = _documented()
    undocumented = []
    for entry in _autosummary_entries():
        parent = entry.rsplit(".", 1)[0]
        if entry not in names and parent not in with_members:
            undocumented.append(entry)
    assert undocumented == [], f"listed in the API index but documented nowhere: {undocumented}"


def test_api_pages_are_all_in_the_toc():
    toc = (BOOK / "_toc.yml").read_text(encoding="utf-8")
    pages = {p.relative_to(BOOK).with_suffix("").as_posix() for p in API.glob("*.md")}
    assert {p for p in pages if f"file: {p}\n" not in toc} == set()


def test_config_builds_offline_with_autodoc():
    config = yaml.safe_load((BOOK / "_config.yml").read_text(encoding="utf-8"))
    extensions = config["sphinx"]["extra_extensions"]
    assert "sphinx.ext.autodoc" in extensions and "sphinx.ext.autosummary" in extensions
    assert "sphinx.ext.intersphinx" not in extensions, "intersphinx fetches inventories"
    assert config["sphinx"]["config"].get("autosummary_generate") is False
    launch = config["launch_buttons"]
    assert not launch.get("binderhub_url") and not launch.get("colab_url")
    assert not launch.get("thebe")


@pytest.mark.parametrize("path", _notebooks(), ids=_ids(_notebooks()))
def test_page_checks_some_outputs_and_seeds_its_randomness(path: Path):
    cells = _code_cells(path)
    sources = ["".join(c["source"]) for c in cells]
    checked = [
        "".join(c["source"])
        for c in cells
        if "nbval-check-output" in c.get("metadata", {}).get("tags", [])
    ]
    assert checked, "tag the cells whose output matters with nbval-check-output"
    for cell in checked:
        assert not re.search(r"\bid\(|\btime\.", cell), "a checked output must not vary"
    code = "\n".join(sources)
    assert not re.search(r"default_rng\(\s*\)", code), "seed every random generator"
    legacy = re.search(r"np\.random\.(rand|randn|normal|uniform|random|choice)\(", code)
    assert legacy is None, "use np.random.default_rng(seed), not the global generator"


def _widget_views(path: Path) -> list[str]:
    """Model ids of the widget views a page's saved outputs display."""
    return [
        o["data"][WIDGET_VIEW]["model_id"]
        for c in _code_cells(path)
        for o in c["outputs"]
        if WIDGET_VIEW in o.get("data", {})
    ]


WIDGET_PAGES = [p for p in _notebooks() if _widget_views(p)]


def test_some_page_shows_widgets():
    assert WIDGET_PAGES, "the book shows the widgets on at least one executed page"


@pytest.mark.parametrize("path", WIDGET_PAGES, ids=_ids(WIDGET_PAGES))
def test_widget_outputs_have_saved_state(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    state = nb["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    missing = [model for model in _widget_views(path) if model not in state]
    assert missing == [], "widget views without saved state would not render in the book"
