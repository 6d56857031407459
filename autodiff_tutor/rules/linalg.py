"""Linear algebra: matmul (``@``), dot, and norms (every vector and matrix ``ord``).

For 2-D operands the matmul gradients are the textbook ``g @ y.T`` and ``x.T @ g``;
``matmul_dx``/``matmul_dy`` also handle vectors and stacks of matrices.

>>> import numpy as np
>>> matmul(np.ones((2, 2)), np.eye(2), 2 * np.eye(2))[1].tolist()
[[1.0, 1.0], [1.0, 1.0]]
"""

import numpy as np

from autodiff_tutor.rules.record import HELPER, LINALG, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule, NumericOnly
from autodiff_tutor.runtime.helpers import (
    cast_like,
    dot_dx,
    dot_dy,
    matmul_dx,
    matmul_dy,
    norm_grad,
    norm_grad_adjoint_x,
    norm_grad_along_x,
    norm_grad_in_g,
    unreduce,
)

family = Family("linalg", shape=LINALG)
defvjp, defjvp = family.defvjp, family.defjvp

MATMUL_SHAPES = [
    ((2, 3), (3, 2)),
    ((2, 3), (3,)),
    ((3,), (3, 2)),
    ((3,), (3,)),
    ((2, 1, 2), (2, 2)),
]


@defvjp(
    "matmul",
    math="x @ y",
    symbolic=ArrayRule(cases=[(s, {}) for s in MATMUL_SHAPES]),
)
def matmul(g, x, y):
    return matmul_dx(g, x, y), matmul_dy(g, x, y)


@defjvp("matmul")
def matmul_tangent(x, y, *, d_x, d_y):
    return d_x @ y + x @ d_y


@defvjp(
    "dot",
    math="x . y",
    symbolic=ArrayRule(cases=[(s, {}) for s in [((2, 3), (3, 2)), ((2, 3), (3,)), ((3,), (3,))]]),
    method=True,
    tangent="multilinear",
)
def dot(g, x, y):
    return dot_dx(g, x, y), dot_dy(g, x, y)


@defvjp(
    "norm",
    math="sqrt(sum_i x_i^2)",
    latex=r"\sqrt{\sum_i x_i^2}",
    convention="at x = 0 the gradient is 0 (a valid subgradient); vector ords: sign(0) = 0, "
    "ties of ord=inf/-inf share the gradient, ord=0 (a count) has none; matrix ords "
    "1/-1/inf/-inf: sign(0) = 0, tied extreme column (row) sums share the gradient; "
    "'nuc', 2, -2: u vh of numpy's SVD (a subgradient at repeated or zero singular values)",
    symbolic=ArrayRule(
        lambda xp, x, ord=None, **o: xp.sqrt(xp.sum(x * x, **o)),
        [(((3,),), {}), (((2, 3),), {"axis": -1}), (((2, 2),), {"axis": 0, "keepdims": True})],
        at_zero=True,
    ),
    aliases=("vector_norm", np.linalg.norm),
)
def norm(g, out, xp, x, ord=None, axis=None, keepdims=False):
    return (
        x * unreduce(g / xp.where(out == 0, 1, out), x, axis=axis, keepdims=keepdims)
        if ord is None or ord == "fro"
        else norm_grad(g, out, x, ord, axis, keepdims)
    )


@defjvp("norm")
def norm_tangent(out, xp, x, ord=None, axis=None, keepdims=False, *, d_x):
    return (
        xp.sum(x * d_x, axis=axis, keepdims=keepdims) / xp.where(out == 0, 1, out)
        if ord is None or ord == "fro"
        else xp.sum(
            norm_grad(xp.ones_like(out), out, x, ord, axis, keepdims) * d_x,
            axis=axis,
            keepdims=keepdims,
        )
    )


# --- norm_grad, the gradient of the other ords, differentiable again ---------------------


@defvjp(
    "norm_grad",
    shape=HELPER,
    math="the gradient of norm(x, ord): signs on extreme entries, or u vh of singular vectors",
    latex=r"\mathit{grad} \cdot \partial \lVert x \rVert_{\mathit{ord}} / \partial x",
    convention="linear in grad for every ord; in x: 0 away from kinks for the vector ords "
    "0, 1, inf, -inf and the matrix ords 1, -1, inf, -inf (signs on the extreme entries, "
    "columns or rows); through the singular vectors for 'nuc', 2, -2 (refused at repeated "
    "or zero singular values); refused for the other vector ords (a power of |x|)",
    symbolic=NumericOnly("the extreme columns and rows are found by comparing numbers"),
)
def norm_grad_(g, grad, value, x, ord, axis=None, keepdims=False):
    # value is norm(x): its changes are x's, and the x part has them
    return (
        norm_grad_in_g(g, value, x, ord, axis, keepdims),
        None,
        norm_grad_adjoint_x(g, grad, value, x, ord, axis, keepdims),
        None,
    )


@defjvp("norm_grad")
def norm_grad_tangent(
    grad, value, x, ord, axis=None, keepdims=False, *, d_grad, d_value=None, d_x, d_ord=None
):
    return cast_like(norm_grad(d_grad, value, x, ord, axis, keepdims), x) + norm_grad_along_x(
        grad, value, x, ord, axis, keepdims, d_x
    )
