"""Derivative rules of ``cumprod_grad``, the runtime helper that ``np.cumprod``'s
gradient calls (:mod:`autodiff_tutor.runtime.helpers_scans`): differentiating that
gradient again (second derivatives, Hessian-vector products) needs it to be a
primitive with its own rules, exact where ``x`` has zeros, as ``cumprod_grad`` is.

As in :mod:`~autodiff_tutor.rules.helper_rules`, the helper's own gradient parameter
``g`` is called ``grad`` here (``g`` is the cotangent of the helper's output).
``cumprod_grad`` is linear in ``grad`` (its derivative there is ``np.cumprod``'s
tangent) and a polynomial in ``x`` (its derivative there is a matrix of pair
products per slice, :func:`~autodiff_tutor.runtime.helpers_scans.cumprod_grad_cross`).

>>> import numpy as np
>>> d_grad, d_x = cumprod_grad_(np.ones(2), np, np.ones(2), np.array([0.0, 3.0]))
>>> d_grad.tolist(), d_x.tolist()
([1.0, 4.0], [1.0, 1.0])
"""

from autodiff_tutor.rules.record import HELPER, Family
from autodiff_tutor.rules.symbolic_spec import NumericOnly
from autodiff_tutor.runtime.helpers_scans import cumprod_grad, cumprod_grad_cross, cumprod_jvp

family = Family("helper_scan_rules", shape=HELPER)
defvjp, defjvp = family.defvjp, family.defjvp

SCAN_HELPER_OPS = ("cumprod_grad",)
"""The ops of this module (part of ``helper_rules.HELPER_OPS``)."""


@defvjp(
    "cumprod_grad",
    math="d/dx sum(grad * cumprod(x))",
    convention="exact at zeros; builds the n x n matrix of pair products along the axis",
    symbolic=NumericOnly("the helper picks the first zero of each scan: it needs numbers"),
)
def cumprod_grad_(g, xp, grad, x, axis=None):
    return cumprod_jvp(x, g, axis), cumprod_grad_cross(grad, x, g, axis)


@defjvp("cumprod_grad")
def cumprod_grad_tangent(xp, grad, x, axis=None, *, d_grad, d_x):
    return cumprod_grad(d_grad, x, axis) + cumprod_grad_cross(grad, x, d_x, axis, True)
