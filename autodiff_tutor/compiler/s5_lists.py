"""Which names of a program hold lists, for the backward (:mod:`.s5_adjoint`): the
gradient of a list is a list, added item by item (``add_lists``, and ``scatter`` for
a read ``ys[i]``), never with ``+``, which would join two lists. A list of lists (a
nested comprehension, ``rows.append(cols)``) holds lists: what is read from it is one.
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.ir import Program


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
    lists, holders = set(program.list_names), set()
    steps = program.all_steps()
    changed = True
    while changed:
        size = len(lists) + len(holders)
        for step in steps:
            inputs = step.inputs
            xs = inputs.get("xs")
            if step.op in ("list_append", "list_setitem"):  # ys + [item]: a list item?
                if _named(inputs.get("x"), lists) or _named(xs, holders):
                    holders.add(step.target)
            elif step.op == "make_list":  # [a, cols] or list(ys)
                elements = xs.elts if isinstance(xs, (ast.List, ast.Tuple)) else []
                if any(_named(e, lists) for e in elements) or _named(xs, holders):
                    holders.add(step.target)
            source = step.value if isinstance(step.value, ast.Name) else None
            if step.op == "getitem" and isinstance(inputs.get("x"), ast.Name):
                if inputs["x"].id in holders:
                    lists.add(step.target)
            elif source is not None and step.kind in ("copy", "static"):
                if source.id in lists:
                    lists.add(step.target)
                if source.id in holders:
                    holders.add(step.target)
        changed = len(lists) + len(holders) != size
    return lists


def _named(node: ast.expr | None, names: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names
