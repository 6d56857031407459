"""Stage 1: get a function's source, its syntax tree and the names it can see.

Works for functions in files and in Jupyter/IPython cells (both register their
source with ``linecache``). Anything without source (a built-in, a function made
by ``exec`` from a string, a lambda typed at the plain REPL) gets a
:class:`SourceUnavailableError` that says why and what to do.

>>> import numpy as np
>>> def f(x):
...     return np.tanh(x)
>>> parsed = parse_function(f)
>>> parsed.tree.name, parsed.first_line > 0
('f', True)
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from autodiff_tutor.compiler.front.lambdas import lambda_as_def, parse_source
from autodiff_tutor.errors import Location, SourceUnavailableError
from autodiff_tutor.syntax import copy_tree


@dataclass
class ParsedFunction:
    """A user function's syntax tree, with what is needed to locate and resolve names."""

    fn: Callable[..., Any]
    tree: ast.FunctionDef
    filename: str
    first_line: int  # file line of the tree's line 1
    lines: list[str]  # the dedented source lines
    indent: int  # columns removed by dedenting
    #: stand-ins for the user's free names that the generated code also uses for its
    #: helpers (stand-in -> the user's name), see :mod:`.front.names`
    aliases: dict[str, str] = field(default_factory=dict)
    #: names bound while specializing on a call: the functions and objects it was
    #: given or that the code reaches (:mod:`.front.desugar.known_callees`), read by
    #: the generated code like globals
    values: dict[str, Any] = field(default_factory=dict)
    #: what that specialization assumed: checks that still hold while it fits, and the
    #: functions inlined (whose own free names are assumed too; :mod:`..assumptions`)
    checks: tuple[Callable[[], bool], ...] = ()
    inlined: tuple[Callable[..., Any], ...] = ()

    @property
    def name(self) -> str:
        return self.tree.name

    def location(self, node: ast.AST) -> Location:
        """Where ``node`` is in the user's file, with its line text and span."""
        line = getattr(node, "lineno", self.tree.lineno)
        column = getattr(node, "col_offset", 0)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        end = getattr(node, "end_col_offset", None)
        same_line = getattr(node, "end_lineno", line) == line
        length = (end - column) if (end is not None and same_line) else len(text) - column
        return Location(
            self.filename,
            self.first_line + line - 1,
            column + self.indent,
            " " * self.indent + text,
            max(1, length),
        )

    def line_text(self, node: ast.AST) -> str:
        """The user's source line of ``node``, stripped: used in generated comments."""
        line = getattr(node, "lineno", 0)
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def file_line(self, node: ast.AST) -> int:
        """The line number of ``node`` in the user's file."""
        return self.first_line + getattr(node, "lineno", 1) - 1

    def own_name(self, name: str) -> str:
        """The compiler's name for the user's variable ``name``: its stand-in where the
        generated code also uses ``name`` (:mod:`.front.names`), else ``name``.

        >>> def f(x, like):
        ...     return x * like
        >>> parsed = parse_function(f)
        >>> parsed.aliases = {"like__user": "like"}
        >>> parsed.own_name("like"), parsed.own_name("x")
        ('like__user', 'x')
        """
        return next((alias for alias, own in self.aliases.items() if own == name), name)

    def namespace(self) -> dict[str, Any]:
        """The names the function can see: closure cells over globals over builtins."""
        names: dict[str, Any] = dict(vars(builtins))
        names.update(self.fn.__globals__)
        names.update(closure_values(self.fn))
        names.update(self.values)
        for alias, name in self.aliases.items():
            if name in names:
                names[alias] = names[name]
        return names


def closure_values(fn: Callable[..., Any]) -> dict[str, Any]:
    """The current values of ``fn``'s closure variables (unset cells are skipped).

    >>> def outer():
    ...     scale = 3.0
    ...     def inner(x):
    ...         return scale * x
    ...     return inner
    >>> closure_values(outer())
    {'scale': 3.0}
    """
    values = {}
    cells = fn.__closure__ or ()
    for name, cell in zip(fn.__code__.co_freevars, cells, strict=True):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # a cell not assigned yet
            continue
    return values


