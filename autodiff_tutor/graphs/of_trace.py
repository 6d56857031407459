"""The graph of a trace: what the tracing mode recorded, and the backward it implies.

The forward is the tape: a node per argument of ``evaluate`` and per recorded
operation, with the line that ran it and the shape of each value. Tracing sees
operations, not your variable names: values keep the tape's names (``v3``), the
arguments yours. The adjoint is what ``gradient`` runs: the records read in
reverse, from the trace's results (the values no later operation used) back to
the arguments; each value's gradient is drawn beside it, and an operation no
gradient flows through (a comparison, ``extract_data``) is grey, with no adjoint.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, last_tape, traced
>>> def f(x):
...     y = np.sin(x)
...     return np.sum(y * y)
>>> _ = evaluate(f, traced(np.ones(3)))
>>> print(trace_graph(last_tape()).describe())
forward:
  x: argument, shape (3,)
  v1: sin, line 2, shape (3,)  <- x (3,)
  v2: multiply, line 3, shape (3,)  <- v1 (3,), v1 (3,)
  v3: sum, line 3, shape ()  <- v2 (3,)
adjoint:
  d_x: sin backward, shape (3,)  <- d_v1 (3,)
  d_v1: multiply backward, shape (3,)  <- d_v2 (3,)
  d_v2: sum backward, shape (3,)  <- d_v3 ()
  d_v3: gradient of the output, shape ()
"""

from __future__ import annotations

import re
from typing import Any

from autodiff_tutor.graphs.model import Graph, GraphEdge, GraphNode

_LAST_NUMBER = re.compile(r"(\d+)\s*$")


def _line(where: str) -> int | None:
    found = _LAST_NUMBER.search(where)
    return int(found.group(1)) if found else None


def trace_graph(tape: Any) -> Graph:
    """The graph of ``tape`` (``last_tape()``, or ``tape_of(value)``); see the module
    docstring."""
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    producer: dict[int, str] = {}  # tape node -> graph node id
    for node in tape.nodes:
        if node.record is None:
            graph_id = f"f:{node.label}"
            nodes.append(
                GraphNode(
                    graph_id,
                    "forward",
                    node.label,
                    "argument",
                    shape=node.shape,
                    role="input",
                    where="" if node.where == "argument" else node.where,
                )
            )
            producer[node.id] = graph_id
    used: set[int] = set()
    for record in tape.records:
        names = [tape.nodes[n].label for n in record.outputs] or [f"#{record.index}"]
        graph_id = f"f:{names[0]}"
        shapes = [tape.nodes[n].shape for n in record.outputs]
        nodes.append(
            GraphNode(
                graph_id,
                "forward",
                ", ".join(names),
                record.op + (f" {record.detail}" if record.detail else ""),
                line=_line(record.where),
                shape=shapes[0] if shapes else None,
                role="operation" if record.needs_gradient else "no gradient",
                where=record.where,
            )
        )
        for info in record.inputs:
            if info.node is not None and info.node in producer:
                edges.append(GraphEdge(producer[info.node], graph_id, info.shape))
                if record.needs_gradient:
                    used.add(info.node)
        for n in record.outputs:
            producer[n] = graph_id
    nodes, edges = _with_adjoint(tape, nodes, edges, producer, used)
    return Graph(tape.describe(), nodes, edges, "gradients of the trace's results")


def _with_adjoint(
    tape: Any,
    nodes: list[GraphNode],
    edges: list[GraphEdge],
    producer: dict[int, str],
    used: set[int],
) -> tuple[list[GraphNode], list[GraphEdge]]:
    """Add a gradient beside each value gradient flows back to, from the results."""
    carrying = [r for r in tape.records if r.needs_gradient]
    results = {n for r in carrying for n in r.outputs if n not in used}
    reached = set(results)
    users: dict[int, list[str]] = {}
    for record in reversed(carrying):
        if reached & set(record.outputs):
            for info in record.inputs:
                if info.node is not None and info.node in producer:
                    reached.add(info.node)
                    users.setdefault(info.node, []).append(record.op)
    by_id = {node.id: node for node in nodes}
    adjoint_of: dict[str, str] = {}
    added: list[GraphNode] = []
    for tape_node in tape.nodes:
        if tape_node.id not in reached:
            continue
        primal = by_id[producer[tape_node.id]]
        if primal.id in adjoint_of:
            continue
        ops = list(dict.fromkeys(users.get(tape_node.id, [])))
        if tape_node.id in results:
            operation, role = "gradient of the output", "seed"
        else:
            operation = f"{ops[0]} backward" if len(ops) == 1 else f"sum of {len(ops)} backwards"
            role = "gradient" if primal.role == "input" else "operation"
        graph_id = f"a:d_{primal.name}"
        adjoint_of[primal.id] = graph_id
        added.append(
            GraphNode(
                graph_id,
                "adjoint",
                f"d_{primal.name}",
                operation,
                shape=tape_node.shape,
                role=role,
                beside=primal.id,
            )
        )
    for record in tape.records:
        if not record.needs_gradient or not reached & set(record.outputs):
            continue
        source = adjoint_of[producer[record.outputs[0]]]
        shape = tape.nodes[record.outputs[0]].shape  # an arrow carries its source's value
        for node in dict.fromkeys(i.node for i in record.inputs if i.node in reached):
            edges.append(GraphEdge(source, adjoint_of[producer[node]], shape, "adjoint"))
    return nodes + added, edges
