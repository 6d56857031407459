"""Returned gradients belong to the caller: fresh, writable, sharing no memory.

``grad(f, wrt=[0, 1])`` of ``sum(x + y)`` returns two buffers (clipping one gradient
leaves the other), a ``vjp`` pullback never returns the seed itself, a large ``sum``
gradient is writable (not a read-only broadcast view), a ``jvp`` tangent is not the
tangent given, and no gradient shares the input's memory. PyTorch and JAX users rely
on owning what they get back.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from autodiff_tutor import grad, jvp, value_and_grad, vjp


def add_sum(x, y):
    return np.sum(x + y)


def identity(x):
    return x


def plain_sum(x):
    return np.sum(x)


def test_two_gradients_are_two_buffers():
    gx, gy = grad(add_sum, wrt=[0, 1])(np.ones(3), np.ones(3))
    assert not np.shares_memory(gx, gy)
    np.clip(gx, 0.0, 0.5, out=gx)  # the caller changes one gradient in place
    assert gy.tolist() == [1.0, 1.0, 1.0] and gx.tolist() == [0.5, 0.5, 0.5]


def test_a_pullback_does_not_return_the_seed():
    seed = np.array([1.0, 2.0, 3.0])
    _, pullback = vjp(identity, np.zeros(3))
    (g,) = pullback(seed)
    assert g is not seed and not np.shares_memory(g, seed)
    g *= 0.0
    assert seed.tolist() == [1.0, 2.0, 3.0]


def test_a_large_sum_gradient_is_writable():
    _, g = value_and_grad(plain_sum)(np.ones(100_000))
    assert g.flags.writeable and g.flags.owndata
    g[0] = 5.0
    assert g[1] == 1.0


def test_a_jvp_tangent_is_not_the_given_tangent():
    tangent = np.ones(3)
    _, out_tangent = jvp(identity, (np.zeros(3),), (tangent,))
    assert not np.shares_memory(out_tangent, tangent)


def test_a_gradient_does_not_share_the_input():
    x = np.ones(3)
    _, pullback = vjp(identity, x)
    (g,) = pullback(np.ones(3))
    assert not np.shares_memory(g, x)


class SquaredLoss:
    def __call__(self, x):
        return np.sum(x * x)


@pytest.mark.parametrize(
    ("fn", "expected"),
    [(functools.partial(add_sum, y=np.ones(3)), np.ones(3)), (SquaredLoss(), 2 * np.ones(3))],
    ids=["partial", "callable-object"],
)
def test_partial_and_callable_objects_are_differentiated(fn, expected):
    """A ``functools.partial`` and a callable object (which have no ``__name__``) are
    differentiated like functions."""
    assert np.array_equal(grad(fn)(np.ones(3)), expected)
