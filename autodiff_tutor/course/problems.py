"""Show an error or warning on purpose, in a notebook cell that still runs.

The lessons make mistakes on purpose (the tracing pitfalls, gradients that escape).
``explain_errors()`` runs the code, catches the toolkit's error and its warnings, and
prints them the way a student should read them: the kind of error, what happened,
where (line, column, the source line with a caret) and the hint. Notebook cells live
in temporary files whose names change from run to run, so file names are left out.

>>> from autodiff_tutor.errors import AutodiffError, Location
>>> with explain_errors() as seen:
...     raise AutodiffError("x is not on the trace", Location("/tmp/x.py", 3, 4, "    y = x", 1))
AutodiffError: x is not on the trace
  at line 3, column 5:
        y = x
        ^
>>> type(seen.error).__name__
'AutodiffError'
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from autodiff_tutor.errors import AutodiffError, TracingWarning, wrap

__all__ = ["Seen", "explain_errors", "render_error", "tidy"]

# Notebook cells run from files such as /tmp/ipykernel_4711/2345678901.py (IPython
# names them by a hash of the cell's text; the folder changes with the kernel's pid).
_CELL_FILE = re.compile(r"(?:[^\s\"']*[/\\])?(?:ipykernel_\d+[/\\])?\d{5,}\.py")
_CELL_LINE = re.compile(r"(?:[^\s\"']*[/\\])?(?:ipykernel_\d+[/\\])?\d{5,}\.py:(\d+)")
# ... and the toolkit names them as IPython does, by the execution count, which also
# changes from run to run (errors.place: "cell In[3], line 2").
_CELL_COUNT = re.compile(r"\bcell In\[\d*\], line (\d+)")


def tidy(text: str) -> str:
    """``text`` with notebook cells named the same way whatever the run: "cell line 10"
    (file names and execution counts vary by run).

    >>> tidy("extract_data() at 3871719731.py:10 took out the data")
    'extract_data() at cell line 10 took out the data'
    >>> tidy("made inside (cell In[12], line 2)")
    'made inside (cell line 2)'
    """
    text = _CELL_COUNT.sub(lambda m: f"cell line {m.group(1)}", text)
    text = _CELL_LINE.sub(lambda m: f"cell line {m.group(1)}", text)
    return _CELL_FILE.sub("cell", text)


def render_error(error: BaseException) -> str:
    """An error as the lessons print it: kind, message, line and caret, hint (the
    message and the hint wrapped at word boundaries).

    >>> print(render_error(ValueError("bad value")))
    ValueError: bad value
    """
    if not isinstance(error, AutodiffError):
        return wrap(tidy(str(error)), first=f"{type(error).__name__}: ")
    lines = [wrap(tidy(error.message), first=f"{type(error).__name__}: ")]
    where = error.location
    if where is not None:
        lines.append(f"  at line {where.line}, column {where.column + 1}:")
        lines.append(f"      {where.text.rstrip()}")
        lines.append(f"      {where.caret()}")
    if error.hint:
        lines.append(wrap(tidy(error.hint), first="  hint: ", indent="        "))
    return "\n".join(lines)


@dataclass
class Seen:
    """What ran inside :func:`explain_errors`: the error (or ``None``) and the warnings.

    >>> Seen().error is None
    True
    """

    error: BaseException | None = None
    warnings: list[str] = field(default_factory=list)


@contextmanager
def explain_errors(
    catch: tuple[type[BaseException], ...] = (AutodiffError,),
) -> Iterator[Seen]:
    """Run the block, print the error of a type in ``catch`` and any tracing warnings.

    Errors of other types are not caught (a bug in the lesson should fail loudly).
    When the block runs cleanly, it says so.

    >>> import warnings
    >>> from autodiff_tutor.errors import TracingWarning
    >>> with explain_errors() as seen:
    ...     warnings.warn("part of y is invisible to the trace", TracingWarning)
    TracingWarning: part of y is invisible to the trace
    >>> seen.error is None, len(seen.warnings)
    (True, 1)
    >>> with explain_errors():
    ...     pass
    (no error and no warning)
    """
    seen = Seen()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TracingWarning)
        try:
            yield seen
        except catch as error:
            seen.error = error
    for w in caught:
        if not issubclass(w.category, TracingWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    seen.warnings = [
        tidy(" ".join(str(w.message).split()))  # one line each: printed re-wrapped
        for w in caught
        if issubclass(w.category, TracingWarning)
    ]
    for message in seen.warnings:
        print(wrap(message, first="TracingWarning: "))
    if seen.error is not None:
        print(render_error(seen.error))
    if seen.error is None and not seen.warnings:
        print("(no error and no warning)")
