"""``traced(x)``: a traced array made from data (like MATLAB's ``dlarray(x)``).

The data is copied, so the caller's array never changes; integers and Python numbers
become float64, and what has no gradient (booleans, complex numbers, strings) is
refused with a located error. Made while ``evaluate`` runs, a traced array is not on
the trace (the course's pitfall), except from data ``extract_data`` handed out: that
starts a new independent variable.

>>> import numpy as np
>>> x = np.array([1.0, 2.0])
>>> y = traced(x)
>>> y
traced(array([1., 2.]), not on a trace)
>>> y[0] = 5.0
>>> x.tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import NonDifferentiableInputError, front_door
from autodiff_tutor.foreign_libraries import first_foreign
from autodiff_tutor.locations import here, location
from autodiff_tutor.ops.formatted import FormattedArray, formatted, is_formatted
from autodiff_tutor.runtime.backend import copy_array, dtype_kind, shape_of
from autodiff_tutor.tracing import traced_values, variable_writes
from autodiff_tutor.tracing.array import Traced
from autodiff_tutor.tracing.other_libraries import foreign_input
from autodiff_tutor.tracing.tape import Origin, active_tape


@front_door
def traced(x: Any, fmt: str | None = None) -> Any:
    """A traced array holding a copy of ``x`` (like MATLAB's ``dlarray(x)``, and with a
    data format ``fmt`` such as ``"SSCB"``, like ``dlarray(x, fmt)``: a formatted array,
    see :mod:`autodiff_tutor.ops.formatted`; a formatted ``x`` keeps its labels).

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
    if traced_values.is_traced(x):
        if traced_values.is_live(x, tape):
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
    variable_writes.register(tape, variable, label, argument=False)
    return variable
