"""Stage 9, emit — generated trees -> readable source -> Python functions.

The only place where generated code becomes text. The forward and backward are
rendered as two ordinary ``def`` s with the user's line in a comment beside each
backward statement, compiled, and registered with ``linecache`` so that tracebacks,
``inspect.getsource`` and debuggers show the generated code. They run in the user's
module globals (so later changes to a global constant are seen) with the runtime
helpers passed in as closure values. The origin of each line (:data:`.locations.ORIGINS`) is
kept beside the code: an exception a line raises is reported at the user's code
(:mod:`.failures`).

>>> from autodiff_tutor.compiler import code
>>> from autodiff_tutor.compiler.reverse.memory import Memory
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
import builtins
import itertools
import linecache
import sys
import types
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from autodiff_tutor.compiler.code import origin_of
from autodiff_tutor.compiler.forward_mode.tangent import Tangents
from autodiff_tutor.compiler.front.names import emission_names, identifier_renames, renamed
from autodiff_tutor.compiler.front.source import ParsedFunction, closure_values
from autodiff_tutor.compiler.ir import tuple_source
from autodiff_tutor.compiler.origins import Origin
from autodiff_tutor.compiler.reverse.memory import Memory
from autodiff_tutor.compiler.specialize.facts import probe_fact
from autodiff_tutor.compiler.specialize.paths import probe_path
from autodiff_tutor.compiler.specialize.probe import probe_site
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.locations import ORIGINS
from autodiff_tutor.protocol import as_op
from autodiff_tutor.runtime import backend, guards, helpers
from autodiff_tutor.runtime.stack import PathStack, Stack, iteration_slots

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
    PathStack=PathStack,
    iteration_slots=iteration_slots,
    differentiable=as_op,
    probe_site=probe_site,
    probe_fact=probe_fact,
    expect_array=guards.expect_array,
    expect_arrays=guards.expect_arrays,
    expect_fact=guards.expect_fact,
    expect_path=guards.expect_path,
    probe_path=probe_path,
)

#: The builtins the generated code calls itself (loops replayed backward, lengths,
#: checks of a call's arguments).
BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in ("len", "list", "range", "reversed", "zip", "TypeError")
}

#: Every name the generated code gives a meaning of its own: the helpers, the builtins
#: it calls, and the variables it makes itself. A user's variable of one of these
#: names keeps it; the generated code calls its own by another (:mod:`.front.names`).
GENERATED_NAMES: dict[str, Any] = {
    **RUNTIME,
    **BUILTINS,
    **dict.fromkeys(("memory", "stack", "path", "xp", "site_flags"), object()),
}

T = TypeVar("T", bound=ast.AST)

_counter = itertools.count(1)
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


class Spelling:
    """How the generated code spells each identifier (a user's name that a helper
    shares given back, the helper called by another: :mod:`.front.names`), and every
    identifier it was asked to spell, so that the renames can be chosen from what the
    code uses before it is rendered with them.

    >>> spelling = Spelling({"size__user": "size", "size": "size_"})
    >>> print(ast.unparse(spelling.tree(ast.parse("y = size(size__user)"))))
    y = size_(size)
    >>> spelling("memory"), sorted(spelling.used)
    ('memory', ['memory', 'size', 'size__user', 'y'])
    """

    def __init__(self, renames: Mapping[str, str] | None = None) -> None:
        self.renames = dict(renames or {})
        self.used: set[str] = set()

    def __call__(self, name: str) -> str:
        """How the code spells the identifier ``name``."""
        self.used.add(name)
        return self.renames.get(name, name)

    def all(self, names: Iterable[str]) -> list[str]:
        """How the code spells each of ``names``."""
        return [self(name) for name in names]

    def tree(self, tree: T) -> T:
        """``tree`` with its identifiers spelled (a copy where one changes)."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.arg):
                self.used.add(node.id if isinstance(node, ast.Name) else node.arg)
        return renamed(tree, self.renames)


#: A function's source rendered with the given spelling of its identifiers.
Render = Callable[[Spelling], "Source"]


