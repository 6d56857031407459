"""Objectives written as people write them in public code (``tests/corpus_public/``:
course and deep-learning assignments, scientific objectives and exercises, statistics,
engineering, notebook habits), in both modes: the compiler's ``value_and_grad`` three
times (compiled, then the specialized fast path) and tracing's ``value_and_gradient``,
every gradient (dicts and lists of arrays included) against central differences in
float64, and autograd against central differences. An objective a mode cannot run
is ``xfail(strict=True)`` with the reason written on it.
"""

from __future__ import annotations

from corpus_checks import corpus_tests
from corpus_public import MODULES, load_all

OBJECTIVES = load_all()
BY_NAME = {w.name: w for w in OBJECTIVES}


def test_the_corpus_is_large_and_varied() -> None:
    assert len(OBJECTIVES) >= 120, len(OBJECTIVES)
    assert len(BY_NAME) == len(OBJECTIVES), "names are unique"
    assert {w.fn.__module__ for w in OBJECTIVES} == {f"corpus_public.{m}" for m in MODULES}


# each mode against central differences, and autograd against them (tests/corpus_checks.py)
(
    test_compiler_matches_finite_differences,
    test_tracing_matches_finite_differences,
    test_finite_differences_agree_with_autograd,
) = corpus_tests(OBJECTIVES)
