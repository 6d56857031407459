"""Gradients through complex numbers are refused, in every mode, never returned wrong.

The rules are written for real numbers; ``np.abs`` of a complex value and a complex
constant's product follow no one convention together: followed through, the gradient
of ``np.sum(np.abs(x * (1 + 2j)))`` would be -1.34 where central differences say 2.24
(with only a ComplexWarning), and ``np.abs(np.sum(np.exp(1j * x)))`` would have complex
gradients for a real input. Complex values that carry no gradient are fine.
"""

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, grad, jvp, value_and_grad, vjp
from autodiff_tutor.errors import NoDerivativeRuleError, NonDifferentiableInputError
from autodiff_tutor.tracing import traced, value_and_gradient

X = np.array([0.3, -1.0, 2.0])


def modulus(x):
    return np.sum(np.abs(x * (1 + 2j)))


def phases(x):
    return np.abs(np.sum(np.exp(1j * x)))


def constant_phase(x):
    return np.sum(x * x) * np.abs(np.exp(1j * 0.5))  # complex, but no gradient through it


COMPLEX_PATHS = [modulus, phases]


@pytest.mark.parametrize("fn", COMPLEX_PATHS)
def test_reverse_mode_refuses_at_the_users_line(fn):
    both = value_and_grad(differentiable(fn))
    for _ in range(3):  # the general pair, then the specialized one
        with pytest.raises(NoDerivativeRuleError, match="complex") as caught:
            both(X)
        location = caught.value.location
        assert location is not None and location.filename == __file__
    with pytest.raises(NoDerivativeRuleError, match="complex"):
        vjp(fn, X)[1](1.0)


@pytest.mark.parametrize("fn", COMPLEX_PATHS)
def test_forward_mode_refuses(fn):
    with pytest.raises(NoDerivativeRuleError, match="complex") as caught:
        jvp(fn, (X,), (np.ones(3),))
    assert caught.value.location is not None


@pytest.mark.parametrize("fn", COMPLEX_PATHS)
def test_tracing_refuses(fn):
    with pytest.raises(NoDerivativeRuleError, match="complex") as caught:
        value_and_gradient(fn, X)
    assert caught.value.location is not None


def test_complex_inputs_are_refused_in_both_modes():
    z = np.array([1 + 1j, 2 - 1j])

    def total(z):
        return np.sum(np.abs(z))

    with pytest.raises(NonDifferentiableInputError, match="complex") as caught:
        grad(total)(z)
    assert caught.value.location is not None
    with pytest.raises(NonDifferentiableInputError, match="complex"):
        traced(z)


def test_complex_values_without_gradient_are_fine_in_every_mode():
    expected = central_difference(constant_phase, [X], 0)
    both = value_and_grad(differentiable(constant_phase))
    for _ in range(3):
        np.testing.assert_allclose(both(X)[1], expected, rtol=1e-7)
    np.testing.assert_allclose(value_and_gradient(constant_phase, X)[1], expected, rtol=1e-7)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(jvp(constant_phase, (X,), (v,))[1], expected @ v, rtol=1e-7)
