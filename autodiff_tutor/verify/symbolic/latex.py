"""A rule's formula in LaTeX, for the book's tables: written in its record where the
sympy form would not say it well (``latex=``), else made from the sympy form.

The sympy form runs on real symbols named like the rule's inputs, with numpy's
semantics (:data:`~autodiff_tutor.verify.symbolic.algebra.KIT`), and ``sympy.latex``
writes it; names of more than one letter are set upright (``\\mathrm{scale}``).

>>> from autodiff_tutor.rules.registry import all_rules
>>> rules = all_rules()
>>> rule_latex(rules["sqrt"]), rule_latex(rules["logaddexp"])
('\\\\sqrt{x}', '\\\\ln{\\\\left(e^{x} + e^{y} \\\\right)}')
>>> rule_latex(rules["prod_others"])       # written in its record
'\\\\prod_{j \\\\ne i} x_j'
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from autodiff_tutor.verify.symbolic.algebra import KIT

__all__ = ["rule_latex"]


def _symbol_name(name: str) -> str:
    base, _, index = name.partition("_")
    if len(base) > 1:
        base = f"\\mathrm{{{base}}}"
    return f"{base}_{{\\mathrm{{{index}}}}}" if index else base


def rule_latex(rule: Any) -> str:
    """The LaTeX of ``rule``'s formula (a :class:`~autodiff_tutor.rules.record.Rule`):
    its ``latex`` field, else its sympy form written by ``sympy.latex``, else ``""``.
    """
    if rule.latex or rule.sympy is None:
        return rule.latex
    symbols = [sp.Symbol(name, real=True) for name in rule.inputs]
    names = {s: _symbol_name(s.name) for s in symbols}
    return sp.latex(rule.sympy(KIT, *symbols), ln_notation=True, symbol_names=names)
