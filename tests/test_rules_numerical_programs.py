"""numpy's numerical routines in user programs (``np.cross``, ``np.convolve``,
``np.trapezoid``, ``np.polyval``; refused before for want of a rule), in both modes
and forward mode, against central differences (float64); autograd too where it has a
rule (``cross``), else its twin written with the routine's definition. The rules
themselves are also walked by the registry tests (numeric, tangents, symbolic, empty
inputs) through ``tests/rule_cases_numerical.py``."""

import numpy as np
import pytest
from program_checks import assert_gradient_in_every_mode

X = np.array([0.3, -1.2, 0.8])


def torque(x):
    return np.sum(np.cross(x, [0.0, 0.0, 1.0]) ** 2) + np.sum(np.cross([1.0, 2.0, 0.5], x) * x)


def smoothed(x):
    return np.sum(np.convolve([1.0, 2.0], np.tanh(x), mode="same") ** 2)


def integral(x):
    return np.trapezoid(x**2, x=[0.0, 0.5, 1.5])


def polynomial(x):
    return np.sum(np.polyval([1.0, -2.0, 0.5], x)) + np.polyval(x, 0.7)


def smoothed_twin(x):  # np.convolve(a, t, "same") for len(a)=2, len(t)=3, written out
    t = np.tanh(x)
    full = np.stack([t[0], 2 * t[0] + t[1], 2 * t[1] + t[2], 2 * t[2]])
    return np.sum(full[:3] ** 2)


def integral_twin(x):
    y = x**2
    return 0.5 * (y[0] + y[1]) * 0.5 + 0.5 * (y[1] + y[2]) * 1.0


def polynomial_twin(x):
    return np.sum(x**2 - 2 * x + 0.5) + x[0] * 0.49 + x[1] * 0.7 + x[2]


PROGRAMS = {
    torque: torque,
    smoothed: smoothed_twin,
    integral: integral_twin,
    polynomial: polynomial_twin,
}


@pytest.mark.parametrize("fn", list(PROGRAMS), ids=lambda f: f.__name__)
def test_numerical_routines_in_both_modes(fn):
    assert_gradient_in_every_mode(fn, PROGRAMS[fn], X, np.array([0.5, -1.0, 2.0]))


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
def test_cross_of_2_vectors_in_both_modes():
    def area(x):
        return np.sum(np.cross(x[:2], x[1:]) ** 2) + np.sum(np.cross(x[None, :2], [1.0, 0.5]))

    def area_twin(x):
        return (x[0] * x[2] - x[1] * x[1]) ** 2 + (x[0] * 0.5 - x[1])

    assert_gradient_in_every_mode(area, area_twin, X, np.array([0.5, -1.0, 2.0]))