@dataclass
class Line:
    """One rendered line: its code, the user's line it comes from, its nesting depth,
    and the sub-expressions that compute another user's expression (a forward written
    as expressions): (first column, end column in ``code``, origin)."""

    code: str
    origin: str = ""
    depth: int = 0
    #: shown with its comment even where comments are off (a guard in the forward)
    commented: bool = False
    parts: tuple[tuple[int, int, Origin], ...] = ()


def lines_of(
    statements: list[ast.stmt], depth: int = 0, spelling: Spelling | None = None
) -> list[Line]:
    """The statements as rendered lines (compound statements: header, then body), their
    identifiers spelled by ``spelling`` (as they are where none is given).

    >>> loop = ast.parse("for i in r:\\n    a, = f(i)").body
    >>> [(line.code, line.depth) for line in lines_of(loop)]
    [('for i in r:', 0), ('(a,) = f(i)', 1)]
    """
    if spelling is not None:
        statements = [spelling.tree(statement) for statement in statements]
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
            target = statement.target
            names = target.elts if isinstance(target, ast.Tuple) and target.elts else [target]
            header = f"for {', '.join(map(ast.unparse, names))} in {ast.unparse(statement.iter)}:"
            lines.append(Line(header, origin, depth))
            lines += lines_of(statement.body, depth + 1) or [Line("pass", "", depth + 1)]
        elif isinstance(statement, ast.While):
            lines.append(Line(f"while {ast.unparse(statement.test)}:", origin, depth))
            lines += lines_of(statement.body, depth + 1) or [Line("pass", "", depth + 1)]
        else:
            commented = getattr(statement, "commented", False)
            text = _simple(statement)
            lines.append(Line(text, origin, depth, commented, _parts(statement, text)))
    return lines


def _parts(statement: ast.stmt, text: str) -> tuple[tuple[int, int, Origin], ...]:
    """Where, in ``text`` (the statement rendered), the sub-expressions of
    ``statement`` that carry an origin of their own are: noted while rendering it
    again (:class:`_Columns`).

    Only a statement that ``inline`` wrote other statements' values into
    (``inlined``) has any.

    >>> statement = ast.parse("y = np.tanh(a @ b)").body[0]
    >>> statement.value.args[0].origin = Origin("line 3", None, None)
    >>> statement.inlined = True
    >>> _parts(statement, ast.unparse(statement))
    ((12, 17, 'line 3'),)
    """
    if not getattr(statement, "inlined", False):
        return ()
    value = getattr(statement, "value", None)
    tagged = {
        id(node): node.origin
        for node in ast.walk(statement)
        if node is not statement
        and node is not value
        and isinstance(getattr(node, "origin", None), Origin)
    }
    if not tagged:
        return ()
    columns = _Columns(tagged.keys())
    if columns.visit(statement) != text:
        return ()  # rendered otherwise (a one-name tuple target: see _simple)
    spans = columns.spans
    return tuple((*spans[key], origin) for key, origin in tagged.items() if key in spans)


class _Columns(ast._Unparser):  # ast.unparse's own class (private): one renderer, columns noted
    """``ast.unparse`` noting where in its text each node of ``wanted`` (by ``id``)
    is written: the columns the parser would give it (parentheses added for
    precedence outside).

    >>> tree = ast.parse("(a + b) * c", mode="eval").body
    >>> columns = _Columns({id(tree.left)})
    >>> columns.visit(tree), list(columns.spans.values())
    ('(a + b) * c', [(1, 6)])
    """

    def __init__(self, wanted: Iterable[int]) -> None:
        super().__init__()
        self.wanted = set(wanted)
        self.spans: dict[int, tuple[int, int]] = {}
        self._parenthesized: set[int] = set()

    def require_parens(self, precedence: Any, node: ast.AST) -> Any:
        if self.get_precedence(node) > precedence:
            self._parenthesized.add(id(node))
        return super().require_parens(precedence, node)

    def traverse(self, node: Any) -> None:
        if isinstance(node, list) or id(node) not in self.wanted:
            super().traverse(node)
            return
        first = sum(map(len, self._source))
        super().traverse(node)
        last = sum(map(len, self._source))
        inside = 1 if id(node) in self._parenthesized else 0
        self.spans[id(node)] = (first + inside, last - inside)


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
        if (comments or line.commented) and line.origin and not line.code.endswith(":"):
            out.append(f"{text.ljust(width)}  # {line.origin}".rstrip())
        else:
            out.append(text)
    return out


