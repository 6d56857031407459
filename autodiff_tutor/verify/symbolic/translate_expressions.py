"""Expressions, for the translator of :mod:`~autodiff_tutor.verify.symbolic.translate`:
names, constants, tuples, unary and binary operators, comparisons, ``and``/``or``,
conditional expressions, attributes and subscripts, each with numpy's per-element
meaning (calls are in :mod:`~autodiff_tutor.verify.symbolic.translate_calls`).

>>> import sympy as sp
>>> from autodiff_tutor.verify.symbolic.translate import translate_function
>>> def f(x):
...     return -x if True else x
>>> translate_function(f, [sp.Symbol("x")]).value
-x

Part of the interpreter of :mod:`~autodiff_tutor.verify.symbolic.translate`, which
holds it as ``expressions``: it reads the interpreter's state (the names bound so
far, the function's globals, ...), and calls its other parts, through
``self.interpreter``.
"""

from __future__ import annotations

import ast
import operator
import types
from typing import Any

from autodiff_tutor.errors import TranslationError
from autodiff_tutor.rules.names import is_array_module
from autodiff_tutor.verify.symbolic.algebra import (
    as_number,
    binary,
    compare,
    is_condition,
    is_symbolic,
    logical,
)
from autodiff_tutor.verify.symbolic.translate_calls import (
    ARRAY_MODULE_FACTORIES,
    SHAPE_ONLY,
    Flags,
    Named,
    Namespace,
    Opaque,
    Summed,
)

__all__ = ["Expressions"]

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.Pow: "pow"}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}

_PYTHON = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
}


