"""Derivative rules of the runtime helpers that the gradients of products call:
``cumprod_grad`` (``np.cumprod``'s, :mod:`autodiff_tutor.runtime.helpers_scans`) and
``einsum_operand`` (a two-operand ``np.einsum``'s). Differentiating those gradients
again (second derivatives, Hessian-vector products, e.g. of
``np.einsum('i,ij,j', x, A, x)``) needs each helper to be a primitive with its own
rules, as in :mod:`~autodiff_tutor.rules.helper_rules`: the helper's own gradient
parameter ``g`` is called ``grad`` here (``g`` is the cotangent of the helper's output).

``cumprod_grad`` is linear in ``grad`` (its derivative there is ``np.cumprod``'s
tangent) and a polynomial in ``x`` (its derivative there is a matrix of pair products
per slice, exact at zeros). ``einsum_operand`` is linear in ``grad`` and in the partner
operand and reads the operand itself only for its shape (why the rules hold:
:mod:`autodiff_tutor.runtime.helpers_einsum`); ``subscripts`` and ``which`` carry no
gradient.

>>> import numpy as np
>>> d_grad, d_x = cumprod_grad_(np.ones(2), np, np.ones(2), np.array([0.0, 3.0]))
>>> d_grad.tolist(), d_x.tolist()
([1.0, 3.0], [1.0, 1.0])
>>> x, y = np.ones((2, 3)), np.arange(3.0)
>>> _, d_grad, d_x, d_y, _ = einsum_operand_(np.ones((2, 3)), np, "ij,j->i", np.ones(2), x, y, 0)
>>> d_grad.tolist(), d_x.tolist(), d_y.tolist()
([3.0, 3.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [2.0, 2.0, 2.0])
"""

from autodiff_tutor.rules.record import HELPER, Family
from autodiff_tutor.rules.symbolic_spec import ArrayRule, Fixed, NumericOnly
from autodiff_tutor.runtime.helpers_arrays import einsum_operand
from autodiff_tutor.runtime.helpers_einsum import einsum_along, einsum_partner, einsum_replaced
from autodiff_tutor.runtime.helpers_scans import cumprod_grad, cumprod_grad_cross, cumprod_jvp

family = Family("helper_rules_products", shape=HELPER)
defvjp, defjvp = family.defvjp, family.defjvp


@defvjp(
    "cumprod_grad",
    math="d/dx_i sum_j grad_j prod_{l <= j} x_l",
    latex=r"\sum_{j \ge i} g_j \prod_{l \le j,\, l \ne i} x_l",
    convention="exact at zeros; builds the n x n matrix of pair products along the axis",
    symbolic=NumericOnly("the helper picks the first zero of each scan: it needs numbers"),
)
def cumprod_grad_(g, xp, grad, x, axis=None):
    return cumprod_jvp(x, g, axis), cumprod_grad_cross(grad, x, g, axis)


@defjvp("cumprod_grad")
def cumprod_grad_tangent(xp, grad, x, axis=None, *, d_grad, d_x):
    return cumprod_grad(d_grad, x, axis) + cumprod_grad_cross(grad, x, d_x, axis, True)


@defvjp(
    "einsum_operand",
    math="A_y^T grad, for einsum(x, y) = A_y x (operand 0; likewise operand 1)",
    latex=r"A_y^{\top} g, \; \mathrm{einsum}(x, y) = A_y x",
    convention="linear in grad and in the partner; the operand itself gives only a shape",
    symbolic=ArrayRule(
        cases=[
            ((Fixed("ij,jk->ik"), (2, 2), (2, 3), (3, 2), Fixed(0)), {}),
            ((Fixed("ij,j->i"), (2,), (2, 3), (3,), Fixed(1)), {}),
        ],
    ),
)
def einsum_operand_(g, xp, subscripts, grad, x, y, which):
    return (
        None,
        einsum_replaced(subscripts, g, x, y, which),
        einsum_partner(subscripts, grad, g, x, y, which, 0),
        einsum_partner(subscripts, grad, g, x, y, which, 1),
        None,
    )


@defjvp("einsum_operand")
def einsum_operand_tangent(
    xp, subscripts, grad, x, y, which, *, d_subscripts=None, d_grad, d_x, d_y, d_which=None
):
    return (
        einsum_operand(subscripts, d_grad, x, y, which)
        + einsum_along(subscripts, grad, x, y, which, d_x, 0)
        + einsum_along(subscripts, grad, x, y, which, d_y, 1)
    )
