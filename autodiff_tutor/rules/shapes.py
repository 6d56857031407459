"""Shape primitives: reshape, transpose, squeeze, expand_dims, concatenate, stack,
reading by index (``x[i]``, ``x[1:, 2]``, masks), writing by index, lists and casts.

A shape primitive moves values without changing them, so its gradient moves ``g``
back (reshape it, transpose it back, split it, or scatter it into zeros) and its
tangent moves exactly as the values do.

>>> import numpy as np
>>> transpose(np.zeros((3, 2)), np.zeros((2, 3))).shape
(2, 3)
"""

import operator

import numpy as np

from autodiff_tutor.rules.record import SHAPE, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule, ScalarRule
from autodiff_tutor.runtime.backend import has_float_dtype, zeros_like
from autodiff_tutor.runtime.helpers import (
    assign_at,
    at,
    cast_like,
    inverse_axes,
    overwritten,
    scatter,
    split_like,
    unbroadcast,
    unstack,
    untranspose,
)

family = Family("shapes", shape=SHAPE)
defvjp, defjvp = family.defvjp, family.defjvp


@defvjp(
    "reshape",
    view="reshape",
    math="reshape(x)",
    symbolic=ArrayRule(
        lambda xp, x, shape=None: xp.reshape(x, shape), [(((2, 3),), {"shape": (3, 2)})]
    ),
    method=True,
    tangent="linear",
)
def reshape(g, xp, x, shape=None):
    return xp.reshape(g, x.shape)


@defvjp(
    "squeeze",
    view="reshape",
    math="squeeze(x)",
    symbolic=ArrayRule(lambda xp, x, axis=None: xp.squeeze(x, axis), [(((1, 3),), {"axis": 0})]),
    method=True,
    tangent="linear by keyword",
)
def squeeze(g, xp, x, axis=None):
    return xp.reshape(g, x.shape)


@defvjp(
    "expand_dims",
    view="reshape",
    math="expand_dims(x)",
    symbolic=ArrayRule(lambda xp, x, axis=None: xp.expand_dims(x, axis), [(((3,),), {"axis": -1})]),
    tangent="linear by keyword",
)
def expand_dims(g, xp, x, axis=None):
    return xp.reshape(g, x.shape)


@defvjp(
    "transpose",
    view="view",
    math="x^T",
    symbolic=ArrayRule(
        lambda xp, x, axes=None: xp.transpose(x, axes),
        [(((2, 3),), {}), (((2, 1, 3),), {"axes": (2, 0, 1)})],
    ),
    aliases=("permute_dims",),
    method=True,
    attribute="T",
)
def transpose(g, x, axes=None):
    return g.T if axes is None else untranspose(g, axes)


@defjvp("transpose")
def transpose_tangent(x, axes=None, *, d_x):
    return d_x.T if axes is None else untranspose(d_x, inverse_axes(axes))


@defvjp(
    "concatenate",
    sequence=True,
    math="[x_1, x_2, ...]",
    symbolic=ArrayRule(
        lambda xp, xs, axis=0: xp.concatenate(xs, axis=axis),
        [
            (([(2, 2), (1, 2)],), {"axis": 0}),
            (([(2, 1), (2, 2)],), {"axis": -1}),
            (([(2, 1), (3,)],), {"axis": None}),
        ],
    ),
    aliases=("concat",),
    tangent="linear by keyword",
)
def concatenate(g, xs, axis=0):
    return split_like(g, xs, axis=axis)


@defvjp(
    "stack",
    sequence=True,
    math="stack(x_1, x_2, ...)",
    symbolic=ArrayRule(
        lambda xp, xs, axis=0: xp.stack(xs, axis=axis), [(([(2,), (2,)],), {"axis": 1})]
    ),
    tangent="linear by keyword",
)
def stack(g, xs, axis=0):
    return unstack(g, axis=axis)


