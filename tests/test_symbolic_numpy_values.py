"""The backward as numpy runs it: sympy reads ``sqrt(x)**2`` as ``x`` and ``x / |x|`` on
the kink as 1, numpy computes nan there. The symbolic check also runs the code with
numpy at points of every region and boundary, so such a backward fails where numpy
gives nan, and a correct one is still proved.

The oracle for each failure is numpy itself: the backward, called on the report's
counterexample, is not finite there, while the forward is.
"""

from __future__ import annotations

import numpy as np
import pytest
from symbolic_examples import AbsRatio, ReLU

from autodiff_tutor.course import grade_backward
from autodiff_tutor.ops import DifferentiableFunction, PReLUFunction, SReLUFunction
from autodiff_tutor.verify.symbolic import verify_symbolic


def square(x):
    return x * x


def square_backward_sqrt(d_y, x):
    return d_y * 2 * np.sqrt(x) ** 2  # nan for x < 0


def square_backward_exp_log(d_y, x):
    return d_y * 2 * np.exp(np.log(x))  # nan for x < 0


def absolute(x):
    return np.abs(x)


def absolute_backward_ratio(d_y, x):
    return d_y * x / np.abs(x)  # 0/0 at x == 0


def relu(x):
    return np.maximum(x, 0.0)


def relu_backward_ratio(d_y, x):
    return d_y * np.maximum(x, 0.0) / x  # 0/0 at x == 0


def _at(point: dict[str, float], *names: str) -> list[np.ndarray]:
    return [np.array([point[n]]) for n in names]


@pytest.mark.parametrize("backward", [square_backward_sqrt, square_backward_exp_log])
def test_a_backward_that_numpy_computes_as_nan_in_a_region_fails(backward):
    report = verify_symbolic(square, backward)
    assert not report.passed
    (check,) = report.regions
    assert check.verdict == "not finite" and check.counterexample["x"] < 0
    d_y, x = _at(check.counterexample, "d_y", "x")
    with np.errstate(all="ignore"):
        assert np.isnan(backward(d_y, x)).all() and np.isfinite(square(x)).all()
    assert check.expected_value == pytest.approx(2 * d_y[0] * x[0])  # d(x^2) = 2x, by hand


@pytest.mark.parametrize(
    ("forward", "backward"),
    [(absolute, absolute_backward_ratio), (relu, relu_backward_ratio)],
)
def test_a_backward_that_is_nan_on_the_kink_fails(forward, backward):
    report = verify_symbolic(forward, backward)
    assert not report.passed
    assert all(c.passed for c in report.regions)  # right on either side
    (kink,) = report.kinks
    assert kink.boundary == "x = 0" and kink.verdict == "invalid"
    assert "run with numpy, the backward gives nan" in kink.detail
    d_y, x = _at(kink.counterexample, "d_y", "x")
    with np.errstate(all="ignore"):
        assert np.isnan(backward(d_y, x)).all() and np.isfinite(forward(x)).all()


def test_the_grader_says_where_numpy_gives_nan():
    feedback, _ = grade_backward(absolute, absolute_backward_ratio)
    assert feedback.verdict == "wrong"
    assert "dx at x = 0: run with numpy, the backward gives nan" in feedback.message
    feedback, _ = grade_backward(square, square_backward_sqrt)
    assert feedback.verdict == "wrong" and "gives nan" in feedback.message


def test_an_op_is_run_through_its_own_forward_and_backward():
    """The same mistake in an op: its own forward and backward are run."""
    report = verify_symbolic(AbsRatio())
    assert [k.verdict for k in report.kinks] == ["invalid"]


def test_source_strings_are_run_too():
    report = verify_symbolic(
        "def f(x):\n    return x * x\n",
        "def f_backward(d_y, x):\n    return d_y * 2 * np.sqrt(x) ** 2\n",
    )
    assert [c.verdict for c in report.regions] == ["not finite"]


def sqrt(x):
    return np.sqrt(x)


def sqrt_backward(d_y, x):
    return d_y / (2 * np.sqrt(x))  # nan for x < 0, where the forward is nan too


def sign_backward(d_y, x):
    return d_y * np.sign(x)


def relu_backward(d_y, x):
    return np.where(x > 0, d_y, 0.0)


@pytest.mark.parametrize(
    ("forward", "backward"),
    [(sqrt, sqrt_backward), (absolute, sign_backward), (relu, relu_backward)],
)
def test_right_backwards_are_still_proved(forward, backward):
    """Outside the forward's domain nothing is asked of the backward."""
    report = verify_symbolic(forward, backward)
    assert report.passed, report.text()
    assert all(c.verdict == "proved" for c in report.regions)
    assert not [n for n in report.notes if "numpy could not run" in n]


@pytest.mark.parametrize(
    ("op", "assume"),
    [(SReLUFunction("BC"), ["tl < tr"]), (PReLUFunction("SSCB"), []), (ReLU(), [])],
)
def test_ops_with_data_formats_run_and_are_proved(op, assume):
    report = verify_symbolic(op, assume=assume)
    assert report.passed, report.text()
    assert not [n for n in report.notes if "numpy could not run" in n]


class RaisesOnNegative(DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x * x

    def backward(self, d_y, compute_gradients, x):
        assert (x >= 0).all(), "only for x >= 0"
        return 2 * x * d_y


def test_code_that_cannot_run_is_read_with_sympy_only_and_said_so():
    report = verify_symbolic(RaisesOnNegative())
    assert report.passed
    assert any("numpy could not run the code" in n and "only for x >= 0" in n for n in report.notes)
