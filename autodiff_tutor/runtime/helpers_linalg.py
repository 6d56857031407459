"""Runtime helpers of the matrix decompositions' rules (``eigh``, ``svd``), of least
squares (``lstsq``) and of matrix norms: the formulas are too long to be one readable
expression in a rule.

All work on stacks of matrices (leading axes) and take the array module from their
arguments. The formulas are the textbook ones (Giles, *An extended collection of
matrix derivative results*; Townsend, *Differentiating the singular value
decomposition*), written for real matrices.

>>> import numpy as np
>>> w, v = np.linalg.eigh(np.diag([1.0, 3.0]))
>>> eigh_grad(np.array([1.0, 0.0]), np.zeros((2, 2)), w, v).tolist()
[[1.0, 0.0], [0.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.runtime.backend import array_module, cast_like
from autodiff_tutor.runtime.helpers_arrays import vector_norm_grad

__all__ = [
    "eigh_grad",
    "eigh_grad_adjoint",
    "eigh_grad_along",
    "eigh_tangent",
    "lstsq_grad",
    "lstsq_tangent",
    "matrix_norm_grad",
    "norm_grad",
    "norm_grad_adjoint_x",
    "norm_grad_along_x",
    "norm_grad_in_g",
    "piecewise_constant_norm",
    "svd_grad",
    "svd_pullback",
    "svd_pullback_adjoint",
    "svd_pullback_along",
    "svd_tangent",
]


def _t(a: Any) -> Any:
    return array_module(a).swapaxes(a, -1, -2)


def _inverse_gaps(values: Any, squared: bool = False) -> Any:
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal, 0 on it (``w_j^2 - w_i^2``
    when ``squared``): infinite where two values are equal (no derivative there)."""
    xp = array_module(values)
    w = values * values if squared else values
    gap = w[..., None, :] - w[..., :, None]
    eye = xp.eye(w.shape[-1], dtype=bool)
    tied = (gap == 0) & ~eye
    inverse = 1 / xp.where(tied | eye, 1, gap)
    return xp.where(eye, 0, xp.where(tied, xp.inf, inverse))


def eigh_grad(gw: Any, gv: Any, w: Any, v: Any) -> Any:
    """The gradient of ``w, v = np.linalg.eigh(a)`` with respect to ``a``, given the
    gradients ``gw`` of the eigenvalues and ``gv`` of the eigenvectors: the symmetric
    ``v (diag(gw) + F * (v^T gv)) v^T`` with ``F_ij = 1 / (w_j - w_i)``. Eigenvectors
    of a repeated eigenvalue have no derivative: where ``gv`` reaches them the result
    is inf or nan; with ``gv = 0`` it is the eigenvalues' gradient, defined everywhere.

    >>> a = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> w, v = np.linalg.eigh(a)
    >>> eigh_grad(np.ones(2), np.zeros((2, 2)), w, v).round(12).tolist()  # d trace
    [[1.0, 0.0], [0.0, 1.0]]
    """
    xp = array_module(gw, gv, w, v)
    vt = _t(v)
    inner = (v * gw[..., None, :]) @ vt
    if xp.any(gv != 0):
        inner = inner + v @ (_inverse_gaps(w) * (vt @ gv)) @ vt
    return (inner + _t(inner)) / 2


def _eigh_grad_parts(gw: Any, gv: Any, w: Any, v: Any) -> tuple[Any, Any, Any, bool]:
    """``F`` (the inverse gaps of ``w``), ``vᵀ gv`` and ``M = F * (vᵀ gv)``: the pieces
    of :func:`eigh_grad`'s eigenvector part, and whether ``gv`` reaches them (else ``M``
    is 0, as in :func:`eigh_grad`: no ``inf * 0``)."""
    xp = array_module(gw, gv, w, v)
    f = _inverse_gaps(w)
    if not bool(xp.all(xp.isfinite(f))):
        raise NoDerivativeRuleError(
            "no second derivative through np.linalg.eigh at a repeated eigenvalue: its "
            "eigenvectors have no derivative there, and the gradient of eigh is made of them",
            hint="second derivatives through eigh need distinct eigenvalues; at this point, "
            "compare with finite differences of the gradient",
        )
    vt_gv = _t(v) @ gv
    through_gv = bool(xp.any(gv != 0))
    m = f * vt_gv if through_gv else xp.zeros_like(vt_gv)
    return f, vt_gv, m, through_gv


