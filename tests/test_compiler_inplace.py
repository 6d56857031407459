"""Large temporaries updated in place in the specialized pair (specialize.inplace).

``h = np.tanh(X @ W1 + b1)`` becomes ``h = X @ W1; h += b1; np.tanh(h, out=h)`` where
the facts say every step keeps ``h``'s shape and dtype. Checked here: the rewrite and
each of its refusals on small trees, and, end to end, that the rewritten pairs give
the very same numbers as the pairs without the rewrite, and gradients that agree with
central finite differences and autograd (oracles the compiler does not control).
"""

from __future__ import annotations

import ast

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, value_and_grad
from autodiff_tutor.compiler import specialized
from autodiff_tutor.compiler.specialize.inplace import in_place
from benchmarks.workloads import (
    rnn,  # a loop of products and tanh
    rosenbrock,  # slices and a power
)


def _array(*shape, dtype="float64"):
    return ("array", shape, dtype)


FACTS = {
    "X": _array(64, 32),
    "W": _array(32, 64),
    "b": _array(64),
    "A": _array(64, 64),
    "h": _array(64, 64),
    "v": _array(64),
    "i": _array(64, 64, dtype="int64"),
    "s": ("scalar", (), "float64"),
    "f": _array(64, 64, dtype="float32"),
}


def _rewritten(source: str, scope=None, smallest: int = 1) -> str:
    tree = ast.parse(source).body
    scope = {"np": np} if scope is None else scope
    return ast.unparse(in_place(tree, FACTS, scope, smallest))


def test_a_chain_of_fresh_arrays_is_one_array_updated_in_place():
    assert _rewritten("y = np.exp(X @ W - b)") == "y = X @ W\ny -= b\nnp.exp(y, out=y)"


def test_add_and_multiply_swap_a_fresh_right_operand_subtract_and_divide_use_out():
    assert _rewritten("y = A * (h + 1.0)") == "y = h + 1.0\ny *= A"
    assert _rewritten("y = 1 - h * h") == "y = h * h\nnp.subtract(1, y, out=y)"
    assert _rewritten("y = A / (h * h)") == "y = h * h\nnp.divide(A, y, out=y)"
    # no name for numpy in the user's scope: subtract stays an expression
    assert _rewritten("y = 1 - h * h", scope={}) == "y = 1 - h * h"


def test_a_loop_body_is_rewritten_too():
    source = "for t in r:\n    y = np.tanh(h @ A + b)"
    expected = "for t in r:\n    y = h @ A\n    y += b\n    np.tanh(y, out=y)"
    assert _rewritten(source) == expected


@pytest.mark.parametrize(
    "source, why",
    [
        ("y = v * 2.0 + A", "the fresh operand is smaller: it would broadcast in place"),
        ("y = np.tanh(i @ i)", "tanh of integers is float: a cast in place"),
        ("h = np.tanh(A @ h) * h", "the other operand reads the name rebound first"),
        ("y = s * 2.0 + A", "a scalar's fresh result is no array"),
        ("y = unknown(A) + b", "a call that is no ufunc may return its argument"),
        ("y = np.add(A, h) * 2.0", "a ufunc of two inputs: not known to this pass"),
        ("y = A[0:64] + h", "a slice is a view, not fresh"),
        ("y = q @ A + b", "a name without a fact"),
        ("y = A.T", "nothing fresh"),
        ("h = h + A ** 2", "the other operand reads the name the power would be"),
        ("y = np.tanh(f @ f) * s", "a float64 numpy scalar makes float32 float64: a cast"),
    ],
)
def test_refusals_leave_the_statement_as_it_was(source, why):
    assert _rewritten(source) == ast.unparse(ast.parse(source)), why


def test_a_power_is_a_fresh_array_too():
    """``t2 ** 2`` makes a new array: the statement takes it over (rosenbrock's
    ``a = t1 - t2 ** 2``), though the power itself is not updated in place."""
    assert _rewritten("y = A ** 2 + b") == "y = A ** 2\ny += b"
    assert _rewritten("y = A - h ** 2") == "y = h ** 2\nnp.subtract(A, y, out=y)"
    assert _rewritten("y = (A + h) ** 2") == "y = (A + h) ** 2"


def test_a_python_number_keeps_float32():
    assert _rewritten("y = np.tanh(f @ f) * 2.0") == "y = f @ f\nnp.tanh(y, out=y)\ny *= 2.0"


def test_small_arrays_keep_their_one_line():
    assert _rewritten("y = np.tanh(h @ A + b)", smallest=64 * 64 + 1) == "y = np.tanh(h @ A + b)"


# -- end to end -------------------------------------------------------------------------


def mlp(W1, b1, W2, X):
    h = np.tanh(X @ W1 + b1)
    return np.sum((1.0 - h * h) @ W2)


def exp_over(x, w):
    return np.sum(np.exp(x * w - 1.0) / (x * x + 1.0))


