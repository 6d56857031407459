"""``extract_data`` and ``stop_gradient``: the plain data out of a traced value
(MATLAB's ``extractdata``), which the trace then no longer follows.

>>> from autodiff_tutor.tracing import traced
>>> extract_data(traced([1.0, 2.0]))
array([1., 2.])
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.errors import front_door
from autodiff_tutor.locations import here, user_frame
from autodiff_tutor.ops.formatted import FormattedArray, is_formatted
from autodiff_tutor.runtime.backend import copy_array
from autodiff_tutor.tracing.tape import Extraction, active_tape
from autodiff_tutor.tracing.traced_values import input_info, is_live, is_traced


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


__all__ = ["extract_data", "stop_gradient"]
