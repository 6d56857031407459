"""Copying syntax trees without what other tools hung on them.

``ast.parse`` gives every tree it makes the same context and operator objects (one
``Load()``, one ``Add()``, one ``Or()``...). Tools that annotate trees in place set
attributes on every node they visit, these shared objects included: ``executing``
(which IPython's tracebacks use) sets ``parent``, so after one traceback in a notebook
the shared ``Load()`` points into a whole module someone else parsed. A plain
``copy.deepcopy`` of any expression then copies that module too, and compiling became
about fifty times slower. :func:`copy_tree` copies a tree but keeps the shared
objects as they are (they carry no state of their own).
"""

from __future__ import annotations

import ast
import copy
from typing import Any, TypeVar

__all__ = ["copy_tree"]

T = TypeVar("T")

# every operator and context once: the parser hands out one shared object of each
_EVERY_SHARED_NODE = """
x = a + b - c * d @ e / f % g ** h << i >> j | k ^ l & m // n
y = (a and b) or (not c, ~d, +e, -f)
z = a == b != c < d <= e > f >= g is h is not i in j not in k
del w
"""
#: the objects the parser shares between all its trees: contexts and operators
SHARED_NODES = tuple(
    {
        type(node): node
        for node in ast.walk(ast.parse(_EVERY_SHARED_NODE))
        if not node._fields and not node._attributes
    }.values()
)


def copy_tree(tree: T, keep: dict[int, Any] | None = None) -> T:
    """A deep copy of ``tree`` (a node, a list of nodes, or anything holding them)
    that shares the parser's context and operator objects; ``keep`` maps ``id(obj)`` to what to
    use for ``obj`` (``copy.deepcopy``'s memo).

    >>> tree = ast.parse("y = x + 1")
    >>> copied = copy_tree(tree)
    >>> ast.unparse(copied), copied.body[0] is tree.body[0]
    ('y = x + 1', False)
    >>> copied.body[0].value.left.ctx is tree.body[0].value.left.ctx
    True
    """
    memo = {id(node): node for node in SHARED_NODES}
    memo.update(keep or {})
    return copy.deepcopy(tree, memo)
