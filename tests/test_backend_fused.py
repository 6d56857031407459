"""The fused backend (``backend="numba"``): a specialized pair lowered into loops.

Each program here is run by the fused kernel (it must be lowered: the note says so)
and checked against the numpy backend and central differences; what cannot be
lowered runs as numpy code, with the reason in ``show``; and without numba the
backend is refused with a hint naming the extra. No timing is asserted.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, grad, value_and_grad
from autodiff_tutor.compiler.fused import build
from autodiff_tutor.errors import BackendUnavailableError

needs_numba = pytest.mark.skipif(
    build.numba_or_none() is None, reason="numba (the [fused] extra) is not installed"
)


def rosenbrock(x):
    a = x[1:] - x[:-1] ** 2
    b = 1.0 - x[:-1]
    return np.sum(100.0 * a * a + b * b)


def chain(x, y):
    u = np.tanh(x * y) + np.exp(-x)
    v = u[2:] - 2.0 * u[1:-1] + u[:-2]
    return np.sum(v * v) + np.sum(np.log(1.0 + y * y))


def horner(coefficients, x):
    value = 0.0
    for c in coefficients:
        value = value * x + c
    return np.sum(value)


def damped_steps(c, x):
    s = 1.0
    for k in range(c.shape[0]):
        s = np.sin(s * c[k]) + x * x
    return np.sum(s[1:] - s[:-1]) + np.sum(s * s)


def started_from_a_sum(c, x):
    s = np.sum(x) * 0.1
    for ci in c:
        s = s * ci + x
    return np.sum(s * s)


def affine(W, b, x):
    return np.sum(np.tanh(x @ W + b))


def narrow_layer(W, b, x):
    return np.sum(np.tanh(x @ W + b) ** 2)


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return -np.sum(Y * (z - lse)) / X.shape[0]


def relu_softmax(W, V, X, Y):
    h = np.maximum(X @ W, 0.0)
    p = np.exp(h @ V - np.max(h @ V, axis=1, keepdims=True))
    p = p / np.sum(p, axis=1, keepdims=True)
    return -np.sum(Y * np.log(p)) + np.sum(h.T * h.T)


def row_and_column_means(W, X):
    z = X @ W
    s = np.sum(z, axis=1)
    c = np.mean(z, axis=0)
    return np.sum(np.tanh(s)) + np.sum(np.abs(c)) + np.mean(z * z)


def cube(x):
    return np.sum(np.tanh(x))


def rnn(Wh, Wx, b, xs, h0):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx + b)
        total = total + np.sum(h * h)
    return total


def leaky_sine_state(W, U, xs):
    h = np.tanh(xs[0] @ U)
    for t in range(xs.shape[0]):
        h = 0.5 * h + np.sin(xs[t] @ U + h @ W)
    return np.sum(h) + np.sum(W * W)


def gated_state(U, V, W, xs):
    h = xs[0] @ U
    total = 0.0
    for t in range(xs.shape[0]):
        gate = 1.0 / (1.0 + np.exp(-(xs[t] @ V)))
        h = gate * (h @ W) + (1.0 - gate) * (xs[t] @ U)
        total = total + np.sum(h * gate)
    return total


def relu_state_mean(W, U, xs, h0):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.maximum(h @ W + xs[t] @ U, 0.0)
        total = total + np.mean(h)
    return total


def _state_args(rng, steps, batch, d, h):
    return (
        rng.normal(0, 0.5 / np.sqrt(h), (h, h)),
        rng.normal(0, 1 / np.sqrt(d), (d, h)),
        rng.normal(size=(steps, batch, d)),
        rng.normal(0, 0.3, (batch, h)),
    )


def _rnn_args(rng, steps, batch, d, h):
    return (
        rng.normal(0, 0.5 / np.sqrt(h), (h, h)),
        rng.normal(0, 1 / np.sqrt(d), (d, h)),
        rng.normal(0, 0.1, h),
        rng.normal(size=(steps, batch, d)),
        rng.normal(size=(batch, h)),
    )


def _relu_softmax_args(rng):
    Y = np.eye(3)[[0, 2, 1, 2, 0]]
    return (*(rng.normal(size=s) for s in [(4, 6), (6, 3), (5, 4)]), Y)


def wide_mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return -np.sum(Y * (z - lse))


def _wide_mlp_args(rng):
    """A hidden layer of 2560 values (``VECTORIZED_FROM`` or more): numpy computes its tanh."""
    Y = np.eye(3)[rng.integers(0, 3, 40)]
    return (*(rng.normal(size=s) for s in [(4, 64), 64, (64, 3), 3, (40, 4)]), Y)


def _mlp_args(rng):
    Y = np.eye(3)[[0, 2, 1, 2, 0]]
    return (*(rng.normal(size=s) for s in [(4, 6), 6, (6, 3), 3, (5, 4)]), Y)


def _run(fn, args, wrt):
    """Value and gradients by the fused backend (third call: specialized and lowered
    at the second) and by the numpy backend, and the lowering's note."""
    fused = value_and_grad(fn, wrt=wrt, backend="numba")
    for _ in range(3):
        value, gradients = fused(*args)
    expected_value, expected = value_and_grad(fn, wrt=wrt)(*args)
    (pair,) = differentiable(fn, backend="numba").derivative(wrt).specializations.values()
    return (value, gradients), (expected_value, expected), pair.fused_note


