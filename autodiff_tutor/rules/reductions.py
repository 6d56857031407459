"""Rules of reductions: sum, mean, max, min, prod (with ``axis`` and ``keepdims``).

``unreduce`` puts back the axes a reduction removed, so each rule reads like its
formula: the gradient of a sum is the output gradient copied to every element.

>>> import numpy as np
>>> sum_(np.float64(2.0), np.ones(3)).tolist()
[2.0, 2.0, 2.0]
"""

from autodiff_tutor.rules.registry import defvjp
from autodiff_tutor.runtime.helpers import prod_others, size, tie_share, unreduce


@defvjp("sum", math="sum_i x_i")
def sum_(g, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims)


@defvjp("mean", math="(1/n) sum_i x_i")
def mean(g, out, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims) * (size(out) / size(x))


@defvjp("max", math="max_i x_i", convention="ties share the gradient equally")
def max_(g, out, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims) * tie_share(
        x, out, axis=axis, keepdims=keepdims
    )


@defvjp("min", math="min_i x_i", convention="ties share the gradient equally")
def min_(g, out, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims) * tie_share(
        x, out, axis=axis, keepdims=keepdims
    )


@defvjp("prod", math="prod_i x_i", convention="exact at zeros (product of the others)")
def prod(g, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims) * prod_others(x, axis=axis)
