"""Shrink a failing program: drop blocks (helpers, and the changes and pieces of
state of an object or a program called across changes) while the same failure remains.

A failure is the same when the same mode fails with the same kind and the same
first words of its detail (the exception type, or "value"/"dx..." for a wrong
number). Candidates that no longer run under plain numpy are skipped (the checker
returns no outcome for them).

>>> from fuzz.generator import Program
>>> tags = [frozenset({"broadcast"}), frozenset({"if"})]
>>> p = Program(1, [], ["    a = x * 2.0\\n", "    b = a + 1.0\\n"], tags, "np.sum(b)", False)
>>> small = minimize(p, lambda q: "b = " in q.source)
>>> small.blocks, sorted(small.constructs)
(['    b = a + 1.0\\n'], ['if'])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from fuzz.check import Outcome, check_program
from fuzz.generator import Program


def signature(outcome: Outcome) -> tuple[str, str, str]:
    """What makes two failures the same: mode, kind, and the detail's first word."""
    words = outcome.detail.replace("[", " ").split()
    return outcome.mode, outcome.kind, words[0] if words else ""


def still_fails(target: Outcome) -> Callable[[Program], bool]:
    """A predicate: does a candidate program fail like ``target``?"""
    wanted = signature(target)

    def predicate(candidate: Program) -> bool:
        outcomes = check_program(candidate, modes=(target.mode,))
        return any(signature(o) == wanted for o in outcomes)

    return predicate


def minimize(program: Program, fails: Callable[[Program], bool]) -> Program:
    """The smallest program (by dropping whole blocks, helpers, and the changes and
    pieces of state of its form) that still fails."""
    current = program
    changed = True
    while changed:
        changed = False
        for candidate in _smaller(current):
            if fails(candidate):
                current, changed = candidate, True
                break
    return current


def _smaller(program: Program) -> Iterator[Program]:
    """The program less one block, one helper, one change or one piece of state."""
    for i in range(len(program.blocks)):
        yield replace(
            program,
            blocks=program.blocks[:i] + program.blocks[i + 1 :],
            tags=program.tags[:i] + program.tags[i + 1 :],
        )
    for i in range(len(program.helpers)):
        yield replace(program, helpers=program.helpers[:i] + program.helpers[i + 1 :])
    form = program.form
    if form is not None:
        yield from (replace(program, form=form.without(change=i)) for i in range(len(form.changes)))
        yield from (replace(program, form=form.without(knob=i)) for i in range(len(form.knobs)))


def simplify_result(program: Program, fails: Callable[[Program], bool]) -> Program:
    """Try shorter ``return`` expressions: each term of the sum alone."""
    for term in program.result.split(" + "):
        candidate = replace(program, result=term)
        if fails(candidate):
            return candidate
    return program
