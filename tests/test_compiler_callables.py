"""Bound methods, callable objects, functools.partial and methods decorated with
``@differentiable``, with gradients of attributes (``wrt="self.W"``), against finite
differences."""

import copy
import functools

import numpy as np
import pytest
from oracles import central_difference
from wrapped_text import wrapped

from autodiff_tutor import differentiable, grad, jvp, value_and_grad, vjp
from autodiff_tutor.errors import UnsupportedSyntaxError


class Regression:
    def __init__(self, rng):
        self.W = rng.normal(size=(3, 2))
        self.b = rng.normal(size=2)
        self.name = "regression"
        self.depth = 2

    def loss(self, X, y):
        h = X
        for _ in range(self.depth):
            h = np.tanh(h * 0.5 + self.W[0, 0])
        pred = X @ self.W + self.b
        return np.mean((pred - y) ** 2) + 0.1 * np.sum(h**2)

    def __call__(self, X):
        return np.sum(np.sin(X @ self.W) + self.b)

    @property
    def scale(self):
        return 2.0 * self.b

    def reads_a_property(self, X):
        return np.sum(X @ self.W) * np.sum(self.scale**2)

    def writes_itself(self, X):
        self.W = self.W * 2
        return np.sum(X @ self.W)


def squared_error(pred, target, weight=1.0):
    return weight * np.sum((pred - target) ** 2)


@pytest.fixture
def model():
    return Regression(np.random.default_rng(0))


def data(seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(4, 3)), rng.normal(size=(4, 2))


def attribute_differences(model, method, name, *args):
    def as_function(value):
        saved = getattr(model, name)
        setattr(model, name, value)
        try:
            return getattr(model, method)(*args)
        finally:
            setattr(model, name, saved)

    return central_difference(as_function, [getattr(model, name)], 0)


def test_bound_method_gradient_wrt_its_first_visible_argument(model):
    X, y = data()
    expected = central_difference(lambda X: model.loss(X, y), [X], 0)
    np.testing.assert_allclose(grad(model.loss)(X, y), expected, rtol=1e-6, atol=1e-7)


def test_gradient_of_attributes_by_name(model):
    X, y = data()
    dW = grad(model.loss, wrt="self.W")(X, y)
    np.testing.assert_allclose(dW, attribute_differences(model, "loss", "W", X, y), rtol=1e-6)
    value, (db, dX) = value_and_grad(model.loss, wrt=["self.b", 0])(X, y)
    assert value == pytest.approx(model.loss(X, y))
    np.testing.assert_allclose(db, attribute_differences(model, "loss", "b", X, y), rtol=1e-6)
    assert dX.shape == X.shape


def test_gradient_wrt_self_is_a_dict_of_attribute_gradients(model):
    X, y = data()
    gradients = grad(model.loss, wrt="self")(X, y)
    assert set(gradients) == {"W", "b", "name", "depth"}
    assert gradients["name"] is None and gradients["depth"] is None  # not floating point
    np.testing.assert_allclose(gradients["W"], attribute_differences(model, "loss", "W", X, y))


def test_callable_object(model):
    X, _ = data()
    expected = central_difference(model, [X], 0)
    np.testing.assert_allclose(grad(model)(X), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        grad(model, wrt="self.W")(X), attribute_differences(model, "__call__", "W", X), rtol=1e-6
    )


def test_partial_passes_its_stored_arguments():
    pred, target = data(2)[1], data(3)[1]
    loss = functools.partial(squared_error, target=target, weight=3.0)
    expected = central_difference(lambda p: loss(p), [pred], 0)
    np.testing.assert_allclose(grad(loss)(pred), expected, rtol=1e-6, atol=1e-7)


def test_partial_of_a_method(model):
    X, y = data()
    loss = functools.partial(model.loss, X)
    expected = central_difference(lambda y: model.loss(X, y), [y], 0)
    np.testing.assert_allclose(grad(loss)(y), expected, rtol=1e-6, atol=1e-7)


def test_a_property_of_self_is_read_through_its_getter(model):
    """The getter is inlined with the object as self: gradients reach the attributes it
    reads."""
    X = data()[0]
    expected = central_difference(model.reads_a_property, [X], 0)
    np.testing.assert_allclose(grad(model.reads_a_property)(X), expected, rtol=1e-6, atol=1e-7)
    expected_b = attribute_differences(model, "reads_a_property", "b", X)
    np.testing.assert_allclose(
        grad(model.reads_a_property, wrt="self.b")(X), expected_b, rtol=1e-6, atol=1e-7
    )


