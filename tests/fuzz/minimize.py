"""Shrink a failing program: drop blocks (and helpers) while the same failure remains.

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

from collections.abc import Callable
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
    """The smallest program (by dropping whole blocks and helpers) that still fails."""
    current = program
    changed = True
    while changed:
        changed = False
        for i in range(len(current.blocks)):
            candidate = replace(
                current,
                blocks=current.blocks[:i] + current.blocks[i + 1 :],
                tags=current.tags[:i] + current.tags[i + 1 :],
            )
            if fails(candidate):
                current, changed = candidate, True
                break
        else:
            for i in range(len(current.helpers)):
                candidate = replace(current, helpers=current.helpers[:i] + current.helpers[i + 1 :])
                if fails(candidate):
                    current, changed = candidate, True
                    break
    return current


def simplify_result(program: Program, fails: Callable[[Program], bool]) -> Program:
    """Try shorter ``return`` expressions: each term of the sum alone."""
    for term in program.result.split(" + "):
        candidate = replace(program, result=term)
        if fails(candidate):
            return candidate
    return program
