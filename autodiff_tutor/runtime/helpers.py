"""Small array helpers that derivative rules (and so generated code) call, and the
public names of the ``helpers_*`` modules, re-exported here for generated code.

Each one is backend-agnostic: it takes the array module from its arguments.

>>> import numpy as np
>>> unbroadcast(np.ones((4, 3)), np.zeros(3)).tolist()
[4.0, 4.0, 4.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.runtime import helpers_arrays as _arrays
from autodiff_tutor.runtime import helpers_checks as _checks
from autodiff_tutor.runtime import helpers_einsum as _einsum
from autodiff_tutor.runtime import helpers_indexing as _indexing
from autodiff_tutor.runtime import helpers_linalg as _linalg
from autodiff_tutor.runtime import helpers_numerical as _numerical
from autodiff_tutor.runtime import helpers_pad as _pad
from autodiff_tutor.runtime import helpers_scans as _scans
from autodiff_tutor.runtime.backend import (
    add_gradients,
    array_module,
    cast_like,
    shape_of,
    shares_memory,
    size,
)

# each helper module's public names (its __all__), re-exported for generated code
from autodiff_tutor.runtime.helpers_arrays import *  # noqa: F403
from autodiff_tutor.runtime.helpers_arrays import cut, tensordot_operand
from autodiff_tutor.runtime.helpers_checks import *  # noqa: F403
from autodiff_tutor.runtime.helpers_einsum import *  # noqa: F403
from autodiff_tutor.runtime.helpers_indexing import *  # noqa: F403
from autodiff_tutor.runtime.helpers_linalg import *  # noqa: F403
from autodiff_tutor.runtime.helpers_numerical import *  # noqa: F403
from autodiff_tutor.runtime.helpers_pad import *  # noqa: F403
from autodiff_tutor.runtime.helpers_scans import *  # noqa: F403
from autodiff_tutor.runtime.special import digamma, trigamma  # noqa: F401 - re-exported

__all__ = [
    *_arrays.__all__,
    *_einsum.__all__,
    *_indexing.__all__,
    *_linalg.__all__,
    *_numerical.__all__,
    *_checks.__all__,
    *_pad.__all__,
    *_scans.__all__,
    "digamma",
    "trigamma",
    "add_lists",
    "axes_last",
    "broadcast_like",
    "cast_like",
    "dot_dx",
    "dot_dy",
    "inverse_axes",
    "matmul_dx",
    "matmul_dy",
    "prod_others",
    "shares_memory",
    "size",
    "split_like",
    "tie_share",
    "unbroadcast",
    "unreduce",
    "unsplit",
    "unstack",
    "untranspose",
]


def unbroadcast(g: Any, x: Any) -> Any:
    """Sum ``g`` down to the shape of ``x`` and cast it to ``x``'s dtype.

    The adjoint of broadcasting: every axis that numpy added or stretched for ``x``
    is summed over.

    >>> unbroadcast(np.ones((2, 3)), np.ones((2, 1), np.float32))
    array([[3.],
           [3.]], dtype=float32)
    """
    if type(g) is type(x) and type(g) in _NUMPY_TYPES and g.shape == x.shape:
        if g.dtype == x.dtype:  # nothing to do: the common case, checked cheaply
            return g
    shape, g_shape = shape_of(x), shape_of(g)
    if g_shape != shape:
        xp = array_module(g, x)
        lead = len(g_shape) - len(shape)
        axes = tuple(range(lead))
        axes += tuple(lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
        if axes:
            g = xp.sum(g, axis=axes, keepdims=True)
        g = xp.reshape(g, shape)
    return cast_like(g, x)


_NUMPY_TYPES = (np.ndarray, np.float64, np.float32)
_SMALL = 4096  # below this many elements, filling an array beats building a broadcast view


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (int(axis) % ndim,)


def unreduce(g: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Broadcast the gradient of a reduction back to the shape of its input.

    >>> unreduce(np.array([1.0, 2.0]), np.zeros((2, 3)), axis=1).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    small_float = type(x) is np.ndarray and x.dtype.kind == "f" and x.size <= _SMALL
    if axis is None and small_float and isinstance(g, (np.floating, float)):
        filled = np.empty(x.shape, dtype=np.result_type(g))  # cheaper than a view when small
        filled.fill(g)
        return filled
    xp = array_module(g, x)
    shape = shape_of(x)
    if not keepdims and axis is not None:
        kept = list(shape_of(g))
        for a in _axes(axis, len(shape)):
            kept.insert(a, 1)
        g = xp.reshape(g, tuple(kept))
    return xp.broadcast_to(g, shape)


def tie_share(x: Any, out: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Where ``x`` reaches its max (or min) ``out``: 1/number of ties, else 0.

    >>> tie_share(np.array([1.0, 3.0, 3.0]), np.float64(3.0)).tolist()
    [0.0, 0.5, 0.5]
    """
    xp = array_module(x, out)
    hit = x == unreduce(out, x, axis, keepdims)
    count = xp.sum(xp.astype(hit, x.dtype), axis=_axes(axis, x.ndim), keepdims=True)
    return xp.astype(hit, x.dtype) / count


