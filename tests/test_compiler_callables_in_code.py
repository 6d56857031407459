"""Methods, objects and functions as values called inside differentiated code.

At a call every value that is not an array's is known, so the compiler inlines what
the code calls through them: a method of ``self`` or of another object, a callable
object, a function held in an attribute, a parameter or a local, a lambda, a
``functools.partial``, a parent's method (``super().forward(x)``,
``Dense.forward(self, x)``), a method decorated with ``@differentiable``, an object
built and called in one expression (``Gaussian(mu, s).logpdf(x)``). Each case
is checked against central differences and autograd (value_and_grad three times, so
the cached path runs too; jvp where it applies); a
changed function, method or object gets its own compilation (never a stale one); what
stays refused is located at the user's line.
"""

import contextlib
import functools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, grad, jvp, value_and_grad, vjp
from autodiff_tutor.errors import AutodiffError, UnsupportedSyntaxError


@contextlib.contextmanager
def autograd_numpy():
    """This module's ``np`` is autograd's while autograd differentiates: the methods,
    lambdas and helpers below read it when they run."""
    saved = globals()["np"]
    globals()["np"] = anp
    try:
        yield
    finally:
        globals()["np"] = saved


def by_autograd(fn, x):
    with autograd_numpy():
        return autograd.grad(fn)(x)


