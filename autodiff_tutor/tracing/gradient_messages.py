"""The messages of ``evaluate`` and ``gradient``: a variable or output not on the
running trace, a trace that ended or was released, a non-scalar output, and the
warnings for outputs that lost their dependence on a variable (extractions).

Each function builds the exception (or warning text) for one pitfall, located at the
user's line.

>>> nested_evaluate().message.split(".")[0]
'evaluate() was called inside another evaluate()'
"""

from __future__ import annotations

from collections.abc import Iterable

from autodiff_tutor.errors import NonScalarOutputError, TracingError
from autodiff_tutor.locations import location
from autodiff_tutor.tracing.tape import Extraction, Origin, Tape

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
