"""Statistics and scans: var, std, ptp, nansum, nanmean, average, median, quantile,
percentile, cumsum, cumprod, diff and sort (its values).

Each rule reads like its formula, with ``unreduce`` putting back the axes a reduction
removed (as in :mod:`~autodiff_tutor.rules.reductions`); ``ddof``, ``axis`` and
``keepdims`` are numpy's. A nan is spotted as ``x != x`` (true only for nan), which
every array library and the symbolic checker evaluate alike.

>>> import numpy as np
>>> x = np.array([1.0, 2.0, 4.0])
>>> var(np.float64(1.0), np.var(x), np, x).tolist()  # 2 (x - mean) / n
[-0.88..., -0.22..., 1.11...]
"""

import numpy as np

from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.rules.record import HELPER, REDUCTION, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule, NumericOnly
from autodiff_tutor.runtime.helpers import (
    cast_like,
    cumprod_grad,
    cumprod_jvp,
    median_weights,
    size,
    tie_share,
    undo_diff,
    unreduce,
    weights_like,
)

family = Family("statistics", shape=REDUCTION)
defvjp, defjvp = family.defvjp, family.defjvp

STAT_CASES = [
    (((2, 3),), {}),
    (((2, 3),), {"axis": 0}),
    (((2, 3),), {"axis": -1, "keepdims": True, "ddof": 1}),
    (((2, 2, 2),), {"axis": (0, 2)}),
]


@defvjp(
    "var",
    math="sum_i (x_i - mean)^2 / (n - ddof)",
    symbolic=ArrayRule(cases=STAT_CASES),
    method=True,
)
def var(g, out, xp, x, axis=None, ddof=0, keepdims=False):
    centered = x - xp.mean(x, axis=axis, keepdims=True)
    return (
        unreduce(g, x, axis=axis, keepdims=keepdims) * 2 * centered / (size(x) / size(out) - ddof)
    )


@defjvp("var")
def var_tangent(out, xp, x, axis=None, ddof=0, keepdims=False, *, d_x):
    centered = x - xp.mean(x, axis=axis, keepdims=True)
    return xp.sum(2 * centered * d_x, axis=axis, keepdims=keepdims) / (size(x) / size(out) - ddof)


@defvjp(
    "std",
    math="sqrt(var(x))",
    latex=r"\sqrt{\operatorname{var}(x)}",
    convention="where std = 0 (constant slices) the gradient is 0, a subgradient (as norm's)",
    symbolic=ArrayRule(lambda xp, x, **o: xp.sqrt(xp.var(x, **o)), STAT_CASES),
    method=True,
)
def std(g, out, xp, x, axis=None, ddof=0, keepdims=False):
    centered = x - xp.mean(x, axis=axis, keepdims=True)
    scale = g / (xp.where(out == 0, 1, out) * (size(x) / size(out) - ddof))
    return unreduce(scale, x, axis=axis, keepdims=keepdims) * centered


@defjvp("std")
def std_tangent(out, xp, x, axis=None, ddof=0, keepdims=False, *, d_x):
    centered = x - xp.mean(x, axis=axis, keepdims=True)
    scale = xp.where(out == 0, 1, out) * (size(x) / size(out) - ddof)
    return xp.sum(centered * d_x, axis=axis, keepdims=keepdims) / scale


@defvjp(
    "ptp",
    math="max_i x_i - min_i x_i",
    latex=r"\max_i x_i - \min_i x_i",
    convention="ties of the max (or of the min) share the gradient equally",
    symbolic=NumericOnly("the checker orders symbols for a max or for a min, not both"),
)
def ptp(g, xp, x, axis=None, keepdims=False):
    top = xp.max(x, axis=axis, keepdims=keepdims)
    bottom = xp.min(x, axis=axis, keepdims=keepdims)
    share = tie_share(x, top, axis=axis, keepdims=keepdims)
    return unreduce(g, x, axis=axis, keepdims=keepdims) * (
        share - tie_share(x, bottom, axis=axis, keepdims=keepdims)
    )


@defjvp("ptp")
def ptp_tangent(xp, x, axis=None, keepdims=False, *, d_x):
    top = xp.max(x, axis=axis, keepdims=keepdims)
    bottom = xp.min(x, axis=axis, keepdims=keepdims)
    share = tie_share(x, top, axis=axis, keepdims=keepdims)
    share = share - tie_share(x, bottom, axis=axis, keepdims=keepdims)
    return xp.sum(d_x * share, axis=axis, keepdims=keepdims)


