"""The derivative rules of the registry, verified with sympy.

Each rule is run on sympy values, through its ordinary ``vjp`` (the registry's calling
convention, with ``xp`` = :data:`~autodiff_tutor.verify.symbolic.algebra.sympy_xp`),
and compared with sympy's derivative of the rule's primal:

- elementwise rules (:class:`ScalarRule`) on scalar symbols, region by region, with the
  kink analysis of :mod:`~autodiff_tutor.verify.symbolic.kinks` (so ``abs'(0)``,
  ties in ``maximum`` and the bounds of ``clip`` are shown and judged);
- reductions, linear algebra and shape rules (:class:`ArrayRule`) on small numpy
  object arrays of symbols, for several option settings (``axis``, ``keepdims``,
  index kinds...); ``max``/``min`` are checked in a region where the order of the
  elements is fixed (by substituting ordered representatives) and at ties.

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

import sympy as sp

from autodiff_tutor.rules.record import Rule
from autodiff_tutor.rules.registry import all_rules
from autodiff_tutor.rules.symbolic_spec import ArrayRule, NumericOnly, ScalarRule
from autodiff_tutor.verify.symbolic.check import Problem
from autodiff_tutor.verify.symbolic.functions import verify_problem
from autodiff_tutor.verify.symbolic.report import SymbolicReport
from autodiff_tutor.verify.symbolic.rules_arrays import call_rule, verify_array
from autodiff_tutor.verify.symbolic.values import SymValue, sympy_xp, unwrap

__all__ = [
    "ArrayRule",
    "NUMERIC_ONLY",
    "RULE_SPECS",
    "ScalarRule",
    "check_rule",
    "missing_rules",
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
