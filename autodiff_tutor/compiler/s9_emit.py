"""Stage 9, emit — generated trees -> readable source -> Python functions.

The only place where generated code becomes text. The forward and backward are
rendered as two ordinary ``def`` s with the user's line in a comment beside each
backward statement, compiled, and registered with ``linecache`` so that tracebacks,
``inspect.getsource`` and debuggers show the generated code. They run in the user's
module globals (so later changes to a global constant are seen) with the runtime
helpers passed in as closure values.

>>> from autodiff_tutor.compiler import code
>>> from autodiff_tutor.compiler.s7_memory import Memory
>>> g = Generated("f", ["x"], ["x"], ["out"], False,
...               forward=[code.assign("out", ast.parse("x * x", mode="eval").body)],
...               backward=[code.assign("d_x", ast.parse("2 * d_out * x", mode="eval").body,
...                                     "line 2")],
...               memory=Memory(["x"]), gradients=["d_x"], seeds=["d_out"])
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
import re
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from autodiff_tutor.compiler.code import origin_of
from autodiff_tutor.compiler.ir import tuple_source
from autodiff_tutor.compiler.s1_source import closure_values
from autodiff_tutor.compiler.s5_tangent import Tangents
from autodiff_tutor.compiler.s6_facts import probe_fact
from autodiff_tutor.compiler.s6_specialize import probe_site
from autodiff_tutor.compiler.s7_memory import Memory
from autodiff_tutor.protocol import as_op
from autodiff_tutor.runtime import backend, helpers
from autodiff_tutor.runtime import generated as generated_sources
from autodiff_tutor.runtime.stack import Stack

RUNTIME: dict[str, Any] = {name: getattr(helpers, name) for name in helpers.__all__}
RUNTIME.update(
    array_module=backend.array_module,
    zeros_like=backend.zeros_like,
    has_float_dtype=backend.has_float_dtype,
    ones_like=backend.ones_like,
    like=backend.like,
    shape_of=backend.shape_of,
    unbound=backend.unbound,
    Stack=Stack,
    differentiable=as_op,
    probe_site=probe_site,
    probe_fact=probe_fact,
)

_counter = itertools.count(1)
_FREED: list[str] = []  # linecache names of generated sources whose functions were freed
_ORIGIN = re.compile(r"line (\d+):")  # the user's line in a generated line's origin
_ORIGINS: dict[str, dict[int, int]] = {}  # rendered source -> {its line: the user's line}
COMMENT_COLUMN = 58  # comments line up, but never further right than this


@dataclass
class Generated:
    """Forward and backward trees of one function, ready to emit."""

    name: str
    params: list[str]
    wrt: list[str]
    outputs: list[str]
    returns_tuple: bool
    forward: list[ast.stmt] = field(default_factory=list)
    backward: list[ast.stmt] = field(default_factory=list)
    memory: Memory = field(default_factory=lambda: Memory([]))
    gradients: list[str] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)


@dataclass
class Line:
    """One rendered line: its code, the user's line it comes from, its nesting depth."""

    code: str
    origin: str = ""
    depth: int = 0


def lines_of(statements: list[ast.stmt], depth: int = 0) -> list[Line]:
    """The statements as rendered lines (compound statements: header, then body).

    >>> loop = ast.parse("for i in r:\\n    a, = f(i)").body
    >>> [(line.code, line.depth) for line in lines_of(loop)]
    [('for i in r:', 0), ('(a,) = f(i)', 1)]
    """
    lines: list[Line] = []
    for statement in statements:
        origin = origin_of(statement)
        if isinstance(statement, ast.If):
            lines.append(Line(f"if {ast.unparse(statement.test)}:", origin, depth))
            lines += lines_of(statement.body, depth + 1) or [Line("pass", "", depth + 1)]
            if statement.orelse:
                lines.append(Line("else:", origin, depth))
                lines += lines_of(statement.orelse, depth + 1)
        elif isinstance(statement, ast.For):
            header = f"for {ast.unparse(statement.target)} in {ast.unparse(statement.iter)}:"
            lines.append(Line(header, origin, depth))
            lines += lines_of(statement.body, depth + 1) or [Line("pass", "", depth + 1)]
        elif isinstance(statement, ast.While):
            lines.append(Line(f"while {ast.unparse(statement.test)}:", origin, depth))
            lines += lines_of(statement.body, depth + 1) or [Line("pass", "", depth + 1)]
        else:
            lines.append(Line(_simple(statement), origin, depth))
    return lines


