"""A graph drawn as SVG, by hand: no graphviz, nothing to install.

The forward on the left, top to bottom; the adjoint on the right, each gradient on the
row of the value it is the gradient of, its arrows pointing up; dashed grey lines are
forward values the backward reads. Each node shows its name (or a temporary's code)
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
from typing import Any

from autodiff_tutor.graphs.layout import MARGIN, TOP, Box, layout, node_lines

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
