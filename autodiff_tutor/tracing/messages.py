"""The messages of the tracing pitfalls: what happened, why it breaks the gradient,
and what to do. Met while a function runs: no derivative rule, in-place writes,
escapes to plain numbers; met by ``evaluate`` and ``gradient``: a variable or output
not on the running trace, a trace that ended or was released, a non-scalar output,
and the warnings for outputs that lost their dependence on a variable (extractions).

Each function builds the exception (or warning text) for one pitfall, located at the
user's line. They live together so that the course, the book and the tests can list
them side by side.

Tracing also meets other autodiff libraries (autograd, JAX, PyTorch, TensorFlow), in
two directions. A value of the other library reaches tracing: ``traced(box)`` of an
autograd ``ArrayBox``, ``x * t`` of a traced ``x`` and a torch tensor
(:func:`foreign_input`, :func:`foreign_operand`). Or a traced value reaches the other
library's code: ``autograd.misc.flatten(params)``, ``jax.grad(f)(x)``,
``torch.sin(x)``; that library then fails in its own way, deep in its code (autograd's
``TypeError: Can't differentiate w.r.t. type Traced``), and
:func:`reached_foreign_code` finds, in the traceback, that the user's line called into
that library with a traced value in its hands, and says so at the user's line
(``evaluate`` asks it about every exception). PyTorch asks a traced value itself,
through ``__torch_function__`` (:func:`foreign_call`).

>>> error = in_place("y[0] = 1")
>>> error.message.split(". ")[0]
'y[0] = 1 writes into a traced array in place'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any

import numpy as np

from autodiff_tutor.errors import (
    AutodiffError,
    ForeignLibraryError,
    NonScalarOutputError,
    TracingError,
    TracingEscapeError,
    TracingForeignLibraryError,
)
from autodiff_tutor.foreign_libraries import (
    advice,
    describe,
    library_of,
    library_of_code,
)
from autodiff_tutor.foreign_libraries import (
    conversion as foreign_conversion,
)
from autodiff_tutor.locations import call_source, in_scipy, is_users, location, user_frame
from autodiff_tutor.rules import registry
from autodiff_tutor.rules.names import op_of_callable
from autodiff_tutor.tracing.tape import Extraction, Origin, Record, Tape
from autodiff_tutor.tracing.traced_values import TracedValue


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


def attribute_set(what: str, instead: str) -> TracingError:
    """An attribute of a traced array set in place (``x.shape = (4,)``).

    >>> attribute_set("x.shape = ...", "x = x.reshape(new_shape)").hint
    'x = x.reshape(new_shape): a new array, which the trace records'
    """
    return TracingError(
        f"{what} changes a traced array in place, which the trace cannot record.",
        location(),
        hint=f"{instead}: a new array, which the trace records",
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
    shares its memory (:mod:`~autodiff_tutor.tracing.operators`).

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


EVALUATE_EXAMPLE = (
    "def f(x):\n        y = ...\n        return y, gradient(y, x)\n"
    "    y, dy_dx = evaluate(f, traced(x0))"
)

HIGHER = (
    "ask for a traced gradient with gradient(y, x, higher_derivatives=True) and call "
    "gradient() on (a function of) it"
)


def nested_evaluate() -> TracingError:
    """``evaluate`` called while another ``evaluate`` runs.

    >>> nested_evaluate().message.split(".")[0]
    'evaluate() was called inside another evaluate()'
    """
    return TracingError(
        "evaluate() was called inside another evaluate(). The tracing mode records one "
        "trace at a time.",
        location(),
        hint=f"call evaluate() once, at the top; for second derivatives, {HIGHER}",
    )


def outside_evaluate(ended: Tape | None) -> TracingError:
    """``gradient`` called when no evaluation is running.

    >>> outside_evaluate(None).message.split(".")[0]
    'gradient() was called outside evaluate()'
    """
    extra = ""
    if ended is not None:
        extra = f" (its output comes from {ended.describe()}, which has already returned)"
    return TracingError(
        "gradient() was called outside evaluate(). Gradients are read from the trace "
        "that evaluate() records while it runs your function; no trace is being "
        f"recorded here{extra}.",
        location(),
        hint="call gradient() inside the function you pass to evaluate() and return "
        f"the result:\n    {EVALUATE_EXAMPLE}",
    )


_ORIGIN_HINTS = {
    "inside": "pass the value to evaluate() as an argument, e.g. evaluate(f, x1, traced(x2)), "
    "and differentiate with respect to that parameter (or, to start a new variable from "
    "a value computed inside, write traced(extract_data(value)))",
    "outside": "pass it to evaluate() as an argument: evaluate(f, ..., w), and use the "
    "parameter inside the function",
    "ended": "compute the value and its gradient in the same evaluate() call; to start "
    "a new trace from its numbers, pass traced(extract_data(value)) to evaluate()",
    "pickled": "compute gradients in the process that runs evaluate(), and send the "
    "gradients (plain arrays) instead of traced values",
    "buffer": "pass the values you differentiate with respect to to evaluate() as "
    "arguments (traced(...)); an array the function makes (np.zeros...) is a constant "
    "until a traced value is written into it",
}


def variable_not_on_trace(call: str, name: str, origins: Iterable[Origin]) -> TracingError:
    """A gradient asked with respect to a traced value the trace does not follow.

    >>> error = variable_not_on_trace("gradient(y, w)", "w", [Origin("inside", "f.py:2")])
    >>> error.message.split(".")[0]
    'gradient(y, w): w is not on the trace'
    """
    origins = sorted(origins, key=lambda o: o.kind)
    reason = "; ".join(o.describe() for o in origins) or "not on the running trace"
    kind = origins[0].kind if origins else "outside"
    return TracingError(
        f"{call}: {name} is not on the trace. It was {reason}. Only the arguments of "
        "evaluate() are traced, so the trace treats it as a constant, and a constant "
        "has no gradient.",
        location(),
        hint=_ORIGIN_HINTS[kind],
    )


def variable_not_traced(call: str, name: str, type_name: str) -> TracingError:
    """A gradient asked with respect to a plain array.

    >>> variable_not_traced("gradient(y, c)", "c", "ndarray").message.split(", not")[0]
    'gradient(y, c): c is a plain ndarray'
    """
    return TracingError(
        f"{call}: {name} is a plain {type_name}, not a traced value, so the trace does "
        "not follow it.",
        location(),
        hint="pass traced(value) to evaluate() and differentiate with respect to the "
        "function's parameter",
    )


def output_not_traced(call: str, name: str, type_name: str, tape: Tape) -> TracingError:
    """``gradient(y, ...)`` where ``y`` is plain data.

    >>> output_not_traced("gradient(y, x)", "y", "float", Tape("f")).message.split(", not")[0]
    'gradient(y, x): y is a plain float'
    """
    cut = _extraction_phrase(tape.extractions)
    hint = (
        "compute the output from the traced arguments, without extract_data(), "
        "float() or np.asarray() on the way"
    )
    if tape.plain_gradients:
        hint += (
            f"; gradient() at {tape.plain_gradients[-1]} returned plain arrays: to "
            f"differentiate a gradient again, {HIGHER}"
        )
    return TracingError(
        f"{call}: {name} is a plain {type_name}, not a traced value, so there is no trace "
        f"to differentiate: nothing it was computed from was followed by the trace{cut}.",
        location(),
        hint=hint,
    )


def output_not_on_trace(call: str, name: str, origins: Iterable[Origin]) -> TracingError:
    """``gradient(y, ...)`` where ``y`` was computed only from values off the trace.

    >>> error = output_not_on_trace("gradient(z, x)", "z", [Origin("inside", "f.py:2")])
    >>> error.message.split(":")[1]
    ' z is not on the trace'
    """
    origins = sorted(origins, key=lambda o: o.kind)
    reason = "; ".join(o.describe() for o in origins)
    kind = origins[0].kind if origins else "outside"
    return TracingError(
        f"{call}: {name} is not on the trace: it was computed only from traced values "
        f"that the trace does not follow (one was {reason}).",
        location(),
        hint=_ORIGIN_HINTS[kind],
    )


def trace_ended(call: str, name: str, tape: Tape) -> TracingError:
    """A traced value from an evaluation that has returned.

    >>> trace_ended("gradient(y, x)", "y", Tape("f", id=2)).message.split(", which")[0]
    'gradient(y, x): y belongs to trace 2 (evaluate(f))'
    """
    return TracingError(
        f"{call}: {name} belongs to {tape.describe()}, which ended when that evaluate() "
        "call returned. A trace exists only while evaluate() runs, so it no longer "
        "remembers how the value was computed.",
        location(),
        hint=_ORIGIN_HINTS["ended"],
    )


def trace_released(call: str, tape: Tape) -> TracingError:
    """A second gradient on a trace the first one released.

    >>> "retain=True" in trace_released("gradient(y, x)", Tape("f")).hint
    True
    """
    return TracingError(
        f"{call}: this trace was already used by gradient() at {tape.released_at}, which "
        "released it to free memory (retain=False is the default), so the values the "
        "backward pass needs are gone.",
        location(),
        hint="pass retain=True to every gradient() call that is followed by another one "
        "on the same trace, or ask for all variables at once: gradient(y, x1, x2); to "
        f"differentiate a gradient again, {HIGHER}",
    )


def non_scalar(call: str, name: str, shape: tuple[int, ...]) -> NonScalarOutputError:
    """``gradient(y, ...)`` where ``y`` has more than one element.

    >>> non_scalar("gradient(y, x)", "y", (3,)).message.split(", but")[0]
    'gradient(y, x): y has shape (3,)'
    """
    item = f"{name}[0]" if name.isidentifier() else f"({name})[0]"
    return NonScalarOutputError(
        f"{call}: {name} has shape {tuple(shape)}, but only a scalar (one number) can be "
        "differentiated: the gradient says how that one number changes with each input.",
        location(),
        hint=f"reduce it first, e.g. gradient(np.sum({name}), ...), or take one element "
        f"at a time with retain=True: gradient({item}, ..., retain=True)",
    )


def _extraction_phrase(extractions: Iterable[Extraction]) -> str:
    places = [e.where for e in extractions if not e.intentional]
    if not places:
        return ""
    return (
        f" (extract_data() at {', '.join(places)} returned plain data, and whatever is "
        "computed from plain data is not traced)"
    )


def cut_by_extraction(call: str, y: str, x: str, extraction: Extraction) -> TracingError:
    """``y`` reaches ``x`` only through data taken out with ``extract_data``.

    >>> error = cut_by_extraction("gradient(y, x)", "y", "x", Extraction(0, "f.py:3", 0, False))
    >>> error.message.split(".")[0]
    'gradient(y, x): y does not depend on x through the trace'
    """
    restarted = (
        " traced() started a new variable from that data: gradients with respect to it "
        "are those of what is computed from it, and nothing flows back to "
        f"{x} through it."
        if extraction.new_variable
        else ""
    )
    return TracingError(
        f"{call}: {y} does not depend on {x} through the trace. extract_data() at "
        f"{extraction.where} took out the data of a value computed from {x}, and that "
        f"cut every path from {x} to {y}: the gradient would silently be zero.{restarted}",
        location(),
        hint="compute with the traced value itself (x ** 2, not extract_data(x) ** 2); "
        "use extract_data() only to read values, after gradient()",
    )


def extracted_and_continued(call: str, x: str, extraction: Extraction) -> str:
    """Warning: data of a value that depends on ``x`` was extracted, then used on.

    >>> extracted_and_continued("gradient(y, x)", "x", Extraction(0, "f.py:3", 0, False))[:45]
    'gradient(y, x): extract_data() at f.py:3 took'
    """
    return (
        f"{call}: extract_data() at {extraction.where} took out the data of a value "
        f"computed from {x}, and the computation went on. Whatever was computed from "
        "that data is a constant to the trace, so this gradient leaves out its "
        "contribution. Compute with the traced value itself (x ** 2, not "
        "extract_data(x) ** 2); if a constant is what you mean, write stop_gradient(...) "
        "to say so, and this warning goes away."
    )


def untraced_portion(call: str, y: str, origins: Iterable[Origin]) -> str:
    """Warning: ``y`` depends on traced values the trace does not follow.

    >>> untraced_portion("gradient(y, x)", "y", [Origin("inside", "f.py:2")]).split(" (")[0]
    'gradient(y, x): y also depends on a traced value that the trace does not follow'
    """
    reasons = "; ".join(o.describe() for o in sorted(origins, key=lambda o: o.kind))
    return (
        f"{call}: {y} also depends on a traced value that the trace does not follow (it "
        f"was {reasons}). It counts as a constant, so it gets no gradient and its own "
        "inputs get none through it. If you want its gradient, pass it to evaluate() as "
        "an argument; if it is a constant, use a plain array instead of traced()."
    )


def unused_variable(call: str, y: str, x: str) -> str:
    """Warning: ``y`` does not depend on ``x`` at all.

    >>> unused_variable("gradient(y, x)", "y", "x").split(", so")[0]
    'gradient(y, x): y does not depend on x'
    """
    return (
        f"{call}: {y} does not depend on {x}, so the gradient with respect to {x} is "
        f"zero. Check that {x} is really used in computing {y}."
    )


def higher_through_custom(record: Record) -> TracingError:
    """``gradient(..., higher_derivatives=True)`` through a custom op's record.

    >>> from types import SimpleNamespace
    >>> higher_through_custom(SimpleNamespace(op="srelu", where="f.py:3")).message[:40]
    'gradient(..., higher_derivatives=True): '
    """
    return TracingError(
        "gradient(..., higher_derivatives=True): the custom op "
        f"{record.op!r} ({record.where}) computes its backward pass with its own "
        "op_backward on plain arrays, which the trace cannot differentiate again.",
        location(),
        hint="take higher derivatives of functions made of numpy operations, or give "
        "the op's backward pass as numpy operations in a function of its own",
    )


def higher_through_rule(record: Record, error: Exception) -> TracingError:
    """``gradient(..., higher_derivatives=True)`` through a rule that tracing cannot
    run on traced values (it calls a function without a rule of its own).

    >>> from types import SimpleNamespace
    >>> record = SimpleNamespace(op="eigvalsh", where="f.py:3")
    >>> higher_through_rule(record, ValueError("no rule for eigh")).message[:60]
    "gradient(..., higher_derivatives=True): the derivative of 'e"
    """
    if isinstance(error, AutodiffError):  # its whole first sentence, unwrapped
        reason = " ".join(error.message.split()).split(": ")[0].rstrip(".")
    else:  # raised inside the rule run on traced values: its words are not the user's
        reason = f"running the rule on traced values raised {type(error).__name__}"
    return TracingError(
        f"gradient(..., higher_derivatives=True): the derivative of {record.op!r} "
        f"({record.where}) cannot be recorded for a second derivative: its rule computes "
        f"with an operation that tracing cannot differentiate again ({reason}).",
        location(),
        hint=f"first derivatives through {record.op!r} work (without "
        "higher_derivatives=True); for second derivatives, write that step with other "
        "operations",
    )


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
        hint=f"{advice(library)}; {foreign_conversion(library)}",
    )


def foreign_operand(name: str, value: Any) -> TracingForeignLibraryError:
    """An operation on a traced value and another library's value (``x * box``).

    >>> Tensor = type("Tensor", (), {"__module__": "torch"})
    >>> foreign_operand("np.multiply", Tensor()).message.split(":")[0]
    'np.multiply mixes a traced value with a PyTorch Tensor'
    """
    library = library_of(value)
    return TracingForeignLibraryError(
        f"{name} mixes a traced value with {describe(value)}: {_cannot_follow(library)}, "
        "so the gradient would be silently wrong.",
        location(),
        hint=f"{advice(library)}; {foreign_conversion(library)}",
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
