"""Structured arguments (pytrees): lists, tuples and dicts of arrays, nested.

``grad(f)([(W1, b1), (W2, b2)], X)`` differentiates with respect to every array in
the structure and returns the gradients in the same structure. At the API boundary
the structured argument is *flattened* into its leaves, and the compiler sees a
function with one parameter per leaf and the structure as a literal of those names
(``params = [(params_0_0, params_0_1), ...]``): reads such as ``params[0]``,
``p["W"]`` and loops such as ``for W, b in params`` are resolved while compiling
(:mod:`.front.desugar.structures`). One compilation per structure.
This module is the structures themselves (flatten, unflatten, leaf paths);
:mod:`autodiff_tutor.api.arguments` is how a call with structures is compiled.

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

import inspect
from collections.abc import Sequence
from typing import Any

#: ("leaf",) | ("list" | "tuple", type, children) | ("dict", keys, children)
#: | ("object", keys, children, class) | ("static", value)
Treedef = tuple

#: Modules whose objects are values, never seen through as their attributes.
_LIBRARIES = ("numpy", "cupy", "scipy", "builtins", "autodiff_tutor", "functools", "torch", "jax")


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


def flatten(value: Any, statics: bool = False) -> tuple[list[Any], Treedef]:
    """The leaves of ``value`` in order, and its structure.

    ``statics``: as the compiler specializes on a call (:mod:`.api.arguments`): a
    function, method, partial or callable object is a static part of the structure
    (no leaf: its identity is part of the structure), and an object of the user's
    among an object's attributes is seen through as its attributes too.

    >>> flatten({"W": 1.0, "b": [2.0, (3.0,)]})[0]
    [1.0, 2.0, 3.0]
    >>> import numpy as np
    >>> flatten({"W": 1.0, "act": np.tanh}, statics=True)[1][2]
    (('leaf',), ('static', <ufunc 'tanh'>))
    """
    return _flatten(value, statics, False, set())


def _flatten(value: Any, statics: bool, inside_object: bool, seen: set[int]) -> tuple:
    if (
        statics
        and (inside_object or not is_static(value))
        and is_user_object(value)
        and id(value) not in seen
    ):  # a layer held by a model, a network passed: its arrays are leaves too
        value = ObjectView(value)
    elif statics and is_static(value):
        return [], ("static", value)
    if not isinstance(value, (dict, ObjectView, list, tuple)):
        return [value], ("leaf",)
    is_object = isinstance(value, ObjectView)
    entries = value.attributes if is_object else value
    seen = seen | {id(value.obj)} if is_object else seen
    leaves, children = [], []
    for item in entries.values() if isinstance(entries, dict) else entries:
        inner, tree = _flatten(item, statics, inside_object or is_object, seen)
        leaves += inner
        children.append(tree)
    if is_object:
        return leaves, ("object", tuple(entries), tuple(children), type(value.obj))
    if isinstance(value, dict):
        return leaves, ("dict", tuple(entries), tuple(children))
    return leaves, ("list" if isinstance(value, list) else "tuple", type(value), tuple(children))


def is_static(value: Any) -> bool:
    """Whether the compiler specializes on ``value`` rather than passing it: a function,
    method, ``functools.partial`` or callable object (not an array, a structure, a
    class).

    >>> import numpy as np
    >>> is_static(np.tanh), is_static(lambda z: z), is_static(np.ones(2)), is_static(float)
    (True, True, False, False)
    >>> is_static(np)  # a module held by an object (xp = self.xp)
    True
    """
    if inspect.ismodule(value) or is_user_class(value):
        return True  # xp = self.xp, self.cost.fn(a, y): resolved while compiling
    return (
        callable(value)
        and not isinstance(value, (type, dict, list, tuple, ObjectView))
        and not hasattr(value, "shape")
    )


def is_user_class(value: Any) -> bool:
    """A class of the user's (a cost class whose static methods a network calls).

    >>> class Cost:
    ...     pass
    >>> Cost.__module__ = "course"
    >>> is_user_class(Cost), is_user_class(float)
    (True, False)
    """
    module = getattr(value, "__module__", "") or ""
    return isinstance(value, type) and module.split(".")[0] not in _LIBRARIES


def holds_user_object(value: Any) -> bool:
    """Whether ``value`` is an object of the user's, or a list, tuple or dict holding
    one: the compiler specializes on its class and reads its attributes as leaves.

    >>> class Layer:
    ...     pass
    >>> Layer.__module__ = "course"
    >>> holds_user_object([Layer()]), holds_user_object([1.0]), holds_user_object({"a": 1})
    (True, False, False)
    """
    if isinstance(value, (list, tuple)):
        return any(holds_user_object(v) for v in value)
    if isinstance(value, dict):
        return any(holds_user_object(v) for v in value.values())
    return is_user_object(value)


def is_user_object(value: Any) -> bool:
    """An instance of a class of the user's (a layer held by a model), not a library's
    (nor a compiled function or a custom op, which are the toolkit's).

    >>> import numpy as np
    >>> class Layer:
    ...     pass
    >>> Layer.__module__ = "course"  # as if written in the user's module
    >>> is_user_object(Layer()), is_user_object(np.ones(2)), is_user_object(len)
    (True, False, False)
    """
    module = getattr(type(value), "__module__", "") or ""
    toolkit = callable(getattr(value, "op_forward", None)) or callable(
        getattr(value, "make_op", None)
    )
    return hasattr(value, "__dict__") and module.split(".")[0] not in _LIBRARIES and not toolkit


def unflatten(tree: Treedef, leaves: Sequence[Any], statics: bool = True) -> Any:
    """The structure ``tree`` filled with ``leaves`` (the inverse of :func:`flatten`);
    its static parts are their values, or ``None`` where ``statics`` is false (in a
    structure of gradients).

    >>> leaves, tree = flatten([(1.0, 2.0), {"a": 3.0}])
    >>> unflatten(tree, [10.0, 20.0, 30.0])
    [(10.0, 20.0), {'a': 30.0}]
    """
    return _fill(tree, iter(leaves), statics)


def _fill(tree: Treedef, items, statics: bool) -> Any:
    if tree[0] == "leaf":
        return next(items)
    if tree[0] == "static":
        return tree[1] if statics else None
    children = [_fill(child, items, statics) for child in tree[2]]
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
    if tree[0] in ("leaf", "static"):
        return [name] if tree[0] == "leaf" else []
    return [
        path
        for key, child in zip(entry_keys(tree), tree[2], strict=True)
        for path in leaf_paths(f"{name}[{key!r}]", child)
    ]
