"""One check for a user program in every mode: its gradient by the compiler (grad),
by tracing (value_and_gradient) and by forward mode (jvp along ``direction``) against
central differences (float64), and autograd's gradient of ``twin`` (the same function
written with what autograd differentiates) against the same differences; and one mode
at a time (``assert_right_in_mode``), where a refusal fails the test."""

import warnings

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import grad, jvp, value_and_grad
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.tracing import value_and_gradient


def assert_gradient_in_every_mode(fn, twin, x, direction, tracing=True):
    want = central_difference(fn, [x], 0)
    np.testing.assert_allclose(fn(x), twin(x), rtol=1e-12)  # the twin is the same function
    np.testing.assert_allclose(autograd_gradient(twin, [x], 0), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grad(fn)(x), want, rtol=1e-6, atol=1e-9)
    if tracing:
        np.testing.assert_allclose(value_and_gradient(fn, x)[1], want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jvp(fn, (x,), (direction,))[1], want @ direction, rtol=1e-6)


def compiled_result(call):
    """``call()``'s result; a refusal fails the test (the program must compile)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return call()
        except AutodiffError as error:
            pytest.fail(f"refused, where it must compile:\n{error}")


def assert_right_in_mode(mode: str, fn, x: np.ndarray) -> None:
    """``fn`` at ``x`` in ``mode`` (``"compiler"``, ``"jvp"`` or ``"tracing"``) compiles,
    its value is numpy's and its derivative agrees with central differences."""
    expected_value = fn(x.copy())
    expected = central_difference(fn, [x.copy()], 0)
    direction = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    if mode == "jvp":
        expected = np.sum(expected * direction)
    calls = {
        "compiler": lambda: value_and_grad(fn)(x.copy()),
        "tracing": lambda: value_and_gradient(fn, x.copy()),
        "jvp": lambda: jvp(fn, (x.copy(),), (direction,)),
    }
    value, got = compiled_result(calls[mode])
    assert np.allclose(value, expected_value, rtol=1e-12), (value, expected_value)
    assert np.allclose(got, expected, atol=1e-6), (got, expected)
