"""Stage 7, memory — what the forward keeps for the backward, decided on the adjoint tree.

*Memory* is the one word for it: the values the forward returns for the backward
(``memory``), the values each loop iteration or branch path pushes on the *stack*
(and the backward pops at the start of its replay of that body), and values kept
only for their shape and dtype (``like(t)``). All of it is read off the backward's
tree with Python's scoping (:func:`~.code.free_reads`): a name bound by a ``for``
header or an earlier statement of the backward is never memory.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import stages
>>> def f(x):
...     return np.sum(x * x)
>>> print(stages(f, ["x"])["memory"])
memory: x, like(t1)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.ir import Loop, Node, Program, Step, loops_in

# Helpers that read one argument (by position) only for its shape and dtype.
SHAPE_READERS = {"unbroadcast": 1, "unreduce": 1, "cast_like": 1, "scatter": 1, "size": 0}


@dataclass
class Memory:
    """What the forward keeps: returned names, shape-only names, and stack pushes."""

    names: list[str]  # returned by the forward, in program order
    shape_only: set[str] = field(default_factory=set)  # kept as like(t): shape and dtype
    pushes: dict[int, list[str]] = field(default_factory=dict)  # id(body) -> names pushed

    def kept(self, name: str) -> ast.expr:
        """What the forward stores for ``name``: the value, or only its shape."""
        return code.call("like", code.name(name)) if name in self.shape_only else code.name(name)

    def describe(self) -> str:
        """A one-line summary, as the stages view shows it."""
        kept = [ast.unparse(self.kept(n)) for n in self.names]
        text = f"memory: {', '.join(kept) or '(nothing)'}"
        pushed = sorted({n for names in self.pushes.values() for n in names})
        return text + (f"; pushed per iteration or path: {', '.join(pushed)}" if pushed else "")


def plan_memory(
    program: Program, backward: list[ast.stmt], seeds: list[str], in_place: bool = True
) -> Memory:
    """Fill in the backward's stack pops and decide the forward's memory.

    ``in_place=False`` (a backward that is differentiated again) keeps whole values,
    never shapes alone.
    """
    pushes: dict[int, list[str]] = {}
    _fill_pops(backward, pushes)
    free = code.free_reads(backward, bound=seeds)
    top = defined_every_run(program.steps, program.params) | {"stack"}
    order = program.params + [n for s in program.all_steps() for n in kept_names(s)]
    order += [n for loop in loops_in(program.steps) for n in (loop.index, loop.counter) if n]
    names = [n for n in dict.fromkeys([*order, "stack"]) if n in free & top]
    shape_only = _shape_only(backward) - program.list_names if in_place else set()
    return Memory(names, shape_only, pushes)


def kept_names(step: Step) -> list[str]:
    """Names a step defines that the backward may read: its targets, and for an op
    call the op's own memory (``t1_memory``)."""
    names = step.defined()
    if step.kind == "op_call":
        names = [*names, f"{step.target}_memory"]
    return names


def defined_every_run(nodes: list[Node], params: list[str] | None = None) -> set[str]:
    """Names a body defines whenever it runs: its steps' targets, nested canonicals, and
    nested loops' counters and indices (an index read after its loop: as in Python, only
    defined when the loop ran)."""
    return set(params or []) | set(_defined_in_order(nodes))


def _defined_in_order(nodes: list[Node]) -> list[str]:
    names: list[str] = []
    for node in nodes:
        if isinstance(node, Step):
            names += kept_names(node)
        else:
            names += list(node.canonical)
            if isinstance(node, Loop):
                names += [n for n in (node.index, node.counter) if n]
    return names


def _fill_pops(statements: list[ast.stmt], pushes: dict[int, list[str]]) -> None:
    """Inner bodies first: a body's pop binds the names it pushed, for the outer body."""
    for statement in statements:
        for body in (getattr(statement, "body", None), getattr(statement, "orelse", None)):
            if body:
                _fill_pops(body, pushes)
                _fill_pop(body, pushes)


def _fill_pop(body: list[ast.stmt], pushes: dict[int, list[str]]) -> None:
    first = body[0]
    replays = getattr(first, "replays", None)
    if replays is None:
        return
    del first.replays  # decided: the placeholder becomes an ordinary statement
    read = code.free_reads(body[1:])
    pushed = [n for n in _ordered(replays) if n in read & defined_every_run(replays)]
    if not pushed:
        del body[0]
        return
    pushes[id(replays)] = pushed
    first.targets = [code.targets(pushed)]


def _ordered(nodes: list[Node]) -> list[str]:
    """Names defined in ``nodes`` (and loop canonicals read there), in program order."""
    names = _defined_in_order(nodes)
    for node in nodes:
        if isinstance(node, Step):
            names += sorted(node.operand_names())
    return list(dict.fromkeys(names))


def _shape_only(backward: list[ast.stmt]) -> set[str]:
    """Names the backward reads only for their shape and dtype.

    >>> statements = [ast.parse("d_a = unbroadcast(d_t, t)").body[0],
    ...               ast.parse("d_b = d_t * u").body[0]]
    >>> sorted(_shape_only(statements))
    ['t']
    """
    shape_uses: set[str] = set()
    other_uses: set[str] = set()
    for statement in code.walk_statements(backward):
        for part in code.own_parts(statement):
            positions = set()
            for node in ast.walk(part):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    position = SHAPE_READERS.get(node.func.id)
                    if position is not None and len(node.args) > position:
                        argument = node.args[position]
                        if isinstance(argument, ast.Name):
                            positions.add(id(argument))
                            shape_uses.add(argument.id)
            for node in ast.walk(part):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    if id(node) not in positions:
                        other_uses.add(node.id)
    return shape_uses - other_uses
