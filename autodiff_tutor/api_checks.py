"""What the front doors check about their arguments, and what they hand back.

Errors about how the API was called (a wrong ``wrt``, seed or tangent, a value that
cannot be differentiated, something that is not a Python function) are located at
the user's call: the first frame outside autodiff_tutor. Gradients handed back are
the caller's own: fresh, writable arrays that share no memory with each other, the
seeds or the inputs (copied only where that is not already so).

>>> import numpy as np
>>> seed = np.ones(2)
>>> a, b = owned([seed, seed], [seed])
>>> a is seed or b is seed or np.shares_memory(a, b)
False
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from autodiff_tutor.errors import (
    ArgumentError,
    AutodiffError,
    ForeignLibraryError,
    NonScalarOutputError,
    SourceUnavailableError,
    TracingError,
)
from autodiff_tutor.foreign_libraries import advice, conversion, describe, first_foreign
from autodiff_tutor.locations import location
from autodiff_tutor.runtime.backend import array_module, dtype_kind, ones_like, shape_of


def located(kind: type[AutodiffError], message: str, hint: str = "") -> AutodiffError:
    """An error about how the API was called, located at the user's call."""

    return kind(message, location(), hint=hint)


def check_function(fn: Any) -> None:
    """Only Python functions (with source the compiler can read) are differentiable;
    the front door unwraps bound methods, callable objects and partials of them before.

    >>> check_function(len)
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.SourceUnavailableError: cannot differentiate <built-in function len>: ...
    """
    function = inspect.unwrap(fn)
    if inspect.isfunction(function) and type(function.__globals__) is not dict:
        # tracing runs the user's functions with its own numpy (tracing/user_code.py)
        raise located(
            TracingError,
            f"cannot compile {function.__name__!r} inside a traced computation: there your "
            "functions run against tracing's numpy, which the compiler does not read",
            hint="inside evaluate or value_and_gradient, take the derivative with tracing "
            "(gradient(..., higher_derivatives=True)), or call grad outside the traced "
            "function",
        )
    if inspect.isfunction(function) or getattr(fn, "_gradient_of", None) is not None:
        return
    if isinstance(fn, functools.partial):
        what, hint = (
            f"a functools.partial of {fn.func!r}",
            "differentiate a def (or a method) that calls it; a partial of one is "
            "differentiated with its stored arguments",
        )
    elif isinstance(fn, type):
        what, hint = f"the class {fn.__name__}", "differentiate a function, not a class"
    elif callable(fn):
        what, hint = (
            f"a {type(fn).__name__} object" if not inspect.isbuiltin(fn) else f"{fn!r}",
            "write a def whose body does the computation (a method, or an object whose "
            "__call__ is written in Python, is differentiated too)",
        )
    else:
        raise located(
            ArgumentError,
            f"cannot differentiate a {type(fn).__name__}: it is not callable",
            hint="pass the function itself",
        )
    raise located(
        SourceUnavailableError,
        f"cannot differentiate {what}: it is not written in Python, so it has no source "
        "to read (the compiler differentiates functions, methods and __call__ written "
        "with def or lambda)",
        hint=hint,
    )


def wrt_entries(wrt: Any) -> list[Any] | None:
    """``wrt`` as a list of entries (positions, names, ``"self.W"``); None for None
    (every parameter without a default).

    >>> wrt_entries("x"), wrt_entries(("x", 1)), wrt_entries(None)
    (['x'], ['x', 1], None)
    """
    return [wrt] if isinstance(wrt, (int, str)) else list(wrt) if wrt is not None else None


def check_wrt(wrt: Any) -> None:
    """``wrt`` is None, a position, a name, or a non-empty list or tuple of them."""
    items = [wrt] if wrt is None or isinstance(wrt, (int, str)) else wrt
    if wrt is None:
        return
    if (
        not isinstance(items, (list, tuple))
        or not items
        or not all(isinstance(i, (int, str)) and not isinstance(i, bool) for i in items)
    ):
        raise located(
            ArgumentError,
            f"wrt must be a parameter position, a name, or a non-empty list of them, not {wrt!r}",
            hint="for example wrt=0, wrt='x' or wrt=['x', 'y']",
        )


def is_number_like(value: Any) -> bool:
    """A number, or an array of numbers (any array library): what a loss can be.

    >>> is_number_like(2.0), is_number_like(np.ones(2)), is_number_like("loss")
    (True, True, False)
    """
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "shape"):
        return False
    try:
        return np.dtype(dtype).kind in "fciu"
    except TypeError:  # an array-API dtype numpy does not know
        return any(word in str(dtype) for word in ("float", "int", "complex"))


def owned(gradients: Sequence[Any], others: Sequence[Any]) -> tuple[Any, ...]:
    """Every gradient as an array the caller owns: fresh and writable.

    Copies only where needed: a read-only array (a broadcast view from a rule), or one
    sharing memory with an earlier gradient or with ``others`` (the seeds, the inputs).

    >>> owned([np.broadcast_to(1.0, (2,))], [])[0].flags.writeable
    True
    """
    owned: list[Any] = []
    for g in gradients:
        if g is not None and _needs_copy(g, [*owned, *others]):
            g = g.copy()
        owned.append(g)
    return tuple(owned)


