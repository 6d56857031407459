"""Second derivatives through helper functions: a first derivative calls a
helper as a compiled operation, a second derivative inlines it (and the helpers it
calls) so the gradient's code can be differentiated again. Checked against central
differences of the gradient and autograd's Hessian-vector products; what cannot be
inlined is a located refusal whose hint says why."""

import autograd
import numpy as np
import pytest
from oracles import with_autograd_numpy

from autodiff_tutor import differentiable, grad, jvp, vjp
from autodiff_tutor.compiler.front.desugar.module_helpers import with_helpers_nested
from autodiff_tutor.compiler.front.source import parse_function
from autodiff_tutor.errors import UnsupportedSyntaxError

SCALE = 0.5


def activation(z, slope=1.0):
    return np.tanh(slope * z) * z


def layer(W, x):
    h = x @ W
    return activation(h, slope=SCALE)


def squared(v):
    return v * v


def two_layer_loss(W, x):
    return np.sum(squared(layer(W, x))) + np.sum(activation(W))


def softplus(z):
    return np.log1p(np.exp(z))


def logistic_loss(w, X, y):
    margins = y * (X @ w)
    return np.mean(softplus(-margins)) + 0.1 * np.sum(squared(w))


def _data(rng):
    return rng.normal(size=(3, 2)), rng.normal(size=(4, 3))


def smooth(a):
    return a / (1.0 + a * a)


def apply(fn, a):
    return fn(a) * 0.5 + a


def passes_a_helper_as_a_value(x):
    """``apply`` calls the helper it is given (``fn(a)``, ``smooth`` bound to a name of
    the compiler's): the second derivative inlines ``smooth`` at that call too."""
    return np.sum(apply(smooth, x) ** 2 * x)


def make_activation(k):
    return lambda z: np.tanh(k * z)


def weights_through_helpers(x, w):
    """A helper given as a value on the path of ``w`` only, next to a lambda made by a
    helper: differentiated with respect to ``x``, twice."""
    w = make_activation(1.5)(w)
    w = apply(smooth, w)
    return np.sum(x * w) + np.sum(x**3 * w)


def body(x, w):
    """A helper with helpers of its own inside (a lambda, a def) and a helper given as
    a value; read none of its names, they are hoisted beside it when it is inlined."""
    cubed = lambda a: a * a * a  # noqa: E731

    def bump(r):
        return np.sin(r) + r * r

    return np.sum(cubed(x) * w) + np.sum(apply(smooth, bump(x)))


forwards_to_body = lambda x, w: body(x, w)  # noqa: E731


def body_with_function_values(x, w):
    """Lambdas written in the calls that take them, and a local name for a helper: the
    lambdas are hoisted as helpers of their own, the name read as the helper's."""
    w = apply(lambda a: a * np.tanh(a), w)
    g = smooth
    return np.sum(g(w) * x) + np.sum(apply(lambda a: np.sin(a) * a, x) ** 2)


forwards_to_body_with_function_values = lambda x, w: body_with_function_values(x, w)  # noqa: E731


CASES = [
    (two_layer_loss, lambda r: _data(r)),
    (passes_a_helper_as_a_value, lambda r: (r.normal(size=(2, 3)),)),
    (forwards_to_body, lambda r: (r.normal(size=(2, 3)), r.normal(size=3))),
    (forwards_to_body_with_function_values, lambda r: (r.normal(size=3), r.normal(size=3))),
    (weights_through_helpers, lambda r: (r.normal(size=(2, 3)), r.normal(size=3))),
    (logistic_loss, lambda r: (r.normal(size=3), r.normal(size=(5, 3)), np.sign(r.normal(size=5)))),
]
IDS = [next(name for name, value in globals().items() if value is fn) for fn, _ in CASES]


def autograd_hvp(fn, args, direction):
    f = with_autograd_numpy(fn)
    # the helpers read np from their module: give autograd's to them as well
    globals_ = f.__globals__
    helpers = (
        "body_with_function_values",
        "activation",
        "layer",
        "squared",
        "softplus",
        "smooth",
        "apply",
        "make_activation",
        "body",
    )
    for name in helpers:
        globals_[name] = with_autograd_numpy(globals()[name])

    def directional(*call):
        return np.sum(autograd.grad(f, 0)(*call) * direction)

    return autograd.grad(directional, 0)(*args)


