"""In-place accumulation of gradients: never into an array another gradient holds.

The backward adds into a gradient in place only when it owns the array (made by its own
zeros_like, or by an earlier 'd = d + e'); these programs make gradients share arrays
through pass-through rules (add, copy, reshape), branches and loops, and check the
result against finite differences and autograd.
"""

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor.api import differentiable, grad


def shared_through_add(x):
    a = x * 2.0
    b = a + 0.0  # d_a and d_b may be one array (the gradient of + passes through)
    c = b * a + a * a + b * 3.0
    return np.sum(c * x) + np.sum(a[1:] * b[:-1])


def shared_through_reshape(x):
    y = x.reshape(2, 3)
    z = y.T.reshape(6)
    return np.sum(z * x) + np.sum(y[0] * y[1]) + np.sum(x[::2])


def reads_in_a_branch(x, flag):
    s = x * 1.5
    if flag > 0:
        t = s[0] * s[1] + s[2]
    else:
        t = s[1] * 2.0
    return t + np.sum(s * s) + s[0]


def reads_in_a_loop(x):
    s = x * 1.0
    total = 0.0
    for i in range(3):
        total = total + s[i] * s[(i + 1) % 3]
        s = s * 0.9 + x
    return total + np.sum(s)


def read_then_whole(x):
    a = x[0] + x[1]
    b = np.sum(x)
    c = x[0] * b
    return a * b + c + np.sum(x * x)


PROGRAMS = [
    (shared_through_add, lambda rng: (rng.normal(size=4),)),
    (shared_through_reshape, lambda rng: (rng.normal(size=6),)),
    (reads_in_a_branch, lambda rng: (rng.normal(size=3), 1.0)),
    (reads_in_a_branch, lambda rng: (rng.normal(size=3), -1.0)),
    (reads_in_a_loop, lambda rng: (rng.normal(size=3),)),
    (read_then_whole, lambda rng: (rng.normal(size=3),)),
]


@pytest.mark.parametrize(("fn", "sample"), PROGRAMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_accumulation_matches_oracles(fn, sample, seed):
    args = sample(np.random.default_rng(seed))
    gradient = grad(fn)(*args)
    np.testing.assert_allclose(
        gradient, central_difference(fn, list(args), 0), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(gradient, autograd_gradient(fn, args, 0), rtol=1e-9, atol=1e-12)


def test_repeated_calls_do_not_leak_state_between_calls():
    """Buffers are fresh on every call: the second call's gradient equals the first's."""
    x = np.random.default_rng(3).normal(size=4)
    first = grad(shared_through_add)(x)
    second = grad(shared_through_add)(x)
    np.testing.assert_array_equal(first, second)


def test_the_returned_gradient_is_not_a_view_of_the_input():
    x = np.random.default_rng(4).normal(size=3)
    gradient = grad(read_then_whole)(x)
    before = x.copy()
    gradient += 1.0  # the user may modify what they get
    np.testing.assert_array_equal(x, before)


def test_in_place_accumulation_is_visible_in_the_generated_code():
    backward = differentiable(read_then_whole).backward_source()
    # the second contribution makes a new array; later ones are added into it in place
    assert backward.index("d_x = d_x + ") < backward.index("d_x[1] += ")
    assert "d_x[0] += " in backward
