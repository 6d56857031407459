"""The derivative rules of the registry, verified with sympy.

Each rule is run on sympy values, through its ordinary ``vjp`` (the registry's calling
convention, with ``xp`` = :data:`~autodiff_tutor.verify.symbolic_algebra.sympy_xp`),
and compared with sympy's derivative of the rule's primal:

- elementwise rules (:class:`ScalarRule`) on scalar symbols, region by region, with the
  kink analysis of :mod:`~autodiff_tutor.verify.symbolic_kinks` (so ``abs'(0)``,
  ties in ``maximum`` and the bounds of ``clip`` are shown and judged);
- reductions, linear algebra and shape rules (:class:`ArrayRule`) on small numpy
  object arrays of symbols, for several option settings (``axis``, ``keepdims``,
  index kinds...); ``max``/``min`` are checked in a region where the order of the
  elements is fixed (by substituting ordered representatives) and at ties.

:data:`RULE_SPECS` must name every registered rule: the registry walk of the tests
fails for a rule that is missing here.

>>> report = verify_rule("maximum")
>>> report.passed, report.region_names()
(True, ['x < y', 'x > y'])
>>> [k.detail for k in report.kinks]
['1/2 of x < y + 1/2 of x > y', '1/2 of x < y + 1/2 of x > y']
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from autodiff_tutor.rules.registry import Rule, all_rules
from autodiff_tutor.verify.symbolic_algebra import SymValue, sympy_xp, unwrap
from autodiff_tutor.verify.symbolic_check import Problem, check_regions, prove_equal
from autodiff_tutor.verify.symbolic_kinks import kink_checks
from autodiff_tutor.verify.symbolic_report import RegionCheck, SymbolicReport

__all__ = ["ArrayRule", "RULE_SPECS", "ScalarRule", "check_rule", "missing_rules", "verify_rule"]


@dataclass
class ScalarRule:
    """An elementwise rule: ``primal(xp, *inputs)`` on scalars.

    ``positive`` names inputs that are positive symbols (domains of log, sqrt,
    power's base); ``condition`` names inputs that are masks (``where``'s condition,
    passed as ``c > 0`` for a real symbol ``c``); ``assume(symbols)`` returns extra
    assumptions (``a_min < a_max``).
    """

    primal: Callable[..., Any]
    positive: tuple[str, ...] = ()
    condition: tuple[str, ...] = ()
    assume: Callable[[dict[str, sp.Symbol]], list[Any]] | None = None


@dataclass
class ArrayRule:
    """A rule on arrays: ``primal(xp, *inputs, **options)`` on object arrays of symbols.

    ``cases`` lists ``(input shapes, options)``; a shape that is a list of shapes is a
    sequence input (``concatenate``). ``ordered`` marks max/min: the inputs are then
    ordered representatives and ties are checked as subgradients.
    """

    primal: Callable[..., Any]
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)
    ordered: bool = False
    at_zero: bool = False


def _u(name: str) -> ScalarRule:
    return ScalarRule(lambda xp, x: getattr(xp, name)(x))


def _b(name: str) -> ScalarRule:
    return ScalarRule(lambda xp, x, y: getattr(xp, name)(x, y))


REDUCTION_CASES = [
    (((2, 3),), {}),
    (((2, 3),), {"axis": 0}),
    (((2, 3),), {"axis": -1, "keepdims": True}),
    (((2, 2, 2),), {"axis": (0, 2)}),
    (((3,),), {"keepdims": True}),
]

RULE_SPECS: dict[str, ScalarRule | ArrayRule] = {
    "add": ScalarRule(lambda xp, x, y: x + y),
    "subtract": ScalarRule(lambda xp, x, y: x - y),
    "multiply": ScalarRule(lambda xp, x, y: x * y),
    "divide": ScalarRule(lambda xp, x, y: x / y),
    "power": ScalarRule(lambda xp, x, y: x**y, positive=("x",)),
    "negative": ScalarRule(lambda xp, x: -x),
    "positive": ScalarRule(lambda xp, x: +x),
    "square": _u("square"),
    "exp": _u("exp"),
    "expm1": _u("expm1"),
    "log": ScalarRule(lambda xp, x: xp.log(x), positive=("x",)),
    "log1p": ScalarRule(lambda xp, x: xp.log1p(x), positive=("x",)),
    "sqrt": ScalarRule(lambda xp, x: xp.sqrt(x), positive=("x",)),
    "sin": _u("sin"),
    "cos": _u("cos"),
    "tan": _u("tan"),
    "arcsin": _u("arcsin"),
    "arccos": _u("arccos"),
    "arctan": _u("arctan"),
    "sinh": _u("sinh"),
    "cosh": _u("cosh"),
    "tanh": _u("tanh"),
    "abs": _u("abs"),
    "maximum": _b("maximum"),
    "minimum": _b("minimum"),
    "clip": ScalarRule(
        lambda xp, x, a_min, a_max: xp.clip(x, a_min, a_max),
        assume=lambda s: [s["a_min"] < s["a_max"]],
    ),
    "where": ScalarRule(lambda xp, c, x, y: xp.where(c, x, y), condition=("condition",)),
    "astype": ScalarRule(lambda xp, x: x),
    "copy": ScalarRule(lambda xp, x: x),
    "sum": ArrayRule(lambda xp, x, **o: xp.sum(x, **o), REDUCTION_CASES),
    "mean": ArrayRule(lambda xp, x, **o: xp.mean(x, **o), REDUCTION_CASES),
    "prod": ArrayRule(lambda xp, x, **o: xp.prod(x, **o), REDUCTION_CASES[:3]),
    "max": ArrayRule(lambda xp, x, **o: xp.max(x, **o), REDUCTION_CASES[:3], ordered=True),
    "min": ArrayRule(lambda xp, x, **o: xp.min(x, **o), REDUCTION_CASES[:3], ordered=True),
    "norm": ArrayRule(
        lambda xp, x, ord=None, **o: xp.sqrt(xp.sum(x * x, **o)),
        [(((3,),), {}), (((2, 3),), {"axis": -1}), (((2, 2),), {"axis": 0, "keepdims": True})],
        at_zero=True,
    ),
    "matmul": ArrayRule(
        lambda xp, x, y: xp.matmul(x, y),
        [
            (s, {})
            for s in [
                ((2, 3), (3, 2)),
                ((2, 3), (3,)),
                ((3,), (3, 2)),
                ((3,), (3,)),
                ((2, 1, 2), (2, 2)),
            ]
        ],
    ),
    "dot": ArrayRule(
        lambda xp, x, y: xp.dot(x, y),
        [(s, {}) for s in [((2, 3), (3, 2)), ((2, 3), (3,)), ((3,), (3,))]],
    ),
    "reshape": ArrayRule(
        lambda xp, x, shape=None: xp.reshape(x, shape), [(((2, 3),), {"shape": (3, 2)})]
    ),
    "squeeze": ArrayRule(lambda xp, x, axis=None: xp.squeeze(x, axis), [(((1, 3),), {"axis": 0})]),
    "expand_dims": ArrayRule(
        lambda xp, x, axis=None: xp.expand_dims(x, axis), [(((3,),), {"axis": -1})]
    ),
    "transpose": ArrayRule(
        lambda xp, x, axes=None: xp.transpose(x, axes),
        [(((2, 3),), {}), (((2, 1, 3),), {"axes": (2, 0, 1)})],
    ),
    "concatenate": ArrayRule(
        lambda xp, xs, axis=0: xp.concatenate(xs, axis=axis),
        [(([(2, 2), (1, 2)],), {"axis": 0}), (([(2, 1), (2, 2)],), {"axis": -1})],
    ),
    "stack": ArrayRule(
        lambda xp, xs, axis=0: xp.stack(xs, axis=axis), [(([(2,), (2,)],), {"axis": 1})]
    ),
    "getitem": ArrayRule(
        lambda xp, x, index=None: x[index],
        [
            (((3, 2),), {"index": 1}),
            (((3, 2),), {"index": (slice(None), 0)}),
            (((3, 2),), {"index": (Ellipsis, None)}),
            (((3,),), {"index": np.array([0, 2, 0])}),
            (((3,),), {"index": np.array([True, False, True])}),
        ],
    ),
}


def missing_rules() -> list[str]:
    """Registered rules with no entry in :data:`RULE_SPECS` (the walk must find none).

    >>> missing_rules()
    []
    """
    return sorted(set(all_rules()) - set(RULE_SPECS))


def verify_rule(op: str, samples: int = 1500) -> SymbolicReport:
    """Verify the registered rule of ``op`` with sympy (see the module docstring).

    >>> verify_rule("tanh").passed
    True
    """
    rule = all_rules()[op]
    spec = RULE_SPECS.get(op)
    if spec is None:
        raise KeyError(
            f"rule {op!r} has no symbolic spec: add RULE_SPECS[{op!r}] = "
            f"ScalarRule(lambda xp, {', '.join(rule.inputs)}: ...) (elementwise) or "
            f"ArrayRule(lambda xp, {', '.join(rule.inputs)}, **options: ..., "
            f"[(shapes, options), ...]) in autodiff_tutor/verify/symbolic_rules.py"
        )
    return check_rule(rule, spec, samples)


def check_rule(rule: Rule, spec: ScalarRule | ArrayRule, samples: int = 1500) -> SymbolicReport:
    """Verify any :class:`~autodiff_tutor.rules.registry.Rule` against a spec (a rule
    being written, or a deliberately wrong one in a test).

    >>> from autodiff_tutor.rules.registry import Rule
    >>> wrong = Rule("sin", lambda g, xp, x: -g * xp.cos(x), ("x",), {}, False, True)
    >>> check_rule(wrong, ScalarRule(lambda xp, x: xp.sin(x))).regions[0].verdict
    'differs'
    """
    if isinstance(spec, ScalarRule):
        return _verify_scalar(rule, spec, samples)
    return _verify_array(rule, spec)


def _call(rule: Rule, g: Any, out: Any, inputs: list[Any], options: dict[str, Any]) -> list[Any]:
    special = [g]
    if rule.uses_out:
        special.append(out)
    if rule.uses_xp:
        special.append(sympy_xp)
    result = rule.vjp(*special, *inputs, **options)
    grads = [result] if len(rule.inputs) == 1 else list(result)
    return [list(grads[0])] if rule.sequence else grads


def _verify_scalar(rule: Rule, spec: ScalarRule, samples: int) -> SymbolicReport:
    symbols = {
        name: sp.Symbol(name, real=True, **({"positive": True} if name in spec.positive else {}))
        for name in rule.inputs
    }
    values = [
        SymValue(symbols[n] > 0) if n in spec.condition else SymValue(symbols[n])
        for n in rule.inputs
    ]
    g = sp.Symbol("g", real=True)
    out = spec.primal(sympy_xp, *values)
    grads = unwrap(_call(rule, SymValue(g), out, values, {}))
    assumptions = tuple(spec.assume(symbols)) if spec.assume else ()
    notes = (f"convention: {rule.convention}",) if rule.convention else ()
    problem = Problem(
        rule.op, tuple(symbols.values()), (unwrap(out),), (g,), tuple(grads), assumptions, notes
    )
    report, regions = check_regions(problem, samples=samples)
    report.kinks = kink_checks(problem, regions)
    return report


# --- rules on arrays -------------------------------------------------------------------


def _symbol_array(prefix: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    names = [f"{prefix}{i}" for i in range(n)]
    array = np.empty(n, dtype=object)
    array[:] = [sp.Symbol(name, real=True) for name in names]
    return array.reshape(shape)


def _ordered(symbols: np.ndarray, ties: bool, axis: Any, largest: bool) -> dict[sp.Symbol, Any]:
    """Representatives that fix the order of all elements: ``m``, ``m - p1``, ...

    With ``ties``, the two largest (or smallest) elements of every reduced slice are
    made equal.
    """
    flat = list(symbols.reshape(-1))
    m = sp.Symbol("m", real=True)
    gaps = [sp.Symbol(f"p{i}", positive=True) for i in range(len(flat))]
    order = np.random.default_rng(len(flat)).permutation(len(flat))
    rank = np.empty(len(flat), dtype=int)
    rank[order] = np.arange(len(flat))
    values = {flat[i]: m - sp.Add(*gaps[1 : rank[i] + 1]) for i in range(len(flat))}
    if ties:
        axes = tuple(range(symbols.ndim)) if axis is None else np.atleast_1d(axis)
        axes = tuple(int(a) % symbols.ndim for a in axes)
        kept = [a for a in range(symbols.ndim) if a not in axes]
        slices = np.transpose(symbols, kept + list(axes)).reshape(
            int(np.prod([symbols.shape[a] for a in kept])), -1
        )
        for row in slices:
            ranked = sorted(row, key=lambda v: rank[flat.index(v)])
            first, second = ranked[:2] if largest else ranked[::-1][:2]
            values[second] = values[first]
    return values


def _verify_array(rule: Rule, spec: ArrayRule) -> SymbolicReport:
    report = SymbolicReport(rule.op, rule.inputs, ("g",))
    if rule.convention:
        report.notes.append(f"convention: {rule.convention}")
    variants = [False, True] if spec.ordered else [False]
    for (shapes, options), ties in itertools.product(spec.cases, variants):
        label = ", ".join(f"{k}={v!r}" for k, v in options.items()) or "defaults"
        label = f"shapes {shapes}, {label}" + (", with a tie" if ties else "")
        try:
            report.regions += _array_case(rule, spec, shapes, options, ties, label)
        except Exception as exc:  # a rule that crashes on a case fails that case
            report.regions.append(
                RegionCheck("*", label, (), None, None, "error", None, None, None)
            )
            report.notes.append(f"{label}: {type(exc).__name__}: {exc}")
    return report


def _array_case(
    rule: Rule,
    spec: ArrayRule,
    shapes: tuple[Any, ...],
    options: dict[str, Any],
    ties: bool,
    label: str,
) -> list[RegionCheck]:
    inputs: list[Any] = []
    for k, shape in enumerate(shapes):
        prefix = chr(ord("a") + k) if len(shapes) > 1 else "x"
        if isinstance(shape, list):
            inputs.append([_symbol_array(f"{prefix}{j}_", s) for j, s in enumerate(shape)])
        else:
            inputs.append(_symbol_array(prefix, shape))
    leaves = [v if isinstance(v, list) else [v] for v in inputs]
    substitution: dict[sp.Symbol, Any] = {}
    if spec.ordered:  # numpy's max compares elements: give it ordered representatives
        largest = _picks(spec) is sp.Max
        substitution = _ordered(inputs[0], ties, options.get("axis"), largest)
        ordered = _subs(inputs[0], substitution)
        out = spec.primal(sympy_xp, ordered, **options)
        g = _symbol_array("g", np.shape(out))
        loss = _max_min_loss(spec, inputs[0], options, g)
        inputs = [ordered]
    else:
        out = spec.primal(sympy_xp, *inputs, **options)
        g = _symbol_array("g", np.shape(out))
        loss = sp.Add(*np.asarray(g * out).reshape(-1))
    grads = _call(rule, g if np.ndim(out) else g[()], out, inputs, options)
    checks = []
    for k, name in enumerate(rule.inputs):
        got_leaves = grads[k] if rule.sequence else [grads[k]]
        for leaf, got in zip(leaves[k], got_leaves, strict=True):
            got = np.asarray(got, dtype=object)
            if got.shape != leaf.shape:
                checks.append(RegionCheck(name, label, (), None, None, "differs"))
                continue
            for index in np.ndindex(leaf.shape):
                expected = sp.diff(loss, leaf[index]).subs(substitution)
                got_i = sp.sympify(got[index])
                if expected.has(sp.Heaviside):  # a tied element: judged by _tie_check
                    continue
                verdict = "proved" if prove_equal(expected, got_i) else "differs"
                checks.append(RegionCheck(f"{leaf[index]}", label, (), expected, got_i, verdict))
    if spec.ordered and ties:
        checks.append(_tie_check(rule, grads[0], inputs[0], out, options, label))
    if spec.at_zero:
        checks.append(_zero_check(rule, spec, shapes, options, label))
    return checks


def _subs(array: np.ndarray, values: dict[sp.Symbol, Any]) -> np.ndarray:
    return np.vectorize(lambda v: v.subs(values), otypes=[object])(array)


def _picks(spec: ArrayRule) -> Any:
    """sympy's Max or Min, whichever the primal computes."""
    return sp.Max if spec.primal(sympy_xp, np.array([1, 2]), axis=None) == 2 else sp.Min


