"""numpy's numerical routines in user programs (``np.cross``, ``np.convolve``,
``np.trapezoid``, ``np.polyval``, ``np.median``, ``np.quantile``, ``np.percentile``,
``np.interp``), in both modes and forward mode, against central differences (float64);
autograd too where it has a rule (``cross``), else its twin written with the routine's
definition. The rules themselves are also walked by the registry tests (numeric,
tangents, symbolic, empty inputs) through ``tests/rule_cases_numerical.py``."""

import numpy as np
import pytest
from oracles import autograd_gradient
from program_checks import assert_gradient_in_every_mode

from autodiff_tutor import grad, vjp

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


def robust(x):
    return np.median(x) * np.sum(np.median(np.stack([x, x**2]), axis=1))


def robust_twin(x):  # near X: x[1] < x[0] < x[2], so the median is x[0]
    return x[0] * (x[0] + np.sort(x**2)[1])


def spread(x):
    q = 0.75
    return np.quantile(x, q) - np.percentile(x, 10)


def spread_twin(x):  # near X: sorted x[1] < x[0] < x[2]; positions 1.5 and 0.2
    return (0.5 * x[0] + 0.5 * x[2]) - (0.8 * x[1] + 0.2 * x[0])


def lookup_table(x):
    knots = np.array([0.0, 1.0, 2.0]) + 0.1 * x  # sample points that move with x
    return np.sum(np.interp(np.array([0.3, 1.4, -1.0]), knots, x**2) * np.interp(x, knots, x))


def lookup_table_twin(x):  # near X: knots 0.03, 0.88, 2.08; 0.3 and 1.4 inside, -1 below
    knots, values = np.array([0.0, 1.0, 2.0]) + 0.1 * x, x**2
    at_03 = values[0] + (0.3 - knots[0]) * (values[1] - values[0]) / (knots[1] - knots[0])
    at_14 = values[1] + (1.4 - knots[1]) * (values[2] - values[1]) / (knots[2] - knots[1])
    inner = [  # x = 0.3, -1.2, 0.8: in the first segment, below, in the first segment
        x[0] + (x[0] - knots[0]) * (x[1] - x[0]) / (knots[1] - knots[0]),
        x[0],
        x[0] + (x[2] - knots[0]) * (x[1] - x[0]) / (knots[1] - knots[0]),
    ]
    return at_03 * inner[0] + at_14 * inner[1] + values[0] * inner[2]


PROGRAMS = {
    torque: torque,
    smoothed: smoothed_twin,
    integral: integral_twin,
    polynomial: polynomial_twin,
    robust: robust_twin,
    spread: spread_twin,
    lookup_table: lookup_table_twin,
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


def test_median_over_several_axes_is_refused_at_the_call():
    from autodiff_tutor.errors import NoDerivativeRuleError

    def middle(x):
        return np.median(x.reshape(1, 3), axis=(0, 1))

    with pytest.raises(NoDerivativeRuleError, match="axis=") as caught:
        grad(middle)(X)
    assert caught.value.location.filename == __file__
    assert "reshape" in caught.value.hint


def test_a_quantile_at_several_q_is_refused_in_both_modes():
    from autodiff_tutor.errors import NoDerivativeRuleError
    from autodiff_tutor.tracing import value_and_gradient

    def deciles(x):
        return np.sum(np.percentile(x, [10, 90]))

    for call in (lambda: grad(deciles)(X), lambda: value_and_gradient(deciles, X)):
        with pytest.raises(NoDerivativeRuleError, match="several q") as caught:
            call()
        assert caught.value.location.filename == __file__
        assert "once per q" in caught.value.hint


def scan(x):
    return np.sum(np.cumprod(x) * np.cos(x)) + np.sum(x.cumprod()[::2])


def scan_twin(x):  # the products written out
    y = [x[0]]
    for value in x[1:]:
        y.append(y[-1] * value)
    y = np.stack(y)
    return np.sum(y * np.cos(x)) + np.sum(y[::2])


def test_cumprod_is_exact_at_zeros_in_every_mode():
    """The scan's first zero gets the product of the others, a later one 0 (not nan, as a
    rule dividing by x would give)."""
    x = np.array([0.7, 0.0, -1.2, 0.0, 0.9])
    assert_gradient_in_every_mode(scan, scan_twin, x, np.array([0.5, -1.0, 2.0, 0.3, -0.7]))
    v = np.array([0.3, -0.8, 0.5, 1.1, -0.4])
    _, pullback = vjp(grad(scan), x)
    (hv,) = pullback(v)
    h = 1e-5  # the twin's gradient (autograd) differenced along v
    along = [autograd_gradient(scan_twin, [x + t * v], 0) for t in (h, -h)]
    np.testing.assert_allclose(hv, (along[0] - along[1]) / (2 * h), rtol=1e-6, atol=1e-8)
