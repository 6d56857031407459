"""The seeds a ``vjp`` pullback takes: ``None`` for an output that sends no gradient
(a zero seed, as PyTorch's ``backward`` takes ``None``), also where that output is a
list or tuple of arrays such as the cache of a course layer's ``(out, cache)``."""

import numpy as np
from oracles import central_difference

import autodiff_tutor as ad


def affine_forward(x, w, b):
    out = np.tanh(x @ w + b)
    cache = (x, w, out)
    return out, cache


def two_outputs(x):
    return np.sin(x), np.sum(x * x)


RNG = np.random.default_rng(3)
X, W, B = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=4)


def test_the_cache_of_out_and_cache_takes_none():
    d_out = RNG.normal(size=(2, 4))
    (out, cache), pullback = ad.vjp(affine_forward, X, W, B)
    gradients = pullback(d_out, None)
    assert len(cache) == 3 and np.allclose(out, affine_forward(X, W, B)[0])
    for index, gradient in enumerate(gradients):

        def along(*args):
            return np.sum(affine_forward(*args)[0] * d_out)

        np.testing.assert_allclose(gradient, central_difference(along, [X, W, B], index), atol=1e-6)


def test_an_array_output_takes_none():
    x = RNG.normal(size=3)
    _, pullback = ad.vjp(two_outputs, x)
    (gradient,) = pullback(None, 1.0)
    np.testing.assert_allclose(gradient, 2 * x)
    (gradient,) = pullback(np.ones(3), None)
    np.testing.assert_allclose(gradient, np.cos(x))
