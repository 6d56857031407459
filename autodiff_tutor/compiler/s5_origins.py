"""What the comment beside a generated line says: the user's line it comes from.

>>> import numpy as np
>>> from autodiff_tutor.compiler.s1_source import parse_function
>>> def f(x):
...     return np.sum(np.sin(x) * x * x * x * x * x * x)
>>> parsed = parse_function(f)
>>> statement_origin(parsed, parsed.tree.body[0])
'line 2: return np.sum(np.sin(x) * x * x * x…'
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.ir import Step
from autodiff_tutor.compiler.s1_source import ParsedFunction

LIMIT = 36  # characters of the user's code quoted in a comment


def step_origin(parsed: ParsedFunction, step: Step) -> str:
    """'line N: <the sub-expression the step computes>'."""
    node = step.origin if step.origin is not None else parsed.tree
    text = parsed.line_text(node)
    if step.expression is not None:
        text = _short(step.expression)
    return f"line {parsed.file_line(node)}: {text}"


def statement_origin(parsed: ParsedFunction, node: ast.AST | None) -> str:
    """'line N: <the user's statement, shortened>' for a branch or a loop."""
    node = node if node is not None else parsed.tree
    return f"line {parsed.file_line(node)}: {_clip(parsed.line_text(node))}"


def _clip(text: str) -> str:
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"


def _short(expr: ast.expr) -> str:
    text = ast.unparse(expr)
    if len(text) > LIMIT and isinstance(expr, ast.Call):
        text = f"{ast.unparse(expr.func)}(...)"
    return _clip(text)
