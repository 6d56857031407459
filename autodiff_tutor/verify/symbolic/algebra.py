"""Numpy's elementwise semantics on sympy scalars: masks as numbers, kinks as Piecewise.

The symbolic checks evaluate array code on sympy values, one element at a time. This
module says what each numpy construct means there:

- a comparison is a sympy condition (``x <= t``); used as a number (``(x <= t) * y``,
  ``xp.astype(mask, float)``) it is ``Piecewise((1, x <= t), (0, True))``;
- ``&``, ``|``, ``~`` on masks are ``And``, ``Or``, ``Not``;
- functions with kinks (``abs``, ``sign``, ``maximum``, ``minimum``, ``clip``,
  ``where``) become ``Piecewise`` with explicit conditions, so that the regions of a
  function can be read off its conditions;
- a comparison between piecewise values is lifted into a condition on the pieces.

To run rule or op code on these values directly, :class:`SymValue` wraps a sympy
value so that its operators follow numpy's meaning, and :data:`sympy_xp` is the ``xp``
to pass along: elementwise functions build sympy, the rest is numpy on object arrays.

>>> import sympy as sp
>>> x, t = sp.symbols("x t", real=True)
>>> as_number(compare("le", x, t))
Piecewise((1, t >= x), (0, True))
>>> FUNCTIONS["maximum"](x, 0)
Piecewise((x, x >= 0), (0, True))
"""

from __future__ import annotations

import functools
import inspect
import numbers
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp
from sympy.logic.boolalg import Boolean

from autodiff_tutor.errors import TranslationError
from autodiff_tutor.rules.registry import all_rules

__all__ = [
    "FUNCTIONS",
    "KIT",
    "RELATIONS",
    "SymValue",
    "SympyNamespace",
    "as_condition",
    "as_number",
    "binary",
    "compare",
    "is_condition",
    "is_symbolic",
    "logical",
    "sympy_xp",
    "unwrap",
    "where",
]

#: The comparisons by name, as sympy relations.
RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "lt": sp.Lt,
    "le": sp.Le,
    "gt": sp.Gt,
    "ge": sp.Ge,
    "eq": sp.Eq,
    "ne": sp.Ne,
}

_ARITHMETIC = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "pow": operator.pow,
}
_LOGICAL = {"and": sp.And, "or": sp.Or, "not": sp.Not}


def _unwrap(value: Any) -> Any:
    """The sympy value inside a :class:`SymValue`."""
    return value.expr if isinstance(value, SymValue) else value


def is_symbolic(value: Any) -> bool:
    """Whether ``value`` is a sympy object (an expression or a condition), not a
    Python value or a marker of the translator.

    >>> import sympy as sp
    >>> is_symbolic(sp.Symbol("x") > 0), is_symbolic(1.0)
    (True, False)
    """
    return isinstance(value, sp.Basic)


def is_condition(value: Any) -> bool:
    """Whether ``value`` is a truth value (a Python bool or a sympy condition).

    >>> import sympy as sp
    >>> is_condition(sp.Symbol("x") > 0), is_condition(sp.Integer(1))
    (True, False)
    """
    if isinstance(value, sp.Expr):  # a sympy Symbol is also a Boolean: a number here
        return False
    return isinstance(value, (bool, np.bool_, Boolean))


def as_number(value: Any) -> sp.Expr:
    """A sympy number for ``value``: masks become 0/1, floats exact rationals.

    >>> as_number(0.1), as_number(True)
    (1/10, 1)
    """
    value = _unwrap(value)
    if isinstance(value, (bool, np.bool_)):
        return sp.Integer(int(value))
    if isinstance(value, sp.Expr):
        return value
    if isinstance(value, Boolean):
        return sp.Piecewise((1, value), (0, True))
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if isinstance(value, numbers.Real):
        return sp.nsimplify(float(value), rational=True)
    raise TranslationError(f"cannot use {type(value).__name__} value {value!r} as a number")


