"""Stage 8, the forward — the normalized program, minus what nobody needs, as a tree.

It computes the outputs and keeps the memory the memory stage decided: values at the
top level are returned at the end; values inside branches and loops (which change
from one iteration to the next, or may not exist at all) are pushed on the stack at
the end of each body, exactly what the backward pops there.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import stages
>>> def f(x, n):
...     s = 0.0
...     for i in range(n):
...         s = s + x[i] * x[i]
...     return s
>>> print(stages(f, ["x"])["forward"])
def f_forward(x, n):
    stack = Stack()
    s = 0.0
    s_2 = s
    t1 = range(n)
    for i in t1:
        t2 = x[i]
        t3 = t2 * t2
        s_3 = s_2 + t3
        stack.push((like(t3), like(s_2)))
        s_2 = s_3
    return s_2, (x, t1, stack)
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Program, Step, regions_in, walk_steps
from autodiff_tutor.compiler.origins import statement_origin, step_origin
from autodiff_tutor.compiler.reverse.memory import Memory, Slots
from autodiff_tutor.syntax import copy_tree


def build_forward(program: Program, parsed: ParsedFunction, memory: Memory) -> list[ast.stmt]:
    """The forward's statements, with stack pushes (the return is added by ``emit``)."""
    needed = _needed(program, memory)
    kept = set(memory.names) | {n for names in memory.pushes.values() for n in names}
    kept |= {n for slots in memory.slots.values() for n in slots.dtypes}
    statements: list[ast.stmt] = []
    kept |= {n for names in memory.path_pushes.values() for n in names}
    if memory.pushes:
        origin = "values that branches and loops overwrite"
        statements.append(code.assign("stack", code.call("Stack"), origin))
    if memory.path_pushes:
        origin = "the path that branches and loops take"
        statements.append(code.assign("path", code.call("PathStack"), origin))

    def block(nodes: list[Node], region: str = "") -> list[ast.stmt]:
        """``nodes`` (the body of ``region``: its origin, for the pushes at its end)."""
        out: list[ast.stmt] = []
        trailing_copies = []
        for node in nodes:
            if isinstance(node, Step):
                if not set(node.defined()) & needed:
                    continue
                if node.copy_back:
                    trailing_copies.append(node)
                    continue
                origin = step_origin(parsed, node)
                check = code.in_place_check(node.value, origin) if node.augmented else None
                out += [check] if check is not None else []
                out.append(_step_statement(node, kept, origin))
            elif isinstance(node, Branch):
                if _region_needed(node, needed):
                    origin = statement_origin(parsed, node.origin)
                    body = block(node.body, origin)
                    orelse = block(node.orelse, origin)
                    out.append(code.if_else(node.test, body, orelse, origin))
            elif _region_needed(node, needed):
                slots = memory.slots.get(id(node.body))
                out += _allocations(slots) if slots else []
                origin = statement_origin(parsed, node.origin)
                out += _loop(node, block(node.body, origin), origin)
        pushed = memory.pushes.get(id(nodes))
        if pushed:
            kept_values = [memory.kept(n) for n in pushed]
            # beside a path stack, the values go as a list: differentiated again, the
            # gradient of what is popped is a list of the items' gradients
            saved = ast.List if memory.split_path else ast.Tuple
            push = code.method("stack", "push", saved(kept_values, ast.Load()))
            out.append(code.expression(push, region))
        path = memory.path_pushes.get(id(nodes))
        if path:
            decided = ast.Tuple([memory.kept(n) for n in path], ast.Load())
            out.append(code.expression(code.method("path", "push", decided), region))
        slots = memory.slots.get(id(nodes))
        out += _slot_writes(slots) if slots else []
        out += [
            code.assign(s.target, copy_tree(s.value), step_origin(parsed, s))
            for s in trailing_copies
        ]
        return out

    return statements + block(program.steps)


def _allocations(slots: Slots) -> list[ast.stmt]:
    """``t3_all = iteration_slots(t1, 'float64')``: before the loop, for each number it
    keeps in slots."""
    return [
        code.assign(
            Slots.array(name),
            code.call("iteration_slots", code.name(slots.iterations), ast.Constant(dtype)),
        )
        for name, dtype in slots.dtypes.items()
    ]


def _slot_writes(slots: Slots) -> list[ast.stmt]:
    """``t3_all[i] = t3``: at the end of the body, where a push would be."""
    writes = []
    for name in slots.dtypes:
        slot = ast.Subscript(code.name(Slots.array(name)), code.name(slots.index), ast.Store())
        writes.append(code.with_origin(ast.Assign([slot], code.name(name))))
    return writes


