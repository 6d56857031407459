"""Stage 9, failures — an exception raised while generated code runs, reported at the
user's code.

Generated code runs the user's operations (the forward) and their derivatives (the
backward). When one of its lines raises (numpy cannot broadcast, an index is out of
range, a custom op's backward fails), Python's traceback ends in a generated file the
user never wrote. :func:`~.emit.compile_sources` keeps, for each generated file,
the origin of each line (:class:`~.origins.Origin`: the user's node, and
whether the line computes the user's operation or its derivative). The front doors
(``grad``, ``value_and_grad``, ``vjp``, ``jvp``, a compiled function used as an op)
call the generated functions inside ``try`` (free while nothing is raised) and hand
an exception to :func:`relocate`, which says what to raise instead, at the user's
code:

- a line of the forward (the user's operation) failed: an :class:`UserCodeError`
  located at the user's sub-expression, saying that the function itself fails on
  these arguments (calling it directly raises the same exception);
- a custom op's backward (or jvp), the user's code, failed: an
  :class:`UserCodeError` located at the op's call;
- a line of derivative code failed on values of two array libraries (the user's
  function mixes them, :mod:`~.mixed_arrays`): an :class:`UserCodeError` saying so;
- any other line of derivative code failed: an :class:`InternalError` (a bug of
  autodiff_tutor) located at the user's line it was differentiating.

Both are :class:`~autodiff_tutor.errors.AutodiffError` s, chained to the original
exception (``raise ... from``), whose traceback stays visible; they are not instances
of the original type (a broadcasting ``ValueError`` becomes a located error, not a
``ValueError``). The exception is the user's own, and keeps its type, when the user's
code raised it on purpose: a ``raise`` or an ``assert`` in the function (kept in the
forward), in a helper it calls, or in a custom op; a note then says where
(``add_note``), so ``except ValueError`` in the user's code works as without the
compiler. Errors of the toolkit keep their type too; one raised without a location
(a custom op's check of what its backward returned, a runtime helper's refusal that
only the values show, such as ``x[[0, 0]] = v``) gets the user's line.

Why not keep the original type (a ``ValueError`` subclass made for the occasion)? The
toolkit's contract is that its failures are located ``AutodiffError`` s, which the
course's ``explain_errors`` and the user's ``except AutodiffError`` catch; a class
made per exception type would be a new type at each failure, and catching numpy's
broadcasting ``ValueError`` around a gradient is not a pattern worth keeping. The
original is one attribute away: ``error.__cause__``.

>>> import numpy as np
>>> from autodiff_tutor import grad
>>> def f(x, w):
...     y = x @ w
...     return np.sum(y * x)
>>> try:
...     grad(f)(np.ones(3), np.ones((3, 2)))
... except UserCodeError as error:  # its cause: numpy's ValueError
...     print(error.message)
...     print(error.location.text.strip())
...     print(error.location.caret().strip())
f raised ValueError: operands could not be broadcast together with shapes (2,) (3,)
return np.sum(y * x)
^^^^^
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from autodiff_tutor.compiler.emit import Line
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.compiler.mixed_arrays import mixed_arrays_error
from autodiff_tutor.compiler.origins import Origin
from autodiff_tutor.errors import (
    AutodiffError,
    InternalError,
    Location,
    UserCodeError,
    add_note,
    op_rule_error,
)
from autodiff_tutor.locations import ORIGINS, is_user_file, raised_on_purpose

T = TypeVar("T")


def relocate(error: Exception) -> AutodiffError | None:
    """The located error to raise instead of ``error`` (see the module docstring), or
    ``None``: raise ``error`` itself (not raised by a generated line; the toolkit's
    own, located at the generated line's user code if it had no location; raised on
    purpose by the user's code: then a note says where).

    Call the generated code as ``try: ... except Exception as error:``, then
    ``located = relocate(error)``, ``if located is None: raise``, ``raise located from
    error``: nothing runs while no exception is raised."""
    frames = _traceback(error.__traceback__)
    found = _innermost_generated(frames)
    if found is None:
        return None
    index, origin = found
    if isinstance(error, AutodiffError):  # located already, or where the user called it
        user = _user_origin(origin)[0]
        if user.parsed.filename not in ORIGINS:  # else generated bookkeeping: the door's call
            error.located_at(user.location())
        return None
    if raised_on_purpose(error):
        add_note(error, _note(origin))
        return None
    return _located(error, origin, frames[index + 1 :], frames[index].tb_frame.f_locals)


def run_located(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` (generated code), an exception it raises located by
    :func:`relocate`.

    >>> run_located(max, 2, 3)
    3
    """
    try:
        return function(*args)
    except Exception as error:
        located = relocate(error)
        if located is None:
            raise
        raise located from error


def _traceback(tb: TracebackType | None) -> list[TracebackType]:
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    return frames


def _innermost_generated(frames: list[TracebackType]) -> tuple[int, Origin] | None:
    """The innermost frame running a registered generated file, and the origin of
    what failed there: the smallest sub-expression of the line with an origin of its
    own that holds the failing instruction, else the line's (the function's own origin
    where the line has none: generated bookkeeping)."""
    for index in range(len(frames) - 1, -1, -1):
        table = ORIGINS.get(frames[index].tb_frame.f_code.co_filename)
        if table is None:
            continue
        found = table.get(frames[index].tb_lineno)
        if found is None:  # a line of ours alone (memory, stack, return)
            line, _ = next(iter(table.values()))
            return index, Origin(line.origin, line.origin.parsed, None, None, "backward")
        line, offset = found
        return index, _part(frames[index], line, offset) or line.origin
    return None


def _part(tb: TracebackType, line: Line, offset: int) -> Origin | None:
    """The smallest part of ``line`` (columns from ``offset``) holding the instruction
    that raised (Python knows its columns, as its tracebacks' carets show)."""
    if not line.parts or not hasattr(tb.tb_frame.f_code, "co_positions"):  # Python 3.10
        return None
    positions = list(tb.tb_frame.f_code.co_positions())
    _, _, start, end = positions[tb.tb_lasti // 2]
    if start is None or end is None:
        return None
    holding = [
        (last - first, origin)
        for first, last, origin in line.parts
        if offset + first <= start and end <= offset + last
    ]
    return min(holding, key=lambda part: part[0])[1] if holding else None


def _user_origin(origin: Origin) -> tuple[Origin, str]:
    """The user's origin behind ``origin``, and the role of the generated line: a
    second derivative's code comes from a generated gradient function, whose lines
    come from the user's (the role is the forward only if it is at every level)."""
    role = origin.role
    while origin.parsed.filename in ORIGINS:
        found = ORIGINS[origin.parsed.filename].get(origin.location().line)
        if found is None:
            break
        origin = found[0].origin
        role = role if origin.role == "forward" else origin.role
    return origin, role


def runs_directly(parsed: ParsedFunction, values: dict[str, Any]) -> bool:
    """Whether the user's function, called itself with the arguments the failed
    compiled forward was given (its frame's ``values``: the generated code never
    rebinds a parameter), returns: then a failure of the compiled forward is not the
    function's own. ``False`` where the arguments cannot be told (keyword-only
    parameters, ``*args``, a structure flattened into its leaves). Its printing is
    silenced.

    >>> from autodiff_tutor.compiler.front.source import parse_function
    >>> def half(x):
    ...     return x / 2
    >>> runs_directly(parse_function(half), {"x": 1.0}), runs_directly(parse_function(half), {})
    (True, False)
    """
    arguments = parsed.tree.args
    names = [a.arg for a in arguments.posonlyargs + arguments.args]
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs:
        return False
    if any(name not in values for name in names):
        return False
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed.fn(*[values[name] for name in names])
    except Exception:
        return False
    return True


def _note(origin: Origin) -> str:
    user, _ = _user_origin(origin)
    name = user.parsed.name
    return f"raised in {name} (which autodiff_tutor runs as generated code) at\n" + (
        user.location().render()
    )


def _located(
    error: Exception, origin: Origin, below: list[TracebackType], values: dict[str, Any]
) -> AutodiffError:
    user, role = _user_origin(origin)
    name, what = user.parsed.name, f"{type(error).__name__}: {error}"
    location: Location = user.location()
    step = user.step if user.step is not None else origin.step
    if role == "forward" and user is origin and runs_directly(user.parsed, values):
        return InternalError(  # the hint below would be false: say what is true
            f"the compiled forward of {name} raised {what}",
            location,
            hint=f"internal error, please report it (with {name} and its arguments' shapes): "
            f"{name} itself runs on these arguments (checked), so the compiled code differs "
            "from yours at this line (was a function it calls redefined since it compiled?)",
        )
    if role == "forward":
        return UserCodeError(
            f"{name} raised {what}",
            location,
            hint=f"this is {name} itself failing on these arguments: calling {name} "
            "directly raises the same error here (the compiled forward runs your "
            "operations as written)",
        )
    op_code = any(is_user_file(tb.tb_frame.f_code.co_filename) for tb in below)
    if step is not None and step.kind == "op_call" and op_code:
        rule = "backward" if role == "backward" else "jvp (forward-mode rule)"
        return op_rule_error(error, step.description, rule, location, name)
    mixed = mixed_arrays_error(values, user, what)  # the failed frame's values tell
    if mixed is not None:
        return mixed
    ran = f"{name} itself ran fine" if role == "backward" else f"{name} ran fine up to here"
    return InternalError(
        f"the generated derivative code of {name} raised {what}",
        location,
        hint=f"internal error, please report it (with {name} and its arguments' shapes): "
        f"{ran}, and the code autodiff_tutor generated for the derivative of this line "
        "failed",
    )
