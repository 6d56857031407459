"""Stage 7b, slots — the numbers a counted loop saves, in arrays instead of on the stack.

A pair specialized on argument shapes and dtypes (:mod:`.specialized`) knows
the dtype of each value from the probe (:mod:`.specialize.facts`). A ``for`` loop over
``range(n)`` at the top level of such a program runs all of its iterations (a
``break`` or ``continue`` is a branch in the loop, which is not specialized, see
:mod:`.specialize.paths`) and its index counts them, 0, 1, ..., so each number an iteration
saves for the backward can be written at the index into an array with one slot per
iteration, made before the loop
(:func:`~autodiff_tutor.runtime.stack.iteration_slots`); the backward's replay of the
iteration walks the slots back with its index
(``for i, t3 in zip(reversed(t1), t3_all[::-1])``). A float64 takes
8 bytes there, where the stack holds a tuple of numpy scalars (about 90 bytes for
three). What is read back is a numpy scalar of the same dtype: the value saved.

A number is kept in a slot when the probe saw it as a numpy scalar of one numeric
dtype (bool, integer, float or complex), or as a float that starts as a Python float
(``s = 0.0`` before the loop) and is a float64 numpy scalar after. That one reads
back as float64 in every iteration: the same number, and the same result where each
read of it in the backward is an operand of ``+ - * /`` whose other operand is float64
numpy (numpy computes it either way); otherwise it stays on the stack, as do arrays,
Python numbers and what a loop nested in another saves.

The dtypes hold for every call with the pair's guard key, as the facts the other
rewrites use do: in a shape-static program a numpy scalar's dtype follows from the
dtypes it is computed from (numpy 2 has no value-based casting), a custom op's outputs
are checked where they are made (:mod:`.specialize.regions`), and Python floats come only from
constants and shapes (``float(x)`` is not shape-static). The arrays are made at each
call for the number of iterations of that call.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import compile_derivative
>>> from autodiff_tutor.compiler.specialized import specialized_pair
>>> def f(x):
...     s = 0.0
...     for i in range(x.shape[0]):
...         s = s * np.cos(x[i]) + x[i]
...     return s
>>> pair = specialized_pair(compile_derivative(f, ["x"]), (np.ones(3),))
>>> print(pair.forward_source)  # doctest: +NORMALIZE_WHITESPACE
def f_forward(x):
    s_2 = 0.0
    t1 = range(x.shape[0])
    t3_all = iteration_slots(t1, 'float64')
    s_2_all = iteration_slots(t1, 'float64')
    for i in t1:
        t2 = x[i]
        t3 = np.cos(t2)
        t3_all[i] = t3
        s_2_all[i] = s_2
        s_2 = s_2 * t3 + t2
    return s_2, (x, t1, t3_all, s_2_all)
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.ir import Loop, Program, counted_loops
from autodiff_tutor.compiler.reverse.memory import Memory, Slots

#: The fact of a float64 numpy scalar (see :func:`~autodiff_tutor.runtime.guards.fact_of`).
FLOAT64 = ("scalar", (), "float64")
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def slot_numbers(
    program: Program,
    backward: list[ast.stmt],
    memory: Memory,
    facts: dict[str, Any],
    kinds: dict[str, set[Any]],
) -> None:
    """Keep in slots what the counted loops at the top level of ``program`` push and
    ``facts`` (one fact per name, ``None`` for several) and ``kinds`` (every fact a
    name had) allow (see the module): ``memory`` and the pops of ``backward`` change in
    place, the forward is built from ``memory`` (:mod:`.reverse.forward`)."""
    used = program.defined_names() | set(program.params)
    for loop in counted_loops(program):
        pushed = memory.pushes.get(id(loop.body))
        if not pushed:
            continue
        dtypes = {}
        for name in pushed:
            dtype = None if name in memory.shape_only else _dtype(name, facts, kinds, backward)
            if dtype is not None and Slots.array(name) not in used:
                dtypes[name] = dtype
        if dtypes:
            _keep_in_slots(loop, Slots(loop.index, loop.iterations, dtypes), memory, backward)


def _dtype(name: str, facts: dict, kinds: dict, backward: list[ast.stmt]) -> str | None:
    """The dtype of ``name``'s slots, or ``None``: it stays on the stack."""
    fact = facts.get(name)
    if isinstance(fact, tuple) and fact[0] == "scalar" and np.dtype(fact[2]).kind in "biufc":
        return fact[2]
    seen = kinds.get(name)
    if seen and seen <= {"float", FLOAT64} and _float64_reads(name, backward, facts):
        return "float64"
    return None