@pytest.mark.parametrize(("fn", "sample"), CASES, ids=IDS)
def test_second_derivatives_through_helpers(fn, sample):
    args = sample(np.random.default_rng(0))
    direction = np.random.default_rng(1).normal(size=np.shape(args[0]))
    gradient = grad(fn)
    eps = 1e-5
    plus = (args[0] + eps * direction, *args[1:])
    minus = (args[0] - eps * direction, *args[1:])
    expected = (gradient(*plus) - gradient(*minus)) / (2 * eps)
    _, forward_over_reverse = jvp(gradient, args, [direction] + [None] * (len(args) - 1))
    _, pullback = vjp(gradient, *args, wrt=[0])
    (reverse_over_reverse,) = pullback(direction)  # the Hessian is symmetric
    for got in (forward_over_reverse, reverse_over_reverse):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(got, autograd_hvp(fn, args, direction), rtol=1e-9, atol=1e-12)


def test_the_first_derivative_still_calls_the_helper_as_an_operation():
    source = differentiable(logistic_loss).backward_source(["w"])
    assert "differentiable(softplus).op_backward" in source


def scaled_sine(v):
    return SCALE * np.sin(v)


def shadows_a_name_the_helper_reads(x):
    SCALE = 3.0  # noqa: N806 (the helper's SCALE is the module's, not this one)
    return np.sum(scaled_sine(x)) * SCALE


def test_a_helper_that_cannot_be_inlined_is_refused_at_its_call():
    with pytest.raises(UnsupportedSyntaxError, match="second derivatives") as raised:
        jvp(grad(shadows_a_name_the_helper_reads), [np.ones(2)], [np.ones(2)])
    error = raised.value
    assert "scaled_sine(x)" in error.location.text
    assert "reading no name this function redefines" in error.hint


@differentiable
def cube(x):
    return x * x * x


def uses_a_differentiable_function(x):
    return np.sum(cube(x) * x)


def test_a_differentiable_function_is_inlined_by_its_function():
    x, v = np.array([0.3, -1.2]), np.array([1.0, 2.0])
    _, hvp = jvp(grad(uses_a_differentiable_function), [x], [v])
    np.testing.assert_allclose(hvp, 12 * x**2 * v)  # d2/dx2 of x^4 is 12 x^2


def test_a_custom_op_whose_methods_cannot_be_read_is_refused_with_its_own_hint():
    """SReLU's forward and backward are the toolkit's, not compiled again: refused at
    the user's call of the op (ops of the user's own are differentiated again, see
    test_compiler_nested_grad)."""
    from autodiff_tutor.ops import SReLUFunction

    op = SReLUFunction("BC")
    tl, al, tr, ar = [np.full((1, 2), v) for v in (-1.0, 0.1, 1.0, 0.5)]

    def uses_the_op(x):
        return np.sum(op(x, tl, al, tr, ar) ** 2)

    with pytest.raises(UnsupportedSyntaxError, match="second derivatives") as raised:
        jvp(grad(uses_the_op), [np.ones((1, 2))], [np.ones((1, 2))])
    assert "DifferentiableFunction whose forward and backward" in raised.value.hint
    assert raised.value.location.text.strip() == "return np.sum(op(x, tl, al, tr, ar) ** 2)"


def scaled_cube(x, scale=2.0):
    return scale * np.sum(x**3)


def test_a_gradient_keeps_the_default_arguments():
    x, v = np.array([0.5, -1.0]), np.array([1.0, 1.0])
    _, hvp = jvp(grad(scaled_cube), [x], [v])  # scale left to its default
    np.testing.assert_allclose(hvp, 2.0 * 6 * x * v)


def inner_helper_with_a_lambda_reading_its_parameter(x):
    def inner(r):
        return apply(lambda a: a * r, r)  # the lambda reads inner's r: not hoisted

    return np.sum(inner(x) ** 2)


def calls_a_helper_with_a_closure(x):
    return inner_helper_with_a_lambda_reading_its_parameter(x)


def test_a_lambda_reading_a_name_of_the_function_it_is_in_is_not_hoisted():
    """Hoisted beside the helper, the lambda would read ``r`` where no ``r`` is bound:
    the helper is not nested for a second derivative (which is then refused at its
    call)."""
    helper = inner_helper_with_a_lambda_reading_its_parameter
    assert with_helpers_nested(parse_function(calls_a_helper_with_a_closure), [helper]) is None


def tanh_times(a):
    return np.tanh(a) * a


def calls_tanh_times(x):
    return np.sum(tanh_times(x))


def test_reverse_over_reverse_through_a_module_helper():
    """``vjp(grad(f))`` where ``f`` calls a module-level helper: the helper is inlined
    into the gradient, whose pullback agrees with central differences of the gradient."""
    x = np.array([0.3, -0.8])
    v = np.array([1.0, 0.5])
    result = vjp(grad(calls_tanh_times), x)[1](v)

    def gradient_along(t):
        return grad(calls_tanh_times)(x + t * v)

    expected = (gradient_along(1e-5) - gradient_along(-1e-5)) / 2e-5
    assert np.allclose(result[0], expected, atol=1e-6)