def parse_function(fn: Callable[..., Any]) -> ParsedFunction:
    """Parse ``fn``'s source into a :class:`ParsedFunction`.

    >>> parse_function(len)
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.SourceUnavailableError: cannot differentiate 'len': ...
    """
    fn = inspect.unwrap(fn)
    name = getattr(fn, "__name__", repr(fn))
    if not inspect.isfunction(fn):
        raise SourceUnavailableError(
            f"cannot differentiate {name!r}: it is not a Python function "
            f"({type(fn).__name__}), so it has no source to read",
            hint="wrap it in a def in a file or notebook cell, or give it a derivative "
            "rule as a DifferentiableFunction",
        )
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"cannot differentiate {name!r}: its source code is not available ({exc})",
            hint="functions created with exec() from a string or typed at the plain "
            "Python prompt keep no source; define it in a .py file or a notebook cell",
        ) from None
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = _indent_removed(source, dedented)
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    if name == "<lambda>":
        file_lines, _ = inspect.findsource(fn)
        if parse_source(file_lines) is not None:  # else the statement it is in
            lines, first_line = file_lines, 1
        tree, first_line, own_lines = lambda_as_def(fn, filename, lines, first_line)
        return ParsedFunction(fn, tree, filename, first_line, own_lines, 0)
    module = ast.parse(dedented)
    tree = next((n for n in module.body if isinstance(n, ast.FunctionDef)), None)
    if tree is None or tree.name != fn.__name__:
        raise SourceUnavailableError(
            f"cannot find the definition of {name!r} in its source",
            hint="async functions and functions defined by decorators that replace "
            "the source are not supported",
        )
    tree.decorator_list = []
    _mangle_private_names(tree, fn)
    return ParsedFunction(fn, tree, filename, first_line, dedented.splitlines(), indent)


def _mangle_private_names(tree: ast.FunctionDef, fn: Any) -> None:
    """``self.__k`` in a method of ``class Model`` reads ``self._Model__k``, as Python
    compiles it (a private name): the tree's attributes spelled so are renamed the way
    the function's code reads them.

    >>> class Model:
    ...     def scale(self):
    ...         return self.__k
    >>> tree = ast.parse("def scale(self):\\n    return self.__k").body[0]
    >>> _mangle_private_names(tree, Model.scale)
    >>> ast.unparse(tree.body[0])
    'return self._Model__k'
    """
    parts = fn.__qualname__.split(".")
    classes = [
        part
        for i, part in enumerate(parts[:-1])
        if part != "<locals>" and parts[i + 1] != "<locals>"
    ]
    prefix = "_" + classes[-1].lstrip("_") if classes and classes[-1].lstrip("_") else None
    if prefix is None:
        return
    read = set()
    codes = [fn.__code__]
    while codes:  # the names of its code, and of the lambdas and comprehensions in it
        code = codes.pop()
        read |= set(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("__")
            and not node.attr.endswith("__")
            and prefix + node.attr in read
        ):
            node.attr = prefix + node.attr


def function_name(fn: Callable[..., Any]) -> str:
    """The name a compiled function goes by: a def's own name; a lambda's is the name
    it is assigned to (``f = lambda x: ...``), else ``lambda_<line>``.

    >>> cube = lambda x: x ** 3
    >>> function_name(cube), function_name(function_name)
    ('cube', 'function_name')
    """
    name = getattr(fn, "__name__", type(fn).__name__)
    if name != "<lambda>":
        return name
    try:
        return parse_function(fn).name
    except SourceUnavailableError:  # said when it is compiled
        return "lambda"


def as_load(target: ast.expr) -> ast.expr:
    """A copy of an assignment target read as a value (``y[i] += v`` reads ``y[i]``).

    >>> target = ast.parse("y[i] = 1").body[0].targets[0]
    >>> type(as_load(target).ctx).__name__, type(target.ctx).__name__
    ('Load', 'Store')
    """
    loaded = copy_tree(target)
    for child in ast.walk(loaded):
        if hasattr(child, "ctx"):
            child.ctx = ast.Load()
    return loaded


def _indent_removed(source: str, dedented: str) -> int:
    first, kept = source.splitlines()[0], dedented.splitlines()[0]
    return (len(first) - len(first.lstrip())) - (len(kept) - len(kept.lstrip()))
