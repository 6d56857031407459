"""Splitting an array into a list of pieces: ``split``, ``array_split``, ``hsplit``,
``vsplit``, ``dsplit``.

Each returns a *list* of arrays (``list_result``): the compiler and tracing give the
rule one gradient per piece (zeros for the pieces nobody read), and the gradient of
the whole is those pieces joined back along the split axis (``unsplit``, a runtime
helper with a rule of its own here, so that the gradient is differentiable again: its
adjoint cuts a gradient into pieces, ``split_like``). The tangent is the tangent split
the same way.

>>> import numpy as np
>>> split([np.ones(2), 2 * np.ones(2)], np.zeros(4), 2).tolist()
[1.0, 1.0, 2.0, 2.0]
"""

from autodiff_tutor.rules.record import HELPER, SHAPE, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule
from autodiff_tutor.runtime.helpers import split_like, unsplit

family = Family("splits", shape=SHAPE)
defvjp, defjvp = family.defvjp, family.defjvp


def _cases(axis_option: bool) -> list:
    """Symbolic cases: equal sections, and split points (uneven pieces)."""
    cases = [(((4, 2),), {"indices_or_sections": 2}), (((4, 2),), {"indices_or_sections": [1, 3]})]
    if axis_option:
        cases.append((((2, 4),), {"indices_or_sections": [3], "axis": -1}))
    return cases


@defvjp(
    "split",
    view="split",
    list_result=True,
    math="[x_1, x_2, ...] = split(x)",
    symbolic=ArrayRule(cases=_cases(True)),
)
def split(g, x, indices_or_sections=1, axis=0):
    return unsplit(g, axis)


@defjvp("split")
def split_tangent(xp, x, indices_or_sections=1, axis=0, *, d_x):
    return xp.split(d_x, indices_or_sections, axis=axis)


@defvjp(
    "array_split",
    view="split",
    list_result=True,
    math="[x_1, x_2, ...] = array_split(x) (pieces of unequal sizes)",
    symbolic=ArrayRule(cases=[*_cases(True), (((5, 2),), {"indices_or_sections": 3})]),
)
def array_split(g, x, indices_or_sections=1, axis=0):
    return unsplit(g, axis)


@defjvp("array_split")
def array_split_tangent(xp, x, indices_or_sections=1, axis=0, *, d_x):
    return xp.array_split(d_x, indices_or_sections, axis=axis)


@defvjp(
    "hsplit",
    view="split",
    list_result=True,
    math="split along axis 1 (axis 0 of a vector)",
    symbolic=ArrayRule(
        cases=[(((2, 4),), {"indices_or_sections": 2}), (((4,),), {"indices_or_sections": [1]})]
    ),
    tangent="linear",
)
def hsplit(g, x, indices_or_sections=1):
    return unsplit(g, 1 if x.ndim > 1 else 0)


@defvjp(
    "vsplit",
    view="split",
    list_result=True,
    math="split along axis 0",
    symbolic=ArrayRule(cases=[(((4, 2),), {"indices_or_sections": [1]})]),
    tangent="linear",
)
def vsplit(g, x, indices_or_sections=1):
    return unsplit(g, 0)


@defvjp(
    "dsplit",
    view="split",
    list_result=True,
    math="split along axis 2",
    symbolic=ArrayRule(cases=[(((1, 2, 4),), {"indices_or_sections": 2})]),
    tangent="linear",
)
def dsplit(g, x, indices_or_sections=1):
    return unsplit(g, 2)


@defvjp(
    "unsplit",
    shape=HELPER,
    math="the pieces of grad joined along axis",
    symbolic=ArrayRule(cases=[(([(1, 2), (2, 2)],), {"axis": 0})]),
    tangent="linear by keyword",
)
def unsplit_(g, grad, axis=0):
    return split_like(g, grad, axis=axis)
