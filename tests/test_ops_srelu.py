"""SReLU: forward against the piecewise definition, backward against independent oracles.

Oracles: a scalar if/elif implementation of the seeds' definition (forward), autograd
(an independent AD library) and 5-point finite differences in float64 (backward), and
the compiler's derivative of the plain-numpy reference (``srelu_reference``).
"""

from __future__ import annotations

import itertools

import array_api_strict as xps
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from autodiff_tutor.api import differentiable
from autodiff_tutor.errors import DataFormatError
from autodiff_tutor.ops import SReLUFunction, channel_shape, op_vjp, srelu, srelu_reference
from autodiff_tutor.verify import check_op, numerical_gradient

FORMATS = [("BC", (6, 3)), ("SSCB", (3, 4, 2, 5)), ("CB", (4, 7))]


def away_from_kinks(X, *thresholds, gap=1e-2):
    """Move elements of X that are within ``gap`` of a threshold by 3 gaps."""
    for t in thresholds:
        X = np.where(np.abs(X - t) < gap, X + 3 * gap, X)
    return X


def sample(fmt, shape, seed=0, dtype=np.float64):
    """Data plus ordered per-channel thresholds (tl < tr) and slopes."""
    rng = np.random.default_rng(seed)
    pshape = channel_shape(fmt, shape)
    tl = rng.uniform(-1.0, -0.2, pshape)
    tr = rng.uniform(0.2, 1.0, pshape)
    al, ar = rng.uniform(0.0, 1.0, pshape), rng.uniform(0.0, 2.0, pshape)
    X = away_from_kinks(1.5 * rng.standard_normal(shape), tl, tr)
    return tuple(a.astype(dtype) for a in (X, tl, al, tr, ar))


def srelu_by_cases(x, tl, al, tr, ar):
    """The seeds' piecewise definition, one scalar at a time."""
    if x <= tl:
        return tl + al * (x - tl)
    if tl < x < tr:
        return x
    return tr + ar * (x - tr)


@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
def test_forward_matches_the_piecewise_definition(fmt, shape):
    X, *params = sample(fmt, shape)
    Y = srelu(X, *params, fmt=fmt)
    full = [np.broadcast_to(p, shape) for p in params]
    expected = np.vectorize(srelu_by_cases)(X, *full)
    np.testing.assert_array_equal(Y, expected)
    np.testing.assert_array_equal(srelu_reference(X, *params), expected)


def test_forward_at_the_thresholds_follows_the_seeds_intervals():
    tl, al, tr, ar = (np.full((1, 1), v) for v in (-1.0, 0.5, 2.0, 3.0))
    X = np.array([[-1.0], [2.0]])  # exactly on tl (left piece) and on tr (right piece)
    np.testing.assert_array_equal(srelu(X, tl, al, tr, ar, fmt="BC"), [[-1.0], [2.0]])


def crossed_sample(shape=(40, 3), seed=21):
    """Data and crossed thresholds (tl > tr): the middle piece is empty, the left piece
    reaches up to tl, the right piece starts above it. X stays away from both kinks."""
    rng = np.random.default_rng(seed)
    tl, tr = rng.uniform(0.2, 1.0, (1, shape[1])), rng.uniform(-1.0, -0.2, (1, shape[1]))
    al, ar = rng.uniform(0.0, 1.0, (1, shape[1])), rng.uniform(0.0, 2.0, (1, shape[1]))
    X = away_from_kinks(1.5 * rng.standard_normal(shape), tl, tr)
    return X, tl, al, tr, ar


def test_crossed_thresholds_follow_the_definition_bit_for_bit():
    X, *params = crossed_sample()
    X = np.concatenate([X, np.broadcast_to(params[0], (1, 3)), np.broadcast_to(params[2], (1, 3))])
    full = [np.broadcast_to(p, X.shape) for p in params]
    expected = np.vectorize(srelu_by_cases)(X, *full)
    np.testing.assert_array_equal(srelu(X, *params, fmt="BC"), expected)
    between = (full[2] < X) & (X <= full[0])  # tr < X <= tl: the left piece alone
    assert between.any()
    np.testing.assert_array_equal(expected[between], (full[0] + full[1] * (X - full[0]))[between])


