"""What the indexed loop (``for k in range(len(X)): v = X[k]``, :mod:`.front.desugar.desugar`)
reads of a loop's sequence, made to mean what Python's loop means: Python reads the
sequence once, before the loop, and iterates over it; the indexed loop reads ``X[k]``
at each step. So a sequence whose name the body assigns is held in a fresh name
first (:func:`hold_rebound`), and a dict view is held in a list (:func:`gives_view`).
The indexed loop's ``indexed_len(X)`` (a runtime helper) checks that ``X`` has
positions: a dict would give its values where Python's loop gives its keys.

>>> import ast
>>> from autodiff_tutor.compiler.code import Names
>>> loop = ast.parse("for v in x:\\n    x = x * 2").body[0]
>>> print(ast.unparse(hold_rebound(loop, Names(loop))[0]), "|", ast.unparse(loop.iter))
sequence_1 = x | sequence_1
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from autodiff_tutor.compiler.code import Names
from autodiff_tutor.compiler.front.desugar.base import assign_like, name_node
from autodiff_tutor.syntax import copy_tree


def hold_rebound(loop: ast.For, names: Names) -> list[ast.stmt]:
    """Python reads a loop's sequence once, before the loop; the indexed loop reads
    ``X[k]`` at each step. When the body assigns the name the sequence is read from
    (``for v in x: x = x * 2``), the sequence is held in a fresh name first (and the
    loop reads that): the assignments, ``[held = x]``.

    >>> from autodiff_tutor.compiler.code import Names
    >>> loop = ast.parse("for v in xs:\\n    ys = xs").body[0]  # xs is not assigned
    >>> hold_rebound(loop, Names(loop))
    []
    """
    rebound = {
        target.id
        for statement in loop.body
        for node in _walk_here(statement)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.For, ast.NamedExpr))
        for target_node in (node.targets if isinstance(node, ast.Assign) else [node.target])
        for target in ast.walk(target_node)
        if isinstance(target, ast.Name)
    }
    out = []
    for sequence in indexed_sequences(loop.iter):
        root = sequence
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if isinstance(root, ast.Name) and root.id in rebound:
            held = names.fresh("sequence")
            out.append(assign_like(held, copy_tree(sequence), loop))
            loop.iter = _replace_node(loop.iter, sequence, name_node(held))
    return out


def _walk_here(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` that does not enter functions defined inside (their own scope)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.Lambda)):
            yield from _walk_here(child)


def _replace_node(tree: ast.expr, old: ast.expr, new: ast.expr) -> ast.expr:
    if tree is old:
        return new
    for field, value in ast.iter_fields(tree):
        if isinstance(value, list):
            setattr(tree, field, [_replace_node(v, old, new) if isinstance(v, ast.expr) else v
                                  for v in value])  # fmt: skip
        elif isinstance(value, ast.expr):
            setattr(tree, field, _replace_node(value, old, new))
    return tree


def indexed_sequences(iterable: ast.expr) -> list[ast.expr]:
    """The sequences, given by name, that the indexed loop over ``iterable`` reads by
    position: ``X`` of ``for v in X``, of ``zip(X, Y)``, ``enumerate(X)``,
    ``reversed(X)``.

    >>> call = ast.parse("zip(a, b[1:], [1, 2])").body[0].value
    >>> [ast.unparse(s) for s in indexed_sequences(call)]
    ['a', 'b[1:]']
    """
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
        if iterable.func.id in ("zip", "enumerate", "reversed"):
            inner = iterable.args[:1] if iterable.func.id == "enumerate" else iterable.args
            return [s for a in inner for s in indexed_sequences(a)]
        return []
    return [iterable] if isinstance(iterable, (ast.Name, ast.Attribute, ast.Subscript)) else []


def gives_view(call: ast.expr) -> bool:
    """Whether the loop's ``call`` gives a dict view (``d.items()``, ``d.keys()``,
    ``d.values()``), which the indexed loop cannot index (iterators of functions known
    while compiling, ``itertools.combinations(...)``, became lists in
    :mod:`.front.desugar.python`).

    >>> [gives_view(ast.parse(c).body[0].value) for c in ("d.items()", "sorted(k)")]
    [True, False]
    """
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("items", "keys", "values")
        and not call.args
    )
