"""Scalars first in a specialized backward (``compiler/specialize.scalars``).

``2 * (d_out / n * r)`` is written ``2 * d_out / n * r``: one pass over the array.
Judged: the gradients against central differences, the dtype against the general
pair's (a float32 program stays float32; a numpy scalar of another dtype keeps the
product as written), and the shown code.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, value_and_grad
from autodiff_tutor.compiler.specialize.probe import guard_key


def mse(W, X, Y):
    r = X @ W - Y
    return np.sum(r * r) / X.shape[0]


def linear_regression(w, X, y):
    r = X @ w - y
    return np.mean(r**2)


def test_a_mean_squared_error_of_a_vector_is_one_product():
    rng = np.random.default_rng(2)
    args = (rng.normal(size=3), rng.normal(size=(8, 3)), rng.normal(size=8))
    (_, g0), (_, g1) = _three_calls(linear_regression, [0], args)
    np.testing.assert_allclose(g1[0], g0[0], rtol=1e-12)
    np.testing.assert_allclose(g1[0], central_difference(linear_regression, args, 0))
    source = _pair(linear_regression, [0], args).backward_source
    assert "unreduce" not in source and "size(" not in source, source
    assert "X.T @ (1 / 8 * 2 * r)" in source, source


def scaled_energy(x, k):
    return 0.5 * np.sum(k * x * x) / x.size


def mixed(x, c):
    # c: a float64 numpy scalar next to a float32 array
    return np.sum(c * (x * x)) * np.float32(3.0)


def _pair(fn, wrt, args):
    return differentiable(fn).derivative(wrt).specializations.get(guard_key(args))


def _three_calls(fn, wrt, args):
    both = value_and_grad(fn, wrt=wrt)
    general = both(*args)  # the first call: the general pair
    for _ in range(2):
        value, grads = both(*args)
    return general, (value, grads)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mean_squared_error_makes_one_pass_and_stays_right(dtype):
    rng = np.random.default_rng(0)
    w, X, y = (rng.normal(size=s).astype(dtype) for s in ((3, 2), (8, 3), (8, 2)))
    (v0, g0), (v1, g1) = _three_calls(mse, [0], (w, X, y))
    assert g1[0].dtype == g0[0].dtype == dtype
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(g1[0], g0[0], rtol=rtol)
    if dtype == np.float64:
        np.testing.assert_allclose(g1[0], central_difference(mse, (w, X, y), 0), rtol=1e-6)
    source = _pair(mse, [0], (w, X, y)).backward_source
    assert "2 * d_out / t" in source or "d_out * 2 / t" in source, source


def test_a_constant_and_an_array_factor():
    rng = np.random.default_rng(1)
    x, k = rng.normal(size=6), rng.uniform(1, 2, size=6)
    (_, g0), (_, g1) = _three_calls(scaled_energy, [0, 1], (x, k))
    for got, general, position in zip(g1, g0, (0, 1), strict=True):
        np.testing.assert_allclose(got, general, rtol=1e-12)
        np.testing.assert_allclose(got, central_difference(scaled_energy, (x, k), position))


def test_a_numpy_scalar_of_another_dtype_keeps_the_product_and_its_dtype():
    x, c = np.linspace(-1, 1, 5).astype(np.float32), np.float64(0.5)
    (_, g0), (_, g1) = _three_calls(mixed, [0], (x, c))
    assert g1[0].dtype == g0[0].dtype
    np.testing.assert_allclose(g1[0], g0[0], rtol=1e-6)