def as_condition(value: Any) -> Any:
    """A sympy condition for ``value``: a mask stays itself, a number ``n`` is ``n != 0``.

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> as_condition(as_number(x > 1))
    x > 1
    """
    value = _unwrap(value)
    if isinstance(value, (bool, np.bool_)):
        return sp.true if value else sp.false
    if is_condition(value):
        return value
    number = as_number(value)
    if isinstance(number, sp.Piecewise) and len(number.args) == 2:
        (one, cond), (zero, rest) = number.args
        if one == 1 and zero == 0 and rest == sp.true:
            return cond
    return sp.Ne(number, 0)


def _cases(value: sp.Expr) -> list[tuple[sp.Expr, Any]]:
    """The pieces of a (folded) piecewise value, each with a disjoint condition."""
    folded = sp.piecewise_fold(value)
    if not isinstance(folded, sp.Piecewise):
        return [(folded, sp.true)]
    cases, earlier = [], []
    for expr, cond in folded.args:
        cases.append((expr, sp.And(cond, *[sp.Not(c) for c in earlier])))
        earlier.append(cond)
    return cases


def compare(relation: str, a: Any, b: Any) -> Any:
    """The condition ``a <relation> b`` (``"lt"``, ``"le"``, ..., ``"ne"``).

    Piecewise operands are lifted: the result only compares piece-free expressions.

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> compare("lt", FUNCTIONS["abs"](x), 1)
    ((x >= 0) & (x < 1)) | ((x < 0) & (-x < 1))
    """
    relate = RELATIONS[relation]
    a, b = as_number(a), as_number(b)
    if not (a.has(sp.Piecewise) or b.has(sp.Piecewise)):
        return relate(a, b)
    terms = [sp.And(ca, cb, relate(va, vb)) for va, ca in _cases(a) for vb, cb in _cases(b)]
    return sp.Or(*terms)


def binary(op: str, a: Any, b: Any) -> sp.Expr:
    """Arithmetic on numbers and masks: ``add sub mul truediv pow``.

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> binary("mul", x > 0, x)
    x*Piecewise((1, x > 0), (0, True))
    """
    a, b = as_number(a), as_number(b)
    if op not in _ARITHMETIC:
        raise TranslationError(f"operator {op!r} has no symbolic meaning here")
    return _ARITHMETIC[op](a, b)


def logical(op: str, *operands: Any) -> Any:
    """``and``, ``or``, ``not`` (numpy's ``&``, ``|``, ``~``) on masks.

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> logical("and", x > 0, x < 1)
    (x > 0) & (x < 1)
    """
    conditions = [as_condition(v) for v in operands]
    if op not in _LOGICAL:
        raise TranslationError(f"logical operator {op!r} has no symbolic meaning here")
    return _LOGICAL[op](*conditions)


# --- elementwise functions ---------------------------------------------------------
# The primitives' sympy forms are facts of their records (``Rule.sympy``, see
# :mod:`autodiff_tutor.rules.record`); this module gives them numpy's semantics
# (``KIT``) and adds the functions that have no derivative rule.


def where(condition: Any, a: Any, b: Any) -> sp.Expr:
    """numpy's ``where`` on sympy scalars: a ``Piecewise``.

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> where(x > 0, x, 0)
    Piecewise((x, x > 0), (0, True))
    """
    return sp.Piecewise((as_number(a), as_condition(condition)), (as_number(b), True))


class SympyKit:
    """What a record's sympy form gets as ``sp``: sympy, plus numpy's ``where`` and
    comparisons that lift piecewise operands (``ge``, ``le``, ``gt``, ``lt``), so a
    kink is a ``Piecewise`` whose regions the checker reads off its conditions.

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> KIT.where(KIT.ge(x, 0), x, -x), KIT.tanh(x)
    (Piecewise((x, x >= 0), (-x, True)), tanh(x))
    """

    where = staticmethod(where)
    ge = staticmethod(functools.partial(compare, "ge"))
    le = staticmethod(functools.partial(compare, "le"))
    gt = staticmethod(functools.partial(compare, "gt"))
    lt = staticmethod(functools.partial(compare, "lt"))

    def __getattr__(self, name: str) -> Any:
        return getattr(sp, name)


