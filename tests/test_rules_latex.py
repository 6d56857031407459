"""Every rule the conventions page lists has a LaTeX formula, from its record: written
there (``latex=``) or made from its sympy form. Whether MathJax typesets each one is
checked in the browser (tests/browser/test_book_pages.py)."""

from __future__ import annotations

import pytest
import sympy as sp

from autodiff_tutor.rules.registry import all_rules
from autodiff_tutor.verify.symbolic.algebra import KIT
from autodiff_tutor.verify.symbolic.latex import rule_latex

SHOWN = sorted(op for op, rule in all_rules().items() if rule.convention)


def _balanced(text: str) -> bool:
    depth = 0
    for position, char in enumerate(text):
        if text[position - 1 : position] == "\\":
            continue  # \{ and \} are characters, not groups
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("op", SHOWN)
def test_a_rule_with_a_convention_has_a_formula_a_table_can_hold(op: str) -> None:
    latex = rule_latex(all_rules()[op])
    assert latex, f"{op}: no latex= in its record and no sympy form"
    assert _balanced(latex), latex
    assert "|" not in latex and "$" not in latex, "would break the Markdown table"
    assert "\\begin{cases}" not in latex, "a kink's Piecewise: write latex= in the record"


def test_the_formula_comes_from_the_sympy_form_where_the_record_has_no_latex() -> None:
    rule = all_rules()["hypot"]
    assert not rule.latex
    x, y = sp.symbols("x y", real=True)
    assert rule_latex(rule) == sp.latex(sp.sqrt(x**2 + y**2)) == sp.latex(rule.sympy(KIT, x, y))


def test_the_record_field_wins_and_long_names_are_upright() -> None:
    assert rule_latex(all_rules()["abs"]) == r"\lvert x \rvert"  # not the Piecewise
    assert r"\mathrm{scale}" in rule_latex(all_rules()["norm_logpdf"])
