"""Stage 6h, paths — a branch on values specialized on the path the probe took.

An ``if`` whose test reads values (``if np.sum(x) > 0:``) may go either way in calls
with the same argument shapes, and the probe (:mod:`.specialize.probe`) runs one path:
it knows nothing of the other arm, and the two arms may leave a name with different
shapes. The specialized pair therefore keeps *the path the probe took*: each branch
becomes a check of its test, then the arm the probe ran, as straight-line code::

    t1 = np.sum(x) > 0
    expect_path(t1, True)   # line 4: if np.sum(x) > 0:
    y = x * 2.0

Where the test goes the other way, ``expect_path`` raises
:class:`~autodiff_tutor.runtime.guards.GuardFailed` (before anything the path decides
has run), and ``value_and_grad`` drops that specialization and runs the general pair.
Sound because a call that passes every check runs exactly the probe's path, and on
one path the program is straight-line code, shape-static as any other.

Only branches outside loops are specialized so (a branch inside a loop may go one
way in one iteration and the other way in the next; such programs run the general
pair, see :func:`branches_in_loops`); a branch inside an arm is the same case again.

>>> from autodiff_tutor.compiler.pipeline import front_end
>>> import numpy as np
>>> def f(x):
...     if np.sum(x) > 0:
...         y = x * 2.0
...     else:
...         y = -x
...     return np.sum(y)
>>> program = front_end(f).program
>>> print(path_program(program, {"t1": True}).source())
def f(x):
    t1 = np.sum(x) > 0
    expect_path(t1, True)
    y = x * 2.0
    y_3 = y
    out = np.sum(y_3)
    return out
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Program, Step, regions_in

#: The helper the probe calls to record the way each branch went.
PATH_HELPER = "probe_path"


def branch_tests(program: Program) -> set[str]:
    """The names holding the tests of the program's branches."""
    return {r.test for r in regions_in(program.steps) if isinstance(r, Branch)}


def branches_in_loops(program: Program) -> bool:
    """Whether a branch sits inside a loop (its path may change from one iteration to
    the next: not specialized)."""
    loops = [r for r in regions_in(program.steps) if isinstance(r, Loop)]
    return any(isinstance(r, Branch) for loop in loops for r in regions_in(loop.body))


def probe_path(flags: dict[Any, Any], test: str, value: Any) -> None:
    """Record under ``("path", test)`` which way a branch went (``None`` once both).

    >>> flags = {}
    >>> probe_path(flags, "t1", True); flags
    {('path', 't1'): True}
    """
    taken = bool(value)
    key = ("path", test)
    flags[key] = taken if flags.get(key, taken) == taken else None


def record_paths(statements: list[ast.stmt], tests: set[str], flags: str) -> list[ast.stmt]:
    """``statements`` (in place) with ``probe_path(flags, 't1', t1)`` before each ``if``
    on one of ``tests``, at every depth.

    >>> tree = ast.parse("if t1:\\n    y = x").body
    >>> print(ast.unparse(record_paths(tree, {"t1"}, "site_flags")))
    probe_path(site_flags, 't1', t1)
    if t1:
        y = x
    """

    def recorded(statement: ast.stmt) -> list[ast.stmt]:
        test = getattr(statement, "test", None)
        if isinstance(statement, ast.If) and isinstance(test, ast.Name) and test.id in tests:
            args = [code.name(flags), ast.Constant(test.id), code.name(test.id)]
            return [ast.fix_missing_locations(ast.Expr(code.call(PATH_HELPER, *args))), statement]
        return [statement]

    return code.rewrite_blocks(statements, recorded)


def paths_of(flags: dict[Any, Any]) -> dict[str, Any]:
    """The way each branch went, by test name, from the probe's record."""
    return {
        key[1]: way for key, way in flags.items() if isinstance(key, tuple) and key[0] == "path"
    }


def path_program(program: Program, paths: dict[str, Any]) -> Program | None:
    """``program`` with each branch replaced by a check of its test and the arm of
    ``paths`` (``None`` where a branch on the path has no recorded way)."""
    used = program.defined_names()
    steps = _path(program.steps, paths, used)
    return None if steps is None else dataclasses.replace(program, steps=steps)


def _path(nodes: list[Node], paths: dict[str, Any], used: set[str]) -> list[Node] | None:
    out: list[Node] = []
    for node in nodes:
        if not isinstance(node, Branch):
            out.append(node)
            continue
        way = paths.get(node.test)
        if way is None:
            return None
        arm = _path(node.body if way else node.orelse, paths, used)
        if arm is None:
            return None
        # the arm's steps at this level: a copy back to a canonical name is a copy
        arm = [dataclasses.replace(n, copy_back=False) if isinstance(n, Step) else n for n in arm]
        out += [_check(node, way, used), *arm]
    return out


def _check(branch: Branch, way: bool, used: set[str]) -> Step:
    """``expect_path(t1, True)``: an effect step of the forward (never differentiated)."""
    target = next(f"path_{k}" for k in range(1, len(used) + 2) if f"path_{k}" not in used)
    used.add(target)
    call = code.call("expect_path", code.name(branch.test), ast.Constant(way))
    statement = ast.fix_missing_locations(ast.Expr(call))
    statement.commented = True  # shown with its comment in the forward too
    reads = ast.Tuple([code.name(branch.test)], ast.Load())
    return Step(target, reads, "effect", origin=branch.origin, statement=statement)
