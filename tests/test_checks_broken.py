"""Deliberately broken ops: each mistake is caught by the category that explains it."""

from __future__ import annotations

import array_api_strict as xps
import numpy as np
import pytest
from symbolic_examples import AbsRatio

from autodiff_tutor.nn import Layer
from autodiff_tutor.ops import (
    DifferentiableFunction,
    PReLUFunction,
    SReLUFunction,
    channel_shape,
    reduce_to_channels,
)
from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.verify import check_layer, check_op


def srelu_inputs(fmt="BC", shape=(6, 3), seed=0):
    rng = np.random.default_rng(seed)
    p = channel_shape(fmt, shape)
    tl, tr = rng.uniform(-1.0, -0.2, p), rng.uniform(0.2, 1.0, p)
    al, ar = rng.uniform(0.1, 0.5, p), rng.uniform(1.5, 2.5, p)
    return rng.standard_normal(shape) * 1.5, tl, al, tr, ar


def prelu_inputs(fmt="SSCB", shape=(2, 3, 4, 5), seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.uniform(0.1, 0.9, channel_shape(fmt, shape))


def failed(report):
    return {e.category for e in report.failures()}


class WrongRightSlope(SReLUFunction):
    """dX uses the left slope al on the right piece too."""

    def backward(self, dY, compute_gradients, X, tl, al, tr, ar, left, right):
        grads = list(super().backward(dY, compute_gradients, X, tl, al, tr, ar, left, right))
        if compute_gradients[0]:
            xp = array_module(X)
            on_left, on_right = xp.astype(left, X.dtype), xp.astype(right, X.dtype)
            middle = 1 - on_left - on_right
            grads[0] = dY * (on_left * al + middle + on_right * al)
        return tuple(grads)


class NotSummedOverBatch(PReLUFunction):
    """d_alpha sums over the spatial axes but forgets the batch axis."""

    def backward(self, dY, compute_gradients, X, alpha):
        dX, _ = super().backward(dY, (compute_gradients[0], False), X, alpha)
        d_alpha = None
        if compute_gradients[1]:
            d_alpha = np.sum(dY * np.minimum(X, 0), axis=(0, 1), keepdims=True)
        return dX, d_alpha


class WrongDtype(SReLUFunction):
    """A float64 numpy constant promotes the float32 gradient to float64."""

    def backward(self, dY, compute_gradients, X, tl, al, tr, ar, left, right):
        grads = list(super().backward(dY, compute_gradients, X, tl, al, tr, ar, left, right))
        if grads[0] is not None:
            grads[0] = grads[0] * np.array(1.0)
        return tuple(grads)


class WrongShape(PReLUFunction):
    """d_alpha flattened to (C,) instead of the parameter's (1, C)."""

    def backward(self, dY, compute_gradients, X, alpha):
        dX, d_alpha = super().backward(dY, compute_gradients, X, alpha)
        return dX, (None if d_alpha is None else d_alpha.reshape(-1))


class IgnoresComputeGradients(SReLUFunction):
    """Computes every gradient, whatever was asked for."""

    def backward(self, dY, compute_gradients, X, tl, al, tr, ar, left, right):
        return super().backward(dY, (True,) * 5, X, tl, al, tr, ar, left, right)


class SeedsListingOrder(SReLUFunction):
    """Returns (dX, dtl, dtr, dal, dar) as the seeds' listing does, for inputs X, tl, al, tr, ar."""

    def backward(self, dY, compute_gradients, X, tl, al, tr, ar, left, right):
        dX, d_tl, d_al, d_tr, d_ar = super().backward(
            dY, compute_gradients, X, tl, al, tr, ar, left, right
        )
        return dX, d_tl, d_tr, d_al, d_ar


class UsesAnUnsetVariable(SReLUFunction):
    """The input gradient's mask is only computed when dX is requested."""

    def backward(self, dY, compute_gradients, X, tl, al, tr, ar, left, right):
        if compute_gradients[0]:
            on_left = (X <= tl).astype(X.dtype)
        d_tl = (
            reduce_to_channels(dY * on_left * (1 - al), self.format)
            if compute_gradients[1]
            else None
        )
        flags = (compute_gradients[0], False) + compute_gradients[2:]
        others = super().backward(dY, flags, X, tl, al, tr, ar, left, right)
        return others[0], d_tl, *others[2:]


class WrongCount(PReLUFunction):
    def backward(self, dY, compute_gradients, X, alpha):
        return super().backward(dY, compute_gradients, X, alpha)[0]


class NumpyInsideBackward(PReLUFunction):
    """np.where turns strict-array inputs into numpy arrays."""

    def backward(self, dY, compute_gradients, X, alpha):
        dX = d_alpha = None
        if compute_gradients[0]:
            dX = np.where(np.asarray(X) > 0, np.asarray(dY), np.asarray(alpha * dY))
        if compute_gradients[1]:
            negative = array_module(X).astype(X <= 0, X.dtype)
            d_alpha = reduce_to_channels(dY * X * negative, self.format)
        return dX, d_alpha


class BrokenForward(PReLUFunction):
    def forward(self, X, alpha):
        raise ValueError("forgot to write forward")


def test_correct_ops_pass_every_category():
    for report in (
        check_op(SReLUFunction("BC"), *srelu_inputs()),
        check_op(PReLUFunction("SSCB"), *prelu_inputs()),
    ):
        assert report.passed, str(report)
        assert failed(report) == set()


def test_wrong_slope_on_one_side_fails_finite_differences_only():
    report = check_op(WrongRightSlope("BC"), *srelu_inputs())
    assert failed(report) == {"finite differences"}
    message = report["finite differences"].message
    assert "d/d X[" in message and "backward" in message and "finite differences" in message


def test_gradient_not_summed_over_the_batch_fails_gradient_shapes():
    report = check_op(NotSummedOverBatch("SSCB"), *prelu_inputs())
    assert failed(report) == {"gradient shapes"}
    message = report["gradient shapes"].message
    assert (
        "input 1 ('alpha') has shape (1, 1, 4, 5), but the input has shape (1, 1, 4, 1)" in message
    )
    assert "sum over axes (3,) is missing" in message
    assert report["finite differences"].status == "skipped"


def test_wrong_dtype_fails_gradient_dtypes_only():
    report = check_op(WrongDtype("BC"), *srelu_inputs())
    assert failed(report) == {"gradient dtypes"}
    assert "dtype float64, but the input has dtype float32" in report["gradient dtypes"].message
    assert report["finite differences"].status == "passed"


def test_wrong_shape_fails_gradient_shapes_only():
    report = check_op(WrongShape("SSCB"), *prelu_inputs())
    assert failed(report) == {"gradient shapes"}
    assert (
        "has shape (4,), but the input has shape (1, 1, 4, 1)" in report["gradient shapes"].message
    )


def test_ignoring_compute_gradients_fails_compute_gradients_only():
    report = check_op(IgnoresComputeGradients("BC"), *srelu_inputs())
    assert failed(report) == {"compute_gradients"}
    message = report["compute_gradients"].message
    assert "with compute_gradients=(F, T, F, F, F)" in message
    assert "was computed although compute_gradients[1] is False" in message


def test_gradients_in_the_wrong_order_fail_finite_differences_and_compute_gradients():
    report = check_op(SeedsListingOrder("BC"), *srelu_inputs())
    assert failed(report) == {"finite differences", "compute_gradients"}
    assert (
        "d/d al[" in report["finite differences"].message
        or "d/d tr[" in report["finite differences"].message
    )


def test_a_backward_that_crashes_for_some_flags_fails_compute_gradients():
    report = check_op(UsesAnUnsetVariable("BC"), *srelu_inputs())
    assert failed(report) == {"compute_gradients"}
    assert "UnboundLocalError" in report["compute_gradients"].message
    assert "compute_gradients=(F, T, F, F, F)" in report["compute_gradients"].message


def test_wrong_count_fails_backward():
    report = check_op(WrongCount("SSCB"), *prelu_inputs())
    assert "backward" in failed(report)
    assert "returned 1 value(s) but the op has 2 input(s)" in report["backward"].message
    assert report["finite differences"].status == "skipped"


def test_numpy_inside_a_backward_fails_gradient_dtypes_on_another_array_library():
    X, alpha = prelu_inputs()
    report = check_op(NumpyInsideBackward("SSCB"), xps.asarray(X), xps.asarray(alpha))
    assert failed(report) == {"gradient dtypes"}
    assert (
        "is an array of numpy, but the input is an array of array_api_strict"
        in report["gradient dtypes"].message
    )


def test_a_broken_forward_fails_forward_and_skips_the_rest():
    report = check_op(BrokenForward("SSCB"), *prelu_inputs())
    assert report["forward"].status == "failed"
    assert "ValueError: forgot to write forward" in report["forward"].message
    for category in ("compute_gradients", "finite differences", "kinks"):
        assert report[category].status == "skipped"


@pytest.mark.parametrize("make", [WrongRightSlope, IgnoresComputeGradients])
def test_a_failing_report_says_which_category_failed_and_why(make):
    report = check_op(make("BC"), *srelu_inputs())
    text = str(report)
    assert text.splitlines()[0].endswith("FAILED")
    (entry,) = report.failures()
    assert any(
        line.strip().startswith(entry.category) and "failed" in line for line in text.splitlines()
    )
    assert " ".join(entry.message.splitlines()[0].split()) in " ".join(text.split())
    html = report._repr_html_()
    assert "<table>" in html and entry.category in html and "failed" in html
    assert not report.passed and not bool(report)


class NanSquare(DifferentiableFunction):
    """Every gradient is NaN."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x * x

    def backward(self, d_y, compute_gradients, x):
        return d_y * np.nan * x


class NanLayer(Layer):
    def predict(self, X):
        return X * X

    def backward(self, X, Y, dY, memory):
        return (dY * np.full_like(X, np.nan),)


def test_a_nan_gradient_never_matches_the_finite_differences():
    report = check_op(NanSquare(), np.random.default_rng(0).standard_normal(5))
    assert failed(report) == {"finite differences"}
    assert "5 of 5 elements differ" in report["finite differences"].message
    assert "backward nan" in report["finite differences"].message
    layer_report = check_layer(NanLayer(), (4, 3))
    assert "finite differences" in failed(layer_report)


class Sqrt(DifferentiableFunction):
    def __init__(self, factor=2.0):
        super().__init__(save_outputs_for_backward=True)
        self.factor = factor

    def forward(self, x):
        return np.sqrt(x)

    def backward(self, d_y, compute_gradients, y):
        return d_y / (self.factor * y)  # right for factor 2: d sqrt(x) = 1 / (2 sqrt(x))


class LogTimes(DifferentiableFunction):
    def __init__(self, right=True):
        super().__init__(save_inputs_for_backward=True)
        self.right = right

    def forward(self, x):
        return np.log(x)

    def backward(self, d_y, compute_gradients, x):
        return d_y / x if self.right else d_y * x


NEAR_ZERO = np.array([1e-5, 5e-5, 3e-3])  # a stencil of steps 1e-4 would leave sqrt's domain


def test_a_wrong_gradient_next_to_the_edge_of_the_domain_is_caught():
    report = check_op(Sqrt(factor=3.0), NEAR_ZERO)
    assert failed(report) == {"finite differences"}
    assert "3 of 3 elements differ" in report["finite differences"].message


def test_a_right_gradient_next_to_the_edge_of_the_domain_passes():
    """The steps stay inside the domain and at the input's scale; the gradient there is
    1 / (2 sqrt(x)) by hand."""
    report = check_op(Sqrt(), NEAR_ZERO)
    assert report.passed, str(report)
    assert report["kinks"].status == "passed"


def test_inputs_where_the_forward_is_not_finite_are_not_checked_and_fail():
    for op in (LogTimes(right=False), LogTimes(right=True)):
        with np.errstate(all="ignore"):
            report = check_op(op, np.array([-1.0, -0.5, -2.0]))
        assert "finite differences" in failed(report), str(report)
        message = report["finite differences"].message
        assert "3 element(s) could not be checked" in message
        assert "the forward is not finite at this point" in message
        assert "elements match" not in message


class ReluAtZero(DifferentiableFunction):
    """ReLU whose backward takes ``at_zero`` (times d_y) at x == 0."""

    def __init__(self, at_zero):
        super().__init__(save_inputs_for_backward=True)
        self.at_zero = at_zero

    def forward(self, x):
        return np.maximum(x, 0)

    def backward(self, d_y, compute_gradients, x):
        slope = np.where(x == 0, self.at_zero, np.where(x > 0, 1.0, 0.0))
        return d_y * slope.astype(x.dtype)


ON_THE_KINK = np.array([0.0, 1.0, -1.0, 2.0, 0.0, 3.0])


@pytest.mark.parametrize("at_zero", [0.0, 1.0, 0.5, 0.2])
def test_a_kink_value_between_the_one_sided_slopes_is_a_warning(at_zero):
    """0 and 1 are the one-sided slopes of relu at 0; any mix of them is a subgradient."""
    report = check_op(ReluAtZero(at_zero), ON_THE_KINK)
    assert report.passed, str(report)
    assert report["kinks"].status == "warning"


@pytest.mark.parametrize("at_zero", [7.0, -0.5, 1.5, np.nan])
def test_a_kink_value_outside_the_one_sided_slopes_fails(at_zero):
    """The convention of verify_symbolic: outside [0, 1] no side gives it."""
    with np.errstate(all="ignore"):
        report = check_op(ReluAtZero(at_zero), ON_THE_KINK)
    assert failed(report) == {"kinks"}
    message = report["kinks"].message
    assert "2 of 2 element(s) on or next to a kink get a value" in message
    assert "x[0]" in message and "x[4]" in message
    expected = "not a number" if np.isnan(at_zero) else "outside both one-sided slopes"
    assert expected in message


def test_a_nan_gradient_on_a_kink_fails():
    with np.errstate(all="ignore"):
        report = check_op(AbsRatio(), np.array([-1.5, 0.0, 2.0, 0.0]))
    assert failed(report) == {"kinks"}
    assert "backward gives nan (not a number)" in report["kinks"].message