def _simple(statement: ast.stmt) -> str:
    """One simple statement; a one-name tuple target keeps its parentheses: ``(a,) =``."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Tuple) and len(target.elts) == 1:
            return f"({ast.unparse(target.elts[0])},) = {ast.unparse(statement.value)}"
    return ast.unparse(statement)


def render_body(lines: list[Line], comments: bool = True) -> list[str]:
    """Rendered lines as indented source (comments aligned in a column)."""
    if not lines:
        return []
    texts = ["    " * (line.depth + 1) + line.code for line in lines]
    width = min(max(len(t) for t in texts), COMMENT_COLUMN)
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
    lines = lines_of(generated.forward)
    body = render_body(lines, comments=False)
    kept = [ast.unparse(generated.memory.kept(n)) for n in generated.memory.names]
    body.append(f"    return {outputs}, {tuple_source(kept) if kept else '()'}")
    return _noted("\n".join([head, *body]), lines, first=2)


def render_backward(generated: Generated) -> str:
    """The backward function's source: output gradients and memory in, input gradients out."""
    head = f"def {generated.name}_backward({', '.join([*generated.seeds, 'memory'])}):"
    body = []
    if generated.memory.names:
        body.append(f"    {tuple_source(generated.memory.names)} = memory")
    first = len(body) + 2
    lines = lines_of(generated.backward)
    body += render_body(lines)
    body.append(f"    return {tuple_source(generated.gradients)}")
    return _noted("\n".join([head, *body]), lines, first)


def render_jvp(tangents: Tangents) -> str:
    """The JVP function's source: values and tangents in, value and tangent out."""
    params = tangents.params + [tangents.dot(w) for w in tangents.wrt]
    rendered = lines_of(tangents.statements)
    lines = [f"def {tangents.name}_jvp({', '.join(params)}):"]
    lines += render_body(rendered, comments=False)
    dots = []
    for output in tangents.outputs:
        dots.append(tangents.dot(output) if output in tangents.varied else f"zeros_like({output})")
    if tangents.returns_tuple:
        lines.append(f"    return ({', '.join(tangents.outputs)},), ({', '.join(dots)},)")
    else:
        lines.append(f"    return {tangents.outputs[0]}, {dots[0]}")
    return _noted("\n".join(lines), rendered, first=2)


def _noted(source: str, lines: list[Line], first: int) -> str:
    """``source``, with the user's line of each of its lines noted (``lines`` start at
    its line ``first``) for :func:`compile_sources` to register: a runtime helper's
    error then points at the user's line (:mod:`autodiff_tutor.runtime.generated`)."""
    numbers = {first + k: _ORIGIN.match(line.origin) for k, line in enumerate(lines)}
    _ORIGINS[source] = {k: int(m.group(1)) for k, m in numbers.items() if m}
    while len(_ORIGINS) > 256:  # sources rendered but never compiled (shown only)
        del _ORIGINS[next(iter(_ORIGINS))]
    return source


def compile_sources(
    name: str, sources: list[str], user_fn: Callable[..., Any]
) -> list[Callable[..., Any]]:
    """Compile generated function definitions in the user's module globals.

    The helpers (and the user function's closure values) are passed to a factory
    function, so the generated code sees them without touching the user's module.
    """
    while _FREED:  # sources of functions freed since the last compile (see below)
        freed = _FREED.pop()
        linecache.cache.pop(freed, None)
        generated_sources.forget(freed)
    closure = closure_values(user_fn)
    captured = {**RUNTIME, **closure}
    defined = [source.split("(", 1)[0].removeprefix("def ") for source in sources]
    factory = f"def __make({', '.join(captured)}):\n"
    factory += "\n".join(_indent(source) for source in sources) + "\n"
    factory += f"    return {', '.join(defined)},\n"
    filename = f"<autodiff_tutor generated {name} #{next(_counter)}>"
    lines = factory.splitlines(keepends=True)
    linecache.cache[filename] = (len(factory), None, lines, filename)
    origins, offset = {}, 1  # the factory's first line is 'def __make(...):'
    for source in sources:
        origins.update({offset + k: n for k, n in _ORIGINS.pop(source, {}).items()})
        offset += source.count("\n") + 1
    generated_sources.register(filename, user_fn.__code__.co_filename, origins)
    code = compile(factory, filename, "exec")
    scope: dict[str, Any] = {}
    exec(code, user_fn.__globals__, scope)  # noqa: S102 - our own generated source
    functions = [_share_closure(fn, user_fn) for fn in scope["__make"](**captured)]
    # the source leaves linecache at the next compile after the functions are freed, not
    # in the garbage collector: linecache.checkcache() (pdb, doctest) fails if a key
    # goes while it walks the cache
    weakref.finalize(functions[0], _FREED.append, filename)
    return functions


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
