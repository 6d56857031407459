"""The messages of the tracing pitfalls met while a function runs (no derivative rule,
in-place writes, escapes to plain numbers): what happened, why it breaks the gradient,
and what to do. Those of ``evaluate`` and ``gradient`` are in
:mod:`~autodiff_tutor.tracing.gradient_messages`.

Each function builds the exception (or warning text) for one pitfall, located at the
user's line. They live together so that the course, the book and the tests can list
them side by side.

>>> error = in_place("y[0] = 1")
>>> error.message.split(". ")[0]
'y[0] = 1 writes into a traced array in place'
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from autodiff_tutor.errors import TracingError, TracingEscapeError
from autodiff_tutor.locations import call_source, in_scipy, location, user_frame
from autodiff_tutor.rules import registry
from autodiff_tutor.rules.names import op_of_callable


def no_rule(name: str) -> TracingError:
    """A function without a derivative rule was applied to a traced value.

    >>> no_rule("np.cumsum").message.split(":")[0]
    'np.cumsum has no derivative rule, so tracing cannot follow it'
    """
    return TracingError(
        f"{name} has no derivative rule, so tracing cannot follow it: its result would "
        "silently carry no gradient.",
        location(),
        hint="write it with operations that have rules (autodiff_tutor.rules.all_rules() "
        "lists them), or make it a custom op with a hand-written backward "
        "(autodiff_tutor.ops.DifferentiableFunction)",
    )


def option_with_gradient(name: str, option: str) -> TracingError:
    """A call's option (a spacing, a bound) is a traced value: its rule gives it no
    gradient, so the gradient through it would be silently zero.

    >>> option_with_gradient("np.gradient", "spacing").message.split(":")[0]
    'np.gradient(..., spacing=) on a traced value'
    """
    return TracingError(
        f"{name}(..., {option}=) on a traced value: the derivative rule of {name} gives "
        f"'{option}' no gradient, so its gradient through '{option}' would be lost",
        location(),
        hint=f"compute '{option}' from values you do not differentiate, or write "
        f"{name} with operations whose rules differentiate it",
    )


def unsupported_arguments(name: str, names: Iterable[str], known: Iterable[str]) -> TracingError:
    """A call passed keyword arguments the derivative rule does not know.

    >>> unsupported_arguments("np.sum", ["dtype"], ["axis"]).message.split(":")[0]
    'np.sum(..., dtype=) on a traced value'
    """
    given, rule = ", ".join(f"{n}=" for n in names), ", ".join(known) or "none"
    return TracingError(
        f"{name}(..., {given}) on a traced value: the derivative of {name} is known only "
        f"for its arrays and the options: {rule}.",
        location(),
        hint="leave the argument out (convert dtypes before tracing), or write the "
        "computation with supported operations",
    )


def unsupported_call(what: str, hint: str) -> TracingError:
    """A form of call that tracing does not follow (``np.add.reduce``, odd arity).

    >>> unsupported_call("np.add.reduce(...)", "write np.sum(x, axis=0)").hint
    'write np.sum(x, axis=0)'
    """
    return TracingError(
        f"{what} on a traced value is not supported by tracing: it would have to drop "
        "the gradient.",
        location(),
        hint=hint,
    )


def in_place(what: str) -> TracingError:
    """A write into a traced array (``y[0] = v``, ``out=``, ``x.sort()``...).

    >>> in_place("y.sort()").message.split(". ")[0]
    'y.sort() writes into a traced array in place'
    """
    return TracingError(
        f"{what} writes into a traced array in place. The trace refers to the array's "
        "values for the backward pass and cannot record the write, so the gradient would "
        "silently be wrong: traced arrays cannot be changed in place.",
        location(),
        hint="build a new array instead, e.g. y = np.where(mask, new_value, y) or "
        "np.concatenate of the pieces; y = y + 1 (and y += 1) are fine: they make a new "
        "array",
    )


def write_into_plain(what: str) -> TracingError:
    """A traced result written into a plain array (``a += t`` on an ndarray ``a``).

    >>> write_into_plain("a += t").hint.split(" (")[0]
    'make a new array instead of writing into one: a = a + t'
    """
    return TracingError(
        f"{what} stores a traced result into a plain (untraced) array, which keeps the "
        "numbers but drops the trace: everything computed from it would silently get "
        "no gradient.",
        location(),
        hint="make a new array instead of writing into one: a = a + t (or start it from a "
        "traced array: a = np.zeros_like(x) of a traced x is traced; an array made with "
        "np.zeros in the function evaluate runs keeps the trace)",
    )


def in_place_shared(what: str) -> TracingError:
    """An in-place update of a traced array that a view shares (``v = t.T; t *= 2``).

    >>> in_place_shared("t *= ...").message.split(",")[0]
    't *= ... changes a traced array in place'
    """
    return TracingError(
        f"{what} changes a traced array in place, and another traced array shares its "
        "memory (a view made by reshape, transpose, indexing, ... or the array it is a "
        "view of). numpy would change both; tracing cannot follow a write through a view, "
        "so the value and the gradient would silently differ from numpy's.",
        location(),
        hint="make a new array instead (t = t * 2) and recompute the view from it, or take "
        "a copy before viewing (v = t.copy().reshape(-1))",
    )


def through_view_not_followed(what: str, library: str) -> TracingError:
    """A write through a view of a traced array of ``library``, which tracing cannot put
    back into the array the view was taken from (``v = t[0:2]; v[...] = 0.0`` on
    ``array_api_strict`` arrays).

    >>> error = through_view_not_followed("v[...] = ...", "array_api_strict")
    >>> error.hint.split(" (")[0]
    'write into the array the view was taken from, with the index that made the view'
    """
    return TracingError(
        f"{what} writes through a view of another traced array (a slice, a transpose, a "
        f"reshape, ...): {library} arrays share memory with their views, as numpy's do, so "
        "the array the view was taken from changes too. Tracing follows such a write for "
        "numpy and cupy arrays only (it puts the view's elements back at their positions "
        f"in that array, a write by integer index arrays that {library} does not have): "
        "the value and the gradient would silently differ.",
        location(),
        hint="write into the array the view was taken from, with the index that made the "
        "view (t[0:2] = 0.0 rather than v = t[0:2]; v[...] = 0.0, and t[0:2] *= 2 rather "
        "than v *= 2); or make the view a new array (v = t[0:2] * 1.0) if that array should "
        "keep its values",
    )


def write_into_variable(what: str, label: str, through: str, hint: str) -> TracingError:
    """A write into a variable of the running trace, or through ``through``, a name that
    shares its memory (:mod:`~autodiff_tutor.tracing.variable_writes`).

    >>> error = write_into_variable("v[0] = ...", "x", "v", copy_hint("x", "f"))
    >>> error.message.split(" (")[0]
    "'v[0] = ...' writes in place into the traced variable 'x'"
    """
    via = f" (through {through!r}, which shares its memory)" if through else ""
    return TracingError(
        f"{what!r} writes in place into the traced variable {label!r}{via}: "
        f"gradient(y, {label}) would be ambiguous (with respect to the value passed in, or "
        f"to the written {label}?), so tracing refuses writes into its variables and their "
        "views, as the compiler refuses writes into a parameter (and PyTorch in-place "
        "updates of a leaf that requires grad).",
        location(),
        hint=hint,
    )


def copy_hint(label: str, function: str) -> str:
    """The hint for a write into an argument: copy it where the function starts, so that
    the function writes into its own array, as numpy would write into the argument (an
    attribute, ``self.W``, is copied into a local name, so that the object keeps its own
    array).

    >>> copy_hint("x", "loss").split(", before")[0]
    'make a copy first (x = x.copy(), where loss starts'
    >>> copy_hint("self.W", "loss").split(", then")[0]
    'make a copy first (W = self.W.copy(), where loss starts'
    """
    if label.startswith("self."):
        local = label[len("self.") :]
        return (
            f"make a copy first ({local} = {label}.copy(), where {function} starts, then use "
            f"{local}), or build a new array"
        )
    return (
        f"make a copy first ({label} = {label}.copy(), where {function} starts, before any "
        f"view of {label} is taken), or build a new array"
    )


def copy_aside_hint(label: str) -> str:
    """The hint for a write into a variable made while the function runs
    (``new_variables``, ``traced(extract_data(y))``): write into a copy, and keep the
    variable to differentiate with respect to.

    >>> copy_aside_hint("v").split(" and ")[0]
    'write into a copy of v (c = v.copy(), then write into c)'
    """
    return (
        f"write into a copy of {label} (c = {label}.copy(), then write into c) and keep "
        f"{label} for gradient(), or build a new array"
    )


def in_place_shape(what: str, shape: tuple[int, ...], result: tuple[int, ...]) -> TracingError:
    """An in-place update whose result does not fit the array (numpy refuses it too).

    >>> in_place_shape("y += ...", (3,), (2, 3)).message.split(":")[0]
    'y += ... cannot update an array of shape (3,) in place'
    """
    return TracingError(
        f"{what} cannot update an array of shape {shape} in place: the result has shape "
        f"{result} (numpy refuses this too).",
        location(),
        hint="write y = y + ... to make a new array of the broadcast shape",
    )


def element_into_plain() -> TracingError:
    """A traced value written into an element of a plain array (``out[i] = t``).

    >>> element_into_plain().hint.split(",")[0]
    'collect the traced pieces in a list and np.stack them'
    """
    return TracingError(
        "Assigning a traced value into a plain (untraced) numpy array (out[...] = t) keeps "
        "the numbers but drops the trace: everything computed from that array would "
        "silently get no gradient.",
        location(),
        hint="collect the traced pieces in a list and np.stack them, build the array "
        "with np.where / np.concatenate, or start it from a traced array "
        "(out = np.zeros_like(x) of a traced x is traced); an array made with np.zeros "
        "in the function evaluate runs, or in a function it calls by name, keeps the "
        "trace (not one from outside, or made in a method)",
    )


COPY_HINT = (
    "in tracing, np.array(x) and np.asarray(x) make plain numpy arrays: numpy converts "
    "through __array__, which must return a plain array, so it cannot return a traced "
    "value; for a copy that keeps the gradient write x.copy() or np.copy(x), or use x "
    "itself (the compiler, @differentiable, reads the source and accepts np.array(x) "
    "as a copy); np.stack([...]) rather than np.array([...]) for a list of traced "
    "values; if a constant is meant, say so with stop_gradient(x); to read the numbers, "
    "call extract_data() after gradient()"
)
"""The hint of a conversion to a numpy array (``np.array(x)``, ``np.asarray(x)``)."""


def conversion() -> TracingEscapeError:
    """``np.asarray(x)`` of a traced value: written by the user, or made by a scipy
    function the user's line calls (``logsumexp(x)``, ``norm.cdf(x)``), which the
    message then names, saying whether the compiler has a rule for it.

    >>> conversion().message.split(" turns")[0]
    'np.asarray() (or np.array(), or another conversion to numpy)'
    """
    call = call_source() or ""
    if not in_scipy():
        return escape("np.asarray() (or np.array(), or another conversion to numpy)", COPY_HINT)
    name = call.partition("(")[0].strip() or "this scipy function"
    compiled = f"; the compiler (@differentiable) has a rule for {name}" if _has_rule(name) else ""
    return escape(
        f"{name} (scipy's: it converts its arguments with np.asarray())",
        f"tracing cannot follow inside scipy's functions: write {name} with numpy "
        f"functions, which tracing follows{compiled}; if a constant is meant, say so with "
        "stop_gradient(x)",
    )


def _has_rule(name: str) -> bool:
    """Whether the dotted ``name`` in the user's frame is a callable with a rule."""
    frame = user_frame()
    head, *attributes = name.split(".")
    if frame is None or not all(part.isidentifier() for part in (head, *attributes)):
        return False
    obj = frame.f_locals.get(head, frame.f_globals.get(head))
    for attribute in attributes:
        obj = getattr(obj, attribute, None)
    op = op_of_callable(obj) if obj is not None else None
    return op is not None and registry.lookup(op) is not None