def check(fn, x, compiled=None):
    """``grad`` (and value_and_grad three times) of ``fn`` (or of ``compiled``, the
    same function as the compiler gets it) against both oracles."""
    compiled = fn if compiled is None else compiled
    expected = central_difference(fn, [x], 0)
    np.testing.assert_allclose(by_autograd(fn, x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad(compiled)(x), expected, rtol=1e-6, atol=1e-8)
    both = value_and_grad(compiled)
    for _ in range(3):
        value, gradient = both(x)
        np.testing.assert_allclose(value, fn(x), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    return expected


X = np.array([[0.3, -0.8, 1.1], [0.5, 0.2, -0.4]])


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731 - a module-level lambda helper


class Network:
    def __init__(self):
        self.W = np.array([[0.2, -0.5, 0.1], [0.7, 0.3, -0.2], [-0.4, 0.6, 0.5]])
        self.b = np.array([0.1, -0.2, 0.05])

    def feedforward(self, a):
        return np.tanh(a @ self.W + self.b)

    def cost(self, x):
        return np.sum(self.feedforward(x) ** 2)


class Sigmoid:
    def __call__(self, z):
        return 1 / (1 + np.exp(-z))


class Dense:
    def __init__(self, seed):
        self.W = np.random.default_rng(seed).normal(size=(3, 3)) * 0.5

    def __call__(self, h):
        return np.tanh(h @ self.W)


class Holder:
    """Functions and objects held in attributes, and a class-level constant."""

    scale = 0.5

    def __init__(self):
        self.fn = lambda z: z**3
        self.act = np.tanh
        self.gate = Sigmoid()
        self.layer = Dense(1)

    def loss(self, x):
        return np.sum(self.fn(x) + self.act(x) * self.gate(x) + self.layer(x)) * self.scale


# -- a method called on self, and another object's methods --------------------------------


def test_a_method_calls_another_method_of_self():
    net = Network()
    expected = check(lambda x: net.cost(x), X, net.cost)
    _, tangent = jvp(net.cost, [X], [np.ones_like(X)])
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)


def cost_in_W(model):
    """``model.cost(X)`` as a function of the model's attribute ``W``."""

    def cost_of(W):
        model.W, saved = W, model.W
        try:
            return model.cost(X)
        finally:
            model.W = saved

    return cost_of


def test_the_gradient_of_an_attribute_through_a_method_of_self():
    net = Network()
    cost_of = cost_in_W(net)
    expected = central_difference(cost_of, [net.W], 0)
    np.testing.assert_allclose(by_autograd(cost_of, net.W), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad(net.cost, wrt="self.W")(X), expected, rtol=1e-6, atol=1e-8)


class Scaled(Network):
    def feedforward(self, a):
        return super().feedforward(a) * 1.5  # the usual way to extend a parent's method


class Shifted(Scaled):
    def feedforward(self, a):
        return super().feedforward(a) + a  # super() of super(): up the class chain

    def cost(self, x):
        return np.sum(super().feedforward(x) ** 2) + np.sum(self.feedforward(x))


class Explicit(Network):
    def feedforward(self, a):
        return Network.feedforward(self, a) * 1.5  # the explicit spelling


@pytest.mark.parametrize("cls", [Scaled, Shifted, Explicit])
def test_a_parents_method_called_through_super_or_its_class(cls):
    model = cls()
    check(lambda x: model.cost(x), X, model.cost)
    expected = central_difference(cost_in_W(model), [model.W], 0)
    np.testing.assert_allclose(grad(model.cost, wrt="self.W")(X), expected, rtol=1e-6, atol=1e-8)


def a_parents_method_on_an_object_passed(model, x):
    return np.sum(Network.feedforward(model, x) ** 2)


def test_a_classs_method_called_on_an_object_passed():
    model = Shifted()
    expected = central_difference(lambda x: a_parents_method_on_an_object_passed(model, x), [X], 0)
    np.testing.assert_allclose(
        grad(a_parents_method_on_an_object_passed, wrt="x")(model, X), expected, rtol=1e-6
    )


class Decorated:
    def __init__(self, k):
        self.k = k

    @differentiable
    def loss(self, x):
        return np.sum(np.exp(self.k * x))


decorated = Decorated(0.5)


def calls_a_decorated_method(x):
    return 2.0 * decorated.loss(x)


def calls_the_decorated_method_of(model, x):
    return model.loss(x) * 3.0


def test_a_method_decorated_with_differentiable_is_called_as_a_method():
    check(calls_a_decorated_method, X)
    expected = central_difference(lambda x: calls_the_decorated_method_of(decorated, x), [X], 0)
    got = grad(calls_the_decorated_method_of, wrt="x")(decorated, X)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


net = Network()
layer = Dense(2)


def uses_a_global_objects_method(x):
    return np.sum(net.feedforward(x))


def calls_a_global_layer(x):
    return np.sum(layer(layer(x)))


def test_another_objects_method_and_a_callable_object():
    check(uses_a_global_objects_method, X)
    check(calls_a_global_layer, X)


def test_a_closure_objects_method():
    model = Network()

    def loss(x):
        return np.sum(model.feedforward(x) * x)

    check(loss, X)


def test_functions_and_objects_held_in_attributes():
    holder = Holder()
    check(lambda x: holder.loss(x), X, holder.loss)


def test_an_object_held_by_an_object_gets_gradients_through_its_call():
    holder = Holder()

    def loss_of(W):
        holder.layer.W, saved = W, holder.layer.W
        try:
            return holder.loss(X)
        finally:
            holder.layer.W = saved

    expected = central_difference(loss_of, [holder.layer.W], 0)
    gradients = grad(holder.loss, wrt="self")(X)
    np.testing.assert_allclose(gradients["layer"]["W"], expected, rtol=1e-6, atol=1e-8)


# -- functions as values ------------------------------------------------------------------


def apply(nonlinearity, x):
    return np.sum(nonlinearity(x) * x)


@pytest.mark.parametrize(
    "nonlinearity",
    [np.tanh, np.sin, sigmoid, sig, Sigmoid(), functools.partial(np.power, x2=3)],
    ids=["ufunc", "another ufunc", "def", "lambda", "callable object", "partial"],
)
def test_a_parameter_holding_a_function(nonlinearity):
    if isinstance(nonlinearity, functools.partial):
        nonlinearity = functools.partial(np.power, 3.0)  # power(3, x): a partial of a ufunc
    expected = central_difference(lambda x: apply(nonlinearity, x), [X], 0)
    with autograd_numpy():
        chosen = nonlinearity
        if chosen in (np.tanh, np.sin):
            chosen = getattr(anp, chosen.__name__)
        elif isinstance(chosen, functools.partial):
            chosen = functools.partial(anp.power, 3.0)
        oracle = autograd.grad(lambda x: apply(chosen, x))(X)
    np.testing.assert_allclose(oracle, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad(apply, wrt="x")(nonlinearity, X), expected, rtol=1e-6)
    both = value_and_grad(apply, wrt="x")
    for _ in range(3):
        np.testing.assert_allclose(both(nonlinearity, X)[1], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        grad(functools.partial(apply, nonlinearity))(X), expected, rtol=1e-6, atol=1e-8
    )
    out, pullback = vjp(apply, nonlinearity, X, wrt="x")
    np.testing.assert_allclose(pullback(1.0)[0], expected, rtol=1e-6, atol=1e-8)
    _, tangent = jvp(apply, [nonlinearity, X], [None, np.ones_like(X)])
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)


def test_another_function_passed_gets_its_own_compilation():
    both = value_and_grad(apply, wrt="x")
    for _ in range(3):
        _, with_tanh = both(np.tanh, X)
    _, with_sin = both(np.sin, X)
    np.testing.assert_allclose(with_sin, np.sin(X) + X * np.cos(X), rtol=1e-12)
    _, again = both(np.tanh, X)
    np.testing.assert_allclose(again, with_tanh, rtol=1e-12)


def uses_the_module_lambda(x):
    return np.sum(sig(x) * x)


def assigns_a_function_to_a_local(x):
    f = sigmoid
    return np.sum(f(x) ** 2)


def _scaled(a, x):
    return a * np.tanh(x)


def calls_a_partial_in_its_code(x):
    return np.sum(functools.partial(_scaled, 2.0)(x) * x)


scaled_by_three = functools.partial(_scaled, 3.0)


def calls_a_global_partial(x):
    return np.sum(scaled_by_three(x) ** 2)


@pytest.mark.parametrize(
    "fn",
    [
        uses_the_module_lambda,
        assigns_a_function_to_a_local,
        calls_a_partial_in_its_code,
        calls_a_global_partial,
    ],
)
def test_functions_as_values_in_the_code(fn):
    check(fn, X)


