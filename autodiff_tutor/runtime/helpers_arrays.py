"""Helpers for the rules of arrangement, statistics and contraction primitives. Most
undo a rearrangement: :func:`untile` and :func:`unrepeat` add the copies back up,
:func:`embed_diagonal` puts a diagonal back into a matrix of zeros.

>>> import numpy as np
>>> untile(np.ones(6), np.zeros(3), 2).tolist()
[2.0, 2.0, 2.0]
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.runtime.backend import array_module, cast_like
from autodiff_tutor.runtime.helpers_indexing import add_at

__all__ = [
    "einsum_operand",
    "einsum_parts",
    "embed_diagonal",
    "kron_operand",
    "negated",
    "tensordot_operand",
    "undo_diff",
    "unjoin",
    "unrepeat",
    "untake_along_axis",
    "untile",
    "vector_norm_grad",
    "weights_like",
]


def negated(shift: Any) -> Any:
    """``-shift`` for an int or a tuple of ints (``np.roll``'s shift).

    >>> negated((1, -2))
    (-1, 2)
    """
    if isinstance(shift, (tuple, list)):
        return tuple(-int(s) for s in shift)
    return -shift


def untile(g: Any, x: Any, reps: Any) -> Any:
    """The gradient of ``np.tile(x, reps)``: the copies of each element added up."""
    xp = array_module(g)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    shape = tuple(x.shape)
    d = max(len(shape), len(reps))
    reps = (1,) * (d - len(reps)) + reps
    padded = (1,) * (d - len(shape)) + shape
    split = [v for pair in zip(reps, padded, strict=True) for v in pair]
    summed = xp.sum(xp.reshape(g, tuple(split)), axis=tuple(range(0, 2 * d, 2)))
    return cast_like(xp.reshape(summed, shape), x)


def unrepeat(g: Any, x: Any, repeats: Any, axis: Any = None) -> Any:
    """The gradient of ``np.repeat(x, repeats, axis)``: the copies added up."""
    xp = array_module(g)
    if axis is None:
        flat_shape = (int(np.prod(x.shape)),)
        return xp.reshape(unrepeat(g, xp.reshape(x, flat_shape), repeats, 0), x.shape)
    axis = axis % x.ndim
    counts = np.broadcast_to(np.asarray(repeats, dtype=int), (x.shape[axis],))
    starts = np.cumsum(counts) - counts  # (an empty axis: no pieces)
    moved = xp.moveaxis(g, axis, 0)
    pieces = [xp.sum(moved[s : s + c], axis=0) for s, c in zip(starts, counts, strict=True)]
    if not pieces:
        return xp.zeros_like(x)
    return cast_like(xp.moveaxis(xp.stack(pieces, axis=0), 0, axis), x)


def embed_diagonal(g: Any, x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Zeros shaped like ``x`` with ``g`` on the ``offset`` diagonal of ``axis1, axis2``
    (the gradient of ``np.diagonal``; ``g`` has the diagonal as its last axis)."""
    xp = array_module(g)
    rows, cols = x.shape[axis1], x.shape[axis2]
    k = g.shape[-1]
    index = xp.arange(k)
    r = xp.arange(rows)[None, :, None] == (index + max(-offset, 0))[:, None, None]
    c = xp.arange(cols)[None, None, :] == (index + max(offset, 0))[:, None, None]
    select = xp.where(r & c, 1, 0)
    placed = xp.einsum("...i,irc->...rc", g, select)
    return cast_like(xp.moveaxis(placed, (-2, -1), (axis1, axis2)), x)


def undo_diff(g: Any, n: int = 1, axis: int = -1) -> Any:
    """The gradient of ``np.diff(x, n, axis)``: ``(-1)^n diff(pad(g, n), n)``."""
    xp = array_module(g)
    axis = axis % len(g.shape)
    widths = [(n, n) if i == axis else (0, 0) for i in range(len(g.shape))]
    return (-1) ** n * xp.diff(xp.pad(g, widths), n=n, axis=axis)


def weights_like(weights: Any, x: Any, axis: Any = None) -> Any:
    """``np.average``'s weights, broadcast against ``x`` as numpy reads them (1-D
    weights lie along ``axis``).

    >>> weights_like(np.array([1.0, 2.0]), np.zeros((2, 3)), axis=0).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    xp = array_module(x)
    weights = xp.asarray(weights)
    if weights.shape != x.shape and weights.ndim == 1 and axis is not None:
        shape = [1] * x.ndim
        shape[axis % x.ndim] = weights.shape[0]
        weights = xp.reshape(weights, tuple(shape))
    return xp.broadcast_to(weights, x.shape)


def untake_along_axis(g: Any, x: Any, indices: Any, axis: Any = -1) -> Any:
    """The gradient of ``np.take_along_axis(x, indices, axis)``: ``g`` added at the
    picked places (repeated picks accumulate)."""
    xp = array_module(g)
    if axis is None:
        flat = untake_along_axis(g, xp.reshape(x, (-1,)), indices, 0)
        return xp.reshape(flat, x.shape)
    axis = axis % x.ndim
    # indices broadcast against x off the axis: the result (and g) has the larger sizes
    picked = tuple(
        k if i == axis or n == 1 else n
        for i, (n, k) in enumerate(zip(x.shape, indices.shape, strict=True))
    )
    indices = xp.broadcast_to(indices, picked)
    index = tuple(
        indices
        if i == axis
        else xp.reshape(xp.arange(n), tuple(n if j == i else 1 for j in range(x.ndim)))
        for i, n in enumerate(indices.shape)
    )
    buffer = xp.zeros(x.shape, dtype=g.dtype)
    add_at(buffer, index, xp.broadcast_to(g, indices.shape))
    return cast_like(buffer, x)


_JOINS = {  # how each stacking function promotes its inputs, and the joined axis
    "hstack": (1, lambda s: s if s else (1,), lambda nd: 0 if nd == 1 else 1),
    "vstack": (2, lambda s: (1, *s) if len(s) == 1 else s if s else (1, 1), lambda nd: 0),
    "dstack": (
        3,
        lambda s: {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}.get(len(s), s),
        lambda nd: 2,
    ),
    "column_stack": (2, lambda s: (*s, 1) if len(s) == 1 else s if s else (1, 1), lambda nd: 1),
}


def unjoin(g: Any, xs: Any, how: str) -> list[Any]:
    """The gradients of ``np.hstack/vstack/dstack/column_stack(xs)``: ``g`` cut into
    the promoted inputs' pieces, each reshaped back to its input's shape.

    >>> [p.shape for p in unjoin(np.ones((2, 3)), [np.ones(3), np.ones((1, 3))], "vstack")]
    [(3,), (1, 3)]
    """
    xp = array_module(g)
    _, promote, joined = _JOINS[str(how)]
    shapes = [promote(tuple(x.shape)) for x in xs]
    axis = joined(len(shapes[0]))
    pieces = cut(g, [shape[axis] for shape in shapes], axis)
    return [cast_like(xp.reshape(p, tuple(x.shape)), x) for p, x in zip(pieces, xs, strict=True)]


def cut(g: Any, lengths: list[int], axis: int) -> list[Any]:
    """Consecutive slices of ``g`` along ``axis``, of the given lengths.

    >>> [p.tolist() for p in cut(np.arange(5.0), [2, 3], 0)]
    [[0.0, 1.0], [2.0, 3.0, 4.0]]
    """
    lead = (slice(None),) * (axis % len(g.shape))
    starts = itertools.accumulate(lengths, initial=0)  # and the end: one more than lengths
    return [g[(*lead, slice(s, s + n), ...)] for s, n in zip(starts, lengths, strict=False)]


def einsum_operand(subscripts: Any, g: Any, x: Any, y: Any, which: int) -> Any:
    """The gradient of ``np.einsum(subscripts, x, y)`` for operand ``which`` (0 or 1):
    another einsum of ``g`` with the other operand, summed over the axes where the
    operand was broadcast (length 1) and broadcast over the indices only it has.
    Covers two operands with letters and ``...`` (implicit or explicit output); an
    index repeated within one operand (a diagonal) is refused.

    >>> a, b = np.ones((2, 3)), np.ones((3, 4))
    >>> einsum_operand("ij,jk->ik", np.ones((2, 4)), a, b, 0).tolist()
    [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
    >>> einsum_operand("...j,j", np.ones(2), np.ones((2, 3)), np.arange(3.0), 1).tolist()
    [2.0, 2.0, 2.0]
    """
    xp = array_module(g)
    left, right, output = einsum_parts(str(subscripts), (x.ndim, y.ndim))
    target, other = (left, right) if which == 0 else (right, left)
    operand = x if which == 0 else y
    partner = y if which == 0 else x
    kept = "".join(c for c in target if c in output or c in other)
    result = xp.einsum(f"{output},{other}->{kept}", g, partner)
    size = dict(zip(target, operand.shape, strict=True))
    stretched = tuple(i for i, c in enumerate(kept) if size[c] == 1 and result.shape[i] != 1)
    if stretched:  # numpy broadcast a length-1 axis of this operand: add the copies up
        result = xp.sum(result, axis=stretched, keepdims=True)
    shape = tuple(n if c in kept else 1 for c, n in zip(target, operand.shape, strict=True))
    return cast_like(xp.broadcast_to(xp.reshape(result, shape), operand.shape), operand)


def einsum_parts(subscripts: str, ndims: tuple[int, int] | None = None) -> tuple[str, str, str]:
    """``"ij,jk->ik"`` as ``("ij", "jk", "ik")``; the implicit output is numpy's (the
    letters seen once, in order, after the ``...`` axes). Given the operands' ``ndims``,
    ``...`` becomes letters of its own, aligned from the right as numpy broadcasts.
    Refuses what the einsum rule does not cover.

    >>> einsum_parts("ij,jk")
    ('ij', 'jk', 'ik')
    >>> einsum_parts("...ij,...jk", (4, 3))
    ('ABij', 'Bjk', 'ABik')
    """
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    operands = inputs.split(",")
    letters = [o.replace("...", "", 1) for o in operands + [output]]
    if len(operands) != 2 or any("." in o or len(set(o)) != len(o) for o in letters):
        raise NoDerivativeRuleError(
            f"no derivative rule for np.einsum({subscripts!r}, ...)",
            hint="the einsum rule covers two operands written with letters and '...', "
            "each letter at most once per operand; one operand is also covered (the sum, "
            "transpose, np.trace 'ii' or np.diagonal 'ii->i' it is, a letter at most twice) "
            "and three or more (two-operand einsums in turn, each letter at most once per "
            "operand), with '...' kept in the output when an operand has it; otherwise "
            "write np.sum, np.transpose, np.diagonal, or two einsums in turn: np.einsum("
            "'...k,kl->...l', np.einsum('...j,jk->...k', a, b), c)",
        )
    dots = ""
    if ndims is not None and "..." in inputs:
        free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in spec]
        ranks = [n - len(o) + 3 if "..." in o else 0 for o, n in zip(operands, ndims, strict=True)]
        dots = "".join(free[: max(ranks)])
        operands = [
            o.replace("...", dots[len(dots) - r :]) for o, r in zip(operands, ranks, strict=True)
        ]
        output = output.replace("...", dots)
    if not arrow:
        seen = "".join(operands)
        output = dots + "".join(sorted(c for c in set(seen) - set(dots) if seen.count(c) == 1))
    return operands[0], operands[1], output


def _contracted(axes: Any, x: Any, y: Any) -> tuple[list[int], list[int]]:
    """``np.tensordot``'s ``axes`` as two lists of non-negative axes."""
    if isinstance(axes, int):
        return list(range(x.ndim - axes, x.ndim)), list(range(axes))
    a, b = axes
    a = [a] if isinstance(a, int) else list(a)
    b = [b] if isinstance(b, int) else list(b)
    return [int(i) % x.ndim for i in a], [int(j) % y.ndim for j in b]


def tensordot_operand(g: Any, x: Any, y: Any, axes: Any, which: int) -> Any:
    """The gradient of ``np.tensordot(x, y, axes)`` for operand ``which`` (0 or 1):
    ``g`` contracted with the other operand over its free axes, then put back in the
    operand's axis order.

    >>> a, b = np.ones((2, 3)), np.ones((3, 4))
    >>> tensordot_operand(np.ones((2, 4)), a, b, 1, 0).tolist()
    [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
    """
    xp = array_module(g)
    ax, ay = _contracted(axes, x, y)
    free_x = [i for i in range(x.ndim) if i not in ax]
    free_y = [j for j in range(y.ndim) if j not in ay]
    nfx = len(free_x)
    if which == 0:
        r = xp.tensordot(g, y, axes=(list(range(nfx, nfx + len(free_y))), free_y))
        order = free_x + [ax[ay.index(j)] for j in sorted(ay)]
        target = x
    else:
        r = xp.tensordot(x, g, axes=(free_x, list(range(nfx))))
        order = [ay[ax.index(i)] for i in sorted(ax)] + free_y
        target = y
    inverse = [order.index(k) for k in range(len(order))]
    return cast_like(xp.transpose(r, tuple(inverse)), target)


def kron_operand(g: Any, x: Any, y: Any, which: int) -> Any:
    """The gradient of ``np.kron(x, y)`` for operand ``which``: ``g`` seen as blocks
    (one axis per factor, interleaved), times the other factor, summed over its axes.

    >>> kron_operand(np.ones(6), np.ones(2), np.arange(3.0), 0).tolist()
    [3.0, 3.0]
    """
    xp = array_module(g)
    nd = max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + tuple(x.shape)
    ys = (1,) * (nd - y.ndim) + tuple(y.shape)
    blocks = xp.reshape(g, tuple(v for pair in zip(xs, ys, strict=True) for v in pair))
    if which == 0:
        other = xp.reshape(y, tuple(v for n in ys for v in (1, n)))
        summed = xp.sum(blocks * other, axis=tuple(range(1, 2 * nd, 2)))
        return cast_like(xp.reshape(summed, x.shape), x)
    other = xp.reshape(x, tuple(v for n in xs for v in (n, 1)))
    summed = xp.sum(blocks * other, axis=tuple(range(0, 2 * nd, 2)))
    return cast_like(xp.reshape(summed, y.shape), y)


def vector_norm_grad(
    g: Any, out: Any, x: Any, ord: Any, axis: Any = None, keepdims: bool = False
) -> Any:
    """The gradient of ``np.linalg.norm(x, ord, axis)`` for a vector norm (``ord`` a
    number or +-inf); matrix norms (``'nuc'``, a number ``ord`` over two axes) are
    refused, naming the ``ord`` (so ``ord=np.inf`` needs no literal at compile time).

    Conventions: at ``x_i = 0`` the sign is 0, where the norm is 0 the gradient is 0,
    ties of ``inf``/``-inf`` share the gradient equally, ``ord=0`` (a count) has none.

    >>> vector_norm_grad(1.0, 3.0, np.array([-1.0, 2.0]), 1).tolist()
    [-1.0, 1.0]
    """
    xp = array_module(x)
    if isinstance(axis, (tuple, list)):
        axis = axis[0] if len(axis) == 1 else axis
    if isinstance(ord, str) or (axis is None and x.ndim != 1) or isinstance(axis, (tuple, list)):
        raise NoDerivativeRuleError(
            f"no derivative rule for np.linalg.norm with ord={ord!r} (a matrix norm)",
            hint="the norm rule covers vector norms of any ord (give axis=<int> for the "
            "rows or columns of a matrix) and the Frobenius norm (ord=None or 'fro')",
        )
    gx = unreduce_like(g, x, axis, keepdims)
    ox = unreduce_like(out, x, axis, keepdims)
    if ord == 0:
        return xp.zeros_like(x)
    if ord in (np.inf, -np.inf):
        hit = xp.astype(xp.abs(x) == ox, x.dtype)
        count = xp.sum(hit, axis=axis, keepdims=True)
        return gx * xp.sign(x) * hit / count
    safe = xp.where(ox == 0, 1, ox)
    return gx * xp.sign(x) * (xp.abs(x) / safe) ** (ord - 1)


def unreduce_like(g: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``g`` (a reduction's result) broadcast back over ``x``'s reduced axis."""
    xp = array_module(x)
    if axis is not None and not keepdims:
        g = xp.expand_dims(g, axis)
    return xp.broadcast_to(g, x.shape)
