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

from autodiff_tutor.compiler import code
from autodiff_tutor.rules.registry import views

#: Calls that may return their argument or a view of it: the primitives whose rule says
#: so, the runtime's reductions undone, and ``asarray``.
VIEW_CALLS = views("view", "reshape", "read") | {"unbroadcast", "unreduce", "asarray"}


def owned_before_updates(statements: list[ast.stmt], facts: dict | None = None) -> list[ast.stmt]:
    """``statements`` (changed in place) with a ``.copy()`` on each assignment of a
    name that is updated in place somewhere (``d += e``, ``d[i] = e``) whose value
    may be another array. A name the probe saw holding numbers (``facts``, see
    :mod:`.specialize.facts`) needs none: ``+=`` on a number makes a new one."""
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


def not_made_here(
    statements: list[ast.stmt], gradients: list[str], facts: dict, scope: dict | None = None
) -> tuple[int, ...]:
    """The positions of the returned gradients the backward does not itself make as
    new arrays, which the caller checks are fresh (their own, writable, not an argument,
    not another gradient). A gradient is made here when it is returned once, an array by
    the probe's facts, bound only by arithmetic or a matrix product (``a * b``, ``-a``,
    ``X.T @ g``), a reduction along an axis (``g.sum(axis=0)``), ``zeros_like(x)`` or
    the backward of a custom op in ``scope`` that promises new arrays
    (``returns_new_arrays``, as SReLU does), and otherwise only updated in place
    (``d += e``, ``d[i] = e``). A gradient returned by another op's backward, a name
    copied, a view: not made here.

    >>> tree = ast.parse("d_x = zeros_like(x)\\nd_x[1:] += g\\nd_w = X.T @ g").body
    >>> facts = {"d_x": ("array", (3,), "float64"), "d_w": ("array", (2,), "float64")}
    >>> not_made_here(tree, ["d_x", "d_w"], facts)
    ()
    >>> not_made_here(tree + ast.parse("d_w = d_x").body, ["d_x", "d_w"], facts)
    (1,)
    """
    return tuple(
        position
        for position, name in enumerate(gradients)
        if gradients.count(name) > 1 or not _made_here(statements, name, facts, scope or {})
    )


def _made_here(statements: list[ast.stmt], name: str, facts: dict, scope: dict) -> bool:
    fact = facts.get(name)
    if not (isinstance(fact, tuple) and fact[0] == "array"):
        return False
    for statement in code.walk_statements(statements):
        if isinstance(statement, ast.For) and code.mentions(statement.target, name):
            return False  # a loop's target: whatever the loop walks
        if isinstance(statement, ast.Assign) and _binds(statement, name):
            if len(statement.targets) != 1:
                return False
            if not (_makes_array(statement.value) or _new_from_op(statement.value, scope)):
                return False
    return True


def _new_from_op(value: ast.expr, scope: dict) -> bool:
    """``op.backward(...)`` of an op that promises new arrays (``returns_new_arrays``,
    set by the class whose ``backward`` runs: ``op.promises_new_arrays()``)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    op = value.func.value
    if value.func.attr != "backward" or not isinstance(op, ast.Name) or op.id not in scope:
        return False
    promises = getattr(scope[op.id], "promises_new_arrays", None)
    return callable(promises) and promises() is True


def _binds(statement: ast.Assign, name: str) -> bool:
    """``name = ...`` (in a tuple too); not ``name[i] = ...`` (an update in place)."""
    for target in statement.targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and node.id == name and isinstance(target, ast.Name):
                return True
            if isinstance(target, ast.Tuple) and isinstance(node, ast.Name) and node.id == name:
                return True
    return False


def _makes_array(value: ast.expr) -> bool:
    if isinstance(value, ast.BinOp) or (
        isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub)
    ):
        return True
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Name):
        return value.func.id == "zeros_like"
    reduction = isinstance(value.func, ast.Attribute) and value.func.attr == "sum"
    return reduction and any(k.arg == "axis" for k in value.keywords)
