"""Derivative rules of the runtime helpers that generated backward code calls.

The backward of a compiled function calls helpers (``unbroadcast``, ``unreduce``,
``matmul_dx``...). Differentiating that backward again (second derivatives,
Hessian-vector products) needs each helper to be a primitive with its own rules: the
resolver names a helper by its function name, so the rules here are keyed by it.

**The ``g`` of a helper.** Many helpers take a gradient as first parameter, named
``g`` (``unbroadcast(g, x)``), but a rule's ``g`` is the cotangent of the *rule's*
output. So in these rules the helper's own ``g`` is called ``grad`` (its tangent
``d_grad``); every other parameter keeps the helper's name. Generated code passes a
helper's gradient by position, so the rename is invisible there; a keyword call
``unbroadcast(g=...)`` is refused by the compiler (unknown keyword), never miscompiled.

Parameters that only give a shape or a dtype (``x`` in ``unbroadcast(grad, x)``, the
list ``xs`` of ``split_like``) get no gradient (``None``) and their tangent parameter
is ignored. Helpers that compute masks, counts or shapes are piecewise constant and
are declared non-differentiable.

>>> import numpy as np
>>> family.rules["unbroadcast"].inputs
('grad', 'x')
>>> unbroadcast_(np.ones(3), np, np.ones((2, 3)), np.zeros(3))[0].tolist()
[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
"""

import numpy as np

from autodiff_tutor.rules.record import HELPER, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule, Fixed
from autodiff_tutor.runtime.backend import cast_like, shape_of
from autodiff_tutor.runtime.helpers import (
    assign_at,
    axes_last,
    dot_dx,
    dot_dy,
    inverse_axes,
    matmul_dx,
    matmul_dy,
    overwritten,
    prod_others,
    unbroadcast,
    unreduce,
    untranspose,
)

family = Family("helper_rules", shape=HELPER)
defvjp, defjvp = family.defvjp, family.defjvp

# --- sums and broadcasts: each is the other's adjoint ---------------------------------


@defvjp(
    "unbroadcast",
    math="sum grad down to x's shape",
    symbolic=ArrayRule(cases=[(((2, 3), (3,)), {}), (((2, 2), (2, 1)), {})]),
    tangent="linear",
)
def unbroadcast_(g, xp, grad, x):
    return cast_like(unreduce(g, grad), grad), None


@defvjp(
    "unreduce",
    math="broadcast grad back over the reduced axes of x",
    symbolic=ArrayRule(
        cases=[
            (((2,), (2, 3)), {"axis": 1}),
            (((), (2, 2)), {}),
            (((1, 2), (3, 2)), {"axis": 0, "keepdims": True}),
        ],
    ),
    tangent="linear by keyword",
)
def unreduce_(g, xp, grad, x, axis=None, keepdims=False):
    kept = grad if keepdims or axis is None else xp.expand_dims(grad, axis=axis)
    return xp.reshape(unbroadcast(g, kept), shape_of(grad)), None


@defvjp(
    "broadcast_like",
    math="value broadcast to like's shape (a tangent of a broadcast result)",
    symbolic=ArrayRule(cases=[(((3,), (2, 3)), {}), (((2, 1), (2, 2)), {})]),
    tangent="linear",
)
def broadcast_like_(g, value, like):
    return unbroadcast(g, value), None


@defvjp(
    "checked_gradient",
    math="the gradient a custom op's backward returned, its shape checked",
    symbolic=ArrayRule(cases=[(((3,), (3,)), {}), (((2, 2), (2, 2)), {})]),
    tangent="symmetric",
)
def checked_gradient_(g, gradient, like):
    return g, None


@defvjp(
    "checked_output",
    math="a custom op's output, checked to be one value",
    symbolic=ArrayRule(cases=[(((3,),), {})]),
    tangent="symmetric",
)
def checked_output_(g, value):
    return g


@defvjp(
    "cast_like",
    math="grad in x's dtype",
    symbolic=ArrayRule(cases=[(((3,), (3,)), {})]),
    tangent="linear",
)
def cast_like_(g, grad, x):
    return cast_like(g, grad), None


@defvjp(
    "untranspose",
    math="grad with the permutation axes undone",
    symbolic=ArrayRule(cases=[(((3, 2),), {"axes": (1, 0)}), (((2, 2, 3),), {"axes": (2, 0, 1)})]),
    tangent="linear",
)
def untranspose_(g, grad, axes=None):
    return untranspose(g, inverse_axes(axes))


# --- matmul and dot: bilinear in (grad, the other operand) -----------------------------
# <matmul_dx(grad, x, y), h> = <grad, h @ y>: the adjoint in grad is h @ y, and in y it
# is the gradient of <grad, h @ y> with respect to y, which is matmul_dy(grad, h, y).


@defvjp(
    "matmul_dx",
    math="grad @ y^T",
    symbolic=ArrayRule(cases=[(((2, 2), (2, 3), (3, 2)), {}), (((2,), (2, 3), (3,)), {})]),
    tangent="multilinear",
)
def matmul_dx_(g, grad, x, y):
    return cast_like(g @ y, grad), None, matmul_dy(grad, g, y)


@defvjp(
    "matmul_dy",
    math="x^T @ grad",
    symbolic=ArrayRule(cases=[(((2, 2), (2, 3), (3, 2)), {}), (((2,), (3,), (3, 2)), {})]),
    tangent="multilinear",
)
def matmul_dy_(g, grad, x, y):
    return cast_like(x @ g, grad), matmul_dx(grad, x, g), None


