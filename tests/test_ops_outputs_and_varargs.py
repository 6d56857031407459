"""Multi-output ops and ops with a variable number of inputs (the seeds' ``varargin``):
check_op validates them, and both AD modes use their backward, matching central
finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import DifferentiableFunction, array_module, check_op, differentiable, grad
from autodiff_tutor.tracing import evaluate, gradient, last_tape, traced

rng = np.random.default_rng(10)


class Polar(DifferentiableFunction):
    """(x, y) -> (r, theta): two inputs, two outputs."""

    def __init__(self):
        super().__init__(
            num_outputs=2, save_inputs_for_backward=True, save_outputs_for_backward=True
        )

    def forward(self, x, y):
        xp = array_module(x)
        return xp.sqrt(x * x + y * y), xp.atan2(y, x)

    def backward(self, d_r, d_theta, compute_gradients, x, y, r, theta):
        dx = d_r * x / r - d_theta * y / (r * r) if compute_gradients[0] else None
        dy = d_r * y / r + d_theta * x / (r * r) if compute_gradients[1] else None
        return dx, dy


class Norm(DifferentiableFunction):
    """sqrt(x1**2 + ... + xn**2) for any number n of inputs."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True, save_outputs_for_backward=True)

    def forward(self, *xs):
        xp = array_module(*xs)
        return xp.sqrt(sum(x * x for x in xs))

    def backward(self, d_y, compute_gradients, *saved):
        *xs, y = saved  # the inputs, then the output
        return tuple(
            d_y * x / y if flag else None for x, flag in zip(xs, compute_gradients, strict=True)
        )


polar, norm = Polar(), Norm()


def test_check_op_passes_a_two_output_op():
    report = check_op(polar, rng.standard_normal((5, 2)), rng.standard_normal((5, 2)))
    assert report.passed
    assert report["finite differences"].status == "passed"


@pytest.mark.parametrize("count", [1, 2, 4])
def test_check_op_passes_a_variable_argument_op(count):
    inputs = [rng.standard_normal((3, 2)) for _ in range(count)]
    report = check_op(norm, *inputs)
    assert report.passed
    assert report["compute_gradients"].status == "passed"


def test_check_op_catches_a_variable_argument_backward_that_drops_an_input():
    class Dropping(Norm):
        def backward(self, d_y, compute_gradients, *saved):
            *xs, y = saved
            return tuple(d_y * x / y for x in xs[:-1])  # one gradient short

    report = check_op(Dropping(), *(rng.standard_normal((3, 2)) for _ in range(3)))
    assert not report.passed


def model(a, b, c):
    r, theta = polar(a, b)
    return np.sum(r * theta + norm(a, b, c))


def model_plain(a, b, c):
    return np.sum(np.hypot(a, b) * np.arctan2(b, a) + np.sqrt(a * a + b * b + c * c))


def test_both_modes_use_the_backward_and_agree_with_finite_differences():
    args = [rng.standard_normal(3) + 2.0 for _ in range(3)]
    expected = [central_difference(model_plain, args, i) for i in range(3)]

    def traced_model(a, b, c):
        return gradient(model(a, b, c), a, b, c)

    from_tracing = evaluate(traced_model, *(traced(x) for x in args))
    assert [r.op for r in last_tape().records] == ["Polar", "multiply", "Norm", "add", "sum"]
    from_compiler = grad(differentiable(model), wrt=["a", "b", "c"])(*args)
    for got_t, got_c, want in zip(from_tracing, from_compiler, expected, strict=True):
        np.testing.assert_allclose(got_t, want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(got_c, want, rtol=1e-6, atol=1e-8)
