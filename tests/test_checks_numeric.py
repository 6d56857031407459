"""Finite differences with kink detection, the report object, and check_op's edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from autodiff_tutor.nn import Layer
from autodiff_tutor.ops import DifferentiableFunction
from autodiff_tutor.verify import CheckEntry, CheckReport, check_layer, check_op, numerical_gradient
from autodiff_tutor.verify.numeric import probe_input


class Fn:
    """A protocol op around a plain function (forward only: enough for probing)."""

    def __init__(self, fn):
        self.fn = fn

    def op_forward(self, *xs):
        return (self.fn(*xs),), None


@pytest.mark.parametrize(
    ("fn", "derivative"),
    [
        (np.sin, np.cos),
        (np.exp, np.exp),
        (lambda x: x**5 - 3 * x, lambda x: 5 * x**4 - 3),
        (np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    ],
)
def test_numerical_gradient_matches_closed_forms(fn, derivative):
    x = np.linspace(-2.0, 2.0, 9)
    (g,) = numerical_gradient(fn, x)
    np.testing.assert_allclose(g, derivative(x), rtol=1e-9, atol=1e-10)


def test_smooth_functions_have_no_kinks():
    x = np.linspace(-3.0, 3.0, 25)
    for fn in (np.sin, np.exp, np.tanh, lambda v: v**3):
        probes = probe_input(Fn(fn), (x,), (np.ones(25),), 0, range(25))
        assert not any(p.kink for p in probes)


def test_a_kink_at_the_point_is_found_with_both_slopes():
    x = np.array([-1.0, 0.0, 1.0])
    probes = probe_input(Fn(np.abs), (x,), (np.ones(3),), 0, range(3))
    assert [p.kink for p in probes] == [False, True, False]
    assert probes[1].left == pytest.approx(-1.0) and probes[1].right == pytest.approx(1.0)
    assert probes[1].central == pytest.approx(0.0, abs=1e-9)  # central differences hide it


def shifted_abs(x):
    return np.abs(x - 1.0)


@pytest.mark.parametrize("offset", [0.3e-6, 1.0e-6, 2.5e-6])
def test_a_kink_inside_every_stencil_is_found(offset):
    """|x - 1| has its kink at 1: within 2 of the smallest steps tried (1e-4 / 4**3)."""
    x = np.array([1.0 + offset])
    (probe,) = probe_input(Fn(shifted_abs), (x,), (np.ones(1),), 0, [0])
    assert probe.kink


@pytest.mark.parametrize("offset", [0.3e-4, 1.0e-4, 1.5e-4, 1.9e-4])
def test_a_kink_inside_the_first_stencil_is_stepped_around(offset):
    """Within 2 steps (h = 1e-4) of the kink of |x - 1|, smaller steps leave it out: the
    slope on the point's side, 1, is the estimate."""
    x = np.array([1.0 + offset])
    (probe,) = probe_input(Fn(shifted_abs), (x,), (np.ones(1),), 0, [0])
    assert not probe.kink and probe.central == pytest.approx(1.0, rel=1e-9)


def test_a_kink_just_outside_the_stencil_is_not_reported():
    (probe,) = probe_input(Fn(np.abs), (np.array([2.5e-4]),), (np.ones(1),), 0, [0])
    assert not probe.kink and probe.central == pytest.approx(1.0, rel=1e-9)


class Pick(DifferentiableFunction):
    """y = x[index]: an integer input is passed through and never differentiated."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x, index):
        return x[index]

    def backward(self, d_y, compute_gradients, x, index):
        d_x = np.zeros_like(x)
        np.add.at(d_x, index, d_y)
        return d_x, None


def test_integer_inputs_are_not_differentiated():
    report = check_op(Pick(), np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]))
    assert report.passed, str(report)
    assert "for each of the 1 float input(s)" in report["backward"].message


def test_a_single_observation_is_said_to_be_one():
    from autodiff_tutor.ops import PReLUFunction

    report = check_op(PReLUFunction("BC"), np.array([[1.0, -2.0]]), np.array([[0.5, 0.5]]))
    assert report.passed
    assert "give several to check a batch" in report["forward"].message


def test_a_failing_initialize_is_reported():
    class Broken(Layer):
        learnables = ("w",)

        def initial_values(self, layout, rng):
            raise RuntimeError("no idea how big w is")

    report = check_layer(Broken("BC"), (4, 2))
    assert not report.passed
    assert report["initialize"].status == "failed"
    assert "RuntimeError: no idea how big w is" in report["initialize"].message


def test_report_lookup_text_and_html():
    report = CheckReport(
        "op<1>",
        [
            CheckEntry("forward", "passed", "ok"),
            CheckEntry("kinks", "warning", "X[0] sits on a kink\n  slope 0 left, 1 right"),
        ],
    )
    assert report.passed and bool(report)
    text = str(report)
    assert text.splitlines()[0] == "check of 'op<1>': passed"
    assert "  warning  X[0] sits on a kink" in text and "slope 0 left, 1 right" in text
    html = report._repr_html_()
    assert "op&lt;1&gt;" in html and "<br>" in html
    with pytest.raises(KeyError, match="no category 'GPU'.*forward, kinks"):
        report["GPU"]
    with pytest.raises(ValueError, match="status must be one of"):
        CheckEntry("forward", "ok", "")


def test_check_op_compiles_a_plain_function():
    """A plain def given to check_op is compiled first (as grad does), so its report
    says whether the compiled gradient is right, not that a def has no op_forward."""

    def softplus_sum(x):
        return np.sum(np.log1p(np.exp(x)))

    report = check_op(softplus_sum, np.array([0.3, -1.2, 2.0]))
    assert report.failures() == [], report
    assert "finite differences" in [
        entry.category for entry in report.entries if entry.status == "passed"
    ]


@pytest.mark.parametrize(
    ("fn", "derivative", "x"),
    [
        (np.sqrt, lambda x: 0.5 / np.sqrt(x), 1e-4),
        (np.sqrt, lambda x: 0.5 / np.sqrt(x), 1e-7),
        (np.log, lambda x: 1 / x, 1e-3),
        (lambda x: np.sin(1000 * x), lambda x: 1000 * np.cos(1000 * x), 1.7),
        (lambda x: np.sin(1000 * x), lambda x: 1000 * np.cos(1000 * x), 0.0),
        (lambda x: 1 / x, lambda x: -1 / x**2, -2e-3),
        (np.exp, np.exp, 30.0),
    ],
)
def test_the_step_follows_the_input_and_stays_in_the_domain(fn, derivative, x):
    """Steps relative to |x|, shrunk inside the domain and refined until two steps agree:
    the closed-form derivative, where a step of 1e-4 left the domain or was too coarse."""
    (g,) = numerical_gradient(fn, np.array([x]))
    np.testing.assert_allclose(g, derivative(np.array([x])), rtol=1e-8)


def test_no_estimate_where_the_forward_is_not_finite():
    with np.errstate(all="ignore"):
        (g,) = numerical_gradient(np.log, np.array([-1.0, 0.5]))
    assert np.isnan(g).all()  # one output is nan: the change of the sum is unknown
    (probe,) = probe_input(Fn(np.sqrt), (np.array([0.0]),), (np.ones(1),), 0, [0])
    assert np.isnan(probe.central) and "next to this point" in probe.unchecked
