"""Arrangement primitives: flips, rolls and rotations, broadcasts, axis moves, tiling,
repeating, padding, triangles and diagonals, picking by index, and stacking.

Like :mod:`~autodiff_tutor.rules.shapes`, each moves values without changing them, so
its gradient moves ``g`` back (flip it again, roll it the other way, cut the padding
off, add the copies up) and its tangent moves as the values do. The helpers that undo
a move (``untile``, ``unrepeat``...) are in :mod:`autodiff_tutor.runtime.helpers_arrays`
(``unpad`` in :mod:`autodiff_tutor.runtime.helpers_pad`).

>>> import numpy as np
>>> roll(np.arange(3.0), np, np.zeros(3), shift=1).tolist()
[1.0, 2.0, 0.0]
"""

from autodiff_tutor.rules.record import HELPER, SHAPE, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule
from autodiff_tutor.runtime.helpers import (
    negated,
    pad_mode_covered,
    unbroadcast,
    unpad,
    unrepeat,
    untile,
)

family = Family("arrangement", shape=SHAPE)
defvjp, defjvp = family.defvjp, family.defjvp


def cases(*settings):
    """An array check of the primitive for each ``(input shapes, options)``."""
    return ArrayRule(cases=list(settings))


# --- flips, rolls, rotations ------------------------------------------------------------


@defvjp(
    "flip",
    view="view",
    math="x reversed along axis",
    symbolic=cases((((2, 3),), {}), (((2, 3),), {"axis": 1})),
    tangent="linear",
)
def flip(g, xp, x, axis=None):
    return xp.flip(g, axis)


@defvjp(
    "fliplr",
    view="view",
    math="x reversed left-right",
    symbolic=cases((((2, 3),), {})),
    tangent="linear",
)
def fliplr(g, xp, x):
    return xp.fliplr(g)


@defvjp(
    "flipud",
    view="view",
    math="x reversed up-down",
    symbolic=cases((((2, 3),), {})),
    tangent="linear",
)
def flipud(g, xp, x):
    return xp.flipud(g)


@defvjp(
    "roll",
    math="x shifted cyclically by shift",
    symbolic=cases(
        (((4,),), {"shift": 1}),
        (((2, 3),), {"shift": (1, -1), "axis": (0, 1)}),
        (((2, 3),), {"shift": 2}),
    ),
    tangent="linear",
)
def roll(g, xp, x, shift=0, axis=None):
    return xp.roll(g, negated(shift), axis)


@defvjp(
    "rot90",
    view="view",
    math="x rotated by k quarter turns",
    symbolic=cases((((2, 3),), {}), (((2, 3, 2),), {"k": 3, "axes": (1, 2)})),
    tangent="linear",
)
def rot90(g, xp, x, k=1, axes=(0, 1)):
    return xp.rot90(g, -k, axes)


# --- broadcasts, flattening, axis moves -------------------------------------------------


@defvjp(
    "broadcast_to",
    view="view",
    math="x broadcast to shape",
    symbolic=cases((((3, 1),), {"shape": (2, 3, 4)})),
    tangent="linear",
)
def broadcast_to(g, x, shape=None):
    return unbroadcast(g, x)


# ravel, flatten and atleast_nd keep the elements in their order: g is reshaped back


def reshaped_back(g, xp, x):
    return xp.reshape(g, x.shape)


def flattened(xp, x, *, d_x):
    return xp.reshape(d_x, (-1,))


defvjp(
    "ravel",
    view="reshape",
    math="x flattened",
    symbolic=cases((((2, 3),), {})),
    method=True,
)(reshaped_back)
defjvp("ravel")(flattened)
defvjp(
    "flatten",
    math="x flattened (a copy)",
    symbolic=ArrayRule(lambda xp, x: x.flatten(), [(((2, 3),), {})]),
    method=True,
)(reshaped_back)
defjvp("flatten")(flattened)


@defvjp(
    "swapaxes",
    view="view",
    math="x with two axes exchanged",
    symbolic=cases((((2, 3, 2),), {"axis1": 0, "axis2": 2})),
    method=True,
    tangent="linear",
)
def swapaxes(g, xp, x, axis1=0, axis2=1):
    return xp.swapaxes(g, axis1, axis2)


@defvjp(
    "moveaxis",
    view="view",
    math="x with axes moved from source to destination",
    symbolic=cases(
        (((2, 3, 2),), {"source": 0, "destination": -1}),
        (((2, 3, 2),), {"source": (0, 1), "destination": (2, 0)}),
    ),
    tangent="linear",
)
def moveaxis(g, xp, x, source=0, destination=0):
    return xp.moveaxis(g, destination, source)


for _n, _axes in ((1, "1 axis"), (2, "2 axes"), (3, "3 axes")):
    defvjp(
        f"atleast_{_n}d",
        view="reshape",
        math=f"x with at least {_axes}",
        symbolic=cases((((),), {}), (((3,),), {})),
        tangent="linear",
    )(reshaped_back)


# --- copies: tile, repeat, pad ------------------------------------------------------------


@defvjp(
    "tile",
    math="x repeated reps times as a block",
    symbolic=cases((((2,),), {"reps": 2}), (((2, 1),), {"reps": (2, 1, 3)})),
    tangent="linear",
)
def tile(g, x, reps=1):
    return untile(g, x, reps)


@defvjp(
    "repeat",
    math="each element of x repeated",
    symbolic=cases((((2, 2),), {"repeats": 2}), (((3, 2),), {"repeats": [1, 0, 2], "axis": 0})),
    method=True,
    tangent="linear",
)
def repeat(g, x, repeats=1, axis=None):
    return unrepeat(g, x, repeats, axis)


@defvjp(
    "pad",
    math="x surrounded by constant_values, or by copies of its own values",
    latex=r"x \text{ surrounded by padding}",
    convention="modes 'constant' (the constant gets no gradient), 'edge', 'reflect', "
    "'symmetric' and 'wrap' (a copied value's gradient goes back to it); the others are "
    "refused at the call",
    check=pad_mode_covered,
    symbolic=cases(
        (((2, 2),), {"pad_width": 1}),
        (((2, 3),), {"pad_width": ((0, 1), (2, 0)), "constant_values": 5}),
        (((3, 2),), {"pad_width": ((2, 1), (1, 1)), "mode": "reflect"}),
        (((3,),), {"pad_width": (2, 3), "mode": "wrap"}),
        (((2, 2),), {"pad_width": 1, "mode": "edge"}),
        (((3,),), {"pad_width": (3, 1), "mode": "symmetric"}),
    ),
)
def pad(g, x, pad_width=0, mode="constant", constant_values=0):
    return unpad(g, pad_width, mode)


@defjvp("pad")
def pad_tangent(xp, x, pad_width=0, mode="constant", constant_values=0, *, d_x):
    return xp.pad(d_x, pad_width, mode=mode)


@defvjp(
    "unpad",
    shape=HELPER,
    math="the adjoint of pad: the padding cut off, or added onto the values it copies",
    check=pad_mode_covered,
    symbolic=cases(
        (((4, 3),), {"pad_width": 1}),
        (((5,),), {"pad_width": (2, 1), "mode": "reflect"}),
        (((4,),), {"pad_width": 1, "mode": "edge"}),
    ),
    tangent="linear",
)
def unpad_(g, xp, grad, pad_width=0, mode="constant"):
    return xp.pad(g, pad_width, mode=mode)  # unpad is pad's transpose, mode by mode
