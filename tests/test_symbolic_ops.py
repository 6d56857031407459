"""verify_symbolic proves the built-in SReLU and PReLU and small activations right,
region by region, and judges their kinks (the relu'(0) question with evidence)."""

from __future__ import annotations

import pytest
import sympy as sp
from symbolic_examples import (
    Abs,
    Clip,
    Huber,
    LeakyReLU,
    ReLU,
    ReLUFromMemory,
    ReLUFromOutput,
    backward_at,
    derivative_at,
)

from autodiff_tutor.ops import DifferentiableFunction, PReLUFunction, SReLUFunction
from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.verify.symbolic import verify_symbolic

SRELU_INPUTS = ("X", "tl", "al", "tr", "ar")


def _all_proved(report) -> None:
    assert report.passed, report.text()
    assert report.regions and all(c.verdict == "proved" for c in report.regions), report.text()


@pytest.mark.parametrize("fmt", ["BC", "SSCB"])
def test_srelu_verifies_in_all_regions_for_all_five_inputs(fmt: str) -> None:
    report = verify_symbolic(SReLUFunction(fmt), assume=["tl < tr"])
    _all_proved(report)
    assert report.inputs == SRELU_INPUTS
    assert report.region_names() == ["X < tl", "tl < X < tr", "X > tr"]
    for name in SRELU_INPUTS:
        assert [c.region for c in report.regions if c.input == name] == report.region_names()
    dY, al, ar = sp.symbols("dY al ar", real=True)
    assert report.entry("X", "X < tl").expected == al * dY
    assert report.entry("X", "X > tr").got == ar * dY
    assert any("reduce_to_channels" in note for note in report.notes)


def test_srelu_with_crossed_thresholds_is_still_the_derivative_of_its_formula() -> None:
    """Without tl < tr a fourth region exists (tr < X < tl, where the definition takes
    the left piece); the backward by cases is exact there too."""
    report = verify_symbolic(SReLUFunction("BC"))
    _all_proved(report)
    assert "tr < X < tl" in report.region_names()
    assert len(report.region_names()) == 4


def test_srelu_kinks_take_the_piece_that_includes_the_threshold() -> None:
    report = verify_symbolic(SReLUFunction("BC"), assume=["tl < tr"])
    at_tl = {k.input: k for k in report.kinks if k.boundary == "X = tl"}
    assert at_tl["X"].verdict == "one-sided" and at_tl["X"].detail.endswith("X < tl")
    assert at_tl["tl"].verdict == "one-sided"
    assert {at_tl[n].verdict for n in ("al", "tr", "ar")} == {"smooth"}
    at_tr = {k.input: k for k in report.kinks if k.boundary == "X = tr"}
    assert at_tr["X"].detail.endswith("X > tr")


def test_prelu_verifies_for_both_inputs() -> None:
    report = verify_symbolic(PReLUFunction("SSCB"))
    _all_proved(report)
    assert report.region_names() == ["X < 0", "X > 0"]
    assert {c.input for c in report.regions} == {"X", "alpha"}
    kink = next(k for k in report.kinks if k.input == "X")
    assert (kink.boundary, kink.verdict) == ("X = 0", "one-sided")
    assert kink.value == sp.Symbol("alpha", real=True) * sp.Symbol("dY", real=True)


@pytest.mark.parametrize(
    ("op", "assume", "regions"),
    [
        (ReLU(), (), ["x < 0", "x > 0"]),
        (ReLUFromMemory(), (), ["x < 0", "x > 0"]),
        (ReLUFromOutput(), (), ["x < 0", "x > 0"]),
        (LeakyReLU(), (), ["x < 0", "x > 0"]),
        (Huber(), ["delta > 0"], ["x < -delta", "-delta < x < 0", "0 < x < delta", "x > delta"]),
        (Abs(), (), ["x < 0", "x > 0"]),
        (Clip(), ["lo < hi"], ["x < lo", "lo < x < hi", "x > hi"]),
    ],
    ids=lambda v: getattr(v, "name", None),
)
def test_activations_verify(op, assume, regions) -> None:
    report = verify_symbolic(op, assume=assume)
    _all_proved(report)
    assert report.region_names() == regions


def test_the_relu_question_at_zero_with_evidence() -> None:
    """relu'(0): the backward's choice (0) is the derivative from the left; abs'(0) = 0
    is the midpoint of -1 and 1; huber is smooth at its thresholds."""
    relu = verify_symbolic(ReLU())
    (kink,) = relu.kinks
    assert (kink.boundary, kink.value, kink.weight) == ("x = 0", 0, 1)
    # the same numbers from the op's own code: backward 0, one-sided slopes 0 and 1
    point = {"x": 0.0, "d_y": 1.0}
    assert backward_at(ReLU(), relu, point) == [0.0]
    assert abs(derivative_at(ReLU(), relu, point, "x", side=-1)) < 1e-9
    assert abs(derivative_at(ReLU(), relu, point, "x", side=+1) - 1) < 1e-9
    (abs_kink,) = verify_symbolic(Abs()).kinks
    assert abs_kink.verdict == "subgradient" and abs_kink.weight == sp.Rational(1, 2)
    huber = verify_symbolic(Huber(), assume=["delta > 0"])
    assert {k.verdict for k in huber.kinks} == {"smooth"}


def test_leaky_relu_reads_its_slope_from_the_op() -> None:
    report = verify_symbolic(LeakyReLU(slope=0.25))
    entry = report.entry("x", "x < 0")
    assert entry.expected == sp.Rational(1, 4) * sp.Symbol("d_y", real=True)


class SplitRelu(DifferentiableFunction):
    """Two outputs (the positive and the negative part): the backward gets one
    gradient per output, and its result is checked against both."""

    def __init__(self) -> None:
        super().__init__(num_outputs=2, save_inputs_for_backward=True, name="split_relu")

    def forward(self, x):
        xp = array_module(x)
        return xp.maximum(x, 0), xp.minimum(x, 0)

    def backward(self, d_pos, d_neg, compute_gradients, x):
        return d_pos * (x > 0) + d_neg * (x <= 0)


def test_an_op_with_two_outputs() -> None:
    report = verify_symbolic(SplitRelu())
    _all_proved(report)
    assert report.seeds == ("d_pos", "d_neg")
    d_pos = sp.Symbol("d_pos", real=True)
    assert report.entry("x", "x > 0").expected == d_pos