@pytest.mark.parametrize(
    ("method", "wrt", "message"),
    [
        ("writes_itself", "self.W", "the value written into self.W must not depend on a"),
    ],
)
def test_refused_uses_of_self_are_located(model, method, wrt, message):
    with pytest.raises(UnsupportedSyntaxError, match=message) as info:
        grad(getattr(model, method), wrt=wrt)(data()[0])
    assert "self." in info.value.location.text


def test_a_write_into_self_that_gets_no_gradient_runs_as_in_python(model):
    """``self.W = self.W * 2`` differentiated with respect to X: the write is made
    for its effect, once per call, and the code after it reads the new W."""
    X = data()[0]
    W = model.W.copy()
    for call in range(1, 4):
        gradient = grad(model.writes_itself)(X)
        np.testing.assert_allclose(model.W, W * 2**call)
        twin = copy.deepcopy(model)
        twin.W = W * 2 ** (call - 1)
        expected = central_difference(
            lambda v, twin=twin: copy.deepcopy(twin).writes_itself(v), [X], 0
        )
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)


class Stored:
    """Its weights behind a property with a setter, as a class that checks or
    converts what is set writes them."""

    def __init__(self):
        self._w = np.array([0.5, -1.0, 2.0])

    @property
    def w(self):
        return self._w

    @w.setter
    def w(self, value):
        self._w = value

    @property
    def read_only(self):
        return self._w

    def sets_through_the_setter(self, x):
        self.w = np.ones(3)
        return np.sum(np.sin(self.w * x))

    def sets_what_the_setter_stores(self, x):
        self._w = np.ones(3)
        return np.sum(np.sin(self.w * x))

    def sets_a_read_only_property(self, x):
        self.read_only = np.ones(3)
        return np.sum(x)


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("sets_through_the_setter", "which Stored defines as a property: Python runs its setter"),
        ("sets_a_read_only_property", "a property without a setter"),
    ],
)
def test_a_write_through_a_property_is_refused_located(method, message):
    """Python runs a property's setter, which stores elsewhere (``self._w``); the
    compiled code keeps writes to the object's own attributes only, so the write is
    refused at its line (reading the property after it gave the old value)."""
    x = np.array([0.3, -0.7, 1.1])
    with pytest.raises(UnsupportedSyntaxError, match=wrapped(message)) as info:
        value_and_grad(getattr(Stored(), method))(x)
    assert "self." in info.value.location.text and " = np.ones(3)" in info.value.location.text


def test_setting_what_the_setter_stores_reads_it_through_the_getter():
    """The form the refusal's hint gives: the write into ``self._w`` is kept, and the
    getter inlined after it reads the new weights, as in Python."""
    x = np.array([0.3, -0.7, 1.1])
    model = Stored()
    value, gradient = value_and_grad(model.sets_what_the_setter_stores)(x)
    assert value == pytest.approx(Stored().sets_what_the_setter_stores(x), rel=1e-12)
    expected = central_difference(Stored().sets_what_the_setter_stores, [x], 0)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(model._w, np.ones(3))


class Decorated:
    def __init__(self):
        self.W = np.array([[1.0, 0.5], [-0.3, 2.0]])

    @differentiable
    def loss(self, x):
        return np.sum(np.tanh(x @ self.W))


def test_a_method_decorated_with_differentiable_is_a_method():
    """``@differentiable`` in a class body: ``model.loss(x)`` runs it, and grad,
    value_and_grad, vjp and jvp of ``model.loss`` differentiate w.r.t. its argument or
    an attribute, against central differences."""
    model, x = Decorated(), np.array([[0.3, 0.5], [-1.0, 0.2]])
    assert model.loss(x) == np.sum(np.tanh(x @ model.W))
    expected_x = central_difference(lambda v: model.loss(v), [x], 0)

    def of_W(W):
        return np.sum(np.tanh(x @ W))

    expected_W = central_difference(of_W, [model.W], 0)
    np.testing.assert_allclose(grad(model.loss)(x), expected_x, atol=1e-6)
    np.testing.assert_allclose(grad(model.loss, wrt="self.W")(x), expected_W, atol=1e-6)
    value, (dx, dW) = value_and_grad(model.loss, wrt=["x", "self.W"])(x)
    assert value == model.loss(x)
    np.testing.assert_allclose(dx, expected_x, atol=1e-6)
    np.testing.assert_allclose(dW, expected_W, atol=1e-6)
    np.testing.assert_allclose(vjp(model.loss, x)[1](1.0)[0], expected_x, atol=1e-6)
    direction = np.ones_like(x)
    assert np.isclose(jvp(model.loss, (x,), (direction,))[1], np.sum(expected_x * direction))
