"""``gradient``: the backward pass over the running trace (MATLAB's ``dlgradient``),
with the diagnosis of outputs that lost their dependence on a variable.

The backward pass walks the records in reverse: rule records call the registry's
rules (the compiler inlines the same ones), with broadcasting undone by
``unbroadcast``; custom-op records call the op's ``op_backward`` with
``compute_gradients`` saying which inputs need a gradient. Only records between the
variables and the output are visited.

A rule returns one gradient per input, but a traced call usually needs fewer (in
``x ** 2`` only ``x`` is traced). The compiler inlines each input's formula
separately; tracing does the same with small functions cut from the rule's own
source (:func:`formula_parts`): the rule's statements, then the one returned formula.
Both read the one parse of the rule's body (:mod:`autodiff_tutor.rules.formula`), so
both modes evaluate the same expression, and an unneeded formula (``log(x)`` for the
exponent of ``x ** 2`` at negative ``x``) is never computed, nor does it warn.

With ``higher_derivatives=True`` (MATLAB's ``EnableHigherDerivatives``) each rule runs
on the traced values its record saved, so the backward pass is recorded on the trace
like any other computation and its result can be differentiated again: the runtime
helpers a rule calls (``unbroadcast``, ``scatter``...) are primitives with rules of
their own, routed through tracing (:func:`traced_rule`), so each is one recorded
operation. What cannot be recorded is refused at the user's ``gradient`` call.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, traced
>>> evaluate(lambda x: gradient(x**2, x), traced(3.0))
np.float64(6.0)
"""

from __future__ import annotations

import ast
import functools
import inspect
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import (
    ArgumentError,
    AutodiffError,
    BackwardOutputError,
    TracingError,
    add_note,
    front_door,
    op_rule_error,
)
from autodiff_tutor.locations import argument_texts, here, location, raised_on_purpose, warn
from autodiff_tutor.ops.formats import labelled_like, strip_dims
from autodiff_tutor.pytree import flatten, leaf_paths, unflatten
from autodiff_tutor.rules.formula import parse
from autodiff_tutor.rules.record import Rule
from autodiff_tutor.runtime import helpers, helpers_indexing
from autodiff_tutor.runtime.backend import (
    array_module,
    cast_like,
    ones_like,
    shape_of,
    size,
    zeros_like,
)
from autodiff_tutor.runtime.helpers import unbroadcast
from autodiff_tutor.syntax import copy_tree
from autodiff_tutor.tracing import messages
from autodiff_tutor.tracing.array import Traced, numpy_like
from autodiff_tutor.tracing.messages import higher_through_custom, higher_through_rule
from autodiff_tutor.tracing.tape import Origin, Record, Tape, active_tape
from autodiff_tutor.tracing.traced_values import is_traced, make, origins_of


def _check_output(y: Any, tape: Tape, call: str, name: str) -> None:
    if not is_traced(y):
        raise messages.output_not_traced(call, name, _kind(y), tape)
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
        raise messages.variable_not_traced(call, name, _kind(x))
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
    found = ancestry(tape, y._node)
    _diagnose(tape, found, leaves, call, names[0])
    reach = dependents(tape, {x._node for x, _ in leaves})
    seed = ones_like(y._data)
    adjoints = backpropagate(tape, y._node, seed, found.records, reach, higher)
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
        depending = dependents(tape, {x._node})
        cuts = [e for e in tape.extractions if e.node in depending]
        if x._node not in found.nodes:
            unintended = [e for e in cuts if not e.intentional]
            if unintended:
                raise messages.cut_by_extraction(call, y_name, name, unintended[0])
            warn(messages.unused_variable(call, y_name, name))
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
                warn(messages.extracted_and_continued(call, name, cut))
    if found.hidden:
        warn(messages.untraced_portion(call, y_name, found.hidden))


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


@dataclass
class Ancestry:
    """What the output ``y`` was computed from, found by one reverse sweep.

    >>> Ancestry({0}, [], frozenset()).nodes
    {0}
    """

    nodes: set[int]
    records: list[Record]  # in reverse order
    hidden: frozenset[Origin]  # traced values off the trace that y depends on


