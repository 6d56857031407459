"""Stage 7: generated statements -> readable source -> Python functions.

The forward and backward are rendered as two ordinary ``def`` s with the user's
line in a comment beside each backward statement, compiled, and registered with
``linecache`` so that tracebacks, ``inspect.getsource`` and debuggers show the
generated code. They run in the user's module globals (so later changes to a
global constant are seen) with the runtime helpers passed in as closure values.

>>> from autodiff_tutor.compiler.reverse import Generated, Line
>>> g = Generated("f", ["x"], ["x"], ["out"], False,
...               forward=[Line("out = x * x")], backward=[Line("d_x = 2 * d_out * x", "line 2")],
...               memory=["x"], gradients=["d_x"])
>>> print(render_backward(g))
def f_backward(d_out, memory):
    (x,) = memory
    d_x = 2 * d_out * x  # line 2
    return (d_x,)
"""

from __future__ import annotations

import ast
import itertools
import linecache
import types
from collections.abc import Callable
from typing import Any

from autodiff_tutor.compiler.ir import tuple_source
from autodiff_tutor.compiler.reverse import Generated, Line
from autodiff_tutor.compiler.source import closure_values
from autodiff_tutor.runtime import backend, helpers
from autodiff_tutor.runtime.tape import Tape

RUNTIME: dict[str, Any] = {name: getattr(helpers, name) for name in helpers.__all__}
RUNTIME.update(
    array_module=backend.array_module,
    zeros_like=backend.zeros_like,
    ones_like=backend.ones_like,
    like=backend.like,
    shape_of=backend.shape_of,
    unbound=backend.unbound,
    Tape=Tape,
)


def _differentiable(fn: Any) -> Any:
    from autodiff_tutor.api import differentiable

    return differentiable(fn)


RUNTIME["differentiable"] = _differentiable

_counter = itertools.count(1)


def render_body(lines: list[Line], comments: bool = True) -> list[str]:
    """Generated statements as indented source lines (comments aligned in a column)."""
    return _body(lines, comments)


def _body(lines: list[Line], comments: bool = True) -> list[str]:
    if not lines:
        return []
    texts = ["    " * (line.depth + 1) + line.code for line in lines]
    width = min(max(len(t) for t in texts), 58)
    out = []
    for line, text in zip(lines, texts, strict=True):
        if comments and line.origin and not line.code.endswith(":"):
            out.append(f"{text.ljust(width)}  # {line.origin}".rstrip())
        else:
            out.append(text)
    return out


def render_forward(generated: Generated) -> str:
    """The forward function's source: the outputs, then the memory for backward."""
    head = f"def {generated.name}_forward({', '.join(generated.params)}):"
    outputs = tuple_source(generated.outputs) if generated.returns_tuple else generated.outputs[0]
    body = _body(generated.forward, comments=False)
    saved = [f"like({n})" if n in generated.shape_only else n for n in generated.memory]
    body.append(f"    return {outputs}, {tuple_source(saved) if saved else '()'}")
    return "\n".join([head, *body])


def render_backward(generated: Generated) -> str:
    """The backward function's source: output gradients and memory in, input gradients out."""
    head = f"def {generated.name}_backward({', '.join([*generated.seeds, 'memory'])}):"
    body = []
    if generated.memory:
        body.append(f"    {tuple_source(generated.memory)} = memory")
    body += _body(generated.backward)
    body.append(f"    return {tuple_source(generated.gradients)}")
    return "\n".join([head, *body])


def compile_functions(
    generated: Generated, user_fn: Callable[..., Any]
) -> tuple[Callable[..., Any], Callable[..., Any], str, str]:
    """Compile the forward and backward; returns them with their sources."""
    forward_src, backward_src = render_forward(generated), render_backward(generated)
    forward, backward = compile_sources(generated.name, [forward_src, backward_src], user_fn)
    return forward, backward, forward_src, backward_src


def compile_sources(
    name: str, sources: list[str], user_fn: Callable[..., Any]
) -> list[Callable[..., Any]]:
    """Compile generated function definitions in the user's module globals.

    The helpers (and the user function's closure values) are passed to a factory
    function, so the generated code sees them without touching the user's module.
    """
    closure = closure_values(user_fn)
    captured = {**RUNTIME, **closure}
    defined = [source.split("(", 1)[0].removeprefix("def ") for source in sources]
    factory = f"def __make({', '.join(captured)}):\n"
    factory += "\n".join(_indent(source) for source in sources) + "\n"
    factory += f"    return {', '.join(defined)},\n"
    filename = f"<autodiff_tutor generated {name} #{next(_counter)}>"
    lines = factory.splitlines(keepends=True)
    linecache.cache[filename] = (len(factory), None, lines, filename)
    code = compile(factory, filename, "exec")
    scope: dict[str, Any] = {}
    exec(code, user_fn.__globals__, scope)  # noqa: S102 - our own generated source
    return [_share_closure(fn, user_fn) for fn in scope["__make"](**captured)]


def _share_closure(fn: Callable[..., Any], user_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` reading the user function's own closure cells, so that a closure variable
    rebound after compiling (``w = w * 0.5`` in a training loop) is seen, as in Python."""
    user_cells = dict(zip(user_fn.__code__.co_freevars, user_fn.__closure__ or (), strict=True))
    names = fn.__code__.co_freevars
    cells = tuple(
        user_cells.get(name, cell) for name, cell in zip(names, fn.__closure__ or (), strict=True)
    )
    shared = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, cells)
    shared.__qualname__ = fn.__qualname__
    return shared


def _indent(source: str) -> str:
    return "\n".join("    " + line if line else line for line in source.splitlines())


def helper_names() -> set[str]:
    """Names the generated code may use for runtime helpers.

    >>> "unbroadcast" in helper_names()
    True
    """
    return set(RUNTIME)


_ = ast  # rendering works on source strings produced by ast.unparse
