"""Refusals of second derivatives, located at the user's line.

A second derivative compiles the generated gradient function again (see
``compile_gradient_function``). When a step of it cannot be differentiated again (the
gradient of ``np.linalg.eigh`` calls ``eigh_grad``, which has no rule of its own), the
error would point into generated code the user never wrote. Each generated line
names the user's line it comes from (``# line 8: np.linalg.eigh(A)``): the refusal is
moved there, keeping its class, and says which generated step stops it.

>>> located_line("    d_A = eigh_grad(d_t1[0], t1[1])  # line 8: np.linalg.eigh(A)")
(8, 'np.linalg.eigh(A)', 'd_A = eigh_grad(d_t1[0], t1[1])')
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

from autodiff_tutor.errors import AutodiffError, Location

GENERATED = "<autodiff_tutor generated"
_ORIGIN = re.compile(r"^\s*(?P<code>.*?)\s*# line (?P<line>\d+): (?P<what>.*)$")
# the attribute a generated gradient function carries: the user's parsed function
ORIGIN_ATTRIBUTE = "_gradient_source_of"
F = TypeVar("F", bound=Callable[..., Any])


def located_line(text: str) -> tuple[int, str, str] | None:
    """(user's line, what the user wrote, generated code) of a generated line, if it
    names the user's line it comes from."""
    match = _ORIGIN.match(text)
    if match is None:
        return None
    return int(match["line"]), match["what"].strip(), match["code"]


def at_users_line(stage: F) -> F:
    """Decorate a pipeline entry taking the function first: a refusal raised inside a
    generated gradient function is raised again at the user's line it comes from.

    >>> at_users_line(lambda fn: fn)(3)
    3
    """

    @functools.wraps(stage)
    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return stage(fn, *args, **kwargs)
        except AutodiffError as error:
            moved = _relocated(error, getattr(_function_of(fn), ORIGIN_ATTRIBUTE, None))
            if moved is None:
                raise
            raise moved from error

    return run  # type: ignore[return-value]


def _function_of(fn: Any) -> Any:
    return getattr(fn, "fn", fn)  # a parsed function, or the function itself


def _relocated(error: AutodiffError, parsed: Any) -> AutodiffError | None:
    where = error.location
    if parsed is None or where is None or not where.filename.startswith(GENERATED):
        return None
    found = located_line(where.text)
    if found is None:
        return None
    line, what, code = found
    index = line - parsed.first_line
    if not 0 <= index < len(parsed.lines):
        return None
    text = " " * parsed.indent + parsed.lines[index]
    column = len(text) - len(text.lstrip())
    location = Location(parsed.filename, line, column, text, max(1, len(text.strip())))
    reason = error.message.splitlines()[0].split(", which", 1)[0]
    return type(error)(
        f"second derivatives through {what} are not supported: its gradient is computed "
        f"by the generated step '{code}', which cannot be differentiated again ({reason})",
        location,
        hint="first derivatives through it work (grad, jvp, vjp); for a second derivative, "
        "write this step with numpy operations whose gradients are differentiable again, "
        "or compare with finite differences of the gradient",
    )
