"""Custom operations (the op protocol) called on traced values: one tape record each.

Any object with ``op_forward`` / ``op_backward`` (a ``DifferentiableFunction``, a
compiled ``@differentiable`` function) is a primitive to tracing. Its forward runs on
the raw arrays; the record keeps what it saved; the backward pass calls
``op_backward(d_outputs, compute_gradients, saved)`` with one flag per input: true
where the input is on the trace and a gradient is asked through it.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> class Double:
...     name, num_outputs = "double", 1
...     def op_forward(self, x):
...         return (2 * x,), None
...     def op_backward(self, d_outputs, compute_gradients, saved):
...         return (2 * d_outputs[0] if compute_gradients[0] else None,)
>>> evaluate(lambda x: gradient(np.sum(call_op(Double(), x)), x), traced([1.0, 5.0]))
array([2., 2.])
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.errors import TracingError
from autodiff_tutor.locations import here, location
from autodiff_tutor.ops.formatted import strip_dims
from autodiff_tutor.protocol import register_traced_call
from autodiff_tutor.runtime.backend import shape_of
from autodiff_tutor.tracing.backward import CustomPayload
from autodiff_tutor.tracing.tape import active_tape
from autodiff_tutor.tracing.traced_values import (
    dtype_name,
    input_info,
    is_live,
    is_traced,
    make,
    snapshot,
    traced_leaves,
    unwrap,
    wrap_untraced,
)


def call_op(op: Any, *inputs: Any) -> Any:
    """Run differentiable operation ``op`` on ``inputs`` (some may be traced).

    Returns the outputs as traced arrays: a bare value when ``op.num_outputs`` is 1,
    else a tuple. When an input is on the running trace, one record is added whose
    backward calls ``op.op_backward``. On plain inputs it just runs the forward.

    This is the hook for ``DifferentiableFunction.__call__`` (and compiled
    functions): when any input is traced (``is_traced``), delegate to
    ``call_op(self, *inputs)``.

    >>> from autodiff_tutor.api import differentiable
    >>> from autodiff_tutor.tracing import evaluate, gradient, traced
    >>> @differentiable
    ... def cube(x):
    ...     return x * x * x
    >>> evaluate(lambda x: gradient(call_op(cube, x), x), traced(2.0))
    np.float64(12.0)
    """
    tape = active_tape()
    if tape is not None:
        tape.raise_pending()
    inputs = strip_dims(inputs)  # an op works on the data; its interface function relabels
    live = tape is not None and any(is_live(v, tape) for v in inputs)
    # on a trace, the op gets its own copy of each plain input: what it saves for its
    # backward must not see a later write into that array (through a view, a helper)
    raw_inputs = [unwrap(v) if is_traced(v) or not live else snapshot(v) for v in inputs]
    result = op.op_forward(*raw_inputs)
    name = getattr(op, "name", type(op).__name__)
    count = getattr(op, "num_outputs", 1)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], tuple)):
        raise TracingError(
            f"op_forward of {name!r} must return (outputs, saved), outputs being a tuple",
            location(),
        )
    outputs, saved = result
    if len(outputs) != count:
        raise TracingError(
            f"op_forward of {name!r} returned {len(outputs)} output(s); num_outputs is {count}",
            location(),
        )
    if not live:
        wrapped = [wrap_untraced(o, traced_leaves(list(inputs))) for o in outputs]
    else:
        record = tape.add_record(
            name,
            "custom",
            [input_info(v, tape) for v in inputs],
            [(shape_of(o), dtype_name(o)) for o in outputs],
            here(),
            payload=CustomPayload(
                op,
                saved,
                [
                    snapshot(r) if is_traced(v) else r
                    for v, r in zip(inputs, raw_inputs, strict=True)
                ],
                list(outputs),
                location(),
            ),
        )
        like = traced_leaves(list(inputs))[0]
        wrapped = [make(o, like, tape, n) for o, n in zip(outputs, record.outputs, strict=True)]
    return wrapped[0] if count == 1 else tuple(wrapped)


def _call_if_traced(op: Any, inputs: tuple[Any, ...]) -> tuple[bool, Any]:
    """:func:`call_op` where an input is traced (see
    :func:`autodiff_tutor.protocol.call_if_traced`)."""
    if any(is_traced(value) for value in strip_dims(inputs)):
        return True, call_op(op, *inputs)
    return False, None


register_traced_call(_call_if_traced)  # ops and compiled functions call back through it
