"""Statements kept for their effect in compiled code: writes into attributes of the
method's object (``self.nfev += 1``, ``self.history.append(v)``), tests known while
compiling (``args[2] if len(args) > 2 else ...``), and effect calls that read the
function's values (``np.random.seed(p["seed"])``) in branches and loops.

A write into an attribute runs in the compiled forward, once per call, as in Python:
the caller's object sees it, reads after it see the value written, and no gradient
goes through it (a value that carries gradient written into ``self`` is refused,
located). Each case runs ``value_and_grad`` three times (so the specialized pair
runs too) against central differences and autograd, and counts the effect.
"""

import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import grad, jvp, value_and_grad, vjp
from autodiff_tutor.errors import ArgumentError, UnsupportedSyntaxError

RNG = np.random.default_rng(2801)


class Benchmark:
    def __init__(self, scale=2.0):
        self.nfev = 0
        self.scale = scale
        self.history = []
        self.sign = 1.0


class CountedRosenbrock(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return self.scale * np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


class ReadsTheCountAfter(Benchmark):
    def fun(self, x):
        self.nfev += 1
        self.history.append(self.nfev)
        self.scale = self.scale * 0.5  # a plain value: no gradient through self
        return np.sum(np.sin(x) * self.scale) + len(self.history) * np.sum(x**2)


class CountsInALoop(Benchmark):
    def fun(self, x):
        total = 0.0
        for k in range(x.shape[0]):
            self.nfev += 1
            total = total + x[k] ** 2 * self.nfev
        return total + np.sum(x) * self.nfev


class SignInABranch(Benchmark):
    def fun(self, x):
        if np.sum(x) > 0:
            self.sign = 1.0
        else:
            self.sign = -1.0
        return self.sign * np.sum(x**3)


def autograd_twin(method):
    """The method's function, reading autograd's numpy."""
    function = method.__func__ if hasattr(method, "__func__") else method
    return types.FunctionType(function.__code__, {**function.__globals__, "np": anp})


def python_reference(cls, x, calls):
    """The value, gradient and state after ``calls`` calls, from Python itself (and
    central differences, autograd, on objects of their own)."""
    obj = cls()
    for _ in range(calls - 1):
        obj.fun(x)
    before = vars(obj).copy()
    before["history"] = list(obj.history)

    def fresh():
        again = cls()
        vars(again).update({**before, "history": list(before["history"])})
        return again

    value = obj.fun(x)
    numeric = central_difference(lambda v: fresh().fun(v), [x], 0)
    twin = autograd_twin(cls.fun)
    auto = autograd.grad(lambda v: twin(fresh(), v))(x)
    return value, numeric, auto, obj


@pytest.mark.parametrize(
    "cls", [CountedRosenbrock, ReadsTheCountAfter, CountsInALoop, SignInABranch]
)
def test_writes_into_the_object_run_once_per_call_as_in_python(cls):
    x = RNG.normal(size=4) * 0.5
    obj = cls()
    for call in range(1, 4):
        value, gradient = value_and_grad(obj.fun)(x)
        want, numeric, auto, python_obj = python_reference(cls, x, call)
        np.testing.assert_allclose(value, want, rtol=1e-12)
        np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gradient, auto, rtol=1e-10, atol=1e-12)
        assert vars(obj) == vars(python_obj)  # the object as Python leaves it


def test_each_entry_point_counts_one_evaluation():
    """grad, value_and_grad, vjp (its pullback runs no forward) and jvp each run the
    forward once per call: nfev counts them."""
    bench = CountedRosenbrock()
    x = RNG.normal(size=3)
    grad(bench.fun)(x)
    assert bench.nfev == 1
    for _ in range(3):
        value_and_grad(bench.fun)(x)
    assert bench.nfev == 4
    _, pullback = vjp(bench.fun, x)
    assert bench.nfev == 5
    pullback(1.0)
    pullback(2.0)
    assert bench.nfev == 5
    tangent = RNG.normal(size=3)
    value, derivative = jvp(bench.fun, (x,), (tangent,))
    assert bench.nfev == 6
    plain = CountedRosenbrock()
    np.testing.assert_allclose(derivative, central_difference(plain.fun, [x], 0) @ tangent)


