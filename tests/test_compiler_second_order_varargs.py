"""Second derivatives of functions with a ``*args`` parameter: ``grad`` flattens the
call per count of extra arguments, and ``jvp``/``vjp`` of that gradient flatten it
the same way. Checked against
central differences of the gradient and autograd's Hessian-vector product, with
none, one and two extra arguments."""

import autograd
import numpy as np
import pytest
from oracles import with_autograd_numpy

from autodiff_tutor import grad, jvp, vjp


def scaled_loss(x, w, *scales):
    for scale in scales:
        w = w * scale
    return np.sum(np.sin(x) ** 2 * w) + np.sum(x**3) * (1.0 + 0.5 * len(scales))


def body(x, w, *extra):
    if extra:
        w = w * extra[0]
    return np.sum(np.tanh(x @ w) ** 2) + np.sum(x * x * w)


forwards = lambda x, w, *extra: body(x, w, *extra)  # noqa: E731


def autograd_hvp(fn, args, direction):
    f = with_autograd_numpy(fn)
    f.__globals__["body"] = with_autograd_numpy(body)

    def along(*call):
        return np.sum(autograd.grad(f, 0)(*call) * direction)

    return autograd.grad(along, 0)(*args)


CASES = [
    (scaled_loss, (np.array([0.3, -1.1, 0.7]), np.array([1.5, -0.4, 0.2]))),
    (forwards, (np.array([[0.3, -1.1], [0.7, 0.2]]), np.array([1.5, -0.4]))),
]


@pytest.mark.parametrize("extras", [(), (1.5,), (0.5, 2.0)], ids=["none", "one", "two"])
@pytest.mark.parametrize(("fn", "arrays"), CASES, ids=["def", "lambda"])
def test_hessian_vector_products_with_extra_arguments(fn, arrays, extras):
    args = (*arrays, *extras)
    v = np.random.default_rng(0).normal(size=arrays[0].shape)
    gradient = grad(fn, wrt=0)
    eps = 1e-6
    expected = (gradient(args[0] + eps * v, *args[1:]) - gradient(args[0] - eps * v, *args[1:])) / (
        2 * eps
    )
    _, forward_over_reverse = jvp(gradient, args, (v, *[None] * (len(args) - 1)))
    _, pullback = vjp(gradient, *args, wrt=[0])
    (reverse_over_reverse,) = pullback(v)
    for got in (forward_over_reverse, reverse_over_reverse):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(got, autograd_hvp(fn, args, v), rtol=1e-10, atol=1e-12)
