"""A computation as a graph: the forward's operations and the adjoint beside them.

A :class:`Graph` is plain data: its nodes (a value the program computes, with the
user's name and line, or a gradient the backward computes) and its edges (which
value flows into which operation, with the value's shape). The forward's edges point
from inputs to the output; the adjoint's point back, from the output's gradient to
the inputs' gradients; a ``saved`` edge is a forward value the backward reads.
Builders: :mod:`.of_compiled` (the compiler's program and its generated backward) and
:mod:`.of_trace` (a tracing tape). It draws itself as SVG (:mod:`.svg`).

>>> g = Graph("f", [GraphNode("x", "forward", "x", "argument", role="input"),
...                 GraphNode("y", "forward", "y", "sin", line=2, shape=(3,))],
...           [GraphEdge("x", "y", (3,))])
>>> print(g.describe())
forward:
  x: argument
  y: sin, line 2, shape (3,)  <- x (3,)
>>> g.inputs_of("y")
['x']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autodiff_tutor.graphs.svg import render

#: The sides of a graph: the user's operations, and the gradients computed backward.
SIDES = ("forward", "adjoint")


@dataclass(frozen=True)
class GraphNode:
    """One value of the computation.

    ``name`` is the user's name (``h``), the compiler's (``t1``), the trace's (``v3``)
    or a gradient's (``d_h``); ``operation`` what computes it (``tanh``,
    ``argument``); ``line`` the user's line; ``code`` the user's code (or, for the
    adjoint, the generated statement); ``beside``: for a gradient, the forward node it
    is the gradient of, drawn on its row. ``role``: ``input`` (an argument),
    ``operation``, ``output`` (the returned value), ``seed`` (the gradient the backward
    starts from), ``gradient`` (one it returns), ``no gradient`` (an operation no
    gradient flows through).
    """

    id: str
    side: str
    name: str
    operation: str
    line: int | None = None
    code: str = ""
    shape: tuple[int, ...] | None = None
    role: str = "operation"
    beside: str | None = None
    where: str = ""  # the line as a student reads it ("cell In[3], line 2"), for traces
    label: str = ""  # the picture's first line, where not the name (a temporary's code)


@dataclass(frozen=True)
class GraphEdge:
    """A value flowing from ``source`` into ``target`` (node ids), with its shape;
    ``kind``: ``forward`` (a forward value), ``adjoint`` (a gradient), ``saved`` (a
    forward value the backward reads)."""

    source: str
    target: str
    shape: tuple[int, ...] | None = None
    kind: str = "forward"


@dataclass
class Graph:
    """The forward graph of a computation and its adjoint; see the module docstring.

    In a notebook it shows as a picture (``_repr_svg_``); :meth:`svg` gives the SVG
    text and :meth:`save` writes it to a file.

    >>> g = Graph("f", [GraphNode("x", "forward", "x", "argument")])
    >>> g, g.side("forward")[0].name
    (<graph of f: 1 forward nodes, 0 adjoint nodes>, 'x')
    """

    title: str
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    note: str = ""

    def by_id(self, node_id: str) -> GraphNode:
        """The node with id ``node_id``."""
        return next(node for node in self.nodes if node.id == node_id)

    def side(self, side: str) -> list[GraphNode]:
        """The nodes of ``side`` (``"forward"`` or ``"adjoint"``), in program order."""
        return [node for node in self.nodes if node.side == side]

    def named(self, name: str, side: str | None = None) -> list[GraphNode]:
        """The nodes called ``name`` (a name assigned twice has two), in order."""
        return [n for n in self.nodes if n.name == name and side in (None, n.side)]

    def inputs_of(self, node_id: str, kind: str | None = None) -> list[str]:
        """The names of the nodes whose values flow into ``node_id``, in order (edges
        of ``kind`` only, when given)."""
        return [
            self.by_id(e.source).name
            for e in self.edges
            if e.target == node_id and kind in (None, e.kind)
        ]

    def describe(self) -> str:
        """The graph as text: each node, its operation, line and shape, and its inputs."""
        lines = []
        for side in SIDES:
            nodes = self.side(side)
            if not nodes:
                continue
            lines.append(f"{side}:")
            for node in nodes:
                facts = [node.operation]
                if node.line is not None:
                    facts.append(f"line {node.line}")
                if node.shape is not None:
                    facts.append(f"shape {node.shape}")
                text = f"  {node.name}: {', '.join(facts)}"
                incoming = [
                    f"{self.by_id(e.source).name} {e.shape}"
                    if e.shape is not None
                    else self.by_id(e.source).name
                    for e in self.edges
                    if e.target == node.id and e.kind != "saved"
                ]
                if incoming:
                    text += "  <- " + ", ".join(incoming)
                lines.append(text)
        return "\n".join(lines)

    def svg(self) -> str:
        """The picture, as SVG text (forward on the left, the adjoint on the right)."""
        return render(self)

    def save(self, path: str | Path) -> Path:
        """Write the picture to ``path`` (an ``.svg`` file); return the path."""
        path = Path(path)
        path.write_text(self.svg(), encoding="utf-8")
        return path

    def _repr_svg_(self) -> str:
        return self.svg()

    def __repr__(self) -> str:
        forward, adjoint = len(self.side("forward")), len(self.side("adjoint"))
        return f"<graph of {self.title}: {forward} forward nodes, {adjoint} adjoint nodes>"
