"""Data into and out of the trace: ``traced(x)`` makes a traced array from a copy of
data (like MATLAB's ``dlarray(x)``), and ``extract_data`` / ``stop_gradient`` take the
plain data out of a traced value (MATLAB's ``extractdata``), which the trace then no
longer follows.

>>> import numpy as np
>>> x = np.array([1.0, 2.0])
>>> y = traced(x)
>>> y
traced(array([1., 2.]), not on a trace)
>>> y[0] = 5.0
>>> x.tolist(), extract_data(y)
([1.0, 2.0], array([5., 2.]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import NonDifferentiableInputError, front_door
from autodiff_tutor.foreign_libraries import first_foreign
from autodiff_tutor.locations import here, location, user_frame
from autodiff_tutor.ops.formats import FormattedArray, formatted, is_formatted
from autodiff_tutor.runtime.backend import copy_array, dtype_kind, shape_of
from autodiff_tutor.tracing.array import Traced
from autodiff_tutor.tracing.messages import foreign_input
from autodiff_tutor.tracing.operators import register_variable
from autodiff_tutor.tracing.tape import Extraction, Origin, active_tape
from autodiff_tutor.tracing.traced_values import input_info, is_live, is_traced


@front_door
def traced(x: Any, fmt: str | None = None) -> Any:
    """A traced array holding a copy of ``x`` (like MATLAB's ``dlarray(x)``, and with a
    data format ``fmt`` such as ``"SSCB"``, like ``dlarray(x, fmt)``: a formatted array,
    see :mod:`autodiff_tutor.ops.formats`; a formatted ``x`` keeps its labels).

    ``x`` is a numpy, cupy or array-API array of floating point, or Python numbers
    (integers become float64). Pass it to ``evaluate`` to trace it; made inside the
    evaluated function, it is *not* on the trace (the pitfall of the course), except
    from data that ``extract_data`` took out of the running trace:
    ``traced(extract_data(y))`` starts a new independent variable on it.

    >>> traced(3)
    traced(array(3.), not on a trace)
    >>> traced(np.ones((1, 2)), "CB").format
    'CB'
    """
    if is_formatted(x):
        if fmt is not None:
            formatted(x, fmt)  # a located error unless the labels agree
        return FormattedArray(_unlabelled(x.data), x.format)
    if fmt is not None:
        return formatted(_unlabelled(x), fmt)
    return _unlabelled(x)


def _unlabelled(x: Any) -> Traced:
    tape = active_tape()
    if is_traced(x):
        if is_live(x, tape):
            return x
        x = x._data
    foreign = first_foreign(x)  # an autograd ArrayBox, a JAX tracer, a torch tensor
    if foreign is not None:
        raise foreign_input(foreign[1])
    if isinstance(x, (bool, int, float, complex, list, tuple)):
        try:
            raw = np.asarray(x)
        except (TypeError, ValueError):  # ragged lists
            raw = np.asarray(None)
        if raw.dtype.kind in "biu":
            raw = raw.astype(np.float64)
        if raw.dtype.kind != "f":
            raise NonDifferentiableInputError(
                f"traced() takes numbers, not {x!r}"[:200],
                location(),
                hint="pass a numpy array of floating point, or (nested, rectangular) lists "
                "of numbers",
            )
    elif hasattr(x, "shape") and hasattr(x, "dtype"):
        if dtype_kind(x) != "f":  # complex too: the rules are written for real numbers
            why, hint = (
                ("gradients through complex numbers are not supported", "trace the real "
                 "and imaginary parts as two arrays")
                if "complex" in str(x.dtype)
                else ("integers and booleans have no gradient", "convert first, e.g. "
                      "traced(x.astype(np.float64))")
            )  # fmt: skip
            raise NonDifferentiableInputError(
                f"traced() needs real floating-point data; got dtype {x.dtype}: {why}.",
                location(),
                hint=hint,
            )
        raw = copy_array(x)
    else:
        raise NonDifferentiableInputError(
            f"traced() takes an array or Python numbers, not {type(x).__name__}",
            location(),
            hint="pass a numpy (or cupy, or array-API) array of floating point",
        )
    if tape is not None and tape.extracted.get(id(x), (None,))[0] is x:
        return _new_variable(raw, tape, tape.extracted[id(x)][1])
    origin = Origin("inside" if tape is not None else "outside", here())
    return Traced(raw, None, None, frozenset({origin}))


def _new_variable(raw: Any, tape: Any, extraction: Any) -> Traced:
    """A new variable on the running trace, from data ``extract_data`` handed out
    (nothing flows back through the extraction: the error for a cut path says so)."""
    extraction.new_variable = True
    label = f"extract_data({tape.nodes[extraction.node].label})"
    node = tape.new_leaf(shape_of(raw), str(raw.dtype), label, here())
    variable = Traced(raw, tape, node, frozenset())
    register_variable(tape, variable, label, argument=False)
    return variable


def _take_out(x: Any, op: str, intentional: bool) -> Any:
    """The data of ``x`` (element by element in a structure), recorded on the running
    trace as an extraction (``intentional``: by ``stop_gradient``)."""
    if is_formatted(x):  # extract_data gives plain data; stop_gradient keeps the labels
        data = _take_out(x.data, op, intentional)
        return FormattedArray(data, x.format) if intentional else data
    if isinstance(x, (list, tuple)):
        return type(x)(_take_out(v, op, intentional) for v in x)
    if isinstance(x, dict):
        return {k: _take_out(v, op, intentional) for k, v in x.items()}
    if not is_traced(x):
        return x
    tape = active_tape()
    if not is_live(x, tape):
        return x._data
    where = here()
    _meet_locals(tape)
    record = tape.add_record(op, "cut", [input_info(x, tape)], [], where)
    extraction = Extraction(x._node, where, record.index, intentional)
    tape.extractions.append(extraction)
    data = copy_array(x._data)
    tape.extracted[id(data)] = (data, extraction)
    return data


def _meet_locals(tape: Any) -> None:
    """The plain arrays the user's function holds when it extracts: they exist before
    the extracted data, so they cannot be computed from it (see ``gradient``'s
    "extracted and continued" warning)."""
    frame = user_frame()
    for value in list(frame.f_locals.values()) if frame is not None else ():
        if hasattr(value, "shape") and not is_traced(value) and not is_formatted(value):
            tape.meet_plain(value)


@front_door
def extract_data(x: Any) -> Any:
    """The plain array inside a traced value (like ``extractdata``); stops the trace.

    On a value being traced, the result is a copy that the trace does not follow:
    anything computed from it gets no gradient (``gradient`` warns when that
    happens). Lists, tuples and dicts are handled element by element.

    ``traced(extract_data(y))`` inside the evaluated function starts a **new
    independent variable** on the running trace, with the value of ``y``: gradients
    with respect to it are those of what is computed from it (and, as with any
    extraction, nothing flows back through it to what ``y`` was computed from).

    >>> import numpy as np
    >>> from autodiff_tutor.tracing import evaluate, gradient, traced
    >>> extract_data(traced([1.0, 2.0]))
    array([1., 2.])
    >>> def f(x):
    ...     z = traced(extract_data(x * x))  # a new variable, z = x**2
    ...     return gradient(np.sum(z * z * z), z)
    >>> evaluate(f, traced([1.0, 2.0]))  # 3 z**2
    array([ 3., 48.])
    """
    return _take_out(x, "extract_data", intentional=False)


@front_door
def stop_gradient(x: Any) -> Any:
    """The data of ``x`` as a constant, on purpose: ``extract_data`` without a warning.

    >>> from autodiff_tutor.tracing import evaluate, gradient, traced
    >>> def f(x):
    ...     y = x * stop_gradient(x)  # d/dx treats the second factor as a constant
    ...     return gradient(y, x)
    >>> evaluate(f, traced(3.0))
    np.float64(3.0)
    """
    return _take_out(x, "stop_gradient", intentional=True)


__all__ = ["extract_data", "stop_gradient", "traced"]
