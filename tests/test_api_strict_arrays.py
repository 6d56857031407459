"""The function API (grad, value_and_grad, vjp, jvp) on a strict array library.

Seeds and tangents are checked by dtype kind; a library whose dtypes numpy cannot
read (array_api_strict) must still get its own arrays back, with the numbers the
numpy path and central differences give. A numpy function given a strict array (the
user mixing libraries) is a located error saying so, and the array's own namespace
(``x.__array_namespace__()``) is compiled.
"""

import array_api_strict as xs
import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, grad, jvp, value_and_grad, vjp
from autodiff_tutor.errors import AutodiffError, UserCodeError
from autodiff_tutor.tracing import value_and_gradient


@differentiable
def energy(x):
    return x[0] * x[1] + x[2] * x[2] * x[0]  # operators only: a strict array stays strict


@differentiable
def squares(x):
    return x * x


X = np.array([0.3, -1.2, 2.0])


def test_grad_and_value_and_grad_on_strict_arrays_match_central_differences():
    expected = central_difference(lambda x: x[0] * x[1] + x[2] * x[2] * x[0], [X], 0)
    g = grad(energy)(xs.asarray(X))
    value, g2 = value_and_grad(energy)(xs.asarray(X))
    assert type(g) is type(xs.asarray(X))
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.asarray(g2), expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(float(value), X[0] * X[1] + X[2] * X[2] * X[0])


def test_vjp_on_strict_arrays_takes_a_strict_seed():
    y, back = vjp(squares, xs.asarray(X))
    (g,) = back(xs.asarray([1.0, 2.0, 3.0]))
    assert type(g) is type(y)
    np.testing.assert_allclose(np.asarray(g), 2 * X * [1.0, 2.0, 3.0])


def test_jvp_on_strict_arrays_takes_a_strict_tangent():
    y, dy = jvp(squares, (xs.asarray(X),), (xs.asarray([1.0, 0.0, -1.0]),))
    assert type(dy) is type(y)
    np.testing.assert_allclose(np.asarray(dy), 2 * X * [1.0, 0.0, -1.0])


def test_an_integer_seed_is_cast_to_the_value_dtype():
    y, back = vjp(squares, xs.asarray(X))
    (g,) = back(xs.asarray([1, 1, 1]))
    assert g.dtype == xs.float64
    np.testing.assert_allclose(np.asarray(g), 2 * X)


def written_copy(x):
    y = x * 2.0
    y[0] = 5.0
    return y[1] * y[0] + x[2] * y[2]


def written_through_a_view(x):
    y = x * 2.0
    v = y[0:2]
    v[0] = 5.0
    return y[1] * y[0] + x[2]


def test_an_element_write_runs_on_strict_arrays():
    expected = central_difference(written_copy, [X], 0)
    g = grad(written_copy)(xs.asarray(X))
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-7, atol=1e-9)


def test_a_write_through_a_view_of_a_strict_array_is_refused_not_a_crash():
    np.testing.assert_allclose(
        grad(written_through_a_view)(X), central_difference(written_through_a_view, [X], 0)
    )
    with pytest.raises(AutodiffError, match="may_share_memory"):
        grad(written_through_a_view)(xs.asarray(X))


def numpy_on_a_strict_array(x):
    s = 0.0
    for _ in range(2):
        s = s + np.cos(x)  # numpy computes a numpy array from x
    return np.sum(s * s)


def test_numpy_given_a_strict_array_is_a_located_error_about_mixing_libraries():
    x = xs.asarray(X)
    numpy_on_a_strict_array(x)  # Python itself runs it
    with pytest.raises(UserCodeError) as info:  # not an InternalError: the user's mixing
        grad(numpy_on_a_strict_array)(x)
    error = info.value
    assert "mixes array libraries (array_api_strict and numpy arrays)" in error.message
    assert "np.cos was given an array_api_strict array (x)" in error.hint
    assert "xp = x.__array_namespace__()" in error.hint
    location = error.location
    first = numpy_on_a_strict_array.__code__.co_firstlineno
    assert (location.filename, location.line) == (__file__, first + 3)
    assert location.text[location.column :].startswith("np.cos(x)")
    assert isinstance(error.__cause__, TypeError)
    both = value_and_grad(differentiable(numpy_on_a_strict_array))
    for _ in range(3):  # numpy arrays: general, then specialized on the shapes
        np.testing.assert_allclose(
            both(X)[1], central_difference(numpy_on_a_strict_array, [X], 0), rtol=1e-7
        )
    with pytest.raises(UserCodeError, match="mixes array libraries"):
        both(x)  # the same shapes, a strict array


def own_namespace(x):  # what the hint above says to write
    xp = x.__array_namespace__()
    s = 0.0
    for _ in range(2):
        s = s + xp.cos(x)
    return xp.sum(s * s)


def test_the_arrays_own_namespace_gives_its_own_gradients():
    expected = central_difference(own_namespace, [X], 0)
    _, traced = value_and_gradient(own_namespace, xs.asarray(X))
    both = value_and_grad(differentiable(own_namespace))
    for _ in range(3):  # general, then specialized
        value, g = both(xs.asarray(X))
        assert type(g) is type(xs.asarray(X))
        np.testing.assert_allclose(float(value), own_namespace(X), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(np.asarray(g), np.asarray(traced), rtol=1e-13)
    np.testing.assert_allclose(both(X)[1], expected, rtol=1e-7, atol=1e-9)  # numpy's own
