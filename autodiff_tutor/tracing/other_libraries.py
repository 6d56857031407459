"""Tracing meets another autodiff library (autograd, JAX, PyTorch, TensorFlow): the
errors, located at the user's line, that say so and what to do.

They meet in two directions. A value of the other library reaches tracing:
``traced(box)`` of an autograd ``ArrayBox``, ``x * t`` of a traced ``x`` and a torch
tensor (:func:`foreign_input`, :func:`foreign_operand`). Or a traced value reaches
the other library's code: ``autograd.misc.flatten(params)``, ``jax.grad(f)(x)``,
``torch.sin(x)``; that library then fails in its own way, deep in its code
(autograd's ``TypeError: Can't differentiate w.r.t. type Traced``), and
:func:`reached_foreign_code` finds, in the traceback, that the user's line called into
that library with a traced value in its hands, and says so at the user's line
(``evaluate`` asks it about every exception). PyTorch asks a traced value itself,
through ``__torch_function__`` (:func:`foreign_call`).

>>> Tensor = type("Tensor", (), {"__module__": "torch"})
>>> foreign_operand("np.multiply", Tensor()).message.split(":")[0]
'np.multiply mixes a traced value with a PyTorch Tensor'
"""

from __future__ import annotations

from collections.abc import Iterator
from types import TracebackType
from typing import Any

from autodiff_tutor.errors import (
    AutodiffError,
    ForeignLibraryError,
    TracingForeignLibraryError,
)
from autodiff_tutor.foreign_libraries import (
    advice,
    conversion,
    describe,
    library_of,
    library_of_code,
)
from autodiff_tutor.tracing.locations import call_source, is_users, location
from autodiff_tutor.tracing.value import TracedValue


def _cannot_follow(library: str) -> str:
    return (
        f"autodiff_tutor's tracing and {library} cannot follow each other's gradients "
        "(neither sees the operations the other records)"
    )


def foreign_input(value: Any) -> TracingForeignLibraryError:
    """``traced(v)`` (or ``value_and_gradient(f, v)``) of another library's value.

    >>> Box = type("ArrayBox", (), {"__module__": "autograd.numpy.numpy_boxes"})
    >>> foreign_input(Box()).message.split(":")[0]
    'traced() takes numpy, cupy or array-API arrays, not an autograd ArrayBox'
    """
    library = library_of(value)
    return TracingForeignLibraryError(
        f"traced() takes numpy, cupy or array-API arrays, not {describe(value)}: "
        f"{_cannot_follow(library)}, so the gradient would be silently wrong.",
        location(),
        hint=f"{advice(library)}; {conversion(library)}",
    )


def foreign_operand(name: str, value: Any) -> TracingForeignLibraryError:
    """An operation on a traced value and another library's value (``x * box``)."""
    library = library_of(value)
    return TracingForeignLibraryError(
        f"{name} mixes a traced value with {describe(value)}: {_cannot_follow(library)}, "
        "so the gradient would be silently wrong.",
        location(),
        hint=f"{advice(library)}; {conversion(library)}",
    )


def foreign_call(library: str, name: str | None = None) -> TracingForeignLibraryError:
    """A function of another library called with a traced value: PyTorch and JAX ask
    the traced value first (``__torch_function__``, ``__jax_array__``).

    >>> foreign_call("PyTorch", "sin").message.split(":")[0]
    "PyTorch's sin was given a traced value"
    """
    what = f"{library}'s {name}" if name else library
    return TracingForeignLibraryError(
        f"{what} was given a traced value: {library}'s functions do not know "
        f"autodiff_tutor's traced arrays, and {_cannot_follow(library)}.",
        location(),
        hint=f"compute with numpy functions, which tracing follows, or {advice(library)}",
    )


def reached_foreign_code(error: BaseException) -> TracingForeignLibraryError | None:
    """The error to raise instead of ``error`` when it was raised in the code of
    another autodiff library that the user's line called with a traced value (found in
    that library's frames), located at that line; ``None`` otherwise (``error`` has
    nothing to do with another library, or was raised by the user's own code that the
    library called back)."""
    if isinstance(error, ForeignLibraryError):
        return None
    entries = list(_entries(error.__traceback__))
    users = [i for i, tb in enumerate(entries) if is_users(tb.tb_frame)]
    if not users:
        return None
    called = entries[users[-1] + 1 :]  # what the user's innermost line was running
    foreign = [tb for tb in called if library_of_code(tb.tb_frame) is not None]
    if not any(_holds_traced(tb.tb_frame.f_locals.values()) for tb in foreign):
        return None
    library = library_of_code(foreign[0].tb_frame)
    frame = entries[users[-1]].tb_frame
    call = (call_source(frame) or "").partition("(")[0].strip() or "this call"
    example = (
        " (np.concatenate([np.ravel(p) for p in params]) flattens a list of arrays)"
        if "flatten" in call
        else ""
    )
    return TracingForeignLibraryError(
        f"a traced value reached {library}'s code ({call}), which does not know "
        f"autodiff_tutor's traced arrays: it raised {_reason(error)}. Tracing and "
        f"{library} cannot follow each other's gradients.",
        location(frame),
        hint=f"use numpy functions, which tracing follows, instead of {call}(...){example}; "
        f"or {advice(library)}",
    )


def _reason(error: BaseException) -> str:
    """``error`` in a few words: its type, and its message's first clause."""
    text = error.message if isinstance(error, AutodiffError) else str(error)
    first = text.strip().splitlines()[0] if text.strip() else ""
    if isinstance(error, AutodiffError):
        first = first.split(":")[0]
    if len(first) > 200:
        first = first[:200].rsplit(" ", 1)[0] + " ..."
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def _entries(tb: TracebackType | None) -> Iterator[TracebackType]:
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _holds_traced(values: Any, depth: int = 3) -> bool:
    """Whether a traced value is among ``values`` (inside lists, tuples and dicts)."""
    for value in values:
        if isinstance(value, TracedValue):
            return True
        if depth and isinstance(value, (list, tuple, dict)):
            items = value.values() if isinstance(value, dict) else value
            if _holds_traced(items, depth - 1):
                return True
    return False


__all__ = ["foreign_call", "foreign_input", "foreign_operand", "reached_foreign_code"]
