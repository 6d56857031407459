"""Stage 6g, regions — ``while`` loops and custom-op calls in a specialized pair.

A specialized pair (:mod:`.specialize.probe`) holds for every call with the same guard
key because, in a shape-static program, every value's *fact* (shape and dtype,
:mod:`.specialize.facts`) follows from the facts of what it is computed from, and the
arguments' facts are the key. Two things break the chain; this module mends each.

**A ``while`` loop** runs a number of times that the values decide. Its
specialization is sound when the probe ran it at least once and every name bound
inside it (the names it carries from one iteration to the next, and its
temporaries) held values of one fact only, across the assignment before the loop
and every iteration (:func:`loops_settled`). Then, in any call with the same key:

- the first iteration starts from the facts the probe's first iteration started
  from (what comes before the loop is settled by the same argument, in program
  order), so every statement of the body computes the facts the probe saw;
- at the end of an iteration each carried name has the fact it had on entry (one
  fact per name), so the next iteration starts as the first did: by induction every
  iteration, whatever their number, sees the probe's facts;
- after the loop each carried name has that one fact whether the loop ran 0 or k
  times, so what follows is settled too.

A carried name takes part whatever it is called before the loop: the normalized
program copies it into the loop's own name (``y_2 = y``), which the probe records
with the iterations' values. A value that changes kind in the first iteration
(``s = 0.0`` then ``s = s + x``) has two facts: no specialization. A loop nested in
the ``while`` (a ``for``, another ``while``) binds names inside it, checked the same
way. The backward replays the loop as ``for _ in range(count)``: what it pops from
the stack are forward values (settled above), and the gradients it carries from one
replayed iteration to the next are held to the same rule. A ``break`` becomes a
flag and an ``if`` (:mod:`.front.desugar.desugar`): a branch inside a loop, which is not
specialized (:mod:`.specialize.paths`).

Facts are shapes and dtypes, not values, so the rule also needs the values that
decide shapes to be the same in every call: a slice bound, an axis, a ``range``
that a ``while`` loop changes (``i = i + 1`` then ``x[:i]``), or that a custom op
returns, would change a shape without changing any recorded fact. Such programs are
not specialized (:func:`shapes_vary`); an integer index (``x[i]``) is fine, the shape
it picks does not depend on its value.

**A custom operation** (or a nested compiled function) computes its outputs by its
own code: their shapes may depend on values. The specialized forward checks each
right after the call (``expect_array(a, (16, 16), 'float64')``,
:func:`guard_calls`), and the backward checks each gradient the op's backward
returns that later statements read (:func:`guard_gradients`; one only returned is
handed to the caller as any gradient is, and no rewrite read its fact). An output or
gradient the probe saw with two facts (a call in a loop) cannot be checked against
one: no specialization. A failed check raises
:class:`~autodiff_tutor.runtime.guards.GuardFailed`; ``value_and_grad`` then drops
the specialization for that key and runs the general pair for the call, so the op's
forward (and, when the backward's check failed, its backward) ran twice on that one
call.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(x, n):
...     i = 0
...     while i < n:
...         x = x[1:] * 2.0
...         i += 1
...     return np.sum(x[:i])
>>> shapes_vary(front_end(f).program, {"i_2": "int"})  # x[:i]: a slice's bound
True
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

import numpy as np

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.activity import closure
from autodiff_tutor.compiler.ir import Program, Step, loops_in
from autodiff_tutor.compiler.specialize.probe import value_reads

#: The guard helpers the specialized code calls (see :mod:`autodiff_tutor.runtime.guards`).
GUARD_NAMES = ("expect_array", "expect_fact", "expect_arrays")


def varying(program: Program) -> set[str]:
    """Names whose values may differ between calls with one guard key: the names a
    ``while`` loop carries, the outputs of custom operations, and every name computed
    from them.

    >>> import numpy as np
    >>> from autodiff_tutor.compiler.pipeline import front_end
    >>> def f(x):
    ...     i = 0
    ...     while np.sum(x) > 1.0:
    ...         x = x * 0.5
    ...         i = i + 1
    ...     return np.sum(x) * i
    >>> sorted(varying(front_end(f).program))
    ['i_2', 'i_3', 'out', 't1', 'x_2', 'x_3']
    """
    found = {
        name for loop in loops_in(program.steps) if loop.kind == "while" for name in loop.canonical
    }
    found |= {t for s in program.all_steps() if s.kind == "op_call" for t in s.defined()}

    def edges(step: Step) -> tuple[set[str], set[str]]:  # every step reading a varying name
        reads = value_reads(step.value) | {n for o in step.options.values() for n in value_reads(o)}
        return reads, set(step.defined())

    return closure(found, program.all_steps(), edges)


def shapes_vary(program: Program, facts: dict) -> bool:
    """Whether a varying value (:func:`varying`) may decide a shape: read for its value
    by an option (an axis, a shape, a slice's bound) or by a ``for`` loop's range. An
    index that is an integer, or an array of integers, (``x[i]``) picks elements: the
    shape follows from its own shape, a fact the probe checks like any other.

    >>> from autodiff_tutor.compiler.ir import Loop, Step
    >>> value = ast.parse("x[i]", mode="eval").body
    >>> options = {"index": ast.Name("i", ast.Load())}
    >>> loop = Loop("while", [Step("y", value, "primitive", "getitem", options=options)], ["i"])
    >>> program = Program("f", ["x"], {}, [loop], ["y"], False)
    >>> shapes_vary(program, {"i": "int"}), shapes_vary(program, {"i": "bool"})
    (False, True)
    """
    names = varying(program)
    for step in program.all_steps():
        for key, option in step.options.items():
            reads = value_reads(option) & names
            if key == "index" and step.op in ("getitem", "setitem"):
                bounds = {
                    n for s in ast.walk(option) if isinstance(s, ast.Slice) for n in value_reads(s)
                }
                reads = {n for n in reads if n in bounds or not _integer(facts.get(n))}
            if reads:
                return True
    return any(loop.iterations in names for loop in loops_in(program.steps) if loop.kind == "for")


def _integer(fact: Any) -> bool:
    """A Python ``int``, or a numpy integer scalar or array."""
    if isinstance(fact, tuple):
        return np.dtype(fact[2]).kind in "iu"
    return fact == "int"


def while_counters(program: Program) -> set[str]:
    """The names counting each ``while`` loop's iterations (the backward replays as
    many)."""
    loops = loops_in(program.steps)
    return {loop.counter for loop in loops if loop.kind == "while" and loop.counter is not None}


def loops_settled(
    forward: list[ast.stmt], backward: list[ast.stmt], counters: set[str], facts: dict
) -> bool:
    """Whether every name bound inside a ``while`` loop of the probed ``forward``, and
    inside its replay in the ``backward`` (``for _ in range(count)``), was recorded
    (the loop ran) with one fact (see the module).

    >>> tree = ast.parse("y = a\\nwhile c(y):\\n    y = y * 0.5").body
    >>> loops_settled(tree, [], set(), {"y": ("array", (3,), "float64")})
    True
    >>> loops_settled(tree, [], set(), {"y": None}), loops_settled(tree, [], set(), {})
    (False, False)
    """
    regions = [s for s in code.walk_statements(forward) if isinstance(s, ast.While)]
    regions += [s for s in code.walk_statements(backward) if _replays(s, counters)]
    for region in regions:
        for statement in code.walk_statements(region.body):
            for name in code.writes(statement):
                if facts.get(name) is None:
                    return False
    return True


def _replays(statement: ast.stmt, counters: set[str]) -> bool:
    """``for _ in range(count)``: the backward's replay of a ``while`` loop."""
    if not isinstance(statement, ast.For) or not isinstance(statement.iter, ast.Call):
        return False
    args = statement.iter.args
    return len(args) == 1 and isinstance(args[0], ast.Name) and args[0].id in counters


