"""The exceptions users see.

Every error the toolkit raises on purpose is an :class:`AutodiffError`. Errors about
a place in the user's code carry a :class:`Location` and render like a compiler
diagnostic: what happened, where (file, line, column, the line and a caret), and a
hint saying what to do.

>>> from autodiff_tutor.errors import Location, UnsupportedSyntaxError
>>> loc = Location("model.py", 3, 4, "    yield x", 5)
>>> print(UnsupportedSyntaxError("generators are not supported", loc, hint="return a list"))
generators are not supported
  File "model.py", line 3, column 5
      yield x
      ^^^^^
  hint: return a list

Raised out of a front door (:func:`front_door`: ``grad(f)(x)``, ``evaluate``,
``gradient``, ``f.show()``, ...), an error's traceback holds the user's frames only,
so a notebook shows the user's cell, then the located message; the toolkit's frames
come back with :func:`full_tracebacks` (or ``AUTODIFF_TUTOR_FULL_TRACEBACKS=1``).
"""

from __future__ import annotations

import functools
import os
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

#: Messages are wrapped at word boundaries to this many characters, so that a
#: notebook's output (which breaks overlong lines anywhere, even mid-word) and a
#: terminal show them whole.
WIDTH = 80


def wrap(text: str, first: str = "", indent: str = "", after: str = "") -> str:
    """``text`` wrapped at word boundaries: ``first`` opens it, ``indent`` starts every
    further line. Lines of their own (a hint's code example) are wrapped one by one and
    keep their leading spaces; words and code are never split. ``after`` is what will
    be shown before the text on its first line (a traceback's ``"TracingError: "``): it
    takes room there but is not returned.

    >>> print(wrap("gradient(y, x): y does not depend on x, so the gradient with respect "
    ...            "to x is zero.", first="TracingWarning: "))
    TracingWarning: gradient(y, x): y does not depend on x, so the gradient with
    respect to x is zero.
    """
    if after:
        return wrap(text, after + first, indent)[len(after) :]
    lines = []
    for number, line in enumerate(text.split("\n")):
        lead = line[: len(line) - len(line.lstrip())]
        head = first if number == 0 else indent
        lines.append(
            textwrap.fill(
                line.strip(),
                WIDTH,
                initial_indent=head + lead,
                subsequent_indent=indent + lead,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or head.rstrip()
        )
    return "\n".join(lines)


def cell_name(filename: str) -> str | None:
    """``"In[3]"`` when ``filename`` is a notebook cell IPython ran as input 3, else None.

    IPython runs each cell from a file with a made-up name (``/tmp/ipykernel_7/2693665674.py``)
    and maps it back to the cell's execution count for its own tracebacks
    (``CachingCompiler.format_code_name``); the toolkit's messages ask it the same way.

    >>> cell_name("model.py") is None
    True
    """
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)  # in a kernel
    shell = get_ipython() if get_ipython is not None else None
    compiler = getattr(shell, "compile", None)
    named = getattr(compiler, "format_code_name", lambda _: None)(filename)
    return named[1] if named else None


def place(filename: str, line: int) -> str:
    """Where a line is, as a student reads it: ``cell In[3], line 2`` for a notebook
    cell (as IPython's tracebacks say), ``model.py:12`` for a file.

    >>> place("/home/me/model.py", 12)
    'model.py:12'
    """
    cell = cell_name(filename)
    if cell is not None:
        return f"cell {cell}, line {line}"
    return f"{os.path.basename(filename)}:{line}"


@dataclass(frozen=True)
class Location:
    """A place in a source file: 1-based line, 0-based column, the line's text.

    >>> Location("f.py", 2, 4, "    y = x", 1).caret()
    '    ^'
    """

    filename: str
    line: int
    column: int
    text: str
    length: int = 1

    def caret(self) -> str:
        """The caret line that underlines the located span."""
        return " " * self.column + "^" * max(1, self.length)

    def render(self) -> str:
        """File (or notebook cell), line and column, then the source line and its caret.

        >>> Location("/tmp/model.py", 3, 4, "    y = x", 1).render().splitlines()[0]
        '  File "/tmp/model.py", line 3, column 5'
        """
        cell = cell_name(self.filename)
        where = f"Cell {cell}" if cell is not None else f'File "{self.filename}"'
        head = f"  {where}, line {self.line}, column {self.column + 1}"
        return f"{head}\n    {self.text.rstrip()}\n    {self.caret()}"


