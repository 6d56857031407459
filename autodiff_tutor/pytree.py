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

import enum
import inspect
import sys
from collections.abc import Sequence
from typing import Any

from autodiff_tutor.errors import ReferenceCycleError
from autodiff_tutor.locations import is_internal

#: ("leaf",) | ("list" | "tuple", type, children) | ("dict", keys, children)
#: | ("object", keys, children, class) | ("static", value) | ("cycle", levels, value):
#: an object met again inside itself (``self.optimizer.model``), ``levels`` up
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

    def __init__(self, obj: Any, class_values: tuple[str, ...] = ()):
        self.obj = obj
        self.class_values = class_values

    @property
    def attributes(self) -> dict[str, Any]:
        """The object's attributes: its slots (``__slots__``, a slotted dataclass), its
        ``__dict__``, then the values of its class named in ``class_values`` (read
        through the object, as ``self.W`` reads them: ``wrt="self.W"`` of a class's
        ``W``)."""
        slots = {name: getattr(self.obj, name, _UNSET) for name in _slot_names(type(self.obj))}
        found = {n: v for n, v in slots.items() if v is not _UNSET}
        found.update(getattr(self.obj, "__dict__", {}))
        for name in self.class_values:
            found.setdefault(name, getattr(self.obj, name))
        return found


#: Python's classes whose objects are the user's holders of attributes
_HOLDERS = {("types", "SimpleNamespace"), ("argparse", "Namespace")}

#: a slot never assigned (reading it raises AttributeError): not an attribute yet
_UNSET = object()


def _slot_names(cls: type) -> list[str]:
    """The names of the slots ``cls`` and its bases declare, as read on an object
    (a private ``__w`` is stored as ``_Cls__w``), bases first.

    >>> class P:
    ...     __slots__ = ("w", "__b")
    >>> _slot_names(P)
    ['w', '_P__b']
    """
    names = []
    for owner in reversed(cls.__mro__):
        declared = owner.__dict__.get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{owner.__name__.lstrip('_')}{name}"
            names.append(name)
    return list(dict.fromkeys(names))


class Cycle:
    """What the compiled code reads for an object met a second time inside itself
    through a reference cycle (``self.me.me``): the cycle is followed once
    (``self.me.W`` is ``self.W``); reading further is refused, located at the line.

    >>> Cycle("an object of Model").W
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ReferenceCycleError: this reads .W through a reference cycle ...
    """

    def __init__(self, what: str):
        self._what = what

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise ReferenceCycleError(
            f"this reads .{name} through a reference cycle twice ({self._what} holds, "
            "through its attributes, an object that holds it); the compiled code follows "
            "a cycle once (self.me.W is self.W)",
            hint="read the attribute from the object itself (self.W), or keep the "
            "back-reference out of the object (pass it as an argument)",
        )


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
    return _flatten(value, statics, False, ())


def _flatten(value: Any, statics: bool, inside_object: bool, ancestors: tuple) -> tuple:
    """``ancestors``: the ids of the objects and structures holding ``value``, the
    outermost first."""
    if isinstance(value, ObjectView):
        identity = id(value.obj)
    elif statics and is_user_object(value) and (inside_object or not is_static(value)):
        identity = id(value)  # a layer held by a model, a network passed: seen through
        value = ObjectView(value)
    elif statics and (is_static(value) or _static_inside(value)):
        return [], ("static", value)
    else:
        identity = id(value)
    if not isinstance(value, (dict, ObjectView, list, tuple)):
        return [value], ("leaf",)
    if statics and identity in ancestors:  # self.optimizer.model is self: a cycle
        held = value.obj if isinstance(value, ObjectView) else value
        return [], ("cycle", len(ancestors) - ancestors.index(identity), held)
    is_object = isinstance(value, ObjectView)
    entries = value.attributes if is_object else value
    inner_ancestors = (*ancestors, identity)
    leaves, children = [], []
    for item in entries.values() if isinstance(entries, dict) else entries:
        inner, tree = _flatten(item, statics, inside_object or is_object, inner_ancestors)
        leaves += inner
        children.append(tree)
    if is_object:
        return leaves, ("object", tuple(entries), tuple(children), type(value.obj))
    if isinstance(value, dict):
        return leaves, ("dict", tuple(entries), tuple(children))
    return leaves, ("list" if isinstance(value, list) else "tuple", type(value), tuple(children))


def _static_inside(value: Any) -> bool:
    """Values an object holds that the compiled code is specialized on, not passed:
    a class (``self.dtype = np.float64``), an enum's member (``self.mode = Mode.TRAIN``:
    a branch on it is decided while compiling, and a changed mode gets its own)."""
    return isinstance(value, (type, enum.Enum))


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
    return isinstance(value, type) and _written_by_user(value)


def _written_by_user(cls: type) -> bool:
    """Whether the class ``cls`` is defined in the user's code: not in a library the
    toolkit knows, Python's own modules (``logging``, ``enum``, ``random``) or a
    module installed as a library (its file where the compiler reads no code)."""
    module = getattr(cls, "__module__", "") or ""
    top = module.split(".")[0]
    if top in _LIBRARIES:
        return False
    filename = getattr(sys.modules.get(module), "__file__", None)
    if not filename:  # a notebook's, a doctest's; or Python's own, built in
        return top not in sys.stdlib_module_names
    return not is_internal(filename)  # (a user's test.py is theirs, not Python's test)


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

    A library's object (a ``logging.Logger``, a random generator) and an enum's member
    are values, not structures; a ``types.SimpleNamespace`` (or an ``argparse``
    namespace) is the user's holder of attributes; an object with ``__slots__`` (a
    slotted dataclass) is seen through as its slots.

    >>> import logging
    >>> import numpy as np
    >>> class Layer:
    ...     pass
    >>> Layer.__module__ = "course"  # as if written in the user's module
    >>> is_user_object(Layer()), is_user_object(np.ones(2)), is_user_object(len)
    (True, False, False)
    >>> is_user_object(logging.getLogger("train"))
    False
    """
    cls = type(value)
    if (cls.__module__, cls.__qualname__) in _HOLDERS:
        return True
    if isinstance(value, enum.Enum) or not _written_by_user(cls):
        return False
    toolkit = callable(getattr(value, "op_forward", None)) or callable(
        getattr(value, "make_op", None)
    )
    return (hasattr(value, "__dict__") or bool(_slot_names(cls))) and not toolkit


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
    if tree[0] in ("static", "cycle"):  # (a cycle's value: the object met again)
        return tree[-1] if statics else None
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
    if tree[0] in ("leaf", "static", "cycle"):
        return [name] if tree[0] == "leaf" else []
    return [
        path
        for key, child in zip(entry_keys(tree), tree[2], strict=True)
        for path in leaf_paths(f"{name}[{key!r}]", child)
    ]
