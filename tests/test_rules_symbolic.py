"""Every derivative rule of the registry, verified with sympy (one walk of the registry).

The walk is over ``all_rules()``: a rule whose record has no symbolic spec (no entry in
``autodiff_tutor.verify.symbolic.rules.RULE_SPECS``, which gathers them) fails, with a
message that says what to add. Elementwise rules are proved region by region on scalar symbols, with
their value at each kink judged against the one-sided derivatives; array rules are
proved element by element on object arrays of symbols.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from autodiff_tutor.rules.registry import Rule, all_rules
from autodiff_tutor.verify.symbolic.rules import (
    NUMERIC_ONLY,
    RULE_SPECS,
    ArrayRule,
    ScalarRule,
    check_rule,
    verify_rule,
)


@pytest.mark.parametrize("op", sorted(all_rules()))
def test_rule_verifies_symbolically(op: str) -> None:
    rule = all_rules()[op]
    if op in NUMERIC_ONLY:  # said in its record, with the reason; checked numerically
        from test_rules_numeric import CASES

        assert NUMERIC_ONLY[op] and CASES.get(op), f"{op}: numeric only needs a reason and cases"
        return
    if op not in RULE_SPECS:
        args = ", ".join(rule.inputs)
        pytest.fail(
            f"rule {op!r} is not in the symbolic walk: give its record "
            f"(@defvjp({op!r}, ...) in its family's module) either\n"
            f"    sympy=lambda sp, {args}: <the primitive on sympy scalars>,\n"
            f"for an elementwise rule, or\n"
            f"    symbolic=ArrayRule(lambda xp, {args}, **options: <the primal on arrays>, "
            f"[((<input shapes>), {{<options>}}), ...]),\n"
            f"for a reduction, linear-algebra or shape rule (inputs {rule.inputs}, "
            f"options {dict(rule.options)})"
        )
    report = verify_rule(op)
    assert report.regions, f"{op}: nothing was checked"
    assert report.passed, report.text()
    # a proof, not only sampled agreement, for every rule of the registry
    assert all(c.verdict == "proved" for c in report.regions), report.text()


def test_no_stale_specs() -> None:
    stale = sorted(set(RULE_SPECS) - set(all_rules()))
    assert not stale, f"RULE_SPECS has entries for ops that are no longer rules: {stale}"


def test_kink_conventions_are_judged() -> None:
    """The documented conventions appear in the reports, as valid choices."""
    abs_kink = verify_rule("abs").kinks[0]
    assert (abs_kink.boundary, abs_kink.value, abs_kink.verdict) == ("x = 0", 0, "subgradient")
    assert abs_kink.weight == sp.Rational(1, 2)
    for kink in verify_rule("maximum").kinks:  # ties split the gradient
        assert kink.verdict == "subgradient" and kink.weight == sp.Rational(1, 2)
    clip = verify_rule("clip")  # the bounds are inclusive: the gradient goes to x
    x_kinks = [k for k in clip.kinks if k.input == "x"]
    assert len(x_kinks) == 2
    assert all(k.verdict == "one-sided" and k.value == sp.Symbol("g", real=True) for k in x_kinks)


def _confirm(report, primal, rule_fn) -> None:
    """A counterexample of a failed region is a real difference: central differences of
    the primal at that point disagree with the (wrong) rule evaluated there."""
    failed = [c for c in report.regions if c.verdict == "differs"]
    assert failed, report.text()
    for check in failed:
        point = check.counterexample
        names = [n for n in point if n != "g"]
        values = np.array([point[n] for n in names])
        k = names.index(check.input)
        h = 1e-6
        up, down = values.copy(), values.copy()
        up[k] += h
        down[k] -= h
        numeric = point["g"] * (primal(*up) - primal(*down)) / (2 * h)
        wrong = rule_fn(point["g"], *values)[k] if len(names) > 1 else rule_fn(point["g"], *values)
        assert abs(numeric - check.expected_value) < 1e-5
        assert abs(wrong - check.got_value) < 1e-9
        assert abs(numeric - wrong) > 1e-3


def test_a_wrong_elementwise_rule_is_caught_with_a_real_counterexample() -> None:
    def wrong(g, x, y):  # maximum with the masks swapped
        return g * (x < y), g * (y < x)

    rule = Rule("maximum", wrong, ("x", "y"), {}, False, False, broadcasting=True)
    report = check_rule(rule, ScalarRule(lambda xp, x, y: xp.maximum(x, y)))
    assert not report.passed
    assert {c.region for c in report.regions if c.verdict == "differs"} == {"x < y", "x > y"}
    _confirm(report, np.maximum, lambda g, x, y: (g * (x < y), g * (y < x)))


def test_a_wrong_kink_value_is_caught() -> None:
    def wrong(g, xp, x):  # abs'(0) = 2: right away from 0, not a subgradient at 0
        return g * (xp.sign(x) + 2 * (x == 0))

    rule = Rule("abs", wrong, ("x",), {}, False, True)
    report = check_rule(rule, ScalarRule(lambda xp, x: xp.abs(x)))
    assert all(c.verdict == "proved" for c in report.regions)
    assert [k.verdict for k in report.kinks] == ["invalid"]
    assert not report.passed


def test_a_wrong_array_rule_is_caught() -> None:
    def wrong(g, x, axis=None, keepdims=False):  # the mean without the 1/n
        from autodiff_tutor.runtime.helpers import unreduce

        return unreduce(g, x, axis=axis, keepdims=keepdims)

    rule = Rule("mean", wrong, ("x",), {"axis": None, "keepdims": False}, False, False)
    spec = ArrayRule(lambda xp, x, **o: xp.mean(x, **o), [(((2, 3),), {"axis": 0})])
    report = check_rule(rule, spec)
    assert not report.passed
    assert {c.verdict for c in report.regions} == {"differs"}
    first = report.regions[0]  # d mean / d x0 = g0 / 2, the wrong rule says g0
    assert first.expected == sp.Symbol("g0", real=True) / 2
    assert float((first.expected - first.got).subs(sp.Symbol("g0", real=True), 1.0)) == -0.5
