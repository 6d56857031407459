"""Calls, reductions and the values the translator carries besides sympy expressions.

Part of :mod:`~autodiff_tutor.verify.symbolic.translate`: which names mean a sum over elements,
a shape change, an array module or an in-place update; the marker values the
translator's parts share (:class:`Opaque`, :class:`Flags`, :class:`Namespace`,
:class:`Summed`, :class:`Named`); and the translation of calls (``xp.where(...)``,
``x.astype(...)``, ``reduce_to_channels(...)``), a part of the interpreter, which
holds it as ``calls``: it reads the interpreter's state, and calls its other parts,
through ``self.interpreter``.

>>> finish((Summed(1, line=3), None))
(1, None)
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

import sympy as sp

from autodiff_tutor.rules.names import canonical
from autodiff_tutor.verify.symbolic.algebra import FUNCTIONS, as_condition, as_number, is_symbolic

__all__ = [
    "ARRAY_MODULE_FACTORIES",
    "BROADCASTS",
    "Calls",
    "Flags",
    "Named",
    "Namespace",
    "Opaque",
    "SHAPE_ONLY",
    "SUM_LIKE",
    "Summed",
    "finish",
]

#: Functions that sum an array over the elements sharing a parameter (or broadcast a
#: gradient back): per element, the identity. Matched by name.
SUM_LIKE = {
    "sum",
    "reduce_to_channels",
    "unbroadcast",
    "unreduce",
    "sum_to_shape",
    "broadcast_like",
    "broadcast_to",
}
#: Functions and methods that only change the shape of an array: per element, identity.
SHAPE_ONLY = {
    "reshape",
    "expand_dims",
    "squeeze",
    "transpose",
    "permute_dims",
    "moveaxis",
    "swapaxes",
    "asarray",
    "array",
    "copy",
    "ascontiguousarray",
    "atleast_1d",
    "atleast_2d",
    "float32",
    "float64",
    "float",
    "cast_like",
    "like",  # the shape and dtype the forward saves for the backward
}
#: Of those, the broadcast helpers of generated code: identities per element, usable
#: in further arithmetic (they sum only where a value was broadcast).
BROADCASTS = {"unbroadcast", "unreduce", "broadcast_like", "broadcast_to", "sum_to_shape"}
ARRAY_MODULE_FACTORIES = {"array_module", "get_array_module", "array_namespace"}
CONSTANT_LIKE = {"zeros_like": 0, "ones_like": 1, "zeros": 0, "ones": 1, "empty_like": 0}
MUTATING = {"fill", "put", "itemset", "sort", "resize", "copyto", "place", "putmask", "at"}


class Opaque:
    """A value the translation carries but cannot compute with (``x.dtype``, ``len(...)``)."""

    def __init__(self, description: str) -> None:
        self.description = description

    def __repr__(self) -> str:
        return f"<{self.description}>"


class Flags:
    """``compute_gradients``: every flag reads as true (all gradients are checked)."""

    def __repr__(self) -> str:
        return "compute_gradients"


class Namespace:
    """The array module (``np``, ``xp = array_module(x)``)."""

    def __repr__(self) -> str:
        return "xp"


class Summed:
    """The result of a sum over elements (``xp.sum``, ``reduce_to_channels``).

    Per element it is that element's contribution, which is right only where the sum
    is final (returned, or summed again): using it in further arithmetic would mix
    elements, so the translator refuses that, except for a factor that is the same
    for every summed element (see ``Expressions.scaled_sum``). ``by`` names the
    reduction (``reduce_to_channels``) and ``fmt`` the value of its format argument
    (``"BC"``); both are empty for any other sum.
    """

    def __init__(self, expr: Any, line: int, by: str = "", fmt: str = "") -> None:
        self.expr = expr
        self.line = line
        self.by = by
        self.fmt = fmt

    def __repr__(self) -> str:
        return f"sum({self.expr})"


class Named:
    """A helper of generated code known by name only (``unbroadcast`` without globals)."""

    def __init__(self, name: str) -> None:
        self.__name__ = name


def finish(value: Any) -> Any:
    """A translated value with the :class:`Summed` wrappers removed (tuples too)."""
    if isinstance(value, Summed):
        return value.expr
    if isinstance(value, (tuple, list)):
        return tuple(finish(v) for v in value)
    return value


def _name_of(fn: Any) -> str:
    return getattr(fn, "__name__", "") or type(fn).__name__


class Calls:
    """The calls of the translated function (``xp.where(...)``, ``x.astype(...)``,
    ``reduce_to_channels(...)``), part of the interpreter, which it reaches through
    ``self.interpreter``."""

    def __init__(self, interpreter: Any) -> None:
        self.interpreter = interpreter  # the interpreter it is part of: its state, its parts

    def call(self, node: ast.Call) -> Any:
        expr = self.interpreter.expressions.expr
        func = expr(node.func)
        args = [expr(a) for a in node.args]
        kwargs = {k.arg: expr(k.value) for k in node.keywords if k.arg}
        if isinstance(func, tuple) and func[0] == "xp":
            return self.array_call(node, canonical(func[1]), args, kwargs)
        if isinstance(func, tuple) and func[0] == "method":
            return self.method_call(node, func[1], func[2], args, kwargs)
        name = _name_of(func)
        if name in ARRAY_MODULE_FACTORIES:
            return Namespace()
        if func is builtins.abs:
            return FUNCTIONS["abs"](args[0])
        if func in (builtins.max, builtins.min) and len(args) == 2:
            return FUNCTIONS["maximum" if func is builtins.max else "minimum"](*args)
        if name in self.interpreter.sums:
            return self.summed(node, name, args[0])
        if name in SHAPE_ONLY:
            return args[0]
        if any(is_symbolic(a) or isinstance(a, Summed) for a in [*args, *kwargs.values()]):
            raise self.interpreter.fail(
                node,
                f"cannot translate the call {ast.unparse(node.func)}(...) on array values",
                "inline it, or if it sums over the elements sharing a parameter pass "
                f"reductions=[{name!r}] to verify_symbolic",
            )
        return Opaque(ast.unparse(node))

    def array_call(self, node: ast.Call, name: str, args: list[Any], kwargs: dict) -> Any:
        for value in [*args, *kwargs.values()]:
            if isinstance(value, Summed):
                self.interpreter.expressions.require_number(node, value)
        if name == "clip":
            bounds = [kwargs.get(k) for k in ("a_min", "a_max", "min", "max")]
            args = [*args, *[b for b in bounds if b is not None]]
            return FUNCTIONS["clip"](*args)
        if name in FUNCTIONS:
            return FUNCTIONS[name](*args)
        if name in CONSTANT_LIKE:
            return sp.Integer(CONSTANT_LIKE[name])
        if name in ("full_like", "full"):
            return as_number(args[1] if len(args) > 1 else kwargs["fill_value"])
        if name == "astype":
            return _astype(args[0], args[1] if len(args) > 1 else kwargs.get("dtype"))
        if name in self.interpreter.sums:
            return self.summed(node, name, args[0])
        if name in SHAPE_ONLY:
            return args[0]
        if name in ("mean", "prod", "max", "min", "matmul", "dot", "cumsum", "norm"):
            raise self.interpreter.fail(
                node, f"xp.{name} mixes elements: it cannot be read per element"
            )
        raise self.interpreter.fail(node, f"xp.{name} has no symbolic translation")

    def method_call(
        self, node: ast.Call, base: Any, name: str, args: list[Any], kwargs: dict
    ) -> Any:
        if name in MUTATING:
            raise self.interpreter.fail(node, f"in-place update .{name}() cannot be translated")
        if name == "astype":
            return _astype(base, args[0] if args else kwargs.get("dtype"))
        if name == "clip":
            return FUNCTIONS["clip"](base, *args)
        if name in self.interpreter.sums:
            return self.summed(node, name, base)
        if name in SHAPE_ONLY:
            return base
        raise self.interpreter.fail(node, f"method .{name}() has no symbolic translation")

    def summed(self, node: ast.AST, name: str, value: Any) -> Any:
        """A reduction: per element, the element's contribution (final use only); the
        broadcast helpers of generated code are identities per element."""
        if name in BROADCASTS:
            return value
        self.interpreter.note(
            node, f"{name}(...) read as a sum: each element's contribution is checked"
        )
        if isinstance(value, Summed):  # a sum of a sum: over more axes, of no known kind
            return Summed(value.expr, self.interpreter.parsed.file_line(node))
        return Summed(
            value, self.interpreter.parsed.file_line(node), name, self.format_argument(node, name)
        )

    def format_argument(self, node: ast.AST, name: str) -> str:
        """The value of ``fmt`` in ``reduce_to_channels(x, fmt)`` when it is a known
        string (``self.format``, ``"BC"``); ``""`` for anything else."""
        if name != "reduce_to_channels" or not isinstance(node, ast.Call):
            return ""
        fmt = node.args[1] if len(node.args) > 1 else None
        fmt = fmt or next((k.value for k in node.keywords if k.arg == "fmt"), None)
        value = self.interpreter.expressions.expr(fmt) if fmt is not None else None
        return value if isinstance(value, str) else ""


def _astype(value: Any, dtype: Any) -> Any:
    if isinstance(dtype, tuple) and dtype[-1] in ("bool", "bool_"):
        return as_condition(value)
    if dtype is bool or getattr(dtype, "__name__", "") == "bool_":
        return as_condition(value)
    return as_number(value)
