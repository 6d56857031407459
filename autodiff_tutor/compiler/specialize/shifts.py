"""Stage 6e, shifts — the stabilizing maximum of a log-sum-exp has no gradient.

``lse = log(sum(exp(z - m), axis)) + m`` is the same function of ``z`` for every
``m``: the maximum ``m = max(z, axis, keepdims=True)`` subtracted for stability
changes only the rounding. Its two gradient contributions (through ``z - m`` and
through ``+ m``) cancel exactly in exact arithmetic, so the backward that computes
them, adds them and sends the (rounding-sized) difference back through ``max``
(``tie_share``) does passes whose result is zero. :func:`shift_names` finds such
``m`` in a program; :func:`drop_shift_gradients` removes their gradient statements
from a backward, or leaves it as it is when the gradient is read anywhere else.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(z):
...     m = np.max(z, axis=1, keepdims=True)
...     return np.sum(np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m)
>>> sorted(shift_names(front_end(f).program))
['m']
>>> tree = ast.parse("d_m = unbroadcast(d_lse, m)\\nd_z = d_z + d_t4\\n"
...                  "d_m = d_m + unbroadcast(-d_t4, m)\\n"
...                  "d_z += unreduce(d_m, z, axis=1) * tie_share(z, m, axis=1)").body
>>> [ast.unparse(s) for s in drop_shift_gradients(tree, {"m"}, "d_")]
['d_z = d_z + d_t4']
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.ir import Program, Step

_SPREADS = ("unreduce", "unbroadcast")


def shift_names(program: Program) -> set[str]:
    """Names ``m = max(z, axis=a, keepdims=True)`` read only by ``t = z - m`` and
    ``lse = log(sum(exp(t), axis=a, keepdims=True)) + m`` (each value read once, by
    the next step of the chain; every name defined once, at the top level)."""
    steps = {s.target: s for s in program.steps if isinstance(s, Step)}
    defined: dict[str, int] = {}
    readers: dict[str, list[Step]] = {}
    for step in program.all_steps():
        for name in step.defined():
            defined[name] = defined.get(name, 0) + 1
        for value in step.inputs.values():
            for node in ast.walk(value):
                if isinstance(node, ast.Name):
                    readers.setdefault(node.id, []).append(step)
    found = set()
    for m, step in steps.items():
        if step.op not in ("max", "amax") or _option(step, "keepdims") != "True":
            continue
        z = _input(step, "x")
        users = readers.get(m, [])
        if z is None or len(users) != 2 or defined.get(m) != 1 or m in program.outputs:
            continue
        shift = next((u for u in users if u.op == "subtract" and _input(u, "y") == m), None)
        if shift is None or _input(shift, "x") != z:
            continue
        chain = _follow(shift.target, ("exp", "sum", "log"), readers, defined)
        if chain is None or _option(chain[1], "axis") != _option(step, "axis"):
            continue
        if _option(chain[1], "keepdims") != "True":
            continue
        logged = readers.get(chain[2].target, [])
        if [u for u in users if u is not shift] != logged or len(logged) != 1:
            continue
        total = logged[0]
        if total.op == "add" and {_input(total, "x"), _input(total, "y")} == {chain[2].target, m}:
            found.add(m)
    return found


def _follow(
    name: str, ops: tuple[str, ...], readers: dict[str, list[Step]], defined: dict[str, int]
) -> list[Step] | None:
    """The steps reading ``name``, then their result, ... with the ops ``ops``, each
    the only reader of the value before it."""
    chain = []
    for op in ops:
        users = readers.get(name, [])
        if len(users) != 1 or users[0].op != op or _input(users[0], "x") != name:
            return None
        if defined.get(users[0].target) != 1:
            return None
        chain.append(users[0])
        name = users[0].target
    return chain


def _input(step: Step, key: str) -> str | None:
    value = step.inputs.get(key)
    return value.id if isinstance(value, ast.Name) else None


def _option(step: Step, key: str) -> str | None:
    value = step.options.get(key)
    return ast.unparse(value) if value is not None else None


def drop_shift_gradients(
    statements: list[ast.stmt], names: set[str], prefix: str
) -> list[ast.stmt]:
    """``statements`` without those that compute the gradient of each name in
    ``names`` (bind ``d_m``) or add it back through the maximum (``d_z += d_m *
    ...``, ``d_m`` spread by ``unreduce``/``unbroadcast`` allowed); unchanged for a
    name whose gradient another statement reads."""
    for name in names:
        gradient = prefix + name
        kept = [s for s in statements if not (_binds(s, gradient) or _adds_product_of(s, gradient))]
        if not any(code.mentions(s, gradient) for s in kept):
            statements = kept
    return statements


def _binds(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, ast.AugAssign):
        return isinstance(statement.target, ast.Name) and statement.target.id == name
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    return len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == name


def _adds_product_of(statement: ast.stmt, name: str) -> bool:
    """``x += <a product with the factor name>`` (zero when ``name`` is zero)."""
    if not (isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add)):
        return False
    if code.mentions(statement.target, name):
        return False
    return any(_is_factor(f, name) for f in _factors(statement.value))


def _factors(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _is_factor(node: ast.expr, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name
    spread = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    if spread and node.func.id in _SPREADS and node.args:
        return isinstance(node.args[0], ast.Name) and node.args[0].id == name
    return False