def test_crossed_thresholds_gradients_match_finite_differences():
    inputs = crossed_sample()
    d_Y = np.random.default_rng(22).standard_normal(inputs[0].shape)
    _, grads = op_vjp(SReLUFunction("BC"), inputs, (d_Y,))
    expected = numerical_gradient(lambda *a: srelu(*a, fmt="BC"), *inputs, d_output=d_Y)
    by_cases = autograd.grad(lambda *a: anp.sum(d_Y * srelu_autograd(*a)), argnum=(0, 1, 2, 3, 4))(
        *inputs
    )
    named = zip(("X", "tl", "al", "tr", "ar"), grads, expected, by_cases, strict=True)
    for name, got, want, want_by_cases in named:
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8, err_msg=name)
        np.testing.assert_allclose(got, want_by_cases, rtol=1e-12, atol=1e-12, err_msg=name)
    assert np.all(grads[2] != 0) and np.all(grads[4] != 0)  # both outer pieces are used


def srelu_autograd(X, tl, al, tr, ar):
    """Written independently with autograd.numpy (where, not masks)."""
    shape = X.shape
    tl, al, tr, ar = (anp.broadcast_to(p, shape) for p in (tl, al, tr, ar))
    return anp.where(X <= tl, tl + al * (X - tl), anp.where(X < tr, X, tr + ar * (X - tr)))