def _needs_copy(g: Any, others: Sequence[Any]) -> bool:
    if isinstance(g, np.generic) or not hasattr(g, "shape"):
        return False  # numpy scalars and numbers are immutable
    flags = getattr(g, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True):  # cupy's: no such flag
        return True
    if type(g) is np.ndarray and flags.owndata:  # a new array: only itself can alias it
        return any(other is g for other in others)
    overlap = getattr(array_module(g), "may_share_memory", None)
    if overlap is None:
        return False
    for other in others:
        if other is g:
            return True
        if hasattr(other, "shape") and not isinstance(other, np.generic):
            try:
                if overlap(g, other):
                    return True
            except (TypeError, ValueError):
                continue
    return False


def refuse_foreign(what: str, value: Any) -> None:
    """A located :class:`ForeignLibraryError` if ``value`` (or a value in it: lists,
    tuples, dicts) belongs to another autodiff library (an autograd ``ArrayBox``
    inside ``autograd.grad``, a JAX tracer, a torch tensor): the compiled code cannot
    follow that library's gradient, nor that library the compiled derivative.

    >>> refuse_foreign("the argument 'x' of f", np.ones(2))
    >>> Tensor = type("Tensor", (), {"__module__": "torch"})
    >>> refuse_foreign("the argument 'x' of f", Tensor())
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ForeignLibraryError: the argument 'x' of f is a PyTorch Tensor: ...
    """
    found = first_foreign(value)
    if found is None:
        return
    library, foreign = found
    raise located(
        ForeignLibraryError,
        f"{what} is {describe(foreign)}: autodiff_tutor's compiled code and {library} "
        "cannot follow each other's gradients, so the result would be an error deep "
        "inside or a silently wrong gradient.",
        hint=f"{advice(library)}; {conversion(library)}",
    )


def numeric_array(value: Any, like: Any, what: str) -> Any:
    """``value`` (a seed or a tangent) as an array of ``like``'s floating dtype."""
    refuse_foreign(what, value)
    xp = array_module(like)
    dtype = getattr(like, "dtype", None) if dtype_kind(like) in ("f", "c") else xp.float64
    if isinstance(value, (int, float, list, tuple)) and not isinstance(value, bool):
        try:
            value = xp.asarray(value, dtype=dtype)
        except (TypeError, ValueError):
            pass
    kind = dtype_kind(value)
    if not hasattr(value, "shape") or kind not in tuple("iufc"):
        raise located(
            ArgumentError,
            f"{what} must be a numeric array, not {type(value).__name__}"
            + (f" of dtype {value.dtype}" if kind else ""),
            hint="give a float array shaped like the value it goes with",
        )
    if kind in "iu":
        value = xp.asarray(value, dtype=dtype)
    return value


def bind_in_order(f: Any, inputs: Sequence[Any]) -> list[Any]:
    """The values of every parameter from ``inputs`` given in the order of ``f.params``,
    keyword-only parameters included (the compiler calls a helper
    ``def pen(w, *, lam=0.1)`` as ``op_forward(w, lam)``); missing ones take defaults.

    >>> import inspect
    >>> class F:
    ...     name, signature = "pen", inspect.signature(lambda w, *, lam=0.1, p=2: None)
    ...     params = list(signature.parameters)
    >>> bind_in_order(F(), (1.0, 0.5))
    [1.0, 0.5, 2]
    """
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    n = sum(p.kind in kinds for p in f.signature.parameters.values())
    return bind_arguments(f, inputs[:n], dict(zip(f.params[n:], inputs[n:], strict=False)))


def bind_arguments(f: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
    """The values of every parameter, in order, from a call's arguments."""
    try:
        bound = f.signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise located(ArgumentError, f"cannot call {f.name}{f.signature}: {exc}") from None
    bound.apply_defaults()
    return [bound.arguments[p] for p in f.params]


def scalar_seed(f: Any, out: Any) -> Any:
    """The seed 1 of a scalar output ``out`` of the compiled function ``f``, or a
    located error saying why ``out`` has no gradient.

    >>> scalar_seed(None, np.float64(2.5))
    np.float64(1.0)
    """
    if isinstance(out, np.generic) and out.dtype.kind == "f":  # the usual scalar loss
        return out.dtype.type(1)
    if not isinstance(out, tuple) and not is_number_like(out):
        raise located(
            NonScalarOutputError,
            f"{f.name} returns {type(out).__name__}"
            + (f" of dtype {out.dtype}" if hasattr(out, "dtype") else "")
            + "; grad needs a single scalar number (a float or a 0-d float array)",
            hint="return the loss as a number, e.g. np.sum(...)",
        )
    if isinstance(out, tuple):
        raise located(
            NonScalarOutputError,
            f"{f.name} returns {len(out)} values; grad needs a single scalar output",
            hint="use vjp(f, *args) and give one seed per output",
        )
    size = 1
    for n in shape_of(out):
        size *= n
    if size != 1:
        raise located(
            NonScalarOutputError,
            f"{f.name} returns an array of shape {shape_of(out)}; a gradient needs a scalar "
            "output (or a seed saying how to weigh each element)",
            hint="reduce it (np.sum, np.mean) or use vjp(f, *args) and call pullback(seed)",
        )
    return ones_like(out)
