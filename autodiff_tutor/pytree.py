"""Structured arguments (pytrees): lists, tuples and dicts of arrays, nested.

``grad(f)([(W1, b1), (W2, b2)], X)`` differentiates with respect to every array in
the structure and returns the gradients in the same structure. At the API boundary
the structured argument is *flattened* into its leaves, and the compiler sees a
function with one parameter per leaf and the structure as a literal of those names
(``params = [(params_0_0, params_0_1), ...]``): reads such as ``params[0]``,
``p["W"]`` and loops such as ``for W, b in params`` are resolved while compiling
(:mod:`autodiff_tutor.compiler.s2_desugar_structures`). One compilation per structure.
This module is the structures themselves (flatten, unflatten, leaf paths);
:mod:`autodiff_tutor.structured_calls` is how a call with structures is compiled.

>>> import numpy as np
>>> from autodiff_tutor import grad
>>> def loss(params, X):
...     h = X
...     for W, b in params:
...         h = np.tanh(h @ W + b)
...     return np.sum(h)
>>> params = [(np.eye(2), np.zeros(2)), (np.eye(2), np.zeros(2))]
>>> [(dW.shape, db.shape) for dW, db in grad(loss)(params, np.zeros((1, 2)))]
[((2, 2), (2,)), ((2, 2), (2,))]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Treedef = tuple  # ("leaf",) | ("list" | "tuple", type, children) | ("dict", keys, children)


class ObjectView:
    """An object seen as the structure of its attributes (``self.W`` is ``self["W"]``);
    its gradient is a dict from attribute names to gradients. The attributes are read
    anew at every use, so a call made after ``model.W = ...`` sees the new ``W``.

    >>> class Model:
    ...     pass
    >>> model = Model()
    >>> model.W = 1.0
    >>> view = ObjectView(model)
    >>> model.W = 2.0
    >>> view.attributes
    {'W': 2.0}
    """

    def __init__(self, obj: Any):
        self.obj = obj

    @property
    def attributes(self) -> dict[str, Any]:
        return dict(vars(self.obj))


def is_structure(value: Any) -> bool:
    """Whether ``value`` is a structure of arrays (a list of plain numbers is not:
    it is converted to one array, as before).

    >>> import numpy as np
    >>> is_structure([np.ones(2)]), is_structure([1.0, 2.0]), is_structure({"a": 1.0})
    (True, False, True)
    """
    if isinstance(value, dict):
        return True
    if isinstance(value, (list, tuple)):
        return any(is_structure(v) or hasattr(v, "shape") for v in value)
    return False


def flatten(value: Any) -> tuple[list[Any], Treedef]:
    """The leaves of ``value`` in order, and its structure.

    >>> flatten({"W": 1.0, "b": [2.0, (3.0,)]})[0]
    [1.0, 2.0, 3.0]
    """
    if isinstance(value, (dict, ObjectView)):
        entries = value.attributes if isinstance(value, ObjectView) else value
        leaves, children = [], []
        for key in entries:
            inner, tree = flatten(entries[key])
            leaves += inner
            children.append(tree)
        kind = "object" if isinstance(value, ObjectView) else "dict"
        return leaves, (kind, tuple(entries), tuple(children))
    if isinstance(value, (list, tuple)):
        leaves, children = [], []
        for item in value:
            inner, tree = flatten(item)
            leaves += inner
            children.append(tree)
        kind = "list" if isinstance(value, list) else "tuple"
        return leaves, (kind, type(value), tuple(children))
    return [value], ("leaf",)


def unflatten(tree: Treedef, leaves: Sequence[Any]) -> Any:
    """The structure ``tree`` filled with ``leaves`` (the inverse of :func:`flatten`).

    >>> leaves, tree = flatten([(1.0, 2.0), {"a": 3.0}])
    >>> unflatten(tree, [10.0, 20.0, 30.0])
    [(10.0, 20.0), {'a': 30.0}]
    """
    items = iter(leaves)
    return _fill(tree, items)


def _fill(tree: Treedef, items) -> Any:
    if tree[0] == "leaf":
        return next(items)
    children = [_fill(child, items) for child in tree[2]]
    if tree[0] in ("dict", "object"):
        return dict(zip(tree[1], children, strict=True))
    kind = tree[1]
    if kind in (list, tuple):
        return kind(children)
    return kind(*children)  # a namedtuple


def entry_keys(tree: Treedef) -> Sequence[Any]:
    """The keys of a structure's entries: a dict's (or an object's) keys, a list's or
    tuple's positions.

    >>> entry_keys(flatten({"W": 1.0, "b": 2.0})[1]), entry_keys(flatten([1.0, 2.0])[1])
    (('W', 'b'), range(0, 2))
    """
    return tree[1] if tree[0] in ("dict", "object") else range(len(tree[2]))


def leaf_paths(name: str, tree: Treedef) -> list[str]:
    """How each leaf is read from the structure named ``name``, as Python code.

    >>> leaf_paths("params", flatten([(1.0, 2.0), {"W": 3.0}])[1])
    ['params[0][0]', 'params[0][1]', "params[1]['W']"]
    """
    if tree[0] == "leaf":
        return [name]
    return [
        path
        for key, child in zip(entry_keys(tree), tree[2], strict=True)
        for path in leaf_paths(f"{name}[{key!r}]", child)
    ]


def flatten_count(tree: Treedef) -> range:
    """As many items as ``tree`` has leaves."""
    if tree[0] == "leaf":
        return range(1)
    return range(sum(len(flatten_count(child)) for child in tree[2]))
