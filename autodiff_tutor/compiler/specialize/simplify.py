"""Stage 6c, simplify — fewer statements and fewer array passes in a backward.

Three rewrites, each keeping what the code computes (to float rounding):

- *copies*: ``d_t5 = d_t7`` where ``d_t5`` is assigned once and ``d_t7`` is not
  assigned or changed after it: ``d_t5`` is read as ``d_t7`` and the statement goes;
- *single reads*: a gradient made of arithmetic and read once, by the next statements
  of the same block, is written into that read (``d_t2 = -d_b`` then
  ``d_t2 = d_t2 + e`` becomes ``d_t2 = e - d_b``), unless a statement in between
  writes a name it reads;
- *signs and constants* (:mod:`.specialize.signs`): ``a + -b`` is ``a - b``, ``-a * 2`` is
  ``a * -2``, ``a * 2 * 3`` is ``a * 6`` (negation is exact: the same bits).

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

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.specialize.signs import signs_and_constants
from autodiff_tutor.syntax import copy_tree

_ARITHMETIC = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp)


def simplify(statements: list[ast.stmt], keep: set[str]) -> list[ast.stmt]:
    """The rewrites above, on the backward ``statements`` (in place); names in ``keep``
    (seeds, returned gradients, the memory) keep their statements."""
    inline(statements, keep)
    return signs_and_constants(statements)


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

    return copy_tree(node)


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
            if name in _bound(inner) or (
                isinstance(inner, ast.Expr) and code.mentions(inner, name)
            ):
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
                if code.mentions(user, target):
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
        if code.mentions(user, target):
            found = _single_name_assign(user)
            reads = sum(
                isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Load)
                for n in ast.walk(user)
            )
            return found is not None and found[0] == target and reads == 1
    return False


def _changes(statement: ast.stmt, names: set[str]) -> bool:
    """A compound statement or a call statement that may change one of ``names``."""
    if isinstance(statement, (ast.Assign, ast.AugAssign)):
        return False
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(statement))
