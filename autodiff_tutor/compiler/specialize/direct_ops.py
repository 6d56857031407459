"""Stage 6 (specialized pair), direct ops — custom ops called by their own methods.

Through the protocol (:mod:`autodiff_tutor.protocol`) every call of a custom op is
checked: ``op_forward`` binds the arguments and wraps the memory in a record,
``op_backward`` checks each gradient's shape and dtype against its input. In a pair
specialized on argument shapes (:mod:`.specialize.probe`) the probe made one such call
with the shapes every later call has, and the pair checks each output and each
gradient the op returns against what the probe saw (``expect_array``, as
:mod:`.specialize.regions` does for outputs): a mismatch runs the general pair, which makes
the checked call and reports. So the specialized pair calls ``forward`` and
``backward`` themselves (a few microseconds less per call, which is most of the
cost of a small op), with the op's memory values as named values of the pair::

    a, a_left, a_right = SRELU.forward(z, tl, al, tr, ar)
    ...
    d_z, d_tl, d_al, d_tr, d_ar = SRELU.backward(d_a, (True,) * 5, z, tl, al, tr, ar,
                                                 a_left, a_right)

Only for an op that says how (``op.direct_calls(num_inputs)``: a
:class:`~autodiff_tutor.ops.DifferentiableFunction` whose protocol methods are its
own), with two inputs or more (a one-input backward may return its gradient bare),
called outside loops, whose inputs are names bound once (or constants) and whose
every gradient has a fact from the probe. Any other call keeps the protocol.

>>> import numpy as np
>>> from autodiff_tutor.ops.srelu import SReLUFunction
>>> scope = {"op": SReLUFunction("BC")}
>>> fwd = ast.parse("(a,), a_memory = op.op_forward(x, tl, al, tr, ar)").body
>>> bwd = ast.parse("d_x, d_tl, _, _, _ = op.op_backward((d_a,), "
...                 "(True, True, False, False, False), a_memory)").body
>>> facts = {n: ("array", (1, 2), "float64") for n in ("d_x", "d_tl")}
>>> fwd, bwd, kept = direct_op_calls(fwd, bwd, ["a_memory"], scope, facts)
>>> print(ast.unparse(fwd[0]))
a, a_left, a_right = op.forward(x, tl, al, tr, ar)
>>> print(ast.unparse(bwd[0]).replace("False", "F"))
d_x, d_tl, _, _, _ = op.backward(d_a, (True, True, F, F, F), x, tl, al, tr, ar, a_left, a_right)
>>> [ast.unparse(s) for s in bwd[1:]]
["expect_arrays((d_x, d_tl), ((1, 2), (1, 2)), 'float64')"]
>>> kept
['x', 'tl', 'al', 'tr', 'ar', 'a_left', 'a_right']
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.specialize.regions import GUARD_NAMES, guard

_MEMORY = "_memory"


def direct_op_calls(
    forward: list[ast.stmt],
    backward: list[ast.stmt],
    memory: list[str],
    scope: dict[str, Any],
    facts: dict[str, Any] | None,
) -> tuple[list[ast.stmt], list[ast.stmt], list[str]]:
    """``forward``, ``backward`` and the memory names with each custom op call that
    allows it made directly (see the module docstring); the lists are new, the
    statements not rewritten are shared. ``facts=None``: no guards, for a gradient
    function differentiated again (its ops' ``forward`` and ``backward`` are inlined
    there and compiled: what they compute is what is differentiated, and a one-input
    backward's bare gradient is taken as it is)."""
    forward, backward, memory = list(forward), list(backward), list(memory)
    taken = code.names(*forward, *backward) | set(memory) | set(scope)
    for i, statement in enumerate(forward):
        call = _op_forward_call(statement)
        if call is None:
            continue
        outputs, record, func, args = call
        j = _backward_of(backward, record)
        op = code.resolve(func, scope)
        layout = getattr(op, "direct_calls", None)
        few = len(args) < 2 and facts is not None  # a bare gradient: guarded as a tuple
        if j is None or not callable(layout) or few or record not in memory:
            continue
        names = layout(len(args))
        steady = _steady_at(forward, i)
        if names is None or not all(
            isinstance(a, ast.Constant) or (isinstance(a, ast.Name) and a.id in steady)
            for a in args
        ):
            continue
        if op.save_outputs_for_backward and not set(outputs) <= steady:
            continue
        values = [code.fresh_name(f"{outputs[0]}_{n}", taken) for n in names]
        saved = [a for a in args if op.save_inputs_for_backward]
        saved += [code.name(o) for o in outputs if op.save_outputs_for_backward]
        saved += [code.name(v) for v in values]
        rewritten = _backward_call(backward[j], func, saved, facts, args)
        if rewritten is None:
            continue
        end = j + 1  # the guards on read gradients (specialize.regions): all are guarded now
        while end < len(backward) and _is_guard(backward[end]):
            end += 1
        backward[j:end] = rewritten
        target = code.targets([*outputs, *values] if len(outputs) + len(values) > 1 else outputs[0])
        direct = ast.Assign([target], code.call(ast.Attribute(func, "forward"), *args))
        if facts is None and isinstance(target, ast.Name):  # one value: not a tuple
            direct.value = code.call("checked_output", direct.value)
        forward[i] = code.with_origin(direct, code.origin_of(statement))
        at = memory.index(record)
        new = [n.id for n in saved if isinstance(n, ast.Name) and n.id not in memory]
        memory[at : at + 1] = list(dict.fromkeys(new))
    return forward, backward, memory


def _op_forward_call(statement: ast.stmt) -> tuple[list[str], str, ast.expr, list] | None:
    """``(outputs, record, func, args)`` of ``(a,), a_memory = func.op_forward(*args)``."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value = statement.targets[0], statement.value
    if not (
        isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and isinstance(target.elts[1], ast.Name)
        and target.elts[1].id.endswith(_MEMORY)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "op_forward"
        and not value.keywords
    ):
        return None
    produced = target.elts[0]
    items = produced.elts if isinstance(produced, ast.Tuple) else [produced]
    if not items or not all(isinstance(e, ast.Name) for e in items):
        return None
    return [e.id for e in items], target.elts[1].id, value.func.value, list(value.args)


def _backward_of(backward: list[ast.stmt], record: str) -> int | None:
    """The index of the one top-level statement of ``backward`` that reads ``record``,
    where it is ``... = func.op_backward(...)`` and nothing else reads it."""
    found = [i for i, s in enumerate(backward) for n in ast.walk(s) if code.is_name(n, record)]
    if len(found) != 1:
        return None
    value = getattr(backward[found[0]], "value", None)
    is_call = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
    return found[0] if is_call and value.func.attr == "op_backward" else None


def _backward_call(
    statement: ast.stmt,
    func: ast.expr,
    saved: list[ast.expr],
    facts: dict[str, Any] | None,
    inputs: list[ast.expr],
) -> list[ast.stmt] | None:
    """``func.backward(*seeds, flags, *saved)`` for ``statement``'s ``op_backward``
    call, then a guard on each gradient asked for (``None`` where a fact is unknown;
    without ``facts``, each checked against its input, as ``op_backward`` would)."""
    value = statement.value
    seeds, flags, _record = value.args
    target = statement.targets[0]
    try:
        wanted = ast.literal_eval(flags)  # the compiler's constant, or a parsed tuple
    except ValueError:
        return None
    if not (
        isinstance(seeds, ast.Tuple)
        and isinstance(target, ast.Tuple)
        and all(isinstance(e, ast.Name) for e in target.elts)
        and isinstance(wanted, tuple)
        and len(target.elts) == len(wanted)
    ):
        return None
    asked = [e.id for e, flag in zip(target.elts, wanted, strict=True) if flag is True]
    origin = code.origin_of(statement)
    call = code.call(ast.Attribute(func, "backward"), *seeds.elts, flags, *saved)
    if facts is None:
        bare = target.elts[0] if len(target.elts) == 1 else target  # one input: bare
        direct = code.with_origin(ast.Assign([bare], call), origin)
        checks = [
            code.assign(e.id, code.call("checked_gradient", code.name(e.id), x), origin)
            for e, x, flag in zip(target.elts, inputs, wanted, strict=True)
            if flag is True
        ]
        return [direct, *checks]
    if any(facts.get(name) is None for name in asked):
        return None
    direct = code.with_origin(ast.Assign([target], call), origin)
    arrays = [facts[name] for name in asked if facts[name][0] == "array"]
    if len(arrays) > 1 and len(arrays) == len(asked) and len({f[2] for f in arrays}) == 1:
        return [direct, _one_guard(asked, arrays, origin)]
    return [direct, *(guard(name, facts[name], origin) for name in asked)]


def _one_guard(names: list[str], facts: list[Any], origin: str) -> ast.stmt:
    """``expect_arrays((d_x, d_w), ((4, 3), (1, 3)), 'float64')``: several gradients of
    one dtype checked in one line."""
    shapes = ast.Tuple([ast.Constant(f[1]) for f in facts], ast.Load())
    call = code.call(GUARD_NAMES[2], code.tuple_of(names), shapes, ast.Constant(facts[0][2]))
    statement = code.with_origin(
        ast.Expr(call), f"{origin}: shapes checked, else the general code runs"
    )
    statement.commented = True
    return statement


def _steady_at(forward: list[ast.stmt], i: int) -> set[str]:
    """Names that hold, from statement ``i`` of ``forward`` to its end, the value they
    have at ``i``'s call: never bound (parameters, globals), or bound once, by a
    top-level statement up to ``i`` (the op's call binds its outputs)."""
    counts = Counter(n for s in code.walk_statements(forward) for n in code.writes(s))
    early = {  # bound by a plain statement (a loop's index changes as it runs)
        n for s in forward[: i + 1] if not isinstance(s, ast.For) for n in code.writes(s)
    }
    return {n for n in code.names(*forward) if counts[n] == 0 or (counts[n] == 1 and n in early)}


def _is_guard(statement: ast.stmt) -> bool:
    value = getattr(statement, "value", None)
    return (
        isinstance(statement, ast.Expr)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in GUARD_NAMES
    )
