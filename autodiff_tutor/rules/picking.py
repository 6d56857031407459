"""Triangles, diagonals, picking by index and stacking: the arrangement primitives
that select or join (the others are in :mod:`~autodiff_tutor.rules.arrangement`).

Each gradient puts ``g`` back where the values came from: into a triangle or onto a
diagonal of zeros, at the picked indices (repeats accumulate), or cut into the joined
inputs' pieces. Those runtime helpers (``embed_diagonal``, ``untake_along_axis``,
``unjoin``) have rules here too, so a gradient is differentiable again: each is linear
in its gradient, and its adjoint is the primitive it undoes (``diagonal``,
``take_along_axis``, the stacking itself).

>>> import numpy as np
>>> take(np.ones(2), np, np.zeros(3), indices=np.array([2, 2])).tolist()
[0.0, 0.0, 2.0]
"""

import numpy as np

from autodiff_tutor.rules.arrangement import cases
from autodiff_tutor.rules.record import HELPER, SHAPE, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule, Fixed
from autodiff_tutor.runtime.helpers import (
    at,
    cast_like,
    embed_diagonal,
    scatter,
    unbroadcast,
    unjoin,
    untake_along_axis,
)

family = Family("picking", shape=SHAPE)
defvjp = family.defvjp


# --- triangles and diagonals --------------------------------------------------------------


@defvjp(
    "triu",
    math="upper triangle of x",
    symbolic=cases((((3, 3),), {}), (((2, 3),), {"k": 1}), (((3,),), {})),
    tangent="linear",
)
def triu(g, xp, x, k=0):
    return unbroadcast(xp.triu(g, k), x)  # a 1-D x is repeated into the rows of a square


@defvjp(
    "tril",
    math="lower triangle of x",
    symbolic=cases((((3, 3),), {}), (((2, 3),), {"k": -1}), (((3,),), {})),
    tangent="linear",
)
def tril(g, xp, x, k=0):
    return unbroadcast(xp.tril(g, k), x)  # a 1-D x is repeated into the rows of a square


@defvjp(
    "trace",
    math="sum_i x_ii",
    symbolic=cases(
        (((3, 3),), {}),
        (((2, 3),), {"offset": 1}),
        (((2, 2, 3),), {"axis1": 0, "axis2": 2}),
    ),
    method=True,
    tangent="linear",
)
def trace(g, xp, x, offset=0, axis1=0, axis2=1):
    eye = xp.eye(x.shape[axis1], x.shape[axis2], k=offset, dtype=x.dtype)
    return xp.moveaxis(xp.expand_dims(g, (-2, -1)) * eye, (-2, -1), (axis1, axis2))


@defvjp(
    "diagonal",
    view="view",
    math="(x_ii)_i",
    symbolic=cases(
        (((3, 3),), {}),
        (((2, 3),), {"offset": -1}),
        (((2, 2, 3),), {"axis1": 1, "axis2": 2, "offset": 1}),
    ),
    method=True,
    tangent="linear",
)
def diagonal(g, x, offset=0, axis1=0, axis2=1):
    return embed_diagonal(g, x, offset, axis1, axis2)


@defvjp(
    "diag",
    view="read",
    math="diagonal of a matrix, or a matrix with diagonal x",
    symbolic=cases((((3,),), {}), (((2, 3),), {"k": 1}), (((2,),), {"k": -1})),
    tangent="linear",
)
def diag(g, xp, x, k=0):
    return xp.diagonal(g, k) if x.ndim == 1 else embed_diagonal(g, x, k)


# --- picking by index -----------------------------------------------------------------------


@defvjp(
    "take",
    math="x[indices] along axis",
    latex=r"x[\mathit{indices}] \text{ along an axis}",
    convention="repeated indices accumulate",
    symbolic=cases(
        (((4,),), {"indices": np.array([0, 2, 2])}),
        (((2, 3),), {"indices": np.array([[1], [0]]), "axis": 1}),
    ),
    method=True,
    tangent="linear",
)
def take(g, xp, x, indices=None, axis=None):
    return (
        xp.reshape(scatter(g, xp.reshape(x, (-1,)), at[indices]), x.shape)
        if axis is None
        else scatter(g, x, at[(slice(None),) * (axis % x.ndim) + (indices,)])
    )


