"""Where each node of a graph goes: rows by depth, the adjoint beside the forward.

The forward is drawn top to bottom: a node's row is one more than the deepest of its
inputs (the arguments on row 0), and the nodes of a row are ordered by where their
inputs are (the mean position of their inputs, twice over), so edges cross little.
Each gradient is drawn on the row of the forward value it is the gradient of, in a
column to the right: the adjoint reads bottom to top, the mirror of the forward.

>>> from autodiff_tutor.graphs.model import Graph, GraphEdge, GraphNode
>>> g = Graph("f", [GraphNode("x", "forward", "x", "argument"),
...                 GraphNode("y", "forward", "y", "sin"),
...                 GraphNode("d_x", "adjoint", "d_x", "cos", beside="x")],
...           [GraphEdge("x", "y")])
>>> placed = layout(g)
>>> placed.rows["x"], placed.rows["y"], placed.rows["d_x"]
(0, 1, 0)
>>> placed.boxes["d_x"].x > placed.boxes["y"].x
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CHAR = 7.0  # px per character of the 12 px monospace font
NODE_HEIGHT = 38
ROW = 86  # px from one row's top to the next
GAP = 26  # px between the nodes of a row
GUTTER = 90  # px between the forward and the adjoint
MARGIN = 16
TOP = 44  # room for the headings above row 0


@dataclass(frozen=True)
class Box:
    """A node's rectangle: left, top, width, height (px)."""

    x: float
    y: float
    width: float
    height: float

    @property
    def centre(self) -> float:
        return self.x + self.width / 2


@dataclass
class Layout:
    """The rows and boxes of every node, the picture's size and the adjoint's left edge."""

    rows: dict[str, int] = field(default_factory=dict)
    boxes: dict[str, Box] = field(default_factory=dict)
    width: float = 0.0
    height: float = 0.0
    adjoint_left: float | None = None


def node_lines(node: Any) -> tuple[str, str]:
    """The two lines of text a node shows: its name (or code), its operation and line."""
    where = f"line {node.line}" if node.line is not None else node.where
    second = node.operation + (f" · {where}" if where else "")
    first = node.name
    if node.label.isidentifier():
        first = f"{node.label} ({node.name})"  # your variable, which the compiler renamed
    elif node.label:
        first = f"{node.name} = {node.label}"  # a value you did not name: your code
    return first, second


def _width(node: Any) -> float:
    return max(64.0, CHAR * max(len(text) for text in node_lines(node)) + 18)


def _forward_sources(graph: Any) -> dict[str, list[str]]:
    """The nodes whose values flow into each node, by the forward's edges."""
    sources: dict[str, list[str]] = {}
    for edge in graph.edges:
        if edge.kind == "forward":
            sources.setdefault(edge.target, []).append(edge.source)
    return sources


def _forward_rows(graph: Any, sources: dict[str, list[str]]) -> dict[str, int]:
    rows: dict[str, int] = {}
    for node in graph.side("forward"):  # program order: inputs come first
        before = [rows[s] for s in sources.get(node.id, []) if s in rows]
        rows[node.id] = 1 + max(before) if before else 0
    return rows


def _order(ids: list[str], position: dict[str, float], sources: dict[str, list[str]]) -> list[str]:
    def key(node_id: str) -> float:
        known = [position[s] for s in sources.get(node_id, []) if s in position]
        return sum(known) / len(known) if known else position.get(node_id, 0.0)

    return sorted(ids, key=key)  # stable: program order among equals


def layout(graph: Any) -> Layout:
    """Rows and boxes for every node of ``graph``; see the module docstring."""
    placed = Layout()
    sources = _forward_sources(graph)
    rows = _forward_rows(graph, sources)
    forward = graph.side("forward")
    adjoint = graph.side("adjoint")
    last = max(rows.values(), default=0)
    for node in adjoint:
        rows[node.id] = rows.get(node.beside, last) if node.beside else last
    placed.rows = rows
    widths = {node.id: _width(node) for node in graph.nodes}
    by_row: dict[int, list[str]] = {}
    for node in forward:
        by_row.setdefault(rows[node.id], []).append(node.id)
    position = {node.id: float(k) for k, node in enumerate(forward)}
    for _ in range(2):  # order each row by its inputs' places, top to bottom
        for row in sorted(by_row):
            by_row[row] = _order(by_row[row], position, sources)
            x = 0.0
            for node_id in by_row[row]:
                position[node_id] = x + widths[node_id] / 2
                x += widths[node_id] + GAP
    row_widths = {
        row: sum(widths[i] for i in ids) + GAP * (len(ids) - 1) for row, ids in by_row.items()
    }
    forward_width = max(row_widths.values(), default=0.0)

    def place(row: int, ids: list[str], x: float) -> float:
        """Boxes for the nodes ``ids`` of ``row``, left to right from ``x``; the end."""
        for node_id in ids:
            placed.boxes[node_id] = Box(x, TOP + row * ROW, widths[node_id], NODE_HEIGHT)
            x += widths[node_id] + GAP
        return x

    for row, ids in by_row.items():  # each row centred in the forward's column
        place(row, ids, MARGIN + (forward_width - row_widths[row]) / 2)
    right = MARGIN + forward_width
    if adjoint:
        placed.adjoint_left = right + GUTTER
        beside_x = {
            n.id: placed.boxes[n.beside].x if n.beside in placed.boxes else 0.0 for n in adjoint
        }
        adjoint_rows: dict[int, list[str]] = {}
        for node in sorted(adjoint, key=lambda n: beside_x[n.id]):
            adjoint_rows.setdefault(rows[node.id], []).append(node.id)
        for row, ids in adjoint_rows.items():
            right = max(right, place(row, ids, placed.adjoint_left) - GAP)
    placed.width = right + MARGIN
    bottom = TOP + max(rows.values(), default=0) * ROW + NODE_HEIGHT
    placed.height = bottom + 24 + MARGIN  # room for the curves that leave the last row
    return placed