# -- nothing is stale -----------------------------------------------------------------------


class Swappable:
    def __init__(self):
        self.W = np.eye(3) * 0.5

    def act(self, z):
        return np.tanh(z)

    def loss(self, x):
        return np.sum(self.act(x @ self.W))


def test_a_method_replaced_on_its_class_recompiles():
    model = Swappable()
    both = value_and_grad(model.loss)
    for _ in range(3):
        _, before = both(X)
    original = Swappable.act
    try:
        Swappable.act = lambda self, z: z**2
        _, after = both(X)
        np.testing.assert_allclose(after, central_difference(model.loss, [X], 0), rtol=1e-6)
    finally:
        Swappable.act = original
    np.testing.assert_allclose(both(X)[1], before, rtol=1e-12)


holder = Holder()


def uses_a_global_holders_function(x):
    return np.sum(holder.act(x) * x)


def test_a_function_changed_on_a_global_object_recompiles():
    both = value_and_grad(uses_a_global_holders_function)
    for _ in range(3):
        both(X)
    holder.act = np.sin
    try:
        _, gradient = both(X)
        np.testing.assert_allclose(gradient, np.sin(X) + X * np.cos(X), rtol=1e-12)
    finally:
        holder.act = np.tanh
    np.testing.assert_allclose(both(X)[1], np.tanh(X) + X / np.cosh(X) ** 2, rtol=1e-12)


def test_a_function_changed_on_an_object_parameter_recompiles():
    model = Holder()
    both = value_and_grad(model.loss)
    for _ in range(3):
        both(X)
    model.act = np.sin
    np.testing.assert_allclose(
        both(X)[1], central_difference(model.loss, [X], 0), rtol=1e-6, atol=1e-8
    )


def test_a_global_object_of_another_class_recompiles():
    global net
    both = value_and_grad(uses_a_global_objects_method)
    for _ in range(3):
        both(X)
    saved = net
    try:
        net = Swappable()
        net.feedforward = lambda a: a**3  # an instance's own function, not Network's method
        np.testing.assert_allclose(both(X)[1], 3 * X**2, rtol=1e-12)
    finally:
        net = saved


# -- objects passed to plain functions, classes and modules held by objects ----------------


def check_with(fn, args):
    """``grad`` of ``fn`` with respect to its first argument (the others: objects,
    lists of them), value_and_grad three times, against both oracles."""
    expected = central_difference(fn, list(args), 0)
    with autograd_numpy():
        by_autograd_ = autograd.grad(fn)(*args)
    np.testing.assert_allclose(by_autograd_, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad(fn)(*args), expected, rtol=1e-6, atol=1e-8)
    both = value_and_grad(fn)
    for _ in range(3):
        value, gradient = both(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    return expected


class QuadraticCost:
    @staticmethod
    def fn(a, y):
        return 0.5 * np.sum((a - y) ** 2)


class QuarticCost:
    @staticmethod
    def fn(a, y):
        return np.sum((a - y) ** 4)


class CostNetwork:
    """A network whose ``cost`` attribute holds a class, called through its static method."""

    def __init__(self, cost=QuadraticCost):
        self.W = np.array([[0.2, -0.5, 0.1], [0.7, 0.3, -0.2], [-0.4, 0.6, 0.5]])
        self.cost = cost

    def feedforward(self, a):
        return np.tanh(a @ self.W)

    def total_cost(self, x, y):
        return self.cost.fn(self.feedforward(x), y)


Y = np.array([[0.1, 0.2, -0.3], [0.0, 0.4, 0.2]])


def evaluate(x, net):
    return net.total_cost(x, Y) + np.sum(net.feedforward(x))


def test_a_static_method_of_a_class_held_in_an_attribute():
    net = CostNetwork()
    check(lambda x: net.total_cost(x, Y), X, lambda x: net.total_cost(x, Y))
    expected = check_with(evaluate, (X, net))
    _, tangent = jvp(evaluate, [X, net], [np.ones_like(X), None])
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)


def test_an_object_passed_to_a_plain_function_is_read_fresh_and_guarded():
    """The object's arrays are read at each call; another class held, or a static
    method replaced on the class, gets its own compilation."""
    net = CostNetwork()
    both = value_and_grad(evaluate)
    for _ in range(3):
        both(X, net)
    net.W = net.W * 2.0
    np.testing.assert_allclose(
        both(X, net)[1], central_difference(evaluate, [X, net], 0), rtol=1e-6, atol=1e-8
    )
    net.cost = QuarticCost
    np.testing.assert_allclose(
        both(X, net)[1], central_difference(evaluate, [X, net], 0), rtol=1e-6, atol=1e-8
    )
    saved = QuarticCost.fn
    try:
        QuarticCost.fn = staticmethod(lambda a, y: np.sum(np.sin(a - y)))
        np.testing.assert_allclose(
            both(X, net)[1], central_difference(evaluate, [X, net], 0), rtol=1e-6, atol=1e-8
        )
    finally:
        QuarticCost.fn = saved


