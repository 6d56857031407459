"""What a backward does on the boundary between two regions (the relu'(0) question).

For each boundary shared by two regions *a* and *b*, and for each input, the kink
pass puts a point on the boundary (solving the boundary expression for one input),
and compares the backward's value there with the derivatives of the forward from
each side (by substitution, or by the one-sided limit where that gives 0/0, as for
``sin(x)/x`` at 0):

- both sides agree (no kink for this input): the backward must agree too (``smooth``);
- otherwise the value is ``weight * d_a + (1 - weight) * d_b``; ``weight`` 1 or 0 is a
  ``one-sided`` choice, a weight strictly between is a ``subgradient`` (a convex
  combination of the one-sided derivatives, the Clarke generalized gradient), and a
  weight outside ``[0, 1]`` is ``invalid``: no side gives that value.

A boundary that several inputs cross (``x = t`` in ``max(x - t, 0)``, a tie in
``maximum``) is one kink of the function of all of them: its gradient there is one
side's, or one mix of both, so every input must take the *same* weight. Inputs that
take different sides give a gradient no side gives (moving ``x`` and ``t`` together
along the tie, the backward's slope is not the forward's): a joint check, ``invalid``,
named by all those inputs.

Where the problem can run the code (:mod:`~autodiff_tutor.verify.symbolic.runs`), the
backward also runs with numpy at points of the boundary: its value must be finite and
judged as above (``x / |x|`` is 0/0 there, though sympy reads ``x / x`` as 1).

>>> import sympy as sp
>>> from autodiff_tutor.verify.symbolic.algebra import FUNCTIONS, as_number
>>> from autodiff_tutor.verify.symbolic.check import Problem, check_regions
>>> x, g = sp.symbols("x g", real=True)
>>> relu = Problem("relu", (x,), (FUNCTIONS["maximum"](x, 0),), (g,), (g * as_number(x > 0),))
>>> report, regions = check_regions(relu)
>>> [(k.boundary, k.value, k.verdict, k.detail) for k in kink_checks(relu, regions, report)]
[('x = 0', 0, 'one-sided', 'the derivative from x < 0')]
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np
import sympy as sp

from autodiff_tutor.verify.symbolic.check import (
    TOLERANCE,
    Problem,
    Regions,
    prove_equal,
    run_code,
)
from autodiff_tutor.verify.symbolic.regions import lambdify, restrict
from autodiff_tutor.verify.symbolic.report import KinkCheck, SymbolicReport

__all__ = ["kink_checks"]

#: how many points of each boundary the code is run at with numpy
RUN_POINTS = 16
#: how far a weight may stray outside [0, 1], or from another input's, in rounding
WEIGHT_SLACK = 1e-6


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


def kink_checks(
    problem: Problem, regions: Regions, report: SymbolicReport | None = None
) -> list[KinkCheck]:
    """One :class:`KinkCheck` per input and per boundary between two sampled regions
    (and a joint one where inputs take different sides); ``report`` gets the notes."""
    report = report or SymbolicReport(problem.name, (), ())
    patterns = list(regions.map.regions)
    checks: list[KinkCheck] = []
    for j in range(len(regions.map.bounds)):
        for a, b in itertools.product(patterns, patterns):
            if a[j] < 0 < b[j] and all(a[k] == b[k] for k in range(len(a)) if k != j):
                checks += _boundary_checks(problem, regions, report, j, a, b)
    return sorted(checks, key=lambda k: k.boundary)


def _finite(expr: Any) -> bool:
    expr = sp.sympify(expr)
    return not expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo)


def _one_sided(expr: Any, symbol: sp.Symbol, value: Any, direction: str | None) -> Any:
    """``expr`` on the boundary ``symbol = value``, approached from ``direction``
    (``"+"``/``"-"``): substituted, or where that is not finite (0/0), the limit."""
    at = sp.sympify(expr).subs(symbol, value)
    if _finite(at):
        return _tidy(at)
    if direction is None:
        return sp.nan
    try:
        limit = sp.limit(expr, symbol, value, dir=direction)
    except Exception:  # pragma: no cover - sympy limits: reported as not analysed
        return sp.nan
    return _tidy(limit) if _finite(limit) else sp.nan


def _directions(bound: sp.Expr, symbol: sp.Symbol) -> tuple[str | None, str | None]:
    """From which side of ``symbol = value`` regions a (``bound < 0``) and b lie."""
    slope = sp.diff(bound, symbol)
    if slope.is_positive:
        return "-", "+"
    if slope.is_negative:
        return "+", "-"
    return None, None


def _boundary_checks(
    problem: Problem,
    regions: Regions,
    report: SymbolicReport,
    j: int,
    a: tuple[int, ...],
    b: tuple[int, ...],
) -> list[KinkCheck]:
    """The check of every input on boundary ``j`` between regions ``a`` and ``b``."""
    region_map, symbols = regions.map, problem.symbols()
    bound = region_map.bounds[j]
    side_a, side_b = region_map.describe(a), region_map.describe(b)
    solved = _solve(bound, problem.inputs)
    if solved is None:
        boundary, why = f"{sp.sstr(bound)} = 0", "no input can be solved for"
        return [KinkCheck("*", boundary, side_a, side_b, None, None, None, "not analysed", why)]
    symbol, value = solved
    name = f"{sp.sstr(symbol)} = {sp.sstr(value)}"
    moved = _boundary_points(region_map.witnesses(a), symbols, symbol, value)
    beside = moved[region_map.beside(a, j, moved)]
    # where no moved point stays beside region a, the formulas are judged at them all
    on_boundary = beside if len(beside) else moved
    from_a, from_b = _directions(bound, symbol)
    signs = {**region_map.signs_of(a), bound: 0}
    checks = []
    for k, x in enumerate(problem.inputs):
        gradient = problem.gradients[k]
        at_kink = sp.Integer(0) if gradient is None else restrict(gradient, signs)
        at_kink = _tidy(at_kink.subs(symbol, value))
        d_a = _one_sided(regions.expected[a][k], symbol, value, from_a)
        d_b = _one_sided(regions.expected[b][k], symbol, value, from_b)
        judged = _judge(at_kink, d_a, d_b, side_a, side_b, symbols, on_boundary)
        checks.append(KinkCheck(x.name, name, side_a, side_b, at_kink, d_a, d_b, *judged))
    joint = _joint(checks, symbols, on_boundary)
    sample = beside[:RUN_POINTS]  # numpy's values are judged only beside the region
    ran = run_code(problem, regions, report, sample)
    if ran is not None:
        checks, found = _numpy_judged(checks, ran[0], ran[1], symbols, sample)
        joint = joint or found
    return checks + ([joint] if joint is not None else [])


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
    example = _point(symbols, points[0]) if len(points) else None
    if not _finite(value):
        return "invalid", f"the backward is {sp.sstr(value)} here: not a number", None, example
    if not (_finite(d_a) and _finite(d_b)):
        why = "a one-sided derivative of the forward is not finite here"
        return "not analysed", why, None, None
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
    if weight.is_number and weight.is_comparable:
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
        return "invalid", f"weight {sp.sstr(weight)} is outside [0, 1]", weight, example
    weights = _weights_at(weight, symbols, points)
    weights = weights[np.isfinite(weights)]
    outside = (weights < -TOLERANCE) | (weights > 1 + TOLERANCE)
    if len(weights) and not outside.any():
        return "subgradient", "the weight stays in [0, 1] at every sampled point", weight, None
    index = int(np.argmax(outside)) if outside.any() else 0
    example = _point(symbols, points[index]) if len(points) else None
    return "invalid", f"the weight {sp.sstr(weight)} leaves [0, 1]", weight, example


def _weights_at(weight: Any, symbols: list[sp.Symbol], points: np.ndarray) -> np.ndarray:
    if isinstance(weight, sp.Basic) and weight.is_number and not weight.is_comparable:
        return np.full(len(points), np.nan)
    return lambdify(symbols, weight)(*points.T)


def _joint(
    checks: list[KinkCheck], symbols: list[sp.Symbol], points: np.ndarray
) -> KinkCheck | None:
    """The joint check of the inputs whose sides differ on this boundary: an ``invalid``
    one where their weights differ (``None`` when they agree)."""
    sided = [c for c in checks if c.verdict in ("one-sided", "subgradient")]
    if len(sided) < 2:
        return None
    weights = [c.weight for c in sided]
    if all(w.is_number for w in weights):
        if len(set(weights)) == 1:
            return None
        return _joint_check(sided, weights, _point(symbols, points[0]) if len(points) else None)
    values = np.array([_weights_at(w, symbols, points) for w in weights]).reshape(len(sided), -1)
    bad = _apart(values)
    if bad.any():
        row = int(np.argmax(bad))
        return _joint_check(sided, list(values[:, row]), _point(symbols, points[row]))
    return None


def _apart(weights: np.ndarray) -> np.ndarray:
    """Per point (a column), whether two finite weights (rows) differ beyond rounding."""
    finite = np.isfinite(weights)
    high = np.max(np.where(finite, weights, -np.inf), axis=0)
    low = np.min(np.where(finite, weights, np.inf), axis=0)
    return (np.sum(finite, axis=0) >= 2) & (high - low > WEIGHT_SLACK)


def _joint_check(
    sided: list[KinkCheck], weights: list[Any], example: dict[str, float] | None
) -> KinkCheck:
    first = sided[0]
    shares = ", ".join(f"{c.input}: {_weight_text(w)}" for c, w in zip(sided, weights, strict=True))
    detail = (
        f"the inputs take different sides of one kink (the share of {first.side_a}: "
        f"{shares}): at a kink the gradient is one side's, or one mix of both, the same "
        "for every input; moving them together along the boundary, this backward's slope "
        "is not the forward's"
    )
    return KinkCheck(
        ", ".join(c.input for c in sided),
        first.boundary,
        first.side_a,
        first.side_b,
        sp.Tuple(*[c.value for c in sided]),
        sp.Tuple(*[c.derivative_a for c in sided]),
        sp.Tuple(*[c.derivative_b for c in sided]),
        "invalid",
        detail,
        None,
        example,
    )


def _weight_text(weight: Any) -> str:
    if isinstance(weight, (float, np.floating)):
        return f"{float(weight):.6g}"
    return sp.sstr(weight)


def _numpy_judged(
    checks: list[KinkCheck],
    forward_finite: np.ndarray,
    gradients: np.ndarray,
    symbols: list[sp.Symbol],
    points: np.ndarray,
) -> tuple[list[KinkCheck], KinkCheck | None]:
    """The checks with numpy's values on the boundary judged too: a value that is not
    finite where the forward is, or that no side gives, makes a check ``invalid``; and
    the joint check of numpy's weights (``None`` when they agree)."""
    judged, weights, sided = [], [], []
    for k, check in enumerate(checks):
        v = gradients[:, k]
        d_a = lambdify(symbols, check.derivative_a)(*points.T)
        d_b = lambdify(symbols, check.derivative_b)(*points.T)
        known = forward_finite & np.isfinite(d_a) & np.isfinite(d_b)
        slack = 1e-7 * (1 + np.abs(d_a) + np.abs(d_b))
        same = np.abs(d_a - d_b) <= slack
        with np.errstate(all="ignore"):
            weight = np.where(same, np.nan, (v - d_b) / np.where(same, 1.0, d_a - d_b))
        not_finite = known & ~np.isfinite(v)
        outside = (
            known
            & np.isfinite(v)
            & np.where(
                same,
                np.abs(v - d_a) > slack,
                (weight < -WEIGHT_SLACK) | (weight > 1 + WEIGHT_SLACK),
            )
        )
        if check.passed and (not_finite.any() or outside.any()):
            row = int(np.argmax(not_finite)) if not_finite.any() else int(np.argmax(outside))
            detail = (
                f"run with numpy, the backward gives {v[row]:.6g} here, where the forward "
                f"is finite; from {check.side_a} the derivative is {d_a[row]:.6g}, from "
                f"{check.side_b} {d_b[row]:.6g}"
            )
            if not_finite.any():
                detail += " (a step of the backward is undefined here: 0/0, ...)"
            else:
                detail += ": no side gives that value"
            check = dataclasses.replace(
                check,
                verdict="invalid",
                detail=detail,
                weight=None,
                counterexample=_point(symbols, points[row]),
            )
        judged.append(check)
        if check.passed and (known & ~same).any():
            sided.append(check)
            weights.append(np.where(known & ~same, weight, np.nan))
    joint = None
    if len(sided) >= 2:
        values = np.array(weights)
        bad = _apart(values)
        if bad.any():
            row = int(np.argmax(bad))
            joint = _joint_check(sided, list(values[:, row]), _point(symbols, points[row]))
    return judged, joint


def _numeric_mismatch(
    a: Any, b: Any, symbols: list[sp.Symbol], points: np.ndarray
) -> dict[str, float] | None:
    va, vb = lambdify(symbols, a)(*points.T), lambdify(symbols, b)(*points.T)
    bad = np.isfinite(va) & np.isfinite(vb) & (np.abs(va - vb) > TOLERANCE * (1 + np.abs(va)))
    return _point(symbols, points[int(np.argmax(bad))]) if bad.any() else None


def _point(symbols: list[sp.Symbol], point: np.ndarray) -> dict[str, float]:
    return {s.name: float(v) for s, v in zip(symbols, point, strict=True)}