def prod_others(x: Any, axis: Any = None) -> Any:
    """For each element, the product of the other elements along ``axis``.

    Exact when ``x`` has zeros (no division by ``x``).

    >>> prod_others(np.array([2.0, 0.0, 5.0])).tolist()
    [0.0, 10.0, 0.0]
    """
    xp = array_module(x)
    if axis is None:
        return xp.reshape(prod_others(xp.reshape(x, (-1,)), 0), x.shape)
    if isinstance(axis, (tuple, list)):  # the chosen axes side by side, as one axis
        order = axes_last(x.ndim, axis)
        moved = xp.transpose(x, order)
        kept = moved.shape[: x.ndim - len(axes_last(x.ndim, axis, chosen=True))]
        others = prod_others(xp.reshape(moved, (*kept, -1)), -1)
        return xp.transpose(xp.reshape(others, moved.shape), inverse_axes(order))
    moved = xp.moveaxis(x, axis, -1)
    ones = xp.ones_like(moved[..., :1])
    left = xp.cumprod(xp.concatenate([ones, moved[..., :-1]], axis=-1), axis=-1)
    flipped = xp.flip(moved, axis=-1)
    right = xp.cumprod(xp.concatenate([ones, flipped[..., :-1]], axis=-1), axis=-1)
    return xp.moveaxis(left * xp.flip(right, axis=-1), -1, axis)


def _matrix_t(a: Any) -> Any:
    xp = array_module(a)
    if hasattr(xp, "matrix_transpose"):  # the array API name
        return xp.matrix_transpose(a)
    return xp.swapaxes(a, -1, -2)


def matmul_dx(g: Any, x: Any, y: Any) -> Any:
    """Gradient of ``x @ y`` with respect to ``x``: ``g @ y.T`` for matrices.

    Vectors and stacks of matrices follow numpy's matmul promotion rules.

    >>> matmul_dx(np.ones((2, 2)), np.ones((2, 3)), np.ones((3, 2))).shape
    (2, 3)
    """
    xp = array_module(g, x, y)
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * y, x)
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        return cast_like(g * y, x)
    if np.ndim(y) == 1:
        dx = g[..., None] * y  # (..., n) outer (k,)
    elif np.ndim(x) == 1:
        dx = xp.matmul(y, g[..., None])[..., 0]  # (k, m) @ (m,)
    else:
        dx = xp.matmul(g, _matrix_t(y))
    return unbroadcast(dx, x)


def matmul_dy(g: Any, x: Any, y: Any) -> Any:
    """Gradient of ``x @ y`` with respect to ``y``: ``x.T @ g`` for matrices.

    >>> matmul_dy(np.ones((2, 2)), np.ones((2, 3)), np.ones((3, 2))).shape
    (3, 2)
    """
    xp = array_module(g, x, y)
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * x, y)
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        return cast_like(g * x, y)
    if np.ndim(x) == 1:
        dy = x[:, None] * g[..., None, :]  # (k,) outer (..., m)
    elif np.ndim(y) == 1:
        dy = xp.matmul(_matrix_t(x), g[..., None])[..., 0]
    else:
        dy = xp.matmul(_matrix_t(x), g)
    return unbroadcast(dy, y)


def _dot_axes(x: Any, y: Any) -> tuple[list[int], list[int]] | None:
    """The axes ``np.dot`` contracts when an operand has more than two dimensions (the
    last of ``x`` with the second-to-last of ``y``, or its only one), else ``None``
    (scalars, vectors and matrices: the matmul gradients)."""
    if np.ndim(x) <= 2 and np.ndim(y) <= 2 or np.ndim(x) == 0 or np.ndim(y) == 0:
        return None
    return [np.ndim(x) - 1], [max(np.ndim(y) - 2, 0)]


def dot_dx(g: Any, x: Any, y: Any) -> Any:
    """Gradient of ``np.dot(x, y)`` w.r.t. ``x`` (any dimensions numpy allows).

    >>> dot_dx(np.float64(2.0), np.ones(2), np.arange(2.0)).tolist()
    [0.0, 2.0]
    >>> dot_dx(np.ones((2, 3, 5, 2)), np.ones((2, 3, 4)), np.ones((5, 4, 2))).shape
    (2, 3, 4)
    """
    axes = _dot_axes(x, y)
    return matmul_dx(g, x, y) if axes is None else tensordot_operand(g, x, y, axes, 0)


