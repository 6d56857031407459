"""The front door takes what Python programmers pass as functions: ``differentiable``,
``grad``, ``value_and_grad``, ``vjp`` and ``jvp`` accept bound methods, callable
objects, ``functools.partial``, methods and functions with ``*args`` (compiled per
count of extra arguments) and lambdas (``grad(lambda x: ...)``, ``f = lambda x: ...``).

Every gradient is checked against central differences and autograd; value_and_grad
is called three times so that its specialized fast path runs too; attributes changed
between calls are read anew. What stays refused is refused with a located error.
"""

from __future__ import annotations

import functools
import linecache

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central_difference
from wrapped_text import wrapped

from autodiff_tutor import differentiable, grad, jvp, value_and_grad, vjp
from autodiff_tutor.errors import ArgumentError, SourceUnavailableError
from autodiff_tutor.tracing import evaluate, gradient, traced

X = np.array([0.3, -0.7, 1.1])


class Model:
    def __init__(self, scale=1.0):
        self.W = scale * np.array([[0.5, -0.2], [0.3, 0.8], [-0.6, 0.1]])
        self.b = np.array([0.1, -0.3])

    def loss(self, x):
        return np.sum(np.tanh(x @ self.W + self.b) ** 2)


class Sigmoid:
    def __init__(self, k=1.5):
        self.k = k

    def __call__(self, z):
        return 1 / (1 + np.exp(-self.k * z))


class Rosen:
    """A benchmark class as scipy's optimization benchmarks write them."""

    def __init__(self):
        self.a = 1.0

    def fun(self, x, *args):
        total = np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (self.a - x[:-1]) ** 2)
        for weight in args:
            total = total + weight * np.sum(x**4)
        return total


def weighted(x, *args):
    return np.sum(np.sin(x) * len(args)) + np.sum(x**2 * args[0])


def scaled_cubes(scale, x):
    return scale * np.sum(x**3)


square_sum = lambda x: np.sum(np.cos(x) * x**2)  # noqa: E731


def agrees(function, compiled_gradient, x, np_function=None):
    """The gradient against central differences and autograd (``np_function`` is the
    same function written with ``anp``)."""
    np.testing.assert_allclose(
        compiled_gradient, central_difference(function, [x], 0), rtol=1e-6, atol=1e-7
    )
    if np_function is not None:
        np.testing.assert_allclose(compiled_gradient, autograd.grad(np_function)(x), rtol=1e-10)


def three_calls(value_and_gradient, *args):
    """value_and_grad called three times (the fast path from the second), each result kept."""
    return [value_and_gradient(*args) for _ in range(3)]


# -- differentiable() of bound methods, callable objects and partials ---------------------


def test_differentiable_of_a_bound_method_runs_and_differentiates_it():
    model = Model()
    loss = differentiable(model.loss)
    assert loss(X) == model.loss(X)

    def plain(x):
        return anp.sum(anp.tanh(anp.dot(x, model.W) + model.b) ** 2)

    agrees(model.loss, grad(loss)(X), X, plain)
    for value, g in three_calls(value_and_grad(loss), X):
        assert value == pytest.approx(model.loss(X))
        agrees(model.loss, g, X, plain)
    np.testing.assert_allclose(vjp(loss, X)[1](1.0)[0], grad(model.loss)(X), rtol=1e-12)
    direction = np.array([1.0, 0.5, -2.0])
    assert jvp(loss, (X,), (direction,))[1] == pytest.approx(np.dot(grad(loss)(X), direction))
    assert "def loss_backward" in loss.backward_source()
    assert "self = a Model" in loss.forward_source().splitlines()[1]


def test_attributes_are_read_at_each_call():
    """``wrt="self.W"`` through ``differentiable(model.loss)``; after ``model.W`` is
    rebound, changed in place, or a new attribute added, the next call sees it."""
    model = Model()
    both = value_and_grad(differentiable(model.loss), wrt="self.W")

    def of_W(W):
        return np.sum(np.tanh(X @ W + model.b) ** 2)

    for step in range(4):
        if step == 1:
            model.W = 2.0 * model.W  # rebound
        if step == 2:
            model.W[0, 0] = -1.5  # changed in place
        if step == 3:
            model.extra = np.ones(2)  # a new attribute: a new structure
        value, dW = both(X)
        assert value == pytest.approx(of_W(model.W))
        np.testing.assert_allclose(dW, central_difference(of_W, [model.W], 0), atol=1e-7)
        np.testing.assert_allclose(
            dW,
            autograd.grad(lambda W: anp.sum(anp.tanh(anp.dot(X, W) + model.b) ** 2))(model.W),
            rtol=1e-10,
        )


