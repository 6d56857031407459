"""Which names of a program hold lists, for the backward (:mod:`.reverse.adjoint`): the
gradient of a list is a list, added item by item (``add_lists``, and ``scatter`` for
a read ``ys[i]``), never with ``+``, which would join two lists. A list of lists (a
nested comprehension, ``rows.append(cols)``) holds lists: what is read from it is one.
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.front.normalize.sharing import list_holders
from autodiff_tutor.compiler.ir import Program, Step


def may_be_lists(program: Program) -> set[str]:
    """The names that hold lists: the lists built here, and what is read by ``ys[i]``
    from a list that holds lists (``rows[0]`` of ``rows.append(cols)``), or copied
    from such a name.

    >>> from autodiff_tutor.compiler.ir import Step
    >>> rows, cols = ast.Name("rows", ast.Load()), ast.Name("cols", ast.Load())
    >>> put = Step("rows_2", ast.List([cols]), "primitive", "make_list", {"xs": ast.List([cols])})
    >>> read = Step("r", ast.Subscript(rows, 0), "primitive", "getitem", {"x": rows})
    >>> rows.id = "rows_2"
    >>> program = Program("f", [], {}, [put, read], ["r"], False, list_names={"cols", "rows_2"})
    >>> sorted(may_be_lists(program))
    ['cols', 'r', 'rows_2']
    """
    lists = set(program.list_names)
    steps = program.all_steps()
    while True:
        holders = list_holders(steps, lists)
        more = {
            step.target
            for step in steps
            if (step.op == "getitem" and _named(step.inputs.get("x"), holders))
            or (step.kind in ("copy", "static") and _named(step.value, lists))
            or _keeps_lists(step, lists)
        }
        if more <= lists:
            return lists
        lists |= more


def _keeps_lists(step: Step, lists: set[str]) -> bool:
    """A step whose result is a list when what it reads is: a slice ``ys[1:]``, and in
    a generated gradient function, differentiated again, a list's entry written
    (``assign_at(ys, at[k], v)``) and the gradient of a list (``scatter`` into one,
    ``add_lists``, ``overwritten``)."""
    if step.op == "getitem":
        index = step.options.get("index")
        return isinstance(index, ast.Slice) and _named(step.inputs.get("x"), lists)
    if step.op in ("scatter", "assign_at"):
        return _named(step.inputs.get("x"), lists)
    if step.op == "overwritten":
        return _named(step.inputs.get("grad"), lists)
    if step.op == "add_lists":
        return any(_named(step.inputs.get(name), lists) for name in ("xs", "ys"))
    return False


def _named(node: ast.AST | None, names: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names
