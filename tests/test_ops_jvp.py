"""Forward mode through a custom op is a clear, located error naming the op, not an
error from inside the generated code."""

from __future__ import annotations

import numpy as np
import pytest

from autodiff_tutor import grad, jvp, srelu
from autodiff_tutor.errors import NoDerivativeRuleError

PARAMS = [np.full((1, 1), v) for v in (-1.0, 0.1, 1.0, 0.5)]
X = np.array([[-3.0], [0.2], [5.0]])


def calls_srelu(x):
    return np.sum(srelu(x, PARAMS[0], PARAMS[1], PARAMS[2], PARAMS[3], fmt="BC"))


def test_jvp_through_a_custom_op_names_the_op_at_the_call():
    with pytest.raises(NoDerivativeRuleError) as info:
        jvp(calls_srelu, (X,), (np.ones((3, 1)),))
    assert "'srelu'" in info.value.message and "forward-mode" in info.value.message
    assert info.value.location.filename == __file__
    assert "srelu(" in info.value.location.text  # the user's call of the op
    assert "grad or vjp" in info.value.hint


def test_reverse_mode_through_the_custom_op_still_works():
    assert grad(calls_srelu)(X).ravel().tolist() == [0.1, 1.0, 0.5]
