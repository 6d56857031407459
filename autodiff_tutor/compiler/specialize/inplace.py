"""In-place evaluation of large temporaries in the specialized pair.

``h = np.tanh(X @ W1 + b1)`` makes three arrays of ``h``'s size: the product, the sum,
and the tanh. Each is fresh memory, and fresh memory of that size costs page faults
(about 2 µs a 4 KiB page on the development machine: 1 ms for a 512x512 float64
array), often more than the arithmetic. Where the probe's facts say the product is
already an array of the result's shape and dtype, the statement is written as one
array updated in place:

    h = X @ W1
    h += b1
    np.tanh(h, out=h)

The same values, bit for bit: ``a += b`` runs the same ufunc loop as ``a + b``, only
into ``a``'s memory. A statement is rewritten so only where

- its value is a numpy array of at least :data:`IN_PLACE_FROM` elements (small code,
  the one students read, keeps its one line);
- the operand taken over is *fresh*: an arithmetic operation, a power, a matrix
  product or a one-argument ufunc, which always make a new array nobody else holds, of exactly the
  result's shape and dtype (so no broadcasting or casting happens in place);
- the other operand does not read the name assigned (it is rebound before that
  operand is evaluated).

With the fresh operand on the right, ``+`` and ``*`` swap their operands (exact in
IEEE arithmetic) and ``-``, ``/`` become ``np.subtract(o, t, out=t)`` (where the
user's scope names numpy). Facts come from running the specialized pair itself once
(:func:`.specialized.compile_specialized`), so every name's shape and dtype
are those of the code that runs.

>>> facts = {n: ("array", (100, 100), "float64") for n in ("X", "W1", "b1", "h")}
>>> tree = ast.parse("h = np.tanh(X @ W1 + b1)").body
>>> print(ast.unparse(in_place(tree, facts, {"np": np}, smallest=1)))
h = X @ W1
h += b1
np.tanh(h, out=h)
"""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np

from autodiff_tutor.compiler import code

#: Arrays of at least this many elements are updated in place (64 KiB of float64).
IN_PLACE_FROM = 1 << 13

#: Arithmetic that may run in place, and whether its operands may swap.
_ARITHMETIC = {ast.Add: True, ast.Mult: True, ast.Sub: False, ast.Div: False}
_REVERSED = {ast.Sub: "subtract", ast.Div: "divide"}
#: Operations that make a new array (taken over by the statement's update); a power
#: (``t2 ** 2``) is one, though it is not updated in place itself.
_MAKES_NEW = (*_ARITHMETIC, ast.MatMult, ast.Pow)

Fact = tuple[tuple[int, ...], np.dtype]  # an array's shape and dtype


def in_place(
    statements: list[ast.stmt],
    facts: dict[str, Any],
    scope: dict[str, Any],
    smallest: int = IN_PLACE_FROM,
) -> list[ast.stmt]:
    """``statements`` (at every depth) with each large ``name = expression`` whose
    operand is a fresh array of the result's shape and dtype written as that array
    updated in place (see the module)."""
    return code.rewrite_blocks(statements, _Rewriter(facts, scope, smallest).statement)


