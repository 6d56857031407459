"""Stage 7 (specialized backward), stacked — a loop's weight gradient as one product.

The backward of a recurrence (``h = np.tanh(h @ Wh + xs[t] @ Wx + b)`` in a counted
loop) adds a product into a weight's gradient at every replayed step::

    for t in reversed(t1):
        ...
        d_t6 = (d_h_2 + 2 * h_3) * (1 - h_3 * h_3)
        d_Wh += h_2.T @ d_t6
        d_b += d_t6.sum(axis=0)

The sum over the steps of ``A_t.T @ G_t`` is one product of the steps stacked,
``A.T @ G`` with ``A`` and ``G`` of ``n * rows`` rows; so the replay keeps each step's
``G_t`` (and ``A_t``) in an array with one slot per iteration (as :mod:`.reverse.slots`
keeps numbers) and the products and sums come after the loop, once::

    d_t6_all[t] = d_t6
    h_2_all[t] = h_2
    ...
    d_Wh += h_2_all.reshape(-1, 8).T @ d_t6_all.reshape(-1, 8)
    d_b += d_t6_all.sum(axis=(0, 1))

One large product instead of ``n`` small ones and ``n`` passes over the gradient: the
same sum up to float rounding (in another order). A value the step reads as ``xs[t]``
of an array the backward does not change is read stacked as ``xs[:len(t1)]``, with no
copy. Only in a counted loop's replay (its index counts 0, 1, ...: the slots are
indexed by it), with no branch or loop inside, where the gradient accumulated is
neither read nor written elsewhere in the loop (two sums into one gradient, a
weight used twice a step, are both stacked), ``G_t`` and ``A_t`` are bound once per
step and not changed after, and the probe saw them as float matrices of one shape and
dtype (the pair is specialized on them).

It pays where the steps are small, their per-step statements costing more than their
arithmetic: the pair stacks them for arguments under
:data:`~.specialized.RELEASE_FROM` elements. For large steps the slots'
fresh memory and copies cost more than the products save (``rnn large`` of the
benchmarks, 64 x 256 states: 1.08 of hand-written stacked, 0.97 not), and they would
raise the peak memory of a call by the values copied.

>>> import numpy as np
>>> tree = ast.parse(
...     "for t in reversed(t1):\\n"
...     "    h, g_prev = stack.pop()\\n"
...     "    d = g * h\\n"
...     "    d_W += h.T @ d\\n"
...     "    g = d @ W.T").body
>>> facts = {n: ("array", (4, 8), "float64") for n in ("h", "d", "W", "d_W")}
>>> facts["d_W"] = ("array", (8, 8), "float64")
>>> for s in stacked_products(tree, {"t1"}, facts): print(ast.unparse(s))
d_all = iteration_slots(t1, 'float64', (4, 8))
h_all = iteration_slots(t1, 'float64', (4, 8))
for t in reversed(t1):
    h, g_prev = stack.pop()
    h_all[t] = h
    d = g * h
    d_all[t] = d
    g = d @ W.T
d_W += h_all.reshape(-1, 8).T @ d_all.reshape(-1, 8)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from autodiff_tutor.compiler import code

SLOTS = "iteration_slots"


@dataclass
class _Sum:
    """``target += a.T @ g`` (``a`` set) or ``target += g.sum(axis=0)`` (``a`` None)."""

    statement: ast.stmt
    target: str
    g: str
    a: str | None


def stacked_products(
    backward: list[ast.stmt], counted: set[str], facts: dict[str, Any]
) -> list[ast.stmt]:
    """``backward`` with each counted loop's sums of products stacked (see above)."""
    taken = code.names(*backward)
    out: list[ast.stmt] = []
    for statement in backward:
        loop = _counted_replay(statement, counted)
        if loop is None:
            out.append(statement)
            continue
        index, iterations = loop
        before, after = _stack(statement, index, iterations, facts, taken)
        out += [*before, statement, *after]
    return out


