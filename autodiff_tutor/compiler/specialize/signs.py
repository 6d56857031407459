"""Stage 6c, signs — signs and constants of a backward's arithmetic, folded.

The third rewrite of :mod:`.specialize.simplify`, each step keeping what the code computes
(to float rounding): ``a + -b`` is ``a - b``, ``-a + b`` is ``b - a``, ``-a * 2`` is
``a * -2``, ``a * 2 * 3`` is ``a * 6``, ``a + -b * c / d`` is ``a - b * c / d``
(negation is exact: the same bits), ``(-a).sum()`` is ``-a.sum()``, and ``x * a + x *
b`` is ``x * (a + b)`` for the names and numbers two products share.

>>> for source in ("d = a * 2 * 3 - -c", "d = x * a + x * b", "d = (-a).sum(axis=0) + b"):
...     print(ast.unparse(signs_and_constants(ast.parse(source).body)[0]))
d = a * 6 + c
d = x * (a + b)
d = b - a.sum(axis=0)
"""

from __future__ import annotations

import ast
import functools

from autodiff_tutor.compiler import code


def signs_and_constants(statements: list[ast.stmt]) -> list[ast.stmt]:
    """``statements`` with the rewrites above (changed in place)."""
    _Signs().visit(ast.Module(statements, []))
    _Factors().visit(ast.Module(statements, []))
    return statements


class _Signs(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "sum" and _negated(func.value):
            func.value = func.value.operand  # (-a).sum(...) -> -a.sum(...): a smaller negation
            return ast.UnaryOp(ast.USub(), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        left, right, op = node.left, node.right, node.op
        if isinstance(op, ast.Add) and _negated(right):
            return ast.BinOp(left, ast.Sub(), right.operand)
        if isinstance(op, ast.Add) and _negated(left):
            return ast.BinOp(right, ast.Sub(), left.operand)
        if isinstance(op, ast.Sub) and _negated(right):
            return ast.BinOp(left, ast.Add(), right.operand)
        if isinstance(op, ast.Sub) and _negated(left):  # -a - b  ->  -(a + b)
            return self.visit(ast.UnaryOp(ast.USub(), ast.BinOp(left.operand, ast.Add(), right)))
        if isinstance(op, ast.Mult) and _number(right):
            if _negated(left):  # -a * 2  ->  a * -2
                return ast.BinOp(left.operand, ast.Mult(), ast.Constant(-right.value))
            inner = left
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Mult):
                if _number(inner.right):  # a * 2 * 3  ->  a * 6
                    product = ast.Constant(inner.right.value * right.value)
                    return ast.BinOp(inner.left, ast.Mult(), product)
        if isinstance(op, ast.Add) and _negative_product(right):  # a + b * -2 -> a - b * 2
            return ast.BinOp(left, ast.Sub(), _flip(right))
        if isinstance(op, ast.Sub) and _negative_product(right):
            return ast.BinOp(left, ast.Add(), _flip(right))
        if isinstance(op, (ast.Add, ast.Sub)) and _leading_negation(right):
            other = ast.Sub() if isinstance(op, ast.Add) else ast.Add()  # a + -b * c -> a - b * c
            return ast.BinOp(left, other, _without_leading_negation(right))
        if isinstance(op, ast.Add) and _leading_negation(left):  # -b * c + a -> a - b * c
            return ast.BinOp(right, ast.Sub(), _without_leading_negation(left))
        return node


class _Factors(ast.NodeTransformer):
    """``x * a + x * b`` -> ``x * (a + b)``: factors (names, numbers) the two products
    share are multiplied once; ``-(2 * a)`` is ``-2 * a``."""

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        factors = code.factors(node.operand)
        if isinstance(node.op, ast.USub) and len(factors) > 1 and _number(factors[0]):
            return _product([ast.Constant(-factors[0].value), *factors[1:]])
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return node
        left, right = code.factors(node.left), code.factors(node.right)
        if len(left) < 2 and len(right) < 2:
            return node
        if isinstance(node.op, ast.Sub):  # a - b = a + (-b): the sign goes to a number
            numbers = [i for i, f in enumerate(right) if _number(f)]
            if not numbers:
                return node
            right = list(right)
            right[numbers[0]] = ast.Constant(-right[numbers[0]].value)
        shared, rest = [], list(right)
        for factor in left:
            match = next((r for r in rest if _same_factor(r, factor)), None)
            if match is not None:
                shared.append(factor)
                rest.remove(match)
        if not shared or any(not _simple_factor(f) for f in shared):
            return node
        left_rest = list(left)
        for factor in shared:
            left_rest.remove(factor)
        total = _sum(_product(left_rest), _product(rest))
        return _product([*shared, total])


def _sum(a: ast.expr, b: ast.expr) -> ast.expr:
    if _number(a) and _number(b):
        return ast.Constant(a.value + b.value)
    return ast.BinOp(a, ast.Add(), b)


def _product(factors: list[ast.expr]) -> ast.expr:
    """The product of ``factors``, their numbers multiplied into one, in front (a
    factor 1 goes, unless it is the only one)."""
    others = [f for f in factors if not _number(f)]
    scale = 1
    for factor in factors:
        if _number(factor):
            scale = scale * factor.value
    ordered = others if scale == 1 and others else [ast.Constant(scale), *others]
    return functools.reduce(lambda a, b: ast.BinOp(a, ast.Mult(), b), ordered)


def _simple_factor(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) or _number(node)


def _same_factor(a: ast.expr, b: ast.expr) -> bool:
    if _number(a) and _number(b):
        return a.value == b.value
    return isinstance(a, ast.Name) and isinstance(b, ast.Name) and a.id == b.id


def _negated(node: ast.expr) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)


def _number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _negative_product(node: ast.expr) -> bool:
    """``a * -2`` (a product whose last factor is a negative number)."""
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        if _number(node.right) and node.right.value < 0:
            return True
        node = node.left
    return False


def _leading_negation(node: ast.expr) -> bool:
    """``-b * c / d``: a product or quotient whose first factor is negated (negation is
    exact and commutes with the rounding of ``*`` and ``/``, so it can move out)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))):
        return False
    while isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        node = node.left
    return _negated(node)


def _without_leading_negation(node: ast.expr) -> ast.expr:
    """``-b * c / d`` -> ``b * c / d``."""
    if isinstance(node, ast.BinOp):
        return ast.BinOp(_without_leading_negation(node.left), node.op, node.right)
    return node.operand


def _flip(node: ast.BinOp) -> ast.BinOp:
    """``a * -2 * b`` -> ``a * 2 * b`` (the first negative number factor, negated)."""
    if _number(node.right) and node.right.value < 0:
        return ast.BinOp(node.left, ast.Mult(), ast.Constant(-node.right.value))
    return ast.BinOp(_flip(node.left), ast.Mult(), node.right)
