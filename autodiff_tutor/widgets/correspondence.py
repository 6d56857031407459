"""Which generated lines come from which line of the user's function.

Every generated statement carries an origin ("line 7: h * h", a line of the user's
file). :func:`correspondence` finds each statement in the rendered forward and
backward source and groups them by the user's line, so a view can highlight the
lines that belong together.

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> @differentiable
... def f(x):
...     y = np.sin(x)
...     return y * y
>>> lines = correspondence(f.derivative())
>>> user = lines.first_line + 2          # the file line of "y = np.sin(x)"
>>> [lines.backward_text(n) for n in lines.backward[user]]
['    d_x = d_y * xp.cos(x)       # line ...: np.sin(x)']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from autodiff_tutor.widgets.render import origin_line

__all__ = ["Correspondence", "correspondence"]


@dataclass
class Correspondence:
    """User file line -> 1-based line numbers in the generated forward and backward.

    ``user_lines`` are the user's source lines (decorators included); the first one is
    file line ``first_line``.
    """

    user_lines: list[str]
    first_line: int
    forward_source: str
    backward_source: str
    forward: dict[int, list[int]] = field(default_factory=dict)
    backward: dict[int, list[int]] = field(default_factory=dict)
    backward_origin: dict[int, int] = field(default_factory=dict)

    @property
    def user_source(self) -> str:
        """The user's function, as written (dedented)."""
        return "\n".join(self.user_lines)

    def user_text(self, file_line: int) -> str:
        """The user's source at ``file_line`` (stripped)."""
        index = file_line - self.first_line
        return self.user_lines[index].strip() if 0 <= index < len(self.user_lines) else ""

    def backward_text(self, number: int) -> str:
        """Line ``number`` (1-based) of the generated backward."""
        return self.backward_source.splitlines()[number - 1]

    def mapped_lines(self) -> list[int]:
        """The user's file lines that have generated code, in order."""
        return sorted(set(self.forward) | set(self.backward))


def _locate(source: str, statements: list[Any]) -> list[int | None]:
    """The 1-based line of each generated statement in ``source`` (in order)."""
    lines = source.splitlines()
    found: list[int | None] = []
    position = 1  # line 0 is the def
    for statement in statements:
        # the statement as rendered, with or without its comment
        line = re.compile(re.escape("    " * (statement.depth + 1) + statement.code) + r"( +# .*)?")
        hit = next((i for i in range(position, len(lines)) if line.fullmatch(lines[i])), None)
        if hit is not None:
            position = hit + 1
        found.append(None if hit is None else hit + 1)
    return found


def correspondence(derivative: Any) -> Correspondence:
    """Group the generated lines of a compiled ``Derivative`` by the user's line."""
    parsed = derivative.parsed
    result = Correspondence(
        list(parsed.lines), parsed.first_line, derivative.forward_source, derivative.backward_source
    )
    for source, statements, target in (
        (derivative.forward_source, derivative.forward_lines, result.forward),
        (derivative.backward_source, derivative.backward_lines, result.backward),
    ):
        for statement, number in zip(statements, _locate(source, statements), strict=True):
            user = origin_line(statement.origin)
            if number is None or user is None:
                continue
            target.setdefault(user, []).append(number)
            if target is result.backward:
                result.backward_origin[number] = user
    return result