class Expressions:
    """The expressions of the translated function, each read per element (a call by
    the interpreter's ``calls``)."""

    def __init__(self, interpreter: Any) -> None:
        self.interpreter = interpreter  # the interpreter it is part of: its state, its parts

    def expr(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Call):
            method = self.interpreter.calls.call
        else:
            method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.interpreter.fail(
                node, f"cannot translate {type(node).__name__} {ast.unparse(node)}"
            )
        try:
            return method(node)
        except TranslationError as error:
            if error.location is not None:
                raise
            raise self.interpreter.fail(node, error.message, error.hint) from None

    def expr_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def expr_Name(self, node: ast.Name) -> Any:
        if node.id in self.interpreter.env:
            return self.interpreter.env[node.id]
        if node.id in self.interpreter.names:
            value = self.interpreter.names[node.id]
            if isinstance(value, types.ModuleType) and is_array_module(value):
                return Namespace()
            return value
        if node.id in ("np", "numpy", "xp", "cupy", "cp"):
            return Namespace()
        if node.id in self.interpreter.sums | SHAPE_ONLY | ARRAY_MODULE_FACTORIES:
            return Named(node.id)
        raise self.interpreter.fail(node, f"unknown name {node.id!r}")

    def expr_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.expr(e) for e in node.elts)

    expr_List = expr_Tuple

    def expr_Slice(self, node: ast.Slice) -> Any:
        return slice(None)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.expr(node.operand)
        if isinstance(node.op, ast.Not) and not is_symbolic(value):
            return not value
        self.require_number(node.operand, value)
        if isinstance(node.op, ast.USub):
            return -as_number(value) if is_symbolic(value) else -value
        if isinstance(node.op, ast.UAdd):
            return value
        if isinstance(node.op, ast.Invert):
            return logical("not", value)
        raise self.interpreter.fail(node, "'not' on array values (use ~ for masks)")

    def binop(self, node: ast.AST, op: ast.operator, left: Any, right: Any) -> Any:
        if not (is_symbolic(left) or is_symbolic(right)):
            if isinstance(left, (int, float)) and isinstance(right, (int, float)):
                return _PYTHON[type(op)](left, right)
        scaled = self.scaled_sum(node, op, left, right)
        if scaled is not None:
            return scaled
        for side in (left, right):
            self.require_number(node, side)
        if isinstance(op, ast.BitAnd):
            return logical("and", left, right)
        if isinstance(op, ast.BitOr):
            return logical("or", left, right)
        if type(op) in _BINARY:
            return binary(_BINARY[type(op)], left, right)
        raise self.interpreter.fail(
            node,
            f"operator {type(op).__name__} cannot be translated per element",
            "matrix products and integer division mix elements",
        )

    def scaled_sum(self, node: ast.AST, op: ast.operator, left: Any, right: Any) -> Any:
        """``sum(g) * c``, ``c * sum(g)`` or ``sum(g) / c`` read as the sum of ``g * c``
        (``g / c``), when ``c`` is the same for every summed element: a number, or
        channel-wise inputs (see ``record_channel_wise``) with a ``reduce_to_channels``
        sum in the same format. ``None`` when that does not hold (then the sum is
        refused as usual)."""
        if isinstance(left, Summed) and isinstance(op, (ast.Mult, ast.Div)):
            total, factor = left, right
        elif isinstance(right, Summed) and isinstance(op, ast.Mult):
            total, factor = right, left
        else:
            return None
        if not self.same_for_every_summed_element(total, factor):
            return None
        self.interpreter.note(
            node, "a sum times a factor that is the same for every summed element"
        )
        product = binary(_BINARY[type(op)], total.expr, factor)
        return Summed(product, total.line, total.by, total.fmt)

    def same_for_every_summed_element(self, total: Summed, factor: Any) -> bool:
        if isinstance(factor, bool) or isinstance(factor, Summed):
            return False
        if isinstance(factor, (int, float)):
            return True
        if not is_symbolic(factor) or is_condition(factor):
            return False
        channel_sum = total.by == "reduce_to_channels" and total.fmt != ""
        return all(
            channel_sum and self.interpreter.channel_wise.get(symbol) == total.fmt
            for symbol in factor.free_symbols
        )

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        return self.binop(node, node.op, self.expr(node.left), self.expr(node.right))

    def expr_Compare(self, node: ast.Compare) -> Any:
        left, conditions = self.expr(node.left), []
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.expr(comparator)
            if isinstance(op, (ast.Is, ast.IsNot)):  # identity: `d is None`
                same = left is right
                conditions.append(same if isinstance(op, ast.Is) else not same)
            elif type(op) in _COMPARE:
                self.require_number(node, left)
                self.require_number(node, right)
                conditions.append(compare(_COMPARE[type(op)], left, right))
            else:
                raise self.interpreter.fail(
                    node, f"comparison {type(op).__name__} cannot be translated"
                )
            left = right
        return conditions[0] if len(conditions) == 1 else logical("and", *conditions)

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.expr(v) for v in node.values]
        if any(is_symbolic(v) for v in values):
            raise self.interpreter.fail(node, "'and'/'or' on array values", "use & and | on masks")
        return all(values) if isinstance(node.op, ast.And) else any(values)

    def expr_IfExp(self, node: ast.IfExp) -> Any:
        return self.expr(node.body if self.interpreter.truth(node.test) else node.orelse)

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        if isinstance(base, Namespace):
            return ("xp", node.attr)
        if is_symbolic(base):
            if node.attr in ("T", "mT", "real"):
                return base
            if node.attr in ("shape", "dtype", "ndim", "size"):
                return Opaque(ast.unparse(node))
            return ("method", base, node.attr)
        if base is self.interpreter.owner and self.interpreter.owner is not None:
            return getattr(base, node.attr, Opaque(ast.unparse(node)))
        if isinstance(base, Opaque):
            return Opaque(ast.unparse(node))
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.interpreter.fail(node, f"unknown attribute {ast.unparse(node)}") from None

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        index = self.expr(node.slice)
        if isinstance(base, Flags):
            return True
        if isinstance(base, (tuple, list)) and isinstance(index, int):
            return base[index]
        if isinstance(base, Opaque):
            return Opaque(ast.unparse(node))
        if is_symbolic(base):
            if _selects_elements(index):
                raise self.interpreter.fail(
                    node,
                    f"{ast.unparse(node)} picks particular elements",
                    "per-element translation understands masks, slices, None and ...",
                )
            return base  # a mask, slice or new axis: the element itself
        raise self.interpreter.fail(node, f"cannot translate {ast.unparse(node)}")

    def require_number(self, node: ast.AST, value: Any) -> None:
        if isinstance(value, Summed):
            raise self.interpreter.fail(
                node,
                f"the sum of line {value.line} is used in further computation: per element "
                "it cannot be followed (it mixes elements)",
                "the symbolic check reads sums only as the last step of a value",
            )
        if isinstance(value, (Opaque, Namespace, Flags, str, tuple)) or value is None:
            raise self.interpreter.fail(node, f"{value!r} cannot be used as a number here")


def _selects_elements(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if part is None or part is Ellipsis or isinstance(part, slice):
            continue
        if is_symbolic(part) and is_condition(part):
            continue
        return True
    return False
