"""The function API (grad, value_and_grad, vjp, jvp) on a strict array library.

Seeds and tangents are checked by dtype kind; a library whose dtypes numpy cannot
read (array_api_strict) must still get its own arrays back, with the numbers the
numpy path and central differences give.
"""

import array_api_strict as xs
import numpy as np
from oracles import central_difference

from autodiff_tutor import differentiable, grad, jvp, value_and_grad, vjp


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
