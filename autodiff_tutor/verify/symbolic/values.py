"""Run array code written for numpy on sympy values: ``SymValue`` and ``sympy_xp``.

Rule code and op code use operators (``g * ((x > y) + 0.5 * (x == y))``) and an array
module ``xp``. :class:`SymValue` wraps a sympy value so the operators follow numpy's
meaning (see :mod:`~autodiff_tutor.verify.symbolic.algebra`), and :data:`sympy_xp` is
the ``xp`` to pass along: elementwise functions build sympy, the rest is numpy on
object arrays.

>>> import sympy as sp
>>> x = SymValue(sp.Symbol("x", real=True))
>>> ((x > 0) * x + 2).expr
x*Piecewise((1, x > 0), (0, True)) + 2
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from autodiff_tutor.errors import TranslationError
from autodiff_tutor.verify.symbolic.algebra import (
    FUNCTIONS,
    RELATIONS,
    as_condition,
    as_number,
    binary,
    compare,
    logical,
)

__all__ = ["SymValue", "SympyNamespace", "sympy_xp", "unwrap"]


class SymValue:
    """A sympy value that behaves like a numpy scalar in rule and op code.

    Arithmetic, comparisons, ``&``/``|``/``~`` follow numpy's meaning (see the module
    docstring); asking for its truth value (``if v:``) is an error, because the answer
    depends on the region.

    >>> import sympy as sp
    >>> x = SymValue(sp.Symbol("x", real=True))
    >>> (x == 0).expr, (-x).expr
    (Eq(x, 0), -x)
    """

    __array_priority__ = 1000  # numpy scalars defer to us
    __sympy_value__ = True  # as_number / as_condition unwrap it

    def __init__(self, expr: Any) -> None:
        self.expr = expr.expr if isinstance(expr, SymValue) else expr

    shape: tuple[int, ...] = ()
    ndim = 0
    T = property(lambda self: self)

    def __repr__(self) -> str:
        return f"SymValue({self.expr})"

    def __bool__(self) -> bool:
        raise TranslationError(
            f"the truth value of {self.expr} depends on the region",
            hint="use masks or xp.where instead of if/else on array values",
        )

    def __hash__(self) -> int:
        return hash(self.expr)

    def astype(self, dtype: Any) -> SymValue:
        return SymValue(as_number(self) if not _is_bool_dtype(dtype) else as_condition(self))


def _is_bool_dtype(dtype: Any) -> bool:
    return dtype is bool or getattr(dtype, "kind", None) == "b" or dtype == np.bool_


def _binop(op: str, reflected: bool = False) -> Callable[[SymValue, Any], SymValue]:
    if reflected:
        return lambda self, other: SymValue(binary(op, other, self))
    return lambda self, other: SymValue(binary(op, self, other))


def _relop(relation: str) -> Callable[[SymValue, Any], SymValue]:
    return lambda self, other: SymValue(compare(relation, self, other))


def _logop(op: str) -> Callable[[SymValue, Any], SymValue]:
    return lambda self, other: SymValue(logical(op, self, other))


for _op in ("add", "sub", "mul", "truediv", "pow"):
    setattr(SymValue, f"__{_op}__", _binop(_op))
    setattr(SymValue, f"__r{_op}__", _binop(_op, reflected=True))
for _rel in RELATIONS:
    setattr(SymValue, f"__{_rel}__", _relop(_rel))
for _lop in ("and", "or"):
    setattr(SymValue, f"__{_lop}__", _logop(_lop))
    setattr(SymValue, f"__r{_lop}__", _logop(_lop))
SymValue.__neg__ = lambda self: SymValue(-as_number(self))  # type: ignore[attr-defined]
SymValue.__pos__ = lambda self: self  # type: ignore[attr-defined]
SymValue.__invert__ = lambda self: SymValue(logical("not", self))  # type: ignore[attr-defined]


def unwrap(value: Any) -> Any:
    """The sympy value inside a :class:`SymValue` (tuples and lists element-wise).

    >>> unwrap((SymValue(1), None))
    (1, None)
    """
    if isinstance(value, SymValue):
        return value.expr
    if isinstance(value, (tuple, list)):
        return type(value)(unwrap(v) for v in value)
    return value


class SympyNamespace:
    """An ``xp`` for code running on sympy values.

    Elementwise functions (``cos``, ``sign``, ``where``, ``maximum``...) build sympy
    expressions, element by element on object arrays; everything else (``reshape``,
    ``broadcast_to``, ``sum``, ``zeros``...) is numpy, which handles object arrays of
    sympy values.

    >>> import numpy as np, sympy as sp
    >>> a = np.array(sp.symbols("a b", real=True), dtype=object)
    >>> sympy_xp.cos(a).tolist(), sympy_xp.sum(a)
    ([cos(a), cos(b)], a + b)
    """

    def __getattr__(self, name: str) -> Any:
        if name in CONSTANTS:  # xp.pi in a rule is sympy's exact pi here
            return CONSTANTS[name]
        fn = FUNCTIONS.get(name)
        if fn is None:
            return getattr(np, name)
        return _elementwise(fn)

    def astype(self, x: Any, dtype: Any) -> Any:
        if isinstance(x, SymValue):
            return x.astype(dtype)
        return np.asarray(x).astype(object)

    def __repr__(self) -> str:
        return "sympy_xp"


def _elementwise(fn: Callable[..., Any]) -> Callable[..., Any]:
    def apply(*args: Any) -> Any:
        if any(isinstance(a, np.ndarray) for a in args):
            wrapped = any(
                isinstance(e, SymValue)
                for a in args
                for e in (np.ravel(a) if isinstance(a, np.ndarray) else [a])
            )
            keep = SymValue if wrapped else (lambda v: v)
            vectorised = np.frompyfunc(lambda *v: keep(fn(*unwrap(v))), len(args), 1)
            return vectorised(*[unwrap(a) if isinstance(a, SymValue) else a for a in args])
        result = fn(*unwrap(args))
        return SymValue(result) if any(isinstance(a, SymValue) for a in args) else result

    return apply


CONSTANTS = {"pi": sp.pi, "e": sp.E}

sympy_xp = SympyNamespace()
