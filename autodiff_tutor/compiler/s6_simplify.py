"""Stage 6c, simplify — fewer statements and fewer array passes in a backward.

Three rewrites, each keeping what the code computes (to float rounding):

- *copies*: ``d_t5 = d_t7`` where ``d_t5`` is assigned once and ``d_t7`` is not
  assigned or changed after it: ``d_t5`` is read as ``d_t7`` and the statement goes;
- *single reads*: a gradient made of arithmetic and read once, by the next statements
  of the same block, is written into that read (``d_t2 = -d_b`` then
  ``d_t2 = d_t2 + e`` becomes ``d_t2 = e - d_b``), unless a statement in between
  writes a name it reads;
- *signs and constants*: ``a + -b`` is ``a - b``, ``-a + b`` is ``b - a``,
  ``-a * 2`` is ``a * -2``, ``a * 2 * 3`` is ``a * 6``, ``a + -b * c / d`` is
  ``a - b * c / d`` (negation is exact: the same bits).

>>> tree = ast.parse("d_t5 = d_t7\\nd_t3 = -d_a\\nd_t2 = -d_b\\n"
...                  "d_t2 = d_t2 + d_t3 * 2 * t2\\nd_x = d_t5 * d_t2").body
>>> for s in simplify(tree, {"d_x", "d_t7"}): print(ast.unparse(s))
d_x = d_t7 * (d_a * -2 * t2 - d_b)
>>> print(ast.unparse(simplify(ast.parse("d_y = d_t + -d_t * t1 / y").body, {"d_y"})[0]))
d_y = d_t - d_t * t1 / y
"""

from __future__ import annotations

import ast
from collections import Counter

_ARITHMETIC = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp)


def simplify(statements: list[ast.stmt], keep: set[str]) -> list[ast.stmt]:
    """The rewrites above, on the backward ``statements`` (in place); names in ``keep``
    (seeds, returned gradients, the memory) keep their statements."""
    inline(statements, keep)
    _Signs().visit(ast.Module(statements, []))
    _Factors().visit(ast.Module(statements, []))
    return statements


def inline(statements: list[ast.stmt], keep: set[str]) -> list[ast.stmt]:
    """Only the first two rewrites (copies, single reads), which keep every operation
    and its order: a forward written as expressions, whose temporaries numpy reuses.

    >>> tree = ast.parse("t4 = 100.0 * a\\nt5 = t4 * a\\nt6 = b * b\\nt7 = t5 + t6").body
    >>> print(ast.unparse(inline(tree, {"a", "b", "t7"})))
    t7 = 100.0 * a * a + b * b
    """
    for _ in range(1000):  # one rewrite a round, until none applies
        if not (
            _swaps_back(statements) or _copies(statements, keep) or _single_reads(statements, keep)
        ):
            break
    return statements


def _swaps_back(statements: list[ast.stmt]) -> bool:
    """``a = b`` then ``b = a`` (a loop passing a gradient on): the second changes
    nothing and goes.

    >>> tree = ast.parse("for t in r:\\n    d_3 = d_2\\n    d_2 = d_3\\n    g = d_3 * h").body
    >>> print(ast.unparse(inline(tree, set())))
    for t in r:
        g = d_2 * h
    """
    for block in _blocks(statements):
        for first, second in zip(block, block[1:], strict=False):
            a, b = _single_name_assign(first), _single_name_assign(second)
            if a is None or b is None or not isinstance(a[1], ast.Name):
                continue
            if isinstance(b[1], ast.Name) and (b[0], b[1].id) == (a[1].id, a[0]) != (a[0], a[0]):
                block.remove(second)
                return True
    return False


# -- bookkeeping -------------------------------------------------------------------------


def _walk(statements: list[ast.stmt]):
    for statement in statements:
        yield statement
        for field in ("body", "orelse"):
            yield from _walk(getattr(statement, field, []) or [])


def _bound(statement: ast.stmt) -> list[str]:
    """Names a statement binds or changes in place (``d_x[i] += g`` changes ``d_x``)."""
    names = []
    targets = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        targets = [statement.target]
    elif isinstance(statement, ast.For):
        targets = [statement.target]
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.append(node.id)
    return names


def _counts(statements: list[ast.stmt]) -> tuple[Counter, Counter]:
    """How often each name is bound (or changed in place), and read, anywhere."""
    bound, read = Counter(), Counter()
    for statement in _walk(statements):
        bound.update(_bound(statement))
        if isinstance(statement, ast.Expr):  # add_at(d_x, ...) changes d_x
            bound.update(n.id for n in ast.walk(statement) if isinstance(n, ast.Name))
        for part in _own_parts(statement):
            for node in ast.walk(part):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    read[node.id] += 1
        if isinstance(statement, ast.AugAssign):  # d_x += g reads d_x
            for node in ast.walk(statement.target):
                if isinstance(node, ast.Name):
                    read[node.id] += 1
    return bound, read


