"""What the widget tests show in their views: a function with a hand-written backward
(right and wrong) for the verification view, and a custom op whose gradient is wrong
for the check report view."""

from __future__ import annotations

import numpy as np

from autodiff_tutor.ops import DifferentiableFunction


def leaky(x, a):
    return np.where(x > 0, x, a * x)


def leaky_backward(d_y, x, a):
    return d_y * np.where(x > 0, 1.0, a), d_y * np.where(x > 0, 0.0, x)


def leaky_wrong(d_y, x, a):
    return d_y * np.where(x > 0, 1.0, a), d_y * np.where(x > 0, x, 0.0)  # d_a on the wrong side


class Cube(DifferentiableFunction):
    """``x**3`` whose backward is wrong (``2 x^2``): its check report fails."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x * x * x

    def backward(self, d_y, compute_gradients, x):
        return 2 * x * x * d_y  # wrong: should be 3 x^2
