"""``np.array(x)`` / ``np.asarray(x)`` of a value that carries gradient: a located
refusal in both modes, whose hint is true: the copy it names keeps the gradient.

The decision (issue 14): the conversion stays an escape. With plain numpy the
reference libraries refuse it too (JAX raises TracerArrayConversionError for
``numpy.asarray`` of a tracer; autograd follows only its own ``autograd.numpy.array``
and has no derivative for ``autograd.numpy.asarray``), and tracing cannot return a
traced value from it (numpy converts through ``__array__``, which must return a plain
array), so a copy in the compiler alone would make the modes disagree on the escape
that lesson 04 teaches. ``x.copy()`` and ``np.copy(x)`` are the differentiable copies.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import grad
from autodiff_tutor.errors import GradientEscapeError, TracingEscapeError
from autodiff_tutor.tracing import value_and_gradient


def through_array(x):
    y = np.array(x)
    return np.sum(y * x)


def through_asarray(x):
    y = np.asarray(x)
    return np.sum(y * x)


def through_copy_method(x):
    y = x.copy()
    return np.sum(y * x)


def through_np_copy(x):
    y = np.copy(x)
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [through_array, through_asarray])
def test_a_conversion_is_refused_at_its_line_in_both_modes(fn) -> None:
    x = np.array([1.0, -2.0, 0.5])
    with pytest.raises(GradientEscapeError) as compiled:
        grad(fn)(x)
    with pytest.raises(TracingEscapeError) as by_tracing:
        value_and_gradient(fn, x)
    for error in (compiled.value, by_tracing.value):
        assert error.location is not None and error.location.filename == __file__
        assert "y = np." in str(error) and "x.copy() or np.copy(x)" in error.hint


@pytest.mark.parametrize("fn", [through_copy_method, through_np_copy])
def test_the_copy_the_hint_names_keeps_the_gradient(fn) -> None:
    x = np.array([1.0, -2.0, 0.5])
    want = central_difference(fn, [x], 0)
    np.testing.assert_allclose(grad(fn)(x), want, rtol=1e-6)
    np.testing.assert_allclose(value_and_gradient(fn, x)[1], want, rtol=1e-6)
