"""A picture of the graph: the forward computation and its adjoint, side by side.

``graph(f, *args)`` draws a compiled function (or a plain one, compiled for the
picture) run once on ``args``: its operations named by your variables and lines,
the arrows labelled with shapes, and beside them the gradients the generated
backward computes. ``graph(tape)`` draws what the tracing mode recorded
(``last_tape()``, or the tape of a traced value). The result shows as a picture in
a notebook; ``describe()`` gives it as text, ``save("f.svg")`` writes the SVG.
Nothing to install: the SVG is written here, with no graphviz.

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> @differentiable
... def loss(w, x):
...     h = np.tanh(x * w)
...     return np.sum(h * h)
>>> picture = graph(loss, np.ones(3), np.arange(3.0), wrt="w")
>>> print(picture.describe())  # doctest: +NORMALIZE_WHITESPACE
forward:
  w: argument, shape (3,)
  x: argument, shape (3,)
  t1: multiply, line 3, shape (3,)  <- x (3,), w (3,)
  h: tanh, line 3, shape (3,)  <- t1 (3,)
  t2: multiply, line 4, shape (3,)  <- h (3,), h (3,)
  out: sum, line 4, shape ()  <- t2 (3,)
adjoint:
  d_out: gradient of the output, shape ()
  d_t2: sum backward, line 4, shape (3,)  <- d_out ()
  d_h: multiply backward, line 4, shape (3,)  <- d_t2 (3,)
  d_t1: tanh backward, line 3, shape (3,)  <- d_h (3,)
  d_w: multiply backward, line 3, shape (3,)  <- d_t1 (3,)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.graphs.model import Graph, GraphEdge, GraphNode
from autodiff_tutor.graphs.of_compiled import compiled_graph
from autodiff_tutor.graphs.of_trace import trace_graph
from autodiff_tutor.graphs.shapes import watching
from autodiff_tutor.runtime.backend import ones_like
from autodiff_tutor.tracing.tape import Tape, tape_of
from autodiff_tutor.tracing.traced_values import is_traced

__all__ = ["Graph", "GraphEdge", "GraphNode", "compiled_graph", "graph", "trace_graph"]


def graph(what: Callable[..., Any] | Tape | Any, *args: Any, wrt: Any = None) -> Graph:
    """The graph of a function run on ``args`` (gradients w.r.t. ``wrt``, as in
    ``grad``; by default every floating-point argument), or of a trace: a tape, or a
    traced value recorded on one. In a notebook it shows as a picture.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(np.sin(x))
    >>> picture = graph(f, np.zeros(3))
    >>> [(n.name, n.shape) for n in picture.side("adjoint")]
    [('d_out', ()), ('d_t1', (3,)), ('d_x', (3,))]
    >>> picture.svg().startswith("<svg")
    True
    """
    if isinstance(what, Tape):
        return trace_graph(what)
    if is_traced(what):
        tape = tape_of(what)
        if tape is None:
            raise ArgumentError(
                "this traced value was never recorded on a trace, so it has no graph",
                hint="draw the trace of an evaluate() call: graph(last_tape())",
            )
        return trace_graph(tape)
    if not callable(what):
        raise ArgumentError(
            f"graph() draws a function or a trace, not a {type(what).__name__}",
            hint="graph(f, *args) for a function, graph(last_tape()) for a trace",
        )
    return _compiled_run(what, args, wrt)


def _compiled_run(f: Callable[..., Any], args: tuple[Any, ...], wrt: Any) -> Graph:
    """Compile ``f``, run its forward and backward once on ``args``, draw the pair
    with the shapes each value had."""
    from autodiff_tutor.api import differentiable
    from autodiff_tutor.api.arguments import float_params

    compiled = differentiable(f)
    if not args:
        return compiled_graph(compiled.derivative(wrt))
    if wrt is None:
        wrt = float_params(compiled, args, {})
    derivative = compiled.derivative(wrt)
    codes = (derivative.forward.__code__, derivative.backward.__code__)
    with watching(*codes) as shapes:
        derivative, out, memory, _ = compiled.forward_run(wrt, args)
        outputs = out if derivative.returns_tuple else (out,)
        seeds = tuple(ones_like(o) for o in outputs)  # the shapes do not depend on them
        derivative.backward(*seeds, memory)
    return compiled_graph(derivative, shapes)
