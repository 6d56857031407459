"""Stage 5 in forward mode, the tangent: a JVP function written beside the primal steps.

For each step ``t = f(a, b)`` the generated function computes ``t`` and then its
tangent ``t_dot`` from ``a_dot`` and ``b_dot`` with the rule's tangent formula
(``defjvp``), so one run gives the value and the directional derivative. Branches
and loops need no tape here: tangents follow the same control flow as the values.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> from autodiff_tutor.compiler.emit import render_jvp
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
from dataclasses import dataclass, field

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.activity import varied_names
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.compiler.ir import Branch, Node, Program, Step
from autodiff_tutor.compiler.origins import statement_origin, step_origin
from autodiff_tutor.compiler.reverse.optimize import fold
from autodiff_tutor.compiler.rule_inline import substitute, tangent_formula
from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.rules.registry import lookup
from autodiff_tutor.syntax import copy_tree

ZERO = "__zero_tangent__"


@dataclass
class Tangents:
    """The statements of a generated JVP function, as a tree."""

    name: str
    params: list[str]
    wrt: list[str]
    outputs: list[str]
    returns_tuple: bool
    statements: list[ast.stmt] = field(default_factory=list)
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
    statements = _Writer(result, parsed).block(program.steps)
    first = result.dot(wrt[0]) if wrt else program.params[0]
    result.statements = code.with_array_module(statements, first)
    return result


class _Writer:
    def __init__(self, result: Tangents, parsed: ParsedFunction):
        self.result = result
        self.parsed = parsed

    def block(self, nodes: list[Node]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for node in nodes:
            if isinstance(node, Step):
                out += self.step(node)
                continue
            origin = statement_origin(self.parsed, node.origin)
            if isinstance(node, Branch):
                body, orelse = self.block(node.body), self.block(node.orelse)
                out.append(code.if_else(node.test, body, orelse, origin))
            elif node.kind == "for":
                iterations = code.name(node.iterations)
                out.append(code.for_loop(node.index, iterations, self.block(node.body), origin))
            else:
                test = copy_tree(node.test)
                out.append(code.while_loop(test, self.block(node.body), origin))
        return out

    def step(self, step: Step) -> list[ast.stmt]:
        statements = self._step(step)
        origin = step_origin(self.parsed, step)
        tangent = step_origin(self.parsed, step, "tangent")
        checked = bool(statements) and code.is_in_place_check(statements[0])
        for position, statement in enumerate(statements):
            # the primal (and its check) computes the user's operation
            primal = position <= int(checked) and step.kind != "op_call"
            code.with_origin(statement, origin if primal else tangent)
        return statements

    def _step(self, step: Step) -> list[ast.stmt]:
        if step.kind == "effect":
            return [copy_tree(step.statement)]
        if step.stack is not None:
            return self._stack_step(step)
        if step.targets and step.kind == "op_call":
            return [self._op_call(step)]
        names = step.targets if step.targets else step.target
        primal = code.assign(names, copy_tree(step.value))
        check = code.in_place_check(step.value) if step.augmented else None
        if check is not None:  # y += v: numpy's update in place, checked first
            return [check, *self._primal_and_tangent(step, primal)]
        return self._primal_and_tangent(step, primal)

    def _primal_and_tangent(self, step: Step, primal: ast.stmt) -> list[ast.stmt]:
        if step.target not in self.result.varied:
            return [primal]
        dot = self.result.dot(step.target)
        zeros = code.call("zeros_like", code.name(step.target))
        if step.kind == "copy" or (step.kind == "static" and step.copy_back):
            source = step.value.id if isinstance(step.value, ast.Name) else None
            if source in self.result.varied:
                return [primal, code.assign(dot, code.name(self.result.dot(source)))]
            return [primal, code.assign(dot, zeros)]  # a constant flowing into a varied name
        if step.kind == "static":
            return [primal, code.assign(dot, zeros)]
        if step.kind == "op_call":
            return [self._op_call(step)]
        if step.kind == "primitive":
            return [primal, code.assign(dot, self._tangent(step))]
        return [primal]

    def _stack_step(self, step: Step) -> list[ast.stmt]:
        """The memory stack of a gradient function, differentiated again: beside a value
        stack that carries gradient, a stack of tangents (``stack_dot``), pushed and
        popped with it. A path stack is replayed as it is."""
        if step.kind == "push":
            primal = code.expression(copy_tree(step.value))
        else:
            primal = code.assign(step.target, copy_tree(step.value))
        if step.op != "values" or step.stack not in self.result.varied:
            return [primal]
        tangents = self.result.dot(step.stack)
        if step.kind == "static":  # stack = Stack()
            return [primal, code.assign(tangents, code.call("Stack"))]
        if step.kind == "pop":
            self.result.varied.add(step.target)
            return [primal, code.assign(self.result.dot(step.target), code.method(tangents, "pop"))]
        values = step.inputs["values"]
        dot = self._dot_of(values)
        if code.is_name(dot, ZERO):
            dot = _zeros_for(values)
        return [primal, code.expression(code.method(tangents, "push", dot))]

    def _tangent(self, step: Step) -> ast.expr:
        rule = lookup(step.op)
        if rule is None or rule.jvp is None:
            raise NoDerivativeRuleError(f"no forward-mode rule for the operation '{step.op}'")
        bindings: dict[str, ast.expr] = {
            "out": code.name(step.target),
            "xp": code.name("xp"),
            **step.inputs,
            **step.options,
        }
        dropped = False
        for param, atom in step.inputs.items():
            bindings[f"d_{param}"] = dot = self._dot_of(atom)
            dropped |= code.is_name(dot, ZERO) and not isinstance(atom, ast.Constant)
        expr = fold(_drop_zero_terms(substitute(tangent_formula(rule), bindings, rule.options)))
        if rule.broadcasting and dropped:  # what is left may be smaller than the output
            expr = code.call("broadcast_like", expr, bindings["out"])
        return expr

    def _dot_of(self, atom: ast.expr) -> ast.expr:
        if isinstance(atom, ast.Name) and atom.id in self.result.varied:
            return code.name(self.result.dot(atom.id))
        if isinstance(atom, (ast.List, ast.Tuple)):
            items = [self._dot_of(e) for e in atom.elts]
            items = [
                _zeros_for(e) if code.is_name(i, ZERO) else i
                for i, e in zip(items, atom.elts, strict=True)
            ]
            return ast.List(items, ast.Load())
        zero = code.name(ZERO)
        zero.zero_of = atom  # a term that cannot be dropped gets zeros shaped like the input
        return zero

    def _op_call(self, step: Step) -> ast.stmt:
        """``(y,), (y_dot,) = op.op_jvp((x,), (x_dot,))`` (None for a zero tangent)."""
        func = step.value.func
        compiled_in_turn = isinstance(func, ast.Call) and ast.unparse(func.func) == "differentiable"
        tangent = getattr(step.callee, "op_jvp", None)
        if not compiled_in_turn and (tangent is None or getattr(tangent, "unavailable", False)):
            node = step.expression or step.origin
            raise NoDerivativeRuleError(
                f"jvp cannot go through the custom op {step.description!r}: it has a "
                "hand-written backward (reverse mode) but no forward-mode (jvp) rule",
                self.parsed.location(node) if node is not None else None,
                hint="use grad or vjp (reverse mode) for functions that call it, or write "
                "the computation with operations that have derivative rules",
            )
        args = step.value.args
        dots = [self._dot_of(a) for a in args]
        dots = [ast.Constant(None) if code.is_name(d, ZERO) else d for d in dots]
        outputs = step.defined()
        values = ast.Tuple([code.name(o) for o in outputs], ast.Store())
        out_dots = ast.Tuple([code.name(self.result.dot(o)) for o in outputs], ast.Store())
        jvp = ast.Attribute(copy_tree(step.value.func), "op_jvp", ast.Load())
        arguments = ast.Tuple([copy_tree(a) for a in args], ast.Load())
        call = code.call(jvp, arguments, ast.Tuple(dots, ast.Load()))
        self.result.varied |= set(outputs)
        return code.with_origin(ast.Assign([ast.Tuple([values, out_dots], ast.Store())], call))


def _zeros_for(atom: ast.expr) -> ast.expr:
    return ast.Call(ast.Name("zeros_like", ast.Load()), [copy_tree(atom)], [])


def _drop_zero_terms(expr: ast.expr) -> ast.expr:
    """Remove the terms of a sum whose tangent is zero (each term is linear in one tangent)."""
    terms = _terms(expr, positive=True)
    if terms is None or not any(code.mentions(t, ZERO) for t, _ in terms):
        return _zero_to_constant(expr)
    kept = [(t, sign) for t, sign in terms if not code.mentions(t, ZERO)]
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