KIT = SympyKit()


def _of_record(form: Callable[..., Any]) -> Callable[..., sp.Expr]:
    """A record's sympy form as a function of numpy-like values (masks, floats)."""

    signature = inspect.signature(form)
    optional = [p.default is None for p in list(signature.parameters.values())[1:]]

    def apply(*args: Any) -> sp.Expr:
        signature.bind(KIT, *args)  # a wrong number of arguments is a TypeError, as a call
        # None only where the form takes it (clip's missing bound); elsewhere an error
        values = [None if a is None and optional[i] else as_number(a) for i, a in enumerate(args)]
        return as_number(form(KIT, *values))

    return apply


def _sign(a: Any) -> sp.Expr:
    a = as_number(a)
    return sp.Piecewise((1, compare("gt", a, 0)), (-1, compare("lt", a, 0)), (0, True))


def _heaviside(x: Any, at_zero: Any) -> sp.Expr:
    x = as_number(x)
    return sp.Piecewise(
        (0, compare("lt", x, 0)), (as_number(at_zero), compare("eq", x, 0)), (1, True)
    )


def _unary(fn: Callable[[sp.Expr], sp.Expr]) -> Callable[[Any], sp.Expr]:
    return lambda a: fn(as_number(a))


def _functions() -> dict[str, Callable[..., Any]]:
    """The records' sympy forms under their names and aliases, then the functions
    without a derivative rule (``sign``, comparisons, ``log2``...)."""
    functions: dict[str, Callable[..., Any]] = {}
    for op, rule in all_rules().items():
        if rule.sympy is not None:
            functions[op] = _of_record(rule.sympy)
            functions.update({a: functions[op] for a in rule.aliases if isinstance(a, str)})
    functions.update(
        {
            "exp2": _unary(lambda a: 2**a),
            "log2": _unary(lambda a: sp.log(a, 2)),
            "log10": _unary(lambda a: sp.log(a, 10)),
            "cbrt": _unary(sp.cbrt),
            "reciprocal": _unary(lambda a: 1 / a),
            "sign": _sign,
            "fmax": functions["maximum"],
            "fmin": functions["minimum"],
            "heaviside": _heaviside,
            "less": lambda a, b: compare("lt", a, b),
            "less_equal": lambda a, b: compare("le", a, b),
            "greater": lambda a, b: compare("gt", a, b),
            "greater_equal": lambda a, b: compare("ge", a, b),
            "equal": lambda a, b: compare("eq", a, b),
            "not_equal": lambda a, b: compare("ne", a, b),
            "logical_and": lambda a, b: logical("and", a, b),
            "logical_or": lambda a, b: logical("or", a, b),
            "logical_not": lambda a: logical("not", a),
        }
    )
    return functions


FUNCTIONS: dict[str, Callable[..., Any]] = _functions()


class SymValue:
    """A sympy value that behaves like a numpy scalar in rule and op code (which uses
    operators: ``g * ((x > y) + 0.5 * (x == y))``).

    Arithmetic, comparisons, ``&``/``|``/``~`` follow numpy's meaning (see the module
    docstring); asking for its truth value (``if v:``) is an error, because the answer
    depends on the region.

    >>> import sympy as sp
    >>> x = SymValue(sp.Symbol("x", real=True))
    >>> (x == 0).expr, (-x).expr
    (Eq(x, 0), -x)
    >>> ((x > 0) * x + 2).expr
    x*Piecewise((1, x > 0), (0, True)) + 2
    """

    __array_priority__ = 1000  # numpy scalars defer to us

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