class ArrayModule:
    def __init__(self, xp):
        self.xp = xp

    def loss(self, w):
        xp = self.xp
        return xp.sum(xp.sin(w) ** 2, axis=None)


def test_a_module_held_in_an_attribute_is_the_module():
    model = ArrayModule(np)
    check(model.loss, X)


class Parser:
    """Named blocks of one flat vector, as autodiff examples pack their weights."""

    def __init__(self):
        self.blocks = {}
        self.size = 0

    def add(self, name, shape):
        start = self.size
        self.size += int(np.prod(shape))
        self.blocks[name] = (slice(start, self.size), shape)

    def get(self, vector, name):
        where, shape = self.blocks[name]
        return np.reshape(vector[where], shape)


def parsed_loss(weights, parser):
    W = parser.get(weights, "W")
    b = parser.get(weights, "b")
    return np.sum(np.tanh(X @ W + b) ** 2)


def test_another_objects_method_returns_a_piece_of_the_differentiated_vector():
    parser = Parser()
    parser.add("W", (3, 2))
    parser.add("b", (2,))
    check_with(parsed_loss, (np.linspace(-1.0, 1.0, parser.size), parser))


class Problem:
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.A, self.b = rng.normal(size=(4, 3)), rng.normal(size=4)

    def loss(self, w):
        return np.sum((self.A @ w - self.b) ** 2)


def total_objective(w, problems):
    return sum(p.loss(w) for p in problems)


def stack_loss(x, layers):
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h**2)


class Stack:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        h = x
        for layer in self.layers[:-1]:
            h = layer(h) + h
        return np.sum(self.layers[-1](h))


def test_loops_and_generators_over_lists_of_objects_call_each_one():
    """Each call is resolved for its entry; another count of layers is another structure."""
    w = np.array([0.3, -0.2, 0.5])
    check_with(total_objective, (w, [Problem(1), Problem(2), Problem(3)]))
    check_with(stack_loss, (X, [Dense(1), Dense(2), Dense(3)]))
    check_with(stack_loss, (X, [Dense(4), Dense(5)]))
    model = Stack([Dense(1), Dense(2), Dense(3)])
    check(lambda x: model(x), X, model)


class Affine:
    def __init__(self, W, b, scale=1.0):
        self.W = W
        self.b = b * scale

    def __call__(self, h):
        return h @ self.W + self.b


def built_inside(W):
    first = Affine(W, 0.1)
    second = Affine(W.T, 0.2, scale=0.5)
    return np.sum(second(np.tanh(first(X))) ** 2)


def test_objects_built_inside_the_code_are_inlined():
    W = np.array([[0.2, -0.5, 0.1], [0.7, 0.3, -0.2], [-0.4, 0.6, 0.5]])
    expected = check(built_inside, W)
    _, tangent = jvp(built_inside, [W], [np.ones_like(W)])
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)
    both = value_and_grad(built_inside)
    for _ in range(3):
        both(W)
    original = Affine.__call__
    try:
        Affine.__call__ = lambda self, h: np.sin(h @ self.W) + self.b
        np.testing.assert_allclose(
            both(W)[1], central_difference(built_inside, [W], 0), rtol=1e-6, atol=1e-8
        )
    finally:
        Affine.__call__ = original


class Gaussian:
    def __init__(self, mu, sigma):
        self.mu = mu
        self.sigma = sigma

    def logpdf(self, x):
        z = (x - self.mu) / self.sigma
        return -0.5 * z**2 - np.log(self.sigma)


def built_and_called_at_once(W):
    shifted = W * 0.5
    return -np.sum(Gaussian(shifted, 1.5).logpdf(W.T)) + np.sum(Affine(W, 0.1)(np.tanh(X)))


def built_at_once_in_a_helper(W):
    return np.sum(_density_of(W) ** 2)


def _density_of(W):
    return Gaussian(W, 2.0).logpdf(np.cos(W) * 3)


def built_in_a_loop(W):
    total = 0.0
    for k in range(2):
        total = total + np.sum(Gaussian(W, 1.0 + k).logpdf(W.T))
    return total


@pytest.mark.parametrize("fn", [built_and_called_at_once, built_at_once_in_a_helper])
def test_an_object_built_and_called_in_one_expression_is_inlined(fn):
    W = np.array([[0.2, -0.5, 0.1], [0.7, 0.3, -0.2], [-0.4, 0.6, 0.5]])
    check(fn, W)


def test_an_object_built_in_a_loop_is_refused_with_the_form_that_works():
    W = np.array([[0.2, -0.5, 0.1], [0.7, 0.3, -0.2], [-0.4, 0.6, 0.5]])
    with pytest.raises(AutodiffError) as caught:
        grad(built_in_a_loop)(W)
    assert "g = Gaussian(...), then g.method(...)" in " ".join(caught.value.hint.split())
    assert "DifferentiableFunction" not in caught.value.hint


def make_loss(kind):
    if kind == "l2":
        return lambda r: np.sum(r**2)
    return lambda r: np.sum(np.log(np.cosh(r)))


