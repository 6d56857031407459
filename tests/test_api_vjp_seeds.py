"""The seeds a ``vjp`` pullback takes: ``None`` for an output that sends no gradient
(a zero seed, as PyTorch's ``backward`` takes ``None``), also where that output is a
list or tuple of arrays such as the cache of a course layer's ``(out, cache)``."""

import numpy as np
import pytest
from oracles import central_difference

import autodiff_tutor as ad
from autodiff_tutor.errors import ArgumentError


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


def sines_in_a_loop(x):
    y = x
    for _ in range(3):
        y = np.sin(y) * x
    return y


def cubes_if_positive(x):
    if np.sum(x) > 0:
        return np.sum(x**3)
    return np.sum(x)


def test_one_pullback_gives_every_row_of_a_jacobian():
    """A pullback runs its backward on a copy of the forward's memory stack, so it can
    be called once per row (it raised "the memory stack is empty" on the second)."""
    x = np.array([0.3, -0.7])
    for fn, at in ((sines_in_a_loop, x), (ad.grad(cubes_if_positive), x + 1.0)):
        _, pullback = ad.vjp(fn, at)
        rows = [pullback(seed)[0] for seed in np.eye(2)] + [pullback(np.eye(2)[0])[0]]
        jacobian = np.stack(
            [central_difference(lambda v, i=i, fn=fn: fn(v)[i], [at], 0) for i in range(2)]
        )
        np.testing.assert_allclose(np.stack(rows[:2]), jacobian, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(rows[2], rows[0])


def test_an_operations_backward_runs_twice_on_one_forward():
    compiled = ad.differentiable(sines_in_a_loop)
    x = np.array([0.3, -0.7])
    _, memory = compiled.op_forward(x)
    first = compiled.op_backward((np.ones(2),), (True,), memory)[0]
    again = compiled.op_backward((np.ones(2),), (True,), memory)[0]
    np.testing.assert_allclose(again, first)
    expected = central_difference(lambda v: np.sum(sines_in_a_loop(v)), [x], 0)
    np.testing.assert_allclose(first, expected, rtol=1e-6)


class SineModel:
    def __init__(self):
        self.W = np.array([0.5, -1.0, 2.0])

    def loss(self, x):
        return np.sum(np.sin(self.W * x))


def cubes(x):
    return np.sum(x**3)


def test_a_pullback_after_its_arguments_changed_in_place_is_refused():
    """It would pull back at values the forward never saw (as PyTorch refuses); a
    rebinding (a new array) leaves the pullback at the point vjp saw."""
    x = np.array([0.3, -0.7, 1.1])
    _, pullback = ad.vjp(cubes, x)
    x *= 10.0
    with pytest.raises(ArgumentError, match=r"changed in place after\s+vjp\s+returned"):
        pullback(1.0)
    model, x = SineModel(), np.array([0.3, -0.7, 1.1])
    at_first = model.W * np.cos(model.W * x)
    _, pullback = ad.vjp(model.loss, x)
    model.W = model.W * 0.9  # rebound: the pullback keeps the point it saw
    np.testing.assert_allclose(pullback(1.0)[0], at_first)
    _, pullback = ad.vjp(model.loss, x)
    model.W -= 0.1 * model.W  # in place: refused
    with pytest.raises(ArgumentError, match=r"changed in place after\s+vjp\s+returned"):
        pullback(1.0)
