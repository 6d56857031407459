"""What loops keep for the backward (the peak memory of loops over scalars).

Two savings, each checked against central differences (and autograd where it
applies) and against the general pair, which keeps everything on the stack:

- a value an iteration reads out of a parameter at the loop's index (``x[i]``) is
  read again by the backward's replay instead of being pushed (every pair);
- in a pair specialized on shapes and dtypes, the numbers of known dtype a counted
  loop (``for i in range(n)`` at the top level) saves go in per-iteration arrays
  (``iteration_slots``), walked back in the replay; a loop nested in another, a
  ``while`` loop, arrays and Python numbers stay on the stack, and loops with
  ``break``/``continue`` are not specialized at all.
"""

from __future__ import annotations

import array_api_strict as xs
import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, value_and_grad
from autodiff_tutor.compiler.pipeline import compile_derivative
from autodiff_tutor.compiler.specialize.probe import guard_key
from autodiff_tutor.errors import NoDerivativeRuleError


def scalar_loop(x):
    s = 0.0  # a Python float, then a float64 numpy scalar: one dtype in the slots
    for i in range(x.shape[0]):
        s = s * np.cos(x[i]) + x[i] * x[i]
    return s


def first_n(x, n):
    s = 0.0
    for i in range(n):  # the trip count is an argument: a key of its own
        s = s * np.cos(x[i]) + x[i] * x[i]
    return s