def test_differentiable_of_a_callable_object():
    sigmoid = Sigmoid()
    op = differentiable(sigmoid)
    np.testing.assert_allclose(op(X), sigmoid(X))
    assert op.name == "Sigmoid"

    def loss(z):
        return np.sum(op(z) ** 2)

    def reference(z):
        return anp.sum((1 / (1 + anp.exp(-1.5 * z))) ** 2)

    agrees(lambda z: np.sum(sigmoid(z) ** 2), grad(loss)(X), X, reference)  # an op in code
    traced_gradient = evaluate(lambda z: gradient(loss(z), z), traced(X))  # an op in a trace
    np.testing.assert_allclose(traced_gradient, autograd.grad(reference)(X), rtol=1e-10)
    sigmoid.k = 0.5  # read anew
    np.testing.assert_allclose(
        vjp(op, X)[1](np.ones(3))[0],
        autograd.grad(lambda z: anp.sum(1 / (1 + anp.exp(-0.5 * z))))(X),
        rtol=1e-10,
    )
    out, tangent = jvp(op, (X,), (np.ones(3),))
    np.testing.assert_allclose(tangent, vjp(op, X)[1](np.ones(3))[0], rtol=1e-12)


def test_traced_attributes_are_traced_through_the_method():
    """In a trace, an attribute set to a traced array gets its gradient too (the
    method runs traced, not as an op of its visible parameters)."""
    model = Model()
    loss = differentiable(model.loss)

    def both(W, x):
        model.W = W
        return gradient(loss(x), [W, x])

    W0 = model.W.copy()
    dW, dx = evaluate(both, traced(W0), traced(X))

    def reference(W, x):
        return anp.sum(anp.tanh(anp.dot(x, W) + model.b) ** 2)

    np.testing.assert_allclose(dW, autograd.grad(reference, 0)(W0, X), rtol=1e-10)
    np.testing.assert_allclose(dx, autograd.grad(reference, 1)(W0, X), rtol=1e-10)


def test_differentiable_of_a_partial():
    cubes = differentiable(functools.partial(scaled_cubes, 2.5))
    assert cubes(X) == scaled_cubes(2.5, X)
    agrees(lambda x: scaled_cubes(2.5, x), grad(cubes)(X), X, lambda x: 2.5 * anp.sum(x**3))
    for _, g in three_calls(value_and_grad(cubes), X):
        np.testing.assert_allclose(g, 7.5 * X**2, rtol=1e-12)
    assert "def scaled_cubes_backward" in cubes.backward_source()


def test_a_builtin_is_refused_as_not_written_in_python():
    with pytest.raises(SourceUnavailableError, match=wrapped("not written in Python")) as info:
        differentiable(np.frompyfunc(abs, 1, 1))
    assert info.value.location.filename == __file__


# -- *args ----------------------------------------------------------------------------


def rosen_reference(a, weights):
    def f(x):
        total = anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (a - x[:-1]) ** 2)
        return total + sum(w * anp.sum(x**4) for w in weights)

    return f


@pytest.mark.parametrize("extra", [(), (0.5,), (0.5, 2.0)])
def test_a_method_with_varargs_is_compiled_per_count_of_extra_arguments(extra):
    bench = Rosen()
    agrees(
        lambda x: bench.fun(x, *extra),
        grad(bench.fun)(X, *extra),
        X,
        rosen_reference(1.0, extra),
    )
    for value, g in three_calls(value_and_grad(bench.fun), X, *extra):
        assert value == pytest.approx(bench.fun(X, *extra))
        agrees(lambda x: bench.fun(x, *extra), g, X)
    direction = np.array([1.0, -1.0, 0.5])
    _, tangent = jvp(bench.fun, (X, *extra), (direction, *[None] * len(extra)))
    assert tangent == pytest.approx(np.dot(grad(bench.fun)(X, *extra), direction))
    np.testing.assert_allclose(vjp(bench.fun, X, *extra)[1](1.0)[0], grad(bench.fun)(X, *extra))


