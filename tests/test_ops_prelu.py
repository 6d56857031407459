"""PReLU: forward against the seeds' formula, backward against independent oracles."""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from autodiff_tutor.api import differentiable
from autodiff_tutor.ops import PReLUFunction, channel_shape, op_vjp, prelu, prelu_reference
from autodiff_tutor.verify import check_op, numerical_gradient

FORMATS = [("BC", (6, 3)), ("SSCB", (3, 4, 2, 5))]


def sample(fmt, shape, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape)
    X = np.where(np.abs(X) < 1e-2, X + 3e-2, X)  # away from the kink at 0
    return X, rng.uniform(0.0, 1.0, channel_shape(fmt, shape))


@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
def test_forward_is_max_plus_alpha_min(fmt, shape):
    X, alpha = sample(fmt, shape)
    expected = np.maximum(X, 0) + alpha * np.minimum(0, X)
    np.testing.assert_array_equal(prelu(X, alpha, fmt), expected)
    np.testing.assert_array_equal(prelu_reference(X, alpha), expected)


@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
@pytest.mark.parametrize("seed", [0, 1])
def test_backward_matches_autograd_and_finite_differences(fmt, shape, seed):
    X, alpha = sample(fmt, shape, seed)
    d_Y = np.random.default_rng(seed + 10).standard_normal(shape)
    _, (d_X, d_alpha) = op_vjp(PReLUFunction(fmt), (X, alpha), (d_Y,))

    def loss(X, alpha):
        return anp.sum(d_Y * (anp.maximum(X, 0.0) + alpha * anp.minimum(X, 0.0)))

    want_X, want_alpha = autograd.grad(loss, argnum=(0, 1))(X, alpha)
    np.testing.assert_allclose(d_X, want_X, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d_alpha, want_alpha, rtol=1e-12, atol=1e-12)
    fd_X, fd_alpha = numerical_gradient(lambda *a: prelu(*a, fmt), X, alpha, d_output=d_Y)
    np.testing.assert_allclose(d_X, fd_X, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(d_alpha, fd_alpha, rtol=1e-7, atol=1e-8)


def test_hand_written_and_compiled_backward_agree():
    compiled = differentiable(prelu_reference)
    X, alpha = sample("SSCB", (3, 4, 2, 5), seed=4)
    d_Y = np.random.default_rng(9).standard_normal(X.shape)
    _, hand = op_vjp(PReLUFunction("SSCB"), (X, alpha), (d_Y,))
    _, auto = op_vjp(compiled, (X, alpha), (d_Y,))
    for a, b in zip(hand, auto, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
def test_check_op_passes(fmt, shape):
    report = check_op(PReLUFunction(fmt), *sample(fmt, shape, seed=2))
    assert report.passed, str(report)
    assert [e.status for e in report.entries[:-1]] == ["passed"] * 7


def test_the_kink_at_zero_uses_the_slope_alpha():
    X, alpha = np.array([[0.0, 1.0, -1.0]]), np.full((1, 3), 0.5)
    _, (d_X, d_alpha) = op_vjp(PReLUFunction("BC"), (X, alpha))
    assert d_X.tolist() == [[0.5, 1.0, 0.5]]
    assert d_alpha.tolist() == [[0.0, 0.0, -1.0]]
    report = check_op(PReLUFunction("BC"), X, alpha)
    assert report.passed, str(report)
    assert "X[0, 0]" in report["kinks"].message and "(the left slope)" in report["kinks"].message


@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_requested_gradient_alone_matches_autograd(fmt, shape, dtype):
    X, alpha = (a.astype(dtype) for a in sample(fmt, shape, seed=5))
    d_Y = np.random.default_rng(6).standard_normal(shape).astype(dtype)

    def loss(X, alpha):
        return anp.sum(d_Y * (anp.maximum(X, 0.0) + alpha * anp.minimum(X, 0.0)))

    expected = autograd.grad(loss, argnum=(0, 1))(X.astype(np.float64), alpha.astype(np.float64))
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12}
    for flags in [(True, False), (False, True), (True, True)]:
        _, grads = op_vjp(PReLUFunction(fmt), (X, alpha), (d_Y,), flags)
        for wanted, got, want in zip(flags, grads, expected, strict=True):
            if wanted:
                assert got.dtype == dtype
                np.testing.assert_allclose(got, want, **tolerance)
            else:
                assert got is None
