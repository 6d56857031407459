"""Stage 5, the adjoint — the backward's statements, as a tree (reverse mode).

The backward visits the active steps in reverse, inlines each rule's formula and
accumulates one gradient ``d_<name>`` per value; an input that does not reach the
output gets a zero gradient of its shape and dtype. Branches and loops are replayed
in reverse: a loop runs backwards over its iterations, a branch takes the path the
forward took, and each replayed body starts with a :func:`~.code.stack_pop`
placeholder that the memory stage fills in.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> from autodiff_tutor.compiler.activity import analyze
>>> def f(x):
...     return np.sum(np.exp(x))
>>> front = front_end(f)
>>> adjoint = build_adjoint(front.program, analyze(front.program, front.parsed, ["x"]),
...                         front.parsed, ["x"])
>>> [ast.unparse(s) for s in adjoint.backward]  # before the optimize stage
['d_t1 = unreduce(d_out, t1, axis=None, keepdims=False)', 'd_x = d_t1 * t1']
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.activity import Activity
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Program, Step, loops_in, walk_steps
from autodiff_tutor.compiler.origins import statement_origin, step_origin
from autodiff_tutor.compiler.reverse.lists import may_be_lists
from autodiff_tutor.compiler.reverse.shapes import ShapeClasses
from autodiff_tutor.compiler.rule_inline import inline, inline_all, is_none_gradient
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.rules.registry import Rule, lookup


@dataclass
class Adjoint:
    """The backward of one function for one ``wrt``: statements and gradient names."""

    backward: list[ast.stmt]
    gradients: list[str]  # d_<name> for each wrt name, in order
    prefix: str = "d_"  # gradients are named prefix + value name
    seeds: list[str] = field(default_factory=list)  # one output gradient per output


def build_adjoint(
    program: Program,
    activity: Activity,
    parsed: ParsedFunction,
    wrt: list[str],
    in_place: bool = True,
) -> Adjoint:
    """The backward statements for gradients w.r.t. ``wrt``.

    ``in_place=False`` writes every accumulation as a new array: slower, but the
    backward is then itself differentiable (second derivatives compile it again).
    """
    writer = _Backward(program, activity, parsed, in_place)
    _refuse_joined_lists(program, activity, parsed, writer.lists)
    writer.gradient_stacks()
    writer.block(program.steps)
    for name in wrt:
        if name not in writer.has_adjoint:
            zeros = code.call("zeros_like", code.name(name))
            writer.emit(
                code.assign(writer.gradient(name), zeros, f"{name} does not reach the output")
            )
    seeds = [writer.gradient(name) for name in program.outputs]
    gradients = [writer.gradient(n) for n in wrt]
    return Adjoint(writer.statements, gradients, writer.prefix, seeds)


def _refuse_joined_lists(
    program: Program, activity: Activity, parsed: ParsedFunction, lists: set[str]
) -> None:
    """Lists joined with ``+`` or repeated with ``* n`` whose items carry gradient are
    refused, located: the backward knows ``+`` and ``*`` of arrays only (the forward,
    plain Python, joins and repeats; forward mode's tangents do the same, and are
    right). An array plus a list is numpy's sum, and stays."""
    steps = program.all_steps()
    lists = lists | {s.target for s in steps if isinstance(s.value, ast.List | ast.ListComp)}
    for step in steps:
        if step.op not in ("add", "multiply") or step.target not in activity.useful:
            continue
        operands = [step.inputs.get(key) for key in ("x", "y")]
        names = [o.id if isinstance(o, ast.Name) else None for o in operands]
        if not any(n in lists and n in activity.varied for n in names):
            continue
        if step.op == "add" and all(n in lists for n in names):
            what, hint = "joining lists with '+'", "build one list: [a, b, c], or append each item"
        elif step.op == "multiply" and any(
            isinstance(o, ast.Constant) and type(o.value) is int for o in operands
        ):
            what, hint = "repeating a list with '*'", "build it with [v for _ in range(n)]"
        else:
            continue
        node = step.expression or step.origin
        raise UnsupportedSyntaxError(
            f"{what} is not supported where the items carry gradient",
            parsed.location(node) if node is not None else None,
            hint=hint,
        )


def gradient_prefix(program: Program) -> str:
    """``d_`` for gradient names, unless the program has names like that already
    (a generated gradient function being differentiated again)."""
    names = program.defined_names() | set(program.params)
    for prefix in ("d_", "dbar_", "adjoint_"):
        if not any(prefix + name in names for name in names):
            return prefix
    return "adjoint_of_"


