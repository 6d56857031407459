"""What the desugaring passes share: statement passes, small node builders, their error."""

from __future__ import annotations

import ast
from collections.abc import Callable

from autodiff_tutor.compiler.code import is_name
from autodiff_tutor.compiler.front.source import as_load


class StatementPass:
    """A pass that rewrites a body statement by statement (each into zero or more)."""

    def run(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for node in body:
            out.extend(self._statement(node))
        return out

    def _statement(self, node: ast.stmt) -> list[ast.stmt]:
        return [node]


def rewrite_bodies(node: ast.stmt, rewrite: Callable[[list[ast.stmt]], list[ast.stmt]]) -> None:
    """``node``'s bodies (``body``, ``orelse``) replaced by what ``rewrite`` makes of them.

    >>> loop = ast.parse("for i in r:\\n    a = i").body[0]
    >>> rewrite_bodies(loop, lambda body: body * 2)
    >>> len(loop.body), loop.orelse
    (2, [])
    """
    for field in ("body", "orelse"):
        if isinstance(getattr(node, field, None), list):
            setattr(node, field, rewrite(getattr(node, field)))


def name_node(identifier: str, store: bool = False) -> ast.Name:
    return ast.Name(identifier, ast.Store() if store else ast.Load())


def assign_like(identifier: str, value: ast.expr, like: ast.AST) -> ast.Assign:
    return ast.copy_location(ast.Assign([name_node(identifier, True)], value), like)


def augmented_value(node: ast.AugAssign) -> ast.BinOp:
    """The value ``target op= value`` assigns: ``target op value``, the target read.

    >>> ast.unparse(augmented_value(ast.parse("y[i] *= 2").body[0]))
    'y[i] * 2'
    """
    return ast.copy_location(ast.BinOp(as_load(node.target), node.op, node.value), node)


def negation(*flags: str) -> ast.expr:
    """``not flag``, or ``not (flag_1 or flag_2)`` for several flags.

    >>> ast.unparse(negation("break_1", "continue_2"))
    'not (break_1 or continue_2)'
    """
    if len(flags) == 1:
        return ast.UnaryOp(ast.Not(), name_node(flags[0]))
    return ast.UnaryOp(ast.Not(), ast.BoolOp(ast.Or(), [name_node(f) for f in flags]))


def only_called(tree: ast.AST, name: str) -> bool:
    """Whether ``tree`` reads ``name``, and only to call it (``fn(a)``: a function
    given, which an inlined body may call by the caller's name).

    >>> only_called(ast.parse("y = fn(a) + fn(b)"), "fn"), only_called(ast.parse("g(fn)"), "fn")
    (True, False)
    """
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    reads = [n for n in ast.walk(tree) if is_name(n, name) and isinstance(n.ctx, ast.Load)]
    return bool(reads) and all(id(n) in calls for n in reads)


def reject(node: ast.AST, message: str, hint: str = "") -> None:
    """Stop desugaring with a message about ``node`` (located by the pipeline)."""
    raise DesugarError(message, node, hint)


class DesugarError(Exception):
    """Raised while desugaring; the pipeline turns it into a located error."""

    def __init__(self, message: str, node: ast.AST, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.node = node
        self.hint = hint
