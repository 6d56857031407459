"""Stage 6 (specialized backward): a gradient updated in place owns its array.

The adjoint writes a gradient's second contribution as a new array (``d = d + e``)
before later ones add into it in place (``d += e``), so the array is the gradient's
own. Simplification can fold that new array away: ``0.5 * v * 2`` is ``v``, and
``d_v = v`` then ``d_v += e`` would change ``v`` itself, a value the backward still
reads. Here every assignment of such a gradient whose value may be another array
(a name, an attribute such as ``.T``, an index, a view-making call) copies it.

>>> import ast
>>> tree = ast.parse("d_v = v\\nfor i in r:\\n    d_v += g * v").body
>>> print(ast.unparse(owned_before_updates(tree)))
d_v = v.copy()
for i in r:
    d_v += g * v
"""

from __future__ import annotations

import ast

#: Calls that may return their argument or a view of it.
VIEW_CALLS = {
    "reshape",
    "transpose",
    "swapaxes",
    "moveaxis",
    "squeeze",
    "expand_dims",
    "ravel",
    "broadcast_to",
    "unbroadcast",
    "unreduce",
    "diagonal",
    "asarray",
}


def owned_before_updates(statements: list[ast.stmt], facts: dict | None = None) -> list[ast.stmt]:
    """``statements`` (changed in place) with a ``.copy()`` on each assignment of a
    name that is updated in place somewhere (``d += e``, ``d[i] = e``) whose value
    may be another array. A name the probe saw holding numbers (``facts``, see
    :mod:`.s6_facts`) needs none: ``+=`` on a number makes a new one."""
    facts = facts or {}
    updated = {n for n in _updated_in_place(statements) if not _number(facts.get(n))}
    for node in ast.walk(ast.Module(statements, [])):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in updated
            and _may_be_another_array(node.value)
        ):
            node.value = ast.Call(ast.Attribute(node.value, "copy", ast.Load()), [], [])
    return statements


def _updated_in_place(statements: list[ast.stmt]) -> set[str]:
    names = set()
    for node in ast.walk(ast.Module(statements, [])):
        targets = []
        if isinstance(node, ast.AugAssign):
            targets = [node.target]
        elif isinstance(node, ast.Assign):
            targets = [t for t in node.targets if isinstance(t, ast.Subscript)]
        for target in targets:
            while isinstance(target, ast.Subscript):
                target = target.value
            if isinstance(target, ast.Name):
                names.add(target.id)
    return names


def _number(fact: object) -> bool:
    return fact in ("float", "int", "bool", "complex") or (
        isinstance(fact, tuple) and fact[0] == "scalar"
    )


def _may_be_another_array(value: ast.expr) -> bool:
    if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in VIEW_CALLS
    return False
