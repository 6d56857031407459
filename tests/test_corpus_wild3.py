"""The third wild corpus (``tests/corpus_wild3/``: deep-learning course assignments,
scientific-computing exercises, habits the other corpora leave out) through the checks
the other wild corpora use (``tests/wild_checks.py``): the compiler's ``value_and_grad``
three times (compiled, then the specialized fast path), tracing's
``value_and_gradient``, both against central differences, and autograd against central
differences. An objective a mode cannot run today is ``xfail(strict=True)`` with the
reason written on it.
"""

from __future__ import annotations

from corpus_wild3 import MODULES, load_all
from wild_checks import corpus_tests

WILD = load_all()
BY_NAME = {w.name: w for w in WILD}


def test_the_corpus_is_large_and_varied() -> None:
    assert len(WILD) >= 40, len(WILD)
    assert len(BY_NAME) == len(WILD), "names are unique"
    assert {w.fn.__module__ for w in WILD} == {f"corpus_wild3.{m}" for m in MODULES}


# each mode against central differences, and autograd against them (tests/wild_checks.py)
(
    test_compiler_matches_finite_differences,
    test_tracing_matches_finite_differences,
    test_finite_differences_agree_with_autograd,
) = corpus_tests(WILD)
