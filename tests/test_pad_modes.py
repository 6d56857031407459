"""``np.pad`` with the modes that copy the array's own values outward ('edge',
'reflect', 'symmetric', 'wrap'): each copy's gradient goes back to the value it
copies. In both modes and forward mode against central differences (float64) and
autograd (on a twin that builds the padding with np.concatenate). The other modes
('linear_ramp', 'mean', ...) are refused at the call, located, in both modes."""

import numpy as np
import pytest
from program_checks import assert_gradient_in_every_mode

from autodiff_tutor import grad
from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.tracing import value_and_gradient

RNG = np.random.default_rng(5)
X = RNG.normal(size=6)
W = RNG.normal(size=(5, 8))


def reflected(x):
    return np.sum(np.pad(x.reshape(2, 3), ((1, 2), (2, 3)), mode="reflect") ** 2 * W[:5, :8])


def edged(x):
    return np.sum(np.pad(x, (2, 1), mode="edge") ** 3)


def wrapped(x):
    return np.sum(np.pad(x, (4, 2), mode="wrap") * np.arange(12.0))


def mirrored(x):
    return np.sum(np.sin(np.pad(x, (2, 3), mode="symmetric")))


def reflected_twin(x):
    m = x.reshape(2, 3)
    rows = np.concatenate([m[1:2], m, m[0:1], m[1:2]], axis=0)  # (1, 2) rows, reflected
    cols = np.concatenate(
        [rows[:, 2:3], rows[:, 1:2], rows, rows[:, 1:2], rows[:, 0:1], rows[:, 1:2]], axis=1
    )
    return np.sum(cols**2 * W[:5, :8])


def edged_twin(x):
    return np.sum(np.concatenate([x[:1], x[:1], x, x[-1:]]) ** 3)


def wrapped_twin(x):
    return np.sum(np.concatenate([x[2:], x, x[:2]]) * np.arange(12.0))


def mirrored_twin(x):
    return np.sum(np.sin(np.concatenate([x[1::-1], x, x[:-4:-1]])))


TWINS = {
    reflected: reflected_twin,
    edged: edged_twin,
    wrapped: wrapped_twin,
    mirrored: mirrored_twin,
}


@pytest.mark.parametrize("fn", list(TWINS), ids=lambda f: f.__name__)
def test_pad_modes_that_copy_values_in_both_modes(fn):
    assert_gradient_in_every_mode(fn, TWINS[fn], X, RNG.normal(size=6))


def ramp(x):
    return np.sum(np.pad(x, 2, mode="linear_ramp"))


def test_other_modes_are_refused_at_the_call_in_both_modes():
    with pytest.raises(NoDerivativeRuleError, match="mode='linear_ramp'") as compiled:
        grad(ramp)(X)
    with pytest.raises(NoDerivativeRuleError, match="mode='linear_ramp'") as traced:
        value_and_gradient(ramp, X)
    for error in (compiled.value, traced.value):
        assert error.location.filename == __file__ and "np.pad" in error.location.text
        assert "'reflect'" in error.hint and "np.concatenate" in error.hint
