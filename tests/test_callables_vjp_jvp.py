"""vjp and jvp of bound methods, callable objects and ``functools.partial`` (grad
and value_and_grad took them already): the object's attributes are a structure,
``wrt`` may name ``"self.W"`` or ``"self"``; checked against central differences
(float64) of the seed-weighted output and of the directional derivative."""

import functools

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import grad, jvp, vjp
from autodiff_tutor.errors import ArgumentError

RNG = np.random.default_rng(3)


class Layer:
    def __init__(self):
        self.W = RNG.normal(size=(3, 2))
        self.scale = 3  # an integer attribute: no gradient

    def forward(self, x):
        return np.tanh(x @ self.W) * self.scale

    def __call__(self, x):
        return np.sin(x @ self.W)


def scaled(x, s):
    return np.exp(x) * s


X = RNG.normal(size=(4, 3))


def _seeded(fn, seed):
    return lambda *args: np.sum(seed * fn(*args))


def test_vjp_of_a_bound_method_wrt_its_argument_and_attribute():
    layer = Layer()
    seed = RNG.normal(size=(4, 2))
    out, pullback = vjp(layer.forward, X, wrt=["x", "self.W"])
    np.testing.assert_allclose(out, layer.forward(X))
    d_x, d_W = pullback(seed)

    def by_w(W):
        moved = Layer()
        moved.W, moved.scale = W, layer.scale
        return np.sum(seed * moved.forward(X))

    np.testing.assert_allclose(d_x, central_difference(_seeded(layer.forward, seed), [X], 0))
    np.testing.assert_allclose(d_W, central_difference(by_w, [layer.W], 0), rtol=1e-6)


def test_vjp_of_a_bound_method_wrt_self_gives_a_dict():
    layer = Layer()
    seed = RNG.normal(size=(4, 2))
    (d_self,) = vjp(layer.forward, X, wrt="self")[1](seed)
    assert set(d_self) == {"W", "scale"} and d_self["scale"] is None
    (d_W,) = vjp(layer.forward, X, wrt="self.W")[1](seed)
    np.testing.assert_allclose(d_self["W"], d_W)


def test_vjp_of_a_callable_object_defaults_to_its_float_arguments():
    layer = Layer()
    seed = RNG.normal(size=(4, 2))
    (d_x,) = vjp(layer, X)[1](seed)
    np.testing.assert_allclose(d_x, central_difference(_seeded(layer, seed), [X], 0))


def test_jvp_of_a_bound_method_and_a_callable_object():
    layer = Layer()
    direction = RNG.normal(size=X.shape)
    for fn in (layer.forward, layer):
        out, tangent = jvp(fn, (X,), (direction,))
        np.testing.assert_allclose(out, fn(X))
        eps = 1e-6
        want = (fn(X + eps * direction) - fn(X - eps * direction)) / (2 * eps)
        np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "partial",
    [functools.partial(scaled, s=2.5), functools.partial(scaled, s=np.array([1.0, -2.0, 0.5]))],
)
def test_vjp_and_jvp_of_a_partial_with_a_keyword(partial):
    x = RNG.normal(size=3)
    seed = RNG.normal(size=3)
    (d_x,) = vjp(partial, x)[1](seed)
    np.testing.assert_allclose(d_x, central_difference(_seeded(partial, seed), [x], 0))
    direction = RNG.normal(size=3)
    _, tangent = jvp(partial, (x,), (direction,))
    np.testing.assert_allclose(tangent, d_x_dot(partial, x, direction), rtol=1e-6)


def d_x_dot(fn, x, direction, eps=1e-6):
    return (fn(x + eps * direction) - fn(x - eps * direction)) / (2 * eps)


def test_jvp_of_a_partial_with_a_positional_argument():
    x = RNG.normal(size=3)
    partial = functools.partial(scaled, x)
    out, tangent = jvp(partial, (np.float64(2.0),), (np.float64(1.0),))
    np.testing.assert_allclose(out, scaled(x, 2.0))
    np.testing.assert_allclose(tangent, np.exp(x))


def test_jvp_with_a_tangent_missing_is_a_located_error():
    with pytest.raises(ArgumentError, match="tangents") as caught:
        jvp(Layer().forward, (X,), ())
    assert "test_callables_vjp_jvp.py" in str(caught.value)


class Cubes:
    def loss(self, y):
        return np.sum(y**3)


def cubes_times(a, b):
    return np.sum(a**3 * b)


def cubes_of_extras(y, *extras):
    return np.sum(y**3) * (1.0 + sum(extras))


@pytest.mark.parametrize(
    "f", [Cubes().loss, functools.partial(cubes_times, b=1.0)], ids=["method", "partial"]
)
def test_wrt_none_of_one_input_gives_one_gradient_for_methods_and_partials(f) -> None:
    """``grad(f, wrt=None)`` of a bound method or a partial with one input left gives
    that input's gradient, as for a def; ``jvp`` of it gives one tangent."""
    x, v = np.array([0.7, -1.3, 0.4]), np.array([1.0, 0.5, -2.0])
    gradient = grad(f, wrt=None)(x)
    np.testing.assert_allclose(gradient, central_difference(f, [x], 0), rtol=1e-6)
    value, tangent = jvp(grad(f, wrt=None), (x,), (v,))
    np.testing.assert_allclose(value, gradient)
    np.testing.assert_allclose(tangent, 6 * x * v)


def test_vjp_of_a_gradient_of_varargs_with_wrt_none_gives_one_output() -> None:
    """The flattened path (``*args``): ``vjp(grad(f, wrt=None), x, e)`` gives the
    gradient ``grad(f, wrt=None)(x, e)`` gives, not a 1-tuple, and its pullback the
    Hessian times the seed."""
    x, v = np.array([0.7, -1.3, 0.4]), np.array([1.0, 0.5, -2.0])
    out, pullback = vjp(grad(cubes_of_extras, wrt=None), x, 1.0)
    np.testing.assert_allclose(out, grad(cubes_of_extras, wrt=None)(x, 1.0))
    np.testing.assert_allclose(out, 6 * x**2)
    np.testing.assert_allclose(pullback(v)[0], 12 * x * v)
