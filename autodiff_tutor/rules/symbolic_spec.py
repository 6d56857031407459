"""How the symbolic checker runs a rule, as a rule's record states it (its
``symbolic`` field, see :mod:`autodiff_tutor.rules.record`): on sympy scalars
(:class:`ScalarRule`), on object arrays of symbols (:class:`ArrayRule`, with
:class:`Fixed` values among the inputs), or not at all (:class:`NumericOnly`).

>>> ArrayRule(lambda xp, x: xp.sum(x), [(((2,),), {})]).cases[0][0]
((2,),)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ScalarRule:
    """Symbolic check of an elementwise rule: ``primal(xp, *inputs)`` on scalars.

    ``primal`` defaults to the record's own sympy form (``xp.<op>(*inputs)``);
    ``positive`` names inputs that are positive symbols (domains of log, sqrt, power's
    base; the numeric tests draw them from ``[0.2, 3]``); ``condition`` names inputs
    that are masks (``where``'s condition, passed as ``c > 0`` for a real symbol
    ``c``); ``assume(symbols)`` returns extra assumptions (``a_min < a_max``).

    >>> ScalarRule(positive=("x",)).positive
    ('x',)
    """

    primal: Callable[..., Any] | None = None
    positive: tuple[str, ...] = ()
    condition: tuple[str, ...] = ()
    assume: Callable[[dict[str, Any]], list[Any]] | None = None


@dataclass
class ArrayRule:
    """Symbolic check of a rule on arrays: ``primal(xp, *inputs, **options)`` on numpy
    object arrays of symbols (by default the record's own ``xp.<op>``, or its runtime
    helper).

    ``cases`` lists ``(input shapes, options)``; a shape that is a list of shapes is a
    sequence input (``concatenate``), a :class:`Fixed` is a value given as is.
    ``ordered`` marks max/min: the inputs are then ordered representatives and ties
    are checked as subgradients; ``at_zero`` checks the subgradient at 0 (``norm``);
    ``wrap`` runs on ``SymValue`` elements (code that multiplies by bool arrays).

    >>> ArrayRule(lambda xp, x, **o: xp.sum(x, **o), [(((2, 3),), {"axis": 0})]).ordered
    False
    """

    primal: Callable[..., Any] | None = None
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)
    ordered: bool = False
    at_zero: bool = False
    wrap: bool = False


@dataclass(frozen=True)
class NumericOnly:
    """No symbolic check, and why (``sort``: sympy cannot order symbols; the linear
    algebra of decompositions): the rule is checked numerically only, in both modes.

    >>> NumericOnly("argsort needs numbers").reason
    'argsort needs numbers'
    """

    reason: str


@dataclass(frozen=True)
class Fixed:
    """An input given as a fixed value in a case (an index passed as an input): it
    carries no gradient, so the rule must return ``None`` for it.

    >>> Fixed(1).value
    1
    """

    value: Any


NUMBERS_ONLY = NumericOnly("np.linalg computes on numbers, not on sympy symbols")
"""The linear algebra of ``np.linalg`` (decompositions, inverses, densities built on them)."""