@defvjp(
    "take_along_axis",
    math="x[..., indices, ...] along axis",
    latex=r"x[\dots, \mathit{indices}, \dots] \text{ along an axis}",
    convention="repeated indices accumulate",
    symbolic=cases(
        (((2, 3),), {"indices": np.array([[0], [2]]), "axis": 1}),
        (((3, 2),), {"indices": np.array([[0, 1], [0, 1]]), "axis": 0}),
    ),
    tangent="linear",
)
def take_along_axis(g, x, indices=None, axis=-1):
    return untake_along_axis(g, x, indices, axis)


# --- stacking ------------------------------------------------------------------------------


def _joined(how):
    shapes = [
        (([(2,), (2,)],), {}),
        (
            ({"vstack": [(1, 2), (2,)], "dstack": [(2, 2), (2, 2, 1)]}.get(how, [(2, 2), (2, 1)]),),
            {},
        ),
    ]
    return cases(*shapes)


@defvjp(
    "hstack",
    sequence=True,
    math="[x_1 x_2 ...] side by side",
    symbolic=_joined("hstack"),
    tangent="linear",
)
def hstack(g, xs):
    return unjoin(g, xs, "hstack")


@defvjp(
    "vstack",
    sequence=True,
    math="[x_1; x_2; ...] one above the other",
    symbolic=_joined("vstack"),
    tangent="linear",
)
def vstack(g, xs):
    return unjoin(g, xs, "vstack")


@defvjp(
    "dstack",
    sequence=True,
    math="x_1, x_2, ... along a third axis",
    symbolic=_joined("dstack"),
    tangent="linear",
)
def dstack(g, xs):
    return unjoin(g, xs, "dstack")


@defvjp(
    "column_stack",
    sequence=True,
    math="x_1, x_2, ... as columns",
    symbolic=_joined("column_stack"),
    tangent="linear",
)
def column_stack(g, xs):
    return unjoin(g, xs, "column_stack")


# --- the helpers above, differentiable again ------------------------------------------------


@defvjp(
    "embed_diagonal",
    shape=HELPER,
    math="zeros like x with grad on a diagonal",
    symbolic=ArrayRule(
        cases=[(((2,), (2, 3)), {}), (((2, 2), (2, 3, 3)), {"offset": 1, "axis1": 1, "axis2": 2})]
    ),
    tangent="linear",
)
def embed_diagonal_(g, xp, grad, x, offset=0, axis1=0, axis2=1):
    return cast_like(xp.diagonal(g, offset, axis1, axis2), grad), None


@defvjp(
    "untake_along_axis",
    shape=HELPER,
    math="zeros like x, grad added at the picked places",
    latex=r"0_x \text{ with } \mathit{grad} \text{ added at } \mathit{indices}",
    convention="repeated indices accumulate",
    symbolic=ArrayRule(cases=[(((2, 1), (2, 3), Fixed(np.array([[0], [2]]))), {"axis": 1})]),
    tangent="linear",
)
def untake_along_axis_(g, xp, grad, x, indices, axis=-1):
    return unbroadcast(cast_like(xp.take_along_axis(g, indices, axis), grad), grad), None, None


@defvjp(
    "unjoin",
    shape=HELPER,
    list_result=True,
    math="grad cut into the joined inputs' pieces",
    symbolic=ArrayRule(
        cases=[
            (((2, 3), [(3,), (1, 3)], Fixed("vstack")), {}),
            (((5,), [(2,), (3,)], Fixed("hstack")), {}),
        ],
    ),
    tangent="linear",
)
def unjoin_(g, xp, grad, xs, how):
    return cast_like(getattr(xp, str(how))(g), grad), None, None
