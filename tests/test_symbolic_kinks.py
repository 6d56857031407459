"""Kinks of the symbolic check: a boundary several inputs cross is one kink (every input
takes the same share of the two sides), and one-sided derivatives that substitution
cannot give (0/0, a removable singularity) are found as limits.

Oracles: finite differences of the forward along the boundary (the inputs moved
together), and derivatives by hand (sinc'(0) = 0).
"""

from __future__ import annotations

import numpy as np
import pytest
from symbolic_examples import confirm_joint_kink_counterexample

from autodiff_tutor.course import grade_backward
from autodiff_tutor.ops import DifferentiableFunction
from autodiff_tutor.verify.symbolic import verify_symbolic


def shifted_relu(x, t):
    return np.maximum(x - t, 0.0)


def shifted_relu_mixed(d_y, x, t):
    return d_y * (x >= t), -d_y * (x > t)  # at x == t: d_x from x > t, d_t from x < t


def shifted_relu_backward(d_y, x, t):
    return d_y * (x > t), -d_y * (x > t)


def shifted_relu_half(d_y, x, t):
    share = (x > t) + 0.5 * (x == t)
    return d_y * share, -d_y * share


def maximum(x, y):
    return np.maximum(x, y)


def maximum_both(d_y, x, y):
    return d_y * (x >= y), d_y * (y >= x)  # at a tie both get d_y


def maximum_backward(d_y, x, y):
    return d_y * (x >= y), d_y * (y > x)


def tie_slope(forward, backward, point, names):
    """Along the tie (every input moved by the same amount): the forward's slope by
    central differences, and the backward's."""
    values = [np.array([point[n]]) for n in names]
    d_y = np.array([point["d_y"]])
    h = 1e-6
    up = forward(*[v + h for v in values])
    down = forward(*[v - h for v in values])
    numeric = float(np.sum(d_y * (up - down)) / (2 * h))
    along = float(sum(np.sum(g) for g in backward(d_y, *values)))
    return numeric, along


@pytest.mark.parametrize(
    ("forward", "backward", "names"),
    [(shifted_relu, shifted_relu_mixed, ("x", "t")), (maximum, maximum_both, ("x", "y"))],
)
def test_inputs_on_different_sides_of_one_kink_fail(forward, backward, names):
    report = verify_symbolic(forward, backward)
    assert not report.passed
    assert all(c.passed for c in report.regions)
    assert all(k.passed for k in report.kinks if "," not in k.input)  # each alone: fine
    (joint,) = [k for k in report.kinks if not k.passed]
    assert joint.input == ", ".join(names) and joint.verdict == "invalid"
    assert "different sides of one kink" in joint.detail
    numeric, along = tie_slope(forward, backward, joint.counterexample, names)
    assert abs(numeric - along) > 1e-3 * (1 + abs(numeric)), (numeric, along)


@pytest.mark.parametrize(
    ("forward", "backward"),
    [
        (shifted_relu, shifted_relu_backward),
        (shifted_relu, shifted_relu_half),
        (maximum, maximum_backward),
    ],
)
def test_inputs_that_take_the_same_share_of_the_sides_pass(forward, backward):
    report = verify_symbolic(forward, backward)
    assert report.passed, report.text()


def test_the_grader_names_the_inputs_of_a_mixed_kink():
    feedback, _ = grade_backward(shifted_relu, shifted_relu_mixed)
    assert feedback.verdict == "wrong"
    assert "d(x, t) at x = t: the inputs take different sides of one kink" in feedback.message


class ShiftedRelu(DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x, t):
        return np.maximum(x - t, 0.0)

    def backward(self, d_y, compute_gradients, x, t):
        return d_y * (x >= t), -d_y * (x > t)


def test_a_mixed_kink_in_an_op_is_confirmed_by_finite_differences_along_the_tie():
    op = ShiftedRelu()
    report = verify_symbolic(op)
    (joint,) = [k for k in report.kinks if not k.passed]
    confirm_joint_kink_counterexample(op, report, joint)


def sinc(x):
    return np.where(x == 0, 1.0, np.sin(x) / x)


def sinc_backward(d_y, x):
    return d_y * np.where(x == 0, 0.0, (x * np.cos(x) - np.sin(x)) / x**2)


def sinc_backward_wrong_at_zero(d_y, x):
    return d_y * np.where(x == 0, 1.0, (x * np.cos(x) - np.sin(x)) / x**2)


def sinc_backward_unguarded(d_y, x):
    return d_y * (x * np.cos(x) - np.sin(x)) / x**2  # 0/0 at x == 0


def test_a_removable_singularity_is_judged_by_its_limits():
    """sinc'(0) = 0 from both sides (by hand: sin(x)/x = 1 - x^2/6 + ...)."""
    report = verify_symbolic(sinc, sinc_backward)
    assert report.passed, report.text()
    (kink,) = report.kinks
    assert kink.derivative_a == 0 and kink.derivative_b == 0 and kink.verdict == "smooth"
    assert grade_backward(sinc, sinc_backward)[0].passed


@pytest.mark.parametrize("backward", [sinc_backward_wrong_at_zero, sinc_backward_unguarded])
def test_a_wrong_value_at_a_removable_singularity_fails(backward):
    report = verify_symbolic(sinc, backward)
    assert not report.passed
    assert [k.verdict for k in report.kinks] == ["invalid"]
    with np.errstate(all="ignore"):
        at_zero = backward(np.ones(1), np.zeros(1))
    assert not (np.isfinite(at_zero) & (at_zero == 0.0)).all()  # numpy: 1 or nan, not 0
