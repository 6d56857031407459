"""Runtime helpers for indexing: the gradient of reading ``x[index]`` (:func:`scatter`,
:func:`add_at`, repeated integer indices accumulating) and of writing into an array
(:func:`assign_at`, :func:`overwritten`), and ``at[...]`` to write an index as code.

>>> import numpy as np
>>> scatter(np.ones(2), np.zeros(3), at[1:]).tolist()
[0.0, 1.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import ArgumentError, NoDerivativeRuleError, UnsupportedSyntaxError
from autodiff_tutor.runtime.backend import (
    add_gradients,
    array_module,
    shape_of,
    shares_memory,
    zeros_like,
)

__all__ = [
    "add_at",
    "append_to_attribute",
    "assign_at",
    "at",
    "entry_alone",
    "indexed_len",
    "overwritten",
    "scatter",
    "store_attribute",
    "store_entry",
]


class _IndexBuilder:
    """``at[1:, 2]`` evaluates to the index ``(slice(1, None), 2)``."""

    def __getitem__(self, index: Any) -> Any:
        return index

    def __repr__(self) -> str:
        return "at"


at = _IndexBuilder()


def entry_alone(items: list, index: int, name: str = "items", what: str = "") -> None:
    """Refuse ``what`` (``rows[k] += v``, checked by the compiled forward before the
    write) where another item of the list ``items`` (the user's ``name``) shares memory
    with ``items[index]``: numpy's in-place write changes that item too, and the
    compiled list keeps it as it was.

    >>> t = np.zeros((2, 3))
    >>> entry_alone([t[0], t[1], 2.0], 1)  # rows that do not overlap: fine
    >>> try:
    ...     entry_alone([t, t[1]], 1, "rows", "rows[1] += ...")
    ... except UnsupportedSyntaxError as error:
    ...     print(error.message.split(":")[0])
    'rows[1] += ...' changes in place an array that another item of the list shares
    """
    entry = items[index]
    here = index % len(items)
    others = [item for position, item in enumerate(items) if position != here]
    while others:
        other = others.pop()
        if isinstance(other, (list, tuple)):  # a list inside the list: its items
            others.extend(other)
        elif shares_memory(other, entry):
            raise UnsupportedSyntaxError(
                f"'{what or name + '[...] += ...'}' changes in place an array that another "
                "item of "
                "the list shares: numpy changes both, and the compiled list follows the "
                "item written only",
                hint=f"if the other items should keep their values, put copies in the list "
                f"before the write ({name} = [item.copy() for item in {name}]); if they "
                "should see it, write into the array they share by its own name before "
                "the list is made",
            )


def store_entry(state: Any, key: str, value: Any) -> None:
    """``state[key] = value``, run by the compiled forward for its effect: a write into
    a dict of state that gets no gradient (``bn_param["running_mean"] = ...``), which
    the caller sees, as in Python.

    >>> state = {"running_mean": 0.0}
    >>> store_entry(state, "running_mean", 0.5)
    >>> state
    {'running_mean': 0.5}
    """
    state[key] = value


def store_attribute(obj: Any, name: str, value: Any, augmented: bool = False) -> None:
    """``obj.name = value``, run by the compiled forward for its effect: a write into
    an attribute of the method's object that gets no gradient (``self.nfev += 1``),
    which the caller sees, as in Python. ``augmented``: the write was ``obj.name +=
    v``, which Python makes in place when the attribute holds an array; the compiled
    code computed a new array (the one it had read may be kept for the backward), so
    that case is refused.

    >>> class Counter:
    ...     nfev = 0
    >>> counter = Counter()
    >>> store_attribute(counter, "nfev", counter.nfev + 1, augmented=True)
    >>> counter.nfev
    1
    """
    old = getattr(obj, name, None)
    if augmented and hasattr(old, "shape") and hasattr(old, "__setitem__"):
        raise ArgumentError(
            f"{type(obj).__name__}.{name} holds an array, and '+=' (or another augmented "
            "assignment) on it would change that array in place, which the compiled code "
            "does not do (the array it read may be kept for the backward)",
            hint=f"write self.{name} = self.{name} + ... (a new array)",
        )
    setattr(obj, name, value)


def append_to_attribute(obj: Any, name: str, value: Any) -> None:
    """``obj.name.append(value)``, run by the compiled forward for its effect.

    >>> class Model:
    ...     history = []
    >>> model = Model()
    >>> append_to_attribute(model, "history", 3)
    >>> model.history
    [3]
    """
    getattr(obj, name).append(value)


def indexed_len(sequence: Any) -> int:
    """``len(sequence)`` for a loop the compiled code runs by position
    (``for v in xs`` reads ``xs[0], xs[1], ...``); :class:`ArgumentError` for what has
    no positions, where reading by position would give other values than Python's
    loop: a dict (whose loop gives its keys), a set, an iterator.

    >>> indexed_len([4.0, 5.0])
    2
    >>> indexed_len({1: 10.0, 0: 20.0})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ArgumentError: the compiled loop reads its sequence by position ...
    """
    if hasattr(sequence, "keys") or not hasattr(sequence, "__getitem__"):
        kind = type(sequence).__name__
        raise ArgumentError(
            f"the compiled loop reads its sequence by position (xs[0], xs[1], ...), and "
            f"this one is a {kind}, which has no positions (a dict's loop gives its keys)",
            hint="loop over list(xs) (a dict's keys, a set's items) or xs.items()",
        )
    return len(sequence)


def scatter(g: Any, x: Any, index: Any) -> Any:
    """Zeros shaped like ``x`` with ``g`` added at ``x[index]``: the gradient of reading.

    Repeated integer indices accumulate, as the chain rule requires.

    >>> scatter(np.ones(2), np.zeros(3), np.array([0, 0])).tolist()
    [2.0, 0.0, 0.0]
    """
    if isinstance(x, (list, tuple)):  # an item of a list (or of a tuple of results)
        result = [zeros_like(item) for item in x]
        if isinstance(index, slice):  # ys[1:]: g is the list of its items' gradients
            for k, item in zip(range(len(x))[index], g, strict=True):
                result[k] = add_gradients(result[k], item)
        else:  # a list in a list: its gradient is added item by item, not joined
            result[index] = add_gradients(result[index], g)
        return result
    xp = array_module(g, x)
    result = xp.zeros(shape_of(x), dtype=x.dtype)
    if _integer_parts(index):
        add_at(result, index, g)
    else:
        result[index] = result[index] + g
    return result


def add_at(buffer: Any, index: Any, g: Any) -> None:
    """``buffer[index] += g`` in place, repeated integer indices counted each time.

    >>> d = np.zeros(3)
    >>> add_at(d, np.array([0, 0, 2]), np.ones(3))
    >>> d.tolist()
    [2.0, 0.0, 1.0]
    """
    if _integer_parts(index):
        xp = array_module(buffer)
        if xp is np:
            np.add.at(buffer, index, g)
        else:
            import cupyx  # an integer index on cupy: scatter_add accumulates repeats

            cupyx.scatter_add(buffer, index, g)
    else:
        buffer[index] += g


def assign_at(x: Any, index: Any, value: Any) -> Any:
    """A copy of ``x`` with ``x[index] = value``: array writes, without side effects.

    The copy keeps ``x``'s memory layout, as the write in place would: whether a later
    ``reshape`` is a view or a copy depends on it.

    A Python list made in the function (``params = [W, b]; params[0] = v``) is copied
    as a list, its item replaced.

    >>> assign_at(np.zeros(3), 1, 5.0).tolist()
    [0.0, 5.0, 0.0]
    >>> assign_at([1.0, 2.0], 0, 5.0)
    [5.0, 2.0]
    """
    if isinstance(x, list):
        result = list(x)
        result[index] = value
        return result
    _check_distinct(index)
    if hasattr(x, "flags"):  # numpy, cupy
        result = x.copy(order="K")
    else:  # the array API has no .copy()
        result = array_module(x).asarray(x, copy=True)
    result[index] = value
    return result


def overwritten(g: Any, index: Any) -> Any:
    """``g`` with zeros where ``x[index] = ...`` overwrote ``x``: the gradient of the old ``x``.

    >>> overwritten(np.ones(3), slice(1, None)).tolist()
    [1.0, 0.0, 0.0]
    """
    return assign_at(g, index, 0)


def _check_distinct(index: Any) -> None:
    """Writing twice to one element keeps only the last write: refuse that index."""
    arrays = [np.asarray(p) for p in _integer_parts(index)]
    if len(arrays) == 1 and len(np.unique(arrays[0])) != arrays[0].size:
        raise NoDerivativeRuleError(
            "an array write with repeated indices (x[[0, 0]] = v) keeps only the last value "
            "written, so its gradient is not supported",
            hint="write each element once, or add the values first (np.add.at is not "
            "differentiable either: sum them with np.bincount or a loop)",
        )


def _integer_parts(index: Any) -> list[Any]:
    """The parts of ``index`` that are integer arrays or lists (which numpy reads as
    positions, repeats included)."""
    parts = index if isinstance(index, tuple) else (index,)
    return [
        p
        for p in parts
        if isinstance(p, list) or getattr(p, "dtype", None) is not None and p.dtype.kind in "iu"
    ]
