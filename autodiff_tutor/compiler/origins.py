"""What the comment beside a generated line says: the user's line it comes from.

An origin is the comment's text (a ``str``), and it also remembers the user's node
and step, so that an exception raised by the generated line while it runs can be
reported at the user's sub-expression (:mod:`.failures`), and whether the line
computes the user's own operation (``"forward"``) or its derivative
(``"backward"``, ``"tangent"``).

>>> import numpy as np
>>> from autodiff_tutor.compiler.front.source import parse_function
>>> def f(x):
...     return np.sum(np.sin(x) * x * x * x * x * x * x)
>>> parsed = parse_function(f)
>>> origin = statement_origin(parsed, parsed.tree.body[0])
>>> origin
'line 2: return np.sum(np.sin(x) * x * x * x…'
>>> origin.location().line == parsed.first_line + 1, origin.role
(True, 'forward')
"""

from __future__ import annotations

import ast
from typing import Any

from autodiff_tutor.compiler.front.names import with_users_names
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.compiler.ir import Step
from autodiff_tutor.errors import Location
from autodiff_tutor.locations import ORIGINS

LIMIT = 36  # characters of the user's code quoted in a comment


class Origin(str):
    """The comment text of a generated line, with the user's node it comes from.

    Copying a generated tree (``copy.deepcopy``) keeps the same origin: it is
    immutable and refers to the user's parsed function, which is never copied.
    """

    parsed: ParsedFunction
    node: ast.AST | None
    step: Step | None
    role: str

    def __new__(
        cls,
        text: str,
        parsed: ParsedFunction,
        node: ast.AST | None,
        step: Step | None = None,
        role: str = "forward",
    ) -> Origin:
        origin = super().__new__(cls, text)
        origin.parsed, origin.node, origin.step, origin.role = parsed, node, step, role
        return origin

    def __copy__(self) -> Origin:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Origin:
        return self

    def location(self) -> Location:
        """Where the user wrote what this line computes (the function's ``def`` line
        when no node is known)."""
        return self.parsed.location(self.node if self.node is not None else self.parsed.tree)


def step_origin(parsed: ParsedFunction, step: Step, role: str = "forward") -> Origin:
    """'line N: <the sub-expression the step computes>'."""
    node = step.origin if step.origin is not None else parsed.tree
    text = parsed.line_text(node)
    if step.expression is not None:  # quoted with the user's names, not their stand-ins
        text = _short(with_users_names(step.expression, parsed.aliases))
    where = step.expression if step.expression is not None else node
    text = _users_text(parsed, node, f"line {parsed.file_line(node)}: {text}")
    return Origin(text, parsed, where, step, role)


def statement_origin(parsed: ParsedFunction, node: ast.AST | None, role: str = "forward") -> Origin:
    """'line N: <the user's statement, shortened>' for a branch or a loop."""
    node = node if node is not None else parsed.tree
    text = f"line {parsed.file_line(node)}: {_clip(parsed.line_text(node))}"
    return Origin(_users_text(parsed, node, text), parsed, _header(node), None, role)


def _users_text(parsed: ParsedFunction, node: ast.AST, text: str) -> str:
    """``text``, or, for a line of a generated gradient function (differentiated again),
    the comment of the line it runs: the user's line, at any order."""
    table = ORIGINS.get(parsed.filename)
    found = table.get(parsed.file_line(node)) if table is not None else None
    return str(found[0].origin) if found else text


def _header(node: ast.AST) -> ast.AST:
    """What a compound statement's own line computes: its test or its iterable."""
    if isinstance(node, (ast.If, ast.While)):
        return node.test
    if isinstance(node, ast.For):
        return node.iter
    return node


def _clip(text: str) -> str:
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"


def _short(expr: ast.expr) -> str:
    text = ast.unparse(expr)
    if len(text) > LIMIT and isinstance(expr, ast.Call):
        text = f"{ast.unparse(expr.func)}(...)"
    return _clip(text)