def test_the_varargs_benchmarks_of_the_corpus_count_their_evaluations():
    from corpus_objects.benchmarks import Ackley, Griewank, Rastrigin, Trid

    for cls in (Ackley, Griewank, Rastrigin, Trid):
        bench, x = cls(3), RNG.uniform(-1, 1, 3)
        for call in range(1, 4):
            value, gradient = value_and_grad(bench.fun)(x)
            assert bench.nfev == call
            np.testing.assert_allclose(value, cls(3).fun(x))
            numeric = central_difference(cls(3).fun, [x], 0)
            np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)


class CachesADifferentiatedValue(Benchmark):
    def fun(self, x):
        z = np.tanh(x)
        self.cache = z
        return np.sum(z**2)


class AddsToAnArray(Benchmark):
    def __init__(self):
        super().__init__()
        self.running = np.zeros(3)

    def fun(self, x):
        self.running += 1.0
        return np.sum(x**2)


class NewAttributeInALoop(Benchmark):
    def fun(self, x):
        for k in range(x.shape[0]):
            self.last = k
        return np.sum(x**2)


def test_a_differentiated_value_written_into_the_object_is_refused_located():
    obj = CachesADifferentiatedValue()
    with pytest.raises(UnsupportedSyntaxError) as error:
        value_and_grad(obj.fun)(np.ones(3))
    message = "the value written into self.cache must not depend on a differentiated value"
    assert error.value.message == message
    assert error.value.location.text.strip() == "self.cache = z"
    assert not hasattr(obj, "cache")


def test_plus_equals_on_an_array_attribute_is_refused():
    """Python's ``+=`` changes the array in place; the compiled code does not."""
    obj = AddsToAnArray()
    with pytest.raises(ArgumentError, match="change that array in place"):
        value_and_grad(obj.fun)(np.ones(3))
    np.testing.assert_array_equal(obj.running, np.zeros(3))


def test_a_new_attribute_set_in_a_loop_is_refused_located():
    with pytest.raises(UnsupportedSyntaxError) as error:
        value_and_grad(NewAttributeInALoop().fun)(np.ones(3))
    assert "new attribute self.last inside a loop" in error.value.message
    assert error.value.location.text.strip() == "self.last = k"


class WeightedLeastSquares:
    def fun(self, x, *args):
        A, b = args[0], args[1]
        weights = args[2] if len(args) > 2 else np.ones(b.shape[0])
        if len(args) > 3:
            scale = args[3]
        else:
            scale = 1.0
        return np.sum(weights * (A @ x - b) ** 2) * scale


@pytest.mark.parametrize("extra", [0, 1, 2])
def test_a_test_known_at_the_call_chooses_its_arm(extra):
    """``len(args) > 2`` is known at the call: the arm whose reads are out of range
    is never compiled."""
    A, b, x = RNG.normal(size=(3, 2)), RNG.normal(size=3), RNG.normal(size=2)
    args = (A, b, np.arange(1.0, 4.0), 0.5)[: 2 + extra]
    fun = WeightedLeastSquares().fun
    twin = autograd_twin(WeightedLeastSquares.fun)
    for _ in range(3):
        value, gradient = value_and_grad(fun)(x, *args)
        np.testing.assert_allclose(value, fun(x, *args))
        numeric = central_difference(lambda v: fun(v, *args), [x], 0)
        np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-7)
        auto = autograd.grad(lambda v: twin(None, v, *args))(x)
        np.testing.assert_allclose(gradient, auto, rtol=1e-10)


def dropout(x, param):
    if "seed" in param:
        np.random.seed(param["seed"])
    mask = (np.random.rand(*x.shape) < param["p"]) / param["p"]
    return np.sum(np.tanh(x * mask))


def reseeded_each_row(x, seeds):
    total = 0.0
    for k in range(x.shape[0]):
        np.random.seed(seeds[k])
        total = total + np.sum(np.sin(x[k]) * np.random.rand(x.shape[1]))
    return total


@pytest.mark.parametrize(
    "fn, other",
    [(dropout, {"seed": 3, "p": 0.5}), (reseeded_each_row, [4, 5, 6])],
)
def test_seeding_the_random_state_in_a_branch_or_a_loop_runs_as_in_python(fn, other):
    x = RNG.normal(size=(3, 4))
    twin = autograd_twin(fn)
    for _ in range(3):
        value, gradient = value_and_grad(fn, wrt="x")(x, other)
        np.testing.assert_allclose(value, fn(x, other))
        numeric = central_difference(lambda v: fn(v, other), [x], 0)
        np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-7)
        auto = autograd.grad(lambda v: twin(v, other))(x)
        np.testing.assert_allclose(gradient, auto, rtol=1e-10)
