"""``evaluate``, ``gradient``, ``extract_data``, ``stop_gradient``: tracing's API
(MATLAB's ``dlfeval``, ``dlgradient``, ``extractdata``).

The Rosenbrock function of the seeds, at ``x0 = [-1, 2]``:

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

import numpy as np

from autodiff_tutor.api_checks import is_float_value
from autodiff_tutor.errors import ArgumentError, TracingError
from autodiff_tutor.ops.formatted import FormattedArray, is_formatted, labelled_like, strip_dims
from autodiff_tutor.pytree import flatten, is_structure, leaf_paths, unflatten
from autodiff_tutor.runtime.backend import cast_like, ones_like, shape_of, size, zeros_like
from autodiff_tutor.tracing import backward, messages
from autodiff_tutor.tracing.array import Traced, _copy, traced
from autodiff_tutor.tracing.dispatch import input_info, is_live, is_traced, make, origins_of
from autodiff_tutor.tracing.locations import argument_texts, here, location, warn
from autodiff_tutor.tracing.tape import Extraction, Tape, activate, active_tape, deactivate


def _labels(fn: Callable[..., Any], count: int) -> list[str]:
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    labels = []
    for i in range(count):
        p = parameters[i] if i < len(parameters) else None
        if p is None or p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            labels.append(f"arg{i}")
        else:
            labels.append(p.name)
    return labels


def _bind_leaves(value: Any, tape: Tape, label: str) -> Any:
    """``value`` with its traced arrays (also inside lists, tuples, dicts) put on ``tape``."""
    leaves, tree = flatten(value)
    bound = [
        _bind_leaf(v, tape, path) for v, path in zip(leaves, leaf_paths(label, tree), strict=True)
    ]
    return unflatten(tree, bound)


def _bind_leaf(value: Any, tape: Tape, label: str) -> Any:
    if is_formatted(value):
        return FormattedArray(_bind_leaf(value.data, tape, label), value.format)
    if not is_traced(value):
        return value
    node = tape.new_leaf(shape_of(value._data), str(value._data.dtype), label)
    return make(value._data, value, tape, node)


def new_variables(value: Any, label: str) -> Any:
    """Arrays (also in lists, tuples, dicts) as new variables of the running trace.

    For objects that own their arrays, such as a network's learnable parameters,
    which ``evaluate`` cannot see in its arguments: ``gradient`` can then be taken
    with respect to them. Only inside ``evaluate``.

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
    if isinstance(value, (list, tuple)):
        return type(value)(new_variables(v, f"{label}[{i}]") for i, v in enumerate(value))
    if isinstance(value, dict):
        return {k: new_variables(v, f"{label}[{k!r}]") for k, v in value.items()}
    return _bind_leaves(value if is_traced(value) else traced(value), tape, label)


def _check_call(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``fn`` is callable with these arguments (else a located ``ArgumentError``)."""
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


def evaluate(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn(*args, **kwargs)`` with tracing on, and return what it returns.

    Traced arguments (also inside lists, tuples and dicts) are put on a new trace;
    plain arrays stay constants. ``gradient`` works only while ``fn`` runs. Traced
    values that ``fn`` returns stay traced arrays (use ``extract_data``), but their
    trace has ended.

    >>> evaluate(lambda x, c: gradient(x * c, x), traced(2.0), 3.0)
    np.float64(3.0)
    """
    if active_tape() is not None:
        raise messages.nested_evaluate()
    _check_call(fn, args, kwargs)
    tape = Tape(getattr(fn, "__name__", type(fn).__name__))
    labels = _labels(fn, len(args))
    args = tuple(_bind_leaves(a, tape, label) for a, label in zip(args, labels, strict=True))
    kwargs = {k: _bind_leaves(v, tape, k) for k, v in kwargs.items()}
    token = activate(tape)
    try:
        result = fn(*args, **kwargs)
        tape.raise_pending()
        return result
    except Exception as error:
        if tape.pending is not None and error is not tape.pending:
            tape.raise_pending()  # the first mistake, not what it led to
        raise
    finally:
        deactivate(token)
        tape.end()


def _check_output(y: Any, tape: Tape, call: str, name: str) -> None:
    if not is_traced(y):
        raise messages.output_not_traced(call, name, type(y).__name__, tape)
    if y._tape is None:
        raise messages.output_not_on_trace(call, name, origins_of(y))
    if y._tape is not tape:
        raise messages.trace_ended(call, name, y._tape)
    if tape.released_at is not None:
        raise messages.trace_released(call, tape)
    if size(y._data) != 1:
        raise messages.non_scalar(call, name, shape_of(y._data))


def _check_variable(x: Any, tape: Tape, call: str, name: str) -> None:
    if not is_traced(x):
        raise messages.variable_not_traced(call, name, type(x).__name__)
    if x._tape is None:
        raise messages.variable_not_on_trace(call, name, origins_of(x))
    if x._tape is not tape:
        raise messages.trace_ended(call, name, x._tape)


def _result(grad: Any, x: Traced, tape: Tape, higher: str | None) -> Any:
    """The gradient for ``x``: a plain array of its dtype (zeros where ``y`` does not
    depend on ``x``); with ``higher`` (its label), a traced value on ``tape``: the
    recorded adjoint, or a constant that no variable reaches (a constant gradient)."""
    if grad is None:
        grad = zeros_like(x._data)
    if higher is not None:
        if is_traced(grad):
            return grad
        grad = cast_like(grad, x._data)
        return make(grad, x, tape, tape.new_leaf(shape_of(grad), str(grad.dtype), higher))
    grad = cast_like(grad, x._data)
    if isinstance(grad, np.ndarray) and not grad.flags.writeable:
        grad = grad.copy()  # a broadcast view from a reduction's rule
    return grad


def gradient(y: Any, *xs: Any, retain: bool = False, higher_derivatives: bool = False) -> Any:
    """The gradient of scalar ``y`` with respect to each of ``xs`` (like ``dlgradient``).

    Only inside ``evaluate``. Each ``x`` is a traced value of the running trace (or a
    list, tuple or dict of them: the gradients come back in the same structure), and
    each gradient is a plain array of ``x``'s shape. One ``x`` gives one gradient;
    several give a tuple. The first call releases the trace unless ``retain=True``.

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
    return _gradient(y, xs, names, retain, higher=higher_derivatives)


def _gradient(
    y: Any,
    xs: Sequence[Any],
    names: list[str],
    retain: bool,
    untraced_none: bool = False,
    higher: bool = False,
) -> Any:
    """``gradient``'s work; ``untraced_none``: a leaf of ``xs`` that is not traced (an
    integer array in a structure) gets ``None`` instead of an error; ``higher``: the
    backward pass is recorded, its gradients are traced and the trace is kept."""
    tape = active_tape()
    call = f"gradient({', '.join(names)})"
    if tape is None:
        raise messages.outside_evaluate(y._tape if is_traced(y) else None)
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

    "Extracted and continued" is a heuristic: after an ``extract_data`` of a value
    computed from ``x``, an operation on the way to ``y`` took a plain array as an
    input (the extracted data, or something computed from it, may have come back).
    Reading a value (printing, logging) then computing on with traced values only
    does not warn.
    """
    latest = max(
        (
            r.index
            for r in found.records
            if any(i.node is None and i.shape is not None and not i.origins for i in r.inputs)
        ),
        default=-1,
    )
    warned = set()
    for x, name in leaves:
        depending = backward.dependents(tape, {x._node})
        cuts = [e for e in tape.extractions if e.node in depending]
        if x._node not in found.nodes:
            unintended = [e for e in cuts if not e.intentional]
            if unintended:
                raise messages.cut_by_extraction(call, y_name, name, unintended[0])
            warn(messages.unused_variable(call, y_name, name))
            continue
        for cut in cuts:
            if not cut.intentional and cut.after < latest and id(cut) not in warned:
                warned.add(id(cut))
                warn(messages.extracted_and_continued(call, name, cut))
    if found.hidden:
        warn(messages.untraced_portion(call, y_name, found.hidden))


