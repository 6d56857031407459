"""Second derivatives through objects, methods and functions as values: Hessian-vector
products (``jvp`` of a gradient, ``vjp`` of a gradient, ``grad(grad(...))``) of bound
methods (w.r.t. the argument and w.r.t. an attribute), callable objects, partials,
lambdas, ``*args`` methods, methods calling methods and functions passed as arguments,
each against autograd's Hessian-vector product and central differences of the
gradient."""

import functools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from autodiff_tutor import differentiable, grad, jvp, vjp

RNG = np.random.default_rng(28)
X = RNG.normal(size=3)
V = RNG.normal(size=3)
W0 = RNG.normal(size=(3, 3))
DW = RNG.normal(size=(3, 3))


def autograd_hvp(f, x, v):
    """H v of scalar ``f`` at ``x`` by autograd (reverse over reverse)."""
    return autograd.grad(lambda y: anp.sum(autograd.grad(f)(y) * v))(x)


def differences(gradient, x, v, eps=1e-6):
    """H v by central differences of a gradient function."""
    return (gradient(x + eps * v) - gradient(x - eps * v)) / (2 * eps)


def check_hvp(gradient, hv, oracle, x=X, v=V):
    np.testing.assert_allclose(hv, oracle, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hv, differences(gradient, x, v), rtol=1e-6, atol=1e-8)


def check_both_modes(f, oracle_f):
    """jvp of the gradient and vjp of the gradient, against autograd and differences."""
    first = grad(f)
    expected = autograd_hvp(oracle_f, X, V)
    _, forward = jvp(first, (X,), (V,))
    check_hvp(first, forward, expected)
    _, pullback = vjp(first, X)
    (reverse,) = pullback(V)
    check_hvp(first, reverse, expected)


class Model:
    def __init__(self, W):
        self.W = W
        self.b = 0.1 * np.ones(3)

    def predict(self, x):
        return np.tanh(x @ self.W + self.b)

    def loss(self, x):
        return np.sum(self.predict(x) ** 2) + np.sum(np.sin(x) * x)  # a method calling one


def model_loss(W, x, xp=anp):
    h = xp.tanh(xp.dot(x, W) + 0.1 * xp.ones(3))
    return xp.sum(h**2) + xp.sum(xp.sin(x) * x)


def test_bound_method_hessian_vector_product_wrt_the_argument():
    model = Model(W0)
    check_both_modes(model.loss, lambda x: model_loss(W0, x))


def test_differentiable_of_a_bound_method_second_order():
    model = Model(W0)
    check_both_modes(differentiable(model.loss), lambda x: model_loss(W0, x))


def test_bound_method_hessian_vector_product_wrt_an_attribute():
    """vjp(grad(model.loss, wrt="self.W"), x, wrt="self.W") pulls back H_WW dW."""
    model = Model(W0)
    first = grad(model.loss, wrt="self.W")
    _, pullback = vjp(first, X, wrt="self.W")
    (hv,) = pullback(DW)
    expected = autograd_hvp(lambda W: model_loss(W, X), W0, DW)
    np.testing.assert_allclose(hv, expected, rtol=1e-9, atol=1e-12)

    def gradient_at(W):
        return grad(Model(W).loss, wrt="self.W")(X)

    np.testing.assert_allclose(hv, differences(gradient_at, W0, DW), rtol=1e-6, atol=1e-8)


def test_bound_method_mixed_second_derivative():
    """jvp(grad(model.loss, wrt="self.W"), (x,), (v,)): d/dx of the gradient of W."""
    model = Model(W0)
    _, mixed = jvp(grad(model.loss, wrt="self.W"), (X,), (V,))
    expected = autograd.grad(lambda x: anp.sum(autograd.grad(model_loss)(W0, x) * DW), 0)
    # <d/dx grad_W . v, DW> == <d/dx <grad_W, DW>, v>
    assert np.sum(mixed * DW) == pytest.approx(np.dot(expected(X), V), rel=1e-9)
    first = grad(model.loss, wrt="self.W")
    np.testing.assert_allclose(mixed, differences(first, X, V), rtol=1e-6, atol=1e-8)


def test_a_method_seen_as_a_function_of_its_object_takes_an_attribute_tangent():
    """jvp(grad(Model.loss, wrt="self.W"), (model, x), ({"W": dW, "b": None}, None))."""
    model = Model(W0)
    _, hv = jvp(grad(Model.loss, wrt="self.W"), (model, X), ({"W": DW, "b": None}, None))
    expected = autograd_hvp(lambda W: model_loss(W, X), W0, DW)
    np.testing.assert_allclose(hv, expected, rtol=1e-9, atol=1e-12)


def test_grad_of_grad_of_a_method_and_third_order():
    class Cubic:
        a = 1.5

        def f(self, x):
            return self.a * np.sin(x) * x**3

    cubic = Cubic()
    second, third = grad(grad(cubic.f)), grad(grad(grad(cubic.f)))
    x = 0.7
    expected = autograd.grad(autograd.grad(lambda y: 1.5 * anp.sin(y) * y**3))(x)
    assert second(x) == pytest.approx(expected, rel=1e-12)
    assert third(x) == pytest.approx((second(x + 1e-6) - second(x - 1e-6)) / 2e-6, rel=1e-6)


class Softplus:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return np.sum(np.log(1 + np.exp(self.scale * x)))


def test_callable_object_second_order():
    check_both_modes(Softplus(1.3), lambda x: anp.sum(anp.log(1 + anp.exp(1.3 * x))))


def weighted(x, w, p):
    return np.sum(w * x**p + np.cos(x))


def test_partial_second_order():
    check_both_modes(
        functools.partial(weighted, w=2.0, p=3),
        lambda x: anp.sum(2.0 * x**3 + anp.cos(x)),
    )


def test_lambda_second_order():
    smooth = lambda x: np.sum(np.exp(-(x**2)) * x)  # noqa: E731
    check_both_modes(smooth, lambda x: anp.sum(anp.exp(-(x**2)) * x))


class Benchmark:
    def __init__(self):
        self.shift = 0.5

    def fun(self, x, *args):
        total = np.sum((x - self.shift) ** 4)
        return total + args[0] * np.sum(x * x) + args[1] * np.sum(np.sin(x))


def test_varargs_method_second_order():
    bench = Benchmark()
    first = grad(bench.fun)
    expected = autograd_hvp(
        lambda x: anp.sum((x - 0.5) ** 4) + 2.0 * anp.sum(x * x) + 0.3 * anp.sum(anp.sin(x)),
        X,
        V,
    )
    _, hv = jvp(first, (X, 2.0, 0.3), (V, None, None))

    def gradient(x):
        return first(x, 2.0, 0.3)

    check_hvp(gradient, hv, expected)
    _, pullback = vjp(first, X, 2.0, 0.3)
    check_hvp(gradient, pullback(V)[0], expected)


def apply(nonlinearity, x):
    return np.sum(nonlinearity(x) * x)


def test_function_passed_as_an_argument_second_order():
    first = grad(apply, wrt=1)
    expected = autograd_hvp(lambda x: anp.sum(anp.tanh(x) * x), X, V)
    _, hv = jvp(first, (np.tanh, X), (None, V))

    def gradient(x):
        return first(np.tanh, x)

    check_hvp(gradient, hv, expected)
    _, pullback = vjp(first, np.tanh, X, wrt=1)
    check_hvp(gradient, pullback(V)[0], expected)
