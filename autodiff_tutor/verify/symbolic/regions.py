"""Regions of a piecewise function: sign patterns of its boundary expressions.

Every condition of a piecewise expression compares two piece-free expressions, so it
is a statement about the sign of one *boundary expression* ``lhs - rhs``. A region is
a choice of sign for each boundary; inside it every condition has a fixed truth value
and the expression is smooth. :func:`restrict` substitutes those truth values;
:class:`RegionMap` finds which sign patterns actually occur (by sampling points that
satisfy the assumptions) and describes each one readably (``tl < x < tr``).

>>> import sympy as sp
>>> x, t = sp.symbols("x t", real=True)
>>> f = sp.Piecewise((x, x > t), (t, True))
>>> bounds = boundaries([f])
>>> bounds
[t - x]
>>> restrict(f, {t - x: -1})
x
>>> regions = RegionMap([x, t], bounds)
>>> sorted(regions.describe(s) for s in regions.regions)
['x < t', 'x > t']
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import sympy as sp
from sympy.core.relational import Relational

__all__ = ["RegionMap", "boundaries", "canonical", "lambdify", "restrict", "truth"]

#: each kind of comparison as the test of the sign of ``lhs - rhs`` against 0
_SIGN_TESTS = {
    sp.StrictLessThan: operator.lt,
    sp.LessThan: operator.le,
    sp.StrictGreaterThan: operator.gt,
    sp.GreaterThan: operator.ge,
    sp.Equality: operator.eq,
    sp.Unequality: operator.ne,
}


def canonical(expr: sp.Expr) -> tuple[sp.Expr, int]:
    """``(b, s)`` with ``expr == s * c * b`` for some ``c > 0``: one name per boundary.

    >>> import sympy as sp
    >>> x, t = sp.symbols("x t", real=True)
    >>> canonical(2 * t - 2 * x), canonical(x - t)
    ((t - x, 1), (t - x, -1))
    """
    expr = sp.expand(expr)
    if expr.is_number:
        return expr, 1
    _, primitive = expr.as_content_primitive()
    if primitive.could_extract_minus_sign():
        return sp.expand(-primitive), -1
    return primitive, 1


def truth(relation: Relational, sign: int) -> bool:
    """The truth of ``relation`` when ``lhs - rhs`` has sign ``sign`` (-1, 0 or 1).

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> truth(x <= 0, 0), truth(x < 0, 0), truth(sp.Eq(x, 0), 1)
    (True, False, False)
    """
    test = _SIGN_TESTS.get(type(relation))
    if test is None:
        raise TypeError(f"not a comparison: {relation}")
    return test(sign, 0)


def _relations(expr: Any) -> set[Relational]:
    if not isinstance(expr, sp.Basic):
        return set()
    return {r for r in expr.atoms(Relational) if isinstance(r, Relational)}


def boundaries(exprs: Iterable[Any]) -> list[sp.Expr]:
    """The distinct boundary expressions of all conditions in ``exprs``, in a fixed order.

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> boundaries([sp.Piecewise((1, x >= 1), (0, True)) + sp.Piecewise((1, 2 > 2 * x), (0, True))])
    [x - 1]
    """
    found: dict[sp.Expr, None] = {}
    for expr in exprs:
        for relation in sorted(_relations(expr), key=sp.default_sort_key):
            boundary, _ = canonical(relation.lhs - relation.rhs)
            if not boundary.is_number:
                found.setdefault(boundary, None)
    return list(found)


def restrict(expr: Any, signs: dict[sp.Expr, int]) -> Any:
    """``expr`` with every condition replaced by its truth value for the given signs.

    ``signs`` maps each boundary (as :func:`boundaries` names it) to -1, 0 or 1; the
    result has no conditions left (a ``Piecewise`` collapses to one piece).

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> restrict(sp.Piecewise((1, x > 0), (-1, x < 0), (0, True)), {x: 0})
    0
    """
    if not isinstance(expr, sp.Basic):
        return expr
    replacements = {}
    for relation in _relations(expr):
        boundary, factor = canonical(relation.lhs - relation.rhs)
        if boundary.is_number:
            value = bool(relation)
        else:
            value = truth(relation, factor * signs[boundary])
        replacements[relation] = sp.true if value else sp.false
    result = expr.xreplace(replacements)
    if result.has(sp.Piecewise) and _relations(result):
        raise ValueError(f"conditions left after restriction: {result}")
    return result


def lambdify(symbols: Sequence[sp.Symbol], expr: Any) -> Any:
    """A numpy function of ``symbols`` (vectorised over points), constants broadcast.

    >>> import numpy as np, sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> lambdify([x], sp.Integer(2))(np.zeros(3)).tolist()
    [2.0, 2.0, 2.0]
    """
    fn = sp.lambdify(list(symbols), expr, modules="numpy")

    def evaluate(*columns: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            value = np.asarray(fn(*columns))
        if value.dtype == object or value.dtype.kind == "c":
            value = np.real_if_close(value.astype(complex))
            if value.dtype.kind == "c":
                value = np.where(np.abs(value.imag) < 1e-12, value.real, np.nan)
        shape = np.shape(columns[0]) if columns else ()
        return np.broadcast_to(value.astype(float), shape).copy()

    return evaluate


class RegionMap:
    """The sign patterns of ``bounds`` that occur where ``assumptions`` hold.

    Points are drawn at several scales (positive symbols get positive values); a
    pattern seen at some point is a region, and its points are witnesses for numeric
    checks and counterexamples.

    >>> import sympy as sp
    >>> x, lo, hi = sp.symbols("x lo hi", real=True)
    >>> regions = RegionMap([x, lo, hi], [x - lo, x - hi], assumptions=[lo < hi])
    >>> sorted(regions.describe(s) for s in regions.regions)
    ['lo < x < hi', 'x < lo', 'x > hi']
    """

    def __init__(
        self,
        symbols: Sequence[sp.Symbol],
        bounds: Sequence[sp.Expr],
        assumptions: Sequence[Any] = (),
        samples: int = 3000,
        seed: int = 0,
    ) -> None:
        self.symbols = list(symbols)
        self.bounds = list(bounds)
        self.assumptions = list(assumptions)
        rng = np.random.default_rng(seed)
        self._holds = [sp.lambdify(self.symbols, a, modules="numpy") for a in self.assumptions]
        self._values = [lambdify(self.symbols, bound) for bound in self.bounds]
        points = self._draw(rng, samples)
        keep = np.ones(len(points), dtype=bool)
        columns = points.T
        for holds in self._holds:
            with np.errstate(all="ignore"):
                keep &= np.broadcast_to(np.asarray(holds(*columns), dtype=bool), keep.shape)
        signs = np.zeros((len(points), len(self.bounds)), dtype=int)
        for j, evaluate in enumerate(self._values):
            values = evaluate(*columns)
            keep &= np.isfinite(values) & (np.abs(values) > 1e-9)
            signs[:, j] = np.sign(values).astype(int)
        self.points = points[keep]
        self.signs = signs[keep]
        self.regions: dict[tuple[int, ...], np.ndarray] = {}
        for i, pattern in enumerate(map(tuple, self.signs)):
            self.regions.setdefault(pattern, []).append(i)  # type: ignore[attr-defined]
        # left to right along the first symbol (the data input of an op)
        by_first = sorted(self.regions.items(), key=lambda kv: (self._centre(kv[1]), kv[0]))
        self.regions = {k: np.array(v) for k, v in by_first}

    def _near_boundaries(self, rng: np.random.Generator, base: np.ndarray) -> list[np.ndarray]:
        """Points just off each boundary, on both sides: thin regions between close
        boundaries are found even when random points rarely land in them."""
        near = []
        for bound in self.bounds:
            for j, symbol in enumerate(self.symbols):
                slope = sp.diff(bound, symbol)
                if symbol in bound.free_symbols and not slope.has(symbol) and slope != 0:
                    on = lambdify(self.symbols, sp.solve(bound, symbol)[0])(*base.T)
                    moved = base.copy()
                    offsets = rng.choice([-1.0, 1.0], len(base)) * 10 ** rng.uniform(
                        -3, -1, len(base)
                    )
                    moved[:, j] = on + offsets
                    near.append(moved[np.isfinite(moved).all(axis=1)])
                    break
        return near

    def _centre(self, rows: list[int]) -> float:
        return float(np.median(self.points[rows, 0])) if self.symbols else 0.0

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        scales = rng.choice([0.3, 1.0, 3.0], size=(n, len(self.symbols)))
        points = rng.normal(size=(n, len(self.symbols))) * scales
        points = np.concatenate([points, *self._near_boundaries(rng, points[: n // 4])])
        for j, symbol in enumerate(self.symbols):
            if symbol.is_positive or symbol.is_nonnegative:
                points[:, j] = np.abs(points[:, j]) + 1e-3
            elif symbol.is_negative or symbol.is_nonpositive:
                points[:, j] = -np.abs(points[:, j]) - 1e-3
        return points

    def locate(self, point: Sequence[float]) -> tuple[int, ...] | None:
        """The region of ``point`` (one value per symbol), or ``None`` when it lies on a
        boundary or outside the assumptions.

        >>> import sympy as sp
        >>> x = sp.Symbol("x", real=True)
        >>> RegionMap([x], [x]).locate([2.0]), RegionMap([x], [x]).locate([0.0])
        ((1,), None)
        """
        column = [np.array([float(v)]) for v in point]
        for holds in self._holds:
            with np.errstate(all="ignore"):
                if not bool(np.all(holds(*column))):
                    return None
        pattern = []
        for evaluate in self._values:
            value = float(evaluate(*column)[0])
            if not np.isfinite(value) or abs(value) <= 1e-9:
                return None
            pattern.append(1 if value > 0 else -1)
        return tuple(pattern)

    def beside(self, pattern: tuple[int, ...], j: int, points: np.ndarray) -> np.ndarray:
        """Which ``points`` lie on boundary ``j`` and, for every other boundary, on the
        side of region ``pattern`` (where the assumptions hold): the edge of the region.

        >>> import numpy as np, sympy as sp
        >>> x, t = sp.symbols("x t", real=True)
        >>> regions = RegionMap([x, t], [x, x - t], assumptions=[t > 0])
        >>> regions.beside((-1, -1), 0, np.array([[0.0, 1.0], [0.0, -1.0], [0.5, 1.0]])).tolist()
        [True, False, False]
        """
        columns = points.T
        keep = np.ones(len(points), dtype=bool)
        for holds in self._holds:
            with np.errstate(all="ignore"):
                keep &= np.broadcast_to(np.asarray(holds(*columns), dtype=bool), keep.shape)
        for k, evaluate in enumerate(self._values):
            values = evaluate(*columns)
            if k == j:
                keep &= np.abs(values) <= 1e-9
            else:
                keep &= np.isfinite(values) & (np.sign(values) == pattern[k])
                keep &= np.abs(values) > 1e-9
        return keep

    def witnesses(self, pattern: tuple[int, ...]) -> np.ndarray:
        """The sampled points (rows, one column per symbol) inside region ``pattern``."""
        return self.points[self.regions[pattern]]

    def signs_of(self, pattern: tuple[int, ...]) -> dict[sp.Expr, int]:
        """The region as a mapping boundary -> sign, for :func:`restrict`."""
        return dict(zip(self.bounds, pattern, strict=True))

    def conditions(self, pattern: tuple[int, ...]) -> list[Relational]:
        """The conditions that define the region, without those the others imply.

        A condition is implied when no sampled region agrees with the kept ones and
        has the opposite sign for it.
        """
        kept = list(range(len(pattern)))
        for j in list(kept):
            others = [k for k in kept if k != j]
            flipped = any(
                other[j] != pattern[j] and all(other[k] == pattern[k] for k in others)
                for other in self.regions
            )
            if not flipped:
                kept.remove(j)
        return [self._relation(self.bounds[j], pattern[j]) for j in kept]

    def _relation(self, bound: sp.Expr, sign: int) -> Relational:
        """``bound < 0`` or ``bound > 0``, solved for the first symbol it is linear in."""
        for symbol in self.symbols:
            slope = sp.diff(bound, symbol)
            if slope.is_number and slope != 0:
                rhs = sp.expand(symbol - bound / slope)
                below = (sign < 0) == bool(slope > 0)
                return sp.Lt(symbol, rhs) if below else sp.Gt(symbol, rhs)
        constant, rest = bound.as_coeff_Add()
        return sp.Lt(rest, -constant) if sign < 0 else sp.Gt(rest, -constant)

    def describe(self, pattern: tuple[int, ...]) -> str:
        """The region as readable text: ``lo < x < hi``, ``x > 0``, or ``everywhere``."""
        return describe_conditions(self.conditions(pattern))


def describe_conditions(conditions: Sequence[Relational]) -> str:
    """Readable text for a conjunction, chaining bounds on one symbol (``a < x < b``).

    >>> import sympy as sp
    >>> x, a, b = sp.symbols("x a b", real=True)
    >>> describe_conditions([sp.Gt(x, a), sp.Lt(x, b)])
    'a < x < b'
    """
    if not conditions:
        return "everywhere"
    lower: dict[sp.Expr, list[sp.Expr]] = {}
    upper: dict[sp.Expr, list[sp.Expr]] = {}
    order: list[sp.Expr] = []
    for c in conditions:
        if c.lhs not in order:
            order.append(c.lhs)
        side = lower if isinstance(c, (sp.StrictGreaterThan, sp.GreaterThan)) else upper
        side.setdefault(c.lhs, []).append(c.rhs)
    parts = []
    for lhs in order:
        lows, highs = lower.get(lhs, []), upper.get(lhs, [])
        while lows and highs:
            parts.append(f"{sp.sstr(lows.pop(0))} < {sp.sstr(lhs)} < {sp.sstr(highs.pop(0))}")
        parts += [f"{sp.sstr(lhs)} > {sp.sstr(v)}" for v in lows]
        parts += [f"{sp.sstr(lhs)} < {sp.sstr(v)}" for v in highs]
    return ", ".join(parts)
