"""What a backward does on the boundary between two regions (the relu'(0) question).

For each boundary shared by two regions *a* and *b*, and for each input, the kink
pass puts a point on the boundary (solving the boundary expression for one input),
and compares the backward's value there with the derivatives of the forward from
each side:

- both sides agree (no kink for this input): the backward must agree too (``smooth``);
- otherwise the value is ``weight * d_a + (1 - weight) * d_b``; ``weight`` 1 or 0 is a
  ``one-sided`` choice, a weight strictly between is a ``subgradient`` (a convex
  combination of the one-sided derivatives, the Clarke generalized gradient), and a
  weight outside ``[0, 1]`` is ``invalid``: no side gives that value.

>>> import sympy as sp
>>> from autodiff_tutor.verify.symbolic.algebra import FUNCTIONS, as_number
>>> from autodiff_tutor.verify.symbolic.check import Problem, check_regions
>>> x, g = sp.symbols("x g", real=True)
>>> relu = Problem("relu", (x,), (FUNCTIONS["maximum"](x, 0),), (g,), (g * as_number(x > 0),))
>>> report, regions = check_regions(relu)
>>> [(k.boundary, k.value, k.verdict, k.detail) for k in kink_checks(relu, regions)]
[('x = 0', 0, 'one-sided', 'the derivative from x < 0')]
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import sympy as sp

from autodiff_tutor.verify.symbolic.check import TOLERANCE, Problem, Regions, prove_equal
from autodiff_tutor.verify.symbolic.regions import lambdify, restrict
from autodiff_tutor.verify.symbolic.report import KinkCheck

__all__ = ["kink_checks"]


def _solve(bound: sp.Expr, inputs: tuple[sp.Symbol, ...]) -> tuple[sp.Symbol, Any] | None:
    """``(symbol, value)`` with ``bound == 0`` when ``symbol == value``: the first input
    the boundary is linear in."""
    for symbol in inputs:
        slope = sp.diff(bound, symbol)
        if symbol in bound.free_symbols and not slope.has(symbol) and slope != 0:
            return symbol, sp.simplify(symbol - bound / slope)
    for symbol in inputs:
        if symbol in bound.free_symbols:
            try:
                solutions = sp.solve(bound, symbol)
            except NotImplementedError:  # pragma: no cover - sympy limits
                continue
            if len(solutions) == 1:
                return symbol, solutions[0]
    return None


def kink_checks(problem: Problem, regions: Regions) -> list[KinkCheck]:
    """One :class:`KinkCheck` per input and per boundary between two sampled regions."""
    patterns = list(regions.map.regions)
    checks: list[KinkCheck] = []
    for j, bound in enumerate(regions.map.bounds):
        for a, b in itertools.product(patterns, patterns):
            if a[j] < 0 < b[j] and all(a[k] == b[k] for k in range(len(a)) if k != j):
                checks += _boundary_checks(problem, regions, bound, a, b)
    return sorted(checks, key=lambda k: k.boundary)


def _boundary_checks(
    problem: Problem, regions: Regions, bound: sp.Expr, a: tuple[int, ...], b: tuple[int, ...]
) -> list[KinkCheck]:
    """The check of every input on the boundary ``bound`` between regions ``a`` and ``b``."""
    region_map, symbols = regions.map, problem.symbols()
    side_a, side_b = region_map.describe(a), region_map.describe(b)
    solved = _solve(bound, problem.inputs)
    if solved is None:
        boundary, why = f"{sp.sstr(bound)} = 0", "no input can be solved for"
        return [KinkCheck("*", boundary, side_a, side_b, None, None, None, "not analysed", why)]
    symbol, value = solved
    name = f"{sp.sstr(symbol)} = {sp.sstr(value)}"
    on_boundary = _boundary_points(region_map.witnesses(a), symbols, symbol, value)
    signs = {**region_map.signs_of(a), bound: 0}
    checks = []
    for k, x in enumerate(problem.inputs):
        gradient = problem.gradients[k]
        at_kink = sp.Integer(0) if gradient is None else restrict(gradient, signs)
        at_kink = _tidy(at_kink.subs(symbol, value))
        d_a = _tidy(regions.expected[a][k].subs(symbol, value))
        d_b = _tidy(regions.expected[b][k].subs(symbol, value))
        judged = _judge(at_kink, d_a, d_b, side_a, side_b, symbols, on_boundary)
        checks.append(KinkCheck(x.name, name, side_a, side_b, at_kink, d_a, d_b, *judged))
    return checks


def _tidy(expr: Any) -> Any:
    """A readable form, cheaply: factor out common terms of polynomials (most kinks),
    full simplification only for the rest."""
    expr = sp.sympify(expr)
    if expr.is_polynomial() or expr.is_rational_function():
        return sp.factor_terms(sp.expand(expr))
    return sp.simplify(expr)


def _boundary_points(
    witnesses: np.ndarray, symbols: list[sp.Symbol], symbol: sp.Symbol, value: Any
) -> np.ndarray:
    """Witnesses of a neighbouring region moved onto the boundary."""
    points = witnesses[:50].copy()
    column = symbols.index(symbol)
    points[:, column] = lambdify(symbols, value)(*points.T)
    return points[np.all(np.isfinite(points), axis=1)]


def _judge(
    value: Any,
    d_a: Any,
    d_b: Any,
    side_a: str,
    side_b: str,
    symbols: list[sp.Symbol],
    points: np.ndarray,
) -> tuple[str, str, Any, dict[str, float] | None]:
    """verdict, detail, weight of side a, counterexample point."""
    if prove_equal(d_a, d_b):
        if prove_equal(value, d_a):
            return "smooth", "", None, None
        bad = _numeric_mismatch(value, d_a, symbols, points)
        if bad is None:
            return "smooth", "equal at every sampled point (numeric check)", None, None
        return "invalid", "both sides agree but the backward does not", None, bad
    weight = sp.cancel((value - d_b) / (d_a - d_b))
    if not weight.is_number:
        weight = sp.simplify(weight)
    if weight.is_number:
        if weight == 1:
            return "one-sided", f"the derivative from {side_a}", weight, None
        if weight == 0:
            return "one-sided", f"the derivative from {side_b}", weight, None
        if 0 < weight < 1:
            return (
                "subgradient",
                f"{sp.sstr(weight)} of {side_a} + {sp.sstr(1 - weight)} of {side_b}",
                weight,
                None,
            )
        example = _point(symbols, points[0]) if len(points) else None
        return "invalid", f"weight {sp.sstr(weight)} is outside [0, 1]", weight, example
    weights = lambdify(symbols, weight)(*points.T)
    weights = weights[np.isfinite(weights)]
    outside = (weights < -TOLERANCE) | (weights > 1 + TOLERANCE)
    if len(weights) and not outside.any():
        return "subgradient", "the weight stays in [0, 1] at every sampled point", weight, None
    index = int(np.argmax(outside)) if outside.any() else 0
    example = _point(symbols, points[index]) if len(points) else None
    return "invalid", f"the weight {sp.sstr(weight)} leaves [0, 1]", weight, example


def _numeric_mismatch(
    a: Any, b: Any, symbols: list[sp.Symbol], points: np.ndarray
) -> dict[str, float] | None:
    va, vb = lambdify(symbols, a)(*points.T), lambdify(symbols, b)(*points.T)
    bad = np.isfinite(va) & np.isfinite(vb) & (np.abs(va - vb) > TOLERANCE * (1 + np.abs(va)))
    return _point(symbols, points[int(np.argmax(bad))]) if bad.any() else None


def _point(symbols: list[sp.Symbol], point: np.ndarray) -> dict[str, float]:
    return {s.name: float(v) for s, v in zip(symbols, point, strict=True)}