def _counted_replay(statement: ast.stmt, counted: set[str]) -> tuple[str, str] | None:
    """``(index, iterations)`` of ``for t in reversed(t1)`` (or ``zip(reversed(t1),
    ...)`` with ``t`` first) over a counted loop's ``t1``, with simple statements only."""
    if not isinstance(statement, ast.For) or statement.orelse:
        return None
    walk, target = statement.iter, statement.target
    if isinstance(walk, ast.Call) and code.is_name(walk.func, "zip") and walk.args:
        walk = walk.args[0]
        target = target.elts[0] if isinstance(target, ast.Tuple) else None
    if not (
        isinstance(walk, ast.Call)
        and code.is_name(walk.func, "reversed")
        and len(walk.args) == 1
        and isinstance(walk.args[0], ast.Name)
        and walk.args[0].id in counted
        and isinstance(target, ast.Name)
    ):
        return None
    if not all(isinstance(s, (ast.Assign, ast.AugAssign, ast.Expr)) for s in statement.body):
        return None
    return target.id, walk.args[0].id


def _stack(
    loop: ast.For, index: str, iterations: str, facts: dict, taken: set[str]
) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """Change ``loop`` in place; the statements to put before and after it."""
    body = loop.body
    sums = [s for s in (_sum_of(st, body, facts) for st in body) if s is not None]
    per_target = {s.target: sum(f.target == s.target for f in sums) for s in sums}
    # a gradient read or written elsewhere in the loop than by these sums stays
    sums = [s for s in sums if _mentions(body, s.target) == per_target[s.target]]
    if not sums:
        return [], []
    before: list[ast.stmt] = []
    after: list[ast.stmt] = []
    stacked: dict[str, ast.expr] = {}  # a name -> its steps stacked, one slot per step

    def stack_of(name: str) -> ast.expr:
        if name not in stacked:
            source = _read_of_index(name, body, index, facts)
            if source is not None:  # xs[t]: xs[:len(t1)] is the stack already
                length = code.call("len", code.name(iterations))
                stacked[name] = ast.Subscript(
                    code.name(source), ast.Slice(None, length), ast.Load()
                )
            else:
                slots = code.fresh_name(f"{name}_all", taken)
                _, shape, dtype = facts[name]
                make = code.call(
                    SLOTS, code.name(iterations), ast.Constant(dtype), ast.Constant(shape)
                )
                before.append(code.assign(slots, make, "slots for the steps of the loop below"))
                write = ast.Assign(
                    [ast.Subscript(code.name(slots), code.name(index), ast.Store())],
                    code.name(name),
                )
                origin = code.origin_of(body[0]) if body else code.origin_of(loop)
                at = next(i for i, s in enumerate(body) if name in code.writes(s))
                body.insert(at + 1, code.with_origin(write, origin))
                stacked[name] = code.name(slots)
        return stacked[name]

    for found in sums:
        body.remove(found.statement)
        g_shape = facts[found.g][1]
        g_rows = _reshaped(stack_of(found.g), g_shape[-1])
        if found.a is None:
            total = ast.Call(
                ast.Attribute(stack_of(found.g), "sum", ast.Load()),
                [],
                [ast.keyword("axis", ast.Constant((0, 1)))],
            )
        else:
            a_rows = _reshaped(stack_of(found.a), facts[found.a][1][-1])
            total = ast.BinOp(ast.Attribute(a_rows, "T", ast.Load()), ast.MatMult(), g_rows)
        update = ast.AugAssign(ast.Name(found.target, ast.Store()), ast.Add(), total)
        after.append(code.with_origin(update, code.origin_of(found.statement)))
    _drop_dead_reads(loop, index)
    ast.fix_missing_locations(loop)
    return before, after