def ancestry(tape: Tape, y: int) -> Ancestry:
    """The nodes and records ``y`` depends on (through differentiable operations).

    >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
    >>> _ = evaluate(lambda x, w: (x * 2, w + 1), traced(1.0), traced(2.0))
    >>> sorted(ancestry(last_tape(), 2).nodes)  # x * 2 is node 2; w is node 1
    [0, 2]
    """
    nodes, records, hidden = {y}, [], set()
    producer = tape.nodes[y].record
    if producer is not None:
        for record in reversed(tape.records[: producer + 1]):
            if record.kind == "cut" or not nodes.intersection(record.outputs):
                continue
            records.append(record)
            for info in record.inputs:
                if info.node is not None:
                    nodes.add(info.node)
                # a buffer (np.zeros made inside) is a constant, as a plain array is
                hidden.update(o for o in info.origins if o.kind != "buffer")
    return Ancestry(nodes, records, frozenset(hidden))


def dependents(tape: Tape, starts: set[int]) -> set[int]:
    """The nodes computed (through differentiable operations) from ``starts``.

    >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
    >>> _ = evaluate(lambda x, w: (x * 2, w + 1), traced(1.0), traced(2.0))
    >>> sorted(dependents(last_tape(), {1}))  # w and w + 1
    [1, 3]
    """
    reach = set(starts)
    first = min((tape.nodes[n].record or 0) for n in starts) if starts else 0
    for record in tape.records[first:]:
        if record.kind != "cut" and any(i.node in reach for i in record.inputs):
            reach.update(record.outputs)
    return reach


def _accumulate(adjoints: dict[int, Any], node: int, gradient: Any) -> None:
    previous = adjoints.get(node)
    adjoints[node] = gradient if previous is None else previous + gradient


def _checked(record: Record, gradient: Any, raw: Any) -> Any:
    if shape_of(gradient) != shape_of(raw):
        raise TracingError(
            f"the derivative rule of {record.op!r} returned a gradient of shape "
            f"{shape_of(gradient)} for an input of shape {shape_of(raw)} "
            f"(record {record.index}, {record.where})",
            hint="this is a bug in the rule registry; please report it with this example",
        )
    return gradient


def _on_trace(raw: Any, node: Any, tape: Tape) -> Any:
    """The value a record saved, as the traced value it was (its node on ``tape``), so
    that a rule computed on it is recorded too (for higher derivatives)."""
    if isinstance(node, list):
        return [_on_trace(r, n, tape) for r, n in zip(raw, node, strict=True)]
    return raw if node is None else Traced(raw, tape, node, frozenset())


def _rule_step(
    record: Record, g: Any, reach: set[int], adjoints: dict[int, Any], tape: Tape | None
) -> None:
    p = record.payload
    rule = p.rule
    if rule.list_result:  # one gradient per result: zeros for the results nobody read
        g = [zeros_like(o) if gi is None else gi for gi, o in zip(g, p.out, strict=True)]
    wanted = [
        any(m in reach for m in n) if isinstance(n, list) else (n is not None and n in reach)
        for n in p.nodes
    ]
    flat = [v for x in p.inputs for v in (x if isinstance(x, list) else [x])]
    arguments = {"g": g, "out": p.out, "xp": array_module(*flat)}
    inputs = p.inputs
    if tape is not None:  # higher derivatives: the rule runs on traced values
        inputs = [_on_trace(r, n, tape) for r, n in zip(p.inputs, p.nodes, strict=True)]
        outputs = record.outputs if rule.list_result else record.outputs[0]
        arguments["out"] = _on_trace(p.out, outputs, tape)
        arguments["xp"] = numpy_like(arguments["xp"])
    arguments.update(zip(rule.inputs, inputs, strict=True))
    arguments.update(p.options)
    grads = input_gradients(rule, arguments, wanted, traced=tape is not None)
    for node, raw, grad, want in zip(p.nodes, p.inputs, grads, wanted, strict=True):
        if not want or grad is None:
            continue  # None: an input that only gives a shape (a helper's ``x``)
        if isinstance(node, list):
            for m, r, gm in zip(node, raw, grad, strict=True):
                if m is not None and m in reach:
                    _accumulate(adjoints, m, _checked(record, gm, r))
            continue
        if rule.broadcasting:
            grad = (unbroadcast if tape is None else traced_unbroadcast)(grad, raw)
        _accumulate(adjoints, node, _checked(record, grad, raw))