class _Rewriter:
    def __init__(self, facts: dict[str, Any], scope: dict[str, Any], smallest: int):
        self.facts, self.scope, self.smallest = facts, scope, smallest
        self.numpy = code.numpy_name(scope)

    def statement(self, statement: ast.stmt) -> list[ast.stmt]:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            return [statement]
        target = statement.targets[0].id
        fact = self.fact(statement.value)
        if fact is None or len(fact[0]) == 0 or math.prod(fact[0]) < self.smallest:
            return [statement]
        steps = self.split(target, statement.value, fact)
        if len(steps) == 1:
            return [statement]
        for step in steps:  # each keeps the user's line (and its sub-expressions' lines)
            for attribute in ("origin", "inlined", "commented"):
                if hasattr(statement, attribute):
                    setattr(step, attribute, getattr(statement, attribute))
            ast.copy_location(step, statement)
        return [ast.fix_missing_locations(step) for step in steps]

    def split(self, target: str, value: ast.expr, fact: Fact) -> list[ast.stmt]:
        """``target = value`` as statements: the fresh operand first, then in place."""
        whole = [ast.Assign([ast.Name(target, ast.Store())], value)]
        if isinstance(value, ast.Call) and self.ufunc(value) is not None:
            (operand,) = value.args
            if self.fresh(operand, fact):
                update = ast.Call(value.func, [_load(target)], [_out(target)])
                return self.split(target, operand, fact) + [ast.Expr(update)]
        if isinstance(value, ast.BinOp) and type(value.op) in _ARITHMETIC:
            left, right = value.left, value.right
            if self.fresh(left, fact) and target not in code.names(right):
                update = ast.AugAssign(ast.Name(target, ast.Store()), value.op, right)
                return self.split(target, left, fact) + [update]
            if self.fresh(right, fact) and target not in code.names(left):
                if _ARITHMETIC[type(value.op)]:
                    update = ast.AugAssign(ast.Name(target, ast.Store()), value.op, left)
                    return self.split(target, right, fact) + [update]
                if self.numpy is not None:
                    ufunc = ast.Attribute(_load(self.numpy), _REVERSED[type(value.op)], ast.Load())
                    call = ast.Call(ufunc, [left, _load(target)], [_out(target)])
                    return self.split(target, right, fact) + [ast.Expr(call)]
        return whole

    def fresh(self, value: ast.expr, fact: Fact) -> bool:
        """Does ``value`` make a new array of exactly ``fact``?"""
        makes_new = (isinstance(value, ast.BinOp) and type(value.op) in _MAKES_NEW) or (
            isinstance(value, ast.Call) and self.ufunc(value) is not None
        )
        return makes_new and self.fact(value) == fact

    def ufunc(self, value: ast.Call) -> np.ufunc | None:
        """The one-input numpy ufunc ``value`` calls with one argument, or ``None``."""
        if len(value.args) != 1 or value.keywords or isinstance(value.args[0], ast.Starred):
            return None
        found = code.resolve(value.func, self.scope)
        if isinstance(found, np.ufunc) and found.nin == 1 and found.nout == 1:
            return found
        return None

    def fact(self, value: ast.expr) -> Fact | None:
        """The shape and dtype ``value`` evaluates to, from the facts (``None``:
        unknown, or not a numpy array)."""
        stand_in = self.stand_in(value)
        if not isinstance(stand_in, _Abstract):
            return None
        return stand_in.shape, stand_in.dtype

    def stand_in(self, value: ast.expr) -> Any:
        """A number for a number (a Python one, or a numpy scalar of the name's dtype),
        an :class:`_Abstract` for an array, or ``None``: unknown."""
        if isinstance(value, ast.Constant):
            kind = type(value.value)
            return value.value if kind in (int, float) else None
        if isinstance(value, ast.Name):
            fact = self.facts.get(value.id)
            if isinstance(fact, tuple) and fact[0] == "array":
                return _Abstract(tuple(fact[1]), np.dtype(fact[2]))
            if isinstance(fact, tuple) and fact[0] == "scalar":  # a numpy scalar: its dtype
                return np.dtype(fact[2]).type(0)
            return None
        if isinstance(value, ast.Attribute) and value.attr == "T":
            inner = self.stand_in(value.value)
            return (
                _Abstract(inner.shape[::-1], inner.dtype) if isinstance(inner, _Abstract) else None
            )
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
            return self.stand_in(value.operand)
        if isinstance(value, ast.BinOp) and type(value.op) in _MAKES_NEW:
            left, right = self.stand_in(value.left), self.stand_in(value.right)
            if left is None or right is None:
                return None
            return _combine(value.op, left, right)
        if isinstance(value, ast.Call):
            ufunc = self.ufunc(value)
            inner = self.stand_in(value.args[0]) if ufunc is not None else None
            if isinstance(inner, _Abstract):
                return _Abstract(inner.shape, ufunc(np.empty(0, inner.dtype)).dtype)
        return None


class _Abstract:
    """An array known by its shape and dtype only."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape, self.dtype = shape, dtype

    def empty(self) -> np.ndarray:
        """A 0-element array of this dtype: numpy's promotion on it, at no cost."""
        return np.empty(0, self.dtype)


def _combine(op: ast.operator, left: Any, right: Any) -> _Abstract | None:
    """The abstract result of ``left op right`` (``None``: not an array, or unknown)."""
    arrays = [v for v in (left, right) if isinstance(v, _Abstract)]
    if not arrays:
        return None
    if isinstance(op, ast.MatMult):
        if len(arrays) != 2 or len(left.shape) != 2 or len(right.shape) != 2:
            return None
        if left.shape[1] != right.shape[0]:
            return None
        shape = (left.shape[0], right.shape[1])
        dtype = (np.empty((0, 0), left.dtype) @ np.empty((0, 0), right.dtype)).dtype
        return _Abstract(shape, dtype)
    try:
        shape = np.broadcast_shapes(*(v.shape for v in arrays))
    except ValueError:
        return None
    a, b = (v.empty() if isinstance(v, _Abstract) else v for v in (left, right))
    operate = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Pow: np.power}
    dtype = operate.get(type(op), np.true_divide)(a, b).dtype
    return _Abstract(tuple(shape), dtype)


def _load(identifier: str) -> ast.Name:
    return ast.Name(identifier, ast.Load())


def _out(identifier: str) -> ast.keyword:
    return ast.keyword("out", _load(identifier))