def eigh_grad_along(gw: Any, gv: Any, w: Any, v: Any, t: Any, of: str) -> Any:
    """The tangent of :func:`eigh_grad` along a change ``t`` of one of its inputs
    (``of``: ``"gw"``, ``"gv"``, ``"w"`` or ``"v"``). With ``inner = v diag(gw) vᵀ +
    v M vᵀ``, ``M = F * (vᵀ gv)``, ``F_ij = 1 / (w_j - w_i)``: the symmetric part of
    ``d inner``, where ``dF_ij = -F_ij^2 (dw_j - dw_i)``. At a repeated eigenvalue the
    eigenvectors have no derivative: refused (``NoDerivativeRuleError``).

    >>> w, v = np.array([1.0, 3.0]), np.eye(2)
    >>> eigh_grad_along(np.ones(2), np.zeros((2, 2)), w, v, np.array([1.0, 0.0]), "gw").tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    xp = array_module(gw, gv, w, v, t)
    f, vt_gv, m, through_gv = _eigh_grad_parts(gw, gv, w, v)
    vt = _t(v)
    if of == "gw":
        inner = (v * t[..., None, :]) @ vt
    elif of == "gv":
        inner = v @ (f * (vt @ t)) @ vt if xp.any(t != 0) else xp.zeros_like(v @ vt)
    elif of == "w":
        d_f = -f * f * (t[..., None, :] - t[..., :, None])
        inner = v @ (d_f * vt_gv) @ vt if through_gv else xp.zeros_like(v @ vt)
    else:  # v
        core = (t * gw[..., None, :]) @ vt
        inner = core + _t(core)
        if through_gv:
            inner = inner + t @ m @ vt + v @ m @ _t(t) + v @ (f * (_t(t) @ gv)) @ vt
    return (inner + _t(inner)) / 2


def eigh_grad_adjoint(c: Any, gw: Any, gv: Any, w: Any, v: Any, of: str) -> Any:
    """The adjoint of :func:`eigh_grad` in one of its inputs (``of`` as in
    :func:`eigh_grad_along`), for the cotangent ``c`` of its result: with ``S`` the
    symmetric part of ``c`` and ``P = vᵀ S v``: ``diag(P)`` for ``gw``, ``v (F * P)``
    for ``gv``, ``rowsum(Q F^2) - colsum(Q F^2)`` with ``Q = P * (vᵀ gv)`` for ``w``,
    ``2 S v diag(gw) + S v (M + Mᵀ) + gv (F * P)ᵀ`` for ``v``.

    >>> w, v = np.array([1.0, 3.0]), np.eye(2)
    >>> eigh_grad_adjoint(np.eye(2), np.ones(2), np.zeros((2, 2)), w, v, "gw").tolist()
    [1.0, 1.0]
    """
    xp = array_module(c, gw, gv, w, v)
    f, vt_gv, m, through_gv = _eigh_grad_parts(gw, gv, w, v)
    s = (c + _t(c)) / 2
    p = _t(v) @ s @ v
    if of == "gw":
        return xp.diagonal(p, axis1=-2, axis2=-1)
    if of == "gv":
        return v @ (f * p)
    if of == "w":
        if not through_gv:
            return xp.zeros_like(w)
        q = p * vt_gv * f * f
        return xp.sum(q, axis=-1) - xp.sum(q, axis=-2)
    sv = s @ v
    d_v = 2 * sv * gw[..., None, :]
    return d_v + sv @ (m + _t(m)) + gv @ _t(f * p) if through_gv else d_v


def eigh_tangent(d_a: Any, w: Any, v: Any) -> list[Any]:
    """The tangents ``[dw, dv]`` of ``np.linalg.eigh(a)`` along ``d_a`` (its symmetric
    part, as :func:`eigh_grad`): ``dw = diag(v^T d_a v)``, ``dv = v (F * v^T d_a v)``.

    >>> w, v = np.linalg.eigh(np.diag([1.0, 3.0]))
    >>> [t.tolist() for t in eigh_tangent(np.eye(2), w, v)]
    [[1.0, 1.0], [[0.0, 0.0], [0.0, 0.0]]]
    """
    xp = array_module(d_a, w, v)
    m = _t(v) @ ((d_a + _t(d_a)) / 2) @ v
    return [xp.diagonal(m, axis1=-2, axis2=-1), v @ (_inverse_gaps(w) * m)]


def svd_grad(g: Any, out: Any, a: Any, compute_uv: bool = True) -> Any:
    """The gradient of ``np.linalg.svd(a, full_matrices=False)`` (``g`` one gradient
    per result: ``[gu, gs, gvh]``), or of the singular values alone
    (``compute_uv=False``: ``g`` is ``gs``): see :func:`svd_pullback`.

    >>> svd_grad(np.ones(2), np.array([3.0, 1.0]), np.diag([3.0, 1.0]), False).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    xp = array_module(a)
    if not compute_uv:
        u, _, vh = xp.linalg.svd(a, full_matrices=False)
        return (u * g[..., None, :]) @ vh
    return svd_pullback(*g, *out)


