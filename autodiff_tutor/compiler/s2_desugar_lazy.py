"""Operands Python may skip: ``a if c else b``, ``a and b``, ``a or b`` (and the
message of ``assert c, message``) whose skipped side needs statements (an inlined
helper's body) become ``if`` statements, so those statements run only when Python
evaluates that side.

An inlined helper's body goes before the statement that calls it; inside the arm of a
conditional expression, or the right side of ``and``/``or``, it would then run on the
path Python skips (a helper that raises, warns or prints there misbehaves). Each
builder takes the sides already inlined, as ``(statements, expression)`` pairs, and
returns the statements computing the value into ``target`` (the value of ``and``/``or``
is the operand it stops at, as in Python, not a bool).

>>> import ast
>>> def side(code):
...     *statements, last = ast.parse(code).body
...     return statements, last.value
>>> at = ast.parse("0").body[0]
>>> lazy = if_expression("choice_1", ast.parse("n > 3", mode="eval").body,
...                      side("x[0]"), side("t = x[3]\\nt * 2"), at)
>>> print(ast.unparse(ast.Module(lazy, [])))
if n > 3:
    choice_1 = x[0]
else:
    t = x[3]
    choice_1 = t * 2
>>> lazy = bool_operation("choice_2", ast.And(), [side("n > 3"), side("t = x[3]\\nt > 0")], at)
>>> print(ast.unparse(ast.Module(lazy, [])))
choice_2 = n > 3
if choice_2:
    t = x[3]
    choice_2 = t > 0
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.s2_desugar_base import assign_like, name_node

Side = tuple[list[ast.stmt], ast.expr]  # the statements a side needs, then its value


def if_expression(
    target: str, test: ast.expr, body: Side, orelse: Side, at: ast.AST
) -> list[ast.stmt]:
    """``target = body if test else orelse``, each side's statements in its own branch."""
    branches = [
        [*statements, assign_like(target, value, at)] for statements, value in (body, orelse)
    ]
    return [ast.copy_location(ast.If(test, *branches), at)]


def bool_operation(
    target: str, op: ast.boolop, operands: list[Side], at: ast.AST
) -> list[ast.stmt]:
    """``target = a and b and ...`` (or ``or``): the operands after the first that needs
    statements are evaluated under ``if target:`` (``if not target:`` for ``or``)."""
    statements, _ = operands[0]
    lazy = next((k for k in range(1, len(operands)) if operands[k][0]), len(operands))
    values = [value for _, value in operands[:lazy]]
    value = values[0] if len(values) == 1 else ast.BoolOp(op, values)
    out = [*statements, assign_like(target, value, at)]
    if lazy < len(operands):
        test: ast.expr = name_node(target)
        if isinstance(op, ast.Or):
            test = ast.UnaryOp(ast.Not(), test)
        rest = bool_operation(target, op, operands[lazy:], at)
        out.append(ast.copy_location(ast.If(test, rest, []), at))
    return out


def assertion(test: ast.expr, message: Side, at: ast.stmt) -> list[ast.stmt]:
    """``assert test, message``; a message that needs statements is computed only when
    the assertion fails: ``if not test: ...; raise AssertionError(message)``.

    >>> message = ([ast.parse("m = str(x)").body[0]], ast.Name("m", ast.Load()))
    >>> at = ast.parse("assert x > 0").body[0]
    >>> print(ast.unparse(ast.Module(assertion(at.test, message, at), [])))
    if not x > 0:
        m = str(x)
        raise AssertionError(m)
    """
    statements, value = message
    if not statements:
        return [ast.copy_location(ast.Assert(test, value), at)]
    error = ast.Call(name_node("AssertionError"), [value], [])
    fail = [*statements, ast.copy_location(ast.Raise(error, None), at)]
    return [ast.copy_location(ast.If(ast.UnaryOp(ast.Not(), test), fail, []), at)]
