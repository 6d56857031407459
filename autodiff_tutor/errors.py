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
"""

from __future__ import annotations

from dataclasses import dataclass


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
        """File, line and column, then the source line and its caret."""
        head = f'  File "{self.filename}", line {self.line}, column {self.column + 1}'
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

    @property
    def lineno(self) -> int | None:
        """The 1-based line of the located construct, if any."""
        return self.location.line if self.location else None

    @property
    def col_offset(self) -> int | None:
        """The 0-based column of the located construct, if any."""
        return self.location.column if self.location else None

    def _render(self) -> str:
        parts = [self.message]
        if self.location is not None:
            parts.append(self.location.render())
        if self.hint:
            parts.append(f"  hint: {self.hint}")
        return "\n".join(parts)


class SourceUnavailableError(AutodiffError):
    """The function's source code cannot be found (built-in, exec string, REPL lambda)."""


class UnsupportedSyntaxError(AutodiffError):
    """The function uses Python the compiler does not differentiate."""


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


class BackwardOutputError(AutodiffError):
    """A hand-written backward returned the wrong count, shape, dtype or array module."""


class TracingError(AutodiffError):
    """Misuse of the tracing mode (gradient outside evaluate, untraced variables...)."""


class DataFormatError(AutodiffError):
    """A data-format label such as ``"SSCB"`` is malformed or does not fit the array."""


class ForwardOutputError(AutodiffError):
    """A hand-written forward returned the wrong number of outputs and memory values."""


class TracingEscapeError(TracingError, GradientEscapeError):
    """A traced value was turned into a plain number or array (float(x), np.asarray(x))."""


class TracingWarning(UserWarning):
    """Tracing ran, but part of the computation is invisible to the gradient."""


class TranslationError(AutodiffError):
    """Code the symbolic verifier cannot translate to sympy (names the construct and line)."""