def _take_out(x: Any, op: str, intentional: bool) -> Any:
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
    record = tape.add_record(op, "cut", [input_info(x, tape)], [], where)
    extraction = Extraction(x._node, where, record.index, intentional)
    tape.extractions.append(extraction)
    data = _copy(x._data)
    tape.extracted[id(data)] = (data, extraction)
    return data


def extract_data(x: Any) -> Any:
    """The plain array inside a traced value (like ``extractdata``); stops the trace.

    On a value being traced, the result is a copy that the trace does not follow:
    anything computed from it gets no gradient (``gradient`` warns when that
    happens). Lists, tuples and dicts are handled element by element.

    ``traced(extract_data(y))`` inside the evaluated function starts a **new
    independent variable** on the running trace, with the value of ``y``: gradients
    with respect to it are those of what is computed from it (and, as with any
    extraction, nothing flows back through it to what ``y`` was computed from).

    >>> extract_data(traced([1.0, 2.0]))
    array([1., 2.])
    >>> def f(x):
    ...     z = traced(extract_data(x * x))  # a new variable, z = x**2
    ...     return gradient(np.sum(z * z * z), z)
    >>> evaluate(f, traced([1.0, 2.0]))  # 3 z**2
    array([ 3., 48.])
    """
    return _take_out(x, "extract_data", intentional=False)


def stop_gradient(x: Any) -> Any:
    """The data of ``x`` as a constant, on purpose: ``extract_data`` without a warning.

    >>> def f(x):
    ...     y = x * stop_gradient(x)  # d/dx treats the second factor as a constant
    ...     return gradient(y, x)
    >>> evaluate(f, traced(3.0))
    np.float64(3.0)
    """
    return _take_out(x, "stop_gradient", intentional=True)


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
    _check_call(fn, args, {})
    owner, attributes, plain_wrt = _attributes(fn, wrt)
    positions = [] if attributes and not plain_wrt else _positions(fn, len(args), plain_wrt)
    labels = _labels(fn, len(args))
    names = ["the value", *(labels[i] for i in positions), *(f"self.{a}" for a in attributes)]
    args = tuple(_traced_leaves(a) if i in positions else a for i, a in enumerate(args))
    learnables = [_traced_leaves(getattr(owner, a)) for a in attributes]
    count = len(args)

    def run(*inner: Any) -> tuple[Any, Any]:
        with _set_attributes(owner, dict(zip(attributes, inner[count:], strict=True))):
            y = fn(*inner[:count])
        variables = [inner[i] for i in positions] + list(inner[count:])
        grads = _gradient(y, variables, names, False, untraced_none=True)
        return y, grads if len(variables) > 1 else (grads,)

    value, grads = evaluate(run, *args, *learnables)
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


__all__ = [
    "Traced",
    "evaluate",
    "extract_data",
    "gradient",
    "new_variables",
    "stop_gradient",
    "value_and_gradient",
]
