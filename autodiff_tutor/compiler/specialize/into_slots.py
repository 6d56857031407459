"""Stage 7 (specialized backward), into slots — a large step's gradient made in its slot.

Where a gradient that :mod:`.specialize.stacked` keeps in slots is large, the in-place
rewrite (:mod:`.specialize.inplace`) makes it as one fresh array updated in place, which the
step then copies into its slot::

    d_t6 = 2 * h_3
    d_t6 += d_h_2
    d_t6 *= 1 - h_3 * h_3
    d_t6_all[t] = d_t6

Made in the slot instead, the fresh array and the copy go::

    d_t6 = d_t6_all[t]
    np.multiply(2, h_3, out=d_t6)
    d_t6 += d_h_2
    d_t6 *= 1 - h_3 * h_3

The same ufunc loops into other memory: the same values. Only where nothing after the
copy changes the gradient in place (the slot would see it).
"""

from __future__ import annotations

import ast
from typing import Any

from autodiff_tutor.compiler import code

#: The ufunc of each operator a first in-place step may start with.
_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.MatMult: "matmul"}


def into_slots(backward: list[ast.stmt], scope: dict[str, Any]) -> list[ast.stmt]:
    """``backward`` (its loops changed in place) with each large gradient made in its
    slot (see the module); needs a name of numpy in ``scope``.

    >>> import numpy as np
    >>> body = ast.parse("for t in r:\\n d = 2 * h\\n d += g\\n d_all[t] = d").body
    >>> print(ast.unparse(into_slots(body, {"np": np})))
    for t in r:
        d = d_all[t]
        np.multiply(2, h, out=d)
        d += g
    """
    numpy = code.numpy_name(scope)
    for loop in backward:
        if numpy is None or not isinstance(loop, ast.For):
            continue
        body = loop.body
        for statement in list(body):
            found = _slot_copy(statement)
            if found is None:
                continue
            name, slot = found
            at = body.index(statement)
            first = _chain_start(body, name, at)
            if first is None or any(_changes(later, name) for later in body[at + 1 :]):
                continue  # the slot would see a later change
            made = body[first].value
            ufunc = ast.Attribute(code.name(numpy), _UFUNCS[type(made.op)], ast.Load())
            write = ast.Expr(
                ast.Call(ufunc, [made.left, made.right], [ast.keyword("out", code.name(name))])
            )
            origin = code.origin_of(body[first])
            body[first : first + 1] = [
                code.with_origin(ast.Assign([code.targets(name)], slot), origin),
                code.with_origin(write, origin),
            ]
            body.remove(statement)
    return backward


def _slot_copy(statement: ast.stmt) -> tuple[str, ast.expr] | None:
    """``(d, d_all[t])`` of ``d_all[t] = d``."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Subscript) and isinstance(value, ast.Name):
        slot = ast.Subscript(target.value, target.slice, ast.Load())
        return value.id, slot
    return None


def _chain_start(body: list[ast.stmt], name: str, end: int) -> int | None:
    """The index of ``name = a <op> b``, followed up to ``end`` only by statements that
    update ``name`` in place (``name += ...``, ``np.tanh(name, out=name)``) and do not
    read it otherwise."""
    for i in range(end - 1, -1, -1):
        statement = body[i]
        if isinstance(statement, ast.Assign) and name in code.writes(statement):
            value = statement.value
            simple = isinstance(value, ast.BinOp) and type(value.op) in _UFUNCS
            return i if simple and not code.mentions(value, name) else None
        if isinstance(statement, ast.AugAssign) and code.is_name(statement.target, name):
            continue
        if isinstance(statement, ast.Expr) and _updates_with_out(statement.value, name):
            continue
        if code.mentions(statement, name):
            return None
    return None


def _changes(statement: ast.stmt, name: str) -> bool:
    """Whether ``statement`` changes the array ``name`` holds (``name += ``, ``out=name``,
    ``name[...] = ``)."""
    if isinstance(statement, ast.AugAssign) and code.is_name(statement.target, name):
        return True
    stores = (
        isinstance(n, ast.Subscript)
        and isinstance(n.ctx, ast.Store)
        and code.is_name(n.value, name)
        for n in ast.walk(statement)
    )
    calls = (_updates_with_out(n, name) for n in ast.walk(statement))
    return any(stores) or any(calls)


def _updates_with_out(value: ast.expr, name: str) -> bool:
    return isinstance(value, ast.Call) and any(
        k.arg == "out" and code.is_name(k.value, name) for k in value.keywords
    )