@defvjp(
    "getitem",
    view="view",
    math="x[i]",
    latex=r"x[i]",
    convention="repeated indices accumulate",
    symbolic=ArrayRule(
        lambda xp, x, index=None: x[index],
        [
            (((3, 2),), {"index": 1}),
            (((3, 2),), {"index": (slice(None), 0)}),
            (((3, 2),), {"index": (Ellipsis, None)}),
            (((3,),), {"index": np.array([0, 2, 0])}),
            (((3,),), {"index": np.array([True, False, True])}),
        ],
    ),
    aliases=(operator.getitem,),
)
def getitem(g, x, index=None):
    return scatter(g, x, at[index])


@defjvp("getitem")
def getitem_tangent(x, index=None, *, d_x):
    return d_x[index]


def _setitem(xp, x, value, index=None):
    y = x.copy()
    y[index] = value
    return y


@defvjp(
    "setitem",
    math="x with x[i] = v",
    latex=r"x \text{ with } x[i] = v",
    convention="the overwritten entries get no gradient",
    symbolic=ArrayRule(
        _setitem,
        [
            (((3, 2), (2,)), {"index": 1}),
            (((3, 2), ()), {"index": (slice(None), 0)}),
            (((3,), (2,)), {"index": np.array([True, False, True])}),
        ],
    ),
)
def setitem(g, x, value, index=None):
    return overwritten(g, at[index]), unbroadcast(g[index], value)


@defjvp("setitem")
def setitem_tangent(x, value, index=None, *, d_x, d_value):
    return overwritten(d_x, at[index]) + assign_at(zeros_like(x), at[index], d_value)


@defvjp(
    "list_append",
    list_result=True,
    math="xs + [x]",
    symbolic=ArrayRule(
        lambda xp, xs, x: xs + [x], [(([(2,), (1, 2)], (2,)), {}), (([], (3,)), {})]
    ),
)
def list_append(g, xs, x):
    return g[:-1], g[-1]


@defjvp("list_append")
def list_append_tangent(xs, x, *, d_xs, d_x):
    return [*d_xs, d_x]


def _list_setitem(xp, xs, x, index=0):
    ys = list(xs)
    ys[index] = x
    return ys


@defvjp(
    "list_setitem",
    list_result=True,
    math="xs with xs[i] = x",
    latex=r"xs \text{ with } xs[i] = x",
    convention="the replaced item gets no gradient",
    symbolic=ArrayRule(
        _list_setitem,
        [
            (([(2,), (1, 2)], (3,)), {"index": 0}),
            (([(2,), (3,), (1,)], (2, 2)), {"index": -1}),
        ],
    ),
)
def list_setitem(g, xs, x, index=0):
    return assign_at(g, at[index], zeros_like(xs[index])), g[index]


@defjvp("list_setitem")
def list_setitem_tangent(xs, x, index=0, *, d_xs, d_x):
    return assign_at(d_xs, at[index], d_x)


@defvjp(
    "make_list",
    sequence=True,
    list_result=True,
    math="[x_1, x_2, ...]",
    symbolic=ArrayRule(lambda xp, xs: list(xs), [(([(2,), (2, 1)],), {})]),
    tangent="symmetric",
)
def make_list(g, xs):
    return g


@defvjp(
    "astype",
    math="x (cast)",
    latex=r"x\ \text{(cast)}",
    convention=(
        "the gradient is cast back to x's dtype; a cast to integers or booleans is"
        " piecewise constant: zero gradient"
    ),
    symbolic=ScalarRule(lambda xp, x: x),
    method=True,
)
def astype(g, out, x, dtype=None):
    return cast_like(g, x) if has_float_dtype(out) else zeros_like(x)


@defjvp("astype")
def astype_tangent(out, x, dtype=None, *, d_x):
    return cast_like(d_x, out) if has_float_dtype(out) else zeros_like(out)


@defvjp(
    "copy",
    math="copy of x",
    symbolic=ScalarRule(lambda xp, x: x),
    method=True,
    tangent="symmetric",
)
def copy(g, x):
    return g