# -- guards ------------------------------------------------------------------------------


def guard_calls(forward: list[ast.stmt], program: Program, facts: dict) -> list[ast.stmt] | None:
    """``forward`` with a guard after each custom-op call on each output it binds
    (``None`` where an output's fact is unknown: the call never ran, or gave two).

    >>> from autodiff_tutor.compiler.ir import Step
    >>> call = ast.parse("op(x)", mode="eval").body
    >>> program = Program("f", ["x"], {}, [Step("a", call, "op_call")], ["a"], False)
    >>> tree = ast.parse("a = op(x)\\nout = a * 2").body
    >>> print(ast.unparse(guard_calls(tree, program, {"a": ("array", (2,), "float64")})))
    a = op(x)
    expect_array(a, (2,), 'float64')
    out = a * 2
    """
    outputs = [set(s.defined()) for s in program.all_steps() if s.kind == "op_call"]

    def made_by_op(statement: ast.stmt) -> list[str]:
        bound = code.writes(statement)
        if not isinstance(getattr(statement, "value", None), ast.Call):
            return []
        return sorted(next((o for o in outputs if o and o <= bound), set()))

    return _guarded(forward, made_by_op, facts)


def guard_gradients(backward: list[ast.stmt], facts: dict) -> list[ast.stmt] | None:
    """``backward`` with a guard after each custom op's ``op_backward`` call on each
    gradient it returns that another statement reads (``None`` where a fact is
    unknown)."""
    read = Counter(
        name
        for statement in code.walk_statements(backward)
        for part in code.own_parts(statement)
        for name in code.reads(part)
    )

    def returned_by_op(statement: ast.stmt) -> list[str]:
        value = getattr(statement, "value", None)
        func = value.func if isinstance(value, ast.Call) else None
        if not (isinstance(func, ast.Attribute) and func.attr == "op_backward"):
            return []
        return sorted(n for n in code.writes(statement) if n != "_" and read.get(n))

    return _guarded(backward, returned_by_op, facts)


def _guarded(statements: list[ast.stmt], names_of, facts: dict) -> list[ast.stmt] | None:
    out: list[ast.stmt] = []
    for statement in statements:
        for field in ("body", "orelse"):
            body = getattr(statement, field, None)
            if body:
                inner = _guarded(body, names_of, facts)
                if inner is None:
                    return None
                setattr(statement, field, inner)
        out.append(statement)
        for name in names_of(statement):
            fact = facts.get(name)
            if fact is None:
                return None
            out.append(guard(name, fact, code.origin_of(statement)))
    return out


def guard(name: str, fact: Any, origin: str) -> ast.stmt:
    """``expect_array(a, (16, 16), 'float64')`` (an array), else ``expect_fact(a, fact)``."""
    value = ast.Name(name, ast.Load())
    if isinstance(fact, tuple) and fact[0] == "array":
        call = code.call(GUARD_NAMES[0], value, ast.Constant(fact[1]), ast.Constant(fact[2]))
    else:
        call = code.call(GUARD_NAMES[1], value, ast.Constant(fact))
    statement = code.with_origin(
        ast.Expr(call), f"{origin}: shape checked, else the general code runs"
    )
    statement.commented = True  # shown with its comment in the forward too
    return statement
