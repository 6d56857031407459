"""Rules of shape primitives: reshape, transpose, squeeze, expand_dims,
concatenate, stack, and reading by index (``x[i]``, ``x[1:, 2]``, masks).

A shape primitive moves values without changing them, so its gradient moves ``g``
back: reshape it, transpose it back, split it, or scatter it into zeros.

>>> import numpy as np
>>> transpose(np.zeros((3, 2)), np.zeros((2, 3))).shape
(2, 3)
"""

from autodiff_tutor.rules.registry import defvjp
from autodiff_tutor.runtime.helpers import (
    at,
    cast_like,
    overwritten,
    scatter,
    split_like,
    unbroadcast,
    unstack,
    untranspose,
)


@defvjp("reshape", math="reshape(x)")
def reshape(g, xp, x, shape=None):
    return xp.reshape(g, x.shape)


@defvjp("squeeze", math="squeeze(x)")
def squeeze(g, xp, x, axis=None):
    return xp.reshape(g, x.shape)


@defvjp("expand_dims", math="expand_dims(x)")
def expand_dims(g, xp, x, axis=None):
    return xp.reshape(g, x.shape)


@defvjp("transpose", math="x^T")
def transpose(g, x, axes=None):
    return g.T if axes is None else untranspose(g, axes)


@defvjp("concatenate", sequence=True, math="[x_1, x_2, ...]")
def concatenate(g, xs, axis=0):
    return split_like(g, xs, axis=axis)


@defvjp("stack", sequence=True, math="stack(x_1, x_2, ...)")
def stack(g, xs, axis=0):
    return unstack(g, axis=axis)


@defvjp("getitem", math="x[i]", convention="repeated indices accumulate")
def getitem(g, x, index=None):
    return scatter(g, x, at[index])


@defvjp("setitem", math="x with x[i] = v", convention="the overwritten entries get no gradient")
def setitem(g, x, value, index=None):
    return overwritten(g, at[index]), unbroadcast(g[index], value)


@defvjp("list_append", math="xs + [x]")
def list_append(g, xs, x):
    return g[:-1], g[-1]


@defvjp("make_list", sequence=True, math="[x_1, x_2, ...]")
def make_list(g, xs):
    return g


@defvjp("astype", math="x (cast)", convention="the gradient is cast back to x's dtype")
def astype(g, x, dtype=None):
    return cast_like(g, x)


@defvjp("copy", math="copy of x")
def copy(g, x):
    return g