def _sum_of(statement: ast.stmt, body: list[ast.stmt], facts: dict) -> _Sum | None:
    """The sum ``statement`` adds into a gradient, where it can be stacked."""
    if not (
        isinstance(statement, ast.AugAssign)
        and isinstance(statement.op, ast.Add)
        and isinstance(statement.target, ast.Name)
    ):
        return None
    target, value = statement.target.id, statement.value
    found = _product_parts(value) or _column_sum(value)
    if found is None:
        return None
    a, g = found
    g_fact, t_fact = facts.get(g), facts.get(target)
    if not (_matrix(g_fact) and _array(t_fact) and t_fact[2] == g_fact[2]):
        return None
    if not _bound_once_before(body, g, statement):
        return None
    if a is not None:
        a_fact = facts.get(a)
        if not (_matrix(a_fact) and a_fact[2] == g_fact[2] and a_fact[1][0] == g_fact[1][0]):
            return None
        if t_fact[1] != (a_fact[1][1], g_fact[1][1]) or not _bound_once_before(body, a, statement):
            return None
    elif t_fact[1] != (g_fact[1][1],):
        return None
    return _Sum(statement, target, g, a)


def _product_parts(value: ast.expr) -> tuple[str, str] | None:
    """``(a, g)`` of ``a.T @ g``."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.MatMult)):
        return None
    left, right = value.left, value.right
    if not (isinstance(left, ast.Attribute) and left.attr == "T"):
        return None
    if isinstance(left.value, ast.Name) and isinstance(right, ast.Name):
        return left.value.id, right.id
    return None


def _column_sum(value: ast.expr) -> tuple[None, str] | None:
    """``(None, g)`` of ``g.sum(axis=0)``."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "sum"
        and isinstance(value.func.value, ast.Name)
        and not value.args
        and len(value.keywords) == 1
        and value.keywords[0].arg == "axis"
        and isinstance(value.keywords[0].value, ast.Constant)
        and value.keywords[0].value.value == 0
    ):
        return None
    return None, value.func.value.id


def _bound_once_before(body: list[ast.stmt], name: str, statement: ast.stmt) -> bool:
    """``name`` is bound by exactly one statement of ``body``, before ``statement``,
    and nothing changes it in place (``name[...] = ``, ``name += ``)."""
    binders = [i for i, s in enumerate(body) if name in code.writes(s)]
    changed = any(
        isinstance(n, ast.Subscript)
        and isinstance(n.ctx, ast.Store)
        and isinstance(n.value, ast.Name)
        and n.value.id == name
        for s in body
        for n in ast.walk(s)
    )
    in_place = any(isinstance(s, ast.AugAssign) and name in code.writes(s) for s in body)
    return len(binders) == 1 and binders[0] < body.index(statement) and not (changed or in_place)


def _read_of_index(name: str, body: list[ast.stmt], index: str, facts: dict) -> str | None:
    """``xs`` where ``name = xs[t]`` binds ``name``, ``xs`` is an array of such rows
    (not a list) and nothing in the loop binds it."""
    row = facts[name][1]
    for statement in body:
        if isinstance(statement, ast.Assign) and code.is_name(statement.targets[0], name):
            value = statement.value
            if (
                isinstance(value, ast.Subscript)
                and isinstance(value.value, ast.Name)
                and code.is_name(value.slice, index)
                and not any(value.value.id in code.writes(s) for s in body)
            ):
                whole = facts.get(value.value.id)
                if _array(whole) and tuple(whole[1][1:]) == tuple(row):
                    return value.value.id
    return None


def _drop_dead_reads(loop: ast.For, index: str) -> None:
    """``t3 = xs[t]`` whose ``t3`` nothing in the loop reads any more goes."""
    for statement in list(loop.body):
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Subscript):
            target = statement.targets[0]
            if isinstance(target, ast.Name) and _mentions(loop.body, target.id) == 1:
                loop.body.remove(statement)


def _mentions(body: list[ast.stmt], name: str) -> int:
    return sum(1 for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name)


def _reshaped(stacked: ast.expr, columns: int) -> ast.expr:
    """``stacked.reshape(-1, columns)``: the steps' rows one after another."""
    method = ast.Attribute(stacked, "reshape", ast.Load())
    return ast.Call(method, [ast.Constant(-1), ast.Constant(columns)], [])


def _matrix(fact: Any) -> bool:
    return _array(fact) and len(fact[1]) == 2


def _array(fact: Any) -> bool:
    return isinstance(fact, tuple) and fact[0] == "array" and fact[2].startswith("float")
