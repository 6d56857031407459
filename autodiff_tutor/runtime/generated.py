"""Where generated code came from, for errors that a runtime helper raises while it
runs (a value known only then, such as the indices of ``y[[0, 0]] = v``).

The compiler registers each generated source (:func:`register`): for each of its
lines, the line of the user's function it comes from (its ``# line N`` comment).
:func:`user_location` finds the generated frame on the stack and points at that line
of the user's file, so the error is located in the user's code, as every other is.

>>> register("<generated f #0>", "model.py", {3: 12})
>>> user_location() is None  # not called from generated code
True
>>> forget("<generated f #0>")
"""

from __future__ import annotations

import linecache
import sys
from typing import Any

_SOURCES: dict[str, tuple[str, dict[int, int]]] = {}  # generated file -> user file, lines


def register(generated: str, user_file: str, lines: dict[int, int]) -> None:
    """Generated source ``generated``: its line ``k`` comes from ``lines[k]`` of
    ``user_file``."""
    _SOURCES[generated] = (user_file, lines)


def forget(generated: str) -> None:
    """The generated source is gone (its functions were freed)."""
    _SOURCES.pop(generated, None)


def user_location() -> Any:
    """The user's line that the innermost running generated code comes from, as a
    :class:`~autodiff_tutor.errors.Location` (the whole line underlined), or ``None``."""
    from autodiff_tutor.errors import Location

    frame = sys._getframe(1)
    while frame is not None:
        found = _SOURCES.get(frame.f_code.co_filename)
        if found is not None and frame.f_lineno in found[1]:
            user_file, line = found[0], found[1][frame.f_lineno]
            text = linecache.getline(user_file, line)
            column = len(text) - len(text.lstrip())
            return Location(user_file, line, column, text, max(1, len(text.strip())))
        frame = frame.f_back
    return None