def row_products(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        t = np.dot(X[i], w)  # a float64 number per row
        s = s + t * t
    return s


def over_rows(X, w):
    s = 0.0
    for row in X:  # rows of an array: the row read again, a number per row in slots
        s = s + np.sin(np.sum(row * w))
    return s


def signs(x):
    s = 0.0
    for i in range(x.shape[0]):
        b = x[i] > 0  # a bool numpy scalar the backward reads
        s = s + np.where(b, x[i], 0.5 * x[i]) * x[i]  # np.where: a 0-d array, the stack
    return s


def counts(X):
    s = 0.0
    for i in range(X.shape[0]):
        c = np.sum(X[i] > 0)  # an int64 numpy scalar the backward reads
        s = s + c * X[i, 0] * X[i, 1]
    return s


def phases(x):
    s = 0.0
    for i in range(x.shape[0]):
        z = np.exp(x[i] * 1j) * x[i]  # complex128 numpy scalars the backward reads
        s = s + np.abs(z * z + 1.0)
    return s


def nested(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i):  # the inner loop's values stay on the stack
            s = s + np.cos(x[i] * x[j])
        s = s * np.sin(x[i])
    return s


def neighbours(x):
    s = 0.0
    for i in range(x.shape[0] - 1):  # two reads of x per iteration: no first write
        s = s + np.sin(x[i] * x[i + 1])
    return s


def sine_carried(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = np.sin(s) + x[i]  # the backward reads s inside a call: it stays on the stack
    return s


def stops_early(x):
    s = 0.0
    for i in range(x.shape[0]):
        if s > 3.0:
            break
        s = s + x[i] * x[i]
    return s


def skips(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        s = s + np.sin(x[i]) * s + x[i]
    return s


def halve_then_sum(x):
    y = x
    while np.sum(y * y) > 1.0:  # a count the values decide: the stack
        y = 0.5 * y * np.cos(y)
    s = 0.0
    for i in range(y.shape[0]):  # a counted loop after it: slots
        s = s * np.cos(y[i]) + y[i] * x[i]
    return s


def index_under_while(x):
    s = 0.0
    for _ in range(x.shape[0]):  # the loop variable is '_'...
        y = x[_] * 1.0
        k = 0
        while k < 2:  # ...and a while loop's replay counts with a name of its own
            s = s + y * x[_]
            k = k + 1
    return s


def _specialized(compiled, wrt, args):
    return compiled.derivative(wrt).specializations.get(guard_key(args))


def _run(fn, args, wrt=0):
    """The general pair's gradients (first call) and the specialized pair's (second
    call, checked to run), each against central differences; the specialized pair."""
    compiled = differentiable(fn)
    both = value_and_grad(compiled, wrt=wrt)
    positions = wrt if isinstance(wrt, list) else [wrt]
    expected = [central_difference(fn, args, p) for p in positions]
    results = []
    for _ in range(3):
        value, gradients = both(*args)
        gradients = gradients if isinstance(wrt, list) else (gradients,)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for g, e in zip(gradients, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
        results.append(gradients)
    for general, special in zip(results[0], results[2], strict=True):
        np.testing.assert_allclose(special, general, rtol=1e-13, atol=1e-15)
        assert special.dtype == general.dtype
    return _specialized(compiled, wrt, args)


RNG = np.random.default_rng(7)


@pytest.mark.parametrize(
    "fn, args, dtypes",
    [
        (scalar_loop, (RNG.normal(size=9),), ["float64", "float64"]),
        (row_products, (RNG.normal(size=(5, 3)), RNG.normal(size=3)), ["float64"]),
        (over_rows, (RNG.normal(size=(5, 3)), RNG.normal(size=3)), ["float64"]),
        (signs, (RNG.normal(size=8),), ["bool"]),
        (counts, (RNG.normal(size=(6, 3)),), ["int64", "float64"]),
    ],
)
def test_numbers_of_counted_loops_go_in_slots_with_right_gradients(fn, args, dtypes):
    pair = _run(fn, args)
    assert pair is not None, "the specialized pair did not run"
    made = [line.split("'")[1] for line in pair.forward_source.splitlines() if "slots(" in line]
    assert sorted(made) == sorted(dtypes)
    if fn is not signs:
        assert "Stack()" not in pair.forward_source and "stack.pop" not in pair.backward_source
    assert "zip(reversed(t1)" in pair.backward_source
    for position in range(len(args)):
        if fn is not signs:  # np.where: autograd has no rule for a scalar condition
            expected = autograd_gradient(fn, args, position)
            np.testing.assert_allclose(_gradient(fn, args, position), expected, rtol=1e-10)


def _gradient(fn, args, position):
    both = value_and_grad(differentiable(fn), wrt=position)
    both(*args)
    return both(*args)[1]


def test_complex_values_in_a_loop_are_refused_by_both_pairs():
    # gradients through complex values are refused (tests/test_complex_refused.py):
    # the specialized pair, with its complex128 slots, must not skip that refusal
    x = RNG.normal(size=5)
    compiled = differentiable(phases)
    both = value_and_grad(compiled)
    for _ in range(3):
        with pytest.raises(NoDerivativeRuleError, match="complex"):
            both(x)


@pytest.mark.parametrize("n", [0, 1, 4, 9, 4])
def test_the_trip_count_changes_between_calls(n):
    x = RNG.normal(size=9)
    compiled = differentiable(first_n)
    both = value_and_grad(compiled)
    for m in (n, 9 - n, n):
        expected = central_difference(first_n, (x, m), 0)
        for _ in range(2):
            value, g = both(x, m)
            np.testing.assert_allclose(value, first_n(x, m), rtol=1e-12)
            np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)
            assert np.all(g[m:] == 0.0)  # elements the loop never read: no gradient
    pair = _specialized(compiled, 0, (x, n))
    assert pair is not None
    if n:  # a probe whose loop never ran knows nothing of its values: the stack
        assert "iteration_slots(t1, 'float64')" in pair.forward_source


def test_a_nested_loop_keeps_its_own_values_on_the_stack():
    pair = _run(nested, (RNG.normal(size=6),))
    assert pair is not None and "iteration_slots" in pair.forward_source
    assert "stack.push((t5,))" in pair.forward_source  # the inner loop's value


def test_a_loop_after_a_while_loop_whose_count_changes():
    compiled = differentiable(halve_then_sum)
    both = value_and_grad(compiled)
    base = np.array([0.3, -0.2, 0.4, 0.1])
    for scale in (2.5, 2.5, 1.0, 40.0, 2.5):  # the while loop runs 1, 1, 0, 3 and 1 times
        x = base * scale
        value, g = both(x)
        np.testing.assert_allclose(value, halve_then_sum(x), rtol=1e-12)
        np.testing.assert_allclose(g, central_difference(halve_then_sum, (x,), 0), rtol=1e-6)
    pair = _specialized(compiled, 0, (base * 2.5,))
    assert pair is not None
    assert "iteration_slots" in pair.forward_source and "Stack()" in pair.forward_source


@pytest.mark.parametrize("fn", [neighbours, sine_carried])
def test_loops_the_rewrites_leave_alone_keep_their_gradients(fn):
    pair = _run(fn, (RNG.normal(size=7),))
    assert pair is not None
    if fn is sine_carried:  # read by np.cos in the backward: a Python float stays one
        assert "stack.push((s_2,))" in pair.forward_source
    else:  # x[i] and x[i + 1] both add into d_x: adding stays adding
        assert "d_x[i] +=" in pair.backward_source


@pytest.mark.parametrize("fn", [stops_early, skips])
def test_loops_with_break_or_continue_run_the_general_pair(fn):
    assert _run(fn, (RNG.normal(size=8),)) is None


def test_a_float32_loop_keeps_float32_gradients():
    x = RNG.normal(size=6).astype(np.float32)
    compiled = differentiable(scalar_loop)
    both = value_and_grad(compiled)
    general, special = both(x)[1], both(x)[1]
    assert special.dtype == general.dtype == np.float32
    np.testing.assert_array_equal(special, general)
    expected = central_difference(scalar_loop, (x.astype(np.float64),), 0)
    np.testing.assert_allclose(special, expected, rtol=1e-4, atol=1e-4)
    pair = _specialized(compiled, 0, (x,))
    assert "'float32'" in pair.forward_source
    assert "stack.push((s_2,))" in pair.forward_source  # 0.0, then float32: not one dtype


def test_values_read_from_a_parameter_are_read_again_not_pushed():
    derivative = compile_derivative(scalar_loop, ["x"])
    assert "t2 = x[i]" in derivative.backward_source
    (push,) = [line for line in derivative.forward_source.splitlines() if "stack.push" in line]
    assert "t3" in push and "t2" not in push


def test_a_while_loop_under_a_loop_over_underscore_keeps_its_index():
    x = RNG.normal(size=4)
    value, g = value_and_grad(index_under_while)(x)
    np.testing.assert_allclose(g, central_difference(index_under_while, (x,), 0), rtol=1e-6)
    assert "for _1 in range(count)" in compile_derivative(index_under_while, ["x"]).backward_source


def products(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s * x[i] + x[i] * x[i]  # operators only: a strict array stays strict
    return s


def test_a_loop_on_a_strict_array_reads_its_elements_again():
    x = np.array([0.3, -1.2, 2.0, 0.5])
    both = value_and_grad(products)
    assert "t2 = x[i]" in compile_derivative(products, ["x"]).backward_source
    for _ in range(2):  # no specialization for a strict array: the general pair, twice
        value, g = both(xs.asarray(x))
        assert type(g) is type(xs.asarray(x))
        expected = central_difference(products, (x,), 0)
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-7, atol=1e-9)
