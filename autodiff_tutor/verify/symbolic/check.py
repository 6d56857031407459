"""Compare a backward with the derivative of its forward, region by region.

A :class:`Problem` is a forward and a backward already translated to sympy: the
outputs as expressions of the input symbols, and one gradient expression per input
(a function of the inputs and of the output-gradient symbols, the *seeds*).
:func:`check_regions` finds the regions of the piecewise forward and backward, and
in each one compares ``sum_o seed_o * d output_o / d input`` with the backward's
expression: proved equal by simplification, or (reported as such) equal at every
sampled point, or different, with a concrete counterexample inside the region.

Where the problem can run the code with numpy (:mod:`~autodiff_tutor.verify.symbolic.runs`),
the backward is also run at points of each region: where the forward is finite, its
gradient must be finite and equal the forward's derivative. sympy reads the code over
the complex numbers (``sqrt(x)**2`` is ``x``); numpy computes nan for ``x < 0``.

>>> import sympy as sp
>>> from autodiff_tutor.verify.symbolic.algebra import FUNCTIONS, as_number
>>> x, g = sp.symbols("x g", real=True)
>>> relu = Problem("relu", (x,), (FUNCTIONS["maximum"](x, 0),), (g,), (g * as_number(x > 0),))
>>> report, _ = check_regions(relu)
>>> [(c.region, c.verdict) for c in report.regions]
[('x < 0', 'proved'), ('x > 0', 'proved')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from autodiff_tutor.verify.symbolic.regions import RegionMap, boundaries, lambdify, restrict
from autodiff_tutor.verify.symbolic.report import RegionCheck, SymbolicReport
from autodiff_tutor.verify.symbolic.runs import Run, RunFailed

__all__ = ["Problem", "Regions", "check_regions", "prove_equal", "find_counterexample"]

TOLERANCE = 1e-9


@dataclass
class Problem:
    """A forward and a backward as sympy expressions (see the module docstring).

    ``gradients[k]`` is ``None`` when the backward returns no gradient for input ``k``
    (then the derivative must be zero everywhere). ``assumptions`` restrict the inputs
    (``tl < tr``); ``notes`` are passed on to the report (what the translation assumed);
    ``run`` runs the code itself with numpy (``None`` where there is no code to run).
    """

    name: str
    inputs: tuple[sp.Symbol, ...]
    outputs: tuple[Any, ...]
    seeds: tuple[sp.Symbol, ...]
    gradients: tuple[Any, ...]
    assumptions: tuple[Any, ...] = ()
    notes: tuple[str, ...] = ()
    run: Run | None = None

    def symbols(self) -> list[sp.Symbol]:
        """Inputs, seeds, then any other free symbol, in a fixed order."""
        known = [*self.inputs, *self.seeds]
        extra: set[sp.Symbol] = set()
        for expr in [*self.outputs, *self.gradients]:
            if isinstance(expr, sp.Basic):
                extra |= expr.free_symbols - set(known)
        return known + sorted(extra, key=sp.default_sort_key)


@dataclass
class Regions:
    """What the region pass computed, for the kink pass: the map and, per region, the
    restricted outputs and expected derivatives (one per input); ``run`` is the
    problem's, or ``None`` once it failed."""

    map: RegionMap
    outputs: dict[tuple[int, ...], list[Any]]
    expected: dict[tuple[int, ...], list[Any]]
    run: Run | None = None


#: how many points of each region the code is run at with numpy
RUN_POINTS = 24


