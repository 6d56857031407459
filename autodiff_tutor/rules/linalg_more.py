"""More linear algebra: outer and inner products, einsum, tensordot, kron,
and the matrix functions of ``np.linalg`` (solve, inv, det, cholesky, eigvalsh, pinv).

The matrix rules are the textbook ones (as in Giles, *An extended collection of matrix
derivative results*): ``d inv(A) = -inv(A) dA inv(A)``, ``d det(A) = det(A) tr(inv(A)
dA)``, and for cholesky the lower-triangular ``Phi`` formula. ``np.linalg`` works on
numbers only, so those records are checked numerically (in float64 against central
differences, and by the transpose identity of their vjp and jvp). All work on stacks
of matrices (leading axes), as numpy's functions do.

>>> import numpy as np
>>> inv(np.eye(2), np.eye(2), np, np.eye(2)).tolist()
[[-1.0, -0.0], [-0.0, -1.0]]
"""

from autodiff_tutor.rules.record import LINALG, Family
from autodiff_tutor.rules.symbolic_spec import NUMBERS_ONLY, ArrayRule, Fixed
from autodiff_tutor.runtime.helpers import (
    einsum_operand,
    einsum_parts,
    kron_operand,
    tensordot_operand,
)

family = Family("linalg_more", shape=LINALG)
defvjp, defjvp = family.defvjp, family.defjvp


@defvjp(
    "outer",
    math="x_i y_j",
    symbolic=ArrayRule(cases=[(((2,), (3,)), {}), (((2, 2), (2,)), {})]),
    tangent="multilinear",
)
def outer(g, xp, x, y):
    return xp.reshape(g @ xp.ravel(y), x.shape), xp.reshape(xp.ravel(x) @ g, y.shape)


@defvjp(
    "inner",
    math="sum_k x_..k y_..k",
    latex=r"\sum_k x_{\dots k}\, y_{\dots k}",
    convention="arrays of at least one axis (for 0-d operands write x * y)",
    symbolic=ArrayRule(cases=[(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((2, 3), (2, 3)), {})]),
    tangent="multilinear",
)
def inner(g, xp, x, y):
    return (
        xp.tensordot(g, y, axes=(tuple(range(x.ndim - 1, xp.ndim(g))), tuple(range(y.ndim - 1)))),
        xp.tensordot(g, x, axes=(tuple(range(x.ndim - 1)), tuple(range(x.ndim - 1)))),
    )


def _letters_only(subscripts):
    """The einsum rule covers two operands, letters and '...' (refused at the call)."""
    einsum_parts(str(subscripts))


@defvjp(
    "einsum",
    math="sum over the repeated letters of x y",
    latex=r"\sum_{\text{repeated letters}} x\, y",
    convention="two operands written with letters and '...' (numpy's broadcasting); "
    "one operand as the sum, transpose, trace ('ii'), diagonal ('ii->i') or axis move "
    "it is, and three or more as two-operand einsums in turn, also with '...'; a letter "
    "three times in one operand, a letter twice with three or more operands, and '...' "
    "left out of the output are refused",
    check=_letters_only,
    symbolic=ArrayRule(
        cases=[
            ((Fixed("ij,jk->ik"), (2, 3), (3, 2)), {}),
            ((Fixed("bi,bi->b"), (2, 2), (2, 2)), {}),
            ((Fixed("ij,k"), (2, 2), (2,)), {}),
        ],
    ),
)
def einsum(g, subscripts, x, y):
    return None, einsum_operand(subscripts, g, x, y, 0), einsum_operand(subscripts, g, x, y, 1)


@defjvp("einsum")
def einsum_tangent(xp, subscripts, x, y, *, d_subscripts=None, d_x, d_y):
    return xp.einsum(str(subscripts), d_x, y) + xp.einsum(str(subscripts), x, d_y)


@defvjp(
    "tensordot",
    math="sum over the paired axes of x y",
    symbolic=ArrayRule(
        cases=[
            (((2, 3), (3, 2)), {"axes": 1}),
            (((2, 2, 3), (2, 3)), {"axes": 2}),
            (((3, 2), (2, 3)), {"axes": ([0], [1])}),
        ],
    ),
    tangent="multilinear",
)
def tensordot(g, x, y, axes=2):
    return tensordot_operand(g, x, y, axes, 0), tensordot_operand(g, x, y, axes, 1)


@defvjp(
    "kron",
    math="blocks x_ij y",
    symbolic=ArrayRule(cases=[(((2,), (3,)), {}), (((2, 2), (1, 2)), {}), (((2,), (2, 2)), {})]),
    tangent="multilinear",
)
def kron(g, x, y):
    return kron_operand(g, x, y, 0), kron_operand(g, x, y, 1)


# --- np.linalg ------------------------------------------------------------------------------