def escape(what: str, hint: str = "") -> TracingEscapeError:
    """``float(x)``, ``x.item()``, ``np.asarray(x)``... of a value being traced.

    >>> escape("float()").message.split(":")[0]
    'float() turns a traced value into a plain number or array that the trace cannot follow'
    """
    return TracingEscapeError(
        f"{what} turns a traced value into a plain number or array that the trace cannot "
        "follow: everything computed from it would count as a constant and silently get "
        "no gradient.",
        location(),
        hint=_escape_hint(call_source() or "", hint),
    )


def _escape_hint(call: str, general: str = "") -> str:
    """What to write instead, for the call the user's line is making (``general``: the
    hint of the conversion, when the call says nothing more specific).

    >>> _escape_hint("math.exp(s)").split(";")[0]
    'math.exp works on Python floats only: write np.exp(...), which tracing follows'
    >>> _escape_hint("np.array([a, b])").split(",")[0]
    'np.array([...]) of traced values cannot be followed (numpy builds it in C)'
    >>> _escape_hint("X[i].dot(W)").split(";")[1]
    ' write X[i] @ W or np.dot(X[i], W), which tracing follows'
    """
    head, _, arguments = call.partition("(")
    module, _, function = head.strip().rpartition(".")
    if module == "math" and hasattr(np, function):
        instead = (
            f"math.{function} works on Python floats only: write np.{function}(...), "
            "which tracing follows"
        )
    elif module in ("np", "numpy") and arguments.lstrip().startswith(("[", "(")):
        instead = (
            f"{module}.{function}([...]) of traced values cannot be followed (numpy builds "
            "it in C), but np.stack([...]) can: write np.stack([a, b, ...])"
        )
    elif function == "dot" and module and module not in ("np", "numpy"):
        argument = arguments.rstrip().removesuffix(")").strip() or "w"
        instead = (
            f"{module}.dot(...) with {module} a plain numpy array: numpy's ndarray.dot "
            "converts the traced argument itself (in C) and drops the trace; write "
            f"{module} @ {argument} or np.dot({module}, {argument}), which tracing follows"
        )
    elif general:
        return general
    else:
        instead = (
            "keep computing with the traced array (x[0] rather than float(x[0]); "
            "np.stack([...]) rather than np.array([...]))"
        )
    return (
        f"{instead}; if a constant is meant, say so with stop_gradient(x); to read the "
        "numbers, call extract_data() after gradient()"
    )
