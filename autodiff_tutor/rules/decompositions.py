"""Matrix functions of ``np.linalg`` that return several arrays: ``slogdet`` (sign and
log-determinant), ``eigh`` (eigenvalues and eigenvectors of a symmetric matrix) and
``svd`` (with ``full_matrices=False``, or the singular values alone), and ``lstsq``
(least squares: solution, residuals, rank, singular values).

Their results are tuples (``list_result``), read by unpacking, by index or by numpy's
field names (``fields``: ``res.eigenvalues`` is ``res[0]``): the rule's ``g`` holds one
gradient per result (zeros for results nobody read), the tangent one per result. The
formulas are in :mod:`autodiff_tutor.runtime.helpers_linalg`; ``np.linalg`` works on
numbers only, so the records are checked numerically (central differences in float64
and the transpose identity of vjp and jvp).

>>> import numpy as np
>>> a = np.diag([2.0, 4.0])
>>> slogdet([0.0, 1.0], np, a).tolist()  # d log|det A| = inv(A)^T
[[0.5, 0.0], [0.0, 0.25]]
"""

from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.rules.record import HELPER, LINALG, Family
from autodiff_tutor.rules.symbolic_spec import NUMBERS_ONLY
from autodiff_tutor.runtime.helpers import (
    eigh_grad,
    eigh_grad_adjoint,
    eigh_grad_along,
    eigh_tangent,
    lstsq_grad,
    lstsq_tangent,
    svd_grad,
    svd_pullback,
    svd_pullback_adjoint,
    svd_pullback_along,
    svd_tangent,
)

family = Family("decompositions", shape=LINALG)
defvjp, defjvp = family.defvjp, family.defjvp


@defvjp(
    "slogdet",
    list_result=True,
    fields=("sign", "logabsdet"),
    math="(sign det A, log |det A|)",
    latex=r"(\operatorname{sign}\det A,\ \log\lvert\det A\rvert)",
    convention="the sign is piecewise constant (zero gradient); A must be invertible (uses inv(A))",
    symbolic=NUMBERS_ONLY,
)
def slogdet(g, xp, x):
    return xp.asarray(g[1])[..., None, None] * xp.swapaxes(xp.linalg.inv(x), -1, -2)


@defjvp("slogdet")
def slogdet_tangent(out, xp, x, *, d_x):
    return [xp.zeros_like(out[0]), xp.einsum("...ii->...", xp.linalg.solve(x, d_x))]


@defvjp(
    "eigh",
    list_result=True,
    fields=("eigenvalues", "eigenvectors"),
    math="(w, V) with A = V diag(w) V^T, A symmetric",
    latex=r"A = V \operatorname{diag}(w)\, V^{T}",
    convention="the gradient is the symmetric one (numpy reads one triangle: perturb A "
    "symmetrically); eigenvectors are defined up to sign, so only losses that do not "
    "depend on their signs have a gradient; at a repeated eigenvalue the eigenvectors "
    "have no derivative: gradients reaching them are inf/nan (the eigenvalues' part "
    "stays finite)",
    symbolic=NUMBERS_ONLY,
)
def eigh(g, out, x, UPLO="L"):
    return eigh_grad(g[0], g[1], out[0], out[1])


@defjvp("eigh")
def eigh_tangent_(out, x, UPLO="L", *, d_x):
    return eigh_tangent(d_x, out[0], out[1])


def _reduced_only(full_matrices=True, compute_uv=True, hermitian=False):
    """The svd rule covers the reduced decomposition; the values alone are svdvals."""
    if not compute_uv:
        raise NoDerivativeRuleError(
            "no derivative rule for np.linalg.svd with compute_uv=False (its result is "
            "one array, not the tuple the rule differentiates)",
            hint="use np.linalg.svdvals(a) for the singular values alone",
        )
    if full_matrices:
        raise NoDerivativeRuleError(
            "no derivative rule for np.linalg.svd with full_matrices=True: the extra "
            "singular vectors of a rectangular matrix are not determined by it",
            hint="pass full_matrices=False (the same result for a square matrix), or "
            "use np.linalg.svdvals(a) for the singular values alone",
        )
    if hermitian:
        raise NoDerivativeRuleError(
            "no derivative rule for np.linalg.svd with hermitian=True",
            hint="leave hermitian at its default (False), or use np.linalg.eigh",
        )


@defvjp(
    "svd",
    list_result=True,
    fields=("U", "S", "Vh"),
    math="(U, s, Vh) with A = U diag(s) Vh",
    latex=r"A = U \operatorname{diag}(s)\, V_h",
    convention="full_matrices=False only; singular vectors are defined up to sign; at "
    "repeated or zero singular values the vectors have no derivative: gradients reaching "
    "them are inf/nan (the singular values' part stays finite)",
    check=_reduced_only,
    symbolic=NUMBERS_ONLY,
)
def svd(g, out, x, full_matrices=True, compute_uv=True, hermitian=False):
    return svd_pullback(g[0], g[1], g[2], out[0], out[1], out[2])


