"""The forward function: the normalized program, minus what nobody needs.

It computes the outputs and keeps the *memory* for the backward: values at the
top level are returned at the end; values inside branches and loops (which change
from one iteration to the next, or may not exist at all) are pushed on the tape at
the end of each body, exactly what the backward pops there.

>>> from autodiff_tutor.compiler.ir import Step
>>> import ast
>>> sorted(pushable([Step("a", ast.Constant(1.0), "static")]))
['a']
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.ir import Branch, Loop, Node, Program, Step, tuple_source, walk_steps
from autodiff_tutor.compiler.source import ParsedFunction


def pushable(nodes: list[Node], params: list[str] | None = None) -> set[str]:
    """Names a body defines in every run of it: its steps' targets and nested canonicals."""
    names = set(params or [])
    for node in nodes:
        if isinstance(node, Step):
            names |= set(node.defined())
            if node.kind == "op_call":
                names.add(f"{node.target}_saved")
        else:
            names |= set(node.canonical)
            if isinstance(node, Loop):
                names |= {n for n in (node.counter, node.index) if n}
    return names


def _needed(program: Program, memory: set[str], pushes: dict[int, list[str]]) -> set[str]:
    """Names the forward must compute: outputs, memory, tape contents, and their inputs."""
    needed = set(program.outputs) | {m.removesuffix("_saved") for m in memory}
    needed |= {n.removesuffix("_saved") for names in pushes.values() for n in names}
    steps = program.all_steps()
    regions = _regions(program.steps)
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


def _regions(nodes: list[Node]) -> list[Branch | Loop]:
    found: list[Branch | Loop] = []
    for node in nodes:
        if isinstance(node, Branch):
            found += [node, *_regions(node.body), *_regions(node.orelse)]
        elif isinstance(node, Loop):
            found += [node, *_regions(node.body)]
    return found


def _region_needed(region: Branch | Loop, needed: set[str]) -> bool:
    bodies = region.body + (region.orelse if isinstance(region, Branch) else [])
    return any(set(s.defined()) & needed for s in walk_steps(bodies))


def _control_names(region: Branch | Loop) -> set[str]:
    if isinstance(region, Branch):
        return {region.test}
    if region.kind == "for":
        return {region.iterations}
    names = {n.id for n in ast.walk(region.test) if isinstance(n, ast.Name)}
    return names


def forward_lines(
    program: Program,
    parsed: ParsedFunction,
    memory: set[str],
    pushes: dict[int, list[str]],
    shape_only: set[str] = frozenset(),
):
    """The forward's statements (as reverse.Line objects), with tape pushes."""
    from autodiff_tutor.compiler.reverse import Line, _origin

    needed = _needed(program, memory, pushes)
    lines: list[Line] = []
    if "tape" in memory:
        lines.append(Line("tape = Tape()", "values that branches and loops overwrite", 0))

    def block(nodes: list[Node], depth: int) -> None:
        start = len(lines)
        trailing_copies = []
        for node in nodes:
            if isinstance(node, Step):
                if not set(node.defined()) & needed:
                    continue
                if node.copy_back:
                    trailing_copies.append(node)
                    continue
                lines.append(
                    Line(
                        _step_source(node, memory | set(_all_pushed(pushes))),
                        _origin(parsed, node),
                        depth,
                    )
                )
            elif isinstance(node, Branch):
                if _region_needed(node, needed):
                    lines.append(Line(f"if {node.test}:", "", depth))
                    block(node.body, depth + 1)
                    if (
                        any(set(s.defined()) & needed for s in walk_steps(node.orelse))
                        or id(node.orelse) in pushes
                    ):
                        lines.append(Line("else:", "", depth))
                        block(node.orelse, depth + 1)
            elif _region_needed(node, needed):
                if node.kind == "for":
                    lines.append(Line(f"for {node.index} in {node.iterations}:", "", depth))
                else:
                    lines.append(Line(f"{node.counter} = 0", "", depth))
                    lines.append(Line(f"while {ast.unparse(node.test)}:", "", depth))
                block(node.body, depth + 1)
                if node.kind == "while":
                    lines.append(Line(f"{node.counter} = {node.counter} + 1", "", depth + 1))
        pushed = pushes.get(id(nodes))
        if pushed:
            saved = [f"like({n})" if n in shape_only else n for n in pushed]
            lines.append(Line(f"tape.push({tuple_source(saved)})", "", depth))
        for step in trailing_copies:
            lines.append(Line(step.source(), "", depth))
        if len(lines) == start and depth > 0:
            lines.append(Line("pass", "", depth))

    block(program.steps, 0)
    return lines


def _all_pushed(pushes: dict[int, list[str]]) -> list[str]:
    return [n for names in pushes.values() for n in names]


def _step_source(step: Step, kept: set[str]) -> str:
    if step.kind == "op_call" and f"{step.target}_saved" in kept:
        call = step.value
        args = ", ".join(ast.unparse(a) for a in call.args)
        outputs = tuple_source(step.defined())
        return f"{outputs}, {step.target}_saved = {ast.unparse(call.func)}.op_forward({args})"
    if step.targets:
        return f"{', '.join(step.targets)} = {ast.unparse(step.value)}"
    return step.source()
