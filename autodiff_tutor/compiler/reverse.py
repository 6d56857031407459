"""Stage 5: build the forward and backward statements (reverse mode).

The forward is the normalized program, minus what nobody needs, returning the
outputs and the *memory*: the values the backward reads. The backward visits the
active steps in reverse, inlines each rule's formula and accumulates one gradient
``d_<name>`` per value; an input that does not reach the output gets a zero
gradient of its shape and dtype.

>>> import numpy as np
>>> from autodiff_tutor.compiler.source import parse_function
>>> from autodiff_tutor.compiler.normalize import normalize
>>> from autodiff_tutor.compiler.activity import analyze
>>> def f(x):
...     return np.sum(np.exp(x))
>>> parsed = parse_function(f)
>>> program = normalize(parsed, ["x"])
>>> generated = build(program, analyze(program, parsed, ["x"]), parsed, ["x"])
>>> [line.code for line in generated.backward]
['d_t1 = unreduce(d_out, t1)', 'd_x = d_t1 * t1']
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from autodiff_tutor.compiler.activity import Activity
from autodiff_tutor.compiler.inline import inline, inline_all, is_none_gradient
from autodiff_tutor.compiler.ir import Program, Step
from autodiff_tutor.compiler.optimize import fold
from autodiff_tutor.compiler.source import ParsedFunction
from autodiff_tutor.rules.registry import Rule, lookup


@dataclass
class Line:
    """One generated statement and the user's line it comes from."""

    code: str
    origin: str = ""  # e.g. "line 3: return np.sum(h * h)"


@dataclass
class Generated:
    """Forward and backward statements of one function, ready to emit."""

    name: str
    params: list[str]
    wrt: list[str]
    outputs: list[str]
    returns_tuple: bool
    forward: list[Line] = field(default_factory=list)
    backward: list[Line] = field(default_factory=list)
    memory: list[str] = field(default_factory=list)
    gradients: list[str] = field(default_factory=list)

    @property
    def seeds(self) -> list[str]:
        """The backward's parameters: one output gradient per output."""
        return [f"d_{name}" for name in self.outputs]


def build(
    program: Program, activity: Activity, parsed: ParsedFunction, wrt: list[str]
) -> Generated:
    """Generate the forward and backward statements for gradients w.r.t. ``wrt``."""
    generated = Generated(program.name, program.params, wrt, program.outputs, program.returns_tuple)
    backward = _Backward(program, activity, parsed)
    for step in reversed(program.steps):
        if step.target in activity.active:
            backward.step(step)
    for name in wrt:
        if name not in backward.has_adjoint:
            backward.emit(f"d_{name} = zeros_like({name})", f"{name} does not reach the output")
    generated.gradients = [f"d_{name}" for name in wrt]
    lines = backward.lines
    if any(_reads_name(line.code, "xp") for line in lines):
        seed = generated.seeds[0]
        lines.insert(0, Line(f"xp = array_module({seed})", "the array module of the gradients"))
    generated.backward = lines
    defined = program.defined_names() | {f"{s.target}_saved" for s in program.steps}
    read = {n for line in lines for n in _names_read(line.code)}
    order = (
        program.params
        + [s.target for s in program.steps]
        + [f"{s.target}_saved" for s in program.steps]
    )
    generated.memory = [n for n in dict.fromkeys(order) if n in read & defined]
    generated.forward = _forward_lines(program, activity, parsed, set(generated.memory))
    return generated