def make_cubic_loss(kind):
    return lambda r: np.sum(r**3)


def compose(f, g):
    return lambda x: f(g(x))


def factory_losses(x):
    h = compose(np.sin, sigmoid)
    return make_loss("logcosh")(x) + 0.1 * make_loss("l2")(x) + np.sum(h(x) ** 2)


def test_functions_a_factory_returns_are_inlined_and_guarded():
    global make_loss
    expected = check(factory_losses, X)
    _, tangent = jvp(factory_losses, [X], [np.ones_like(X)])
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)
    both = value_and_grad(factory_losses)
    for _ in range(3):
        both(X)
    saved = make_loss
    try:
        make_loss = make_cubic_loss  # another factory under the same name
        np.testing.assert_allclose(
            both(X)[1], central_difference(factory_losses, [X], 0), rtol=1e-6, atol=1e-8
        )
    finally:
        make_loss = saved


class Recurrent:
    def __init__(self):
        self.Wx = np.array([[0.4, -0.3, 0.2], [0.1, 0.5, -0.6], [-0.2, 0.3, 0.1]])
        self.Wh = np.array([[0.3, 0.1, -0.2], [-0.4, 0.2, 0.5], [0.2, -0.1, 0.3]])
        self.inner = Dense(7)
        self.other = Dense(8)

    def step(self, x, h):
        return np.tanh(x @ self.Wx + h @ self.Wh)

    def loss(self, xs):
        h = np.zeros(3)
        for t in range(xs.shape[0]):
            h = self.step(xs[t], h) + self.inner(h)
        return np.sum(h**2)

    def picks_a_layer_in_a_loop(self, xs):
        h = np.zeros(3)
        for t in range(xs.shape[0]):
            if t % 2:
                layer = self.inner
            else:
                layer = self.other
            h = h + np.sum(layer.W) * xs[t]
        return np.sum(h**2)


def test_methods_called_inside_a_loop_that_stays_a_loop():
    model = Recurrent()
    check(lambda xs: model.loss(xs), X, model.loss)


def test_an_object_chosen_in_a_branch_inside_a_loop_stays_refused():
    """One name bound to two objects in a loop: which one is known only at run time."""
    with pytest.raises(UnsupportedSyntaxError) as raised:
        grad(Recurrent().picks_a_layer_in_a_loop)(X)
    assert "made inside a loop or a branch" in " ".join(str(raised.value).split())
    assert raised.value.location.text.strip() == "layer = self.inner"


class Data:
    def __init__(self):
        self.raw = np.array([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]])
        self.n = 2

    @property
    def scaled(self):
        return self.raw * 2.0


def reads_a_property(x, data):
    total = 0.0
    for i in range(data.n):
        total = total + np.sum(np.sin(x[i]) * data.scaled[i])
    return total


def test_a_property_of_an_object_passed_is_read_through_its_getter():
    data = Data()
    check_with(reads_a_property, (X, data))
    both = value_and_grad(reads_a_property)
    data.raw = data.raw + 1.0  # read fresh at the next call
    np.testing.assert_allclose(
        both(X, data)[1], central_difference(reads_a_property, [X, data], 0), rtol=1e-6
    )


# -- *args passed on, class methods, functions given to helpers ---------------------------


class Objective:
    """A benchmark class: ``loss`` passes its extra arguments on to ``objective``."""

    OFFSET = 0.2

    def __init__(self):
        self.W = np.array([0.4, -0.7, 1.2])

    @classmethod
    def shift(cls, a):
        return a + cls.OFFSET

    def loss(self, x, *args):
        w = self.shift(self.W)
        return self.objective(x, w, *args)

    def objective(self, x, w, *args):
        for a in args:
            w = np.tanh(w + a)
        if args:
            w = w * args[0]
        if len(args) > 1:
            w = w + np.sin(args[1] * w)
        return np.sum(np.tanh(x * w))


def check_with_extras(fn, compiled, x, extras):
    """``check`` of ``compiled`` called with ``extras`` after ``x``, and its jvp."""
    expected = check(lambda v: fn(v, *extras), x, lambda v: compiled(v, *extras))
    np.testing.assert_allclose(
        grad(compiled)(x, *extras), expected, rtol=1e-6, atol=1e-8
    )  # the method itself, its extra arguments given at the call
    both = value_and_grad(compiled)
    for _ in range(3):
        np.testing.assert_allclose(both(x, *extras)[1], expected, rtol=1e-6, atol=1e-8)
    direction = np.ones_like(x)
    _, tangent = jvp(compiled, [x, *extras], [direction, *(None for _ in extras)])
    np.testing.assert_allclose(tangent, np.sum(expected * direction), rtol=1e-6)


@pytest.mark.parametrize("extras", [(), (0.5,), (0.5, -0.3)])
def test_star_args_passed_on_to_a_method_are_bound_per_count(extras):
    """``self.objective(x, w, *args)`` with 0, 1 and 2 extra arguments: ``args`` is a
    tuple as long as the call gives, and the dead branches (``args[1]`` of one extra)
    are dropped; ``self.shift`` is a classmethod, called with the class."""
    model = Objective()
    check_with_extras(model.loss, model.loss, X, extras)


