"""Second derivatives and forward mode, against finite differences of the first
derivative and against reverse mode (<jvp(u), v> == <u, vjp(v)>)."""

import numpy as np
import pytest
from corpus_straight import CORPUS

from autodiff_tutor.api import grad, jvp, vjp

# programs whose gradient is smooth where the samplers put their inputs
SMOOTH = [
    entry
    for entry in CORPUS
    if entry[0].__name__
    not in {
        "absolute",
        "maximum_minimum",
        "clipping",
        "where_select",
        "maxima",
        "srelu_masks",
        "prelu_masks",
        "huber_masks",
        "softmax_cross_entropy",  # has a max (a kink) inside
        "fancy_index_repeats",
    }
]
IDS = [fn.__name__ for fn, _ in SMOOTH]


def test_enough_programs():
    assert len(SMOOTH) >= 15


@pytest.mark.parametrize(("fn", "sample"), SMOOTH, ids=IDS)
def test_hessian_vector_product_matches_differences_of_the_gradient(fn, sample):
    args = sample(np.random.default_rng(3))
    rng = np.random.default_rng(4)
    for i in range(len(args)):
        gradient = grad(fn, wrt=i)
        direction = rng.normal(size=np.shape(args[i]))
        tangents = [None] * len(args)
        tangents[i] = direction
        _, hvp = jvp(gradient, args, tangents)
        eps = 1e-5
        plus = list(args)
        minus = list(args)
        plus[i] = args[i] + eps * direction
        minus[i] = args[i] - eps * direction
        expected = (gradient(*plus) - gradient(*minus)) / (2 * eps)
        np.testing.assert_allclose(hvp, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("fn", "sample"), SMOOTH, ids=IDS)
def test_hessian_vector_product_by_reverse_over_reverse(fn, sample):
    args = sample(np.random.default_rng(5))
    first = grad(fn, wrt=0)
    v = np.random.default_rng(6).normal(size=np.shape(args[0]))
    _, pullback = vjp(first, *args, wrt=[0])
    (hv,) = pullback(v)  # the Hessian is symmetric: v^T H = H v
    eps = 1e-5
    expected = (first(args[0] + eps * v, *args[1:]) - first(args[0] - eps * v, *args[1:])) / (
        2 * eps
    )
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-6)


def test_second_derivative_of_a_scalar_function():
    def f(x):
        return np.sin(x) * x**3

    second = grad(grad(f))
    x = 0.7
    expected = -np.sin(x) * x**3 + 6 * x**2 * np.cos(x) + 6 * x * np.sin(x)
    assert second(x) == pytest.approx(expected, rel=1e-12)
    third = grad(grad(grad(f)))
    fd = (second(x + 1e-6) - second(x - 1e-6)) / 2e-6
    assert third(x) == pytest.approx(fd, rel=1e-6)


@pytest.mark.parametrize(("fn", "sample"), CORPUS, ids=[f.__name__ for f, _ in CORPUS])
def test_jvp_is_the_transpose_of_vjp(fn, sample):
    args = sample(np.random.default_rng(0))
    rng = np.random.default_rng(1)
    tangents = tuple(rng.normal(size=np.shape(a)) for a in args)
    value, dot = jvp(fn, args, tangents)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    _, pullback = vjp(fn, *args, wrt=list(range(len(args))))
    gradients = pullback(1.0)
    expected = sum(np.sum(g * t) for g, t in zip(gradients, tangents, strict=True))
    np.testing.assert_allclose(dot, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("fn", "sample"), SMOOTH[:20], ids=IDS[:20])
def test_jvp_matches_directional_differences(fn, sample):
    args = sample(np.random.default_rng(7))
    rng = np.random.default_rng(8)
    tangents = tuple(rng.normal(size=np.shape(a)) for a in args)
    _, dot = jvp(fn, args, tangents)
    eps = 1e-6
    plus = [a + eps * t for a, t in zip(args, tangents, strict=True)]
    minus = [a - eps * t for a, t in zip(args, tangents, strict=True)]
    expected = (fn(*plus) - fn(*minus)) / (2 * eps)
    np.testing.assert_allclose(dot, expected, rtol=1e-5, atol=1e-6)


def branchy(x):
    if x > 0:
        y = x * x
    else:
        y = -x
    return y


def test_second_derivative_through_a_branch():
    second = grad(grad(branchy))
    assert second(1.5) == 2.0
    assert second(-1.5) == 0.0


def looped(x):
    total = 0.0
    for _ in range(3):
        total = total + np.sin(total + x)
    return total


def test_second_derivative_of_a_loop_matches_differences_of_the_gradient():
    first, second = grad(looped), grad(grad(looped))
    eps = 1e-6
    expected = (first(1.0 + eps) - first(1.0 - eps)) / (2 * eps)
    assert second(1.0) == pytest.approx(expected, rel=1e-7)


def test_jvp_through_a_nested_loop_that_does_not_run():
    """The index of an inner loop that may run no time, and that nothing reads, is not
    copied from one iteration of the outer loop to the next (a while loop's replay in a
    gradient function, differentiated again, is such a loop)."""

    def f(x, n):
        s = 0.0
        for _ in range(2):
            for _j in range(n):
                s = s + x * 2.0
        return s

    assert jvp(f, (1.0, 0), (1.0, None)) == (0.0, 0.0)
    assert jvp(f, (1.0, 2), (1.0, None)) == (8.0, 8.0)


def test_jvp_through_a_nested_loop_whose_read_index_does_not_run():
    """The inner index is read, and the inner loop runs no time: the index keeps the
    value it had (Python's rule), in forward and reverse mode alike."""

    def f(x, n):
        s = 0.0
        for _ in range(2):
            for j in range(n):
                s = s + x * j
        return s

    for n, slope in [(0, 0.0), (3, 6.0)]:
        assert jvp(f, (1.5, n), (1.0, None)) == (1.5 * slope, slope)
        assert grad(f)(1.5, n) == slope


def test_jvp_through_control_flow():
    def f(x, n):
        total = 0.0
        k = 0
        while k < n:
            total = total + np.sin(x * k)
            k = k + 1
        return total

    x, t = 0.3, 1.0
    _, dot = jvp(f, (x, 4), (t, None))
    expected = sum(k * np.cos(x * k) for k in range(4))
    assert dot == pytest.approx(expected, rel=1e-12)


def test_the_gradient_of_a_vector_function_is_refused_in_forward_mode_too():
    """jvp(grad(f)) of an f with a vector output: refused as grad(f) is, never the
    Hessian of its sum."""
    from autodiff_tutor.errors import NonScalarOutputError

    def elementwise(x):
        return np.sin(x)

    with pytest.raises(NonScalarOutputError, match="scalar output"):
        jvp(grad(elementwise), (np.array([0.3, 0.5]),), (np.ones(2),))
