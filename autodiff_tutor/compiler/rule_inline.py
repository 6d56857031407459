"""Inline a derivative rule's formula into generated code.

A rule is a tiny Python function (see :mod:`autodiff_tutor.rules.record`); its
``return`` expression, with the rule's parameters replaced by the program's names,
becomes the right-hand side of a backward statement. The rule's body is parsed once,
by :mod:`autodiff_tutor.rules.formula` (local assignments already substituted into
the returned formulas); tracing reads the same parse.

>>> import ast
>>> from autodiff_tutor.rules.registry import lookup
>>> expr = inline(lookup("tanh"), 0, {"g": _name("d_h"), "out": _name("h"), "x": _name("t2")})
>>> ast.unparse(expr)
'd_h * (1 - h * h)'
"""

from __future__ import annotations

import ast

from autodiff_tutor.rules.formula import parse
from autodiff_tutor.rules.formula import substitute as _substitute
from autodiff_tutor.rules.record import Rule


def _name(identifier: str) -> ast.Name:
    return ast.Name(identifier, ast.Load())


def _formula(rule_fn) -> tuple[list[ast.expr], bool]:
    """The rule's returned expressions (locals substituted) and whether it returned a tuple."""
    formula = parse(rule_fn)
    return formula.expressions, formula.is_tuple


def inline(rule: Rule, index: int, bindings: dict[str, ast.expr]) -> ast.expr:
    """The gradient formula for the rule's ``index``-th input, with names bound.

    ``bindings`` maps rule parameters (``g``, ``out``, ``xp``, inputs, options) to
    expressions; unbound options take the rule's default values.
    """
    return substitute(_formula(rule.vjp)[0][index], bindings, rule.options)


def inline_all(rule: Rule, bindings: dict[str, ast.expr]) -> ast.expr:
    """The rule's whole return expression (for sequence rules that return a list)."""
    expressions, is_tuple = _formula(rule.vjp)
    if is_tuple:
        return ast.Tuple([substitute(e, bindings, rule.options) for e in expressions], ast.Load())
    return substitute(expressions[0], bindings, rule.options)


def tangent_formula(rule: Rule) -> ast.expr:
    """The tangent rule's returned expression (locals substituted)."""
    return _formula(rule.jvp)[0][0]


def substitute(
    expr: ast.expr, values: dict[str, ast.expr], options: dict | None = None
) -> ast.expr:
    """``expr`` with names replaced (unbound options take their defaults)."""
    bound = {name: ast.Constant(default) for name, default in (options or {}).items()}
    bound.update(values)
    return _substitute(expr, bound)


def is_none_gradient(rule: Rule, index: int) -> bool:
    """Whether the rule declares input ``index`` as never differentiable (returns None)."""
    expr = _formula(rule.vjp)[0][index]
    return isinstance(expr, ast.Constant) and expr.value is None