class Source(str):
    """A generated function's source that also knows each line's :class:`Line` (None
    for a header or a return): :func:`compile_sources` keeps their origins, so that an
    exception a line raises is reported at the user's code (:mod:`.failures`).

    >>> source = Source.of(["def f(x):", *rendered([Line("y = x", "line 2")]), "    return y"])
    >>> [line.origin if line else None for line in source.lines]
    [None, 'line 2', None]
    """

    lines: tuple[Line | None, ...]

    @classmethod
    def of(cls, parts: list[str | tuple[str, Line]]) -> Source:
        """The source of ``parts``: lines of text, or (text, line) pairs."""
        pairs = [(part, None) if isinstance(part, str) else part for part in parts]
        source = cls("\n".join(text for text, _ in pairs))
        source.lines = tuple(line for _, line in pairs)
        return source


def rendered(lines: list[Line], comments: bool = True) -> list[tuple[str, Line]]:
    """:func:`render_body` 's lines, each with its :class:`Line` (for :class:`Source`)."""
    return list(zip(render_body(lines, comments), lines, strict=True))


def render_forward(generated: Generated, spelling: Spelling | None = None) -> Source:
    """The forward function's source: the outputs, then the memory for backward."""
    spell = spelling or Spelling()
    head = f"def {generated.name}_forward({', '.join(spell.all(generated.params))}):"
    outputs = spell.all(generated.outputs)
    returned = tuple_source(outputs) if generated.returns_tuple else outputs[0]
    body = rendered(lines_of(generated.forward, spelling=spell), comments=False)
    kept = [ast.unparse(spell.tree(generated.memory.kept(n))) for n in generated.memory.names]
    body.append(f"    return {returned}, {tuple_source(kept) if kept else '()'}")
    return Source.of([head, *body])


def render_backward(generated: Generated, spelling: Spelling | None = None) -> Source:
    """The backward function's source: output gradients and memory in, input gradients out."""
    spell = spelling or Spelling()
    memory = spell("memory")
    head = f"def {generated.name}_backward({', '.join([*spell.all(generated.seeds), memory])}):"
    body: list[str | tuple[str, Line]] = []
    if generated.memory.names:
        body.append(f"    {tuple_source(spell.all(generated.memory.names))} = {memory}")
    body += rendered(lines_of(generated.backward, spelling=spell))
    body.append(f"    return {tuple_source(spell.all(generated.gradients))}")
    return Source.of([head, *body])


def render_jvp(tangents: Tangents, spelling: Spelling | None = None) -> Source:
    """The JVP function's source: values and tangents in, value and tangent out."""
    spell = spelling or Spelling()
    params = spell.all(tangents.params + [tangents.dot(w) for w in tangents.wrt])
    lines: list[str | tuple[str, Line]] = [f"def {tangents.name}_jvp({', '.join(params)}):"]
    lines += rendered(lines_of(tangents.statements, spelling=spell), comments=False)
    outputs = spell.all(tangents.outputs)
    dots = []
    for output, spelled in zip(tangents.outputs, outputs, strict=True):
        varied = output in tangents.varied
        dots.append(spell(tangents.dot(output)) if varied else f"{spell('zeros_like')}({spelled})")
    if tangents.returns_tuple:
        lines.append(f"    return ({', '.join(outputs)},), ({', '.join(dots)},)")
    else:
        lines.append(f"    return {outputs[0]}, {dots[0]}")
    return Source.of(lines)


