"""Forward mode: a tangent (JVP) function generated beside the primal statements.

For each step ``t = f(a, b)`` the generated function computes ``t`` and then its
tangent ``t_dot`` from ``a_dot`` and ``b_dot`` with the rule's tangent formula
(``defjvp``), so one run gives the value and the directional derivative. Branches
and loops need no tape here: tangents follow the same control flow as the values.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(x):
...     return np.sum(np.sin(x) * x)
>>> front = front_end(f)
>>> print(render_jvp(build_jvp(front.program, front.parsed, ["x"])))
def f_jvp(x, x_dot):
    xp = array_module(x_dot)
    t1 = np.sin(x)
    t1_dot = x_dot * xp.cos(x)
    t2 = t1 * x
    t2_dot = t1_dot * x + t1 * x_dot
    out = np.sum(t2)
    out_dot = xp.sum(t2_dot)
    return out, out_dot
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from autodiff_tutor.compiler.activity import varied_names
from autodiff_tutor.compiler.inline import substitute, tangent_formula
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Program, Step
from autodiff_tutor.compiler.optimize import fold
from autodiff_tutor.compiler.source import ParsedFunction
from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.rules.registry import lookup

ZERO = "__zero_tangent__"


@dataclass
class Tangents:
    """The statements of a generated JVP function."""

    name: str
    params: list[str]
    wrt: list[str]
    outputs: list[str]
    returns_tuple: bool
    lines: list[tuple[int, str]] = field(default_factory=list)  # (depth, code)
    varied: set[str] = field(default_factory=set)

    def dot(self, name: str) -> str:
        return f"{name}_dot"


def build_jvp(program: Program, parsed: ParsedFunction, wrt: list[str]) -> Tangents:
    """Tangent statements for directional derivatives along the inputs ``wrt``."""
    varied = varied_names(program.all_steps(), wrt)
    result = Tangents(
        program.name, program.params, list(wrt), program.outputs, program.returns_tuple
    )
    result.varied = varied
    writer = _Writer(result, parsed)
    writer.block(program.steps, 0)
    if any("xp." in code for _, code in result.lines):
        first = result.dot(wrt[0]) if wrt else program.params[0]
        result.lines.insert(0, (0, f"xp = array_module({first})"))
    return result


class _Writer:
    def __init__(self, result: Tangents, parsed: ParsedFunction):
        self.result = result
        self.parsed = parsed

    def emit(self, depth: int, code: str) -> None:
        self.result.lines.append((depth, code))

    def block(self, nodes: list[Node], depth: int) -> None:
        start = len(self.result.lines)
        for node in nodes:
            if isinstance(node, Step):
                self.step(node, depth)
            elif isinstance(node, Branch):
                self.emit(depth, f"if {node.test}:")
                self.block(node.body, depth + 1)
                self.emit(depth, "else:")
                self.block(node.orelse, depth + 1)
            else:
                self.loop(node, depth)
        if len(self.result.lines) == start:
            self.emit(depth, "pass")

    def loop(self, node: Loop, depth: int) -> None:
        if node.kind == "for":
            self.emit(depth, f"for {node.index} in {node.iterations}:")
        else:
            self.emit(depth, f"while {ast.unparse(node.test)}:")
        self.block(node.body, depth + 1)

    def step(self, step: Step, depth: int) -> None:
        if step.targets and step.kind == "op_call":
            self._op_call(step, depth)
            return
        self.emit(depth, step.source())
        if step.target not in self.result.varied:
            return
        dot = self.result.dot(step.target)
        if step.kind == "copy" or (step.kind == "static" and step.copy_back):
            source = step.value.id if isinstance(step.value, ast.Name) else None
            if source in self.result.varied:
                self.emit(depth, f"{dot} = {self.result.dot(source)}")
            else:  # a constant flowing into a value that carries tangents later
                self.emit(depth, f"{dot} = zeros_like({step.target})")
        elif step.kind == "static":
            self.emit(depth, f"{dot} = zeros_like({step.target})")
        elif step.kind == "op_call":
            self._op_call(step, depth)
        elif step.kind == "primitive":
            self.emit(depth, f"{dot} = {ast.unparse(self._tangent(step))}")

    def _tangent(self, step: Step) -> ast.expr:
        rule = lookup(step.op)
        if rule is None or rule.jvp is None:
            raise NoDerivativeRuleError(f"no forward-mode rule for the operation '{step.op}'")
        bindings: dict[str, ast.expr] = {
            "out": ast.Name(step.target, ast.Load()),
            "xp": ast.Name("xp", ast.Load()),
            **step.inputs,
            **step.options,
        }
        dropped = False
        for param, atom in step.inputs.items():
            bindings[f"d_{param}"] = self._dot_of(atom)
            dropped |= _is_zero(bindings[f"d_{param}"]) and not isinstance(atom, ast.Constant)
        expr = fold(_drop_zero_terms(substitute(tangent_formula(rule), bindings, rule.options)))
        if rule.broadcasting and dropped:  # what is left may be smaller than the output
            expr = ast.Call(ast.Name("broadcast_like", ast.Load()), [expr, bindings["out"]], [])
        return expr

    def _dot_of(self, atom: ast.expr) -> ast.expr:
        if isinstance(atom, ast.Name) and atom.id in self.result.varied:
            return ast.Name(self.result.dot(atom.id), ast.Load())
        if isinstance(atom, (ast.List, ast.Tuple)):
            items = [self._dot_of(e) for e in atom.elts]
            items = [
                i if not (isinstance(i, ast.Name) and i.id == ZERO) else _zeros_for(e)
                for i, e in zip(items, atom.elts, strict=True)
            ]
            return ast.List(items, ast.Load())
        zero = ast.Name(ZERO, ast.Load())
        zero.zero_of = atom  # a term that cannot be dropped gets zeros shaped like the input
        return zero

    def _op_call(self, step: Step, depth: int) -> None:
        func = ast.unparse(step.value.func)
        args = step.value.args
        dots = [ast.unparse(self._dot_of(a)).replace(ZERO, "None") for a in args]
        outputs = step.defined()
        arg_text = ", ".join(ast.unparse(a) for a in args)
        values = f"({', '.join(outputs)},)" if len(outputs) == 1 else f"({', '.join(outputs)})"
        out_dots = [self.result.dot(o) for o in outputs]
        dot_text = f"({out_dots[0]},)" if len(out_dots) == 1 else f"({', '.join(out_dots)})"
        self.emit(
            depth, f"{values}, {dot_text} = {func}.op_jvp(({arg_text},), ({', '.join(dots)},))"
        )
        self.result.varied |= set(outputs)


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == ZERO


def _zeros_for(atom: ast.expr) -> ast.expr:
    return ast.Call(ast.Name("zeros_like", ast.Load()), [copy.deepcopy(atom)], [])


def _contains_zero(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == ZERO for n in ast.walk(node))


def _drop_zero_terms(expr: ast.expr) -> ast.expr:
    """Remove the terms of a sum whose tangent is zero (each term is linear in one tangent)."""
    terms = _terms(expr, positive=True)
    if terms is None or not any(_contains_zero(t) for t, _ in terms):
        return _zero_to_constant(expr)
    kept = [(t, sign) for t, sign in terms if not _contains_zero(t)]
    if not kept:
        return ast.Constant(0.0)
    total = kept[0][0] if kept[0][1] else ast.UnaryOp(ast.USub(), kept[0][0])
    for term, positive in kept[1:]:
        total = ast.BinOp(total, ast.Add() if positive else ast.Sub(), term)
    return total


def _terms(expr: ast.expr, positive: bool) -> list[tuple[ast.expr, bool]] | None:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        left = _terms(expr.left, positive) or [(expr.left, positive)]
        right_sign = positive if isinstance(expr.op, ast.Add) else not positive
        right = _terms(expr.right, right_sign) or [(expr.right, right_sign)]
        return left + right
    return None


def _zero_to_constant(expr: ast.expr) -> ast.expr:
    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id != ZERO:
                return node
            atom = getattr(node, "zero_of", None)
            if isinstance(atom, ast.Name):  # zeros of the input's shape (a list: of zeros)
                return _zeros_for(atom)
            return ast.Constant(0.0)

    return Replace().visit(expr)


def render_jvp(tangents: Tangents) -> str:
    """The JVP function's source: values and tangents in, value and tangent out."""
    params = tangents.params + [tangents.dot(w) for w in tangents.wrt]
    lines = [f"def {tangents.name}_jvp({', '.join(params)}):"]
    lines += ["    " * (depth + 1) + code for depth, code in tangents.lines]
    dots = []
    for output in tangents.outputs:
        dots.append(tangents.dot(output) if output in tangents.varied else f"zeros_like({output})")
    if tangents.returns_tuple:
        lines.append(f"    return ({', '.join(tangents.outputs)},), ({', '.join(dots)},)")
    else:
        lines.append(f"    return {tangents.outputs[0]}, {dots[0]}")
    return "\n".join(lines)
