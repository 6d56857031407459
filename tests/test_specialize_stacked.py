"""A counted loop's weight gradients as one product of the steps stacked
(``compiler/specialize.stacked``).

The backward of a recurrence adds ``A_t.T @ G_t`` into a weight's gradient at every
step; the specialized pair keeps the steps' ``G_t`` (and ``A_t``) in slots and makes
one product after the loop. Judged: gradients against central differences and autograd
(recurrences over 1 to 6 steps, data as a 3-D array or a list of matrices, tied
weights, float32), and the shown code.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, value_and_grad
from autodiff_tutor.compiler.specialize.probe import guard_key


def rnn(Wh, Wx, b, xs, h0):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):  # the data as one array of steps
        h = np.tanh(h @ Wh + xs[t] @ Wx + b)
        total = total + np.sum(h * h)
    return total


def rnn_list(Wh, Wx, b, xs, h0):
    h = h0
    total = 0.0
    for t in range(len(xs)):
        h = np.tanh(h @ Wh + xs[t] @ Wx + b)
        total = total + np.sum(h * h)
    return total


def tied(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.sin(h @ W + xs[t] @ W)  # one weight, two products a step
    return np.sum(h * h)


def _pair(fn, wrt, args):
    return differentiable(fn).derivative(wrt).specializations.get(guard_key(args))


def _right(fn, args, wrt, dtype=np.float64):
    both = value_and_grad(fn, wrt=wrt)
    for _ in range(3):  # the third call runs the specialized pair
        value, grads = both(*args)
    for position, g in zip(wrt, grads, strict=True):
        assert g.dtype == dtype
        if dtype == np.float64:
            np.testing.assert_allclose(
                g, central_difference(fn, args, position), rtol=1e-6, atol=1e-8
            )
            np.testing.assert_allclose(g, autograd_gradient(fn, args, position), rtol=1e-10)
    return grads


def _rnn_args(rng, steps, dtype=np.float64):
    shapes = ((5, 5), (3, 5), (5,), (steps, 4, 3), (4, 5))
    return tuple((0.5 * rng.normal(size=s)).astype(dtype) for s in shapes)


@pytest.mark.parametrize("steps", [1, 2, 6])
def test_a_recurrence_makes_one_product_per_weight(steps):
    args = _rnn_args(np.random.default_rng(steps), steps)
    _right(rnn, args, [0, 1, 2, 3, 4])
    backward = _pair(rnn, [0, 1, 2, 3, 4], args).backward_source
    loop = backward.split("for t in")[1].split("\n    d_")[0]
    assert "@ d_t" not in loop.replace("d_t6 @ Wh.T", "")  # no weight product inside
    assert "d_Wh += h_2_all.reshape(-1, 5).T @ d_t6_all.reshape(-1, 5)" in backward
    assert "d_Wx += xs[:len(t1)].reshape(-1, 3).T @" in backward
    assert "d_b += d_t6_all.sum(axis=(0, 1))" in backward


def test_the_same_pair_serves_another_number_of_steps():
    both = value_and_grad(rnn, wrt=[0, 1, 2])
    rng = np.random.default_rng(7)
    args = _rnn_args(rng, 4)
    for _ in range(3):
        both(*args)
    for steps in (1, 3, 9):  # another xs shape: another key; the same shapes per step
        other = (*args[:3], 0.5 * rng.normal(size=(steps, 4, 3)), args[4])
        for _ in range(3):
            _, grads = both(*other)
        for position, g in zip([0, 1, 2], grads, strict=True):
            np.testing.assert_allclose(g, central_difference(rnn, other, position), rtol=1e-6)


def test_data_as_a_list_of_matrices_is_copied_into_slots():
    rng = np.random.default_rng(3)
    Wh, Wx, b, xs, h0 = _rnn_args(rng, 3)
    args = (Wh, Wx, b, [xs[0], xs[1], xs[2]], h0)
    both = value_and_grad(rnn_list, wrt=[0, 1, 2])
    for _ in range(3):
        _, grads = both(*args)
    for position, g in zip([0, 1, 2], grads, strict=True):
        np.testing.assert_allclose(g, central_difference(rnn_list, args, position), rtol=1e-6)


def test_a_weight_used_twice_a_step_makes_two_products():
    rng = np.random.default_rng(4)
    args = (0.4 * rng.normal(size=(3, 3)), rng.normal(size=(5, 2, 3)), rng.normal(size=(2, 3)))
    _right(tied, args, [0, 1, 2])
    backward = _pair(tied, [0, 1, 2], args).backward_source
    assert backward.count("d_W += ") == 2 and "d_W += xs[:len(t1)]" in backward


def test_float32_stays_float32():
    args = _rnn_args(np.random.default_rng(5), 4, np.float32)
    grads = _right(rnn, args, [0, 1, 2], np.float32)
    expected = value_and_grad(rnn, wrt=[0, 1, 2])  # a fresh wrapper: the general pair
    for got, general in zip(grads, expected(*args)[1], strict=True):
        np.testing.assert_allclose(got, general, rtol=1e-4, atol=1e-5)


def test_large_steps_are_made_in_their_slots():
    # 64 x 128 states: the in-place rewrite (specialize.inplace) makes each step's gradient,
    # in its slot (np.multiply(..., out=d_t6) on d_t6_all[t]), not copied there
    rng = np.random.default_rng(6)
    shapes = ((128, 128), (8, 128), (128,), (3, 64, 8), (64, 128))
    args = tuple(0.1 * rng.normal(size=s) for s in shapes)
    both = value_and_grad(rnn, wrt=[0, 1, 2])
    general = both(*args)[1]
    for _ in range(2):
        _, grads = both(*args)
    for position, got, first in zip([0, 1, 2], grads, general, strict=True):
        np.testing.assert_allclose(got, first, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(got, autograd_gradient(rnn, args, position), rtol=1e-9)
    backward = _pair(rnn, [0, 1, 2], args).backward_source
    assert "d_t6 = d_t6_all[t]" in backward and "out=d_t6)" in backward, backward
    assert "d_t6_all[t] = d_t6" not in backward


def gru_like(Wz, Wh, Uz, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        x = xs[t]
        z = 1.0 / (1.0 + np.exp(-(x @ Wz + h @ Uz)))
        c = np.tanh(x @ Wh + (z * h) @ Uz)
        h = (1.0 - z) * h + z * c
    return np.sum(h**2)


def outputs_each_step(W, V, xs, h0):
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.sin(xs[t] @ W + h)
        y = h @ V
        loss = loss + np.mean(y * y)
    return loss


def sum_of_steps(W, b, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(np.tanh(xs[t] @ W + b))
    return total


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (gru_like, ((3, 4), (3, 4), (4, 4), (5, 2, 3), (2, 4))),
        (outputs_each_step, ((3, 4), (4, 2), (6, 5, 3), (5, 4))),
        (sum_of_steps, ((3, 4), (4,), (4, 2, 3))),
    ],
)
def test_other_recurrences_stay_right(fn, shapes):
    args = tuple(0.5 * np.random.default_rng(len(shapes)).normal(size=s) for s in shapes)
    _right(fn, args, list(range(len(shapes))))
