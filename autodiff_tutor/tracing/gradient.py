"""``gradient``: the backward pass over the running trace (MATLAB's ``dlgradient``),
with the diagnosis of outputs that lost their dependence on a variable.

>>> from autodiff_tutor.tracing import evaluate, traced
>>> evaluate(lambda x: gradient(x**2, x), traced(3.0))
np.float64(6.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from autodiff_tutor.errors import ArgumentError, front_door
from autodiff_tutor.locations import argument_texts, here, location, warn
from autodiff_tutor.ops.formatted import labelled_like, strip_dims
from autodiff_tutor.pytree import flatten, leaf_paths, unflatten
from autodiff_tutor.runtime.backend import cast_like, ones_like, shape_of, size, zeros_like
from autodiff_tutor.tracing import backward, gradient_messages
from autodiff_tutor.tracing.array import Traced
from autodiff_tutor.tracing.tape import Tape, active_tape
from autodiff_tutor.tracing.traced_values import is_traced, make, origins_of


def _check_output(y: Any, tape: Tape, call: str, name: str) -> None:
    if not is_traced(y):
        raise gradient_messages.output_not_traced(call, name, _kind(y), tape)
    if y._tape is None:
        raise gradient_messages.output_not_on_trace(call, name, origins_of(y))
    if y._tape is not tape:
        raise gradient_messages.trace_ended(call, name, y._tape)
    if tape.released_at is not None:
        raise gradient_messages.trace_released(call, tape)
    if size(y._data) != 1:
        raise gradient_messages.non_scalar(call, name, shape_of(y._data))


def _check_variable(x: Any, tape: Tape, call: str, name: str) -> None:
    if not is_traced(x):
        raise gradient_messages.variable_not_traced(call, name, _kind(x))
    if x._tape is None:
        raise gradient_messages.variable_not_on_trace(call, name, origins_of(x))
    if x._tape is not tape:
        raise gradient_messages.trace_ended(call, name, x._tape)


def _result(grad: Any, x: Traced, tape: Tape, higher: str | None) -> Any:
    """The gradient for ``x``: a plain array of its dtype (zeros where ``y`` does not
    depend on ``x``); with ``higher`` (its label), a traced value on ``tape``: the
    recorded adjoint, or a constant that no variable reaches (a constant gradient)."""
    if grad is None:
        grad = zeros_like(x._data)
    if higher is not None and is_traced(grad):
        return grad
    grad = cast_like(grad, x._data)
    if higher is not None:
        return make(grad, x, tape, tape.new_leaf(shape_of(grad), str(grad.dtype), higher))
    if isinstance(grad, np.ndarray) and not grad.flags.writeable:
        grad = grad.copy()  # a broadcast view from a reduction's rule
    return grad


@front_door
def gradient(y: Any, *xs: Any, retain: bool = False, higher_derivatives: bool = False) -> Any:
    """The gradient of scalar ``y`` with respect to each of ``xs`` (like ``dlgradient``).

    Only inside ``evaluate``. Each ``x`` is a traced value of the running trace (or a
    list, tuple or dict of them: the gradients come back in the same structure), and
    each gradient is a plain array of ``x``'s shape. One ``x`` gives one gradient;
    several give a tuple. The first call releases the trace unless ``retain=True``.

    >>> from autodiff_tutor.tracing import evaluate, traced
    >>> def f(x):
    ...     y = x * x
    ...     return gradient(y, x, retain=True), gradient(2 * y, x)
    >>> evaluate(f, traced(3.0))
    (np.float64(6.0), np.float64(12.0))

    ``higher_derivatives=True`` (MATLAB's ``EnableHigherDerivatives``) records the
    backward pass on the trace too: the gradients are traced values, and a gradient
    of (a function of) them gives second derivatives. The trace is kept.

    >>> def second(x):
    ...     dx = gradient(x**3, x, higher_derivatives=True)  # 3 x^2
    ...     return gradient(dx, x)  # 6 x
    >>> evaluate(second, traced(2.0))
    np.float64(12.0)
    """
    texts = argument_texts() or []
    names = [texts[i] if i < len(texts) else f"argument {i + 1}" for i in range(1 + len(xs))]
    return take_gradient(y, xs, names, retain, higher=higher_derivatives)


def take_gradient(
    y: Any,
    xs: Sequence[Any],
    names: list[str],
    retain: bool,
    untraced_none: bool = False,
    higher: bool = False,
) -> Any:
    """``gradient``'s work; ``untraced_none``: a leaf of ``xs`` that is not traced (an
    integer array in a structure) gets ``None`` instead of an error; ``higher``: the
    backward pass is recorded, its gradients are traced and the trace is kept.

    >>> from autodiff_tutor.tracing import evaluate, traced
    >>> evaluate(lambda x: take_gradient(x * x, [x], ["y", "x"], retain=False), traced(3.0))
    np.float64(6.0)
    """
    tape = active_tape()
    call = f"gradient({', '.join(names)})"
    if tape is None:
        raise gradient_messages.outside_evaluate(y._tape if is_traced(y) else None)
    tape.raise_pending()
    if not xs:
        raise ArgumentError(
            "gradient() needs the variables to differentiate with respect to",
            location(),
            hint="gradient(y, x) for one variable, gradient(y, w, b) for several",
        )
    y = strip_dims(y)
    _check_output(y, tape, call, names[0])
    every, trees = [], []
    for x, name in zip(xs, names[1:], strict=True):
        flat, tree = flatten(x)
        every.extend(zip(flat, leaf_paths(name, tree), strict=True))
        trees.append((len(flat), tree))
    # a formatted variable gets a formatted gradient
    every = [(strip_dims(x), name, x) for x, name in every]
    leaves = [(x, name) for x, name, _ in every if not (untraced_none and not is_traced(x))]
    variables = [v for x, _, v in every if not (untraced_none and not is_traced(x))]
    for x, name in leaves:
        _check_variable(x, tape, call, name)
    found = backward.ancestry(tape, y._node)
    _diagnose(tape, found, leaves, call, names[0])
    reach = backward.dependents(tape, {x._node for x, _ in leaves})
    seed = ones_like(y._data)
    adjoints = backward.backpropagate(tape, y._node, seed, found.records, reach, higher)
    label = (lambda n: f"d({names[0]})/d({n})") if higher else (lambda n: None)
    grads = iter(
        [
            labelled_like(_result(adjoints.get(x._node), x, tape, label(n)), v)
            for (x, n), v in zip(leaves, variables, strict=True)
        ]
    )
    if not higher:
        tape.plain_gradients.append(here())
    if not (retain or higher):
        tape.release(here())
    every_grad = [None if untraced_none and not is_traced(x) else next(grads) for x, _, _ in every]
    results, start = [], 0
    for count, tree in trees:
        results.append(unflatten(tree, every_grad[start : start + count]))
        start += count
    return results[0] if len(results) == 1 else tuple(results)


def _diagnose(tape: Tape, found: Any, leaves: list, call: str, y_name: str) -> None:
    """Errors and warnings for outputs that lost (part of) their dependence on x.

    "Extracted and continued" warns when, after an ``extract_data`` of a value
    computed from ``x``, an operation on the way to ``y`` took as an input a plain
    array that is the extracted data (or a view of it), or one the trace first met
    after the extraction (it may have been computed from that data). Plain arrays met
    before (the arguments of ``evaluate``, constants the function names, arrays used
    earlier) cannot come from it; nor can the data of another extraction. Reading a
    value (printing, logging, a test in an ``if``) then computing on does not warn.
    """
    warned = set()
    for x, name in leaves:
        depending = backward.dependents(tape, {x._node})
        cuts = [e for e in tape.extractions if e.node in depending]
        if x._node not in found.nodes:
            unintended = [e for e in cuts if not e.intentional]
            if unintended:
                raise gradient_messages.cut_by_extraction(call, y_name, name, unintended[0])
            warn(gradient_messages.unused_variable(call, y_name, name))
            continue
        for cut in cuts:
            if cut.intentional or id(cut) in warned:
                continue
            k = next(i for i, e in enumerate(tape.extractions) if e is cut)
            if any(
                r.index > cut.after and any(_may_come_from(i, k) for i in r.inputs)
                for r in found.records
            ):
                warned.add(id(cut))
                warn(gradient_messages.extracted_and_continued(call, name, cut))
    if found.hidden:
        warn(gradient_messages.untraced_portion(call, y_name, found.hidden))


def _may_come_from(info: Any, k: int) -> bool:
    """Whether a record's input may hold data of the ``k``-th extraction: it is that
    data (or a view of it), or a plain array first met after it."""
    if info.node is not None or info.shape is None or info.origins or info.met_after is None:
        return False
    return info.data_of == k or (info.data_of is None and info.met_after > k)


def _kind(value: Any) -> str:
    """The type of a plain value as the user knows it (an argument's ndarray view that
    tracing passes on is an ``ndarray``)."""
    return "ndarray" if isinstance(value, np.ndarray) else type(value).__name__


__all__ = ["gradient"]