@defvjp(
    "dot_dx",
    math="grad . y^T",
    symbolic=ArrayRule(cases=[(((2, 2), (2, 3), (3, 2)), {})]),
    tangent="multilinear",
)
def dot_dx_(g, xp, grad, x, y):
    return cast_like(xp.dot(g, y), grad), None, dot_dy(grad, g, y)


@defvjp(
    "dot_dy",
    math="x^T . grad",
    symbolic=ArrayRule(cases=[(((2, 2), (2, 3), (3, 2)), {})]),
    tangent="multilinear",
)
def dot_dy_(g, xp, grad, x, y):
    return cast_like(xp.dot(x, g), grad), dot_dx(grad, x, g), None


# --- indexing: scatter and gather, writes --------------------------------------------


@defvjp(
    "scatter",
    math="zeros like x, grad added at x[index]",
    symbolic=ArrayRule(
        cases=[(((2,), (3, 2)), {"index": 1}), (((3,), (3,)), {"index": np.array([0, 2, 0])})]
    ),
    tangent="linear",
)
def scatter_(g, grad, x, index=None):
    return g[index], None


@defvjp(
    "overwritten",
    math="grad with zeros at index",
    symbolic=ArrayRule(cases=[(((3, 2),), {"index": slice(1, None)})]),
    tangent="linear",
)
def overwritten_(g, grad, index=None):
    return overwritten(g, index)


@defvjp(
    "assign_at",
    math="x with x[index] = value",
    latex=r"x \text{ with } x[\mathit{index}] = \mathit{value}",
    convention="the overwritten entries get no gradient (repeated indices are refused)",
    symbolic=ArrayRule(
        cases=[(((3, 2), Fixed(1), (2,)), {}), (((3, 2), Fixed((slice(None), 0)), ()), {})]
    ),
)
def assign_at_(g, x, index, value):
    return overwritten(g, index), None, unbroadcast(g[index], value)


@defjvp("assign_at")
def assign_at_tangent(x, index, value, *, d_x, d_index=None, d_value):
    # the tangent written where the value is: right for a list's entry too (ys[k] = v
    # of a gradient function, differentiated again), where + would join two lists
    return assign_at(d_x, index, d_value)


# --- lists -------------------------------------------------------------------------------


@defvjp(
    "split_like",
    list_result=True,
    math="grad cut into pieces shaped like xs",
    symbolic=ArrayRule(cases=[(((3, 2), [(1, 2), (2, 2)]), {"axis": 0})]),
    tangent="linear by keyword",
)
def split_like_(g, xp, grad, xs, axis=0):
    return xp.concatenate(g, axis=axis), None


@defvjp(
    "unstack",
    view="split",
    list_result=True,
    math="grad split along axis",
    symbolic=ArrayRule(cases=[(((2, 3),), {"axis": -1})]),
    tangent="linear by keyword",
)
def unstack_(g, xp, grad, axis=0):
    return xp.stack(g, axis=axis)


@defvjp(
    "add_lists",
    math="[x_i + y_i]",
    symbolic=ArrayRule(cases=[(([(2,), (1, 2)], [(2,), (1, 2)]), {})]),
    tangent="linear",
)
def add_lists_(g, xs, ys):
    return g, g


# --- products of the others: exact at zeros --------------------------------------------
# p_i = prod_{j != i} x_j has dp_i/dx_k = prod_{j not in {i, k}} x_j for k != i, 0 for
# k == i: a symmetric matrix ("pairs"), built as prod_others of x with x_i set to 1 in
# row i. No division, so exact where x has zeros; memory n^2 per slice along the axis.
# Over several axes (or all), those axes are moved last and flattened into one.


@defvjp(
    "prod_others",
    math="prod_{j != i} x_j",
    latex=r"\prod_{j \ne i} x_j",
    convention="exact at zeros; builds the n x n matrix of pair products along the axis",
    symbolic=ArrayRule(cases=[(((3,),), {}), (((2, 3),), {"axis": 1})], wrap=True),
    tangent="symmetric",
)
def prod_others_(g, xp, x, axis=None):
    order = axes_last(x.ndim, axis)  # the chosen axes side by side, last, as one axis
    moved = xp.transpose(x, order)
    flat = xp.reshape(moved, moved.shape[: x.ndim - len(axes_last(x.ndim, axis, True))] + (-1,))
    a = flat.ndim - 1
    eye = xp.eye(flat.shape[a], dtype=bool)
    pairs = prod_others(xp.where(eye, 1, xp.expand_dims(flat, a)), axis=a + 1) * ~eye
    g_flat = xp.reshape(xp.transpose(g, order), flat.shape)
    grad = xp.sum(pairs * xp.expand_dims(g_flat, a), axis=a + 1)  # pairs is symmetric
    return xp.transpose(xp.reshape(grad, moved.shape), inverse_axes(order))


# --- piecewise constant (a.e.) or static: no derivative -----------------------------------

family.declare_nondifferentiable(
    "tie_share",
    "inverse_axes",
    "size",
    "shape_of",
    "zeros_like",
    "ones_like",
    "seed_one",
    "array_module",
    "shares_memory",
    "axes_last",
)
