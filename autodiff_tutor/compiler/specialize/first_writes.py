"""Stage 6e, first writes — adding a gradient into zeros is writing it.

A gradient the backward accumulates starts as ``d_x = zeros_like(x)``. Where the first
statement that touches it adds into one part, ``d_x[s] += g``, the part holds zeros
then, so ``d_x[s] = g`` gives the same array with one pass fewer (no read of the zeros,
no addition). The same holds, iteration by iteration, for the replay of a loop whose
index counts its iterations from 0 (:func:`~.ir.counted_loops`) when the only touch
of ``d_x`` in its body is ``d_x[i] += g`` at that index: the indices differ from one
iteration to the next, so each write finds zeros.

This runs in a pair specialized on shapes and dtypes (:mod:`.specialized`):
only where every value the probe saw is real (:mod:`.specialize.facts`), as assigning a complex
value to a real array would drop its imaginary part where ``+=`` fails loudly.

>>> tree = ast.parse("d_x = zeros_like(x)\\nfor i in reversed(t1):\\n    d_x[i] += g * i").body
>>> print(ast.unparse(first_writes(tree, {"d_x": ("array", (3,), "float64")}, {"t1"})))
d_x = zeros_like(x)
for i in reversed(t1):
    d_x[i] = g * i
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from autodiff_tutor.compiler import code


def first_writes(
    statements: list[ast.stmt], facts: dict[str, Any], counted: set[str] = frozenset()
) -> list[ast.stmt]:
    """``d_x = zeros_like(x)`` then ``d_x[s] += g`` (the next statement of the block
    that reads ``d_x``, or the only one touching it in the replay of a loop over
    ``counted``, at its index): ``d_x[s] = g`` (see the module).

    >>> tree = ast.parse("d_x = zeros_like(x)\\nd_x[1:] += g\\nd_x[:-1] += h").body
    >>> print(ast.unparse(first_writes(tree, {"d_x": ("array", (3,), "float64")})))
    d_x = zeros_like(x)
    d_x[1:] = g
    d_x[:-1] += h
    """
    if any(isinstance(f, tuple) and np.dtype(f[2] or "f8").kind == "c" for f in facts.values()):
        return statements
    for i, statement in enumerate(statements):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        fresh = isinstance(value, ast.Call) and ast.unparse(value.func) == "zeros_like"
        if not (isinstance(target, ast.Name) and fresh and _array(facts.get(target.id))):
            continue  # an array (a list of zeros would alias what is written into it)
        follower = next((s for s in statements[i + 1 :] if code.mentions(s, target.id)), None)
        if isinstance(follower, ast.For):
            body, follower = follower.body, _only_write(follower, target.id, counted)
        else:
            body = statements
        if follower is not None and _adds_into(follower, target.id):
            write = ast.Assign([follower.target], follower.value)
            write.origin = getattr(follower, "origin", "")
            body[body.index(follower)] = ast.fix_missing_locations(
                ast.copy_location(write, follower)
            )
    return statements


def _only_write(loop: ast.For, name: str, counted: set[str]) -> ast.stmt | None:
    """In the replay ``for i in reversed(t1)`` of a loop over ``t1`` in ``counted``:
    the one statement of its body that touches ``name``, ``name[i] += ...`` at its own
    level, with ``i`` bound by the header alone; else ``None``."""
    iterable, index = loop.iter, loop.target
    if not (isinstance(iterable, ast.Call) and ast.unparse(iterable.func) == "reversed"):
        return None
    iterations = iterable.args[0] if len(iterable.args) == 1 else None
    if not (isinstance(iterations, ast.Name) and iterations.id in counted):
        return None
    if not isinstance(index, ast.Name):
        return None
    inner = list(code.walk_statements(loop.body))
    if any(index.id in code.writes(s) for s in inner):
        return None
    touching = [s for s in inner if code.mentions(s, name)]
    if len(touching) != 1 or touching[0] not in loop.body:
        return None
    write = touching[0]
    target = write.target if isinstance(write, ast.AugAssign) else None
    at = target.slice if isinstance(target, ast.Subscript) else None
    return write if isinstance(at, ast.Name) and at.id == index.id else None


def _adds_into(statement: ast.stmt, name: str) -> bool:
    """``name[s] += g``, with neither ``s`` nor ``g`` reading ``name``."""
    return (
        isinstance(statement, ast.AugAssign)
        and isinstance(statement.op, ast.Add)
        and isinstance(statement.target, ast.Subscript)
        and isinstance(statement.target.value, ast.Name)
        and statement.target.value.id == name
        and not code.mentions(statement.value, name)
        and not code.mentions(statement.target.slice, name)
    )


def _array(fact: Any) -> bool:
    """An array of at least one axis."""
    return isinstance(fact, tuple) and fact[0] == "array" and bool(fact[1])