@defvjp(
    "solve",
    math="A^-1 b",
    latex=r"A^{-1} b",
    convention="A must be invertible (as for the forward)",
    symbolic=NUMBERS_ONLY,
)
def solve(g, out, xp, a, b):
    gb = xp.linalg.solve(xp.swapaxes(a, -1, -2), g)
    return (
        -gb[..., :, None] * out[..., None, :] if b.ndim == 1 else -(gb @ xp.swapaxes(out, -1, -2)),
        gb,
    )


@defjvp("solve")
def solve_tangent(out, xp, a, b, *, d_a, d_b):
    return xp.linalg.solve(a, d_b) - xp.linalg.solve(a, d_a @ out)


@defvjp(
    "inv", math="A^-1", convention="A must be invertible", symbolic=NUMBERS_ONLY, latex=r"A^{-1}"
)
def inv(g, out, xp, x):
    t = xp.swapaxes(out, -1, -2)
    return -(t @ g @ t)


@defjvp("inv")
def inv_tangent(out, x, *, d_x):
    return -(out @ d_x @ out)


@defvjp(
    "det",
    math="det A",
    latex=r"\det A",
    convention="uses inv(A): A must be invertible (inf/nan at singular A)",
    symbolic=NUMBERS_ONLY,
)
def det(g, out, xp, x):
    return (g * out)[..., None, None] * xp.swapaxes(xp.linalg.inv(x), -1, -2)


@defjvp("det")
def det_tangent(out, xp, x, *, d_x):
    return out * xp.einsum("...ij,...ji->...", xp.linalg.inv(x), d_x)


@defvjp(
    "cholesky",
    math="L with L L^T = A",
    latex=r"L \text{ with } L L^\top = A",
    convention="A symmetric positive definite; the gradient is the symmetric one "
    "(numpy reads only A's lower triangle: perturb A symmetrically)",
    symbolic=NUMBERS_ONLY,
)
def cholesky(g, out, xp, x):
    lt = xp.swapaxes(out, -1, -2)
    m = lt @ g
    phi = xp.tril(m) - 0.5 * m * xp.eye(m.shape[-1], dtype=m.dtype)
    s = xp.swapaxes(xp.linalg.solve(lt, xp.swapaxes(xp.linalg.solve(lt, phi), -1, -2)), -1, -2)
    return 0.5 * (s + xp.swapaxes(s, -1, -2))


@defjvp("cholesky")
def cholesky_tangent(out, xp, x, *, d_x):
    sym = 0.5 * (d_x + xp.swapaxes(d_x, -1, -2))
    inner = xp.linalg.solve(out, xp.swapaxes(xp.linalg.solve(out, sym), -1, -2))
    return out @ (xp.tril(inner) - 0.5 * inner * xp.eye(inner.shape[-1], dtype=inner.dtype))


@defvjp(
    "eigvalsh",
    math="eigenvalues of a symmetric A",
    latex=r"\text{the eigenvalues of a symmetric } A",
    convention="distinct eigenvalues; symmetric gradient v diag(g) v^T (numpy reads one "
    "triangle: perturb A symmetrically)",
    symbolic=NUMBERS_ONLY,
)
def eigvalsh(g, xp, x):
    v = xp.linalg.eigh(x)[1]
    return (v * g[..., None, :]) @ xp.swapaxes(v, -1, -2)


@defjvp("eigvalsh")
def eigvalsh_tangent(xp, x, *, d_x):
    v = xp.linalg.eigh(x)[1]
    return xp.einsum("...ji,...jk,...ki->...i", v, d_x, v)


@defvjp(
    "pinv",
    math="A^+ (Moore-Penrose)",
    latex=r"A^{+}\ \text{(Moore-Penrose)}",
    convention="A of constant rank around the point (A^+ jumps where the rank changes); "
    "rcond/hermitian as numpy's defaults only",
    symbolic=NUMBERS_ONLY,
)
def pinv(g, out, xp, x):
    pt = xp.swapaxes(out, -1, -2)
    gt = xp.swapaxes(g, -1, -2)
    left = xp.eye(x.shape[-2], dtype=x.dtype) - x @ out
    right = xp.eye(x.shape[-1], dtype=x.dtype) - out @ x
    return -(pt @ g @ pt) + left @ gt @ out @ pt + pt @ out @ gt @ right


@defjvp("pinv")
def pinv_tangent(out, xp, x, *, d_x):
    pt = xp.swapaxes(out, -1, -2)
    dt = xp.swapaxes(d_x, -1, -2)
    left = xp.eye(x.shape[-1], dtype=x.dtype) - out @ x
    right = xp.eye(x.shape[-2], dtype=x.dtype) - x @ out
    return -(out @ d_x @ out) + out @ pt @ dt @ right + left @ dt @ pt @ out
