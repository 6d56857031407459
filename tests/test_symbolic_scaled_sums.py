"""A backward may sum first and multiply the sum by a factor that is the same for every
summed element (SReLU's ``reduce_to_channels(dY_left, fmt) * (1 - al)``): the symbolic
check reads that as the sum of the products, and refuses every other use of a sum."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from autodiff_tutor.errors import TranslationError
from autodiff_tutor.ops import (
    DifferentiableFunction,
    SReLUFunction,
    check_channel_parameters,
    op_vjp,
    reduce_to_channels,
)
from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.verify import numerical_gradient
from autodiff_tutor.verify.symbolic import verify_symbolic

SCALED = "a sum times a factor that is the same for every summed element"


class ChannelScale(DifferentiableFunction):
    """y = a * b * X with channel-wise a and b; each subclass writes d_a its own way."""

    def __init__(self, fmt: str = "BC") -> None:
        super().__init__(save_inputs_for_backward=True, name="channel scale")
        self.format = fmt

    def forward(self, X, a, b):
        check_channel_parameters(self.format, X, self.name, a=a, b=b)
        return a * b * X


class SumThenFactor(ChannelScale):
    def backward(self, dY, compute_gradients, X, a, b):
        d_a = reduce_to_channels(dY * X, self.format) * b
        return dY * a * b, d_a, reduce_to_channels(dY * X * a, self.format)


class FactorFirst(ChannelScale):
    def backward(self, dY, compute_gradients, X, a, b):
        d_a = b * reduce_to_channels(dY * X, self.format)
        return dY * a * b, d_a, reduce_to_channels(dY * X * a, self.format)


class Divided(ChannelScale):
    def backward(self, dY, compute_gradients, X, a, b):
        d_a = reduce_to_channels(dY * X * b * b, self.format) / b
        return dY * a * b, d_a, reduce_to_channels(dY * X * a, self.format)


class ByANumber(ChannelScale):
    def backward(self, dY, compute_gradients, X, a, b):
        d_a = reduce_to_channels(2 * dY * X * b, self.format) * 0.5
        return dY * a * b, d_a, reduce_to_channels(dY * X * a, self.format)


class PerElementFactor(ChannelScale):
    def backward(self, dY, compute_gradients, X, a, b):
        d_a = reduce_to_channels(dY * b, self.format) * X  # wrong: X differs per element
        return dY * a * b, d_a, reduce_to_channels(dY * X * a, self.format)


class AnotherFormat(ChannelScale):
    def backward(self, dY, compute_gradients, X, a, b):
        d_a = reduce_to_channels(dY * X, "CB") * b  # not the format b was checked in
        return dY * a * b, d_a, reduce_to_channels(dY * X * a, self.format)


class SumOverEverything(ChannelScale):
    def backward(self, dY, compute_gradients, X, a, b):
        xp = array_module(X)
        d_a = xp.sum(dY * X) * b  # also sums over the channels
        return dY * a * b, d_a, reduce_to_channels(dY * X * a, self.format)


class SameNameOtherFormat(ChannelScale):
    """``fmt`` names "BC" in the forward's check and "CB" in the backward's sum."""

    def forward(self, X, a, b):
        fmt = "BC"
        check_channel_parameters(fmt, X, self.name, a=a, b=b)
        return a * b * X

    def backward(self, dY, compute_gradients, X, a, b):
        fmt = "CB"
        d_a = reduce_to_channels(dY * X, fmt) * b
        return dY * a * b, d_a, reduce_to_channels(dY * X * a, self.format)


class UncheckedScale(SumThenFactor):
    """The right backward, but the forward does not check that b is channel-wise."""

    def forward(self, X, a, b):
        check_channel_parameters(self.format, X, self.name, a=a)
        return a * b * X


@pytest.mark.parametrize("cls", [SumThenFactor, FactorFirst, Divided, ByANumber])
def test_a_factor_constant_over_the_sum_is_read_as_the_sum_of_products(cls):
    op = cls()
    report = verify_symbolic(op, assume=["b > 0"] if cls is Divided else ())
    assert report.passed, report.text()
    assert all(c.verdict == "proved" for c in report.regions)
    dY, X, b = sp.symbols("dY X b", real=True)
    assert sp.simplify(report.entry("a", report.region_names()[0]).got - dY * X * b) == 0
    assert any(SCALED in note for note in report.notes), report.notes
    # and the numbers agree with finite differences (the reading is true of the code)
    rng = np.random.default_rng(0)
    inputs = (rng.standard_normal((5, 3)), rng.uniform(0.5, 2, (1, 3)), rng.uniform(0.5, 2, (1, 3)))
    d_Y = rng.standard_normal((5, 3))
    _, grads = op_vjp(op, inputs, (d_Y,))
    expected = numerical_gradient(lambda *args: op(*args), *inputs, d_output=d_Y)
    for got, want in zip(grads, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize(
    "cls", [PerElementFactor, AnotherFormat, SameNameOtherFormat, SumOverEverything]
)
def test_any_other_factor_of_a_sum_is_refused(cls):
    with pytest.raises(TranslationError, match="is used in further computation"):
        verify_symbolic(cls())


def test_a_parameter_not_checked_channel_wise_is_not_taken_as_one():
    with pytest.raises(TranslationError, match="is used in further computation"):
        verify_symbolic(UncheckedScale())


def test_srelu_sums_before_its_channel_wise_factors_and_is_still_proved():
    report = verify_symbolic(SReLUFunction("BC"), assume=["tl < tr"])
    assert report.passed, report.text()
    assert sum(SCALED in note for note in report.notes) == 2  # d_tl and d_tr
    dY, al = sp.symbols("dY al", real=True)
    assert report.entry("tl", "X < tl").got == dY * (1 - al)
