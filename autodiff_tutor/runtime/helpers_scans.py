"""Helpers for the rules of ``np.cumprod``: its gradient and its tangent, exact where
``x`` has zeros (no division by a zero), and the pair products that differentiate the
gradient again.

For ``y = cumprod(x)`` along an axis, ``y_j = x_0 x_1 ... x_j`` and
``dy_j / dx_i = prod_{l <= j, l != i} x_l`` for ``i <= j``. Before the first zero of a
scan that is ``y_j / x_i``; on the first zero, the scan of the others (that zero set
to 1); after it 0 (every product keeps the zero). With ``axis=None`` numpy scans the
flattened array: ``y`` (and a gradient for it) is 1-d, ``x`` keeps its shape.

>>> import numpy as np
>>> x = np.array([2.0, 0.0, 3.0])              # y = [2, 0, 0]
>>> cumprod_grad(np.ones(3), x).tolist()        # d sum(y): [1 + 0 + 0, 2 + 2*3, 0]
[1.0, 8.0, 0.0]
>>> cumprod_jvp(x, np.array([0.0, 1.0, 0.0])).tolist()
[0.0, 2.0, 6.0]
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.runtime.backend import array_module

__all__ = ["cumprod_grad", "cumprod_grad_cross", "cumprod_jvp"]


def cumprod_grad(g: Any, x: Any, axis: int | None = None) -> Any:
    """The gradient of ``sum(g * cumprod(x, axis))`` with respect to ``x``.

    >>> import numpy as np
    >>> cumprod_grad(np.ones((1, 3)), np.array([[0.0, 2.0, 0.0]]), axis=1).tolist()
    [[3.0, 0.0, 0.0]]
    """
    xp = array_module(g, x)
    moved, g_moved = _last(xp, x, axis), _last(xp, xp.reshape(g, _scan_shape(x, axis)), axis)
    return _back(xp, _scan_grad(xp, g_moved, moved), x, axis)


def cumprod_jvp(x: Any, d_x: Any, axis: int | None = None) -> Any:
    """The tangent of ``cumprod(x, axis)`` along ``d_x`` (the output's shape).

    >>> import numpy as np
    >>> cumprod_jvp(np.array([0.0, 2.0]), np.array([1.0, 0.0])).tolist()
    [1.0, 2.0]
    """
    xp = array_module(x, d_x)
    moved, d_moved = _last(xp, x, axis), _last(xp, d_x, axis)
    if not bool(xp.any(moved == 0)):
        tangent = _cumprod(xp, moved) * xp.cumsum(d_moved / moved, axis=-1)
        return _scan_layout(xp, tangent, x, axis)
    first = _first_zero(xp, moved)
    before = _cumprod(xp, moved) * xp.cumsum(d_moved / _nonzero(xp, moved), axis=-1)
    on_zero = _cumprod(xp, xp.where(first, 1, moved)) * xp.cumsum(xp.where(first, d_moved, 0), -1)
    tangent = before + on_zero  # before: 0 from the first zero on (the products are 0)
    return _scan_layout(xp, tangent, x, axis)


def cumprod_grad_cross(
    g: Any, x: Any, v: Any, axis: int | None = None, transposed: bool = False
) -> Any:
    """``cumprod_grad(g, x, axis)`` differentiated in ``x``: its vjp with the cotangent
    ``v``, or (``transposed``) its jvp along ``v``, by the pair products
    ``d grad_i / d x_k = sum_{j >= max(i, k)} g_j prod_{l <= j, l not in {i, k}} x_l``
    (the gradient of the scan of ``x`` with ``x_k`` set to 1, for ``j >= k``): an
    ``n x n`` matrix per slice along the axis, no division.

    >>> import numpy as np
    >>> x = np.array([2.0, 0.0, 3.0])
    >>> cumprod_grad_cross(np.ones(3), x, np.array([0.0, 1.0, 0.0])).tolist()
    [4.0, 0.0, 2.0]
    """
    xp = array_module(g, x, v)
    moved, g_moved, v_moved = (
        _last(xp, x, axis),
        _last(xp, xp.reshape(g, _scan_shape(x, axis)), axis),
        _last(xp, v, axis),
    )
    n = moved.shape[-1]
    eye = xp.eye(n, dtype=bool)
    later = xp.arange(n)[None, :] >= xp.arange(n)[:, None]  # [k, j]: j >= k
    scans = xp.where(eye, 1, moved[..., None, :])  # [..., k, l]: x with x_k set to 1
    pairs = _scan_grad(xp, xp.where(later, g_moved[..., None, :], 0), scans)  # [..., k, i]
    pairs = xp.where(eye, 0, pairs)
    if transposed:  # sum over k of v_k pairs[k, i]
        result = xp.sum(v_moved[..., :, None] * pairs, axis=-2)
    else:  # sum over i of pairs[k, i] v_i
        result = xp.sum(pairs * v_moved[..., None, :], axis=-1)
    return _back(xp, result, x, axis)


def _scan_grad(xp: Any, g: Any, x: Any) -> Any:
    """``cumprod_grad`` along the last axis (without zeros: ``y_j / x_i``, summed)."""
    if not bool(xp.any(x == 0)):
        return _from_end(xp, g * _cumprod(xp, x)) / x
    first = _first_zero(xp, x)
    later = _from_end(xp, g * _cumprod(xp, x))  # 0 from the first zero on
    on_zero = _from_end(xp, g * _cumprod(xp, xp.where(first, 1, x)))
    return xp.where(first, on_zero, later / _nonzero(xp, x))


def _first_zero(xp: Any, x: Any) -> Any:
    zero = x == 0
    return zero & (xp.cumsum(zero, axis=-1) == 1)


def _nonzero(xp: Any, x: Any) -> Any:
    return xp.where(x == 0, 1, x)


def _cumprod(xp: Any, x: Any) -> Any:
    return xp.cumprod(x, axis=-1)


def _from_end(xp: Any, a: Any) -> Any:
    """Sums from each element to the end of the last axis."""
    return xp.flip(xp.cumsum(xp.flip(a, axis=-1), axis=-1), axis=-1)


def _scan_shape(x: Any, axis: int | None) -> tuple[int, ...]:
    return (x.size,) if axis is None else tuple(x.shape)


def _last(xp: Any, a: Any, axis: int | None) -> Any:
    """``a`` with the scanned axis last (flattened for ``axis=None``)."""
    return xp.reshape(a, (-1,)) if axis is None else xp.moveaxis(a, axis, -1)


def _scan_layout(xp: Any, a: Any, x: Any, axis: int | None) -> Any:
    """``a`` (scanned axis last) in the layout of the scan's output."""
    return xp.reshape(a, _scan_shape(x, axis)) if axis is None else _back(xp, a, x, axis)


def _back(xp: Any, a: Any, x: Any, axis: int | None) -> Any:
    """``a`` (scanned axis last) back in ``x``'s layout."""
    return xp.reshape(a, x.shape) if axis is None else xp.moveaxis(a, -1, axis)