def _mlp_args(rng, batch):
    return (
        rng.normal(size=(3, 5)) * 0.5,
        rng.normal(size=5),
        rng.normal(size=(5, 2)),
        rng.normal(size=(batch, 3)),
    )


def _rnn_args(rng, batch):
    return (
        rng.normal(size=(4, 4)) * 0.5,
        rng.normal(size=(2, 4)),
        rng.normal(size=4),
        rng.normal(size=(3, batch, 2)),
        rng.normal(size=(batch, 4)) * 0.1,
    )


def _exp_args(rng, batch):
    return (rng.normal(size=(batch, 3)), rng.normal(size=3))


def _rosenbrock_args(rng, batch):
    return (rng.uniform(-1.5, 1.5, 3 * batch),)


CASES = [
    (mlp, _mlp_args, [0, 1, 2], "np.tanh(h, out=h)"),
    (rnn, _rnn_args, [0, 1, 2], "np.tanh(h_3, out=h_3)"),
    (exp_over, _exp_args, [0, 1], "out="),
    (rosenbrock, _rosenbrock_args, [0], "a = t2 ** 2\n    np.subtract(t1, a, out=a)"),
]


def _pair(fn, wrt, args):
    derivative = differentiable(fn).derivative(wrt)
    derivative.specializations.clear()
    return specialized.specialized_pair(derivative, args)


def _run(pair, args):
    out, memory = pair.forward(*args)
    return out, pair.backward(out.dtype.type(1), memory)  # the seed 1 of the output's dtype


@pytest.mark.parametrize("fn, make, wrt, expected", CASES)
def test_small_threshold_same_numbers_and_finite_differences(fn, make, wrt, expected, monkeypatch):
    args = make(np.random.default_rng(0), 6)
    before = _run(_pair(fn, wrt, args), args)
    monkeypatch.setattr(specialized, "IN_PLACE_FROM", 1)  # every array in place
    pair = _pair(fn, wrt, args)
    assert expected in pair.forward_source + pair.backward_source
    value, gradients = _run(pair, args)
    assert value == before[0]
    for position, g, g_before in zip(wrt, gradients, before[1], strict=True):
        np.testing.assert_array_equal(g, g_before)  # bit for bit
        expected_g = central_difference(fn, args, position)
        np.testing.assert_allclose(g, expected_g, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn, make, wrt, expected", CASES)
def test_large_arrays_through_value_and_grad_agree_with_autograd(fn, make, wrt, expected):
    rng = np.random.default_rng(1)
    args = make(rng, 4096)  # 4096 x 4 or more elements: past IN_PLACE_FROM
    both = value_and_grad(fn, wrt=wrt)
    for _ in range(3):  # the general pair, then the specialized one
        value, gradients = both(*args)
    pair = (
        differentiable(fn).derivative(wrt).specializations[tuple((a.shape, a.dtype) for a in args)]
    )
    assert expected in pair.forward_source + pair.backward_source
    assert np.isclose(value, fn(*args), rtol=1e-12)
    for position, g in zip(wrt, gradients, strict=True):
        np.testing.assert_allclose(g, autograd_gradient(fn, args, position), rtol=1e-10)


def scaled(x, w):
    # float32 arrays, a float32 numpy scalar, Python floats: float32 throughout
    s = np.sum(w * w)
    return np.sum(np.tanh(x * w) * s + x * 0.5)


def test_float32_arguments_are_updated_in_place_in_float32(monkeypatch):
    rng = np.random.default_rng(3)
    args = (rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=3).astype(np.float32))
    before = _run(_pair(scaled, [0, 1], args), args)
    monkeypatch.setattr(specialized, "IN_PLACE_FROM", 1)
    pair = _pair(scaled, [0, 1], args)
    assert "out=" in pair.forward_source  # np.tanh(x * w) stays float32: in place
    value, gradients = _run(pair, args)
    assert value == before[0]
    for position, g, g_before in zip([0, 1], gradients, before[1], strict=True):
        np.testing.assert_array_equal(g, g_before)
        assert g.dtype == np.float32
        expected = autograd_gradient(scaled, tuple(a.astype(np.float64) for a in args), position)
        np.testing.assert_allclose(g, expected, rtol=2e-4, atol=1e-5)


like = np.tanh  # a user's global named like a runtime helper (given back at emission)


def clashing(W, b, X):
    h = like(X @ W + b)
    return np.sum(1.0 - h * h)


def test_a_ufunc_under_a_helper_name_is_updated_in_place_under_the_users_name(monkeypatch):
    rng = np.random.default_rng(4)
    args = (rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(6, 3)))
    before = _run(_pair(clashing, [0, 1], args), args)
    monkeypatch.setattr(specialized, "IN_PLACE_FROM", 1)
    pair = _pair(clashing, [0, 1], args)
    assert "like(h, out=h)" in pair.forward_source
    value, gradients = _run(pair, args)
    assert value == before[0]
    for position, g, g_before in zip([0, 1], gradients, before[1], strict=True):
        np.testing.assert_array_equal(g, g_before)
        expected = central_difference(clashing, args, position)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)
