"""``evaluate`` and ``new_variables``: running a function with tracing on (MATLAB's
``dlfeval``). The gradient is in :mod:`~autodiff_tutor.tracing.gradient`, taking the
data out in :mod:`~autodiff_tutor.tracing.extract`.

The Rosenbrock function of MATLAB's example, at ``x0 = [-1, 2]``:

>>> from autodiff_tutor.tracing import extract_data, gradient
>>> def rosenbrock(x):
...     y = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
...     return y, gradient(y, x)
>>> value, slope = evaluate(rosenbrock, traced([-1.0, 2.0]))
>>> extract_data(value), slope
(np.float64(104.0), array([396., 200.]))
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from autodiff_tutor.errors import ArgumentError, TracingError, front_door
from autodiff_tutor.locations import location
from autodiff_tutor.ops.formatted import FormattedArray, is_formatted
from autodiff_tutor.pytree import flatten, leaf_paths, unflatten
from autodiff_tutor.runtime.backend import shape_of
from autodiff_tutor.tracing import gradient_messages, plain_arguments, variable_writes
from autodiff_tutor.tracing.buffers import plain_buffers
from autodiff_tutor.tracing.from_data import traced
from autodiff_tutor.tracing.other_libraries import reached_foreign_code
from autodiff_tutor.tracing.tape import Tape, activate, active_tape, deactivate
from autodiff_tutor.tracing.traced_values import is_traced, make
from autodiff_tutor.tracing.user_code import rewired, seen_in_trace


def parameter_labels(fn: Callable[..., Any], count: int) -> list[str]:
    """The names of ``fn``'s first ``count`` positional parameters (``arg{i}`` where
    there is none).

    >>> parameter_labels(lambda x, *rest: x, 2)
    ['x', 'arg1']
    """
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name if p.kind in positional else None for p in parameters[:count]]
    return [names[i] if i < len(names) and names[i] else f"arg{i}" for i in range(count)]


def _bind_leaves(value: Any, tape: Tape, label: str, argument: bool = True) -> Any:
    """``value`` with its traced arrays (also inside lists, tuples, dicts) put on ``tape``
    as its variables (``argument``: arguments of the traced function)."""
    leaves, tree = flatten(value)
    bound = [
        _bind_leaf(v, tape, path, argument)
        for v, path in zip(leaves, leaf_paths(label, tree), strict=True)
    ]
    return unflatten(tree, bound)


def _bind_leaf(value: Any, tape: Tape, label: str, argument: bool) -> Any:
    if is_formatted(value):
        return FormattedArray(_bind_leaf(value.data, tape, label, argument), value.format)
    if not is_traced(value):
        return value
    node = tape.new_leaf(shape_of(value._data), str(value._data.dtype), label)
    variable = make(value._data, value, tape, node)
    variable_writes.register(tape, variable, label, argument)
    return variable


def new_variables(value: Any, label: str) -> Any:
    """Arrays (also in lists, tuples, dicts) as new variables of the running trace.

    For objects that own their arrays, such as a network's learnable parameters,
    which ``evaluate`` cannot see in its arguments: ``gradient`` can then be taken
    with respect to them. Only inside ``evaluate``.

    >>> from autodiff_tutor.tracing import gradient
    >>> def f(w):
    ...     (v,) = new_variables([w], "v")
    ...     return gradient(3 * v, v)
    >>> evaluate(f, 2.0)
    np.float64(3.0)
    """
    tape = active_tape()
    if tape is None:
        raise TracingError(
            "new_variables() was called outside evaluate(): there is no trace to add to",
            location(),
            hint="call it inside the function that evaluate() runs",
        )
    leaves, tree = flatten(value)
    values = unflatten(tree, [v if is_traced(v) else traced(v) for v in leaves])
    return _bind_leaves(values, tape, label, argument=False)


def check_call(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``fn`` is callable with these arguments (else a located ``ArgumentError``).

    >>> check_call(lambda x: x, (1,), {})
    >>> check_call(lambda x: x, (1, 2), {})
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ArgumentError: ...
    """
    if not callable(fn):
        raise ArgumentError(
            f"evaluate() needs a function to run, not {type(fn).__name__}",
            location(),
            hint="evaluate(f, traced(x)) runs f(traced(x)) with tracing on",
        )
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # built-ins without a signature: their own call checks them
    try:
        signature.bind(*args, **kwargs)
    except TypeError as error:
        raise ArgumentError(
            f"cannot call {getattr(fn, '__name__', 'the function')}{signature} with "
            f"{len(args)} argument(s): {error}",
            location(),
        ) from None


