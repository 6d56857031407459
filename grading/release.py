"""Write the course's graded release: an nbgrader course directory made from notebooks/.

notebooks/ is the instructors' version of the course: each exercise's solution sits
between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in the student's answer cell,
and each check is a locked grade cell with points and hidden tests (between
``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``) that call the course's checks
and ``require`` them to pass. ``make release`` (``python -m grading.release``) writes,
in the course directory (``course/`` unless ``--course`` says another)::

    nbgrader_config.py           the course's settings (from grading/)
    source/NN_lesson/NN_lesson.ipynb    each lesson as nbgrader's source (a copy:
                                        edit notebooks/, then release again)
    release/NN_lesson/NN_lesson.ipynb   what students get: no solution, no hidden
                                        test, no output
    gradebook.db                 the autograder's record: every grade cell, its points
                                 and its tests, restored when a submission is graded

Then nbgrader's own commands, run in the course directory, hand the lessons out,
collect, grade and return feedback (the book's instructor's guide lists them).

    python -m grading.release --course /srv/course 01_chain_rule 02_tracing
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CONFIG = Path(__file__).resolve().parent / "nbgrader_config.py"

__all__ = ["lessons", "nbgrader", "release", "write_sources"]


def lessons() -> list[str]:
    """The lessons, as nbgrader's assignment names: the notebooks' names, in order.

    >>> lessons()[:2]
    ['00_welcome', '01_chain_rule']
    """
    return [path.stem for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]


def write_sources(course: Path, names: list[str]) -> None:
    """Lay out the course directory: its settings, and each lesson as nbgrader's source
    (``source/NAME/NAME.ipynb``), copied from notebooks/ (a copy left from an earlier
    release is replaced)."""
    course.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIG, course / "nbgrader_config.py")
    for name in names:
        folder = course / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(NOTEBOOKS / f"{name}.ipynb", folder / f"{name}.ipynb")


def nbgrader(course: Path, *arguments: str) -> subprocess.CompletedProcess:
    """Run an nbgrader command in the course directory (where it reads its settings),
    with the Python that runs this module; raise when it fails, with its log.

    nbgrader runs ``alembic`` (its database's migrations) by name: the environment's
    scripts go first on the PATH, whether or not it is activated."""
    scripts = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *arguments],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(arguments)} failed:\n{done.stderr}")
    return done


def release(course: Path, names: list[str] | None = None) -> list[Path]:
    """Write the course directory and the students' version of each lesson (nbgrader's
    ``generate_assignment``, which also records the grade cells in ``gradebook.db``);
    return the students' notebooks."""
    names = names or lessons()
    write_sources(course, names)
    if names == lessons():  # one nbgrader run for the whole course
        nbgrader(course, "generate_assignment", "[0-9][0-9]_*", "--force")
    else:
        for name in names:
            nbgrader(course, "generate_assignment", name, "--force")
    return [course / "release" / name / f"{name}.ipynb" for name in names]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m grading.release",
        description="Write the course's nbgrader course directory and its students' version.",
    )
    parser.add_argument("lessons", nargs="*", help="lessons to release (default: all)")
    parser.add_argument("--course", default="course", help="the course directory (course/)")
    arguments = parser.parse_args(argv)
    course = Path(arguments.course).resolve()
    written = release(course, arguments.lessons or None)
    print(f"students' version of {len(written)} lessons in {course / 'release'}")
    print(f"autograder (grade cells, points, hidden tests): {course / 'gradebook.db'}")


if __name__ == "__main__":
    main()
