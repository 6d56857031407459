"""How tracing runs the user's code: a copy of the function whose globals give
tracing-aware numpy, scipy and math, never a change to numpy itself. What the copy
sees (buffers, conversions, scipy's rules, ``X.dot(W)`` of a plain argument) is
checked against central differences; what must stay as Python and numpy do it (global
writes, globals read live, plain arguments written in place, other code seeing plain
numpy) is checked directly."""

import threading

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference
from scipy.stats import norm

from autodiff_tutor import grad
from autodiff_tutor.errors import TracingError
from autodiff_tutor.tracing import evaluate, gradient, traced, value_and_gradient

COUNT = 0
SCALE = 2.0
NUMPY_ZEROS = np.zeros


def counted(x):
    global COUNT
    COUNT += 1
    return np.sum(x * x)


def scaled(x):
    return SCALE * np.sum(x**2)


def made_elsewhere(n):
    return np.zeros(n)


def test_numpy_itself_is_unchanged_while_a_trace_runs():
    """Other threads, and code tracing does not run, see numpy's own functions."""
    seen = {}

    def other_thread():
        seen["zeros"] = type(np.zeros(2)).__name__

    def fun(x):
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        out = np.zeros(2)
        out[0] = x
        return gradient(np.sum(out * 3.0), x), type(out).__name__

    g, kind = evaluate(fun, traced(1.5))
    assert g == 3.0 and kind == "Traced"
    assert seen["zeros"] == "ndarray" and np.zeros is NUMPY_ZEROS


def test_a_function_that_assigns_a_global_runs_as_it_is():
    """Its write reaches the module (it is not run against a copy of the globals)."""
    before = COUNT
    value, _ = value_and_gradient(counted, np.ones(2))
    assert COUNT == before + 1 and value == 2.0


def test_globals_are_read_as_they_are_at_each_call():
    global SCALE
    SCALE = 2.0
    first = value_and_gradient(scaled, np.ones(2))[1]
    SCALE = 5.0
    second = value_and_gradient(scaled, np.ones(2))[1]
    SCALE = 2.0
    np.testing.assert_allclose(first, [4.0, 4.0])
    np.testing.assert_allclose(second, [10.0, 10.0])


def squashed(x, squash=np.tanh, *, scale=1.0):
    return scale * np.sum(squash(x))


def test_defaults_are_read_as_they_are_at_each_call():
    """A default rebound between calls (``f.__defaults__ = ...``) is the one a later
    trace runs with, in the function traced and in a helper it calls."""
    x = np.array([0.3, -0.7])
    saved, saved_keywords = squashed.__defaults__, squashed.__kwdefaults__
    try:
        for fn in (squashed, lambda x: 2.0 * squashed(x)):
            squashed.__defaults__, squashed.__kwdefaults__ = saved, saved_keywords
            gradient_of = lambda x, fn=fn: value_and_gradient(fn, x)[1]  # noqa: E731
            gradient_of(x)
            squashed.__defaults__ = (np.sin,)
            np.testing.assert_allclose(gradient_of(x), central_difference(fn, [x], 0), rtol=1e-6)
            squashed.__kwdefaults__ = {"scale": 3.0}
            np.testing.assert_allclose(gradient_of(x), central_difference(fn, [x], 0), rtol=1e-6)
    finally:
        squashed.__defaults__, squashed.__kwdefaults__ = saved, saved_keywords


def test_a_buffer_no_traced_value_reached_is_returned_plain():
    out = evaluate(lambda x: (np.ones(2) * 2, made_elsewhere(3)), traced(1.0))
    assert [type(o).__name__ for o in out] == ["ndarray", "ndarray"]


def test_a_plain_argument_written_in_place_changes_the_callers_array():
    """Writes of plain values into a plain argument reach the caller's array, as in
    numpy; a traced value written into it is refused (the caller's array could not
    hold the trace)."""
    data = np.zeros(3)

    def fill(x, out):
        out[0] = 7.0
        return gradient(np.sum(x * out), x)

    np.testing.assert_allclose(evaluate(fill, traced(np.ones(3)), data), [7.0, 0.0, 0.0])
    assert data[0] == 7.0

    def leak(x, out):
        out[1] = x[0]
        return np.sum(out)

    with pytest.raises(TracingError, match="plain"):
        evaluate(leak, traced(np.ones(3)), np.zeros(3))


