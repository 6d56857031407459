"""A graph laid out and drawn as SVG, by hand: no graphviz, nothing to install.

The forward on the left, top to bottom: a node's row is one more than the deepest of
its inputs (the arguments on row 0), and the nodes of a row are ordered by where their
inputs are (the mean position of their inputs, twice over), so edges cross little.
The adjoint on the right, each gradient on the row of the value it is the gradient
of, its arrows pointing up: it reads bottom to top, the mirror of the forward; dashed
grey lines are forward values the backward reads. Each node shows its name (or a temporary's code)
and its operation and line; each arrow the shape of what it carries; hovering a node
shows its code. Nodes and edges carry ``data-node`` / ``data-edge`` attributes, so a
test can read the picture's structure.

>>> from autodiff_tutor.graphs.model import Graph, GraphEdge, GraphNode
>>> g = Graph("f", [GraphNode("x", "forward", "x", "argument", role="input"),
...                 GraphNode("y", "forward", "y", "sin", line=2)],
...           [GraphEdge("x", "y", (3,))])
>>> picture = render(g)
>>> picture.startswith("<svg") and 'data-edge="x->y"' in picture and "(3,)" in picture
True
"""

from __future__ import annotations

import html
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
    """Rows and boxes for every node of ``graph``; see the module docstring.

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


#: Fill and border of a node, by side and role.
FILL = {"forward": "#e3f0ff", "adjoint": "#fff0dc"}
BORDER = {"forward": "#2f6db5", "adjoint": "#c06a00"}
GREY = "#9a9a9a"
ARROW = {"forward": "#2f6db5", "adjoint": "#c06a00", "saved": "#b8b8b8"}


def _shape_text(shape: tuple[int, ...] | None) -> str:
    return "" if shape is None else str(tuple(shape))


def _node(node: Any, box: Box) -> str:
    first, second = node_lines(node)
    grey = node.role == "no gradient"
    fill = "#f2f2f2" if grey else FILL[node.side]
    border = GREY if grey else BORDER[node.side]
    width = 2.4 if node.role in ("input", "output", "seed", "gradient") else 1.2
    tip = node.code or first
    if node.shape is not None:
        tip += f"\nshape {_shape_text(node.shape)}"
    parts = [
        f'<g data-node="{html.escape(node.id)}" data-side="{node.side}" data-role="{node.role}">',
        f"<title>{html.escape(tip)}</title>",
        f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" '
        f'height="{box.height:.1f}" rx="6" fill="{fill}" stroke="{border}" '
        f'stroke-width="{width}"/>',
    ]
    if node.role in ("output", "seed"):  # a second border: where the picture starts or ends
        parts.append(
            f'<rect x="{box.x + 3:.1f}" y="{box.y + 3:.1f}" width="{box.width - 6:.1f}" '
            f'height="{box.height - 6:.1f}" rx="4" fill="none" stroke="{border}" '
            'stroke-width="0.8"/>'
        )
    parts += [
        f'<text x="{box.centre:.1f}" y="{box.y + 16:.1f}" text-anchor="middle" '
        f'font-weight="bold" fill="#111">{html.escape(first)}</text>',
        f'<text x="{box.centre:.1f}" y="{box.y + 30:.1f}" text-anchor="middle" '
        f'font-size="11" fill="#444">{html.escape(second)}</text>',
        "</g>",
    ]
    return "".join(parts)


def _ends(edge: Any, start: Box, end: Box, rows: tuple[int, int]) -> tuple[float, ...]:
    """Where an arrow leaves ``start`` and reaches ``end``."""
    if edge.kind == "saved":  # from under the value, round to the gradient's left side
        return start.centre, start.y + start.height, end.x, end.y + end.height / 2
    if rows[0] == rows[1]:  # side by side
        left_to_right = start.centre < end.centre
        x1 = start.x + start.width if left_to_right else start.x
        x2 = end.x if left_to_right else end.x + end.width
        return x1, start.y + start.height / 2, x2, end.y + end.height / 2
    if rows[0] < rows[1]:  # downwards
        return start.centre, start.y + start.height, end.centre, end.y
    return start.centre, start.y, end.centre, end.y + end.height  # upwards


def _edge(edge: Any, start: Box, end: Box, rows: tuple[int, int]) -> str:
    x1, y1, x2, y2 = _ends(edge, start, end, rows)
    colour = ARROW[edge.kind]
    dash = ' stroke-dasharray="4 3"' if edge.kind == "saved" else ""
    width = 0.9 if edge.kind == "saved" else 1.4
    if edge.kind == "saved":  # a curve that leaves downwards, keeping clear of the row
        path = (
            f"M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + 30:.1f} {x2 - 50:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
        )
    else:
        path = f"M{x1:.1f},{y1:.1f} L{x2:.1f},{y2:.1f}"
    parts = [
        f'<g data-edge="{html.escape(edge.source)}->{html.escape(edge.target)}" '
        f'data-kind="{edge.kind}">',
        f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{width}"{dash} '
        f'marker-end="url(#arrow-{edge.kind})"/>',
    ]
    label = _shape_text(edge.shape)
    if label and edge.kind != "saved":
        parts.append(
            f'<text x="{(x1 + x2) / 2 + 4:.1f}" y="{(y1 + y2) / 2 + 4:.1f}" font-size="10" '
            f'fill="{colour}" stroke="white" stroke-width="3" paint-order="stroke">'
            f"{html.escape(label)}</text>"
        )
    parts.append("</g>")
    return "".join(parts)


def _markers() -> str:
    return (
        "<defs>"
        + "".join(
            f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            f'fill="{colour}"/></marker>'
            for kind, colour in ARROW.items()
        )
        + "</defs>"
    )


def render(graph: Any) -> str:
    """``graph`` as an SVG document; see the module docstring."""
    placed = layout(graph)
    heading_y = TOP - 22
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{placed.width:.0f}" '
        f'height="{placed.height:.0f}" viewBox="0 0 {placed.width:.0f} {placed.height:.0f}" '
        f'font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="12" '
        f'data-autodiff-graph="{html.escape(graph.title)}">',
        f"<title>{html.escape(graph.title)}</title>",
        _markers(),
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{MARGIN}" y="{heading_y}" font-weight="bold" fill="{BORDER["forward"]}">'
        "forward ↓</text>",
    ]
    if placed.adjoint_left is not None:
        parts.append(
            f'<text x="{placed.adjoint_left:.1f}" y="{heading_y}" font-weight="bold" '
            f'fill="{BORDER["adjoint"]}">adjoint ↑ (gradients)</text>'
        )
    nodes = {node.id: node for node in graph.nodes}
    for edge in sorted(graph.edges, key=lambda e: e.kind != "saved"):  # saved ones under
        if edge.source in nodes and edge.target in nodes:
            rows = (placed.rows[edge.source], placed.rows[edge.target])
            parts.append(_edge(edge, placed.boxes[edge.source], placed.boxes[edge.target], rows))
    parts += [_node(node, placed.boxes[node.id]) for node in graph.nodes]
    parts.append("</svg>")
    return "\n".join(parts)