class AutodiffError(Exception):
    """Base class of every error raised by autodiff_tutor.

    >>> issubclass(UnsupportedSyntaxError, AutodiffError)
    True
    """

    def __init__(self, message: str, location: Location | None = None, hint: str = ""):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._render())

    def located_at(self, location: Location | None) -> AutodiffError:
        """This error, located at ``location`` if it had no location yet: where the
        user called the code that raised it (a custom op's call, for a check of what
        its backward returned).

        >>> where = Location("f.py", 2, 4, "    y = op(x)", 5)
        >>> print(AutodiffError("bad gradient", hint="see its backward").located_at(where))
        bad gradient
          File "f.py", line 2, column 5
                y = op(x)
                ^^^^^
          hint: see its backward
        """
        if self.location is None and location is not None:
            self.location = location
            self.args = (self._render(),)
        return self

    def reworded(self, spell: Callable[[str], str]) -> AutodiffError:
        """This error (changed in place, its traceback kept) with ``spell`` applied to
        its message and hint: the compiler's own names for the user's variables given
        back their names (see :mod:`.compiler.front.names`).

        >>> error = AutodiffError("x__user is read", hint="copy x__user")
        >>> error.reworded(lambda text: text.replace("x__user", "x")).hint
        'copy x'
        """
        self.message, self.hint = spell(self.message), spell(self.hint)
        self.args = (self._render(),)
        return self

    @property
    def lineno(self) -> int | None:
        """The 1-based line of the located construct, if any."""
        return self.location.line if self.location else None

    @property
    def col_offset(self) -> int | None:
        """The 0-based column of the located construct, if any."""
        return self.location.column if self.location else None

    def _render(self) -> str:
        parts = [wrap(self.message, after=f"{type(self).__name__}: ")]  # as tracebacks show it
        if self.location is not None:
            parts.append(self.location.render())
        if self.hint:
            parts.append(wrap(self.hint, first="  hint: ", indent="        "))
        return "\n".join(parts)


class SourceUnavailableError(AutodiffError):
    """The function's source code cannot be found (built-in, exec string, REPL lambda)."""


class UnsupportedSyntaxError(AutodiffError):
    """The function uses Python the compiler does not differentiate."""


class ReferenceCycleError(UnsupportedSyntaxError, AttributeError):
    """An attribute read through a reference cycle twice (``self.me.me.W``); an
    ``AttributeError`` too, so that asking whether the object has the attribute
    (``hasattr``) says no, as for any attribute that cannot be read."""


class NoDerivativeRuleError(AutodiffError):
    """A value that carries gradient flows into a call without a derivative rule."""


class GradientEscapeError(AutodiffError):
    """A value that carries gradient leaves the differentiable world (float(x), x.item())."""


class NonScalarOutputError(AutodiffError):
    """A gradient of a non-scalar output was asked for without a seed."""


class NonDifferentiableInputError(AutodiffError):
    """A gradient was asked for an integer, boolean or non-array input."""


class ArgumentError(AutodiffError):
    """A wrong ``wrt``, wrong number of seeds or arguments at an API entry point."""


class BackendUnavailableError(ArgumentError, ImportError):
    """A backend was asked for that is unknown, or whose library is not installed
    (``backend="numba"`` without numba: the hint names the extra that installs it)."""


class BackwardOutputError(AutodiffError):
    """A hand-written backward returned the wrong count, shape, dtype or array module."""


class TracingError(AutodiffError):
    """Misuse of the tracing mode (gradient outside evaluate, untraced variables...)."""


class DataFormatError(AutodiffError):
    """A data-format label such as ``"SSCB"`` is malformed or does not fit the array."""


class ForwardOutputError(AutodiffError):
    """A hand-written forward returned the wrong number of outputs and memory values."""


class ExecutionError(AutodiffError):
    """An exception raised while the compiled code ran, reported at the user's code;
    the original exception is its cause (``__cause__``), with its traceback."""


class UserCodeError(ExecutionError):
    """The user's code failed while the compiled code ran: the function's operations on
    these arguments, or a custom op's hand-written backward."""


class InternalError(ExecutionError):
    """Code autodiff_tutor generated for a derivative failed: a bug of the toolkit."""


class TracingEscapeError(TracingError, GradientEscapeError):
    """A traced value was turned into a plain number or array (float(x), np.asarray(x))."""


class ForeignLibraryError(AutodiffError):
    """A value or the code of another autodiff library (autograd, JAX, PyTorch,
    TensorFlow) met this toolkit's: two libraries cannot follow each other's gradients."""


class TracingForeignLibraryError(TracingError, ForeignLibraryError):
    """A traced value reached another autodiff library's code, or met its values."""


class TracingWarning(UserWarning):
    """Tracing ran, but part of the computation is invisible to the gradient."""


class TranslationError(AutodiffError):
    """Code the symbolic verifier cannot translate to sympy (names the construct and line)."""


def add_note(error: BaseException, note: str) -> None:
    """``error.add_note(note)``; on Python 3.10, which has no notes, ``__notes__`` set
    by hand (IPython shows them there too).

    >>> error = ValueError("bad")
    >>> add_note(error, "raised in f")
    >>> error.__notes__
    ['raised in f']
    """
    if hasattr(error, "add_note"):
        error.add_note(note)
    else:
        error.__notes__ = [*getattr(error, "__notes__", []), note]