def test_one_value_and_grad_takes_each_count_in_turn():
    both = value_and_grad(Rosen().fun)
    for extra in [(), (1.0,), (), (1.0, 3.0), (1.0,)]:
        _, g = both(X, *extra)
        np.testing.assert_allclose(g, autograd.grad(rosen_reference(1.0, extra))(X), rtol=1e-10)


def test_a_function_with_varargs_and_the_gradient_of_an_extra_argument():
    agrees(
        lambda x: weighted(x, 2.0, 1.0),
        grad(weighted)(X, 2.0, 1.0),
        X,
        lambda x: anp.sum(anp.sin(x) * 2) + anp.sum(x**2 * 2.0),
    )
    direction = np.array([1.0, 0.5, -1.0])
    _, tangent = jvp(weighted, (X, 2.0, 1.0), (direction, None, None))
    assert tangent == pytest.approx(np.dot(grad(weighted)(X, 2.0, 1.0), direction))
    d_args = grad(weighted, wrt="args")(X, 2.0, 1.0)
    assert d_args[0] == pytest.approx(np.sum(X**2)) and d_args[1] == 0.0
    assert grad(differentiable(Rosen().fun))(X, 0.5) == pytest.approx(
        autograd.grad(rosen_reference(1.0, (0.5,)))(X)
    )


# -- lambdas ----------------------------------------------------------------------------


def test_a_lambda_assigned_to_a_name():
    compiled = differentiable(square_sum)
    assert compiled.name == "square_sum"
    agrees(square_sum, grad(square_sum)(X), X, lambda x: anp.sum(anp.cos(x) * x**2))
    for _, g in three_calls(value_and_grad(square_sum), X):
        agrees(square_sum, g, X)
    assert "def square_sum_backward" in compiled.backward_source()
    direction = np.ones(3)
    assert jvp(square_sum, (X,), (direction,))[1] == pytest.approx(np.sum(grad(square_sum)(X)))


def test_a_lambda_given_inline_and_several_on_one_line():
    np.testing.assert_allclose(grad(lambda z: np.sum(z**2))(X), 2 * X)
    double, triple = (lambda z: np.sum(2 * z**2), lambda z: np.sum(3 * z**2))  # noqa: E731
    np.testing.assert_allclose(grad(double)(X), 4 * X)
    np.testing.assert_allclose(grad(triple)(X), 6 * X)
    scale = 3.0
    closure = lambda z: np.sum(scale * np.exp(z))  # noqa: E731
    agrees(closure, grad(closure)(X), X, lambda z: anp.sum(3.0 * anp.exp(z)))


def test_an_error_in_a_lambda_is_located_in_the_lambda():
    bad = lambda z: np.sum(z) + not_defined_anywhere(z)  # noqa: E731, F821
    with pytest.raises(Exception, match="not_defined_anywhere") as info:
        grad(bad)(X)
    location = info.value.location
    assert location.filename == __file__
    assert location.text[location.column :].startswith("not_defined_anywhere")


def test_a_lambda_whose_source_cannot_be_told_apart_is_refused_located():
    """Two lambdas with the same parameters on one line, in a file where the code no
    longer matches either of them (the file was edited after it ran)."""
    filename = "<edited-cell>"
    source = "f = lambda x: x * 2\n"
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    linecache.cache[filename] = (1, None, ["f, g = lambda x: x + 1, lambda x: x - 1\n"], filename)
    try:
        with pytest.raises(SourceUnavailableError, match=wrapped("several lambdas")) as info:
            grad(namespace["f"])(X)
    finally:
        del linecache.cache[filename]
    assert info.value.location.line == 1 and info.value.location.column == 7


def test_varargs_count_mismatch_is_an_argument_error():
    with pytest.raises(ArgumentError):
        grad(weighted)()