def spread_body(x, w, *args):
    w = w * (1.0 + 0.3 * len(args))
    for a in args:
        w = np.tanh(w + a)
    if len(args) > 1:
        w = w + np.sin(args[1] * w)
    return np.sum(np.tanh(x * w))


spread_lambda = lambda x, w, *args: spread_body(x, w, *args)  # noqa: E731


@pytest.mark.parametrize("extras", [(), (0.5,), (0.5, np.array([0.1, -0.2, 0.3]))])
def test_a_lambda_passes_its_star_args_on_to_a_def(extras):
    """``f = lambda x, w, *args: body(x, w, *args)``: ``body`` inlined with ``args``
    bound per count (an array among the extras too), w.r.t. ``w``."""
    w = np.array([0.4, -0.7, 1.2])
    expected = central_difference(lambda v: spread_body(X, v, *extras), [w], 0)
    with autograd_numpy():
        oracle = autograd.grad(lambda v: spread_body(X, v, *extras))(w)
    np.testing.assert_allclose(oracle, expected, rtol=1e-6, atol=1e-8)
    both = value_and_grad(spread_lambda, wrt=1)
    for _ in range(3):
        value, gradient = both(X, w, *extras)
        np.testing.assert_allclose(value, spread_body(X, w, *extras), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    _, tangent = jvp(spread_lambda, [X, w, *extras], [None, np.ones(3), *(None for _ in extras)])
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)


class Squashed:
    squash = staticmethod(np.cos)

    def __init__(self):
        self.W = np.array([0.5, 1.0, 1.5])

    def loss(self, x):
        return np.sum(self.squash(x * self.W))


def test_a_ufunc_held_as_a_staticmethod_is_called_through_self():
    """``squash = staticmethod(np.cos)`` in the class body, called as ``self.squash``."""
    model = Squashed()
    expected = check(lambda v: np.sum(np.cos(v * model.W)), X, model.loss)
    np.testing.assert_allclose(expected, -np.sin(X * model.W) * model.W, rtol=1e-6)


def test_a_classmethod_reads_the_class_attribute_of_the_call():
    """``cls.OFFSET`` rebound between calls: the next call reads the new value."""
    model = Objective()
    both = value_and_grad(model.loss)
    both(X, 0.5)
    try:
        Objective.OFFSET = -0.9
        value, gradient = both(X, 0.5)
        np.testing.assert_allclose(value, model.loss(X, 0.5), rtol=1e-12)
        expected = central_difference(lambda v: model.loss(v, 0.5), [X], 0)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    finally:
        Objective.OFFSET = 0.2


def smooth(a):
    return a / (1.0 + a * a)


def scaled(a, k=1.0):
    return np.sin(a * k)


def half_applied(fn, a):
    return fn(a) * 0.5 + a


def applied_cos(x):
    return np.sum(half_applied(np.cos, x) ** 2)


def applied_def(x):
    return np.sum(half_applied(smooth, x) ** 2)


def applied_partial(x):
    return np.sum(half_applied(functools.partial(scaled, k=0.7), x) ** 2)


def applied_lambda(x):
    k = 1.5
    return np.sum(half_applied(lambda v: np.tanh(k * v), x) ** 2)


SIGMOID = Sigmoid()


def applied_object(x):
    return np.sum(half_applied(SIGMOID, x) ** 2)


def applied_by_keyword(x):
    return np.sum(half_applied(a=x, fn=smooth) * half_applied(np.sin, x))


@pytest.mark.parametrize(
    "fn",
    [applied_cos, applied_def, applied_partial, applied_lambda, applied_object, applied_by_keyword],
)
def test_a_helper_calls_the_function_it_is_given(fn):
    """``half_applied(fn, a)`` calling ``fn(a)``, given a ufunc, a def, a partial, a lambda
    written at the call, a callable object, by keyword: the helper is inlined with
    ``fn`` known."""
    expected = check(fn, X)
    _, tangent = jvp(fn, [X], [np.ones_like(X)])
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)


def make_act(k):
    return lambda z: np.tanh(k * z)


SCALED = functools.partial(scaled, k=0.7)


def partial_then_closure(x):
    w = SCALED(x) + 0.5 * x
    return np.sum(make_act(1.5)(w))


def test_a_closure_variable_keeps_its_value_beside_a_partial_keyword_of_the_same_name():
    """A partial's stored ``k=0.7`` and a lambda's closure ``k=1.5`` inlined in one
    function: each reads its own ``k`` (the lambda 1.5, not 0.7)."""
    check(partial_then_closure, X)


ACTIVATIONS = {"tanh": np.tanh, "smooth": smooth, "sigmoid": sigmoid}


def configured(x, activation="smooth"):
    act = ACTIVATIONS[activation]
    return np.sum(act(x) ** 2)


