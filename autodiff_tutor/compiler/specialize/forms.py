"""Stage 6b, forms — how a probed helper call is written where it always took one form.

The probe (:mod:`.specialize.probe`) records, at each call of ``unbroadcast``,
``cast_like``, ``matmul_dx`` or ``matmul_dy``, the form it took for the argument
shapes and dtypes of the guard key: ``same`` (the gradient given back as it is), one
sum (``g.sum(axis=0)``), or one product: ``g @ y.T`` and ``x.T @ g`` for matrices,
``x.T @ g``, ``y @ g`` and outer products (``g[:, None] * y``) for a matrix times a
vector. A site that always took one form is written as that form.

>>> import ast
>>> print(ast.unparse(written("outer_dx", [ast.Name("g"), ast.Name("x"), ast.Name("w")])))
g[:, None] * w
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np


def written(form: Any, args: list[ast.expr]) -> ast.expr:
    """The code of a call with ``args`` that always took ``form``."""
    if isinstance(form, tuple):  # ("sum", axes, keepdims): unbroadcast as one sum
        return _sum_call(args[0], form[1], form[2])
    return _WRITE[form](*args)


def form_of(helper: str, args: tuple[Any, ...], result: Any) -> Any:
    """The form a probed call ``helper(*args)`` that returned ``result`` took (see
    the module), or ``None``.

    >>> g, x, w = np.ones(4), np.ones((4, 3)), np.ones(3)
    >>> form_of("matmul_dy", (g, x, w), x.T @ g), form_of("unbroadcast", (w, w), w)
    ('matrix_dy', 'same')
    """
    if helper in ("unbroadcast", "cast_like"):
        if result is args[0]:
            return "same"
        return sum_form(*args) if helper == "unbroadcast" else None
    arrays = all(type(a) is np.ndarray for a in (*args, result))
    if not arrays or len({a.dtype for a in (*args, result)}) != 1:
        return None
    return _PRODUCTS.get((helper, *(a.ndim for a in args)))


#: The forms of a matmul gradient ``(helper, g.ndim, x.ndim, y.ndim)``: matrices, and a
#: matrix times a vector (``X @ w``, ``v @ W``), whose gradients are a product or an
#: outer product of one dtype.
_PRODUCTS = {
    ("matmul_dx", 2, 2, 2): "matrix_dx",  # g @ y.T
    ("matmul_dy", 2, 2, 2): "matrix_dy",  # x.T @ g
    ("matmul_dx", 1, 2, 1): "outer_dx",  # g[:, None] * y
    ("matmul_dy", 1, 2, 1): "matrix_dy",  # x.T @ g
    ("matmul_dx", 1, 1, 2): "vector_dx",  # y @ g
    ("matmul_dy", 1, 1, 2): "outer_dy",  # x[:, None] * g
}


def _sum_call(g: ast.expr, axes: tuple[int, ...] | None, keepdims: bool) -> ast.expr:
    """``g.sum()``, ``g.sum(axis=0)``, ``g.sum(axis=1, keepdims=True)``."""
    keywords = []
    if axes is not None:
        axis = ast.Constant(axes[0]) if len(axes) == 1 else ast.Constant(axes)
        keywords.append(ast.keyword("axis", axis))
    if keepdims:
        keywords.append(ast.keyword("keepdims", ast.Constant(True)))
    return ast.Call(ast.Attribute(g, "sum", ast.Load()), [], keywords)


def _transpose(node: ast.expr) -> ast.expr:
    return ast.Attribute(node, "T", ast.Load())


#: How a site that always took one form is written.
_WRITE = {
    "same": lambda g, x: g,
    "matrix_dx": lambda g, x, y: ast.BinOp(g, ast.MatMult(), _transpose(y)),
    "matrix_dy": lambda g, x, y: ast.BinOp(_transpose(x), ast.MatMult(), g),
    "outer_dx": lambda g, x, y: ast.BinOp(_column(g), ast.Mult(), y),
    "vector_dx": lambda g, x, y: ast.BinOp(y, ast.MatMult(), g),
    "outer_dy": lambda g, x, y: ast.BinOp(_column(x), ast.Mult(), g),
}


def _column(node: ast.expr) -> ast.expr:
    """``v[:, None]``: a vector as a column, for an outer product."""
    index = ast.Tuple([ast.Slice(), ast.Constant(None)], ast.Load())
    return ast.Subscript(node, index, ast.Load())


def sum_form(g: Any, x: Any) -> tuple[str, tuple[int, ...] | None, bool] | None:
    """How ``unbroadcast(g, x)`` summed, as one ``g.sum(...)``: over the leading axes
    numpy added (``axis=0``), over stretched axes kept (``keepdims=True``), or all of
    ``g`` for a numpy scalar ``x``; ``None`` for anything else (a dtype cast, both).

    >>> sum_form(np.ones((4, 3)), np.zeros(3)), sum_form(np.ones((4, 3)), np.zeros((4, 1)))
    (('sum', (0,), False), ('sum', (1,), True))
    """
    if type(g) is not np.ndarray or getattr(x, "dtype", None) != g.dtype:
        return None
    if isinstance(x, np.generic):
        return ("sum", None, False)
    if type(x) is not np.ndarray or g.ndim < x.ndim:
        return None
    lead = g.ndim - x.ndim
    stretched = tuple(i for i, n in enumerate(x.shape) if n == 1 and g.shape[lead + i] != 1)
    if lead and not stretched:
        return ("sum", tuple(range(lead)), False)
    if stretched and not lead:
        return ("sum", stretched, True)
    return None