@needs_numba
@pytest.mark.parametrize(
    ("fn", "make", "wrt"),
    [
        (rosenbrock, lambda rng: (rng.normal(size=9),), [0]),
        (chain, lambda rng: (rng.normal(size=7), rng.normal(size=7)), [0, 1]),
        (horner, lambda rng: (rng.normal(size=5), rng.normal(size=3)), [0, 1]),
        (damped_steps, lambda rng: (rng.normal(size=3), rng.normal(size=300)), [0, 1]),
        (
            affine,
            lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(2, 3))),
            [0, 1, 2],
        ),
        (mlp, _mlp_args, [0, 1, 2, 3]),
        (relu_softmax, _relu_softmax_args, [0, 1, 2]),
        (wide_mlp, _wide_mlp_args, [0, 1, 2, 3]),
        (
            row_and_column_means,
            lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=(5, 3))),
            [0, 1],
        ),
        (
            narrow_layer,
            lambda rng: (rng.normal(size=(3, 1)), rng.normal(size=1), rng.normal(size=(1, 3))),
            [0, 1, 2],
        ),
        (rnn, lambda rng: _rnn_args(rng, 5, 4, 3, 6), [0, 1, 2, 3, 4]),
        (rnn, lambda rng: _rnn_args(rng, 3, 8, 5, 32), [0, 1, 2, 4]),
        (
            leaky_sine_state,
            lambda rng: (
                *(rng.normal(0, 0.5, s) for s in [(4, 4), (3, 4)]),
                rng.normal(size=(6, 2, 3)),
            ),
            [0, 1, 2],
        ),
        (
            gated_state,
            lambda rng: (
                *(rng.normal(0, 0.5, s) for s in [(3, 5), (3, 5), (5, 5)]),
                rng.normal(size=(4, 2, 3)),
            ),
            [0, 1, 2, 3],
        ),
        (relu_state_mean, lambda rng: _state_args(rng, 3, 2, 3, 4), [0, 1, 2, 3]),
        (relu_state_mean, lambda rng: _state_args(rng, 3, 8, 5, 40), [0, 1, 2]),
    ],
    ids=[
        "rosenbrock",
        "elementwise_chain_with_shifts",
        "horner_loop",
        "loop_result_shifted",
        "matrix_product_and_bias",
        "mlp_log_softmax_by_rows",
        "relu_softmax_and_transposes",
        "mlp_with_numpy_tanh_between_loops",
        "sums_and_means_along_rows_and_columns",
        "matrices_of_one_row_or_column",
        "rnn_small_products_as_loops",
        "rnn_large_products_by_numpy",
        "leaky_sine_state_over_steps",
        "gated_state_reading_the_step_twice",
        "relu_state_and_means_small",
        "relu_state_and_means_large",
    ],
)
def test_lowered_programs_give_the_numpy_gradients(fn, make, wrt):
    """Slices with offsets, elementwise chains, sums and a Python loop over
    elementwise work are lowered, and so are matrices (products, bias rows, sums,
    means and softmax along rows or columns, transposes, one-row matrices); they give
    the numpy backend's value and gradients, which central differences confirm. So
    are loops over the leading axis of a three-dimensional argument with matrix
    products inside (recurrent states), small products as loops, large ones numpy's."""
    args = make(np.random.default_rng(3))
    (value, gradients), (expected_value, expected), note = _run(fn, args, wrt)
    assert note == "fused by numba"
    assert np.isclose(value, expected_value, rtol=1e-12)
    assert type(value) is np.float64
    for index, g, e in zip(wrt, gradients, expected, strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(g, central_difference(fn, args, index), rtol=1e-6, atol=1e-6)


def ratio(x, y):
    return np.sum(x / y)


@needs_numba
def test_a_division_by_zero_is_inf_as_in_numpy():
    """A kernel divides as numpy does: by zero it gives inf (and its gradient inf and
    nan), not a ZeroDivisionError."""
    args = (np.array([1.0, -2.0, 3.0]), np.array([2.0, 0.0, 4.0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        (value, gradients), (expected_value, expected), note = _run(ratio, args, [0, 1])
    assert note == "fused by numba"
    assert value == expected_value == -np.inf
    for g, e in zip(gradients, expected, strict=True):
        np.testing.assert_array_equal(g, e)


@needs_numba
def test_what_cannot_be_lowered_runs_as_numpy_code_and_says_why(capsys):
    """An array of three dimensions is not lowered: the numpy pair runs, right,
    and ``show(backend="numba")`` says it is not fused and why."""
    args = (np.random.default_rng(0).normal(size=(2, 3, 4)),)
    (value, gradients), (expected_value, expected), note = _run(cube, args, [0])
    assert note.startswith("not fused (") and "3 dimensions" in note
    assert value == expected_value
    for g, e in zip(gradients, expected, strict=True):
        np.testing.assert_array_equal(g, e)
    differentiable(cube, backend="numba").show(wrt=[0], backend="numba")
    assert "not fused" in capsys.readouterr().out


@needs_numba
def test_a_loop_started_from_a_sum_is_not_lowered():
    """The loop starts from one number made from all of ``x``: numpy's gradient of
    that start is a sum over the elements, which a loop over elements holds as each
    element's share. It is refused (said in the note), and the numpy pair's gradient,
    checked by central differences, is what comes back."""
    rng = np.random.default_rng(5)
    args = (rng.normal(size=3), rng.normal(size=6))
    (value, gradients), (expected_value, expected), note = _run(started_from_a_sum, args, [0, 1])
    assert note.startswith("not fused (") and "shape changed in a loop" in note
    assert value == expected_value
    for index, g, e in zip([0, 1], gradients, expected, strict=True):
        np.testing.assert_array_equal(g, e)
        np.testing.assert_allclose(
            g, central_difference(started_from_a_sum, args, index), rtol=1e-6, atol=1e-6
        )


@needs_numba
def test_show_prints_the_fused_loop_beside_the_numpy_pair(capsys):
    """The kernel is shown as one loop with index shifts and scalar temporaries,
    each line naming the user's line, after the numpy pair it was lowered from."""
    both = grad(rosenbrock, backend="numba")
    x = np.linspace(-1.0, 1.0, 6)
    both(x), both(x)
    differentiable(rosenbrock, backend="numba").show(backend="numba")
    shown = capsys.readouterr().out
    assert shown.index("def rosenbrock_backward") < shown.index("def rosenbrock_fused(x):")
    assert "for i in range(n - 1):" in shown
    assert "a = x[i + 1] - x[i] * x[i]" in shown
    # each element of the gradient stored once: what x[1:] adds is carried
    assert "d_x[i] = d_x_next + d_x_0" in shown and "d_x_next = d_x_1" in shown
    assert "d_x[n - 1] = d_x_next" in shown
    assert "# line " in shown.split("def rosenbrock_fused")[1]


def test_without_numba_the_backend_is_refused_with_the_extra(monkeypatch):
    """Where numba is not installed, asking for it raises an error that is also an
    ImportError, located at the call, whose hint names the extra to install."""
    monkeypatch.setattr(build, "numba_or_none", lambda: None)
    with pytest.raises(ImportError) as raised:
        value_and_grad(rosenbrock, backend="numba")
    error = raised.value
    assert isinstance(error, BackendUnavailableError)
    assert "autodiff_tutor[fused]" in error.hint
    assert error.location is not None and error.location.filename == __file__


def test_an_unknown_backend_is_refused():
    """A backend name that is not one of the backends is refused, naming them."""
    with pytest.raises(BackendUnavailableError, match="unknown backend 'jax'") as raised:
        differentiable(rosenbrock, backend="jax")
    assert "'numba'" in raised.value.hint


@needs_numba
def test_the_decorator_takes_the_backend():
    """``@differentiable(backend="numba")`` decorates as ``differentiable(f,
    backend="numba")`` does: its specialized pair is the fused kernel, and its
    gradient is the numpy backend's, which central differences confirm."""

    @differentiable(backend="numba")
    def smooth(x):
        return np.sum(np.tanh(x[1:] - x[:-1]) ** 2)

    x = np.random.default_rng(5).normal(size=8)
    both = value_and_grad(smooth)
    for _ in range(3):  # specialized and lowered at the second call
        value, gradient = both(x)
    (pair,) = smooth.derivative(0).specializations.values()
    assert pair.fused_note == "fused by numba"
    expected_value, expected = value_and_grad(smooth.fn)(x)
    assert np.isclose(value, expected_value, rtol=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(gradient, central_difference(smooth.fn, (x,), 0), rtol=1e-6)


def state_started_from_a_number(W, xs):
    h = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(h + xs[t] @ W)
    return np.sum(h * h)


@needs_numba
def test_a_state_whose_shape_changes_in_the_loop_is_not_lowered():
    """The state is a number before the loop and a matrix after its first step: the
    loop's body, written once, cannot be for both. It is refused (said in the note),
    and the numpy pair's gradients, checked by central differences, come back."""
    rng = np.random.default_rng(7)
    args = (rng.normal(size=(3, 4)), rng.normal(size=(5, 2, 3)))
    fn = state_started_from_a_number
    (value, gradients), (expected_value, expected), note = _run(fn, args, [0, 1])
    assert note.startswith("not fused (") and "changed in a loop" in note
    assert np.isclose(value, expected_value, rtol=1e-12)
    for index, g, e in zip([0, 1], gradients, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(g, central_difference(fn, args, index), rtol=1e-6, atol=1e-6)


@needs_numba
def test_a_lowered_loop_takes_arguments_of_another_memory_layout():
    """The kernel is compiled for the first call's arrays; a later call with arrays of
    the same shapes laid out otherwise (a transposed copy, a strided view) gives the
    numpy backend's gradients too."""
    rng = np.random.default_rng(8)
    args = _rnn_args(rng, 4, 3, 2, 5)
    fused = value_and_grad(rnn, wrt=[0, 1, 2], backend="numba")
    for _ in range(2):
        fused(*args)
    Wh, Wx, b, xs, h0 = args
    other = (
        np.asfortranarray(Wh),
        np.asfortranarray(Wx),
        np.repeat(b, 2)[::2],
        np.asfortranarray(xs),
        np.asfortranarray(h0),
    )
    assert not other[3].flags.c_contiguous and not other[2].flags.contiguous
    value, gradients = fused(*other)
    expected_value, expected = value_and_grad(rnn, wrt=[0, 1, 2])(*args)
    (pair,) = differentiable(rnn, backend="numba").derivative([0, 1, 2]).specializations.values()
    assert pair.fused_note == "fused by numba"
    assert np.isclose(value, expected_value, rtol=1e-12)
    for g, e in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-11, atol=1e-11)