def dot_dy(g: Any, x: Any, y: Any) -> Any:
    """Gradient of ``np.dot(x, y)`` w.r.t. ``y`` (any dimensions numpy allows).

    >>> dot_dy(np.float64(2.0), np.ones(2), np.arange(2.0)).tolist()
    [2.0, 2.0]
    """
    axes = _dot_axes(x, y)
    return matmul_dy(g, x, y) if axes is None else tensordot_operand(g, x, y, axes, 1)


def axes_last(ndim: int, axis: Any, chosen: bool = False) -> tuple[int, ...]:
    """The permutation that moves the axes ``axis`` (``None``: all, an int, a tuple)
    last, in their order; with ``chosen``, those axes only.

    >>> axes_last(3, (0, -1)), axes_last(3, 1), axes_last(2, None, chosen=True)
    ((1, 0, 2), (0, 2, 1), (0, 1))
    """
    axes = range(ndim) if axis is None else axis if isinstance(axis, (tuple, list)) else (axis,)
    last = sorted({int(a) % ndim for a in axes})
    return tuple(last) if chosen else tuple([a for a in range(ndim) if a not in last] + last)


def inverse_axes(axes: Any) -> tuple[int, ...]:
    """The permutation that undoes ``transpose(x, axes)``.

    >>> inverse_axes((1, 2, 0))
    (2, 0, 1)
    """
    positions = [int(a) for a in axes]
    return tuple(sorted(range(len(positions)), key=lambda i: positions[i] % len(positions)))


def untranspose(g: Any, axes: Any) -> Any:
    """Undo ``transpose(x, axes)`` on the gradient ``g``.

    >>> untranspose(np.zeros((4, 2, 3)), (2, 0, 1)).shape
    (2, 3, 4)
    """
    xp = array_module(g)
    permute = getattr(xp, "permute_dims", None) or xp.transpose  # array API, or numpy < 2
    return permute(g, inverse_axes(axes))


def split_like(g: Any, xs: Any, axis: int = 0) -> list[Any]:
    """Cut the gradient of a concatenation into one piece per input.

    An input may be a Python list of numbers (``np.concatenate([[0.0], x, [0.0]])``),
    whose shape numpy reads from its nesting.

    >>> [p.shape for p in split_like(np.ones(5), [np.ones(2), np.ones(3)])]
    [(2,), (3,)]
    >>> [p.shape for p in split_like(np.ones(4), [[0.0], np.ones(2), [1.0]])]
    [(1,), (2,), (1,)]
    """
    shapes = [shape_of(x) if hasattr(x, "shape") else np.shape(x) for x in xs]
    if axis is None:  # np.concatenate(xs, axis=None) joins the flattened inputs
        xp = array_module(g)
        flat = cut(g, [int(np.prod(shape)) for shape in shapes], 0)
        return [xp.reshape(p, shape) for p, shape in zip(flat, shapes, strict=True)]
    return cut(g, [shape[axis] for shape in shapes], axis)


def unsplit(g: Any, axis: int = 0) -> Any:
    """The gradient of ``np.split`` and its kin: the pieces' gradients joined back
    along ``axis`` (a helper, not ``concatenate`` itself, because the list of pieces is
    a value, and its own gradient, :func:`split_like`, needs a rule).

    >>> unsplit([np.ones(2), np.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    return array_module(*g).concatenate(g, axis=axis)


def unstack(g: Any, axis: int = 0) -> list[Any]:
    """Split the gradient of ``stack`` into the gradients of the stacked arrays.

    >>> [p.tolist() for p in unstack(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)]
    [[1.0, 3.0], [2.0, 4.0]]
    """
    xp = array_module(g)
    moved = xp.moveaxis(g, axis, 0)
    return [moved[i, ...] for i in range(moved.shape[0])]


def broadcast_like(value: Any, like: Any) -> Any:
    """``value`` broadcast to the shape of ``like`` (a tangent of a broadcast result).

    >>> broadcast_like(np.ones(2), np.zeros((3, 2))).shape
    (3, 2)
    """
    if shape_of(value) == shape_of(like):
        return value
    return array_module(value, like).broadcast_to(value, shape_of(like))


def add_lists(xs: Any, ys: Any) -> Any:
    """Element-wise sum of two lists of gradients (the gradient of a list used twice),
    lists in them item by item too; of two arrays (what may be a list, read from a
    list), their sum.

    >>> add_lists([1.0, 2.0], [10.0, 20.0])
    [11.0, 22.0]
    """
    return add_gradients(xs, ys)