def compile_pair(
    name: str, generated: Generated, parsed: ParsedFunction
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The forward and backward functions of ``generated`` (see :func:`compile_sources`)."""
    renders = [partial(render_forward, generated), partial(render_backward, generated)]
    forward, backward = compile_sources(name, renders, parsed)
    return forward, backward


def compile_sources(
    name: str, renders: list[Render], parsed: ParsedFunction
) -> list[Callable[..., Any]]:
    """Compile generated function definitions (each rendered by one of ``renders``)
    in the user's module globals.

    The helpers (and the user function's closure values) are passed to a factory
    function, so the generated code sees them without touching the user's module.
    The origins of the lines of :class:`Source` s go to :data:`.locations.ORIGINS`. A
    name the user's code and a helper share gets its meanings back
    (:mod:`.front.names`): the code is rendered once to learn the identifiers it uses,
    and again with the renames chosen from them; each function's final source is its
    ``generated_source``.
    """
    user_fn = parsed.fn
    spelling = Spelling()
    sources = [render(spelling) for render in renders]
    renames = identifier_renames(spelling.used, emission_names(parsed, GENERATED_NAMES))
    if renames is None:
        raise UnsupportedSyntaxError(
            f"the names {sorted(set(parsed.aliases.values()))} of {parsed.name!r} are also "
            "used by the generated code, and could not be told apart from its own",
            parsed.location(parsed.tree),
            hint="rename those variables (for example with a trailing '_')",
        )
    if renames:
        sources = [render(Spelling(renames)) for render in renders]
    captured = {renames.get(n, n): value for n, value in RUNTIME.items()}
    captured.update({renames[n]: value for n, value in BUILTINS.items() if n in renames})
    captured.update(closure_values(user_fn))
    captured.update(parsed.values)  # what the call was specialized on (functions, objects)
    defined = [source.split("(", 1)[0].removeprefix("def ") for source in sources]
    factory = f"def __make({', '.join(captured)}):\n"
    factory += "\n".join(_indent(source) for source in sources) + "\n"
    factory += f"    return {', '.join(defined)},\n"
    filename = f"<autodiff_tutor generated {name} #{next(_counter)}>"
    forget_source()  # what was freed while linecache was busy
    lines = factory.splitlines(keepends=True)
    linecache.cache[filename] = (len(factory), None, lines, filename)
    code = compile(factory, filename, "exec")
    scope: dict[str, Any] = {}
    exec(code, user_fn.__globals__, scope)  # noqa: S102 - our own generated source
    functions = [_share_closure(fn, user_fn) for fn in scope["__make"](**captured)]
    weakref.finalize(functions[0], forget_source, filename)  # freed together
    table = _origin_table(sources)
    if table:  # for the errors these lines raise (see autodiff_tutor.compiler.failures)
        ORIGINS[filename] = table
        for function in functions:
            function.origin_table = table
    for function, source in zip(functions, sources, strict=True):
        function.generated_source = source
    return functions


#: Generated files whose functions were freed while linecache's own code ran.
_FREED: list[str] = []


def forget_source(filename: str | None = None) -> None:
    """Take a generated file whose functions were freed out of ``linecache`` (and any
    freed earlier): now, unless the garbage collector freed them in the middle of
    linecache's own code (``checkcache`` reads each of its keys in turn: one taken
    away under it is a ``KeyError``), then at the next compile.

    >>> linecache.cache["<autodiff_tutor generated doc #0>"] = (0, None, [], "")
    >>> forget_source("<autodiff_tutor generated doc #0>")
    >>> "<autodiff_tutor generated doc #0>" in linecache.cache
    False
    """
    if filename is not None:
        _FREED.append(filename)
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == linecache.__file__:
            return
        frame = frame.f_back
    while _FREED:
        linecache.cache.pop(_FREED.pop(), None)


class OriginTable(dict):
    """The lines of a generated file that come from the user's code, by line number:
    each :class:`Line` and the column its code starts at (see :func:`_origin_table`)."""


def _origin_table(sources: list[str]) -> OriginTable:
    """The lines of the factory that compiles ``sources`` that come from the user's
    code, by line number: each :class:`Line` and the column its code starts at (the
    factory's ``def`` is line 1; each source follows, indented once)."""
    table = OriginTable()
    first = 2
    for source in sources:
        texts = source.split("\n")
        for number, line in enumerate(getattr(source, "lines", ()), first):
            if line is not None and isinstance(line.origin, Origin):  # not a comment of ours
                text = texts[number - first]
                table[number] = (line, 4 + len(text) - len(text.lstrip()))
        first += len(texts)
    return table


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