class _Backward:
    def __init__(
        self, program: Program, activity: Activity, parsed: ParsedFunction, in_place: bool
    ):
        self.in_place = in_place
        self.program = program
        self.activity = activity
        self.parsed = parsed
        self.statements: list[ast.stmt] = []  # the body being written
        self.has_adjoint: set[str] = set(program.outputs)
        self.origin = ""
        self.prefix = gradient_prefix(program)
        self.owned: set[str] = set()  # gradients whose array only this backward holds
        self.shapes = ShapeClasses(program)
        loops = loops_in(program.steps)
        self.counters = {loop.index for loop in loops if loop.index}
        self.loop_canonicals = {c for loop in loops for c in loop.canonical}
        self.unused = _unused_name(program.defined_names() | set(program.params) | self.counters)
        self.lists = may_be_lists(program)  # their gradients are lists: added item by item

    def gradient(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def emit(self, statement: ast.stmt) -> None:
        if not code.origin_of(statement):
            statement.origin = self.origin
        self.statements.append(statement)

    def contribute(self, name: str, expr: ast.expr) -> None:
        """Add ``expr`` to the gradient of ``name``.

        The first contribution assigns; the second makes a new array (the first may be
        another gradient's array); later ones add in place into that array, which only
        this gradient owns.
        """
        target = self.gradient(name)
        if name in self.has_adjoint and name in self.owned:
            self.emit(code.add_into(code.name(target), expr))
            return
        if name in self.has_adjoint:
            current = code.name(target)
            if name in self.lists:
                expr = code.call("add_lists", current, expr)
            else:
                expr = ast.BinOp(current, ast.Add(), expr)
                if self.in_place:
                    self.owned.add(name)
        else:
            self.owned.discard(name)
        self.has_adjoint.add(name)
        self.emit(code.assign(target, expr))

    def scatter_into(self, name: str, gradient: ast.expr, index: ast.expr) -> None:
        """The gradient of reading ``name[index]``: added in place into an owned buffer."""
        target = self.gradient(name)
        at_index = ast.Subscript(code.name("at"), index, ast.Load())
        if name in self.lists or not self.in_place:
            self.contribute(name, code.call("scatter", gradient, code.name(name), at_index))
            return
        if name not in self.owned:
            if name in self.has_adjoint:  # a copy that this gradient owns from now on
                self.emit(code.assign(target, code.method(target, "copy")))
            else:
                self.emit(code.assign(target, code.call("zeros_like", code.name(name))))
            self.owned.add(name)
            self.has_adjoint.add(name)
        if self._basic_index(index):  # no element twice: plain in-place addition
            place = ast.Subscript(code.name(target), index, ast.Load())
            self.emit(code.add_into(place, gradient))
            return
        self.emit(code.expression(code.call("add_at", code.name(target), at_index, gradient)))

    def _basic_index(self, index: ast.expr) -> bool:
        """Whether an index is statically basic: ints, slices and loop counters only."""
        for node in ast.walk(index):
            if isinstance(node, ast.Name) and node.id not in self.counters:
                return False
            if isinstance(node, ast.Constant) and not (
                node.value is None or node.value is Ellipsis or type(node.value) is int
            ):
                return False
            if isinstance(node, (ast.List, ast.Call, ast.Compare, ast.Subscript, ast.Attribute)):
                return False
        return True

    # -- blocks, branches, loops -----------------------------------------------------

    def block(self, nodes: list[Node]) -> None:
        for node in reversed(nodes):
            if isinstance(node, Step):
                active = set(node.defined()) & self.activity.active
                if node.kind in ("push", "pop"):
                    if self._stack_active(node):
                        self.stack_step(node)
                elif node.kind == "static":
                    # a constant overwrote a value with gradient elsewhere (s = 1.0 in a
                    # loop): before this point, that name's gradient starts again from zero
                    self.has_adjoint -= active
                elif active:
                    self.step(node)
            elif isinstance(node, Branch):
                self.branch(node)
            else:
                self.loop(node)

    def _region_active(self, region: Branch | Loop) -> bool:
        inner = walk_steps(region.body + (region.orelse if isinstance(region, Branch) else []))
        return any(set(s.defined()) & self.activity.active or self._stack_active(s) for s in inner)

    # -- the memory stack of a gradient function, differentiated again ---------------

    def _stack_active(self, step: Step) -> bool:
        """A push or pop of a value stack that carries gradient: each one has its
        adjoint, or the stack of gradients would go out of step."""
        return (
            step.kind in ("push", "pop")
            and step.op == "values"
            and (step.stack in self.activity.active)
        )

    def gradient_stacks(self) -> None:
        """``d_stack = Stack()`` for each value stack that carries gradient: the backward
        pushes the gradient of each value popped, and pops it where it was pushed."""
        for step in self.program.all_steps():
            if step.kind == "static" and step.stack and step.op == "values":
                if step.stack in self.activity.active:
                    self.origin = step_origin(self.parsed, step, "backward")
                    self.emit(code.assign(self.gradient(step.stack), code.call("Stack")))

    def stack_step(self, step: Step) -> None:
        """A pop's adjoint pushes the gradient of the values popped (zeros where none
        reached them); a push's adjoint pops it: the stack of gradients runs the other
        way, so each gradient meets the push of its values."""
        self.origin = step_origin(self.parsed, step, "backward")
        gradients = self.gradient(step.stack)
        if step.kind == "pop":
            popped = step.target
            self.owned.discard(popped)  # its array goes on the stack of gradients
            g = (
                code.name(self.gradient(popped))
                if popped in self.has_adjoint
                else code.call("zeros_like", code.name(popped))
            )
            self.emit(code.expression(code.method(gradients, "push", g)))
            return
        values = step.inputs["values"]
        if self._is_varied(values):
            self.contribute(values.id, code.method(gradients, "pop"))
        else:
            self.emit(code.expression(code.method(gradients, "pop")))

    def _new_zero_gradient(self, name: str, origin: str) -> None:
        self.emit(
            code.assign(self.gradient(name), code.call("zeros_like", code.name(name)), origin)
        )
        self.has_adjoint.add(name)
        if self.in_place and name not in self.lists:
            self.owned.add(name)

    def _zero_init(self, region: Branch | Loop) -> None:
        """Gradients the region adds to must exist before it (zeros where none yet)."""
        bodies = region.body + (region.orelse if isinstance(region, Branch) else [])
        inner = walk_steps(bodies)
        inside = {t for s in inner for t in s.defined()} - set(region.canonical)
        touched = set()
        for step in inner:
            if self._stack_active(step) and step.kind == "push":
                touched |= {n for _, n in step.input_names()} & self.activity.varied
            if set(step.defined()) & self.activity.active:
                touched |= {n for _, n in step.input_names()} & self.activity.varied
                if step.kind == "copy":
                    touched.add(step.value.id)
        touched |= set(region.canonical) & self.activity.active
        for name in sorted(touched - inside - self.has_adjoint):
            self._new_zero_gradient(name, "gradient accumulated in the region below")

    def _body(self, nodes: list[Node], origin: str, finish=None) -> list[ast.stmt]:
        """The reverse of a replayed body, starting with its stack pop."""
        outer, self.statements = self.statements, [code.stack_pop(nodes, origin)]
        self.block(nodes)
        if finish is not None:
            finish()
        body, self.statements = self.statements, outer
        return body

    def branch(self, node: Branch) -> None:
        if not self._region_active(node):
            return
        self._zero_init(node)
        before, owned = set(self.has_adjoint), set(self.owned)
        self.origin = origin = statement_origin(self.parsed, node.origin, "backward")
        body = self._body(node.body, origin)
        owned_in_body, self.owned = self.owned, set(owned)
        self.has_adjoint = set(before)
        orelse = self._body(node.orelse, origin)
        self.has_adjoint = before
        self.owned = owned & owned_in_body & self.owned  # owned after either path
        self.emit(code.if_else(node.test, body, orelse, origin))

    def loop(self, node: Loop) -> None:
        if not self._region_active(node):
            return
        self._zero_init(node)
        before = set(self.has_adjoint)
        # a gradient the body rebinds may hold another's array when the next iteration starts
        owned = set(self.owned)
        self.owned -= {n for s in walk_steps(node.body) for n in s.defined()} | set(node.canonical)
        self.origin = origin = statement_origin(self.parsed, node.origin, "backward")
        carried = [c for c in node.canonical if c in self.activity.active]

        def finish() -> None:  # each carried gradient must exist for the next iteration
            for name in carried:
                if name not in self.has_adjoint:
                    self._new_zero_gradient(name, origin)

        body = self._body(node.body, origin, finish)
        self.has_adjoint = before
        self.owned &= owned  # after zero iterations, or after any number
        if node.kind == "for":
            iterations = code.call("reversed", code.name(node.iterations))
            self.emit(code.for_loop(node.index, iterations, body, origin))
        else:
            replays = code.call("range", code.name(node.counter))
            self.emit(code.for_loop(self.unused, replays, body, origin))

    # -- one step --------------------------------------------------------------------

    def step(self, step: Step) -> None:
        self.origin = step_origin(self.parsed, step, "backward")
        self.owned -= set(step.defined())  # read from now on: others may hold its array
        g = code.name(self.gradient(step.target))
        if step.kind == "copy":
            self.contribute(step.value.id, g)
            if step.copy_back and step.target in self.loop_canonicals:
                self.has_adjoint.discard(step.target)
        elif step.kind == "op_call":
            self._op_call(step)
        else:
            rule = lookup(step.op)
            if rule.sequence:
                self._sequence(step, rule, g)
            else:
                self._primitive(step, rule, g)

    def _is_varied(self, atom: ast.expr) -> bool:
        return isinstance(atom, ast.Name) and atom.id in self.activity.varied

    def _primitive(self, step: Step, rule: Rule, g: ast.Name) -> None:
        bindings = {"g": g, "out": code.name(step.target), "xp": code.name("xp")}
        bindings.update(step.inputs)
        bindings.update(step.options)
        if rule.op == "getitem" and self._is_varied(step.inputs["x"]):
            self.scatter_into(step.inputs["x"].id, g, step.options["index"])
            return
        contributions: dict[str, list[ast.expr]] = {}
        for index, param in enumerate(rule.inputs):
            atom = step.inputs[param]
            if not self._is_varied(atom) or is_none_gradient(rule, index):
                continue
            expr = inline(rule, index, bindings)
            others = [a for p, a in step.inputs.items() if p != param]
            same_shape = all(  # a complex constant changes the dtype: cast back
                _real_number(a) or _same(a, atom) or self.shapes.same(a, atom) for a in others
            )
            if rule.broadcasting and not same_shape:
                expr = code.call("unbroadcast", expr, atom)
            contributions.setdefault(atom.id, []).append(expr)
        for name, exprs in contributions.items():
            if len(exprs) == 2 and _same(exprs[0], exprs[1]):  # x * x: one term, twice
                exprs = [ast.BinOp(ast.Constant(2), ast.Mult(), exprs[0])]
            self.contribute(name, functools.reduce(lambda a, b: ast.BinOp(a, ast.Add(), b), exprs))

    def _sequence(self, step: Step, rule: Rule, g: ast.Name) -> None:
        sequence = step.inputs[rule.inputs[0]]
        bindings = {"g": g, "xp": code.name("xp"), **step.inputs, **step.options}
        pieces = inline_all(rule, bindings)
        if isinstance(sequence, ast.Name):  # a list variable: its gradient is a list
            self.contribute(sequence.id, pieces)
            return
        flags = [self._is_varied(e) for e in sequence.elts]
        targets = self._gradient_targets(sequence.elts, flags)
        self.emit(code.assign(targets, pieces))
        self._collect(sequence.elts, targets)

    def _op_call(self, step: Step) -> None:
        args = step.value.args
        flags = tuple(self._is_varied(a) for a in args)
        seeds = [
            code.name(self.gradient(t))
            if t in self.has_adjoint
            else code.call("zeros_like", code.name(t))
            for t in step.defined()
        ]
        targets = self._gradient_targets(args, flags)
        backward = ast.Attribute(step.value.func, "op_backward", ast.Load())
        memory = code.name(f"{step.target}_memory")
        seed_tuple = ast.Tuple(seeds, ast.Load())
        self.emit(
            code.assign(targets, code.call(backward, seed_tuple, ast.Constant(flags), memory))
        )
        self._collect(args, targets)

    def _gradient_targets(self, atoms: list[ast.expr], flags) -> list[str]:
        """Names receiving one gradient per atom: ``d_x`` for a first gradient, else a part."""
        targets, seen = [], set()
        for i, (atom, flag) in enumerate(zip(atoms, flags, strict=True)):
            if not flag:
                targets.append(self.unused)
            elif atom.id in self.has_adjoint or atom.id in seen:
                targets.append(f"{self.gradient(atom.id)}_part{i + 1}")
            else:
                targets.append(self.gradient(atom.id))
                seen.add(atom.id)
        return targets

    def _collect(self, atoms: list[ast.expr], targets: list[str]) -> None:
        for atom, target in zip(atoms, targets, strict=True):
            if "_part" in target:
                self.contribute(atom.id, code.name(target))
            elif target != self.unused:
                self.has_adjoint.add(atom.id)


def _unused_name(names: set[str]) -> str:
    """``_`` for a value the backward does not read (a ``while`` loop's replay counter,
    a gradient an op returns for an input that needs none), unless the program binds
    it (``for _ in range(n)`` around a ``while`` loop, whose replay would change it).

    >>> _unused_name({"x"}), _unused_name({"_", "_1"})
    ('_', '_2')
    """
    candidates = ("_", *(f"_{n}" for n in range(1, len(names) + 2)))
    return next(c for c in candidates if c not in names)


def _same(a: ast.expr, b: ast.expr) -> bool:
    return ast.dump(a) == ast.dump(b)


def _real_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (bool, int, float)
