"""Helpers for the rules of numpy's numerical routines (:mod:`autodiff_tutor.rules.
numerical` and ``statistics``): the cross product, 1-D convolution, the trapezoid
rule, polynomial evaluation, ``np.gradient`` and the median.

>>> import numpy as np
>>> trapezoid_weights(np.ones(4)).tolist()
[0.5, 1.0, 1.0, 0.5]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.runtime.backend import array_module, cast_like

__all__ = [
    "convolve_operand",
    "cross_operand",
    "gradient_axis",
    "gradient_operand",
    "interp_knots_tangent",
    "interp_operand",
    "median_weights",
    "polyval_operand",
    "trapezoid_weights",
]


def cross_operand(g: Any, x: Any, y: Any, which: int, axis: int | None = None) -> Any:
    """The gradient of ``np.cross(x, y, axis=axis)`` for operand ``which``, before
    summing over broadcast axes: ``<g, x × y> = <x, y × g> = <y, g × x>``. A 2-vector
    is the 3-vector with a zero third component (two 2-vectors give the third
    component of their product, as numpy computes it).

    >>> import numpy as np
    >>> e1, e2, e3 = np.eye(3)
    >>> cross_operand(e3, e1, e2, 1).tolist()
    [0.0, 1.0, 0.0]
    >>> cross_operand(np.float64(1.0), np.array([1.0, 2.0]), np.array([3.0, 4.0]), 0).tolist()
    [4.0, -3.0]
    """
    xp = array_module(g)
    x, y = xp.asarray(x), xp.asarray(y)  # a constant operand may be a list
    a = -1 if axis is None else axis
    xs, ys = xp.moveaxis(x, a, -1), xp.moveaxis(y, a, -1)
    if xs.shape[-1] == 2 and ys.shape[-1] == 2:  # g is the third component only
        gs = xp.asarray(g)[..., None] * xp.asarray([0.0, 0.0, 1.0], dtype=g.dtype)
    else:
        gs = xp.moveaxis(g, a, -1)
    xs, ys = (xp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, 3 - v.shape[-1])]) for v in (xs, ys))
    d = xp.cross(ys, gs) if which == 0 else xp.cross(gs, xs)
    operand = x if which == 0 else y
    return cast_like(xp.moveaxis(d[..., : operand.shape[a]], -1, a), operand)


def convolve_operand(g: Any, x: Any, y: Any, which: int, mode: str = "full") -> Any:
    """The gradient of ``np.convolve(x, y, mode)`` for operand ``which``: ``g`` placed
    where its entries sit in the full convolution, correlated with the other operand.

    >>> import numpy as np
    >>> convolve_operand(np.ones(4), np.ones(2), np.array([1.0, 2.0, 3.0]), 0).tolist()
    [6.0, 6.0]
    """
    xp = array_module(g)
    x, y = xp.asarray(x), xp.asarray(y)  # a constant operand may be a list
    n, m = x.shape[0], y.shape[0]
    full = n + m - 1
    offset = {"full": 0, "same": (min(n, m) - 1) // 2, "valid": min(n, m) - 1}[mode]
    placed = xp.pad(g, (offset, full - offset - g.shape[0]))
    other, operand = (y, x) if which == 0 else (x, y)
    return cast_like(xp.correlate(placed, other, "valid"), operand)


def trapezoid_weights(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """The weight of each ``y`` value in ``np.trapezoid(y, x, dx, axis)``: half the
    widths of the intervals on either side (shaped to broadcast along ``axis``).

    >>> import numpy as np
    >>> trapezoid_weights(np.ones(3), x=np.array([0.0, 1.0, 3.0])).tolist()
    [0.5, 1.5, 1.0]
    """
    xp = array_module(y)
    n = y.shape[axis]
    if n < 2:  # no interval: the integral is 0 whatever y is
        return xp.zeros_like(y)
    if x is None:
        widths = xp.full((n - 1,), dx, dtype=y.dtype)
    else:
        x = xp.asarray(x)
        widths = xp.diff(x, axis=axis if x.ndim > 1 else -1)
    if widths.ndim == 1:  # one row of sample points, laid along axis
        shape = [1] * y.ndim
        shape[axis] = n - 1
        widths = xp.reshape(widths, tuple(shape))
    edge = list(widths.shape)
    edge[axis] = 1
    zero = xp.zeros(tuple(edge), dtype=widths.dtype)
    before = xp.concatenate([zero, widths], axis=axis)
    after = xp.concatenate([widths, zero], axis=axis)
    return cast_like((before + after) / 2, y)


def polyval_operand(g: Any, p: Any, x: Any, which: int) -> Any:
    """The gradient of ``np.polyval(p, x)`` (``p`` 1-D, highest power first) for
    operand ``which``: the powers of ``x`` weighed by ``g`` for ``p``, ``g`` times the
    derivative polynomial for ``x``.

    >>> import numpy as np
    >>> polyval_operand(np.float64(1.0), np.array([1.0, 0.0, 0.0]), np.float64(3.0), 1)
    np.float64(6.0)
    """
    xp = array_module(g)
    p, x_array = xp.asarray(p), xp.asarray(x)  # a constant operand may be a list
    n = p.shape[0]
    if which == 0:
        powers = x_array[..., None] ** xp.arange(n - 1, -1, -1, dtype=x_array.dtype)
        return cast_like(xp.tensordot(g, powers, axes=xp.ndim(g)), p)
    slopes = p[:-1] * xp.arange(n - 1, 0, -1, dtype=p.dtype)
    powers = x_array[..., None] ** xp.arange(n - 2, -1, -1, dtype=x_array.dtype)
    return cast_like(g * xp.sum(slopes * powers, axis=-1), x)


def median_weights(x: Any, axis: int | None = None, q: float = 0.5, scale: float = 1) -> Any:
    """The weight of each value of ``x`` in ``np.median(x, axis)``: 1 for the middle
    one in sorted order, 1/2 for each of the two middle ones of an even count, 0
    elsewhere (ties: numpy's stable order picks which). With ``q``, the weights of
    ``np.quantile(x, q, axis)`` (numpy's 'linear' method: the two values around the
    position ``q (n - 1)`` in sorted order, weighed by how near it they are); ``q`` is
    in ``[0, scale]`` (100 for ``np.percentile``).

    >>> import numpy as np
    >>> median_weights(np.array([3.0, 1.0, 2.0])).tolist()
    [0.0, 0.0, 1.0]
    >>> median_weights(np.array([[4.0, 1.0, 3.0, 2.0]]), axis=1).tolist()
    [[0.0, 0.0, 0.5, 0.5]]
    >>> median_weights(np.array([0.0, 10.0, 20.0]), q=0.25).tolist()
    [0.5, 0.5, 0.0]
    """
    xp = array_module(x)
    if np.ndim(q) != 0:
        raise NoDerivativeRuleError(
            f"no derivative rule for a quantile at several q ({q!r})",
            hint="call np.quantile (or np.percentile) once per q",
        )
    values = xp.reshape(x, (-1,)) if axis is None else xp.moveaxis(x, axis, -1)
    n = values.shape[-1]
    if n == 0:
        return xp.zeros_like(x)
    position = float(q) / scale * (n - 1)
    low = min(int(position // 1), n - 1)
    high = min(low + 1, n - 1)
    middle = xp.zeros(n, dtype=x.dtype)
    middle[low] += 1 - (position - low)
    middle[high] += position - low
    rank = xp.argsort(xp.argsort(values, axis=-1, kind="stable"), axis=-1, kind="stable")
    weights = middle[rank]
    return xp.reshape(weights, x.shape) if axis is None else xp.moveaxis(weights, -1, axis)


def _segments(x: Any, knots: Any, values: Any) -> tuple[Any, ...]:
    """For each ``x``: its segment's start index, the next index, the fraction ``t``
    of the way through, the slope, and whether it lies below or above the knots."""
    xp = array_module(x, knots)
    n = knots.shape[0]
    segment = xp.clip(xp.searchsorted(knots, x, side="right") - 1, 0, max(n - 2, 0))
    following = xp.minimum(segment + 1, n - 1)
    start, end = knots[segment], knots[following]
    width = xp.where(end > start, end - start, 1)
    t = xp.clip((x - start) / width, 0, 1)
    slope = (values[following] - values[segment]) / width
    return segment, following, t, slope, x < knots[0], x > knots[-1]


def interp_operand(
    g: Any, x: Any, xp_: Any, fp: Any, which: int, left: Any = None, right: Any = None
) -> Any:
    """The gradient of ``np.interp(x, xp_, fp, left, right)`` for ``x`` (``which`` 0:
    ``g`` times the slope of the segment ``x`` falls in), for the sample points
    ``xp_`` (1: moving an end of the segment moves the line through it) or for ``fp``
    (2: ``g`` shared between the two ends of the segment by how near ``x`` is to
    each). Outside ``xp_``'s range the value is constant: no gradient for ``x`` and
    ``xp_``, all of it to the end value of ``fp`` unless ``left``/``right`` replace it.
    At a sample point, the segment that starts there.

    >>> import numpy as np
    >>> knots, values = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0])
    >>> interp_operand(np.ones(2), np.array([0.5, 2.0]), knots, values, 0).tolist()
    [2.0, 0.5]
    >>> interp_operand(np.ones(2), np.array([0.5, 2.0]), knots, values, 2).tolist()
    [0.5, 1.0, 0.5]
    """
    xp = array_module(g)
    x, knots, values = xp.asarray(x), xp.asarray(xp_), xp.asarray(fp)
    segment, following, t, slope, below, above = _segments(x, knots, values)
    outside = below | above
    if which == 0:
        return cast_like(g * xp.where(outside, 0, slope), x)
    if which == 1:  # f = f_i + t (f_i+1 - f_i), t = (x - x_i) / (x_i+1 - x_i)
        low, high = g * slope * (t - 1), -g * slope * t
        low, high = xp.where(outside, 0, low), xp.where(outside, 0, high)
        target = knots
    else:
        low, high = g * (1 - t), g * t
        if left is not None:
            low, high = xp.where(below, 0, low), xp.where(below, 0, high)
        if right is not None:
            low, high = xp.where(above, 0, low), xp.where(above, 0, high)
        target = values
    n = target.shape[0]
    d = xp.bincount(xp.reshape(segment, (-1,)), xp.reshape(low, (-1,)), minlength=n)
    d = d + xp.bincount(xp.reshape(following, (-1,)), xp.reshape(high, (-1,)), minlength=n)
    return cast_like(d, target)


def interp_knots_tangent(x: Any, xp_: Any, fp: Any, d_knots: Any) -> Any:
    """The tangent of ``np.interp(x, xp_, fp)`` along ``d_knots``, a move of the
    sample points (the transpose of interp_operand for them).

    >>> import numpy as np
    >>> knots, values = np.array([0.0, 1.0]), np.array([0.0, 2.0])
    >>> interp_knots_tangent(np.array([0.5]), knots, values, np.array([1.0, 1.0])).tolist()
    [-2.0]
    """
    xp = array_module(d_knots)
    x, knots, values = xp.asarray(x), xp.asarray(xp_), xp.asarray(fp)
    segment, following, t, slope, below, above = _segments(x, knots, values)
    moved = slope * ((t - 1) * d_knots[segment] - t * d_knots[following])
    return xp.where(below | above, 0, moved)


def gradient_operand(g: Any, f: Any, spacing: Any = 1.0, axis: int | None = None) -> Any:
    """The gradient of ``np.gradient(f, spacing, axis=axis)`` (``edge_order=1``) for
    ``f``: the transpose of its linear map. Inside, ``y_i = (f_(i+1) - f_(i-1)) / 2h``
    sends ``g_i / 2h`` to ``f_(i+1)`` and minus it to ``f_(i-1)``; at the edges,
    ``y_0 = (f_1 - f_0) / h`` and ``y_(n-1) = (f_(n-1) - f_(n-2)) / h``.

    >>> import numpy as np
    >>> gradient_operand(np.array([0.0, 1.0, 0.0, 0.0]), np.zeros(4), 0.5).tolist()
    [-1.0, 0.0, 1.0, 0.0]
    >>> gradient_operand(np.ones((2, 3)), np.zeros((2, 3)), axis=1).tolist()
    [[-1.5, 0.0, 1.5], [-1.5, 0.0, 1.5]]
    """
    xp = array_module(g)
    a = gradient_axis(f, spacing, axis)
    rows = xp.moveaxis(g, a, -1) / spacing
    n = rows.shape[-1]
    middle = rows[..., 1:-1] / 2
    first, last = rows[..., :1], rows[..., -1:]

    def placed(part: Any, before: int) -> Any:  # part at positions before.. along the axis
        def zeros(k: int) -> Any:
            return xp.zeros((*part.shape[:-1], k), dtype=part.dtype)

        return xp.concatenate([zeros(before), part, zeros(n - before - part.shape[-1])], axis=-1)

    moved = placed(middle, 2) - placed(middle, 0)  # f_(i+1) gets +, f_(i-1) gets -
    moved = moved + placed(xp.concatenate([-first, first], axis=-1), 0)
    moved = moved + placed(xp.concatenate([-last, last], axis=-1), n - 2)
    return cast_like(xp.moveaxis(moved, -1, a), f)


def gradient_axis(f: Any, spacing: Any = 1.0, axis: int | None = None) -> int:
    """The one axis ``np.gradient(f, spacing, axis=axis)`` differentiates along, when
    its rule covers the call: one axis (given, or the only one), one scalar spacing.

    >>> import numpy as np
    >>> gradient_axis(np.zeros((2, 3)), axis=-1)
    1
    >>> gradient_axis(np.zeros((2, 3)))
    Traceback (most recent call last):
    autodiff_tutor.errors.NoDerivativeRuleError: no derivative rule for np.gradient of a 2-D...
    """
    ndim = np.ndim(f)
    if axis is None and ndim != 1:
        raise NoDerivativeRuleError(
            f"no derivative rule for np.gradient of a {ndim}-D array without axis= "
            "(numpy returns one array per axis)",
            hint="differentiate along one axis per call: np.gradient(f, h, axis=0)",
        )
    if np.ndim(spacing) != 0:
        raise NoDerivativeRuleError(
            "no derivative rule for np.gradient with sample coordinates as spacing",
            hint="give one scalar spacing (uniform samples); for uneven samples, the "
            "one-sided quotients np.diff(f) / np.diff(x) have a rule",
        )
    return 0 if axis is None else int(axis) % ndim