def _custom_step(record: Record, gs: list[Any], reach: set[int], adjoints: dict) -> None:
    p = record.payload
    nodes = [i.node for i in record.inputs]
    flags = tuple(n is not None and n in reach for n in nodes)
    d_outputs = tuple(zeros_like(o) if g is None else g for g, o in zip(gs, p.outputs, strict=True))
    name = getattr(p.op, "name", type(p.op).__name__)
    try:
        grads = p.op.op_backward(d_outputs, flags, p.saved)
    except AutodiffError as error:  # a check of what it returned: at the op's call
        error.located_at(p.called_at)
        raise
    except Exception as error:  # the user's backward: say which call it differentiated
        if not raised_on_purpose(error):
            raise op_rule_error(error, name, "backward", p.called_at) from error
        where = p.called_at.render() if p.called_at else "?"
        add_note(error, f"raised in the backward of {name}, differentiating the call at\n{where}")
        raise
    if not isinstance(grads, (tuple, list)) or len(grads) != len(nodes):
        count = len(grads) if isinstance(grads, (tuple, list)) else "a non-tuple"
        raise BackwardOutputError(
            f"op_backward of {name!r} returned {count} gradient(s) for {len(nodes)} input(s)",
            p.called_at,
            hint="return a tuple with one gradient per input (None where not requested)",
        )
    for node, flag, grad, raw in zip(nodes, flags, grads, p.inputs, strict=True):
        if not flag:
            continue
        if grad is None or shape_of(grad) != shape_of(raw):
            got = "None" if grad is None else f"shape {shape_of(grad)}"
            raise BackwardOutputError(
                f"op_backward of {name!r} returned {got} for an input of shape "
                f"{shape_of(raw)} whose gradient was requested",
                p.called_at,
                hint="return an array of the input's shape for every requested gradient",
            )
        _accumulate(adjoints, node, grad)


def backpropagate(
    tape: Tape,
    y: int,
    seed: Any,
    records: list[Record],
    reach: set[int],
    higher: bool = False,
) -> dict:
    """Adjoints of the nodes in ``reach``, from ``seed`` at node ``y``.

    ``records`` are the records ``y`` depends on, in reverse order (see
    :func:`ancestry`); ``reach`` are the nodes that depend on the variables. With
    ``higher``, the backward pass is recorded on ``tape`` (see the module), and the
    adjoints are traced values.

    >>> backpropagate(None, 0, 1.0, [], set())  # no records: only the seed
    {0: 1.0}
    """
    adjoints: dict[int, Any] = {y: seed}
    for record in records:
        gs = [adjoints.get(o) for o in record.outputs]
        if all(g is None for g in gs) or not any(
            i.node is not None and i.node in reach for i in record.inputs
        ):
            continue
        if record.kind == "custom":
            if higher:
                raise higher_through_custom(record)
            _custom_step(record, gs, reach, adjoints)
        else:
            g = gs if record.payload.rule.list_result else gs[0]
            if not higher:
                try:
                    _rule_step(record, g, reach, adjoints, None)
                except AutodiffError as error:  # a refusal only the values show
                    if error.location is not None:
                        raise
                    message = f"{error.message} (the operation at {record.where})"
                    raise type(error)(message, location(), error.hint) from None
            else:
                try:
                    _rule_step(record, g, reach, adjoints, tape)
                except Exception as error:  # the rule's code on traced values: a refusal
                    raise higher_through_rule(record, error) from error
    return adjoints


