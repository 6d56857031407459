"""The derivative rules of the registry, verified with sympy.

Each rule is run on sympy values, through its ordinary ``vjp`` (the registry's calling
convention, with ``xp`` = :data:`~autodiff_tutor.verify.symbolic.algebra.sympy_xp`),
and compared with sympy's derivative of the rule's primal:

- elementwise rules (:class:`ScalarRule`) on scalar symbols, region by region, with the
  kink analysis of :mod:`~autodiff_tutor.verify.symbolic.kinks` (so ``abs'(0)``,
  ties in ``maximum`` and the bounds of ``clip`` are shown and judged);
- reductions, linear algebra and shape rules (:class:`ArrayRule`) on small numpy
  object arrays of symbols, for several option settings (``axis``, ``keepdims``,
  index kinds...): every element of the rule's gradient against sympy's derivative
  of ``sum(g * primal(inputs))``. ``max``/``min`` get ordered representatives
  (``m``, ``m - p1``, ... with positive gaps) so numpy can compare the elements, and
  a tie in every reduced slice, where the gradient must be a convex combination of
  the tied elements' one-hot gradients.

:data:`RULE_SPECS` gathers the records' ``symbolic`` facts (see
:mod:`autodiff_tutor.rules.record`); the registry walk of the tests fails for a rule
whose record has none.

>>> report = verify_rule("maximum")
>>> report.passed, report.region_names()
(True, ['x < y', 'x > y'])
>>> [k.detail for k in report.kinks]
['1/2 of x < y + 1/2 of x > y', '1/2 of x < y + 1/2 of x > y']
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import sympy as sp

from autodiff_tutor.rules.record import Rule
from autodiff_tutor.rules.registry import all_rules
from autodiff_tutor.rules.symbolic_spec import ArrayRule, Fixed, NumericOnly, ScalarRule
from autodiff_tutor.verify.symbolic.algebra import SymValue, sympy_xp, unwrap
from autodiff_tutor.verify.symbolic.check import Problem, prove_equal
from autodiff_tutor.verify.symbolic.functions import verify_problem
from autodiff_tutor.verify.symbolic.report import RegionCheck, SymbolicReport

__all__ = [
    "ArrayRule",
    "Fixed",
    "NUMERIC_ONLY",
    "RULE_SPECS",
    "ScalarRule",
    "call_rule",
    "check_rule",
    "missing_rules",
    "verify_array",
    "verify_rule",
]


RULE_SPECS: dict[str, ScalarRule | ArrayRule] = {
    op: rule.symbolic
    for op, rule in all_rules().items()
    if rule.symbolic is not None and not isinstance(rule.symbolic, NumericOnly)
}
"""How each rule is checked: the ``symbolic`` fact of its record (elementwise rules with a
sympy form are checked on scalars by default)."""


NUMERIC_ONLY: dict[str, str] = {
    op: rule.symbolic.reason
    for op, rule in all_rules().items()
    if isinstance(rule.symbolic, NumericOnly)
}
"""Rules checked numerically only, with the reason their record gives (``sort``...)."""


def missing_rules() -> list[str]:
    """Registered rules whose record has no symbolic spec (the walk must find none).

    >>> "tanh" in missing_rules()
    False
    """
    return sorted(op for op, rule in all_rules().items() if rule.symbolic is None)


def verify_rule(op: str, samples: int = 1500) -> SymbolicReport:
    """Verify the registered rule of ``op`` with sympy (see the module docstring).

    >>> verify_rule("tanh").passed
    True
    """
    rule = all_rules()[op]
    spec = rule.symbolic
    if isinstance(spec, NumericOnly):
        raise KeyError(f"rule {op!r} is checked numerically only: {spec.reason}")
    if spec is None:
        raise KeyError(
            f"rule {op!r} has no symbolic spec: give its record (@defvjp({op!r}, ...)) "
            f"sympy=lambda sp, {', '.join(rule.inputs)}: ... (elementwise) or "
            f"symbolic=ArrayRule(lambda xp, {', '.join(rule.inputs)}, **options: ..., "
            f"[(shapes, options), ...])"
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
    return verify_array(rule, spec)


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
    grads = unwrap(call_rule(rule, SymValue(g), out, values, {}))
    assumptions = tuple(spec.assume(symbols)) if spec.assume else ()
    notes = (f"convention: {rule.convention}",) if rule.convention else ()
    problem = Problem(
        rule.op, tuple(symbols.values()), (unwrap(out),), (g,), tuple(grads), assumptions, notes
    )
    return verify_problem(problem, samples=samples)


def call_rule(
    rule: Rule, g: Any, out: Any, inputs: list[Any], options: dict[str, Any]
) -> list[Any]:
    """Call ``rule.vjp`` by the registry's convention with ``xp = sympy_xp``; one entry
    per input (a list for a sequence input)."""
    special = [g]
    if rule.uses_out:
        special.append(out)
    if rule.uses_xp:
        special.append(sympy_xp)
    result = rule.vjp(*special, *inputs, **options)
    grads = [result] if len(rule.inputs) == 1 else list(result)
    return [list(grads[0])] if rule.sequence else grads


def _symbol_array(prefix: str, shape: tuple[int, ...]) -> np.ndarray:
    symbols = [sp.Symbol(f"{prefix}{i}", real=True) for i in range(int(np.prod(shape)))]
    return np.array(symbols, dtype=object).reshape(shape)


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


def verify_array(rule: Rule, spec: ArrayRule) -> SymbolicReport:
    """Verify an array rule (see the module docstring) case by case.

    >>> from autodiff_tutor.rules.registry import lookup
    >>> report = verify_array(lookup("sum"), ArrayRule(lambda xp, x, **o: xp.sum(x, **o),
    ...                                               [(((2,),), {"axis": 0})]))
    >>> [(c.input, c.expected, c.got, c.verdict) for c in report.regions]
    [('x0', g0, g0, 'proved'), ('x1', g0, g0, 'proved')]
    """
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
        if isinstance(shape, Fixed):
            inputs.append(shape.value)
        elif isinstance(shape, list):
            inputs.append([_symbol_array(f"{prefix}{j}_", s) for j, s in enumerate(shape)])
        else:
            inputs.append(_symbol_array(prefix, shape))
    leaves = [
        [] if isinstance(s, Fixed) else v if isinstance(v, list) else [v]
        for v, s in zip(inputs, shapes, strict=True)
    ]
    substitution: dict[sp.Symbol, Any] = {}
    if spec.ordered:  # numpy's max compares elements: give it ordered representatives
        largest = _picks(spec) is sp.Max
        substitution = _ordered(inputs[0], ties, options.get("axis"), largest)
        ordered = _subs(inputs[0], substitution)
        out = spec.primal(sympy_xp, ordered, **options)
        g, _ = _seed_and_loss(out)
        loss = _max_min_loss(spec, inputs[0], options, g)
        inputs = [ordered]
    elif spec.wrap:  # run on SymValue elements, compare plain sympy
        wrapped = [_wrap(v) for v in inputs]
        out = _unwrap(spec.primal(sympy_xp, *wrapped, **options))
        g, loss = _seed_and_loss(out)
        grads = _unwrap(call_rule(rule, _wrap(g), _wrap(out), wrapped, options))
    else:
        out = spec.primal(sympy_xp, *inputs, **options)
        g, loss = _seed_and_loss(out)
    if not spec.wrap:
        grads = call_rule(rule, g, out, inputs, options)
    checks = []
    for k, name in enumerate(rule.inputs):
        if isinstance(shapes[k], Fixed):
            verdict = "proved" if grads[k] is None else "differs"
            checks.append(RegionCheck(name, label, (), None, grads[k], verdict))
            continue
        if grads[k] is None:  # no gradient: the derivative must be zero everywhere
            grads[k] = (
                [np.zeros(np.shape(v), dtype=int) for v in inputs[k]]
                if isinstance(inputs[k], list)
                else np.zeros(np.shape(inputs[k]), dtype=int)
            )
        got_leaves = list(grads[k]) if isinstance(inputs[k], list) else [grads[k]]
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


def _seed_and_loss(out: Any) -> tuple[Any, Any]:
    """Symbols ``g`` shaped like ``out`` (a list of arrays for a list output; a scalar
    symbol for a 0-d output) and ``sum(g * out)``."""
    if isinstance(out, list):
        pieces = [_seed_and_loss(o) for o in out]
        seeds = [p[0] for p in pieces]
        for j, seed in enumerate(seeds):  # distinct names per list element
            rename = {s: sp.Symbol(f"g{j}_{s.name[1:]}", real=True) for s in np.ravel(seed)}
            seeds[j] = _subs(np.asarray(seed, dtype=object), rename)
            seeds[j] = seeds[j] if np.ndim(out[j]) else seeds[j][()]
        loss = sp.Add(
            *[sp.Add(*np.ravel(np.asarray(s * o))) for s, o in zip(seeds, out, strict=True)]
        )
        return seeds, loss
    g = _symbol_array("g", np.shape(out))
    loss = sp.Add(*np.asarray(g * out).reshape(-1))
    return (g if np.ndim(out) else g[()]), loss


def _wrap(value: Any) -> Any:
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    if isinstance(value, np.ndarray):
        return np.vectorize(SymValue, otypes=[object])(value) if value.size else value
    return SymValue(value) if isinstance(value, sp.Basic) else value


def _unwrap(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.vectorize(unwrap, otypes=[object])(value) if value.size else value
    return unwrap(value)


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
    grad = np.asarray(call_rule(rule, g, out, [x], options)[0], dtype=object)
    size = sp.sqrt(sp.Add(*[v * v for v in grad.reshape(-1)]))
    verdict = "proved" if bool(size <= 1) else "differs"
    return RegionCheck("x = 0", label, (), "|grad| <= 1", list(grad.reshape(-1)), verdict)
