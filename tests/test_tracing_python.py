"""The corpus of everyday Python (tests/corpus_python) in the tracing mode, against
finite differences and autograd: unpacking (``N, D = x.shape``), ``print`` and
``assert`` of traced values, comprehensions and ``sum([...])``, structured arguments
(a list of ``(W, b)`` pairs, dicts, nested: the gradient comes back in the same
structure), callables. What tracing cannot follow is a located error with a hint
naming what to write instead."""

import math

import numpy as np
import pytest
from corpus_python import PROGRAMS
from corpus_python.common import check_gradients
from oracles import structured_central_difference

from autodiff_tutor import grad
from autodiff_tutor.errors import ArgumentError, TracingEscapeError
from autodiff_tutor.tracing import value_and_gradient


def case(program):
    if program.tracing:
        return pytest.param(program, marks=pytest.mark.xfail(strict=True, reason=program.tracing))
    return program


def test_tracing_accepts_most_of_the_corpus():
    accepted = [p for p in PROGRAMS if not p.tracing]
    assert len(accepted) >= 45, len(accepted)


@pytest.mark.parametrize("seed", (0, 1, 2))
@pytest.mark.parametrize("program", [case(p) for p in PROGRAMS], ids=[p.name for p in PROGRAMS])
def test_traced_gradients_match_finite_differences_and_autograd(program, seed):
    args = program.sample(np.random.default_rng(seed))
    value, gradients = value_and_gradient(program.fn, *args, wrt=list(program.wrt))
    np.testing.assert_allclose(value, program.fn(*args), rtol=1e-12, atol=1e-12)
    check_gradients(program, args, gradients)


class Unreached:
    """Methods: code tracing does not reach (numpy and math there are their own)."""

    def pair(self, a, b):
        return np.array([a, b])

    def exponential(self, a):
        return math.exp(a)


@pytest.mark.parametrize("call", ["pair", "exponential"])
def test_what_tracing_cannot_follow_is_located_with_what_to_write(call):
    """Where tracing does not reach (a method), np.array([...]) and math.* of traced
    values are located errors naming the numpy spelling to write."""
    helper = Unreached()
    fn = (
        (lambda x: np.sum(helper.pair(x[0], x[1])))
        if call == "pair"
        else (lambda x: helper.exponential(x[0]))
    )
    with pytest.raises(TracingEscapeError) as raised:
        value_and_gradient(fn, np.array([0.5, 1.0]))
    error = raised.value
    assert error.location is not None and error.location.line > 0
    source = error.location.text
    if "math." in source:
        assert "write np.exp(" in error.hint
    else:
        assert "np.array([" in source and "np.stack([a, b, ...])" in error.hint


def test_a_structure_is_traced_leaf_by_leaf_and_integer_leaves_get_none():
    def loss(params, X):
        (W, b), meta = params
        return np.sum(np.tanh(X @ W + b) ** 2) + 0.0 * meta["count"].sum()

    rng = np.random.default_rng(0)
    params = ((rng.normal(size=(3, 2)), rng.normal(size=2)), {"count": np.arange(3)})
    X = rng.normal(size=(4, 3))
    _, ((dW, db), meta) = value_and_gradient(loss, params, X)
    assert meta == {"count": None}
    expected = structured_central_difference(lambda p: loss((p, params[1]), X), [params[0]], 0)
    np.testing.assert_allclose(dW, expected[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(db, expected[1], rtol=1e-6, atol=1e-8)


def test_numpy_checks_read_traced_values_without_an_error():
    def loss(x):
        np.testing.assert_allclose(x, x)
        assert np.allclose(x, x) and np.isclose(x, x).all() and not np.isinf(x).any()
        return np.sum(x**2)

    _, gradient = value_and_gradient(loss, np.array([1.0, -2.0]))
    np.testing.assert_allclose(gradient, [2.0, -4.0])


def test_a_failing_numpy_check_raises_its_own_assertion_error():
    def loss(x):
        np.testing.assert_array_less(x, 0.0)
        return np.sum(x)

    with pytest.raises(AssertionError, match="Arrays are not"):
        value_and_gradient(loss, np.array([1.0]))


class Outside:
    """A method: code tracing does not reach (numpy there is numpy's own)."""

    def total(self, x):
        return np.sum(np.asarray(x))


def test_converting_one_traced_array_does_not_suggest_stack():
    with pytest.raises(TracingEscapeError) as raised:
        value_and_gradient(lambda x: Outside().total(x), np.ones(2))
    assert "np.stack" not in raised.value.hint.split(";")[0]
    assert "stop_gradient(x)" in raised.value.hint


def test_callables_and_attributes_as_in_the_compiler():
    from test_compiler_callables import Regression

    model = Regression(np.random.default_rng(0))
    X = np.random.default_rng(1).normal(size=(4, 3))
    y = X[:, :2]
    W = model.W
    np.testing.assert_allclose(value_and_gradient(model.loss, X, y)[1], grad(model.loss)(X, y))
    _, (db, dX) = value_and_gradient(model.loss, X, y, wrt=["self.b", 0])
    np.testing.assert_allclose(db, grad(model.loss, wrt="self.b")(X, y), rtol=1e-12)
    np.testing.assert_allclose(dX, grad(model.loss)(X, y), rtol=1e-12)
    dW = value_and_gradient(model, X, wrt="self.W")[1]  # an object with __call__
    np.testing.assert_allclose(dW, grad(model, wrt="self.W")(X), rtol=1e-12)
    assert model.W is W  # the attribute is the user's array again after the call
    with pytest.raises(ArgumentError, match="no attribute 'V'") as raised:
        value_and_gradient(model.loss, X, y, wrt="self.V")
    assert raised.value.location is not None