def _max_min_loss(spec: ArrayRule, x: np.ndarray, options: dict[str, Any], g: np.ndarray) -> Any:
    """sum(g * max(x)) with sympy's Max/Min, for the expected derivative."""
    pick = _picks(spec)
    reducer = np.frompyfunc(lambda a, b: pick(a, b), 2, 1)
    axis, keepdims = options.get("axis"), options.get("keepdims", False)
    if axis is None:
        out = pick(*x.reshape(-1))
        out = np.full([1] * x.ndim, out, dtype=object) if keepdims else out
    else:
        out = reducer.reduce(x, axis=axis, keepdims=keepdims)
    return sp.Add(*np.asarray(g * out).reshape(-1))


def _tie_check(
    rule: Rule, grad: Any, x: np.ndarray, out: Any, options: dict[str, Any], label: str
) -> RegionCheck:
    """At a tie the gradient must be a convex combination of the tied one-hot gradients:
    non-negative shares of ``g`` on the tied elements, zero elsewhere, summing to ``g``."""
    axis, keepdims = options.get("axis"), options.get("keepdims", False)
    grad = np.asarray(grad, dtype=object)
    best = np.asarray(out, dtype=object)
    if axis is not None and not keepdims:
        best = np.expand_dims(best, axis)
    hit = np.vectorize(lambda a, b: bool(sp.simplify(a - b) == 0), otypes=[bool])(x, best)
    g = sp.Symbol("g", real=True)
    shares = np.vectorize(
        lambda v: sp.simplify(v.subs({s: g for s in v.free_symbols if s.name.startswith("g")}) / g),
        otypes=[object],
    )(grad)
    ok = all(s == 0 for s in shares[~hit]) and all(s.is_number and s >= 0 for s in shares[hit])
    total = np.sum(np.where(hit, shares, 0), axis=axis, keepdims=True)
    ok = ok and all(sp.simplify(t - 1) == 0 for t in np.asarray(total).reshape(-1))
    verdict = "proved" if ok else "differs"
    return RegionCheck(
        "ties", label, (), "convex combination of tied", list(shares.reshape(-1)), verdict
    )


def _zero_check(
    rule: Rule, spec: ArrayRule, shapes: tuple[Any, ...], options: dict[str, Any], label: str
) -> RegionCheck:
    """At x = 0 (the norm's kink) the gradient must lie in the subdifferential: the unit
    ball times g; the rule's convention gives 0."""
    x = np.zeros(shapes[0], dtype=object)
    x[...] = sp.Integer(0)
    out = spec.primal(sympy_xp, x, **options)
    g = np.ones(np.shape(out), dtype=object) if np.ndim(out) else sp.Integer(1)
    grad = np.asarray(_call(rule, g, out, [x], options)[0], dtype=object)
    size = sp.sqrt(sp.Add(*[v * v for v in grad.reshape(-1)]))
    verdict = "proved" if bool(size <= 1) else "differs"
    return RegionCheck("x = 0", label, (), "|grad| <= 1", list(grad.reshape(-1)), verdict)