@pytest.mark.parametrize("given", [(), ("tanh",), ("sigmoid",)])
def test_a_function_looked_up_by_a_string_argument(given):
    """``act = ACTIVATIONS[activation]`` with ``activation`` given or by default: the
    compilation is made for the string's value, and another string gets its own."""
    expected = central_difference(lambda v: configured(v, *given), [X], 0)
    with autograd_numpy():
        oracle = autograd.grad(lambda v: np.sum(_autograd_act(given)(v) ** 2))(X)
    np.testing.assert_allclose(oracle, expected, rtol=1e-6, atol=1e-8)
    both = value_and_grad(configured)
    for _ in range(3):
        value, gradient = both(X, *given)
        np.testing.assert_allclose(value, configured(X, *given), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)


def _autograd_act(given):
    name = given[0] if given else "smooth"
    return {"tanh": anp.tanh, "smooth": smooth, "sigmoid": sigmoid}[name]


def configured_layer(p, activation="smooth"):
    act = ACTIVATIONS[activation]
    return np.sum(act(p["w"]) ** 2)


def test_jvp_of_a_structure_beside_a_string_looked_up():
    """``jvp`` with a dict of arrays and a string read as a key: the string is no
    argument of the flattened function and takes no tangent there; the tangent matches
    central differences and autograd along the direction."""
    p, direction = {"w": X}, np.linspace(-1.0, 1.0, X.size).reshape(X.shape)
    along = lambda t: configured_layer({"w": X + t * direction}, "tanh")  # noqa: E731
    expected = central_difference(along, [np.float64(0.0)], 0)
    with autograd_numpy():
        oracle = autograd.grad(lambda w: np.sum(anp.tanh(w) ** 2))(X)
    np.testing.assert_allclose(np.sum(oracle * direction), expected, rtol=1e-6, atol=1e-8)
    value, tangent = jvp(configured_layer, (p, "tanh"), ({"w": direction}, None))
    np.testing.assert_allclose(value, configured_layer(p, "tanh"), rtol=1e-12)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)


def test_the_string_specialization_follows_the_dict():
    """The dict rebound at the key after a call: the next call runs the new entry."""
    both = value_and_grad(configured)
    both(X, "tanh")
    try:
        ACTIVATIONS["tanh"] = np.sin
        value, gradient = both(X, "tanh")
        np.testing.assert_allclose(value, np.sum(np.sin(X) ** 2), rtol=1e-12)
        np.testing.assert_allclose(gradient, 2 * np.sin(X) * np.cos(X), rtol=1e-12)
    finally:
        ACTIVATIONS["tanh"] = np.tanh


# -- what stays refused -------------------------------------------------------------------


namespace = {"np": np}
exec("def made_by_exec(self, z):\n    return np.tanh(z)\n", namespace)  # noqa: S102 - no source


class Refused:
    def __init__(self):
        self.W = np.eye(3)

    no_source = namespace["made_by_exec"]

    def calls_a_method_without_source(self, x):
        return np.sum(self.no_source(x))

    def countdown(self, x, n):
        return x if n == 0 else self.countdown(x * 2, n - 1)

    def recursive(self, x):
        return np.sum(self.countdown(x, 2))

    def spread(self, *zs):
        return zs[0]

    def calls_a_method_with_star_args(self, x):
        return np.sum(self.spread(*x))  # as many arguments as x has rows


@pytest.mark.parametrize(
    ("method", "message", "at"),
    [
        (
            "calls_a_method_without_source",
            "whose source the compiler cannot read",
            "self.no_source",
        ),
        ("recursive", "recursion is not supported", "self.countdown"),
        (
            "calls_a_method_with_star_args",
            "which takes *args, and this call passes it a number of arguments not known",
            "self.spread",
        ),
    ],
)
def test_refusals_are_located_at_the_call(method, message, at):
    with pytest.raises(AutodiffError) as raised:
        grad(getattr(Refused(), method))(X)
    error = raised.value
    assert isinstance(error, UnsupportedSyntaxError)
    assert message in " ".join(str(error).split())
    assert at in error.location.text
    assert error.location.filename == __file__
    if method == "recursive":  # the hint keeps the model: the same method, as a loop
        assert "write the recursion as a loop" in error.hint


class BranchyLayer:
    def __init__(self, W, bias):
        self.W = W
        if bias:
            self.b = 0.1

    def __call__(self, h):
        return h @ self.W


def builds_a_branchy_layer(W):
    layer = BranchyLayer(W, True)
    return np.sum(layer(X))


def test_an_object_whose_init_branches_is_refused_at_the_construction():
    with pytest.raises(UnsupportedSyntaxError) as raised:
        grad(builds_a_branchy_layer)(np.eye(3))
    error = raised.value
    assert "sets self.b inside a loop or a branch" in " ".join(str(error).split())
    assert "BranchyLayer(W, True)" in error.location.text
    assert error.location.filename == __file__
    assert "pass it as an argument" in error.hint


# -- functions held in lists and defaults -------------------------------------------------


def relu(z):
    return np.maximum(z, 0.0)


