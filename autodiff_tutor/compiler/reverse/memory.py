"""Stage 7, memory — what the forward keeps for the backward, decided on the adjoint tree.

*Memory* is the one word for it: the values the forward returns for the backward
(``memory``), the values each loop iteration or branch path pushes on the *stack*
(and the backward pops at the start of its replay of that body), and values kept
only for their shape and dtype (``like(t)``, which lets a large temporary be freed; a
parameter is kept whole, as the caller holds it anyway). All of it is read off the backward's
tree with Python's scoping (:func:`~.code.free_reads`): a name bound by a ``for``
header or an earlier statement of the backward is never memory.

A value an iteration reads out of a parameter at the loop's index (``t2 = x[i]``) is
not pushed: the backward's replay of the iteration binds the same index and reads it
again (:func:`rereads`), as the parameter is never written (normalization refuses
writes into parameters, and no call that could change it in place reads it).

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
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.compiler.ir import Loop, Node, Program, Step, loops_in
from autodiff_tutor.compiler.origins import step_origin
from autodiff_tutor.syntax import copy_tree

# Helpers that read one argument (by position) only for its shape and dtype.
SHAPE_READERS = {"unbroadcast": 1, "unreduce": 1, "cast_like": 1, "scatter": 1, "size": 0}


@dataclass
class Slots:
    """Numbers a counted loop keeps in arrays, one slot per iteration at its index
    (a specialized pair, see :mod:`.reverse.slots`)."""

    index: str
    iterations: str
    dtypes: dict[str, str]  # name -> the dtype of its array

    @staticmethod
    def array(name: str) -> str:
        """The name of the array of ``name`` 's slots.

        >>> Slots.array("t3")
        't3_all'
        """
        return f"{name}_all"


@dataclass
class Memory:
    """What the forward keeps: returned names, shape-only names, and stack pushes."""

    names: list[str]  # returned by the forward, in program order
    shape_only: set[str] = field(default_factory=set)  # kept as like(t): shape and dtype
    pushes: dict[int, list[str]] = field(default_factory=dict)  # id(body) -> names pushed
    #: id(body) -> names pushed on the path stack (a backward differentiated again keeps
    #: what decides the path apart from the values, see ``plan_memory``)
    path_pushes: dict[int, list[str]] = field(default_factory=dict)
    split_path: bool = False  # the values pushed apart from the path (see above)
    pops: dict[int, ast.Assign] = field(default_factory=dict)  # id(body) -> its pop
    slots: dict[int, Slots] = field(default_factory=dict)  # id(loop body) -> its slots

    def kept(self, name: str) -> ast.expr:
        """What the forward stores for ``name``: the value, or only its shape."""
        return code.call("like", code.name(name)) if name in self.shape_only else code.name(name)

    def describe(self) -> str:
        """A one-line summary, as the stages view shows it."""
        kept = [ast.unparse(self.kept(n)) for n in self.names]
        text = f"memory: {', '.join(kept) or '(nothing)'}"
        pushed = sorted(
            {n for d in (self.pushes, self.path_pushes) for ns in d.values() for n in ns}
        )
        text += f"; pushed per iteration or path: {', '.join(pushed)}" if pushed else ""
        slotted = sorted({n for slots in self.slots.values() for n in slots.dtypes})
        return text + (f"; in slots per iteration: {', '.join(slotted)}" if slotted else "")


def plan_memory(
    program: Program,
    backward: list[ast.stmt],
    seeds: list[str],
    in_place: bool = True,
    parsed: ParsedFunction | None = None,
    values: set[str] | None = None,
) -> Memory:
    """Fill in the backward's stack pops and decide the forward's memory.

    ``in_place=False`` (a backward that is differentiated again) keeps whole values,
    never shapes alone, and pushes what it reads again elsewhere; ``parsed``: the
    user's function, for the line comments of the values read again (none without).
    ``values``: the names that may carry gradient for some ``wrt`` (a backward
    differentiated again): they are pushed on the value stack, as a list, and the rest
    (branch tests, counts, indices) on the path stack, which never carries gradient.
    """
    memory = Memory([], split_path=values is not None)
    again = rereads(program) if in_place and parsed is not None else Rereads()
    _fill_pops(backward, memory, again, set(), parsed, values)
    free = code.free_reads(backward, bound=seeds)
    top = defined_every_run(program.steps, program.params) | {"stack", "path"}
    order = program.params + [n for s in program.all_steps() for n in kept_names(s)]
    order += [n for loop in loops_in(program.steps) for n in (loop.index, loop.counter) if n]
    names = [n for n in dict.fromkeys([*order, "stack", "path"]) if n in free & top]
    memory.names = names
    # a parameter is the caller's value, alive anyway: kept whole, it costs nothing
    whole = program.list_names | set(program.params)
    memory.shape_only = _shape_only(backward) - whole if in_place else set()
    return memory


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


@dataclass
class Rereads:
    """What the backward may read again instead of popping (see :func:`rereads`)."""

    steps: dict[str, Step] = field(default_factory=dict)  # t -> its step t = x[i]
    loops: set[tuple[str, str]] = field(default_factory=set)  # (index, iterations) of fors


def rereads(program: Program) -> Rereads:
    """The steps ``t = x[i]`` of loop bodies that the backward may run again: ``t``
    bound once, ``x`` a parameter that no call the compiler cannot see into reads (it
    could change it in place), the index made of names and constants (which names
    the backward binds to the same values is decided where it is read, see
    :func:`_fill_pop`).

    >>> from autodiff_tutor.compiler.pipeline import front_end
    >>> def f(x, y):
    ...     s = 0.0
    ...     for i in range(x.shape[0]):
    ...         s = s * x[i] + y[i, 0] * y[i:, 1].sum()
    ...     return s
    >>> sorted(rereads(front_end(f).program).steps)
    ['t2', 't4', 't5']
    """
    steps, counts = program.all_steps(), program.bindings()
    unseen = {"opaque", "op_call", "escape"}
    touched = {n for s in steps if s.kind in unseen for n in s.operand_names()}
    inner = {id(s) for loop in loops_in(program.steps) for s in loop.body}
    found = {}
    for step in steps:
        base = step.inputs.get("x")
        index = step.options.get("index")
        if step.op != "getitem" or id(step) not in inner or index is None:
            continue
        if not (isinstance(base, ast.Name) and base.id in program.params):
            continue
        if base.id in touched or counts.get(step.target) != 1 or not _plain_index(index):
            continue
        found[step.target] = step
    fors = {(loop.index, loop.iterations) for loop in loops_in(program.steps) if loop.kind == "for"}
    return Rereads(found, fors)


def _plain_index(index: ast.expr) -> bool:
    """An index of names, integer constants, slices and tuples of them: the same
    elements whenever its names hold the same values."""
    if isinstance(index, ast.Name):
        return True
    if isinstance(index, ast.Constant):
        return index.value is None or type(index.value) is int
    if isinstance(index, ast.Tuple):
        return all(_plain_index(e) for e in index.elts)
    if isinstance(index, ast.Slice):
        return all(p is None or _plain_index(p) for p in (index.lower, index.upper, index.step))
    return False


def _fill_pops(
    statements: list[ast.stmt],
    memory: Memory,
    again: Rereads,
    indices: set[str],
    parsed: ParsedFunction | None,
    values: set[str] | None = None,
) -> None:
    """Inner bodies first: a body's pop binds the names it pushed, for the outer body.
    ``indices``: the forward's loop indices that the backward's replays of ``for``
    loops around ``statements`` bind (``for i in reversed(t1)``), none rebound by
    another loop since.

    The pop at the start of a body: the names it reads that its forward body
    defined, less those read again from a parameter at indices the loops around it
    bind (``t2 = x[i]``: the backward's ``for i in reversed(t1)`` binds the forward's
    ``i`` of that iteration, and a name the program binds once is not an index the
    body changes)."""
    for statement in statements:
        inside = indices
        if isinstance(statement, ast.For):
            inside = indices - code.bound_names(statement.target)
            if _replays_for(statement, again.loops):
                inside = inside | code.bound_names(statement.target)
        for body in (getattr(statement, "body", None), getattr(statement, "orelse", None)):
            if body:
                _fill_pops(body, memory, again, inside, parsed, values)
    first = statements[0] if statements else None
    replays = getattr(first, "replays", None)
    if replays is None:
        return
    del first.replays  # decided: the placeholder becomes an ordinary statement
    read = code.free_reads(statements[1:])
    needed = [n for n in _ordered(replays) if n in read & defined_every_run(replays)]
    direct = {id(node) for node in replays}
    steps = [again.steps[n] for n in needed if n in again.steps]
    reread = [
        step
        for step in steps
        if id(step) in direct
        and _index_names(step) <= indices
        and not _index_names(step) & defined_every_run(replays)
    ]
    rereading = [
        code.assign(step.target, copy_tree(step.value), step_origin(parsed, step, "backward"))
        for step in reread
    ]
    pushed = [n for n in needed if n not in {s.target for s in reread}]
    path = []
    if values is not None:  # values on the stack, what decides the path on its own
        pushed, path = [n for n in pushed if n in values], [n for n in pushed if n not in values]
    pops = []
    if pushed:
        memory.pushes[id(replays)] = pushed
        memory.pops[id(replays)] = first
        first.targets = [code.targets(pushed)]
        pops.append(first)
    if path:
        memory.path_pushes[id(replays)] = path
        pops.append(code.assign(path, code.method("path", "pop"), code.origin_of(first)))
    statements[:1] = [*pops, *rereading]


def _replays_for(statement: ast.For, loops: set[tuple[str, str]]) -> bool:
    """``for i in reversed(t1)``: the replay of a forward ``for i in t1`` (``loops``:
    their indices and iterations; a ``while`` loop's replay, ``for _ in
    range(count)``, binds no forward index)."""
    iterable, target = statement.iter, statement.target
    if not (isinstance(iterable, ast.Call) and ast.unparse(iterable.func) == "reversed"):
        return False
    iterations = iterable.args[0] if len(iterable.args) == 1 else None
    if not (isinstance(target, ast.Name) and isinstance(iterations, ast.Name)):
        return False
    return (target.id, iterations.id) in loops


def _index_names(step: Step) -> set[str]:
    return code.names(step.options["index"])


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
