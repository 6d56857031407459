"""The course's graded release (nbgrader, ``make release``).

notebooks/ is the instructors' version: every exercise is an answer cell with its
solution between markers and a locked grade cell with points and hidden tests. The
students' version holds no solution, no hidden test, no output and no saved widget
state. A student who fills in the solutions gets full marks in every lesson; a planted
wrong answer loses that exercise's points, and the feedback says where it is wrong (the
counterexample); a lesson handed in untouched runs top to bottom (only the graded cells
fail), so no cell reads a name that a removed solution defined.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # grading/ is not installed: it runs from the checkout
    sys.path.insert(0, str(ROOT))

from grading.release import lessons, nbgrader, release  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"
SOLUTION = re.compile(r"^\s*### BEGIN SOLUTION\n(.*?)^\s*### END SOLUTION\n?", re.M | re.S)
HIDDEN = re.compile(r"^### BEGIN HIDDEN TESTS\n(.*?)^### END HIDDEN TESTS\n?", re.M | re.S)
# The points of each lesson, exercise by exercise: a change here is a change of the course.
POINTS = {
    "00_welcome": {},
    "01_chain_rule": {"exercise_1": 1, "exercise_2": 2, "exercise_3": 2},
    "02_tracing": {"exercise_1": 2, "exercise_2": 2},
    "03_source_transformation": {"exercise_1": 2, "exercise_2": 2, "exercise_3": 2},
    "04_pitfalls": {"exercise_1": 2, "exercise_2": 1},
    "05_custom_ops": {"exercise_1": 3, "exercise_2": 3},
    "06_symbolic": {"exercise_1": 2, "exercise_2": 2, "exercise_3": 3},
    "07_training": {"exercise_1": 3, "exercise_2": 1},
}
# Wrong answers a student might hand in: (answer cell, the right text, the wrong text).
PLANTED = {
    "01_chain_rule": (
        "exercise_2_answer",
        "- np.log(1 + x**2) * np.sin(x)",
        "+ np.log(1 + x**2) * np.sin(x)",
    ),
    "06_symbolic": ("exercise_3_answer", "np.where(x > lam, -1.0,", "np.where(x > lam, 1.0,"),
}
# The lessons graded for full marks here: one per grader (finite differences of a
# derivative, check_op on a custom op, the symbolic proof), each run by nbgrader in
# about two seconds. Every lesson's solutions and hidden tests run in the same cells
# under nbval (notebooks/ is the solutions' version), whose outputs the grade cells'
# test below reads: together they keep ``make test`` short (lesson 07 alone trains
# networks for about 20 s).
FULL_MARKS = ("01_chain_rule", "05_custom_ops", "06_symbolic")


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _text(cell: dict) -> str:
    return "".join(cell["source"])


def _grading(cell: dict) -> dict:
    return cell["metadata"].get("nbgrader", {})


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The course released into a fresh course directory (nbgrader must be installed:
    the test environment has the grading extra, and CI must not skip this)."""
    try:
        import nbgrader  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("nbgrader is not installed (pip install -e '.[grading]')")
    folder = tmp_path_factory.mktemp("course")
    release(folder)
    return folder


@pytest.mark.parametrize("lesson", lessons())
def test_every_exercise_has_points_and_hidden_tests_that_require_the_checks(lesson):
    cells = _cells(NOTEBOOKS / f"{lesson}.ipynb")
    headings = [c for c in cells if c["cell_type"] == "markdown" and "Exercise" in _text(c)]
    graded = {_grading(c)["grade_id"]: c for c in cells if _grading(c).get("grade")}
    assert {name: _grading(c)["points"] for name, c in graded.items()} == POINTS[lesson]
    assert len(headings) == len(graded), "one grade cell per exercise"
    for name, cell in graded.items():
        assert _grading(cell)["locked"], name
        hidden = HIDDEN.search(_text(cell))
        assert hidden and "require(" in hidden.group(1), f"{name}: hidden tests require the checks"
        answer = next(c for c in cells if _grading(c).get("grade_id") == f"{name}_answer")
        assert _grading(answer)["solution"] and SOLUTION.search(_text(answer)), name