def _float64_reads(name: str, backward: list[ast.stmt], facts: dict) -> bool:
    """Whether every read of ``name`` in ``backward`` is an operand of ``+ - * /`` whose
    other operand is float64 numpy (a Python float there gives what a float64 gives).

    >>> tree = ast.parse("d_t = d_s * s_2 * t2\\nd_u = s_2").body
    >>> facts = {"d_s": ("scalar", (), "float64")}
    >>> _float64_reads("s_2", tree[:1], facts), _float64_reads("s_2", tree, facts)
    (True, False)
    """
    reads = settled = 0
    for statement in code.walk_statements(backward):
        for part in code.own_parts(statement):
            for node in ast.walk(part):
                if isinstance(node, ast.Name) and node.id == name:
                    reads += isinstance(node.ctx, ast.Load)
                if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
                    for mine, other in ((node.left, node.right), (node.right, node.left)):
                        if code.is_name(mine, name) and _float64(other, facts):
                            settled += 1
    return reads == settled


def _float64(node: ast.expr, facts: dict) -> bool:
    """A float64 numpy value: a name the probe saw as one (scalar or array), its
    negation, or ``+ - * /`` of one with another or with a Python number."""
    if isinstance(node, ast.Name):
        fact = facts.get(node.id)
        return isinstance(fact, tuple) and fact[0] in ("scalar", "array") and fact[2] == "float64"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _float64(node.operand, facts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        sides = (node.left, node.right)
        return any(_float64(s, facts) for s in sides) and all(
            _float64(s, facts) or _python_number(s, facts) for s in sides
        )
    return False


def _python_number(node: ast.expr, facts: dict) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    return isinstance(node, ast.Name) and facts.get(node.id) in ("int", "float")


def _keep_in_slots(loop: Loop, slots: Slots, memory: Memory, backward: list[ast.stmt]) -> None:
    """``slots`` for ``loop``: in the memory, and read where the backward popped them:
    its replay ``for i in reversed(t1)`` walks them back with the index,
    ``for i, t3 in zip(reversed(t1), t3_all[::-1])`` (numpy's iterator reads a slot
    faster than an index does)."""
    key = id(loop.body)
    memory.slots[key] = slots
    pushed = [n for n in memory.pushes[key] if n not in slots.dtypes]
    if pushed:
        memory.pushes[key] = pushed
    else:
        del memory.pushes[key]
    pop = memory.pops[key]
    replay = next(s for s in code.walk_statements(backward) if pop in getattr(s, "body", ()))
    if pushed:
        pop.targets = [code.targets(pushed)]
    else:
        replay.body.remove(pop)
    backwards = ast.Slice(None, None, ast.Constant(-1))
    walked = [ast.Subscript(code.name(slots.array(n)), backwards, ast.Load()) for n in slots.dtypes]
    replay.iter = code.call("zip", replay.iter, *walked)
    replay.target = code.targets([slots.index, *slots.dtypes])
    ast.fix_missing_locations(replay)
    at = memory.names.index("stack") if "stack" in memory.names else len(memory.names)
    memory.names[at:at] = [slots.array(n) for n in slots.dtypes]
    if not memory.pushes and "stack" in memory.names:
        memory.names.remove("stack")