@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_backward_matches_autograd(fmt, shape, seed):
    inputs = sample(fmt, shape, seed)
    d_Y = np.random.default_rng(seed + 100).standard_normal(shape)
    _, grads = op_vjp(SReLUFunction(fmt), inputs, (d_Y,))

    def loss(*args):
        return anp.sum(d_Y * srelu_autograd(*args))

    expected = autograd.grad(loss, argnum=(0, 1, 2, 3, 4))(*inputs)
    for name, got, want in zip(("X", "tl", "al", "tr", "ar"), grads, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize(("fmt", "shape"), FORMATS[:2])
def test_backward_matches_finite_differences(fmt, shape):
    inputs = sample(fmt, shape, seed=5)
    d_Y = np.random.default_rng(7).standard_normal(shape)
    _, grads = op_vjp(SReLUFunction(fmt), inputs, (d_Y,))
    expected = numerical_gradient(lambda *a: srelu(*a, fmt=fmt), *inputs, d_output=d_Y)
    for got, want in zip(grads, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
def test_hand_written_and_compiled_backward_agree(fmt, shape):
    compiled = differentiable(srelu_reference)
    for seed in range(5):
        inputs = sample(fmt, shape, seed)
        d_Y = np.random.default_rng(seed + 50).standard_normal(shape)
        _, hand = op_vjp(SReLUFunction(fmt), inputs, (d_Y,))
        _, auto = op_vjp(compiled, inputs, (d_Y,))
        for name, a, b in zip(("X", "tl", "al", "tr", "ar"), hand, auto, strict=True):
            assert a.shape == b.shape, name
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=name)


def test_gradients_keep_float32():
    inputs = sample("SSCB", (2, 2, 3, 4), dtype=np.float32)
    _, grads = op_vjp(SReLUFunction("SSCB"), inputs, (np.ones((2, 2, 3, 4), np.float32),))
    assert [g.dtype for g in grads] == [np.float32] * 5


@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
def test_check_op_passes(fmt, shape):
    report = check_op(SReLUFunction(fmt), *sample(fmt, shape, seed=3))
    assert report.passed, str(report)
    assert report["finite differences"].status == "passed"
    assert report["kinks"].status == "passed"
    assert report["compute_gradients"].status == "passed"


def test_check_op_works_on_the_compiled_reference_too():
    report = check_op(differentiable(srelu_reference), *sample("BC", (5, 3)), batch_axis=0)
    assert report.passed, str(report)
    assert report["finite differences"].status == "passed"


def test_inputs_on_a_kink_are_reported_with_the_slope_the_backward_picks():
    tl, al, tr, ar = (np.full((1, 2), v) for v in (-1.0, 0.25, 1.0, 3.0))
    X = np.array([[-1.0, 1.0], [0.3, -2.0], [2.5, 0.0]])  # X[0, 0] == tl, X[0, 1] == tr
    report = check_op(SReLUFunction("BC"), X, tl, al, tr, ar)
    assert report.passed, str(report)
    kinks = report["kinks"]
    assert kinks.status == "warning"
    assert "X[0, 0]" in kinks.message and "X[0, 1]" in kinks.message
    lines = {line.split(":")[0].strip(): line for line in kinks.message.splitlines()}
    assert "(the left slope)" in lines["X[0, 0]"]  # at x == tl the slope is al
    assert "(the right slope)" in lines["X[0, 1]"]  # at x == tr the slope is ar
    assert "nudged" in report["finite differences"].message


def test_a_kink_inside_the_stencil_is_detected_not_failed():
    tl, al, tr, ar = (np.full((1, 1), v) for v in (0.0, 0.1, 1.0, 1.0))
    # a hair from tl: every 5-point stencil tried (h = 1e-7 down to 1e-7 / 4**3) straddles it
    X = np.array([[1e-9], [0.5], [-0.7]])
    report = check_op(SReLUFunction("BC"), X, tl, al, tr, ar)
    assert report.passed, str(report)
    assert report["kinks"].status == "warning"
    assert "X[0, 0]" in report["kinks"].message


def test_parameters_must_be_channel_wise():
    X, tl, al, tr, ar = sample("BC", (4, 3))
    with pytest.raises(DataFormatError, match=r"srelu: parameter 'al' has shape \(3,\)"):
        srelu(X, tl, al.ravel(), tr, ar, fmt="BC")
    with pytest.raises(DataFormatError, match=r"labels 4 axes but the array has 2"):
        srelu(X, tl, al, tr, ar, fmt="SSCB")


@pytest.mark.parametrize(("fmt", "shape"), FORMATS[:2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_subset_of_gradients_matches_autograd(fmt, shape, dtype):
    """The backward computes only what the requested gradients need: each of the 32
    subsets gives autograd's gradients where requested and None elsewhere."""
    inputs = sample(fmt, shape, seed=11, dtype=dtype)
    d_Y = np.random.default_rng(12).standard_normal(shape).astype(dtype)

    def loss(*args):
        return anp.sum(d_Y * srelu_autograd(*args))

    as_float64 = [a.astype(np.float64) for a in inputs]
    expected = autograd.grad(loss, argnum=(0, 1, 2, 3, 4))(*as_float64)
    tolerance = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12}
    op = SReLUFunction(fmt)
    for flags in itertools.product([False, True], repeat=5):
        _, grads = op_vjp(op, inputs, (d_Y,), flags)
        named = zip(("X", "tl", "al", "tr", "ar"), flags, grads, expected, strict=True)
        for name, wanted, got, want in named:
            if not wanted:
                assert got is None, (flags, name)
                continue
            assert got.dtype == dtype and got.shape == want.shape, (flags, name)
            np.testing.assert_allclose(got, want, **tolerance, err_msg=f"{flags} {name}")


@pytest.mark.parametrize(
    "flags",
    [(True, False, False, False, False), (False, True, True, False, False), (False,) * 4 + (True,)],
)
def test_gradient_subsets_on_a_strict_array_library_match_numpy(flags):
    inputs = sample("BC", (6, 3), seed=13)
    d_Y = np.random.default_rng(14).standard_normal((6, 3))
    strict = tuple(xps.asarray(a) for a in inputs)
    _, grads = op_vjp(SReLUFunction("BC"), strict, (xps.asarray(d_Y),), flags)
    _, grads_np = op_vjp(SReLUFunction("BC"), inputs, (d_Y,), flags)
    for got, want in zip(grads, grads_np, strict=True):
        if want is None:
            assert got is None
        else:
            assert type(got).__module__.startswith("array_api_strict")
            np.testing.assert_array_equal(np.asarray(got), want)