@pytest.mark.parametrize("lesson", lessons())
def test_students_version_has_no_solution_hidden_test_or_output(course, lesson):
    source = _cells(NOTEBOOKS / f"{lesson}.ipynb")
    released = course / "release" / lesson / f"{lesson}.ipynb"
    notebook = json.loads(released.read_text(encoding="utf-8"))
    assert set(notebook["metadata"]) <= {"kernelspec", "language_info"}, "no widget state"
    text = "\n".join(_text(c) for c in notebook["cells"])
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS"):
        assert marker not in text
    regions = [r for c in source for r in (*SOLUTION.findall(_text(c)), *HIDDEN.findall(_text(c)))]
    outside = {
        line.strip()
        for cell in source
        for line in HIDDEN.sub("", SOLUTION.sub("", _text(cell))).splitlines()
    }
    secret = [
        line.strip()
        for region in regions
        for line in region.splitlines()
        if line.strip() not in outside and line.strip() not in {")", "),", "],"}
    ]
    shown = {line.strip() for line in text.splitlines()}
    assert [line for line in secret if line in shown] == []
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def _fill_in(course: Path, lesson: str, student: str, wrong: bool = False) -> None:
    """Hand in a lesson as a student who writes the solutions into the answer cells of
    the students' version (and, if ``wrong``, the planted wrong answer)."""
    solutions = {
        _grading(c)["grade_id"]: re.sub(r"^\s*### (BEGIN|END) SOLUTION\n", "", _text(c), flags=re.M)
        for c in _cells(NOTEBOOKS / f"{lesson}.ipynb")
        if _grading(c).get("solution")
    }
    if wrong:
        answer, right, planted = PLANTED[lesson]
        assert right in solutions[answer]
        solutions[answer] = solutions[answer].replace(right, planted)
    released = course / "release" / lesson / f"{lesson}.ipynb"
    notebook = json.loads(released.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if _grading(cell).get("solution"):
            cell["source"] = solutions[_grading(cell)["grade_id"]]
    handed_in = course / "submitted" / student / lesson / f"{lesson}.ipynb"
    handed_in.parent.mkdir(parents=True)
    handed_in.write_text(json.dumps(notebook), encoding="utf-8")


@pytest.fixture(scope="module")
def graded(course: Path) -> Path:
    """alice hands in lessons solved, bob lessons 01 and 06 with one wrong answer
    each, carol lesson 06 untouched; nbgrader grades them all, and writes bob's
    feedback."""
    for lesson in FULL_MARKS:
        _fill_in(course, lesson, "alice")
    for lesson in PLANTED:
        _fill_in(course, lesson, "bob", wrong=True)
    untouched = course / "submitted" / "carol" / "06_symbolic" / "06_symbolic.ipynb"
    untouched.parent.mkdir(parents=True)
    untouched.write_bytes((course / "release" / "06_symbolic" / "06_symbolic.ipynb").read_bytes())
    nbgrader(course, "autograde", "[0-9][0-9]_*")
    nbgrader(course, "generate_feedback", "[0-9][0-9]_*", "--student", "bob")
    return course


def _scores(course: Path, lesson: str, student: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(lesson, lesson, student)
        return {grade.name: grade.score for grade in notebook.grades}


def test_the_solutions_get_full_marks(graded):
    for lesson in FULL_MARKS:
        assert _scores(graded, lesson, "alice") == pytest.approx(POINTS[lesson]), lesson


@pytest.mark.parametrize("lesson", lessons())
def test_grade_cells_run_with_the_solutions_leave_nothing_nbgrader_reads_as_a_loss(lesson):
    """nbgrader gives a grade cell no points when it shows an error or writes to stderr,
    and reads a result (``Out[n]``) as a partial score: the committed outputs of the
    solutions' version, which nbval compares with a fresh run, show none of these (the
    feedback is displayed or printed)."""
    for cell in _cells(NOTEBOOKS / f"{lesson}.ipynb"):
        if _grading(cell).get("grade"):
            kinds = {(o["output_type"], o.get("name")) for o in cell["outputs"]}
            assert kinds and kinds <= {("display_data", None), ("stream", "stdout")}, (
                _grading(cell)["grade_id"],
                kinds,
            )


def test_a_wrong_answer_loses_its_points_and_the_feedback_shows_where(graded):
    lesson_01 = _scores(graded, "01_chain_rule", "bob")
    assert lesson_01 == {"exercise_1": 1, "exercise_2": 0, "exercise_3": 2}
    lesson_06 = _scores(graded, "06_symbolic", "bob")
    assert lesson_06 == {"exercise_1": 2, "exercise_2": 2, "exercise_3": 0}
    feedback = (graded / "feedback" / "bob" / "01_chain_rule" / "01_chain_rule.html").read_text()
    where = r"Exercise 2: not yet — at x = -2\.7: it is -?[\d.]+, expected -?[\d.]+"
    assert re.search(where, feedback)
    feedback = (graded / "feedback" / "bob" / "06_symbolic" / "06_symbolic.html").read_text()
    where = r"dlam for x &gt; lam: expected -d_y, your backward gives d_y\s\(at x = [-\d.]+, lam = "
    assert re.search(where, feedback)


def test_a_lesson_handed_in_untouched_runs_and_only_its_graded_cells_fail(graded):
    autograded = graded / "autograded" / "carol" / "06_symbolic" / "06_symbolic.ipynb"
    cells = _cells(autograded)
    failed = {
        _grading(c).get("grade_id", _text(c)[:40])
        for c in cells
        if c["cell_type"] == "code" and any(o["output_type"] == "error" for o in c["outputs"])
    }
    assert failed == set(POINTS["06_symbolic"])
    shown = "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", []))
    assert "Write soft_threshold_backward above: its report appears here." in shown
    assert _scores(graded, "06_symbolic", "carol") == {name: 0 for name in POINTS["06_symbolic"]}