def dot_of_rows(w, X):
    total = 0.0
    for i in range(X.shape[0]):
        total = total + np.tanh(X[i].dot(w)) ** 2
    return total + X.T.dot(X.dot(w)).sum()


def test_dot_of_a_plain_argument_and_its_views_keeps_the_trace():
    rng = np.random.default_rng(3)
    w, X = rng.normal(size=3), rng.normal(size=(4, 3))
    value, g = value_and_gradient(dot_of_rows, w, X)
    assert value == dot_of_rows(w, X)
    np.testing.assert_allclose(g, central_difference(dot_of_rows, [w, X], 0), atol=1e-6)


def frozen_and_default_normals(x):
    d = norm(0.5, 2.0)
    return np.sum(d.logpdf(x)) + d.mean() + np.sum(norm(x[0], 1.0).cdf(x)) + norm.logpdf(x[1])


def test_frozen_distributions_and_scipys_defaults_go_to_the_rules():
    x = np.array([0.3, -0.2])
    _, g = value_and_gradient(frozen_and_default_normals, x)
    np.testing.assert_allclose(g, central_difference(frozen_and_default_normals, [x], 0), atol=1e-6)


def stacked_by_mean(a, b):
    return np.mean([np.sum(a**2), np.max(b)]) + np.sum(np.array([a, b]) ** 2)


def test_a_list_of_traced_values_given_as_an_array_is_stacked():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=3), rng.normal(size=3)
    _, (ga, gb) = value_and_gradient(stacked_by_mean, a, b, wrt=[0, 1])
    np.testing.assert_allclose(ga, autograd_gradient(stacked_by_mean, [a, b], 0), rtol=1e-10)
    np.testing.assert_allclose(gb, autograd_gradient(stacked_by_mean, [a, b], 1), rtol=1e-10)


def relu(z):
    return np.maximum(z, 0.0)


def softplus(z):
    return np.log1p(np.exp(z))


def layer(x, activation=relu):
    scale = 2.0 if activation is relu else 3.0  # a choice made by identity
    return np.sum(scale * activation(x))


def test_functions_compared_by_identity_keep_their_meaning():
    """A default function and one passed to evaluate are the copies the function's
    globals give: ``activation is relu`` is what it is in Python."""
    x = np.array([0.5, -1.0, 2.0])
    for args in ((), (relu,), (softplus,)):
        value, g = value_and_gradient(layer, x, *args)
        assert value == layer(x, *args)
        want = central_difference(lambda v, args=args: layer(v, *args), [x], 0)
        np.testing.assert_allclose(g, want, atol=1e-6)


def pooled(x, reduce=np.sum):
    scale = 1.0 if reduce is np.sum else 10.0  # numpy's function chosen by identity
    return scale * reduce(x**2)


def test_numpy_functions_compared_by_identity_keep_their_meaning():
    x = np.array([0.5, -1.0, 2.0])
    for args in ((), (np.sum,), (np.mean,)):
        value, g = value_and_gradient(pooled, x, *args)
        assert value == pooled(x, *args)
        want = central_difference(lambda v, args=args: pooled(v, *args), [x], 0)
        np.testing.assert_allclose(g, want, atol=1e-6)


def newton_like_loss(a):
    return np.sum(np.sin(a) * a + 0.1 * a**3)


def steps_with_the_compilers_grad(w):
    for _ in range(2):
        w = w - grad(newton_like_loss)(w) / 4.0
    return np.sum(w)


def test_the_compilers_grad_inside_a_traced_function_is_refused_at_its_call():
    """Inside tracing, the user's functions run against tracing's numpy, which the
    compiler cannot read: ``grad(f)`` there is refused at the user's line with the
    way to do it in tracing, never a TypeError from inside the compiler."""
    with pytest.raises(TracingError, match="cannot compile 'newton_like_loss'") as raised:
        value_and_gradient(steps_with_the_compilers_grad, np.array([0.3, 0.5]))
    assert raised.value.location.text.strip() == "w = w - grad(newton_like_loss)(w) / 4.0"
    assert "higher_derivatives=True" in raised.value.hint
