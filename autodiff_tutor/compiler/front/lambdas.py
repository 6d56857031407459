"""A lambda read as a def: ``f = lambda x: np.sum(x**2)`` is compiled as
``def f(x): return np.sum(x**2)``.

A lambda's source is part of a larger statement, so it is found by position: the
file is parsed whole, and the ``ast.Lambda`` chosen is the one whose body spans
exactly what the code object's instructions span (``co_positions()``), on the line
the code object starts (``co_firstlineno``), with the same parameters. Several
lambdas on one line are told apart by their columns; where two still fit (the same
code at the same place cannot be told apart), the lambda is refused, located. The
def is named for the assignment target (``f = lambda ...``), else ``lambda_<line>``;
its nodes keep the lambda's columns, so an error's caret points into the lambda.

>>> square = lambda x: x * x
>>> tree, line, lines = lambda_as_def(square, "<doctest>", ["square = lambda x: x * x\\n"], 1)
>>> print(ast.unparse(tree))
def square(x):
    return x * x
>>> line, tree.body[0].value.col_offset
(1, 19)
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from autodiff_tutor.errors import Location, SourceUnavailableError


def lambda_as_def(
    fn: Callable[..., Any], filename: str, file_lines: list[str], first_line: int
) -> tuple[ast.FunctionDef, int, list[str]]:
    """The lambda ``fn`` as a def, the file line of its first line, and its source lines.

    ``file_lines`` is the source the lambda is in, whose first line is the file's
    line ``first_line``; the def's line numbers count from the lambda's line (line 1).
    """
    code = fn.__code__
    module = parse_source(file_lines)
    line = code.co_firstlineno - first_line + 1  # the lambda's line in file_lines
    if module is None:
        raise SourceUnavailableError(
            "cannot differentiate this lambda: the source it is in does not parse",
            _where(filename, file_lines, first_line, line),
            hint="write it as a def, e.g. 'def f(x): return ...'",
        )
    parameters = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    spanned = _span(code, first_line)
    lambdas = [
        node
        for node in ast.walk(module)
        if isinstance(node, ast.Lambda)
        and node.lineno == line
        and [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        == parameters
    ]
    exact = [node for node in lambdas if _body_span(node) == spanned]
    found = exact or lambdas
    if len(found) != 1:
        why = "none of the lambdas on its line" if not found else "several lambdas on its line"
        raise SourceUnavailableError(
            f"cannot differentiate this lambda: {why} match its code, so the compiler "
            "cannot tell which source to read",
            _where(filename, file_lines, first_line, line),
            hint="write it as a def, e.g. 'def f(x): return ...', or give each lambda its own line",
        )
    node = found[0]
    tree = def_of_lambda(_name(module, node, first_line), node)
    tree.end_lineno, tree.end_col_offset = node.end_lineno, node.end_col_offset
    ast.increment_lineno(tree, 1 - node.lineno)  # the lambda's line is line 1
    own_lines = [text.rstrip("\n") for text in file_lines[node.lineno - 1 : node.end_lineno]]
    return tree, first_line + node.lineno - 1, own_lines


def def_of_lambda(name: str, node: ast.Lambda, at: ast.AST | None = None) -> ast.FunctionDef:
    """``def name(args): return body`` of the lambda ``node``, located at ``at`` (else at
    the lambda).

    >>> print(ast.unparse(def_of_lambda("sq", ast.parse("lambda a: a * a", mode="eval").body)))
    def sq(a):
        return a * a
    """
    returned = ast.copy_location(ast.Return(node.body), node.body)
    tree = ast.FunctionDef(name, node.args, [returned], [], None)
    return ast.copy_location(tree, node if at is None else at)


def parse_source(file_lines: list[str]) -> ast.Module | None:
    """The lines parsed, or ``None`` where they do not parse."""
    try:
        return ast.parse("".join(file_lines))
    except SyntaxError:  # a notebook cell with IPython syntax, a fragment
        return None


def _span(code: Any, first_line: int) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Where the code object's instructions start and end, in the source's lines
    (instructions without a place, or an empty one, left out)."""
    places = [
        ((start - first_line + 1, start_column), (end - first_line + 1, end_column))
        for start, end, start_column, end_column in code.co_positions()
        if None not in (start, end, start_column, end_column)
        and (start, start_column) != (end, end_column)
    ]
    if not places:
        return None
    return min(p[0] for p in places), max(p[1] for p in places)


def _body_span(node: ast.Lambda) -> tuple[tuple[int, int], tuple[int, int]]:
    body = node.body
    return (body.lineno, body.col_offset), (body.end_lineno, body.end_col_offset)


def _name(module: ast.Module, node: ast.Lambda, first_line: int) -> str:
    """The assignment target's name (``f = lambda ...``), else ``lambda_<line>``."""
    for statement in ast.walk(module):
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is node:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return targets[0].id
    return f"lambda_{first_line + node.lineno - 1}"


def _where(filename: str, file_lines: list[str], first_line: int, line: int) -> Location:
    text = file_lines[line - 1].rstrip("\n") if 0 < line <= len(file_lines) else ""
    column = text.find("lambda") if "lambda" in text else 0
    return Location(filename, first_line + line - 1, column, text, len("lambda"))
