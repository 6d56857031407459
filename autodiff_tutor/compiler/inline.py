"""Inline a derivative rule's formula into generated code.

A rule is a tiny Python function (see :mod:`autodiff_tutor.rules.registry`); its
``return`` expression, with the rule's parameters replaced by the program's names,
becomes the right-hand side of a backward statement. Local assignments in the
rule body are substituted into the return expression.

>>> import ast
>>> from autodiff_tutor.rules.registry import lookup
>>> expr = inline(lookup("tanh"), 0, {"g": _name("d_h"), "out": _name("h"), "x": _name("t2")})
>>> ast.unparse(expr)
'd_h * (1 - h * h)'
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import textwrap

from autodiff_tutor.rules.registry import Rule


def _name(identifier: str) -> ast.Name:
    return ast.Name(identifier, ast.Load())


@functools.cache
def _formula(rule_fn) -> tuple[list[ast.expr], bool]:
    """The rule's returned expressions (locals substituted) and whether it returned a tuple."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(rule_fn))).body[0]
    local: dict[str, ast.expr] = {}
    returned: ast.expr | None = None
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            local[statement.targets[0].id] = _substitute(statement.value, local)
        elif isinstance(statement, ast.Return) and statement.value is not None:
            returned = _substitute(statement.value, local)
        elif not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
            raise ValueError(f"rule {rule_fn.__name__}: only assignments and one return")
    if returned is None:
        raise ValueError(f"rule {rule_fn.__name__} has no return")
    if isinstance(returned, ast.Tuple):
        return list(returned.elts), True
    return [returned], False


def inline(rule: Rule, index: int, bindings: dict[str, ast.expr]) -> ast.expr:
    """The gradient formula for the rule's ``index``-th input, with names bound.

    ``bindings`` maps rule parameters (``g``, ``out``, ``xp``, inputs, options) to
    expressions; unbound options take the rule's default values.
    """
    expressions, _ = _formula(rule.vjp)
    values = {name: ast.Constant(default) for name, default in rule.options.items()}
    values.update(bindings)
    return _substitute(expressions[index], values)


def inline_all(rule: Rule, bindings: dict[str, ast.expr]) -> ast.expr:
    """The rule's whole return expression (for sequence rules that return a list)."""
    expressions, is_tuple = _formula(rule.vjp)
    values = {name: ast.Constant(default) for name, default in rule.options.items()}
    values.update(bindings)
    if is_tuple:
        return ast.Tuple([_substitute(e, values) for e in expressions], ast.Load())
    return _substitute(expressions[0], values)


def tangent_formula(rule: Rule) -> ast.expr:
    """The tangent rule's returned expression (locals substituted)."""
    expressions, _ = _formula(rule.jvp)
    return expressions[0]


def substitute(
    expr: ast.expr, values: dict[str, ast.expr], options: dict | None = None
) -> ast.expr:
    """``expr`` with names replaced (unbound options take their defaults)."""
    bound = {name: ast.Constant(default) for name, default in (options or {}).items()}
    bound.update(values)
    return _substitute(expr, bound)


def is_none_gradient(rule: Rule, index: int) -> bool:
    """Whether the rule declares input ``index`` as never differentiable (returns None)."""
    expressions, _ = _formula(rule.vjp)
    expr = expressions[index]
    return isinstance(expr, ast.Constant) and expr.value is None


def _substitute(expr: ast.expr, values: dict[str, ast.expr]) -> ast.expr:
    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in values:
                return copy.deepcopy(values[node.id])
            return node

    return Replace().visit(copy.deepcopy(expr))
