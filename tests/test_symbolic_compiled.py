"""The generated backward of compiled (``@differentiable``) piecewise programs, proved
region by region with verify_compiled, the compiled-function entry point."""

from __future__ import annotations

import numpy as np
import pytest

from autodiff_tutor.api import differentiable
from autodiff_tutor.ops import prelu_reference, srelu_reference
from autodiff_tutor.verify.symbolic import verify_compiled, verify_symbolic


def relu(x):
    return np.maximum(x, 0.0)


def leaky_relu(x):
    return np.where(x > 0, x, 0.1 * x)


def abs_error(x, t):
    return np.abs(x - t)


def huber(x, delta):
    small = np.abs(x) <= delta
    return np.sum(small * 0.5 * x * x + (1 - small) * delta * (np.abs(x) - 0.5 * delta))


def clip(x, lo, hi):
    return np.clip(x, lo, hi)


def hinge(x, y):
    return np.maximum(0.0, 1.0 - y * x)


def soft_threshold(x, t):
    return np.sign(x) * np.maximum(np.abs(x) - t, 0.0)


def relu6(x):
    return np.minimum(np.maximum(x, 0.0), 6.0)


def quadratic_then_linear(x):
    return np.where(x < 0, x * x, x)


def ramp(x, a, b):
    return ((a < x) & (x < b)) * (x - a) + (x >= b) * (b - a)


PROGRAMS = [
    (relu, (), ["x < 0", "x > 0"]),
    (leaky_relu, (), ["x < 0", "x > 0"]),
    (abs_error, (), ["x < t", "x > t"]),
    (huber, ["delta > 0"], ["x < -delta", "-delta < x < 0", "0 < x < delta", "x > delta"]),
    (clip, ["lo < hi"], ["x < lo", "lo < x < hi", "x > hi"]),
    (srelu_reference, ["tl < tr"], ["X < tl", "tl < X < tr", "X > tr"]),
    (prelu_reference, (), ["X < 0", "X > 0"]),
    (hinge, (), None),
    (soft_threshold, ["t > 0"], ["x < -t", "-t < x < 0", "0 < x < t", "x > t"]),
    (relu6, (), ["x < 0", "0 < x < 6", "x > 6"]),
    (quadratic_then_linear, (), ["x < 0", "x > 0"]),
    (ramp, ["a < b"], ["x < a", "a < x < b", "x > b"]),
]


@pytest.mark.parametrize(
    ("fn", "assume", "regions"), PROGRAMS, ids=lambda v: getattr(v, "__name__", None)
)
def test_generated_backward_verifies(fn, assume, regions) -> None:
    compiled = differentiable(fn)
    report = verify_compiled(compiled, assume=assume)
    assert report.passed, compiled.backward_source() + "\n" + report.text()
    assert all(c.verdict == "proved" for c in report.regions), report.text()
    if regions is not None:
        assert report.region_names() == regions
    assert set(report.inputs) == set(compiled.params)


def test_at_least_ten_piecewise_programs() -> None:
    assert len(PROGRAMS) >= 10


def test_wrt_selects_the_inputs_checked() -> None:
    report = verify_compiled(differentiable(srelu_reference), wrt=["X", "al"], assume=["tl < tr"])
    assert report.passed
    assert report.inputs == ("X", "al")
    assert {c.input for c in report.regions} == {"X", "al"}


def test_verify_symbolic_takes_a_compiled_function_directly() -> None:
    report = verify_symbolic(differentiable(relu6))
    assert report.passed
    kinks = {k.boundary: k for k in report.kinks}
    assert set(kinks) == {"x = 0", "x = 6"}