class _Backward:
    def __init__(self, program: Program, activity: Activity, parsed: ParsedFunction):
        self.program = program
        self.activity = activity
        self.parsed = parsed
        self.lines: list[Line] = []
        self.has_adjoint: set[str] = set(program.outputs)
        self.origin = ""

    def emit(self, code: str, origin: str | None = None) -> None:
        self.lines.append(Line(code, self.origin if origin is None else origin))

    def contribute(self, name: str, expr: ast.expr) -> None:
        """Add ``expr`` to the gradient of ``name`` (first contribution assigns)."""
        target = f"d_{name}"
        if name in self.has_adjoint:
            expr = ast.BinOp(ast.Name(target, ast.Load()), ast.Add(), expr)
        self.has_adjoint.add(name)
        self.emit(f"{target} = {ast.unparse(expr)}")

    def step(self, step: Step) -> None:
        self.origin = _origin(self.parsed, step)
        g = ast.Name(f"d_{step.target}", ast.Load())
        if step.kind == "copy":
            self.contribute(step.value.id, g)
        elif step.kind == "op_call":
            self._op_call(step, g)
        else:
            rule = lookup(step.op)
            if rule.sequence:
                self._sequence(step, rule, g)
            else:
                self._primitive(step, rule, g)

    def _is_varied(self, atom: ast.expr) -> bool:
        return isinstance(atom, ast.Name) and atom.id in self.activity.varied

    def _primitive(self, step: Step, rule: Rule, g: ast.Name) -> None:
        bindings = {
            "g": g,
            "out": ast.Name(step.target, ast.Load()),
            "xp": ast.Name("xp", ast.Load()),
        }
        bindings.update(step.inputs)
        bindings.update(step.options)
        contributions: dict[str, list[ast.expr]] = {}
        for index, param in enumerate(rule.inputs):
            atom = step.inputs[param]
            if not self._is_varied(atom) or is_none_gradient(rule, index):
                continue
            expr = fold(inline(rule, index, bindings))
            others = [a for p, a in step.inputs.items() if p != param]
            same_shape = all(isinstance(a, ast.Constant) or _same(a, atom) for a in others)
            if rule.broadcasting and not same_shape:
                expr = ast.Call(ast.Name("unbroadcast", ast.Load()), [expr, atom], [])
            contributions.setdefault(atom.id, []).append(expr)
        for name, exprs in contributions.items():
            if len(exprs) == 2 and _same(exprs[0], exprs[1]):  # x * x: one term, twice
                exprs = [ast.BinOp(ast.Constant(2), ast.Mult(), exprs[0])]
            total = exprs[0]
            for expr in exprs[1:]:
                total = ast.BinOp(total, ast.Add(), expr)
            self.contribute(name, total)

    def _sequence(self, step: Step, rule: Rule, g: ast.Name) -> None:
        param = rule.inputs[0]
        elements = step.inputs[param].elts
        bindings = {"g": g, **step.inputs, **step.options}
        pieces = fold(inline_all(rule, bindings))
        targets, seen = [], set()
        for i, element in enumerate(elements):
            if not self._is_varied(element):
                targets.append("_")
            elif element.id in self.has_adjoint or element.id in seen:
                targets.append(f"d_{element.id}_part{i + 1}")
            else:
                targets.append(f"d_{element.id}")
                seen.add(element.id)
        self.emit(f"{', '.join(targets)}{',' if len(targets) == 1 else ''} = {ast.unparse(pieces)}")
        for element, target in zip(elements, targets, strict=True):
            if "_part" in target:
                self.contribute(element.id, ast.Name(target, ast.Load()))
            elif target != "_":
                self.has_adjoint.add(element.id)

    def _op_call(self, step: Step, g: ast.Name) -> None:
        args = step.value.args
        flags = tuple(self._is_varied(a) for a in args)
        targets = [f"d_{a.id}_part" if flag else "_" for a, flag in zip(args, flags, strict=True)]
        op = ast.unparse(step.value.func)
        trailing = "," if len(targets) == 1 else ""
        call = f"{op}.op_backward(({g.id},), {flags!r}, {step.target}_saved)"
        self.emit(f"{', '.join(targets)}{trailing} = {call}")
        for arg, target in zip(args, targets, strict=True):
            if target != "_":
                self.contribute(arg.id, ast.Name(target, ast.Load()))


def _forward_lines(
    program: Program, activity: Activity, parsed: ParsedFunction, memory: set[str]
) -> list[Line]:
    needed = set(program.outputs) | {m.removesuffix("_saved") for m in memory}
    for step in reversed(program.steps):
        if step.target in needed:
            needed |= step.operand_names()
    lines = []
    for step in program.steps:
        if step.target not in needed:
            continue
        origin = _origin(parsed, step)
        if step.kind == "op_call" and f"{step.target}_saved" in memory:
            call = step.value
            args = ", ".join(ast.unparse(a) for a in call.args)
            lines.append(
                Line(
                    f"({step.target},), {step.target}_saved = "
                    f"{ast.unparse(call.func)}.op_forward({args})",
                    origin,
                )
            )
        else:
            lines.append(Line(step.source(), origin))
    return lines


def _origin(parsed: ParsedFunction, step: Step) -> str:
    """'line N: <what the user wrote>' for a generated statement's comment."""
    node = step.origin if step.origin is not None else parsed.tree
    text = parsed.line_text(node)
    if step.expression is not None:
        text = _short(step.expression)
    return f"line {parsed.file_line(node)}: {text}"


def _short(expr: ast.expr, limit: int = 36) -> str:
    text = ast.unparse(expr)
    if len(text) > limit and isinstance(expr, ast.Call):
        text = f"{ast.unparse(expr.func)}(...)"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _same(a: ast.expr, b: ast.expr) -> bool:
    return ast.dump(a) == ast.dump(b)


def _names_read(code: str) -> set[str]:
    tree = ast.parse(code)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _reads_name(code: str, name: str) -> bool:
    return name in _names_read(code)