def svd_pullback(gu: Any, gs: Any, gvh: Any, u: Any, s: Any, vh: Any) -> Any:
    """The gradient of ``u, s, vh = np.linalg.svd(a, full_matrices=False)`` with
    respect to ``a``, given the gradients ``gu``, ``gs``, ``gvh`` of its results:
    ``u diag(gs) vh``, plus, for the singular vectors, ``u (J s + s K) vh`` with
    ``J = F * (u^T gu - gu^T u)``, ``K`` the same for ``v``, ``F_ij = 1 / (s_j^2 -
    s_i^2)``, and the parts of ``gu``, ``gv`` outside the spans of ``u``, ``v``
    (rectangular ``a``). Repeated or zero singular values give no derivative of the
    vectors (inf or nan where ``gu``, ``gvh`` reach them).

    >>> u, s, vh = np.eye(2), np.array([3.0, 1.0]), np.eye(2)
    >>> svd_pullback(np.zeros((2, 2)), np.ones(2), np.zeros((2, 2)), u, s, vh).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    parts = _svd_pullback_parts(gu, gs, gvh, u, s, vh, refuse=False)
    grad = u @ parts["core"] @ vh
    if parts["p"] is not None:  # the part of gu outside the span of u
        grad = grad + parts["p"] @ vh
    if parts["q"] is not None:  # the part of gv outside the span of v
        grad = grad + u @ _t(parts["q"])
    return grad


def _svd_pullback_parts(
    gu: Any, gs: Any, gvh: Any, u: Any, s: Any, vh: Any, refuse: bool = True
) -> dict[str, Any]:
    """The intermediate values of :func:`svd_pullback` (``p``, ``q``: ``None`` unless
    ``u``, ``v`` have more rows than ``s`` has values), which its derivatives read;
    with ``refuse``, refused at repeated or zero singular values (the singular vectors
    have no derivative there, and the gradient of svd is made of them)."""
    xp = array_module(gu, gs, gvh, u, s, vh)
    f = _inverse_gaps(s, squared=True)
    if refuse and (not bool(xp.all(xp.isfinite(f))) or not bool(xp.all(s != 0))):
        raise NoDerivativeRuleError(
            "no second derivative through np.linalg.svd at a repeated or zero singular "
            "value: its singular vectors have no derivative there, and the gradient of svd "
            "is made of them",
            hint="second derivatives through svd need distinct, nonzero singular values; "
            "at this point, compare with finite differences of the gradient",
        )
    v, gv = _t(vh), _t(gvh)
    a, b = _t(u) @ gu - _t(gu) @ u, _t(v) @ gv - _t(gv) @ v
    j, k = f * a, f * b
    core = j * s[..., None, :] + s[..., :, None] * k
    core = core + xp.eye(s.shape[-1], dtype=s.dtype) * gs[..., None, :]
    tall, wide = u.shape[-2] > s.shape[-1], vh.shape[-1] > s.shape[-1]
    p = (gu - u @ (_t(u) @ gu)) / s[..., None, :] if tall else None
    q = (gv - v @ (vh @ gv)) / s[..., None, :] if wide else None
    return {"v": v, "gv": gv, "f": f, "a": a, "b": b, "j": j, "k": k, "core": core, "p": p, "q": q}


def svd_pullback_adjoint(
    c: Any, gu: Any, gs: Any, gvh: Any, u: Any, s: Any, vh: Any, of: str
) -> Any:
    """The adjoint of :func:`svd_pullback` in one of its inputs (``of``: ``"gu"``,
    ``"gs"``, ``"gvh"``, ``"u"``, ``"s"`` or ``"vh"``), for the cotangent ``c`` of its
    result: each term of the formula taken back (products by transposed products, the
    element-wise ones element-wise, ``dF_ij = -F_ij^2 (2 s_j ds_j - 2 s_i ds_i)``).

    >>> u, s, vh = np.eye(2), np.array([3.0, 1.0]), np.eye(2)
    >>> z = np.zeros((2, 2))
    >>> svd_pullback_adjoint(np.eye(2), z, np.ones(2), z, u, s, vh, "gs").tolist()
    [1.0, 1.0]
    """
    xp = array_module(c, gu, gs, gvh, u, s, vh)
    parts = _svd_pullback_parts(gu, gs, gvh, u, s, vh)
    v, gv, f, core = parts["v"], parts["gv"], parts["f"], parts["core"]
    c_core = _t(u) @ c @ v
    if of == "gs":
        return xp.diagonal(c_core, axis1=-2, axis2=-1)
    c_j, c_k = c_core * s[..., None, :], s[..., :, None] * c_core
    c_a, c_b = f * c_j, f * c_k
    wide, tall = vh.shape[-1] > s.shape[-1], u.shape[-2] > s.shape[-1]
    if of == "gu":
        d = u @ (c_a - _t(c_a))
        if tall:
            c_z = (c @ v) / s[..., None, :]
            d = d + c_z - u @ (_t(u) @ c_z)
        return d
    if of == "gvh":
        d = v @ (c_b - _t(c_b))
        if wide:
            c_y = (_t(c) @ u) / s[..., None, :]
            d = d + c_y - v @ (_t(v) @ c_y)
        return _t(d)
    if of == "u":
        d = c @ v @ _t(core) + gu @ (_t(c_a) - c_a)
        if tall:
            c_z = (c @ v) / s[..., None, :]
            d = d - c_z @ (_t(gu) @ u) - gu @ (_t(c_z) @ u)
        if wide:
            d = d + c @ parts["q"]
        return d
    if of == "vh":
        d_v = gv @ (_t(c_b) - c_b)
        if wide:
            c_y = (_t(c) @ u) / s[..., None, :]
            d_v = d_v - c_y @ (_t(gv) @ v) - gv @ (_t(c_y) @ v)
        d = _t(core) @ _t(u) @ c + _t(d_v)
        if tall:
            d = d + _t(parts["p"]) @ c
        return d
    # s
    d = xp.sum(c_core * parts["j"], axis=-2) + xp.sum(c_core * parts["k"], axis=-1)
    r = (c_j * parts["a"] + c_k * parts["b"]) * f * f
    d = d + 2 * s * (xp.sum(r, axis=-1) - xp.sum(r, axis=-2))
    if tall:
        d = d - xp.sum((c @ v) * parts["p"], axis=-2) / s
    if wide:
        d = d - xp.sum((_t(c) @ u) * parts["q"], axis=-2) / s
    return d


def svd_pullback_along(gu: Any, gs: Any, gvh: Any, u: Any, s: Any, vh: Any, t: Any, of: str) -> Any:
    """The tangent of :func:`svd_pullback` along a change ``t`` of one of its inputs
    (``of`` as in :func:`svd_pullback_adjoint`): the product rule on each term.

    >>> u, s, vh = np.eye(2), np.array([3.0, 1.0]), np.eye(2)
    >>> z = np.zeros((2, 2))
    >>> svd_pullback_along(z, np.ones(2), z, u, s, vh, np.array([1.0, 0.0]), "gs").tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    xp = array_module(gu, gs, gvh, u, s, vh, t)
    parts = _svd_pullback_parts(gu, gs, gvh, u, s, vh)
    v, gv, f = parts["v"], parts["gv"], parts["f"]
    values = zip(("gu", "gs", "gvh", "u", "s", "vh"), (gu, gs, gvh, u, s, vh), strict=True)
    d_gu, d_gs, d_gvh, d_u, d_s, d_vh = (t if n == of else xp.zeros_like(x) for n, x in values)
    d_v, d_gv = _t(d_vh), _t(d_gvh)
    twice = 2 * s * d_s
    d_f = -f * f * (twice[..., None, :] - twice[..., :, None])
    d_a = _t(d_u) @ gu + _t(u) @ d_gu - _t(d_gu) @ u - _t(gu) @ d_u
    d_b = _t(d_v) @ gv + _t(v) @ d_gv - _t(d_gv) @ v - _t(gv) @ d_v
    d_j, d_k = d_f * parts["a"] + f * d_a, d_f * parts["b"] + f * d_b
    d_core = d_j * s[..., None, :] + parts["j"] * d_s[..., None, :]
    d_core = d_core + d_s[..., :, None] * parts["k"] + s[..., :, None] * d_k
    d_core = d_core + xp.eye(s.shape[-1], dtype=s.dtype) * d_gs[..., None, :]
    core = parts["core"]
    grad = d_u @ core @ vh + u @ d_core @ vh + u @ core @ d_vh
    if u.shape[-2] > s.shape[-1]:
        d_z = d_gu - d_u @ (_t(u) @ gu) - u @ (_t(d_u) @ gu + _t(u) @ d_gu)
        p = parts["p"]
        d_p = d_z / s[..., None, :] - p * (d_s / s)[..., None, :]
        grad = grad + d_p @ vh + p @ d_vh
    if vh.shape[-1] > s.shape[-1]:
        d_y = d_gv - d_v @ (vh @ gv) - v @ (d_vh @ gv + vh @ d_gv)
        q = parts["q"]
        d_q = d_y / s[..., None, :] - q * (d_s / s)[..., None, :]
        grad = grad + d_u @ _t(q) + u @ _t(d_q)
    return grad


