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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from autodiff_tutor.rules.registry import Rule, all_rules
from autodiff_tutor.runtime import helpers
from autodiff_tutor.runtime.backend import cast_like
from autodiff_tutor.verify.symbolic_check import Problem, check_regions
from autodiff_tutor.verify.symbolic_kinks import kink_checks
from autodiff_tutor.verify.symbolic_report import SymbolicReport
from autodiff_tutor.verify.symbolic_rules_arrays import ArrayRule, Fixed, call_rule, verify_array
from autodiff_tutor.verify.symbolic_values import SymValue, sympy_xp, unwrap

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


def _u(name: str) -> ScalarRule:
    return ScalarRule(lambda xp, x: getattr(xp, name)(x))


def _b(name: str) -> ScalarRule:
    return ScalarRule(lambda xp, x, y: getattr(xp, name)(x, y))


def _setitem(xp: Any, x: Any, value: Any, index: Any = None) -> Any:
    y = x.copy()
    y[index] = value
    return y


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
    "setitem": ArrayRule(
        _setitem,
        [
            (((3, 2), (2,)), {"index": 1}),
            (((3, 2), ()), {"index": (slice(None), 0)}),
            (((3,), (2,)), {"index": np.array([True, False, True])}),
        ],
    ),
    "list_append": ArrayRule(
        lambda xp, xs, x: xs + [x], [(([(2,), (1, 2)], (2,)), {}), (([], (3,)), {})]
    ),
    "make_list": ArrayRule(lambda xp, xs: list(xs), [(([(2,), (2, 1)],), {})]),
    # --- the runtime helpers of generated code, as primitives (second derivatives) ---
    "unbroadcast": ArrayRule(
        lambda xp, grad, x: helpers.unbroadcast(grad, x),
        [(((2, 3), (3,)), {}), (((2, 2), (2, 1)), {})],
    ),
    "unreduce": ArrayRule(
        lambda xp, grad, x, **o: helpers.unreduce(grad, x, **o),
        [
            (((2,), (2, 3)), {"axis": 1}),
            (((), (2, 2)), {}),
            (((1, 2), (3, 2)), {"axis": 0, "keepdims": True}),
        ],
    ),
    "cast_like": ArrayRule(lambda xp, grad, x: cast_like(grad, x), [(((3,), (3,)), {})]),
    "untranspose": ArrayRule(
        lambda xp, grad, **o: helpers.untranspose(grad, **o),
        [(((3, 2),), {"axes": (1, 0)}), (((2, 2, 3),), {"axes": (2, 0, 1)})],
    ),
    "matmul_dx": ArrayRule(
        lambda xp, grad, x, y: helpers.matmul_dx(grad, x, y),
        [(((2, 2), (2, 3), (3, 2)), {}), (((2,), (2, 3), (3,)), {})],
    ),
    "matmul_dy": ArrayRule(
        lambda xp, grad, x, y: helpers.matmul_dy(grad, x, y),
        [(((2, 2), (2, 3), (3, 2)), {}), (((2,), (3,), (3, 2)), {})],
    ),
    "dot_dx": ArrayRule(
        lambda xp, grad, x, y: helpers.dot_dx(grad, x, y), [(((2, 2), (2, 3), (3, 2)), {})]
    ),
    "dot_dy": ArrayRule(
        lambda xp, grad, x, y: helpers.dot_dy(grad, x, y), [(((2, 2), (2, 3), (3, 2)), {})]
    ),
    "scatter": ArrayRule(
        lambda xp, grad, x, index=None: helpers.scatter(grad, x, index),
        [(((2,), (3, 2)), {"index": 1}), (((3,), (3,)), {"index": np.array([0, 2, 0])})],
    ),
    "overwritten": ArrayRule(
        lambda xp, grad, index=None: helpers.overwritten(grad, index),
        [(((3, 2),), {"index": slice(1, None)})],
    ),
    "assign_at": ArrayRule(
        lambda xp, x, index, value: helpers.assign_at(x, index, value),
        [(((3, 2), Fixed(1), (2,)), {}), (((3, 2), Fixed((slice(None), 0)), ()), {})],
    ),
    "split_like": ArrayRule(
        lambda xp, grad, xs, **o: helpers.split_like(grad, xs, **o),
        [(((3, 2), [(1, 2), (2, 2)]), {"axis": 0})],
    ),
    "unstack": ArrayRule(
        lambda xp, grad, **o: helpers.unstack(grad, **o), [(((2, 3),), {"axis": -1})]
    ),
    "add_lists": ArrayRule(
        lambda xp, xs, ys: helpers.add_lists(xs, ys), [(([(2,), (1, 2)], [(2,), (1, 2)]), {})]
    ),
    "prod_others": ArrayRule(
        lambda xp, x, **o: helpers.prod_others(x, **o),
        [(((3,),), {}), (((2, 3),), {"axis": 1})],
        wrap=True,
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

    >>> "tanh" in missing_rules()
    False
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
    report, regions = check_regions(problem, samples=samples)
    report.kinks = kink_checks(problem, regions)
    return report