@defvjp(
    "nansum",
    math="sum of the x_i that are not nan",
    latex=r"\sum_{i:\ x_i \ne \text{nan}} x_i",
    convention="nan entries get gradient 0",
    symbolic=ArrayRule(lambda xp, x, **o: xp.sum(x, **o), [(((2, 3),), {"axis": 0})]),
)
def nansum(g, xp, x, axis=None, keepdims=False):
    return xp.where(x != x, 0, unreduce(g, x, axis=axis, keepdims=keepdims))


@defjvp("nansum")
def nansum_tangent(xp, x, axis=None, keepdims=False, *, d_x):
    return xp.sum(xp.where(x != x, 0, d_x), axis=axis, keepdims=keepdims)


@defvjp(
    "nanmean",
    math="mean of the x_i that are not nan",
    latex=r"\operatorname{mean}_{i:\ x_i \ne \text{nan}} x_i",
    convention="nan entries get gradient 0; the others 1/count",
    symbolic=ArrayRule(lambda xp, x, **o: xp.mean(x, **o), [(((2, 3),), {"axis": 0})]),
)
def nanmean(g, xp, x, axis=None, keepdims=False):
    count = xp.sum(x == x, axis=axis, keepdims=True, dtype=x.dtype)
    return xp.where(x != x, 0, unreduce(g, x, axis=axis, keepdims=keepdims) / count)


@defjvp("nanmean")
def nanmean_tangent(xp, x, axis=None, keepdims=False, *, d_x):
    return xp.sum(xp.where(x != x, 0, d_x), axis=axis, keepdims=keepdims) / xp.sum(
        x == x, axis=axis, keepdims=keepdims, dtype=x.dtype
    )


@defvjp(
    "average",
    math="sum_i w_i x_i / sum_i w_i",
    symbolic=ArrayRule(
        cases=[(((2, 3),), {}), (((2, 3),), {"axis": 1, "weights": np.array([1, 2, 3])})]
    ),
)
def average(g, xp, x, axis=None, weights=None, keepdims=False):
    w = xp.ones_like(x) if weights is None else weights_like(weights, x, axis)
    total = xp.sum(w, axis=axis, keepdims=True)
    return cast_like(unreduce(g, x, axis=axis, keepdims=keepdims) * w / total, x)


@defjvp("average")
def average_tangent(xp, x, axis=None, weights=None, keepdims=False, *, d_x):
    w = xp.ones_like(x) if weights is None else weights_like(weights, x, axis)
    return xp.sum(w * d_x, axis=axis, keepdims=keepdims) / xp.sum(w, axis=axis, keepdims=keepdims)


# --- scans and differences -------------------------------------------------------------
# With axis=None numpy scans the flattened array; flipping a 1-d array along None flips
# it, so one formula covers both (the result is reshaped to x's shape).

SCAN_CASES = [(((2, 3),), {"axis": 0}), (((2, 3),), {"axis": -1}), (((2, 2),), {})]


@defvjp(
    "cumsum",
    math="y_i = sum_{j <= i} x_j",
    symbolic=ArrayRule(cases=SCAN_CASES),
    method=True,
    tangent="linear by keyword",
)
def cumsum(g, xp, x, axis=None):
    return xp.reshape(xp.flip(xp.cumsum(xp.flip(g, axis), axis), axis), x.shape)


@defvjp(
    "cumprod",
    math="y_i = prod_{j <= i} x_j",
    latex=r"y_i = \prod_{j \le i} x_j",
    convention="exact at zeros (no division by x: see runtime.helpers_scans)",
    symbolic=ArrayRule(cases=SCAN_CASES),
    method=True,
)
def cumprod(g, out, xp, x, axis=None):
    return cumprod_grad(g, x, axis)


@defjvp("cumprod")
def cumprod_tangent(out, xp, x, axis=None, *, d_x):
    return cumprod_jvp(x, d_x, axis)


@defvjp(
    "diff",
    math="y_i = x_{i+1} - x_i (n times)",
    symbolic=ArrayRule(cases=[(((4,),), {}), (((2, 4),), {"n": 2}), (((3, 2),), {"axis": 0})]),
    tangent="linear by keyword",
)
def diff(g, x, n=1, axis=-1):
    return undo_diff(g, n, axis)