def svd_tangent(d_a: Any, out: Any, compute_uv: bool = True) -> Any:
    """The tangent of ``np.linalg.svd(a, full_matrices=False)`` along ``d_a``:
    ``[du, ds, dvh]``, or ``ds`` alone when ``compute_uv=False``. ``out`` is the full
    decomposition ``[u, s, vh]`` either way (the rule computes it when numpy returned
    only ``s``).

    >>> u, s, vh = np.linalg.svd(np.diag([3.0, 1.0]), full_matrices=False)
    >>> svd_tangent(np.eye(2), [u, s, vh])[1].tolist()
    [1.0, 1.0]
    """
    u, s, vh = out
    v = _t(vh)
    ds_mat = _t(u) @ d_a @ v
    xp = array_module(d_a)
    ds = xp.diagonal(ds_mat, axis1=-2, axis2=-1)
    if not compute_uv:
        return ds
    f = _inverse_gaps(s, squared=True)
    du = u @ (f * (ds_mat * s[..., None, :] + _t(ds_mat * s[..., None, :])))
    dv = v @ (f * (s[..., :, None] * ds_mat + _t(s[..., :, None] * ds_mat)))
    m, n = d_a.shape[-2], d_a.shape[-1]
    if m > s.shape[-1]:
        dav = d_a @ v
        du = du + (dav - u @ (_t(u) @ dav)) / s[..., None, :]
    if n > s.shape[-1]:
        dau = _t(d_a) @ u
        dv = dv + (dau - v @ (vh @ dau)) / s[..., None, :]
    return [du, ds, _t(dv)]


