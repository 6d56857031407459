"""The backward pass over a tape: walk the records in reverse, calling each rule.

Rule records call the registry's rules (the compiler inlines the same ones), with
broadcasting undone by ``unbroadcast``; custom-op records call the op's
``op_backward`` with ``compute_gradients`` saying which inputs need a gradient.
Only records between the variables and the output are visited.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> evaluate(lambda x: gradient(np.sum(x * x), x), traced([1.0, 2.0]))
array([2., 4.])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autodiff_tutor.errors import (
    AutodiffError,
    BackwardOutputError,
    Location,
    TracingError,
    add_note,
    op_rule_error,
)
from autodiff_tutor.locations import location, raised_on_purpose
from autodiff_tutor.runtime.backend import array_module, shape_of, zeros_like
from autodiff_tutor.runtime.helpers import unbroadcast
from autodiff_tutor.tracing.array import Traced
from autodiff_tutor.tracing.higher import (
    higher_through_custom,
    higher_through_rule,
    traced_unbroadcast,
)
from autodiff_tutor.tracing.namespace import numpy_like
from autodiff_tutor.tracing.rule_parts import input_gradients
from autodiff_tutor.tracing.tape import Origin, Record, Tape


@dataclass
class CustomPayload:
    """What the backward pass of a custom-op record needs (dropped on release).

    >>> CustomPayload(op=None, saved=(), inputs=[], outputs=[]).saved
    ()
    """

    op: Any
    saved: Any
    inputs: list[Any]
    outputs: list[Any]
    called_at: Location | None = None  # the user's call of the op


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
    ``higher``, every rule runs on the traced values its record saved, so the
    backward pass is itself recorded on ``tape`` and the adjoints are traced values
    that can be differentiated again. The module docstring shows it at work through
    ``gradient``.

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