def _meet_constants(fn: Any, values: tuple[Any, ...], tape: Tape) -> None:
    """The plain arrays that exist before ``fn`` runs, met first: its arguments (also
    inside structures), and the globals and closure values it names. None of them can
    be computed from data that ``extract_data`` takes out later."""
    seen = [leaf for value in values for leaf in flatten(value)[0]]
    code = getattr(fn, "__code__", None)
    if code is not None:
        names = getattr(fn, "__globals__", {})
        seen += [names[n] for n in code.co_names if n in names]
        seen += [cell.cell_contents for cell in getattr(fn, "__closure__", None) or ()]
    for value in seen:
        if hasattr(value, "shape") and not is_traced(value) and not is_formatted(value):
            tape.meet_plain(value)


@front_door
def evaluate(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn(*args, **kwargs)`` with tracing on, and return what it returns.

    Traced arguments (also inside lists, tuples and dicts) are put on a new trace;
    plain arrays stay constants. ``gradient`` works only while ``fn`` runs. Traced
    values that ``fn`` returns stay traced arrays (use ``extract_data``), but their
    trace has ended.

    >>> from autodiff_tutor.tracing import gradient
    >>> evaluate(lambda x, c: gradient(x * c, x), traced(2.0), 3.0)
    np.float64(3.0)
    """
    labels = parameter_labels(fn, len(args))
    return trace_call(fn, args, kwargs, getattr(fn, "__name__", type(fn).__name__), labels)


def trace_call(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    name: str,
    labels: list[str],
) -> Any:
    """``evaluate``'s work: the trace is called ``evaluate(name)``, and the traced arrays
    of ``args`` are its variables ``labels`` (``value_and_gradient`` runs a wrapper of
    the user's function, and names the trace and the variables after that function).

    >>> trace_call(lambda v: v * 2, (traced(1.0),), {}, "double", ["x"])
    traced(np.float64(2.0), trace ... (evaluate(double)) has ended)
    """
    if active_tape() is not None:
        raise gradient_messages.nested_evaluate()
    check_call(fn, args, kwargs)
    tape = Tape(name)
    args = tuple(_bind_leaves(a, tape, label) for a, label in zip(args, labels, strict=True))
    kwargs = {k: _bind_leaves(v, tape, k) for k, v in kwargs.items()}
    args = tuple(plain_arguments.marked(seen_in_trace(a)) for a in args)  # X.dot, f is relu
    kwargs = {k: plain_arguments.marked(seen_in_trace(v)) for k, v in kwargs.items()}
    _meet_constants(fn, (*args, *kwargs.values()), tape)
    token = activate(tape)
    try:
        result = rewired(fn)(*args, **kwargs)  # numpy, scipy and math as tracing sees them
        tape.raise_pending()
        return plain_arguments.unmarked(plain_buffers(result))
    except Exception as error:
        if tape.pending is not None and error is not tape.pending:
            tape.raise_pending()  # the first mistake, not what it led to
        foreign = reached_foreign_code(error)  # autograd's flatten(params) of traced values
        if foreign is not None:
            raise foreign from error
        raise
    finally:
        deactivate(token)
        tape.end()


__all__ = ["evaluate", "new_variables", "trace_call"]