@functools.cache
def formula_parts(
    rule_fn: Callable[..., Any], traced: bool = False
) -> tuple[Callable[..., Any], ...] | None:
    """One function per returned formula, or ``None`` when the rule cannot be cut
    (``traced``: with the helpers routed through tracing).

    >>> from autodiff_tutor.rules.registry import lookup
    >>> [part.__name__ for part in formula_parts(lookup("power").vjp)]
    ['power_part0', 'power_part1']
    """
    try:
        formula = parse(rule_fn)
    except ValueError:
        return None
    if not formula.is_tuple:
        return None
    parts = []
    for i, returned in enumerate(formula.returned):
        part = ast.FunctionDef(
            name=f"{rule_fn.__name__}_part{i}",
            args=formula.tree.args,
            body=[*formula.statements, ast.Return(returned)],
            decorator_list=[],
            returns=None,
            type_comment=None,
        )
        ast.copy_location(part, formula.tree)
        module = ast.Module([copy_tree(part)], type_ignores=[])
        ast.increment_lineno(module, formula.first_line - 1)  # tracebacks show the rule
        module = ast.fix_missing_locations(module)
        namespace: dict[str, Any] = {}
        rule_globals = traced_globals(rule_fn) if traced else inspect.unwrap(rule_fn).__globals__
        exec(compile(module, formula.filename, "exec"), rule_globals, namespace)
        parts.append(namespace[part.name])
    return tuple(parts)


def input_gradients(
    rule: Rule, arguments: dict[str, Any], wanted: Sequence[bool], traced: bool = False
) -> list[Any]:
    """The rule's gradient for each input, ``None`` where ``wanted`` is false.

    ``arguments`` binds the rule's parameters by name (``g``, ``out``, ``xp``, the
    inputs and the options). A one-input rule returns its single gradient (for a
    sequence rule: the list of per-element gradients) as the only entry. ``traced``:
    the arguments are traced values and the helpers the rule calls are recorded.

    >>> import numpy as np
    >>> from autodiff_tutor.rules.registry import lookup
    >>> input_gradients(lookup("multiply"), {"g": 1.0, "x": 2.0, "y": 3.0}, (False, True))
    [None, 2.0]
    """
    names = _parameter_names(rule.vjp)
    arguments = {k: v for k, v in arguments.items() if k in names}
    vjp = traced_rule(rule.vjp) if traced else rule.vjp
    if len(rule.inputs) == 1:
        return [vjp(**arguments) if wanted[0] else None]
    parts = formula_parts(rule.vjp, traced)
    if parts is None or len(parts) != len(rule.inputs):
        return [g if w else None for g, w in zip(vjp(**arguments), wanted, strict=True)]
    return [part(**arguments) if w else None for part, w in zip(parts, wanted, strict=True)]


@functools.cache
def _parameter_names(rule_fn: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(rule_fn).parameters)


traced_unbroadcast = numpy_like(helpers).unbroadcast  # broadcasting undone, recorded
ROUTED_MODULES = (helpers.__name__, helpers_indexing.__name__)
"""The modules whose helpers a rule run on traced values records as primitives."""


@functools.cache
def traced_globals(rule_fn: Callable[..., Any]) -> dict[str, Any]:
    """The rule's globals with the runtime helpers it calls (``unbroadcast``,
    ``scatter``...) routed through tracing, so that a rule run on traced values
    records the helpers as the primitives they are (higher derivatives)."""
    rule_globals = inspect.unwrap(rule_fn).__globals__
    routed = dict(rule_globals)
    for name, value in rule_globals.items():
        if value is helpers:
            routed[name] = numpy_like(helpers)
        elif inspect.isfunction(value) and value.__module__ in ROUTED_MODULES:
            if not _returns_a_list(value):  # a list is not one recorded value: those
                routed[name] = getattr(numpy_like(helpers), name)  # run on traced items
    return routed


def _returns_a_list(helper: Callable[..., Any]) -> bool:
    """Whether a runtime helper returns a list of arrays (``unstack``, ``split_like``).

    >>> _returns_a_list(helpers.unstack), _returns_a_list(helpers.unbroadcast)
    (True, False)
    """
    return str(inspect.signature(helper).return_annotation).startswith("list")


@functools.cache
def traced_rule(rule_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``rule_fn`` with its helpers routed through tracing (see :func:`traced_globals`).

    >>> import numpy as np
    >>> from autodiff_tutor.rules.registry import lookup
    >>> traced_rule(lookup("getitem").vjp)(g=1.0, x=np.zeros(3), index=1)  # plain: as before
    array([0., 1., 0.])
    """
    fn = inspect.unwrap(rule_fn)
    routed = types.FunctionType(
        fn.__code__, traced_globals(rule_fn), fn.__name__, fn.__defaults__, fn.__closure__
    )
    routed.__kwdefaults__ = fn.__kwdefaults__
    return routed


__all__ = ["gradient"]
