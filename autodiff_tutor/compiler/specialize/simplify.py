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

_ARITHMETIC = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp)


def simplify(statements: list[ast.stmt], keep: set[str]) -> list[ast.stmt]:
    """The rewrites above, on the backward ``statements`` (in place); names in ``keep``
    (seeds, returned gradients, the memory) keep their statements."""
    inline(statements, keep)
    return signs_and_constants(statements)


def inline(statements: list[ast.stmt], keep: set[str]) -> list[ast.stmt]:
    """Only the first two rewrites (copies, single reads), which keep every operation
    and its order: a forward written as expressions, whose temporaries numpy reuses.

    Each rewrite is one pass over the tree (the counts of binds and reads kept as the
    pass changes them), repeated until none changes anything: the cost grows with the
    program's size, not with its square (``python -m benchmarks.specialization``).

    >>> tree = ast.parse("t4 = 100.0 * a\\nt5 = t4 * a\\nt6 = b * b\\nt7 = t5 + t6").body
    >>> print(ast.unparse(inline(tree, {"a", "b", "t7"})))
    t7 = 100.0 * a * a + b * b
    """
    for _ in range(1000):  # a few rounds: a rewrite may open another
        swapped = _swaps_back(statements)
        copied = _copies(statements, keep)
        if not (_single_reads(statements, keep) or swapped or copied):
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
    changed = False
    for block in code.blocks(statements):
        i = 0
        while i + 1 < len(block):
            a, b = _single_name_assign(block[i]), _single_name_assign(block[i + 1])
            if a and b and isinstance(a[1], ast.Name) and isinstance(b[1], ast.Name):
                if (b[0], b[1].id) == (a[1].id, a[0]) != (a[0], a[0]):
                    del block[i + 1]
                    changed = True
                    continue
            i += 1
    return changed


# -- bookkeeping -------------------------------------------------------------------------


def _counts(statements: list[ast.stmt]) -> tuple[Counter, Counter]:
    """How often each name is bound (or changed in place), and read, anywhere."""
    bound, read = Counter(), Counter()
    for statement in code.walk_statements(statements):
        bound.update(code.changed_names(statement))
        if isinstance(statement, ast.Expr):  # add_at(d_x, ...) changes d_x
            bound.update(code.names(statement))
        for part in code.own_parts(statement):
            for node in ast.walk(part):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    read[node.id] += 1
        if isinstance(statement, ast.AugAssign):  # d_x += g reads d_x
            for node in ast.walk(statement.target):
                if isinstance(node, ast.Name):
                    read[node.id] += 1
    return bound, read


def _single_name_assign(statement: ast.stmt) -> tuple[str, ast.expr] | None:
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id, statement.value
    return None


class _Rename(ast.NodeTransformer):
    """Read ``old`` as the expression ``new``: moved there, not copied (it is read
    once), so a chain of single reads costs its length, not its square."""

    def __init__(self, old: str, new: ast.expr):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id == self.old and isinstance(node.ctx, ast.Load):
            return self.new
        return node


# -- the rewrites ------------------------------------------------------------------------


def _copies(statements: list[ast.stmt], keep: set[str]) -> bool:
    """Every copy ``t = s`` that can go, in one pass: the renames are collected (a copy
    of a copy reads the first name) and made in one walk at the end."""
    bound, _ = _counts(statements)
    order = {id(s): k for k, s in enumerate(code.walk_statements(statements))}
    first_bound: dict[str, int] = {}  # the first statement (in walk order) binding a name
    for statement in code.walk_statements(statements):
        for name in code.changed_names(statement):
            first_bound.setdefault(name, order[id(statement)])
    last_top: dict[str, int] = {}  # the last top-level statement binding or changing it
    for k, statement in enumerate(statements):
        for inner in code.walk_statements([statement]):
            names = code.changed_names(inner)
            if isinstance(inner, ast.Expr):
                names = code.names(inner)
            for name in names:
                last_top[name] = k
    renames: dict[str, str] = {}

    def resolved(name: str) -> str:
        while name in renames:
            name = renames[name]
        return name

    for block in code.blocks(statements):
        gone = []
        for i, statement in enumerate(block):
            found = _single_name_assign(statement)
            if found is None or not isinstance(found[1], ast.Name):
                continue
            target, value = found[0], resolved(found[1].id)
            if target in keep or bound[target] != 1:
                continue
            final = block is statements and last_top.get(value, -1) <= i
            if bound[value] > 1 and not final:
                continue
            if value in bound and not first_bound.get(value, len(order)) < order[id(statement)]:
                continue
            renames[target] = value
            bound[target] -= 1
            gone.append(i)
        for i in reversed(gone):
            del block[i]
    if renames:
        values = {old: code.name(resolved(old)) for old in renames}
        for statement in statements:
            code.substituted(statement, values)
    return bool(renames)


class _Pending:
    """A statement ``t = value`` waiting for its one reader further down its block."""

    def __init__(self, index: int, statement: ast.Assign, rebound: bool):
        self.index, self.statement, self.rebound = index, statement, rebound
        self.inputs = code.names(statement.value)


def _single_reads(statements: list[ast.stmt], keep: set[str]) -> bool:
    """Every single read, in one pass down each block: a statement that qualifies
    waits (:class:`_Pending`) for the first statement of its block that mentions its
    name, and is written into it there, unless a statement in between changes a name
    its value reads."""
    bound, read = _counts(statements)
    changed = False
    for block in list(code.blocks(statements)):
        pending: dict[str, _Pending] = {}
        gone: list[int] = []
        for j, user in enumerate(block):
            mentioned = code.names(user)
            for target in [t for t in pending if t in mentioned]:
                waiting = pending.pop(target)
                if not isinstance(user, (ast.Assign, ast.AugAssign)):
                    continue  # a compound or call statement reads it: it stays
                if waiting.rebound and not _rereads(user, target):
                    continue
                _Rename(target, waiting.statement.value).visit(user)
                user.origin = getattr(user, "origin", "") or getattr(
                    waiting.statement, "origin", ""
                )
                user.inlined = True  # computes another statement's value too
                bound[target] -= 1
                read[target] -= 1
                gone.append(waiting.index)
                changed = True
            changing = set(code.changed_names(user))
            if not isinstance(user, (ast.Assign, ast.AugAssign)):
                changing |= mentioned  # a compound or call statement may change them
            for target in [t for t, w in pending.items() if w.inputs & changing]:
                del pending[target]
            found = _single_name_assign(user)
            if found is None or not all(
                isinstance(n, _ARITHMETIC + (ast.operator, ast.unaryop, ast.expr_context))
                for n in ast.walk(found[1])
            ):
                continue
            target = found[0]
            once = target not in keep and bound[target] == 1 and read[target] == 1
            pending[target] = _Pending(j, user, rebound=not once)
        for i in sorted(gone, reverse=True):
            del block[i]
    return changed


def _rereads(user: ast.stmt, target: str) -> bool:
    """``t = t + b`` reading ``t`` once: the value of the statement before it is read
    there only."""
    found = _single_name_assign(user)
    reads = sum(
        isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Load)
        for n in ast.walk(user)
    )
    return found is not None and found[0] == target and reads == 1
