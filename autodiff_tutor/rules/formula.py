"""The rule grammar: a rule's body, parsed once into the formulas it returns.

A rule (see :mod:`~autodiff_tutor.rules.record`) is a tiny function: optional local
assignments, then one ``return`` of a formula, or of a tuple with one formula per
input. :func:`parse` reads that body once; the compiler's inliner substitutes the
formulas into generated code (:mod:`.rule_inline`), and tracing
compiles one small function per formula (:mod:`autodiff_tutor.tracing.gradient`),
so both modes evaluate the same expressions.

>>> import ast
>>> from autodiff_tutor.rules.elementwise import maximum
>>> formula = parse(maximum)
>>> formula.is_tuple, [ast.unparse(e) for e in formula.expressions][0]
(True, 'xp.where(x > y, g, 0) + xp.where(x == y, 0.5 * g, 0)')
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autodiff_tutor.syntax import copy_tree


@dataclass(frozen=True)
class Formula:
    """A rule's body, parsed.

    ``tree`` is the rule's ``def`` (line numbers counted from its first line, which is
    ``first_line`` in ``filename``); ``statements`` are the body before the final
    ``return`` and ``returned`` the formulas it returns, as written;
    ``expressions`` are those formulas with the local assignments substituted (what
    the compiler inlines); ``is_tuple`` says whether the rule returns a tuple.
    """

    tree: ast.FunctionDef
    statements: list[ast.stmt]
    returned: list[ast.expr]
    expressions: list[ast.expr]
    is_tuple: bool
    first_line: int
    filename: str


@functools.cache
def parse(rule_fn: Callable[..., Any]) -> Formula:
    """The formulas of ``rule_fn`` (cached: each rule is parsed once).

    Raises ``ValueError`` for a body that is not assignments and one ``return``.

    >>> def double(g, x):
    ...     twice = 2 * g
    ...     return twice
    >>> ast.unparse(parse(double).expressions[0])
    '2 * g'
    """
    name = getattr(rule_fn, "__name__", "rule")
    _register_kept_source(inspect.unwrap(rule_fn))
    try:
        lines, first_line = inspect.getsourcelines(rule_fn)
        tree = ast.parse(textwrap.dedent("".join(lines))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError) as error:
        raise ValueError(f"rule {name}: its source cannot be read ({error})") from error
    if not isinstance(tree, ast.FunctionDef):
        raise ValueError(f"rule {name}: not a def")
    local: dict[str, ast.expr] = {}
    returned: ast.expr | None = None
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            local[statement.targets[0].id] = substitute(statement.value, local)
        elif isinstance(statement, ast.Return) and statement.value is not None:
            returned = statement.value
            expression = substitute(statement.value, local)
        elif not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
            raise ValueError(f"rule {name}: only assignments and one return")
    if returned is None:
        raise ValueError(f"rule {name} has no return")
    is_tuple = isinstance(returned, ast.Tuple)
    return Formula(
        tree=tree,
        statements=tree.body[:-1],
        returned=list(returned.elts) if is_tuple else [returned],
        expressions=list(expression.elts) if is_tuple else [expression],
        is_tuple=is_tuple,
        first_line=first_line,
        filename=inspect.getsourcefile(rule_fn) or "<rule>",
    )


def keep_source(fn: Callable[..., Any], text: str) -> None:
    """Make ``text`` the source of ``fn``, a rule compiled from a syntax tree (no file
    holds it): kept on the function, and registered with ``linecache`` under its code's
    file name, where ``inspect.getsource`` and :func:`parse` read it.

    Any tool may call ``linecache.clearcache()``; :func:`parse` registers the kept text
    again, so a rule made this way reads as one written in a file does.

    >>> text = "def double(g, x):\\n    return 2 * g\\n"
    >>> namespace = {}
    >>> exec(compile(text, "<double>", "exec"), namespace)
    >>> keep_source(namespace["double"], text)
    >>> del linecache.cache["<double>"]  # as linecache.clearcache() would
    >>> ast.unparse(parse(namespace["double"]).expressions[0])
    '2 * g'
    """
    fn.kept_source = text  # type: ignore[attr-defined]
    _register_kept_source(fn)


def _register_kept_source(fn: Any) -> None:
    text = getattr(fn, "kept_source", None)
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    if text is not None and filename not in linecache.cache:
        # mtime None: linecache.checkcache() keeps the entry (no file to compare with)
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)


def substitute(expr: ast.expr, values: dict[str, ast.expr]) -> ast.expr:
    """A copy of ``expr`` with the names in ``values`` replaced by (copies of) them.

    >>> ast.unparse(substitute(ast.parse("g * x", mode="eval").body, {"x": ast.Constant(2)}))
    'g * 2'
    """

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in values:
                return copy_tree(values[node.id])
            return node

    return Replace().visit(copy_tree(expr))