def run_code(
    problem: Problem, regions: Regions, report: SymbolicReport, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The problem's code run with numpy at ``points`` (see :class:`Run`), or ``None``
    when it cannot run (said once, in a note, and not tried again)."""
    if regions.run is None or not len(points):
        return None
    try:
        return regions.run.at([s.name for s in problem.symbols()], points)
    except RunFailed as why:
        regions.run = None
        report.notes.append(
            f"numpy could not run the code at a sample point ({why}): its values were "
            "read with sympy only"
        )
        return None


def numpy_mismatch(
    expected: Any,
    forward_finite: np.ndarray,
    values: np.ndarray,
    symbols: Sequence[sp.Symbol],
    points: np.ndarray,
) -> int | None:
    """The first point where the forward and the expected derivative are finite but the
    gradient numpy computed is not finite, or differs; ``None`` when there is none."""
    e = _values(expected, symbols, points)
    checked = forward_finite & np.isfinite(e)
    bad = checked & ~(np.abs(values - e) <= 1e-6 * (1 + np.abs(e)))  # nan is bad
    return int(np.argmax(bad)) if bad.any() else None


def prove_equal(a: Any, b: Any) -> bool:
    """Whether sympy proves ``a == b`` (expansion first, then ``simplify``).

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> prove_equal(sp.cosh(x) ** 2 - sp.sinh(x) ** 2, 1), prove_equal(x, 2 * x)
    (True, False)
    """
    difference = sp.expand(sp.sympify(a) - sp.sympify(b))
    if difference == 0:
        return True
    try:
        return bool(sp.simplify(difference) == 0)
    except (TypeError, ValueError, NotImplementedError):  # pragma: no cover - sympy limits
        return False


def _values(expr: Any, symbols: Sequence[sp.Symbol], points: np.ndarray) -> np.ndarray:
    return lambdify(symbols, sp.sympify(expr))(*points.T)


def find_counterexample(
    expected: Any, got: Any, symbols: Sequence[sp.Symbol], points: np.ndarray, inside: Any
) -> tuple[np.ndarray | None, int]:
    """A point (preferably with round coordinates) where ``expected != got``.

    ``points`` are candidates inside the region; ``inside(point)`` says whether a
    rounded point is still inside. Returns ``(point, number of equal points)``;
    ``point`` is ``None`` when they agree at every point.
    """
    e, g = _values(expected, symbols, points), _values(got, symbols, points)
    finite = np.isfinite(e) & np.isfinite(g)
    differs = finite & (np.abs(e - g) > TOLERANCE * (1 + np.abs(e)))
    if not differs.any():
        return None, int(finite.sum())
    # candidates: the differing points closest to the origin (small, readable numbers)
    size = np.max(np.abs(points), axis=1) + np.where(differs, 0.0, np.inf)
    candidates = points[np.argsort(size)[: int(min(differs.sum(), 40))]]
    for step in (0.5, 0.25, 0.1, 0.01):
        found = []
        for point in candidates:
            rounded = np.round(point / step) * step + 0.0  # + 0.0: no negative zeros
            if not inside(rounded):
                continue
            e1, g1 = _values(expected, symbols, rounded[None]), _values(got, symbols, rounded[None])
            if (
                np.isfinite(e1[0])
                and np.isfinite(g1[0])
                and abs(e1[0] - g1[0]) > 1e-6 * (1 + abs(e1[0]))
            ):
                found.append(rounded)
        if found:
            return min(found, key=lambda p: (np.max(np.abs(p)), np.sum(np.abs(p)))), 0
    return candidates[0], 0


def check_regions(
    problem: Problem, samples: int = 3000, seed: int = 0
) -> tuple[SymbolicReport, Regions]:
    """Compare the backward with the forward's derivative in every region (see module)."""
    symbols = problem.symbols()
    bounds = boundaries([*problem.outputs, *problem.gradients])
    regions = RegionMap(symbols, bounds, problem.assumptions, samples=samples, seed=seed)
    report = SymbolicReport(
        problem.name,
        tuple(s.name for s in problem.inputs),
        tuple(s.name for s in problem.seeds),
        outputs=tuple(problem.outputs),
        assumptions=tuple(sp.sstr(a) for a in problem.assumptions),
        notes=list(problem.notes),
    )
    computed = Regions(regions, {}, {}, problem.run)
    if not regions.regions:
        report.notes.append("no sampled point satisfies the assumptions: nothing was checked")
        return report, computed
    for pattern in regions.regions:
        signs = regions.signs_of(pattern)
        outputs = [restrict(o, signs) for o in problem.outputs]
        computed.outputs[pattern] = outputs
        computed.expected[pattern] = []
        description = regions.describe(pattern)
        conditions = tuple(regions.conditions(pattern))
        sample = _run_points(regions.witnesses(pattern))
        ran = run_code(problem, computed, report, sample)
        for k, x in enumerate(problem.inputs):
            expected = sp.Add(
                *[s * sp.diff(o, x) for s, o in zip(problem.seeds, outputs, strict=True)]
            )
            computed.expected[pattern].append(expected)
            gradient = problem.gradients[k]
            got = None if gradient is None else restrict(gradient, signs)
            check: tuple[Any, ...] = _compare(expected, got, symbols, regions, pattern)
            if ran is not None and check[0] in ("proved", "numeric"):
                check = _numpy_check(expected, ran[0], ran[1][:, k], symbols, sample) or check
            report.regions.append(
                RegionCheck(x.name, description, conditions, expected, got, *check)
            )
    return report, computed


def _run_points(witnesses: np.ndarray) -> np.ndarray:
    """Where a region's code is run: the first witnesses (random points) and the last
    (drawn close to a boundary)."""
    if len(witnesses) <= RUN_POINTS:
        return witnesses
    half = RUN_POINTS // 2
    return witnesses[[*range(half), *range(-half, 0)]]


def _numpy_check(
    expected: Any,
    forward_finite: np.ndarray,
    values: np.ndarray,
    symbols: list[sp.Symbol],
    points: np.ndarray,
) -> tuple[str, dict[str, float], float, float, str] | None:
    """A failing verdict where numpy's gradient is not what sympy read (``None`` if none)."""
    row = numpy_mismatch(expected, forward_finite, values, symbols, points)
    if row is None:
        return None
    e = float(_values(expected, symbols, points[row : row + 1])[0]) + 0.0
    g = float(values[row]) + 0.0
    example = {s.name: float(v) + 0.0 for s, v in zip(symbols, points[row], strict=True)}
    if not np.isfinite(g):
        detail = (
            f"run with numpy, the backward gives {g} here, where the forward is finite: a "
            "step of it is undefined there (0/0, the square root or log of a negative "
            "number...), which the formula sympy reads hides"
        )
        return "not finite", example, e, g, detail
    detail = "run with numpy, the backward gives another value than the formula sympy reads"
    return "differs", example, e, g, detail


def _compare(
    expected: Any, got: Any, symbols: list[sp.Symbol], regions: RegionMap, pattern: tuple
) -> tuple[str, dict[str, float] | None, float | None, float | None]:
    """verdict, counterexample, expected value and backward value there."""
    target = sp.Integer(0) if got is None else got
    if prove_equal(expected, target):
        return "proved", None, None, None
    witnesses = regions.witnesses(pattern)
    point, agreeing = find_counterexample(
        expected, target, symbols, witnesses, lambda p: regions.locate(p) == pattern
    )
    if point is None:
        return ("numeric" if agreeing else "undecided"), None, None, None
    e = float(_values(expected, symbols, point[None])[0]) + 0.0  # + 0.0: no negative zeros
    g = float(_values(target, symbols, point[None])[0]) + 0.0
    example = {s.name: float(v) for s, v in zip(symbols, point, strict=True)}
    return "differs", example, e, g