def _own_parts(statement: ast.stmt) -> list[ast.AST]:
    if isinstance(statement, (ast.For, ast.While)):
        return [statement.iter if isinstance(statement, ast.For) else statement.test]
    if isinstance(statement, ast.If):
        return [statement.test]
    return [statement]


def _single_name_assign(statement: ast.stmt) -> tuple[str, ast.expr] | None:
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id, statement.value
    return None


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: ast.expr):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id == self.old and isinstance(node.ctx, ast.Load):
            return _copy_expr(self.new)
        return node


def _copy_expr(node: ast.expr) -> ast.expr:
    import copy

    return copy.deepcopy(node)


# -- the rewrites ------------------------------------------------------------------------


def _blocks(statements: list[ast.stmt]):
    yield statements
    for statement in statements:
        for field in ("body", "orelse"):
            body = getattr(statement, field, None)
            if body:
                yield from _blocks(body)


def _copies(statements: list[ast.stmt], keep: set[str]) -> bool:
    changed = False
    bound, _ = _counts(statements)
    for block in _blocks(statements):
        for i, statement in enumerate(block):
            found = _single_name_assign(statement)
            if found is None:
                continue
            target, value = found
            if not isinstance(value, ast.Name) or target in keep:
                continue
            if bound[target] != 1:
                continue
            if bound[value.id] > 1 and not (block is statements and _final(block, i, value.id)):
                continue
            if value.id in bound and not _bound_before(statements, value.id, statement):
                continue
            del block[i]
            for other in statements:
                _Rename(target, value).visit(other)
            return True  # the lists changed: count again
    return changed


def _final(block: list[ast.stmt], i: int, name: str) -> bool:
    """Whether no statement after ``block[i]`` binds or changes ``name``."""
    for statement in block[i + 1 :]:
        for inner in _walk([statement]):
            if name in _bound(inner) or (isinstance(inner, ast.Expr) and _reads_name(inner, name)):
                return False
    return True


def _bound_before(statements: list[ast.stmt], name: str, statement: ast.stmt) -> bool:
    """Whether ``name`` is bound (once) in a statement that runs before ``statement``
    at the same level or outside it."""
    for other in _walk(statements):
        if other is statement:
            return False
        if name in _bound(other):
            return True
    return False


def _single_reads(statements: list[ast.stmt], keep: set[str]) -> bool:
    bound, read = _counts(statements)
    for block in _blocks(statements):
        for i, statement in enumerate(block):
            found = _single_name_assign(statement)
            if found is None:
                continue
            target, value = found
            once = target not in keep and bound[target] == 1 and read[target] == 1
            if not (once or _rebound_next(block, i, target)):
                continue
            if not all(
                isinstance(n, _ARITHMETIC + (ast.operator, ast.unaryop, ast.expr_context))
                for n in ast.walk(value)
            ):
                continue
            inputs = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            for j in range(i + 1, len(block)):
                user = block[j]
                if _reads_name(user, target):
                    if isinstance(user, (ast.Assign, ast.AugAssign)):
                        _Rename(target, value).visit(user)
                        user.origin = getattr(user, "origin", "") or getattr(
                            statement, "origin", ""
                        )
                        user.inlined = True  # computes another statement's value too
                        del block[i]
                        return True
                    break
                if set(_bound(user)) & inputs or _changes(user, inputs):
                    break
    return False


def _rebound_next(block: list[ast.stmt], i: int, target: str) -> bool:
    """``t = a`` whose first reader is ``t = t + b`` (reading ``t`` once): the value of
    the first statement is read there only."""
    for user in block[i + 1 :]:
        if _reads_name(user, target):
            found = _single_name_assign(user)
            reads = sum(
                isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Load)
                for n in ast.walk(user)
            )
            return found is not None and found[0] == target and reads == 1
    return False


def _reads_name(statement: ast.stmt, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement))


def _changes(statement: ast.stmt, names: set[str]) -> bool:
    """A compound statement or a call statement that may change one of ``names``."""
    if isinstance(statement, (ast.Assign, ast.AugAssign)):
        return False
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(statement))


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
        factors = _factors(node.operand)
        if isinstance(node.op, ast.USub) and len(factors) > 1 and _number(factors[0]):
            return _product([ast.Constant(-factors[0].value), *factors[1:]])
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return node
        left, right = _factors(node.left), _factors(node.right)
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


def _factors(node: ast.expr) -> list[ast.expr]:
    """The factors of a product (``a * (b * 2)``: a, b, 2); one for anything else."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _product(factors: list[ast.expr]) -> ast.expr:
    """The product of ``factors``, their numbers multiplied into one, in front (a
    factor 1 goes, unless it is the only one)."""
    others = [f for f in factors if not _number(f)]
    scale = 1
    for factor in factors:
        if _number(factor):
            scale = scale * factor.value
    ordered = others if scale == 1 and others else [ast.Constant(scale), *others]
    result = ordered[0]
    for factor in ordered[1:]:
        result = ast.BinOp(result, ast.Mult(), factor)
    return result


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