def matrix_norm_grad(g: Any, out: Any, x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """The gradient of a matrix norm ``np.linalg.norm(x, ord, axis=(row, col))``
    (``axis=None`` for a 2-D ``x``): ``'nuc'`` is ``u vh``, ``2`` and ``-2`` are
    ``u_k vh_k`` of the largest and smallest singular value, ``1``/``-1`` (column
    sums) and ``inf``/``-inf`` (row sums) are ``sign(x)`` on the extreme columns or
    rows.

    Conventions: ``sign(0) = 0``; ties of the extreme column or row sums share the
    gradient equally (as the vector ``inf`` norm); a repeated extreme singular value
    (``ord=2``/``-2``) and a rank-deficient ``x`` (``'nuc'``) take the subgradient
    made of numpy's singular vectors.

    >>> matrix_norm_grad(1.0, 3.0, np.array([[1.0, -2.0], [0.0, 1.0]]), 1, None, False)
    array([[ 0., -1.],
           [ 0.,  1.]])
    """
    xp = array_module(x)
    (row, col), moved = _matrices(x, axis)
    g, out = _expanded(g, (row, col), keepdims), _expanded(out, (row, col), keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        summed, across = (row, col) if ord in (1, -1) else (col, row)
        sums = xp.sum(xp.abs(x), axis=summed, keepdims=True)
        hit = xp.astype(sums == out, x.dtype)
        return cast_like(g * xp.sign(x) * hit / xp.sum(hit, axis=across, keepdims=True), x)
    u, _, vh = xp.linalg.svd(moved, full_matrices=False)
    if ord == 2:
        u, vh = u[..., :, :1], vh[..., :1, :]
    elif ord == -2:
        u, vh = u[..., :, -1:], vh[..., -1:, :]
    return g * xp.moveaxis(u @ vh, (-2, -1), (row, col))


def norm_grad(
    g: Any, value: Any, x: Any, ord: Any, axis: Any = None, keepdims: bool = False
) -> Any:
    """The gradient of ``np.linalg.norm(x, ord, axis, keepdims)`` for an ``ord`` other
    than Frobenius: a matrix norm when numpy computes one (two axes: ``axis=None`` on a
    2-D ``x``, or a pair of axes), else a vector norm. ``value`` is the norm itself
    (named so, not ``out``: a rule's ``out`` is its own result).

    >>> norm_grad(1.0, 2.0, np.array([[2.0, 0.0], [0.0, 1.0]]), 2).tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    if _is_matrix_norm(x, axis):
        return matrix_norm_grad(g, value, x, ord, axis, keepdims)
    return vector_norm_grad(g, value, x, ord, axis, keepdims)


def _is_matrix_norm(x: Any, axis: Any) -> bool:
    return (isinstance(axis, (tuple, list)) and len(axis) == 2) or (axis is None and x.ndim == 2)


def piecewise_constant_norm(ord: Any, x: Any, axis: Any = None) -> Any:
    """``ord`` when :func:`norm_grad` is, away from its kinks, constant in ``x`` and in
    the norm (vector ords 0, 1, inf, -inf; matrix ords 1, -1, inf, -inf: signs on the
    extreme entries, columns or rows), so that its derivative is its linear part in
    ``g``; else a refusal: the other vector ords' gradients curve with ``x`` (a power
    of ``|x|``), and no rule writes that curvature yet (the matrix ords ``'nuc'``, 2,
    -2 turn with ``x`` too: :func:`norm_grad_along_x` has them before asking here).

    >>> piecewise_constant_norm(1, np.ones((2, 2)))
    1
    """
    ord = _plain(ord)
    covered = (1, -1, np.inf, -np.inf) if _is_matrix_norm(x, axis) else (0, 1, np.inf, -np.inf)
    spectral = ("nuc", 2, -2) if _is_matrix_norm(x, axis) else ()  # norm_grad_along_x's
    if isinstance(ord, str) or ord not in covered:
        kind = "matrix" if _is_matrix_norm(x, axis) else "vector"
        raise NoDerivativeRuleError(
            f"no second derivative for np.linalg.norm with ord={ord!r} (a {kind} norm): "
            "its gradient curves with x, and that curvature has no rule",
            hint=f"second derivatives cover the {kind} ords "
            f"{', '.join(map(repr, covered + spectral))} and the Frobenius norm (ord=None); first "
            "derivatives of this ord work: for its second derivative, compare with "
            "finite differences of the gradient",
        )
    return ord


def _plain(ord: Any) -> Any:
    """An ord given as a 0-d array (a table of cases), as the number or string it holds."""
    return ord.item() if getattr(ord, "ndim", None) == 0 else ord


def _singular_parts(x: Any, ord: Any, axis: Any) -> tuple[Any, ...] | None:
    """The norm's two axes, its matrices moved last, their SVD, and the singular
    vectors ``'nuc'`` (all), ``2`` (the first) or ``-2`` (the last) uses; refused at
    repeated or zero singular values, where the singular vectors have no derivative.
    ``None`` where the gradient is not made of singular vectors (the ords
    :func:`piecewise_constant_norm` lets through)."""
    xp, ord = array_module(x), _plain(ord)
    spectral = ord == "nuc" if isinstance(ord, str) else ord in (2, -2)
    if not (_is_matrix_norm(x, axis) and bool(spectral)):
        piecewise_constant_norm(ord, x, axis)
        return None
    where, moved = _matrices(x, axis)
    u, s, vh = xp.linalg.svd(moved, full_matrices=False)
    if not bool(xp.all(xp.isfinite(_inverse_gaps(s, squared=True)))) or not bool(xp.all(s > 0)):
        raise NoDerivativeRuleError(
            f"no second derivative for np.linalg.norm with ord={ord!r} at a repeated or "
            "zero singular value: its singular vectors have no derivative there",
            hint="second derivatives of this norm need distinct, nonzero singular values; "
            "at this point, compare with finite differences of the gradient",
        )
    k = s.shape[-1]
    pick = slice(None) if isinstance(ord, str) else slice(0, 1) if ord == 2 else slice(k - 1, k)
    return where, moved, [u, s, vh], pick


def _matrices(x: Any, axis: Any) -> tuple[tuple[int, int], Any]:
    """A matrix norm's two axes (non-negative), and ``x`` with them moved last."""
    row, col = (-2, -1) if axis is None else tuple(axis)
    row, col = row % x.ndim, col % x.ndim
    return (row, col), array_module(x).moveaxis(x, (row, col), (-2, -1))


def _expanded(grad: Any, where: tuple[int, int], keepdims: bool) -> Any:
    return grad if keepdims else array_module(grad).expand_dims(grad, tuple(sorted(where)))


def norm_grad_along_x(
    grad: Any, value: Any, x: Any, ord: Any, axis: Any, keepdims: bool, t: Any
) -> Any:
    """The tangent of :func:`norm_grad` along a change ``t`` of ``x`` (the norm's value
    moving with it): ``g d(u vh)`` for ``'nuc'`` (``u_k vh_k`` of the largest or smallest
    singular value for ``2``, ``-2``), from the singular vectors' tangents; zero for the
    piecewise-constant ords (:func:`piecewise_constant_norm`), a refusal for the others.

    >>> norm_grad_along_x(1.0, 3.0, np.array([[1.0, -2.0], [0.0, 1.0]]), 1, None, False,
    ...                   np.ones((2, 2))).tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    xp = array_module(x)
    parts = _singular_parts(x, ord, axis)
    if parts is None:
        return xp.zeros_like(t)
    where, moved, out, pick = parts
    u, _, vh = out
    du, _, dvh = svd_tangent(xp.moveaxis(t, where, (-2, -1)), out)
    turned = du[..., :, pick] @ vh[..., pick, :] + u[..., :, pick] @ dvh[..., pick, :]
    return cast_like(_expanded(grad, where, keepdims) * xp.moveaxis(turned, (-2, -1), where), x)


def norm_grad_adjoint_x(
    c: Any, grad: Any, value: Any, x: Any, ord: Any, axis: Any, keepdims: bool
) -> Any:
    """The adjoint of :func:`norm_grad` in ``x`` (the transpose of
    :func:`norm_grad_along_x`): the cotangent ``c g`` pulled back through the singular
    vectors by :func:`svd_grad`; zero for the piecewise-constant ords, a refusal for
    the others.

    >>> norm_grad_adjoint_x(np.ones((2, 2)), 1.0, 3.0, np.array([[1.0, -2.0], [0.0, 1.0]]),
    ...                     1, None, False).tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    xp = array_module(x)
    parts = _singular_parts(x, ord, axis)
    if parts is None:
        return xp.zeros_like(x)
    where, moved, out, pick = parts
    u, s, vh = out
    cm = xp.moveaxis(c * _expanded(grad, where, keepdims), where, (-2, -1))
    gu, gvh = xp.zeros_like(u), xp.zeros_like(vh)
    gu[..., :, pick] = cm @ _t(vh[..., pick, :])
    gvh[..., pick, :] = _t(u[..., :, pick]) @ cm
    pulled = svd_grad([gu, xp.zeros_like(s), gvh], out, moved)
    return cast_like(xp.moveaxis(pulled, (-2, -1), where), x)


def norm_grad_in_g(
    c: Any, value: Any, x: Any, ord: Any, axis: Any = None, keepdims: bool = False
) -> Any:
    """The adjoint of :func:`norm_grad` in its gradient ``g`` (it is linear in ``g``,
    for every ord): ``c`` times the gradient for ``g = 1``, summed over the norm's axes.

    >>> norm_grad_in_g(np.array([2.0, 3.0]), 3.0, np.array([-1.0, 2.0]), 1).tolist()
    1.0
    """
    xp = array_module(x)
    direction = norm_grad(xp.ones_like(value), value, x, ord, axis, keepdims)
    summed = None if axis is None else tuple(axis) if isinstance(axis, (tuple, list)) else axis
    return cast_like(xp.sum(c * direction, axis=summed, keepdims=keepdims), value)


def _least_squares(out: Any, a: Any, b: Any) -> tuple[Any, Any, Any]:
    """``x`` and ``b`` as columns, and the residual ``r = b - a x``, of a least-squares
    solution; refused unless ``a`` has full column rank (its solution is then
    ``(a^T a)^-1 a^T b``, the one the formulas differentiate)."""
    if int(out[2]) < a.shape[-1]:
        raise NoDerivativeRuleError(
            f"np.linalg.lstsq of a matrix of rank {int(out[2])} with {a.shape[-1]} "
            "columns: the derivative is covered for full column rank only (one solution)",
            hint="regularize: np.linalg.solve(A.T @ A + lam * np.eye(n), A.T @ b)",
        )
    x = out[0][:, None] if b.ndim == 1 else out[0]
    b = b[:, None] if b.ndim == 1 else b
    return x, b, b - a @ x


def lstsq_grad(g: Any, out: Any, a: Any, b: Any, of: str) -> Any:
    """The gradient with respect to ``a`` (``of="a"``) or ``b`` (``of="b"``) of
    ``x, residuals, rank, s = np.linalg.lstsq(a, b)`` for ``a`` of full column rank,
    given one gradient per result: with ``z = (a^T a)^-1 gx`` and ``r = b - a x``,
    ``ga = r z^T - a z x^T`` and ``gb = a z``; the residuals ``|r|^2`` add ``2 r gres``
    to ``gb`` and ``-2 r gres x^T`` to ``ga`` (``a^T r = 0`` at the solution); the
    singular values add ``u diag(gs) vh`` to ``ga``; the rank has none.

    >>> a, b = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]), np.array([1.0, 1.0, 1.0])
    >>> g = [np.array([0.0, 1.0]), np.zeros(1), 0, np.zeros(2)]
    >>> lstsq_grad(g, np.linalg.lstsq(a, b), a, b, "b").tolist()  # x[1] = b[1] / 2
    [0.0, 0.5, 0.0]
    """
    xp = array_module(a, b)
    x, _, r = _least_squares(out, a, b)
    gx = xp.asarray(g[0])
    z = xp.linalg.solve(_t(a) @ a, gx[:, None] if gx.ndim == 1 else gx)
    gb = a @ z
    if out[1].size:  # a tall matrix of full rank: the squared residual of each column
        gb = gb + 2 * r * xp.asarray(g[1])
    if of == "b":
        return gb[:, 0] if b.ndim == 1 else gb
    ga = r @ _t(z) - gb @ _t(x)
    gs = xp.asarray(g[3])
    if xp.any(gs != 0):
        u, _, vh = xp.linalg.svd(a, full_matrices=False)
        ga = ga + (u * gs) @ vh
    return ga


def lstsq_tangent(d_a: Any, d_b: Any, out: Any, a: Any, b: Any) -> list[Any]:
    """The tangents ``[dx, dres, drank, ds]`` of ``np.linalg.lstsq(a, b)`` along
    ``(d_a, d_b)``, ``a`` of full column rank: ``dx = (a^T a)^-1 (d_a^T r - a^T d_a x
    + a^T d_b)``, ``dres = 2 sum(r (d_b - d_a x))`` per column, ``ds = diag(u^T d_a v)``.

    >>> a, b = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]), np.array([1.0, 1.0, 1.0])
    >>> d_b = np.array([0.0, 1.0, 0.0])
    >>> lstsq_tangent(np.zeros((3, 2)), d_b, np.linalg.lstsq(a, b), a, b)[0].tolist()
    [0.0, 0.5]
    """
    xp = array_module(a, b, d_a, d_b)
    x, _, r = _least_squares(out, a, b)
    d_b2 = d_b[:, None] if b.ndim == 1 else d_b
    dx = xp.linalg.solve(_t(a) @ a, _t(d_a) @ r - _t(a) @ (d_a @ x) + _t(a) @ d_b2)
    dres = 2 * xp.sum(r * (d_b2 - d_a @ x), axis=0) if out[1].size else xp.zeros_like(out[1])
    u, _, vh = xp.linalg.svd(a, full_matrices=False)
    ds = xp.sum(u * (d_a @ _t(vh)), axis=0)
    return [dx[:, 0] if b.ndim == 1 else dx, dres, xp.zeros_like(out[2]), ds]
