"""numpy's numerical routines: the cross product, 1-D convolution, the trapezoid rule,
polynomial evaluation, linear interpolation and ``np.gradient``.

Each is linear in each operand, so its vjp is the transposed map (the helpers in
:mod:`autodiff_tutor.runtime.helpers_numerical`) and its jvp the routine applied to
the tangents. ``np.cross`` takes 3-vectors and 2-vectors (numpy's, deprecated there)
along ``axis``; ``np.trapezoid``'s sample points ``x`` and spacing ``dx`` are options
(no gradient).

>>> import numpy as np
>>> e1, e2, e3 = np.eye(3)
>>> [d.tolist() for d in cross(e3, np, e1, e2)]  # <e3, e1 x e2> = 1
[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
"""

from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.rules.record import Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule, NumericOnly
from autodiff_tutor.runtime.helpers import (
    convolve_operand,
    cross_operand,
    gradient_axis,
    gradient_operand,
    interp_knots_tangent,
    interp_operand,
    polyval_operand,
    trapezoid_weights,
    unbroadcast,
)

family = Family("numerical")
defvjp, defjvp = family.defvjp, family.defjvp


@defvjp(
    "cross",
    math="x × y",
    latex=r"x \times y",
    convention="along axis (the same for both operands and the result); a 2-vector has "
    "a zero third component",
    symbolic=ArrayRule(
        cases=[(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((3, 2), (3, 2)), {"axis": 0})]
    ),
    tangent="multilinear by keyword",
)
def cross(g, xp, x, y, axis=None):
    return (
        unbroadcast(cross_operand(g, x, y, 0, axis), x),
        unbroadcast(cross_operand(g, x, y, 1, axis), y),
    )


@defvjp(
    "convolve",
    math="sum_k x_k y_(n-k)",
    latex=r"\sum_k x_k\, y_{n-k}",
    convention="1-D operands, as numpy's; mode 'full', 'same' or 'valid'",
    symbolic=ArrayRule(
        cases=[
            (((3,), (2,)), {}),
            (((4,), (2,)), {"mode": "same"}),
            (((2,), (4,)), {"mode": "valid"}),
        ],
    ),
    tangent="multilinear",
)
def convolve(g, x, y, mode="full"):
    return convolve_operand(g, x, y, 0, mode), convolve_operand(g, x, y, 1, mode)


@defvjp(
    "trapezoid",
    math="sum_i (y_i + y_(i+1)) (x_(i+1) - x_i) / 2",
    latex=r"\sum_i \tfrac{1}{2} (y_i + y_{i+1}) (x_{i+1} - x_i)",
    convention="the sample points x and the spacing dx carry no gradient",
    symbolic=ArrayRule(cases=[(((4,),), {}), (((2, 3),), {"axis": 0, "dx": 0.5})]),
    tangent="linear by keyword",
)
def trapezoid(g, xp, y, x=None, dx=1.0, axis=-1):
    return xp.expand_dims(g, axis) * trapezoid_weights(y, x, dx, axis)


@defvjp(
    "polyval",
    math="sum_k p_k x^(n-1-k)",
    latex=r"\sum_k p_k\, x^{n-1-k}",
    convention="p is 1-D, highest power first, as numpy's",
    symbolic=ArrayRule(cases=[(((2,), (3,)), {}), (((3,), (2,)), {})]),
)
def polyval(g, p, x):
    return polyval_operand(g, p, x, 0), polyval_operand(g, p, x, 1)


@defjvp("polyval")
def polyval_tangent(xp, p, x, *, d_p, d_x):
    return xp.polyval(d_p, x) + polyval_operand(d_x, p, x, 1)


def _no_period(period=None):
    """The interp rule covers non-periodic interpolation."""
    if period is not None:
        raise NoDerivativeRuleError(
            "no derivative rule for np.interp with period=",
            hint="wrap x into one period first (np.mod(x - x0, period) + x0), then interpolate",
        )


@defvjp(
    "interp",
    math="piecewise linear through (xp, fp), at x",
    latex=r"f_i + (x - x_i) \frac{f_{i+1} - f_i}{x_{i+1} - x_i}",
    convention="at a sample point, the segment that starts there; outside xp's range the "
    "value is constant (fp's end, or left/right): no gradient for x and xp there",
    check=_no_period,
    symbolic=NumericOnly("np.interp finds each x's segment by comparing numbers"),
)
def interp(g, x, knots, fp, left=None, right=None, period=None):
    return (
        interp_operand(g, x, knots, fp, 0, left, right),
        interp_operand(g, x, knots, fp, 1, left, right),
        interp_operand(g, x, knots, fp, 2, left, right),
    )


@defjvp("interp")
def interp_tangent(xp, x, knots, fp, left=None, right=None, period=None, *, d_x, d_knots, d_fp):
    return (
        interp_operand(d_x, x, knots, fp, 0, left, right)
        + interp_knots_tangent(x, knots, fp, d_knots)
        + xp.interp(x, knots, d_fp, None if left is None else 0.0, None if right is None else 0.0)
    )


def _one_spacing(more_spacing=None, axis=None, edge_order=1):
    """The gradient rule covers one axis, one spacing and first-order edges."""
    if more_spacing is not None or isinstance(axis, (tuple, list)):
        raise NoDerivativeRuleError(
            "no derivative rule for np.gradient along several axes, or a tuple of axes "
            "(numpy returns one array per axis)",
            hint="differentiate along one axis per call, with one spacing: "
            "np.gradient(f, h, axis=0)",
        )
    if edge_order != 1:
        raise NoDerivativeRuleError(
            f"no derivative rule for np.gradient with edge_order={edge_order!r}",
            hint="leave edge_order at 1 (one-sided first differences at the edges)",
        )


def _gradient_by_definition(xp, f, h=1.0, axis=None):
    """np.gradient written out with slices (the symbolic check's primal: numpy's own
    computes in floating point and does not run on symbols)."""
    m = xp.moveaxis(f, 0 if axis is None else axis, -1)
    first, last = m[..., 1:2] - m[..., :1], m[..., -1:] - m[..., -2:-1]
    y = xp.concatenate([first, (m[..., 2:] - m[..., :-2]) / 2, last], axis=-1) / h
    return xp.moveaxis(y, -1, 0 if axis is None else axis)


@defvjp(
    "gradient",
    math="y_i = (f_(i+1) - f_(i-1)) / 2h inside; (f_1 - f_0) / h, (f_(n-1) - f_(n-2)) / h "
    "at the edges",
    latex=r"y_i = \frac{f_{i+1} - f_{i-1}}{2h}",
    convention="one scalar spacing h (no gradient), one axis (given, or the only one), "
    "edge_order=1",
    check=_one_spacing,
    symbolic=ArrayRule(
        lambda xp, f, spacing=1.0, axis=None: _gradient_by_definition(xp, f, spacing, axis),
        [(((4,),), {}), (((2,),), {"spacing": 0.5}), (((3, 4),), {"axis": 1, "spacing": 2.0})],
    ),
)
def gradient(g, f, spacing=1.0, more_spacing=None, axis=None, edge_order=1):
    # more_spacing: a second positional spacing (numpy's *varargs), refused by the check
    return gradient_operand(g, f, spacing, axis)


@defjvp("gradient")
def gradient_tangent(xp, f, spacing=1.0, more_spacing=None, axis=None, edge_order=1, *, d_f):
    return xp.gradient(d_f, spacing, axis=gradient_axis(f, spacing, axis))