@defvjp(
    "undo_diff",
    shape=HELPER,
    math="the adjoint of diff: (-1)^n diff(pad(grad, n), n)",
    symbolic=ArrayRule(cases=[(((3,),), {}), (((2, 2),), {"n": 2}), (((2, 2),), {"axis": 0})]),
    tangent="linear",
)
def undo_diff_(g, xp, grad, n=1, axis=-1):
    return cast_like(xp.diff(g, n=n, axis=axis), grad)  # undo_diff is diff's transpose


@defvjp(
    "sort",
    math="the values of x in increasing order",
    latex=r"\text{the values of } x \text{ in increasing order}",
    convention="ties: each sorted slot gets the gradient of one input, in numpy's stable order",
    symbolic=NumericOnly("sympy cannot order symbols: argsort needs numbers"),
)
def sort(g, xp, x, axis=-1, kind=None):
    where = xp.argsort(xp.argsort(x, axis=axis, kind="stable"), axis=axis, kind="stable")
    return xp.reshape(xp.take_along_axis(g, xp.reshape(where, g.shape), axis=axis), x.shape)


@defjvp("sort")
def sort_tangent(xp, x, axis=-1, kind=None, *, d_x):
    order = xp.argsort(x, axis=axis, kind="stable")
    return xp.take_along_axis(xp.reshape(d_x, order.shape), order, axis=axis)


def _median_axis(axis=None):
    """The median rule covers ``axis=None`` or one axis (not a tuple of axes)."""
    if isinstance(axis, (tuple, list)):
        raise NoDerivativeRuleError(
            f"no derivative rule for np.median with axis={axis!r}",
            hint="give one axis (or none); for several, move them together and reshape "
            "first: np.median(x.reshape(n, -1), axis=1)",
        )


@defvjp(
    "median",
    math="the middle value of x (the mean of the two middle ones for an even count)",
    latex=r"\operatorname{median}(x)",
    convention="ties: the gradient goes to the values numpy's stable order puts in the "
    "middle; axis is None or one axis",
    check=_median_axis,
    symbolic=NumericOnly("sympy cannot order symbols: the median needs numbers"),
)
def median(g, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims) * median_weights(x, axis)


@defjvp("median")
def median_tangent(xp, x, axis=None, keepdims=False, *, d_x):
    return xp.sum(median_weights(x, axis) * d_x, axis=axis, keepdims=keepdims)


def _quantile_method(method="linear"):
    """The quantile rules cover numpy's default 'linear' method."""
    if method != "linear":
        raise NoDerivativeRuleError(
            f"no derivative rule for a quantile with method={method!r}",
            hint="the quantile and percentile rules cover method='linear' (numpy's default)",
        )


QUANTILE = dict(
    convention="method='linear' (between the two values around the position q (n - 1) "
    "in sorted order); ties: numpy's stable order; q one number, axis None or one axis",
    check=_quantile_method,
    symbolic=NumericOnly("sympy cannot order symbols: a quantile needs numbers"),
)


@defvjp(
    "quantile",
    math="the value a fraction q of the way through sorted x",
    latex=r"x_{(q (n - 1))} \text{ in sorted order}",
    **QUANTILE,
)
def quantile(g, x, q=0.5, axis=None, keepdims=False, method="linear"):
    return median_weights(x, axis, q) * unreduce(g, x, axis=axis, keepdims=keepdims)


@defjvp("quantile")
def quantile_tangent(xp, x, q=0.5, axis=None, keepdims=False, method="linear", *, d_x):
    return xp.sum(median_weights(x, axis, q) * d_x, axis=axis, keepdims=keepdims)


@defvjp(
    "percentile",
    math="the quantile at q / 100",
    latex=r"x_{(q (n - 1) / 100)} \text{ in sorted order}",
    **QUANTILE,
)
def percentile(g, x, q=50.0, axis=None, keepdims=False, method="linear"):
    return median_weights(x, axis, q, 100) * unreduce(g, x, axis=axis, keepdims=keepdims)


@defjvp("percentile")
def percentile_tangent(xp, x, q=50.0, axis=None, keepdims=False, method="linear", *, d_x):
    return xp.sum(median_weights(x, axis, q, 100) * d_x, axis=axis, keepdims=keepdims)
