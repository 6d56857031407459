"""Operands Python may skip: ``a if c else b``, ``a and b``, ``a or b`` (and the
message of ``assert c, message``) whose skipped side needs statements (an inlined
helper's body, a comprehension's loop) become ``if`` statements, so those statements
run only when Python evaluates that side.

An inlined helper's body goes before the statement that calls it, and so does a
comprehension's loop; inside the arm of a conditional expression, or the right side
of ``and``/``or``, they would then run on the path Python skips (a helper that raises,
warns or prints there misbehaves). Each
builder takes the sides already inlined, as ``(statements, expression)`` pairs, and
returns the statements computing the value into ``target`` (the value of ``and``/``or``
is the operand it stops at, as in Python, not a bool).

>>> import itertools
>>> def side(code):
...     *statements, last = ast.parse(code).body
...     return statements, last.value
>>> counter = itertools.count(1)
>>> def fresh():
...     return f"choice_{next(counter)}"
>>> node = ast.parse("x[0] if n > 3 else x[3] * 2", mode="eval").body
>>> statements, value = if_expression(node, side("x[0]"), side("t = x[3]\\nt * 2"), fresh)
>>> print(ast.unparse(ast.Module(statements, [])), "->", ast.unparse(value))
if n > 3:
    choice_1 = x[0]
else:
    t = x[3]
    choice_1 = t * 2
 -> choice_1
>>> node = ast.parse("n > 3 and x[3] > 0", mode="eval").body
>>> statements, value = bool_operation(node, [side("n > 3"), side("t = x[3]\\nt > 0")], fresh)
>>> print(ast.unparse(ast.Module(statements, [])), "->", ast.unparse(value))
choice_2 = n > 3
if choice_2:
    t = x[3]
    choice_2 = t > 0
 -> choice_2
>>> bool_operation(node, [side("n > 3"), side("x[3] > 0")], fresh)[0]  # nothing to do
[]
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from autodiff_tutor.compiler.front.desugar.base import assign_like, name_node

Side = tuple[list[ast.stmt], ast.expr]  # the statements a side needs, then its value


class LazySides(ast.NodeTransformer):
    """A rewrite whose conditional expressions and ``and``/``or`` keep what each side
    needs on that side: ``side(expr)`` lowers one side on its own, the statements
    computing the value go to ``before``, and ``fresh()`` names the value."""

    def __init__(self, before: list[ast.stmt], fresh: Callable[[], str]):
        self.before, self.fresh = before, fresh

    def side(self, expr: ast.expr) -> Side:
        raise NotImplementedError

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        node.test = self.visit(node.test)
        body, orelse = self.side(node.body), self.side(node.orelse)
        statements, value = if_expression(node, body, orelse, self.fresh)
        self.before.extend(statements)  # each side's statements run on its path only
        return value

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        operands = [([], self.visit(node.values[0]))]
        operands += [self.side(value) for value in node.values[1:]]
        statements, value = bool_operation(node, operands, self.fresh)
        self.before.extend(statements)
        return value


def if_expression(node: ast.IfExp, body: Side, orelse: Side, fresh: Callable[[], str]) -> Side:
    """``body if node.test else orelse`` (its sides lowered): the expression itself
    when neither side needs statements, else an ``if`` computing a fresh name, each
    side's statements in its own branch."""
    if not (body[0] or orelse[0]):
        node.body, node.orelse = body[1], orelse[1]
        return [], node
    target = fresh()
    branches = [
        [*statements, assign_like(target, value, node)] for statements, value in (body, orelse)
    ]
    choice = ast.copy_location(ast.If(node.test, *branches), node)
    return [choice], ast.copy_location(name_node(target), node)


def bool_operation(node: ast.BoolOp, operands: list[Side], fresh: Callable[[], str]) -> Side:
    """``a and b and ...`` (or ``or``; its operands lowered): the expression itself when
    no operand after the first needs statements, else statements computing a fresh name
    (the first operand's statements always run)."""
    if not any(statements for statements, _ in operands[1:]):
        node.values = [value for _, value in operands]
        return operands[0][0], node
    target = fresh()
    return _chain(target, node.op, operands, node), ast.copy_location(name_node(target), node)


def _chain(target: str, op: ast.boolop, operands: list[Side], at: ast.AST) -> list[ast.stmt]:
    """``target = a and b and ...``: the operands after the first that needs statements
    are evaluated under ``if target:`` (``if not target:`` for ``or``)."""
    statements, _ = operands[0]
    lazy = next((k for k in range(1, len(operands)) if operands[k][0]), len(operands))
    values = [value for _, value in operands[:lazy]]
    value = values[0] if len(values) == 1 else ast.BoolOp(op, values)
    out = [*statements, assign_like(target, value, at)]
    if lazy < len(operands):
        test: ast.expr = name_node(target)
        if isinstance(op, ast.Or):
            test = ast.UnaryOp(ast.Not(), test)
        rest = _chain(target, op, operands[lazy:], at)
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