def _loop(node: Loop, body: list[ast.stmt], origin: str) -> list[ast.stmt]:
    if node.kind == "for":
        return [code.for_loop(node.index, code.name(node.iterations), body, origin)]
    count = node.counter
    body = [*body, code.assign(count, ast.BinOp(code.name(count), ast.Add(), ast.Constant(1)))]
    return [
        code.assign(count, ast.Constant(0)),
        code.while_loop(copy_tree(node.test), body, origin),
    ]


def _needed(program: Program, memory: Memory) -> set[str]:
    """Names the forward must compute: outputs, memory, stack contents, and their inputs."""
    needed = set(program.outputs) | {m.removesuffix("_memory") for m in memory.names}
    needed |= {s.target for s in program.all_steps() if s.kind == "effect"}
    # a stack read again is pushed and popped in full, or its pops would go out of step
    needed |= {s.target for s in program.all_steps() if s.kind in ("push", "pop")}
    needed |= {n.removesuffix("_memory") for names in memory.pushes.values() for n in names}
    needed |= {n for names in memory.path_pushes.values() for n in names}
    needed |= {n for slots in memory.slots.values() for n in slots.dtypes}
    steps = program.all_steps()
    regions = regions_in(program.steps)
    changed = True
    while changed:
        changed = False
        for step in steps:
            if set(step.defined()) & needed and not step.operand_names() <= needed:
                needed |= step.operand_names()
                changed = True
        for region in regions:
            if _region_needed(region, needed):
                control = _control_names(region)
                if not control <= needed:
                    needed |= control
                    changed = True
    return needed


def _region_needed(region: Branch | Loop, needed: set[str]) -> bool:
    bodies = region.body + (region.orelse if isinstance(region, Branch) else [])
    return any(set(s.defined()) & needed for s in walk_steps(bodies))


def _control_names(region: Branch | Loop) -> set[str]:
    if isinstance(region, Branch):
        return {region.test}
    if region.kind == "for":
        return {region.iterations}
    return code.names(region.test)


def _step_statement(step: Step, kept: set[str], origin: str) -> ast.stmt:
    if step.kind == "effect":  # print, assert, raise: the user's statement, once
        return code.with_origin(copy_tree(step.statement), origin)
    value = copy_tree(step.value)
    value.origin = origin  # kept where inlining moves it (a specialized forward)
    if step.kind == "push":  # stack.push(values): kept for its effect
        return code.expression(value, origin)
    if step.kind == "op_call" and f"{step.target}_memory" in kept:
        forward = ast.Attribute(value.func, "op_forward", ast.Load())
        targets = [code.targets(step.defined()), code.targets(f"{step.target}_memory")]
        statement = ast.Assign([ast.Tuple(targets, ast.Store())], code.call(forward, *value.args))
        return code.with_origin(statement, origin)
    names = step.targets if step.targets else step.target
    return code.assign(names, value, origin)


def release_dead(forward: list[ast.stmt], keep: set[str]) -> list[ast.stmt]:
    """The forward with ``del`` after the last read of each top-level value that is
    neither kept (memory, outputs: ``keep``) nor read later: large intermediate arrays
    are freed as soon as they are dead, not when the forward returns (the specialized
    forward of large arguments, where this lowers the peak memory of a call).

    >>> tree = ast.parse("a = x * 2\\nb = a + 1\\nout = b * b").body
    >>> print(ast.unparse(release_dead(tree, {"x", "out"})))
    a = x * 2
    b = a + 1
    del a
    out = b * b
    del b
    """
    last: dict[str, int] = {}
    for i, statement in enumerate(forward):
        for name in code.reads(statement):
            last[name] = i
    assigned = {
        t.id
        for s in forward
        if isinstance(s, ast.Assign)
        for t in s.targets
        if isinstance(t, ast.Name)
    }
    dead: dict[int, list[str]] = {}
    for name, i in last.items():
        if name in assigned and name not in keep:
            dead.setdefault(i, []).append(name)
    out: list[ast.stmt] = []
    for i, statement in enumerate(forward):
        out.append(statement)
        if dead.get(i):
            targets = [ast.Name(n, ast.Del()) for n in sorted(dead[i])]
            out.append(ast.fix_missing_locations(ast.Delete(targets)))
    return out
