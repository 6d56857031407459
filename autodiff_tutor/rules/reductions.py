"""Reductions: sum, mean, max, min, prod (with ``axis`` and ``keepdims``).

``unreduce`` puts back the axes a reduction removed, so each rule reads like its
formula: the gradient of a sum is the output gradient copied to every element. Each
record also says how sympy checks it: on object arrays of symbols, for the option
settings of :data:`REDUCTION_CASES` (max and min on ordered elements, and at ties).

>>> import numpy as np
>>> sum_(np.float64(2.0), np.ones(3)).tolist()
[2.0, 2.0, 2.0]
>>> family.rules["sum"].jvp(np, np.ones((2, 3)), axis=0, d_x=np.ones((2, 3))).tolist()
[2.0, 2.0, 2.0]
"""

from autodiff_tutor.rules.record import REDUCTION, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule
from autodiff_tutor.runtime.helpers import prod_others, size, tie_share, unreduce

family = Family("reductions", shape=REDUCTION)
defvjp, defjvp = family.defvjp, family.defjvp

REDUCTION_CASES = [
    (((2, 3),), {}),
    (((2, 3),), {"axis": 0}),
    (((2, 3),), {"axis": -1, "keepdims": True}),
    (((2, 2, 2),), {"axis": (0, 2)}),
    (((3,),), {"keepdims": True}),
]


@defvjp(
    "sum",
    math="sum_i x_i",
    symbolic=ArrayRule(cases=REDUCTION_CASES),
    method=True,
    tangent="linear by keyword",
)
def sum_(g, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims)


@defvjp(
    "mean",
    math="(1/n) sum_i x_i",
    symbolic=ArrayRule(cases=REDUCTION_CASES),
    method=True,
    tangent="linear by keyword",
)
def mean(g, out, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims) * (size(out) / max(size(x), 1))


# max and min: one rule, ties share the gradient equally


def extreme(g, out, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims) * tie_share(
        x, out, axis=axis, keepdims=keepdims
    )


def extreme_tangent(out, xp, x, axis=None, keepdims=False, *, d_x):
    share = tie_share(x, out, axis=axis, keepdims=keepdims)
    return xp.sum(d_x * share, axis=axis, keepdims=keepdims)


for _op in ("max", "min"):
    defvjp(
        _op,
        math=f"{_op}_i x_i",
        latex=rf"\{_op}_i x_i",
        convention="ties share the gradient equally",
        symbolic=ArrayRule(cases=REDUCTION_CASES[:3], ordered=True),
        aliases=(f"a{_op}",),
        method=True,
    )(extreme)
    defjvp(_op)(extreme_tangent)


@defvjp(
    "prod",
    math="prod_i x_i",
    latex=r"\prod_i x_i",
    convention="exact at zeros (product of the others)",
    symbolic=ArrayRule(cases=REDUCTION_CASES),
    method=True,
)
def prod(g, x, axis=None, keepdims=False):
    return unreduce(g, x, axis=axis, keepdims=keepdims) * prod_others(x, axis=axis)


@defjvp("prod")
def prod_tangent(xp, x, axis=None, keepdims=False, *, d_x):
    return xp.sum(d_x * prod_others(x, axis=axis), axis=axis, keepdims=keepdims)
