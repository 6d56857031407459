"""Matrix-vector products written out in a specialized backward (``compiler/specialize.forms``).

``X @ w`` and ``v @ W`` take gradients that are one product or an outer product; the
pair specialized on shapes writes them (``X.T @ g``, ``g[:, None] * w``, ``W @ g``,
``v[:, None] * g``) instead of calling ``matmul_dx``/``matmul_dy``. Judged against
central differences and autograd, for both operands, in float64 and float32.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, value_and_grad
from autodiff_tutor.compiler.specialize.probe import guard_key


def matrix_vector(X, w):
    return np.sum(np.tanh(X @ w))


def vector_matrix(v, W):
    return np.sum(np.sin(v @ W) ** 2)


@pytest.mark.parametrize(
    "fn, shapes, written",
    [
        (matrix_vector, ((5, 3), (3,)), ["X.T @", "[:, None] * w"]),
        (vector_matrix, ((4,), (4, 2)), ["W @", "v[:, None] *"]),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_vector_gradients_are_written_out_and_right(fn, shapes, written, dtype):
    args = tuple(np.random.default_rng(0).normal(size=s).astype(dtype) for s in shapes)
    both = value_and_grad(fn, wrt=[0, 1])
    general = both(*args)[1]
    for _ in range(2):
        _, grads = both(*args)
    for position, got, first in zip((0, 1), grads, general, strict=True):
        assert got.dtype == dtype and got.shape == args[position].shape
        np.testing.assert_allclose(got, first, rtol=1e-5 if dtype == np.float32 else 1e-12)
        if dtype == np.float64:
            np.testing.assert_allclose(got, central_difference(fn, args, position), rtol=1e-6)
            np.testing.assert_allclose(got, autograd_gradient(fn, args, position), rtol=1e-12)
    pair = differentiable(fn).derivative([0, 1]).specializations.get(guard_key(args))
    assert "matmul_d" not in pair.backward_source
    for piece in written:
        assert piece in pair.backward_source, pair.backward_source
