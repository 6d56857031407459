"""Count the assignments corpus per family: right (tracing's gradient matches central
differences), refused (a located ``AutodiffError``), wrong (a number that differs) and
crashed (any other exception).

Run from ``tests/``::

    python -m corpus_assignments.measure       # the table
    python -m corpus_assignments.measure -v    # and each refusal, wrong number, crash
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter

import numpy as np
from oracles import central_difference

from autodiff_tutor.errors import AutodiffError, InternalError
from autodiff_tutor.tracing import value_and_gradient
from corpus_assignments import Assignment, load_all

OUTCOMES = ("right", "refused", "wrong", "crashed")


def inputs(p: Assignment) -> tuple:
    """The program's arguments, seeded by its name."""
    return p.sample(np.random.default_rng(sum(map(ord, p.name))))


def check(p: Assignment) -> None:
    """Tracing's value and gradient against numpy's value and central differences."""
    args = inputs(p)
    value, got = value_and_gradient(p.fn, *args, wrt=list(p.wrt))
    np.testing.assert_allclose(value, p.fn(*args), rtol=1e-12, err_msg="value")
    for k, i in enumerate(p.wrt):
        np.testing.assert_allclose(got[k], numeric(p, args, i), rtol=1e-5, atol=1e-6)


def numeric(p: Assignment, args: tuple, i: int) -> np.ndarray:
    """Central differences of ``p`` in its ``i``-th argument, the others as given
    (integer labels stay integers)."""

    def of(x: np.ndarray) -> float:
        return p.fn(*args[:i], x, *args[i + 1 :])

    return central_difference(of, [np.asarray(args[i], dtype=np.float64)], 0)


def outcome(p: Assignment) -> tuple[str, str]:
    """The outcome of checking ``p``, and what it said."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(p)
    except InternalError as error:  # the toolkit failed on code Python runs
        return "crashed", f"CRASH {type(error).__name__}: {' '.join(error.message.split())}"
    except AutodiffError as error:
        return "refused", f"{type(error).__name__}: {' '.join(error.message.split())}"
    except AssertionError as error:
        return "wrong", "WRONG: " + " ".join(str(error).split())[:300]
    except Exception as error:  # noqa: BLE001 - a crash is an outcome to count
        return "crashed", f"CRASH {type(error).__name__}: {error}"
    return "right", ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    options = parser.parse_args()
    programs = load_all()
    results = {p.name: outcome(p) for p in programs}
    print(f"{'family':<14}{'programs':>9}  " + "  ".join(f"{o:>8}" for o in OUTCOMES))
    for family in [*sorted({p.family for p in programs}), "total"]:
        chosen = [p for p in programs if family in (p.family, "total")]
        counts = Counter(results[p.name][0] for p in chosen)
        print(f"{family:<14}{len(chosen):>9}  " + "  ".join(f"{counts[o]:>8}" for o in OUTCOMES))
    if options.verbose:
        for p in programs:
            kind, text = results[p.name]
            if kind != "right":
                print(f"{p.family:<12} {p.name}: {text[:400]}")


if __name__ == "__main__":
    main()
