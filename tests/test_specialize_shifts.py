"""The stabilizing maximum of a softmax, a log-softmax or a log-sum-exp sends no gradient.

``t = z - max(z, axis, keepdims=True)`` read only by a function that is the same for
``t + c`` (``c`` constant along ``axis``): the gradient reaching ``t`` sums to zero
along ``axis``, so the max's gradient is zero and the specialized backward leaves it
out (no ``tie_share``). Every other reader keeps it. Checked here: which programs
drop it and which keep it, and the specialized gradients against central differences
and autograd, ties at the row maximum included.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, value_and_grad
from autodiff_tutor.compiler.pipeline import front_end
from autodiff_tutor.compiler.specialize.probe import guard_key
from autodiff_tutor.compiler.specialize.shifts import shift_names

# -- shift invariant: the max's gradient is dropped --------------------------------------


def log_softmax_reassigned(z, y):
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(log_p * y)


def log_softmax_methods(z, y):
    t = z - np.max(z, axis=-1, keepdims=True)
    return np.sum((t - np.log(np.exp(t).sum(axis=-1, keepdims=True))) * y)


def softmax_one_exp(z, y):
    z = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    return np.sum(p * y)


def softmax_two_exps(z, y):
    t = z - np.amax(z, axis=1, keepdims=True)
    return np.sum(np.exp(t) / np.sum(np.exp(t), axis=1, keepdims=True) * y)


def log_sum_exp_plus_max(z, y):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return np.sum(lse * y[:, :1])


def softmax_of_all_entries(z, y):
    t = z - np.max(z, keepdims=True)  # one shift for the whole array: sum over all
    e = np.exp(t)
    return np.sum(e / np.sum(e, keepdims=True) * y)


# -- not shift invariant (or the shift is read elsewhere): the gradient is kept ----------


def log_sum_exp_without_max(z, y):
    t = z - np.max(z, axis=1, keepdims=True)  # log(sum(exp(z - m))) depends on m
    return np.sum(np.log(np.sum(np.exp(t), axis=1, keepdims=True)) * y[:, :1])


def softmax_summed_along_another_axis(z, y):
    t = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(t)
    return np.sum(e / np.sum(e, axis=0, keepdims=True) * y)


def log_softmax_plus_shifted(z, y):
    t = z - np.max(z, axis=1, keepdims=True)
    log_p = t - np.log(np.sum(np.exp(t), axis=1, keepdims=True))
    return np.sum(log_p * y) + np.sum(t * t)  # t read again


def softmax_times_exp(z, y):
    t = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(t)
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * y) + np.sum(e)  # the exp read again


def softmax_and_the_max(z, y):
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * y) + np.sum(m)  # m read again


def softmax_shifted_by_the_minimum(z, y):
    t = z - np.min(z, axis=1, keepdims=True)  # invariant too, but only max is handled
    e = np.exp(t)
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * y)


DROPPED = [
    log_softmax_reassigned,
    log_softmax_methods,
    softmax_one_exp,
    softmax_two_exps,
    log_sum_exp_plus_max,
    softmax_of_all_entries,
]
KEPT = [
    log_sum_exp_without_max,
    softmax_summed_along_another_axis,
    log_softmax_plus_shifted,
    softmax_times_exp,
    softmax_and_the_max,
]


def _arguments():
    rng = np.random.default_rng(6)
    z = rng.uniform(-1.0, 1.0, (4, 3))
    z[1, 2] = z[1, 0] = 2.0  # a tie at the row maximum
    return z, rng.uniform(0.0, 1.0, (4, 3))


def _specialized_backward(fn, args):
    """The specialized pair's backward source, after three calls whose gradients
    agree with central differences and autograd."""
    compiled = differentiable(fn)
    both = value_and_grad(compiled, wrt=[0, 1])
    for _ in range(3):
        _, gradients = both(*args)
        for position, gradient in enumerate(gradients):
            expected = central_difference(fn, args, position)
            np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(
                gradient, autograd_gradient(fn, args, position), rtol=1e-10, atol=1e-12
            )
    return compiled.derivative(["z", "y"]).specializations[guard_key(args)].backward_source


@pytest.mark.parametrize("fn", DROPPED)
def test_a_shift_invariant_consumer_drops_the_max_gradient(fn):
    """Softmax, log-softmax and log-sum-exp plus the max, in their spellings: the
    specialized backward has no gradient of the max, and the gradients are right."""
    assert len(shift_names(front_end(fn).program)) == 1
    assert "tie_share" not in _specialized_backward(fn, _arguments())


@pytest.mark.parametrize("fn", KEPT + [softmax_shifted_by_the_minimum])
def test_any_other_reader_keeps_the_max_gradient(fn):
    """A consumer that is not shift invariant, a sum along another axis, or the
    shifted value, the exp or the max read elsewhere: the max's gradient stays."""
    assert shift_names(front_end(fn).program) == set()
    assert "tie_share" in _specialized_backward(fn, _arguments())
