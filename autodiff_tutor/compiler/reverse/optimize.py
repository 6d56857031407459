"""Stage 6, optimize: keep the generated code small and readable.

Inlined rules often carry options at their default values or tests on constants
(``g.T if None is None else ...``). Folding them leaves the formula a student would
write. The folds never change what the code computes.

>>> import ast
>>> tree = ast.parse("g.T if None is None else g.transpose(axes)", mode="eval").body
>>> ast.unparse(fold(tree))
'g.T'
>>> ast.unparse(fold(ast.parse("unreduce(g, x, axis=None, keepdims=False)", mode="eval").body))
'unreduce(g, x)'
"""

from __future__ import annotations

import ast
import inspect
import operator

from autodiff_tutor.compiler.code import walk_statements, with_array_module
from autodiff_tutor.runtime import helpers
from autodiff_tutor.syntax import copy_tree

_COMPARE = {
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _helper_defaults() -> dict[str, dict[str, object]]:
    defaults = {}
    for name in helpers.__all__:
        fn = getattr(helpers, name)
        if callable(fn) and not isinstance(fn, type):
            try:
                parameters = inspect.signature(fn).parameters.values()
            except (TypeError, ValueError):
                continue
            defaults[name] = {
                p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty
            }
    return defaults


HELPER_DEFAULTS = _helper_defaults()


class _Folder(ast.NodeTransformer):
    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and _is_number(node.operand):
            return ast.Constant(-node.operand.value)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        first = node.values[0]
        if isinstance(first, ast.Constant):
            decided = bool(first.value) == isinstance(node.op, ast.Or)
            if decided:  # True or ..., False and ...
                return first
            rest = node.values[1:]
            return rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if isinstance(left, ast.Constant) and isinstance(right, ast.Constant):
            if type(op) in _COMPARE:
                return ast.Constant(_COMPARE[type(op)](left.value, right.value))
        if (
            isinstance(op, (ast.Is, ast.IsNot))
            and _is_none(right)
            and (isinstance(left, _LITERALS) or _is_number(left))
        ):
            return ast.Constant(isinstance(op, ast.IsNot))  # a tuple literal is never None
        # an absent bound (clip with a_min=None) is always satisfied
        if isinstance(op, _ORDER) and isinstance(right, ast.Constant) and right.value is None:
            return ast.Constant(True)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        left, right = node.left, node.right
        if _is_arithmetic(left) and _is_arithmetic(right) and type(node.op) in _ARITHMETIC:
            return ast.Constant(_ARITHMETIC[type(node.op)](left.value, right.value))
        if isinstance(node.op, ast.Pow) and _is_constant(right, 1):
            return left
        if isinstance(node.op, ast.Mult):
            if _is_constant(right, 1):
                return left
            if _is_constant(left, 1):
                return right
        for keep, drop in ((left, right), (right, left)):
            if _is_true(drop) and isinstance(node.op, (ast.BitAnd, ast.Mult)):
                return keep
        if isinstance(node.op, ast.Add) and isinstance(right, ast.UnaryOp):
            if isinstance(right.op, ast.USub):  # a + -b  ->  a - b
                return ast.BinOp(left, ast.Sub(), right.operand)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if _is_number_test(node):  # isinstance(2, int | float): the rule's scalar case
            return ast.Constant(True)
        if _is_where(node) and isinstance(node.args[0], ast.Constant):
            return node.args[1] if node.args[0].value else node.args[2]  # where(True, a, b)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCTIONS:
            node.keywords = [k for k in node.keywords if not _is_reduction_default(k)]
        if isinstance(node.func, ast.Name) and node.func.id in HELPER_DEFAULTS:
            defaults = HELPER_DEFAULTS[node.func.id]
            node.keywords = [
                k
                for k in node.keywords
                if not (
                    k.arg in defaults
                    and isinstance(k.value, ast.Constant)
                    and k.value.value == defaults[k.arg]
                    and type(k.value.value) is type(defaults[k.arg])
                )
            ]
        return node


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def _is_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _is_number_test(node: ast.Call) -> bool:
    """``isinstance(<a number>, int | float)``, which folds to True."""
    return (
        isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        and _is_number(node.args[0])
        and ast.unparse(node.args[1]) == "int | float"
    )


def _is_arithmetic(node: ast.expr) -> bool:
    """A number, or a bool folded from a test (``2 - (2 != 0)`` is ``1``)."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


def _is_constant(node: ast.expr, value: float) -> bool:
    return _is_number(node) and node.value == value


_LITERALS = (ast.Tuple, ast.List)
# array-module reductions whose defaults are axis=None and keepdims=False
_REDUCTIONS = {"sum", "mean", "max", "min", "prod", "norm", "squeeze", "amax", "amin"}


def _is_reduction_default(keyword: ast.keyword) -> bool:
    value = keyword.value
    if not isinstance(value, ast.Constant):
        return False
    return (keyword.arg == "axis" and value.value is None) or (
        keyword.arg == "keepdims" and value.value is False
    )


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_where(node: ast.Call) -> bool:
    return (
        isinstance(node.func, ast.Attribute) and node.func.attr == "where" and len(node.args) == 3
    )


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def fold(expr: ast.expr) -> ast.expr:
    """Fold constant tests, absent bounds and default helper arguments in ``expr``."""
    return ast.fix_missing_locations(_Folder().visit(expr))


def optimize(statements: list[ast.stmt], seed: str) -> list[ast.stmt]:
    """The optimize stage: every expression of a generated tree folded, on a copy (so
    the normalized program the tree shares nodes with stays as it was); each
    statement keeps its origin. The array module ``xp`` is fetched (from the gradient
    ``seed``) only when a folded formula still uses it.

    >>> tree = ast.parse("d_x = d_t * 1 if 1 == 1 else xp.sum(d_t)")
    >>> [ast.unparse(s) for s in optimize(tree.body, "d_out")]
    ['d_x = d_t']
    >>> [ast.unparse(s) for s in optimize(ast.parse("d_x = xp.sum(d_t)").body, "d_out")]
    ['xp = array_module(d_out)', 'd_x = xp.sum(d_t)']
    """
    keep = {  # a body's stack-pop placeholder points at the program: share, never copy
        id(s.replays): s.replays for s in walk_statements(statements) if hasattr(s, "replays")
    }
    folded = [_Folder().visit(copy_tree(s, dict(keep))) for s in statements]
    folded = [ast.fix_missing_locations(s) for s in folded]
    return with_array_module(folded, seed, "the array module of the gradients")