SQUASHES = [np.tanh, relu, lambda z: z]
LAYERS = [np.array([[0.2, -0.5, 0.1], [0.7, 0.3, -0.2], [-0.4, 0.6, 0.5]]) * k for k in (1, 2, 3)]


def zips_weights_and_activations(x, Ws):
    h = x
    for W, act in zip(Ws, SQUASHES, strict=False):
        h = act(h @ W)
    return np.sum(h**2)


def zips_strictly(x):
    h = x
    for W, squash in zip(LAYERS, SQUASHES, strict=True):
        h = squash(h @ W)
    return np.sum(h**2)


def enumerates_the_activations(x):
    h = x
    for i, act in enumerate(SQUASHES):
        h = act(h @ LAYERS[i])
    return np.sum(h**2)


def indexes_the_activations_in_a_range(x):
    h = x
    for i in range(len(SQUASHES)):
        h = SQUASHES[i](h @ LAYERS[i])
    return np.sum(h**2)


def picks_an_activation_by_index(x):
    return np.sum(SQUASHES[0](x) * SQUASHES[-1](x))


def default_activation(x, act=np.sin):
    return np.sum(act(x) ** 2)


def calls_a_helper_leaving_its_function_default_out(x):
    return default_activation(x) + default_activation(x, np.tanh)


def loops_over_a_tuple_of_ufuncs(x):
    total = 0.0
    for squash in (np.tanh, np.sin):
        total = total + np.sum(squash(x))
    return total


@pytest.mark.parametrize(
    "fn",
    [
        zips_strictly,
        enumerates_the_activations,
        indexes_the_activations_in_a_range,
        picks_an_activation_by_index,
        default_activation,
        calls_a_helper_leaving_its_function_default_out,
        loops_over_a_tuple_of_ufuncs,
    ],
)
def test_functions_held_in_lists_and_defaults_are_called(fn):
    check(fn, X)
    _, tangent = jvp(fn, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(tangent, np.sum(central_difference(fn, [X], 0)), rtol=1e-6)


def test_a_loop_zipping_a_list_argument_with_a_list_of_functions():
    """``Ws`` is not differentiated: its length is known at the call all the same."""
    expected = central_difference(zips_weights_and_activations, [X, LAYERS], 0)
    for _ in range(3):
        gradient = grad(zips_weights_and_activations)(X, LAYERS)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    by_weight = grad(zips_weights_and_activations, wrt=1)(X, LAYERS)
    for k, W in enumerate(LAYERS):

        def through_one(Wk, k=k):
            return zips_weights_and_activations(X, [*LAYERS[:k], Wk, *LAYERS[k + 1 :]])

        np.testing.assert_allclose(by_weight[k], central_difference(through_one, [W], 0), rtol=1e-6)
    shorter = grad(zips_weights_and_activations)(X, LAYERS[:2])  # zip stops at the shorter
    two_layers = central_difference(zips_weights_and_activations, [X, LAYERS[:2]], 0)
    np.testing.assert_allclose(shorter, two_layers, rtol=1e-6, atol=1e-8)


def test_a_changed_list_of_functions_or_default_recompiles():
    global SQUASHES
    saved, saved_defaults = SQUASHES, default_activation.__defaults__
    try:
        for fn in (enumerates_the_activations, picks_an_activation_by_index):
            both = value_and_grad(fn)
            for _ in range(2):
                both(X)
            SQUASHES = [np.sin, np.tanh, np.exp]  # rebound
            np.testing.assert_allclose(both(X)[1], central_difference(fn, [X], 0), rtol=1e-6)
            SQUASHES[0] = np.cos  # changed in place
            np.testing.assert_allclose(both(X)[1], central_difference(fn, [X], 0), rtol=1e-6)
            SQUASHES = [np.sin, np.tanh]  # shorter: the loop runs twice
            np.testing.assert_allclose(both(X)[1], central_difference(fn, [X], 0), rtol=1e-6)
            SQUASHES = saved
        for fn in (default_activation, calls_a_helper_leaving_its_function_default_out):
            default_activation.__defaults__ = saved_defaults
            both = value_and_grad(fn)
            for _ in range(2):
                both(X)
            default_activation.__defaults__ = (np.cos,)
            np.testing.assert_allclose(both(X)[1], central_difference(fn, [X], 0), rtol=1e-6)
    finally:
        SQUASHES, default_activation.__defaults__ = saved, saved_defaults


def scaled_square(x, c=2.0):
    return np.sum(c * x**2)


def calls_scaled_square_with_its_default(x):
    return scaled_square(x)


def test_a_literal_default_changed_after_compiling_is_read_again():
    saved = scaled_square.__defaults__
    try:
        for fn in (scaled_square, calls_scaled_square_with_its_default):
            scaled_square.__defaults__ = saved
            gradient = grad(fn)
            for _ in range(2):
                np.testing.assert_allclose(gradient(X), 4 * X)
            scaled_square.__defaults__ = (5.0,)
            np.testing.assert_allclose(gradient(X), 10 * X)
    finally:
        scaled_square.__defaults__ = saved
