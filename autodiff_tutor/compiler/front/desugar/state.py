"""Writes into a dict of state passed as a parameter (``bn_param["running_mean"] =
...``, as course batch-norm code keeps its running averages): the compiled forward
makes the write for its effect, as Python does, so the caller sees the entry changed;
no gradient goes through the dict (it is no output). Exact only while the function
does not read the dict after writing into it (the read would see a value whose
gradient the dict does not carry), so such a read is refused, located at the read.

>>> import ast
>>> tree = ast.parse('''
... def f(x, state):
...     state["mean"] = x * 2
...     return x * state["mean"]
... ''').body[0]
>>> refuse_reads_after_state_writes(tree)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
autodiff_tutor.compiler.front.desugar.base.DesugarError: the dict parameter 'state' is read ...
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.front.desugar.base import reject


def refuse_reads_after_state_writes(tree: ast.FunctionDef) -> None:
    """Refuse a read of a parameter after a ``param["key"] = value`` (see the module
    docstring); in a loop that writes, a read anywhere in the loop is after the write
    of the iteration before."""
    parameters = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
    _walk(tree.body, parameters, {})


def _walk(body: list[ast.stmt], parameters: set[str], written: dict[str, ast.AST]) -> None:
    for statement in body:
        if isinstance(statement, (ast.For, ast.While)):
            inner = {**written, **_writes(statement, parameters)}
            head = statement.iter if isinstance(statement, ast.For) else statement.test
            _refuse_reads(head, inner)
            _walk(statement.body, parameters, inner)
            _walk(statement.orelse, parameters, inner)
            written.update(inner)
        elif isinstance(statement, ast.If):
            _refuse_reads(statement.test, written)
            branches = dict(written), dict(written)
            _walk(statement.body, parameters, branches[0])
            _walk(statement.orelse, parameters, branches[1])
            written.update(branches[0] | branches[1])
        elif isinstance(statement, (ast.With, ast.Try)):
            _walk(getattr(statement, "body", []), parameters, written)
        else:
            write = _write(statement, parameters)
            _refuse_reads(statement.value if write else statement, written)
            if write:
                written[write] = statement


def _write(statement: ast.stmt, parameters: set[str]) -> str | None:
    """The parameter a ``param["key"] = value`` writes into, else ``None``."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target = statement.targets[0]
    if (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id in parameters
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
    ):
        return target.value.id
    return None


def _writes(loop: ast.stmt, parameters: set[str]) -> dict[str, ast.AST]:
    found: dict[str, ast.AST] = {}
    for node in ast.walk(loop):
        if isinstance(node, ast.stmt) and node is not loop:
            name = _write(node, parameters)
            if name is not None:
                found.setdefault(name, node)
    return found


def _refuse_reads(node: ast.AST, written: dict[str, ast.AST]) -> None:
    for read in ast.walk(node):
        if isinstance(read, ast.Name) and isinstance(read.ctx, ast.Load) and read.id in written:
            line = getattr(written[read.id], "lineno", "?")
            reject(
                read,
                f"the dict parameter {read.id!r} is read after this function wrote into it "
                f"(line {line}): the compiled function makes the write for its effect (the "
                "caller sees the dict changed) and sends no gradient through the dict",
                f"keep the value in a name and read that name (mean = ...; "
                f"{read.id}['...'] = mean; then use mean), or read the dict before writing",
            )