def op_rule_error(
    error: Exception, op: str, rule: str, location: Location | None, caller: str = ""
) -> UserCodeError:
    """The error to raise when the ``rule`` (backward, jvp) written for the custom op
    ``op`` raised ``error``, differentiating the call at ``location`` (in ``caller``).

    >>> op_rule_error(ValueError("bad"), "Cube", "backward", None).message
    'the backward of Cube raised ValueError: bad'
    """
    ran = f"{caller} ran fine; " if caller else ""
    return UserCodeError(
        f"the {rule} of {op} raised {type(error).__name__}: {error}",
        location,
        hint=f"{ran}the {rule} you wrote for {op} failed while differentiating this call "
        "(the traceback of the cause shows where)",
    )


#: Where the toolkit's own modules live: their frames are dropped from the tracebacks
#: of the errors a front door raises (the code it generates is named ``<autodiff_tutor
#: generated ...>`` and stays: it is the user's function, compiled).
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _no_location() -> Location | None:
    return None


#: The user's current call (:func:`autodiff_tutor.locations.location` registers itself:
#: it knows which frames are the user's, and imports this module).
_users_call: Callable[[], Location | None] = _no_location


def locate_calls_with(find: Callable[[], Location | None]) -> None:
    """Use ``find`` for the user's call that a front door's error without a location of
    its own is located at.

    >>> locate_calls_with(_users_call)  # (autodiff_tutor.locations sets it on import)
    """
    global _users_call
    _users_call = find


_full_tracebacks = os.environ.get("AUTODIFF_TUTOR_FULL_TRACEBACKS", "") not in ("", "0")


def full_tracebacks(on: bool | None = None) -> bool:
    """Whether an :class:`AutodiffError` raised out of a front door keeps the toolkit's
    own frames in its traceback; ``on`` sets it (for this process) and returns it.

    Off by default: a student's traceback shows their cell and their functions, then the
    located message. Turn it on to see where inside the toolkit an error was raised (a
    bug report), or set ``AUTODIFF_TUTOR_FULL_TRACEBACKS=1`` before importing.

    >>> full_tracebacks()
    False
    >>> full_tracebacks(True), full_tracebacks(False)
    (True, False)
    """
    global _full_tracebacks
    if on is not None:
        _full_tracebacks = bool(on)
    return _full_tracebacks


def without_toolkit_frames(traceback: TracebackType | None) -> TracebackType | None:
    """``traceback`` relinked (in place) without the frames of the toolkit's modules.

    >>> def users():
    ...     raise ValueError("bad")
    >>> try:
    ...     users()
    ... except ValueError as error:
    ...     kept = without_toolkit_frames(error.__traceback__)
    >>> kept.tb_next.tb_frame.f_code.co_name
    'users'
    """
    kept = []
    while traceback is not None:
        if not traceback.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            kept.append(traceback)
        traceback = traceback.tb_next
    if not kept:
        return None
    for entry, following in zip(kept[:-1], kept[1:], strict=True):
        entry.tb_next = following
    kept[-1].tb_next = None
    return kept[0]


def _show_users_frames(error: BaseException, seen: set[int]) -> None:
    """``error`` and the exceptions chained to it with the toolkit's frames dropped; a
    context raised wholly inside the toolkit (a lookup that failed, then this error)
    is not shown at all: it is the toolkit's business, not the user's."""
    seen.add(id(error))
    error.__traceback__ = without_toolkit_frames(error.__traceback__)
    for linked in (error.__cause__, error.__context__):
        if linked is not None and id(linked) not in seen:
            _show_users_frames(linked, seen)
    context = error.__context__
    if error.__cause__ is None and context is not None and context.__traceback__ is None:
        error.__suppress_context__ = True


Door = TypeVar("Door", bound=Callable[..., Any])


def front_door(door: Door) -> Door:
    """``door`` (a function users call) raising its :class:`AutodiffError` with the
    user's frames only: the message says where, and a notebook shows it under the
    user's cell instead of under a dozen of the toolkit's frames. An
    :class:`InternalError` (a bug of the toolkit) keeps them all, and so does every
    error while :func:`full_tracebacks` is on.

    >>> import traceback
    >>> import numpy as np
    >>> from autodiff_tutor.tracing import evaluate, traced
    >>> def scale(x):
    ...     return float(x[0]) * x
    >>> try:
    ...     evaluate(scale, traced(np.ones(2)))  # evaluate is a front door
    ... except TracingError as error:
    ...     shown = [frame.name for frame in traceback.extract_tb(error.__traceback__)]
    >>> shown[-1], "evaluate" in shown  # the user's function, none of the toolkit's
    ('scale', False)
    """

    @functools.wraps(door)
    def users_door(*args: Any, **kwargs: Any) -> Any:
        try:
            return door(*args, **kwargs)
        except AutodiffError as error:
            if isinstance(error, InternalError):
                raise
            error.located_at(_users_call())  # an error with no place of its own: the call
            if _full_tracebacks:
                raise
            _show_users_frames(error, set())
            if sys.version_info >= (3, 11):
                raise  # a bare raise adds no frame: not even this door's shows
            raise error  # 3.10 would re-raise the traceback it caught: this door's shows

    return users_door  # type: ignore[return-value]
