"""The wild corpus (``tests/corpus_wild/``): objectives written as course assignments,
scipy.optimize examples and notebooks write them, not for this project, in both modes
against central differences and autograd.

The compiler's ``value_and_grad`` is called three times (the first call checks and
compiles, later calls take the specialized fast path), tracing's
``value_and_gradient`` once; every gradient (dicts and lists of arrays included) is
compared with central differences in float64. An objective a mode cannot run today is
``xfail(strict=True)`` with the reason written on it.
"""

from __future__ import annotations

from corpus_wild import load_all
from wild_checks import corpus_tests

WILD = load_all()
BY_NAME = {w.name: w for w in WILD}


def test_the_corpus_is_large_and_varied() -> None:
    assert len(WILD) >= 40, len(WILD)
    assert len(BY_NAME) == len(WILD), "names are unique"
    assert {w.fn.__module__ for w in WILD} == {
        f"corpus_wild.{m}" for m in ("course", "science", "notebook")
    }


# each mode against central differences, and autograd against them (tests/wild_checks.py)
(
    test_compiler_matches_finite_differences,
    test_tracing_matches_finite_differences,
    test_finite_differences_agree_with_autograd,
) = corpus_tests(WILD)
