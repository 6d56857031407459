"""The bad-input corpus: every case ends in a located ``AutodiffError`` or
in a correct result, never in a traceback from inside.

Located: the error carries a location in the user's code (this corpus's files, where
the bad call or the bad function is written). A result is checked by the case's own
checker against numpy. Cases the compiler core must fix are strict xfails here, each
with the reason; when the fix lands, the xfail turns into a failure and is removed.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from bad_inputs_compiler import CASES as COMPILER_CASES
from bad_inputs_compiler import ERROR
from bad_inputs_tracing import CASES as TRACING_CASES

from autodiff_tutor.errors import AutodiffError, InternalError

HERE = os.path.dirname(os.path.abspath(__file__))

#: cases whose fix lies in the compiler core (compiler/, rules/): id -> reason
COMPILER_CORE: dict[str, str] = {}  # none open


def _cases(prefix: str, cases: list) -> list:
    params = []
    for name, call, expect in cases:
        marks = []
        if f"{prefix}-{name}" in COMPILER_CORE:
            marks.append(pytest.mark.xfail(strict=True, reason=COMPILER_CORE[f"{prefix}-{name}"]))
        params.append(pytest.param(call, expect, id=f"{prefix}-{name}", marks=marks))
    return params


ALL = _cases("compiler", COMPILER_CASES) + _cases("tracing", TRACING_CASES)


def located_in_user_code(error: AutodiffError) -> bool:
    """The error points at a line of a file of this corpus (the user's code here)."""
    location = error.location
    return (
        location is not None
        and os.path.dirname(os.path.abspath(location.filename)) == HERE
        and location.line >= 1
        and bool(location.text.strip())
    )


def test_the_corpus_has_at_least_80_cases():
    assert len(ALL) >= 80
    assert len({p.id for p in ALL}) == len(ALL)


@pytest.mark.parametrize(("call", "expect"), ALL)
def test_bad_input_is_refused_with_a_location_or_handled_correctly(call, expect):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            result = call()
        except AutodiffError as error:
            assert not isinstance(error, InternalError), f"the toolkit failed:\n{error}"
            assert located_in_user_code(error), f"not located in the user's code:\n{error}"
            return
    assert expect is not ERROR, f"expected a located AutodiffError, got a result: {result!r}"
    assert expect(result), f"wrong result: {result!r}"
