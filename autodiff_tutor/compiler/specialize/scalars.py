"""Stage 6 (specialized backward), scalars — sizes as numbers, scalar factors first.

*Sizes* (:func:`sizes_known`): ``size(t)`` in a gradient (a mean's ``1 / n``) is the
number of elements the probe saw in ``t``, the same in every call with the guard key.

*Scalars first* (:func:`scalars_first`): ``2 * (d_out / n * r)`` (the backward of
``np.sum(r * r) / n``) makes two passes over the array ``r``: ``d_out / n * r``, then
``2 * ...``. Its factors are ``2``, ``d_out``, ``/ n`` (scalars, by the probe's facts,
:mod:`.specialize.facts`) and ``r`` (an array); with the scalars first, ``2 * d_out / n * r``,
Python computes one number and numpy makes one pass. The rewrite moves the scalars of a
product of ``*`` and ``/`` to its front, in their order, the arrays after them in
theirs: the same product up to float rounding, as the simplifier's other folds
(:mod:`.specialize.simplify`). It applies only where it saves a pass, where every factor's fact
is known, and where the scalars are Python numbers or numpy scalars of the arrays' dtype
(so the result keeps the dtype the original computes: a numpy scalar of another dtype
may promote).

>>> facts = {"d_out": ("scalar", (), "float64"), "n": "int",
...          "r": ("array", (4,), "float64")}
>>> tree = ast.parse("d_r = 2 * (d_out / n * r)").body
>>> [ast.unparse(s) for s in scalars_first(tree, facts)]
['d_r = 2 * d_out / n * r']
>>> [ast.unparse(s) for s in scalars_first(ast.parse("d = r * (2 * r)").body, facts)]
['d = r * (2 * r)']

(two passes either way: it stays as written).
"""

from __future__ import annotations

import ast
import functools
import math
from typing import Any

#: A factor's kind: a Python number, a numpy scalar or a numpy array of a float dtype.
NUMBER, SCALAR, ARRAY = "number", "scalar", "array"
_FLOATS = ("float16", "float32", "float64", "longdouble")


def sizes_known(statements: list[ast.stmt], facts: dict[str, Any]) -> list[ast.stmt]:
    """``statements`` with ``size(t)`` written as the number of elements the probe saw
    in ``t`` (a mean's gradient, ``* (size(out) / max(size(t), 1))``, becomes ``* (1 /
    8)``), and ``max`` of two numbers as the larger (changed in place).

    >>> facts = {"t": ("array", (2, 4), "float64"), "out": ("scalar", (), "float64")}
    >>> tree = ast.parse("d_t = unreduce(g, t) * (size(out) / max(size(t), 1))").body
    >>> [ast.unparse(s) for s in sizes_known(tree, facts)]
    ['d_t = unreduce(g, t) * (1 / 8)']
    """
    _Sizes(facts).visit(ast.Module(statements, []))
    return statements


class _Sizes(ast.NodeTransformer):
    def __init__(self, facts: dict[str, Any]) -> None:
        self.facts = facts

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.func, ast.Name) or node.keywords:
            return node
        args = node.args
        if node.func.id == "size" and len(args) == 1 and isinstance(args[0], ast.Name):
            fact = self.facts.get(args[0].id)
            if fact in ("int", "float"):
                return ast.Constant(1)
            if isinstance(fact, tuple) and fact[0] in (SCALAR, ARRAY):
                return ast.Constant(math.prod(fact[1]))
        if node.func.id == "max" and len(args) == 2 and all(_integer(a) for a in args):
            return ast.Constant(max(a.value for a in args))
        return node


def _integer(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def scalars_first(statements: list[ast.stmt], facts: dict[str, Any]) -> list[ast.stmt]:
    """``statements`` with every product regrouped as above (changed in place)."""
    _Regroup(facts).visit(ast.Module(statements, []))
    return statements


class _Regroup(ast.NodeTransformer):
    def __init__(self, facts: dict[str, Any]) -> None:
        self.facts = facts

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        if not isinstance(node.op, (ast.Mult, ast.Div)):
            return self.generic_visit(node)
        factors: list[tuple[ast.operator, ast.expr]] = []
        _flatten(node, ast.Mult(), factors)
        kinds = [self._kind(f) for _, f in factors]
        if None in kinds or len({k[1] for k in kinds if k[1]}) > 1:
            return self.generic_visit(node)  # unknown, or several dtypes: promotion decides
        scalars = [p for p, k in zip(factors, kinds, strict=True) if k[0] != ARRAY]
        arrays = [p for p, k in zip(factors, kinds, strict=True) if k[0] == ARRAY]
        if not scalars or not arrays or isinstance(scalars[0][0], ast.Div):
            return self.generic_visit(node)  # nothing to group, or a leading 1 / n
        if self._passes(node)[0] <= len(arrays):
            return self.generic_visit(node)  # no pass saved
        parts = [(op, self.visit(f)) for op, f in scalars + arrays]
        return functools.reduce(lambda a, p: ast.BinOp(a, *p), parts[1:], parts[0][1])

    def _passes(self, node: ast.expr) -> tuple[int, bool]:
        """Array passes of a product as written, and whether its value is an array."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            left = self._passes(node.left)
            right = (
                self._passes(node.right)
                if isinstance(node.op, ast.Mult)
                else (0, self._kind(node.right)[0] == ARRAY)
            )
            array = left[1] or right[1]
            return left[0] + right[0] + int(array), array
        return 0, self._kind(node)[0] == ARRAY

    def _kind(self, node: ast.expr) -> tuple[str, str] | None:
        """``(kind, dtype)`` of a factor (``dtype`` empty for a Python number), or
        ``None``: unknown, no rewrite."""
        if isinstance(node, ast.Constant):
            return (NUMBER, "") if type(node.value) in (int, float) else None
        if isinstance(node, ast.Name):
            fact = self.facts.get(node.id)
            if fact in ("int", "float"):
                return NUMBER, ""
            if isinstance(fact, tuple) and fact[0] in (SCALAR, ARRAY) and fact[2] in _FLOATS:
                return fact[0], fact[2]
            return None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self._kind(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(
            node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)
        ):
            left, right = self._kind(node.left), self._kind(node.right)
            if left is None or right is None or (left[1] and right[1] and left[1] != right[1]):
                return None
            order = (NUMBER, SCALAR, ARRAY)
            return max(left, right, key=lambda k: order.index(k[0]))[0], left[1] or right[1]
        return None


def _flatten(node: ast.expr, op: ast.operator, out: list) -> None:
    """The factors of a product of ``*`` and ``/``, each with the operator before it (a
    divisor stays whole: ``a / (b * c)`` divides by ``b * c``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        _flatten(node.left, op, out)
        if isinstance(node.op, ast.Mult):
            _flatten(node.right, ast.Mult(), out)
        else:
            out.append((ast.Div(), node.right))
        return
    out.append((op, node))
