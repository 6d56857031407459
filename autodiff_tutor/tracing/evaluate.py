"""``evaluate`` and ``new_variables``: running a function with tracing on (MATLAB's
``dlfeval``); ``value_and_gradient``: tracing a function and returning its value and
gradient, with ``wrt`` picking arguments by position or name, or a bound method's
attributes (the compiler's ``value_and_grad`` contract). The gradient is in
:mod:`~autodiff_tutor.tracing.gradient`, the data in and out in
:mod:`~autodiff_tutor.tracing.array`.

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

import contextlib
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np  # noqa: F401 - doctests

from autodiff_tutor.errors import ArgumentError, TracingError, front_door
from autodiff_tutor.locations import location
from autodiff_tutor.ops.formats import FormattedArray, is_formatted
from autodiff_tutor.pytree import flatten, is_structure, leaf_paths, unflatten
from autodiff_tutor.runtime.backend import is_float_value, shape_of
from autodiff_tutor.tracing import messages
from autodiff_tutor.tracing.array import extract_data, traced
from autodiff_tutor.tracing.gradient import take_gradient
from autodiff_tutor.tracing.messages import reached_foreign_code
from autodiff_tutor.tracing.operators import register_variable
from autodiff_tutor.tracing.tape import Tape, activate, active_tape, deactivate
from autodiff_tutor.tracing.traced_values import is_traced, make
from autodiff_tutor.tracing.user_code import marked, plain_buffers, rewired, seen_in_trace, unmarked


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
    register_variable(tape, variable, label, argument)
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
        raise messages.nested_evaluate()
    check_call(fn, args, kwargs)
    tape = Tape(name)
    args = tuple(_bind_leaves(a, tape, label) for a, label in zip(args, labels, strict=True))
    kwargs = {k: _bind_leaves(v, tape, k) for k, v in kwargs.items()}
    args = tuple(marked(seen_in_trace(a)) for a in args)  # X.dot, f is relu
    kwargs = {k: marked(seen_in_trace(v)) for k, v in kwargs.items()}
    _meet_constants(fn, (*args, *kwargs.values()), tape)
    token = activate(tape)
    try:
        result = rewired(fn)(*args, **kwargs)  # numpy, scipy and math as tracing sees them
        tape.raise_pending()
        return unmarked(plain_buffers(result))
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


@front_door
def value_and_gradient(
    fn: Callable[..., Any], *args: Any, wrt: int | str | Sequence[int | str] = 0
) -> tuple[Any, Any]:
    """Trace ``fn(*args)`` and return its value and its gradient w.r.t. ``wrt``.

    ``wrt`` picks arguments by position or parameter name, or attributes of a bound
    method's object (``wrt="self.W"`` for ``model.loss``, traced while it runs); one
    gives one gradient, a sequence gives a tuple. The arguments picked are traced for
    you; values are returned as plain arrays. A structure (a list, tuple or dict of
    arrays, nested) is traced array by array and its gradient has the same structure
    (``None`` for an integer array). (The same contract as the compiler's
    ``value_and_grad``, so both modes can be compared on the same programs.)

    >>> value_and_gradient(lambda x, y: np.sum(x * y), np.ones(2), np.arange(2.0), wrt=1)
    (np.float64(1.0), array([1., 1.]))
    >>> value_and_gradient(lambda p: np.sum(p["w"] * p["b"]), {"w": np.ones(2), "b": np.ones(2)})
    (np.float64(2.0), {'w': array([1., 1.]), 'b': array([1., 1.])})
    """
    check_call(fn, args, {})
    owner, attributes, plain_wrt = _attributes(fn, wrt)
    positions = [] if attributes and not plain_wrt else _positions(fn, len(args), plain_wrt)
    labels = parameter_labels(fn, len(args))
    names = ["the value", *(labels[i] for i in positions), *(f"self.{a}" for a in attributes)]
    args = tuple(_traced_leaves(a) if i in positions else a for i, a in enumerate(args))
    learnables = [_traced_leaves(getattr(owner, a)) for a in attributes]
    count = len(args)
    target = rewired(fn)  # numpy, scipy and math as tracing sees them

    def run(*inner: Any) -> tuple[Any, Any]:
        variables = [inner[i] for i in positions] + list(inner[count:])
        with _set_attributes(owner, dict(zip(attributes, inner[count:], strict=True))):
            y = target(*(marked(a) for a in inner[:count]))
        grads = take_gradient(y, variables, names, False, untraced_none=True)
        return y, grads if len(variables) > 1 else (grads,)

    name = getattr(fn, "__name__", type(fn).__name__)
    variable_labels = labels + [f"self.{a}" for a in attributes]
    value, grads = trace_call(run, (*args, *learnables), {}, name, variable_labels)
    order = [("arg", i) for i in positions] + [("attribute", a) for a in attributes]
    entries = [wrt] if isinstance(wrt, (int, str)) else list(wrt)
    by_entry = dict(zip(order, grads, strict=True))
    grads = tuple(by_entry[_entry_key(fn, e, labels)] for e in entries)
    if isinstance(wrt, (int, str)):
        grads = grads[0]
    return extract_data(value), grads


def _entry_key(fn: Callable[..., Any], entry: Any, labels: list[str]) -> tuple[str, Any]:
    if isinstance(entry, str) and entry.startswith("self."):
        return ("attribute", entry[len("self.") :])
    return ("arg", _positions(fn, len(labels), entry)[0])


def _attributes(fn: Any, wrt: Any) -> tuple[Any, list[str], list[Any]]:
    """The object whose attributes ``wrt`` names (``"self.W"``), those attributes, and
    the other entries of ``wrt``."""
    entries = [wrt] if isinstance(wrt, (int, str)) else wrt
    if not isinstance(entries, (list, tuple)):
        return None, [], wrt
    named = [e for e in entries if isinstance(e, str) and e.startswith("self.")]
    if not named:
        return None, [], wrt
    owner = getattr(fn, "__self__", None) if inspect.ismethod(fn) else fn
    attributes = [e[len("self.") :] for e in named]
    missing = [a for a in attributes if owner is None or not hasattr(owner, a)]
    if missing or not (inspect.ismethod(fn) or not inspect.isfunction(fn)):
        raise ArgumentError(
            f"wrt={named[0]!r}: {getattr(fn, '__name__', 'the function')} has no attribute "
            f"{missing[0] if missing else attributes[0]!r} to differentiate",
            location(),
            hint="wrt='self.W' names an attribute of a bound method's object (model.loss) "
            "or of a callable object",
        )
    return owner, attributes, [e for e in entries if e not in named]


@contextlib.contextmanager
def _set_attributes(owner: Any, values: dict[str, Any]) -> Iterator[None]:
    """The traced values as the object's attributes while ``fn`` runs; the originals
    back afterwards (unless ``fn`` assigned the attribute itself)."""
    saved = {name: getattr(owner, name) for name in values}
    for name, value in values.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for name, value in values.items():
            if getattr(owner, name) is value:
                setattr(owner, name, saved[name])


def _traced_leaves(value: Any) -> Any:
    """``value`` traced; a structure (a list, tuple or dict of arrays) leaf by leaf,
    where a leaf that cannot have a gradient (integers) stays as it is."""
    if not is_structure(value):
        return value if is_traced(value) else traced(value)
    leaves, tree = flatten(value)
    return unflatten(
        tree, [traced(v) if is_float_value(v) and not is_traced(v) else v for v in leaves]
    )


def _positions(fn: Callable[..., Any], count: int, wrt: Any) -> list[int]:
    items = [wrt] if isinstance(wrt, (int, str)) else wrt
    if not isinstance(items, (list, tuple)) or not items:
        raise ArgumentError(
            f"wrt must be an argument position, a name, or a non-empty list of them, not {wrt!r}",
            location(),
            hint="for example wrt=0, wrt='x' or wrt=[0, 1]",
        )
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    positions = []
    for item in items:
        if isinstance(item, str):
            if item not in names[:count]:
                raise ArgumentError(f"wrt={item!r} is not a parameter of the function", location())
            item = names.index(item)
        if isinstance(item, bool) or not isinstance(item, int) or not -count <= item < count:
            raise ArgumentError(f"wrt={item!r} is out of range for {count} argument(s)", location())
        positions.append(item % count)
    if len(set(positions)) != len(positions):
        raise ArgumentError(f"wrt must name each argument at most once, got {wrt!r}", location())
    return positions


__all__ = ["evaluate", "new_variables", "trace_call", "value_and_gradient"]