@defjvp("svd")
def svd_tangent_(out, x, full_matrices=True, compute_uv=True, hermitian=False, *, d_x):
    return svd_tangent(d_x, out)


@defvjp(
    "svdvals",
    math="singular values s of A",
    latex=r"s = \sigma(A)",
    convention="u diag(g) vh of numpy's SVD: at repeated or zero singular values a subgradient",
    symbolic=NUMBERS_ONLY,
)
def svdvals(g, x):
    return svd_grad(g, None, x, compute_uv=False)


@defjvp("svdvals")
def svdvals_tangent(xp, x, *, d_x):
    return svd_tangent(d_x, xp.linalg.svd(x, full_matrices=False), compute_uv=False)


@defvjp(
    "lstsq",
    list_result=True,
    math="(x, |A x - b|^2, rank A, s) with x minimizing |A x - b|",
    latex=r"x = \operatorname{arg\,min}_x \lVert A x - b \rVert^2",
    convention="A of full column rank (one solution; refused otherwise, where it is "
    "used); the rank has no gradient; the residuals' uses A^T r = 0 at the solution",
    symbolic=NUMBERS_ONLY,
)
def lstsq(g, out, a, b, rcond=None):
    return lstsq_grad(g, out, a, b, "a"), lstsq_grad(g, out, a, b, "b")


@defjvp("lstsq")
def lstsq_tangent_(out, a, b, rcond=None, *, d_a, d_b):
    return lstsq_tangent(d_a, d_b, out, a, b)


# --- eigh_grad and svd_pullback, the gradients of eigh and svd, differentiable again ----


@defvjp(
    "eigh_grad",
    shape=HELPER,
    math="sym(v (diag(gw) + F * (v^T gv)) v^T), F_ij = 1 / (w_j - w_i)",
    latex=r"\operatorname{sym}\bigl(V (\operatorname{diag}(g_w) + F \circ V^{T} g_V) V^{T}\bigr)",
    convention="refused at a repeated eigenvalue (the eigenvectors have no derivative there)",
    symbolic=NUMBERS_ONLY,
)
def eigh_grad_(g, gw, gv, w, v):
    return (
        eigh_grad_adjoint(g, gw, gv, w, v, "gw"),
        eigh_grad_adjoint(g, gw, gv, w, v, "gv"),
        eigh_grad_adjoint(g, gw, gv, w, v, "w"),
        eigh_grad_adjoint(g, gw, gv, w, v, "v"),
    )


@defjvp("eigh_grad")
def eigh_grad_tangent(gw, gv, w, v, *, d_gw, d_gv, d_w, d_v):
    return (
        eigh_grad_along(gw, gv, w, v, d_gw, "gw")
        + eigh_grad_along(gw, gv, w, v, d_gv, "gv")
        + eigh_grad_along(gw, gv, w, v, d_w, "w")
        + eigh_grad_along(gw, gv, w, v, d_v, "v")
    )


@defvjp(
    "svd_pullback",
    shape=HELPER,
    math="u (J s + s K + diag(gs)) vh (+ the parts outside the spans), J = F * (u^T gu - "
    "gu^T u), K = F * (v^T gv - gv^T v), F_ij = 1 / (s_j^2 - s_i^2)",
    latex=r"U (J S + S K + \operatorname{diag}(g_s)) V_h",
    convention="refused at a repeated or zero singular value (the singular vectors have no "
    "derivative there)",
    symbolic=NUMBERS_ONLY,
)
def svd_pullback_(g, gu, gs, gvh, u, s, vh):
    return (
        svd_pullback_adjoint(g, gu, gs, gvh, u, s, vh, "gu"),
        svd_pullback_adjoint(g, gu, gs, gvh, u, s, vh, "gs"),
        svd_pullback_adjoint(g, gu, gs, gvh, u, s, vh, "gvh"),
        svd_pullback_adjoint(g, gu, gs, gvh, u, s, vh, "u"),
        svd_pullback_adjoint(g, gu, gs, gvh, u, s, vh, "s"),
        svd_pullback_adjoint(g, gu, gs, gvh, u, s, vh, "vh"),
    )


@defjvp("svd_pullback")
def svd_pullback_tangent(gu, gs, gvh, u, s, vh, *, d_gu, d_gs, d_gvh, d_u, d_s, d_vh):
    return (
        svd_pullback_along(gu, gs, gvh, u, s, vh, d_gu, "gu")
        + svd_pullback_along(gu, gs, gvh, u, s, vh, d_gs, "gs")
        + svd_pullback_along(gu, gs, gvh, u, s, vh, d_gvh, "gvh")
        + svd_pullback_along(gu, gs, gvh, u, s, vh, d_u, "u")
        + svd_pullback_along(gu, gs, gvh, u, s, vh, d_s, "s")
        + svd_pullback_along(gu, gs, gvh, u, s, vh, d_vh, "vh")
    )
