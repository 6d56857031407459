"""Count the objects corpus per construct row and mode: right (matches central
differences), refused (a located ``AutodiffError``), wrong (a number that differs from
central differences) and crashed (any other exception).

Run from ``tests/``::

    python -m corpus_objects.measure             # the table
    python -m corpus_objects.measure -v          # and each refusal, wrong number, crash
    python -m corpus_objects.measure --write-today   # rewrite today.py from this run

``--write-today`` records each refusal as ``"ErrorClass: first line"`` and each wrong
number as ``"WRONG: ..."``, which the tests mark ``xfail(strict=True)``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from autodiff_tutor.errors import AutodiffError, InternalError
from corpus_objects import ROWS, Program, load_all
from corpus_objects.checks import check_compiler, check_tracing

OUTCOMES = ("right", "refused", "wrong", "crashed")


def summary(error: BaseException) -> str:
    """``"ErrorClass: message"``, the message up to its location, on one line, and the
    user's file and line where the error names one."""
    text = str(error)
    message, _, rest = text.partition("\n  File ")
    message = " ".join(message.split())
    where = ""
    if rest:
        path, _, line = rest.partition(", line ")
        name = Path(path.strip('"')).name
        if name != "checks.py":  # the user's line, where it is in the corpus
            where = f" [{name}:{line.split(',')[0]}]"
    return f"{type(error).__name__}: {message}{where}"


def outcome(check: Callable[[Program], None], p: Program) -> tuple[str, str]:
    """The outcome of one check, and what it said."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(p)
    except InternalError as error:  # the toolkit failed on code Python runs
        return "crashed", f"CRASH {summary(error)}"
    except AutodiffError as error:
        return "refused", summary(error)
    except AssertionError as error:
        text = " ".join(str(error).split())[:300]
        return "wrong", f"WRONG: {text}"
    except Exception as error:  # noqa: BLE001 - a crash is an outcome to count
        return "crashed", f"CRASH {summary(error)}"
    return "right", ""


def table(results: dict[str, dict[str, tuple[str, str]]], programs: list[Program]) -> str:
    header = f"{'row':<22}{'programs':>9}  " + "  ".join(
        f"{mode + ' ' + '/'.join(o[:3] for o in OUTCOMES):>26}" for mode in ("compiler", "tracing")
    )
    lines = [header]
    totals = {mode: Counter() for mode in ("compiler", "tracing")}
    for row in [*ROWS, "total"]:
        chosen = [p for p in programs if row in (p.row, "total")]
        cells = []
        for mode in ("compiler", "tracing"):
            counts = Counter(results[mode][p.name][0] for p in chosen)
            if row != "total":
                totals[mode].update(counts)
            cells.append("/".join(str(counts[o]) for o in OUTCOMES))
        lines.append(f"{row:<22}{len(chosen):>9}  " + "  ".join(f"{c:>26}" for c in cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--write-today", action="store_true")
    options = parser.parse_args()
    programs = load_all()
    checks = {"compiler": check_compiler, "tracing": check_tracing}
    results = {
        mode: {p.name: outcome(check, p) for p in programs} for mode, check in checks.items()
    }
    print(table(results, programs))
    if options.verbose:
        for mode in checks:
            for p in programs:
                kind, text = results[mode][p.name]
                if kind != "right":
                    print(f"{mode:<9} {p.row:<20} {p.name}: {text}")
    if options.write_today:
        write_today(results)


def write_today(results: dict[str, dict[str, tuple[str, str]]]) -> None:
    path = Path(__file__).with_name("today.py")
    head = path.read_text().split("\nCOMPILER")[0]
    body = []
    for mode in ("compiler", "tracing"):
        lines = [
            f"    {json.dumps(name)}: {json.dumps(text)},"  # ruff's quotes
            for name, (kind, text) in results[mode].items()
            if kind != "right"
        ]
        entries = "\n" + "\n".join(lines) + "\n" if lines else ""
        body.append(f"{mode.upper()}: dict[str, str] = {{{entries}}}\n")
    path.write_text(head + "\n" + "\n".join(body))


if __name__ == "__main__":
    main()
