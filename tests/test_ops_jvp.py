"""Forward mode through a custom op is a clear, located error naming the op, not an
error from inside the generated code."""

from __future__ import annotations

import numpy as np
import pytest

from autodiff_tutor import differentiable, grad, jvp, srelu
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


@differentiable
def with_custom_op(x):
    return np.sum(srelu(x, 0.1, 0.2, 1.0, 0.3, fmt="CB"))


def test_forward_mode_through_an_op_without_a_tangent_is_a_located_error():
    """The same refusal through a ``@differentiable`` function: located at the op's call,
    with the hint to use grad or vjp."""
    with pytest.raises(NoDerivativeRuleError) as info:
        jvp(with_custom_op, (np.ones((2, 2)),), (np.ones((2, 2)),))
    assert info.value.location is not None and "srelu" in info.value.location.text
    assert "forward-mode" in str(info.value) and "grad or vjp" in info.value.hint
