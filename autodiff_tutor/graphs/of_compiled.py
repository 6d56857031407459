"""The graph of a compiled function: the program's operations, the backward's gradients.

The forward is the compiler's normalized program (one operation per statement): a
node per operation, named by your variable (``h``) or, for a value you did not
name, by your code that computes it (``X @ W``), with its line. The adjoint is the
generated backward itself: a node per statement that assigns a gradient, drawn
beside the value it is the gradient of, with arrows from the gradients it reads and
dashed lines from the forward values it reads (what the forward saved for it).

A branch's two sides are both drawn (what follows reads from either); a loop's body
is drawn once. Shapes come from one run on the arguments given (see
:func:`autodiff_tutor.graphs.graph`); without a run, the graph has no shapes.

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> @differentiable
... def f(x):
...     y = np.sin(x)
...     return np.sum(y * y)
>>> print(compiled_graph(f.derivative()).describe())  # doctest: +NORMALIZE_WHITESPACE
forward:
  x: argument
  y: sin, line 3  <- x
  t1: multiply, line 4  <- y, y
  out: sum, line 4  <- t1
adjoint:
  d_out: gradient of the output
  d_t1: sum backward, line 4  <- d_out
  d_y: multiply backward, line 4  <- d_t1
  d_x: sin backward, line 3  <- d_y
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any

from autodiff_tutor.compiler.code import origin_of, walk_statements
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Step
from autodiff_tutor.compiler.pipeline import Derivative
from autodiff_tutor.graphs.model import Graph, GraphEdge, GraphNode

_LINE = re.compile(r"^line (\d+)\b")
#: Steps that compute no value of the program's (kept for their effect, or constants).
_SKIPPED = ("static", "effect")


class _Builder:
    def __init__(self, derivative: Derivative, shapes: dict[str, Any]):
        self.derivative = derivative
        self.parsed = derivative.parsed
        self.shapes = shapes
        self.nodes: dict[str, GraphNode] = {}
        self.edges: list[GraphEdge] = []
        self.users = {
            n.id if isinstance(n, ast.Name) else n.arg
            for n in ast.walk(self.parsed.tree)
            if isinstance(n, (ast.Name, ast.arg))
        }

    def shown(self, name: str) -> str:
        """A name as the generated code shows it (a stand-in given back)."""
        for alias, user in self.parsed.aliases.items():
            name = name.replace(alias, user)
        return name

    def shape(self, name: str) -> tuple[int, ...] | None:
        return self.shapes.get(self.shown(name))

    def new_id(self, side: str, name: str) -> str:
        base = f"{'f' if side == 'forward' else 'a'}:{self.shown(name)}"
        node_id, k = base, 1
        while node_id in self.nodes:
            k += 1
            node_id = f"{base}#{k}"
        return node_id

    def add(self, side: str, key: str, name: str, operation: str, **facts: Any) -> str:
        """A new node of ``side`` for the value ``key``; its id."""
        node_id = self.new_id(side, key)
        self.nodes[node_id] = GraphNode(node_id, side, name, operation, **facts)
        return node_id

    # -- the forward: the normalized program -------------------------------------

    def forward(self) -> dict[str, frozenset[str]]:
        env: dict[str, frozenset[str]] = {}
        for param in self.derivative.program.params:
            node_id = self.add(
                "forward",
                param,
                self.shown(param),
                "argument",
                shape=self.shape(param),
                role="input",
            )
            env[param] = frozenset([node_id])
        env = self.walk(self.derivative.program.steps, env)
        for name in self.derivative.program.outputs:
            for node_id in env.get(name, ()):
                if self.nodes[node_id].role == "operation":
                    self.nodes[node_id] = dataclasses.replace(self.nodes[node_id], role="output")
        return env

    def walk(self, body: list[Node], env: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
        for node in body:
            if isinstance(node, Step):
                self.step(node, env)
            elif isinstance(node, Branch):
                taken = self.walk(node.body, dict(env))
                other = self.walk(node.orelse, dict(env))
                env = {
                    n: taken.get(n, frozenset()) | other.get(n, frozenset())
                    for n in taken.keys() | other.keys()
                }
            elif isinstance(node, Loop):
                env = self.walk(node.body, env)  # the body once
        return env

    def step(self, step: Step, env: dict[str, frozenset[str]]) -> None:
        targets = [t for t in step.defined() if t]
        if step.kind in _SKIPPED or not targets:
            for target in targets:
                env.pop(target, None)
            return
        if step.kind == "copy":
            value = step.value
            for target in targets:
                if isinstance(value, ast.Name) and value.id in env:
                    env[target] = env[value.id]
                else:
                    env.pop(target, None)
            return
        name = ", ".join(self.shown(t) for t in targets)
        code = ast.unparse(step.expression) if step.expression is not None else step.source()
        label = _short(code)
        if all(t in self.users for t in targets):
            label = ""  # your variable: its name
        elif len(targets) == 1 and _assigned_name(step) is not None:
            label = _assigned_name(step)  # your variable, renamed where you assign it again
        active = any(t in self.derivative.activity.active for t in targets)
        node_id = self.add(
            "forward",
            targets[0],
            name,
            step.op or step.description or step.kind,
            line=self.parsed.file_line(step.origin) if step.origin is not None else None,
            code=code,
            shape=self.shape(targets[0]),
            role="operation" if active else "no gradient",
            label=label,
        )
        operands = [n for _, n in step.input_names()]
        operands += sorted(step.operand_names() - set(operands))
        for operand in operands:
            for source in sorted(env.get(operand, ())):
                self.edges.append(GraphEdge(source, node_id, self.shape(operand)))
        for target in targets:
            env[target] = frozenset([node_id])

    # -- the adjoint: the generated backward -------------------------------------

    def adjoint(self, env: dict[str, frozenset[str]]) -> None:
        generated = self.derivative.generated
        forward_names = set(env)
        order = list(self.nodes)  # a name both sides of a branch assign: the later node
        final = {name: max(ids, key=order.index) for name, ids in env.items() if ids}
        gradients: dict[str, str] = {}
        for seed, output in zip(generated.seeds, generated.outputs, strict=False):
            gradients[seed] = self.add(
                "adjoint",
                seed,
                self.shown(seed),
                "gradient of the output",
                shape=self.shape(seed),
                role="seed",
                beside=final.get(output),
            )
        for statement in walk_statements(generated.backward):  # a branch or loop: no target
            targets = _targets(statement)
            if not targets or any(not t.startswith("d_") or t in forward_names for t in targets):
                continue  # a value restored for the backward, not a gradient
            origin = origin_of(statement)
            step = getattr(origin, "step", None)
            found = _LINE.match(origin or "")
            operation = _operation(statement, step)
            primal = targets[0].removeprefix("d_")
            beside = final.get(primal)
            if beside is None and step is not None:
                beside = final.get(step.target)
            node_id = self.add(
                "adjoint",
                targets[0],
                ", ".join(self.shown(t) for t in targets),
                operation,
                line=int(found.group(1)) if found else None,
                code=self.shown(ast.unparse(statement)),
                shape=self.shape(targets[0]),
                beside=beside,
            )
            for name in _reads(statement):
                if name in gradients:
                    self.edges.append(
                        GraphEdge(gradients[name], node_id, self.shape(name), "adjoint")
                    )
                elif name in final:
                    self.edges.append(GraphEdge(final[name], node_id, self.shape(name), "saved"))
            for target in targets:
                gradients[target] = node_id
        for name in generated.gradients:
            node_id = gradients.get(name)
            if node_id is not None and self.nodes[node_id].role == "operation":
                self.nodes[node_id] = dataclasses.replace(self.nodes[node_id], role="gradient")


def _assigned_name(step: Step) -> str | None:
    """The name the user's statement assigns, where the step computes its whole value
    (``y = np.sin(y)``: the compiler's ``y_2`` is your ``y``)."""
    origin = step.origin
    if not (isinstance(origin, ast.Assign) and len(origin.targets) == 1):
        return None
    target = origin.targets[0]
    if not isinstance(target, ast.Name) or step.expression is None:
        return None
    return target.id if ast.dump(step.expression) == ast.dump(origin.value) else None


def _short(code: str, limit: int = 28) -> str:
    return code if len(code) <= limit else code[: limit - 1] + "…"


def _written(target: ast.expr) -> ast.Name | None:
    """The variable a target writes: ``d_x`` for ``d_x``, ``d_x[2]`` or ``d_x.real``."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target if isinstance(target, ast.Name) else None


def _target_nodes(statement: ast.stmt) -> list[ast.expr]:
    if isinstance(statement, ast.AugAssign):
        return [statement.target]
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        return list(target.elts) if isinstance(target, ast.Tuple) else [target]
    return []


def _targets(statement: ast.stmt) -> list[str]:
    """The variables a statement assigns or updates (``d_x[2] += g`` updates ``d_x``)."""
    written = [_written(t) for t in _target_nodes(statement)]
    return [] if not written or None in written else [name.id for name in written]


def _reads(statement: ast.stmt) -> list[str]:
    """The names a statement reads, in order, once each: ``d_x += g`` and ``d_x[2] = g``
    read ``d_x`` (the update keeps the rest of it), and an index reads its names."""
    names = []
    for target in _target_nodes(statement):
        if isinstance(statement, ast.AugAssign) or not isinstance(target, ast.Name):
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    value = statement.value if isinstance(statement, (ast.Assign, ast.AugAssign)) else statement
    for node in ast.walk(value):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.append(node.id)
    return list(dict.fromkeys(names))


def _operation(statement: ast.stmt, step: Step | None) -> str:
    """What a backward statement does: the backward of the user's operation it comes
    from, or the helper it calls (``zeros_like``), or ``+=``."""
    if step is not None and (step.op or step.description):
        return f"{step.op or step.description} backward"
    if isinstance(statement, ast.AugAssign):
        return "accumulate"
    value = getattr(statement, "value", None)
    if isinstance(value, ast.Call):
        return ast.unparse(value.func)
    return "assign"


def compiled_graph(derivative: Derivative, shapes: dict[str, Any] | None = None) -> Graph:
    """The graph of a compiled pair (``f.derivative(wrt)``), with the shapes of its
    values by name (from a run: :func:`autodiff_tutor.graphs.graph` measures them).
    See the module docstring."""
    builder = _Builder(derivative, shapes or {})
    env = builder.forward()
    builder.adjoint(env)
    note = f"gradients with respect to {', '.join(builder.shown(w) for w in derivative.wrt)}"
    return Graph(derivative.name, list(builder.nodes.values()), builder.edges, note)
