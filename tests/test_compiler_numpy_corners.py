"""Corners of numpy's meaning that the compiler and the rules follow: views made by numpy
functions, powers at zero, casts to integers, an empty mean, a parameter named like
generated code, options passed by position. Each is a right number (against central
differences) or a located error."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, grad, jvp, value_and_grad
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.tracing import value_and_gradient

X = np.array([[0.0, 2.0], [3.0, 4.0]])


# -- views made by numpy functions are views: a write through the base is seen ----------


def transposed_view(x):
    t = x * 1.0
    v = np.transpose(t)
    t *= 2.0
    return np.sum(v)


def reshaped_view(x):
    t = x * 1.0
    v = np.reshape(t, (-1,))
    t *= 2.0
    return np.sum(v)


def squeezed_view(x):
    t = x * 1.0
    v = np.squeeze(t)
    t *= 2.0
    return np.sum(v)


@pytest.mark.parametrize("fn", [transposed_view, reshaped_view, squeezed_view])
def test_a_write_into_the_base_of_a_numpy_view_is_seen_by_the_view(fn):
    """A view made by a numpy function sees a later write into its base
    (``front.normalize.aliases``): d/dx sum(2 x) = 2, not 1."""
    value, gradient = value_and_grad(fn)(X.copy())
    assert value == fn(X.copy()) == 2 * np.sum(X)
    np.testing.assert_allclose(gradient, central_difference(fn, [X], 0))
    np.testing.assert_array_equal(gradient, np.full_like(X, 2.0))


def fancy_index_copy(x):
    y = x * 1.0
    z = y[[1, 0]]
    y[0] = 5.0
    return np.sum(z * y)


def test_a_fancy_index_is_a_copy_and_is_differentiated():
    """``y[[1, 0]]`` copies: a write into y afterwards compiles, and the gradient is right."""
    np.testing.assert_allclose(
        grad(fancy_index_copy)(X), central_difference(fancy_index_copy, [X], 0)
    )


# -- the power rule at zero ---------------------------------------------------------------


def zeroth_power(x):
    return np.sum(x**0)


def powers_from_zero(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(x**k)
    return s


@pytest.mark.parametrize("fn", [zeroth_power, powers_from_zero])
def test_power_rule_is_finite_at_zero_in_every_mode(fn):
    """The gradient of x ** 0 at x = 0 is finite (0, not d * 0 * x ** -1 = nan), in both
    modes and in jvp."""
    expected = central_difference(fn, [X], 0)
    np.testing.assert_allclose(grad(fn)(X), expected, atol=1e-8)
    np.testing.assert_allclose(value_and_gradient(fn, X)[1], expected, atol=1e-8)
    direction = np.ones_like(X)
    _, slope = jvp(fn, (X,), (direction,))
    np.testing.assert_allclose(slope, np.sum(expected * direction), atol=1e-7)


def power_of_zero_base(y):
    return np.sum(np.zeros(2) ** y)


def test_the_exponent_gradient_at_a_zero_base_is_zero():
    y = np.array([1.5, 2.0])
    assert np.array_equal(grad(power_of_zero_base)(y), np.zeros(2))


def square_sum(x):
    return np.sum(x**2)


def test_a_constant_exponent_still_reads_like_the_math():
    """The guard against 0 * x**-1 folds away when the exponent is a number."""
    backward = differentiable(square_sum).backward_source()
    assert "    d_x = d_t1 * 2 * x  " in backward


# -- casts to integers and booleans carry no gradient -------------------------------------


def int_cast(x):
    return np.sum(x.astype(int) * x)


def bool_cast(x):
    return np.sum(x.astype(bool) * x)


@pytest.mark.parametrize(("fn", "cast"), [(int_cast, int), (bool_cast, bool)])
def test_a_cast_to_integers_has_zero_gradient_in_every_mode(fn, cast):
    """d/dx (int(x) * x) = int(x), not 2 int(x): the cast is piecewise constant."""
    x = np.array([0.5, 2.25, 3.5])
    expected = x.astype(cast).astype(float)
    np.testing.assert_allclose(grad(fn)(x), expected)
    np.testing.assert_allclose(value_and_gradient(fn, x)[1], expected)
    _, slope = jvp(fn, (x,), (np.ones(3),))
    assert np.isclose(slope, expected.sum())


# -- an empty slice, a parameter named like generated code ------------------------------


def mean_of_empty(x):
    return np.mean(x[:0]) + np.sum(x)


def test_the_mean_of_an_empty_slice_does_not_divide_by_zero():
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        gradient = grad(mean_of_empty)(np.arange(3.0))
    assert np.array_equal(gradient, np.ones(3))


def uses_xp(x, xp):
    return np.sum(x * xp)


def test_a_parameter_named_like_generated_code_compiles():
    """The generated code renames its own ``xp``; the user's parameter keeps its name."""
    Y = X + 1.0
    gradients = grad(uses_xp, wrt=[0, 1])(X, Y)
    np.testing.assert_allclose(gradients[0], central_difference(uses_xp, [X, Y], 0), rtol=1e-6)
    np.testing.assert_allclose(gradients[1], central_difference(uses_xp, [X, Y], 1), rtol=1e-6)


# -- options passed by position are bound by their numpy name -----------------------------


def mean_all_positional(x):
    return np.sum(np.mean(x, 1, None, None, True) * x)


def mean_with_dtype(x):
    return np.sum(np.mean(x, 0, np.float32))


def test_positional_options_are_bound_by_name():
    """keepdims in fifth position is bound as numpy binds it; a dtype is refused, named."""
    expected = central_difference(mean_all_positional, [X], 0)
    np.testing.assert_allclose(grad(mean_all_positional)(X), expected, rtol=1e-6)
    with pytest.raises(AutodiffError, match="argument 'dtype' of np.mean"):
        grad(mean_with_dtype)(X)
