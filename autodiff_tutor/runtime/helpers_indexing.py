"""Runtime helpers for indexing: the gradient of reading ``x[index]`` (:func:`scatter`,
:func:`add_at`, repeated integer indices accumulating) and of writing into an array
(:func:`assign_at`, :func:`overwritten`), and ``at[...]`` to write an index as code.

A write where numpy loses a value is refused, in both modes, where it runs: an index
naming one position twice, however it is spelled (numpy keeps the last value written
there), and a float written into an integer or boolean array (numpy casts it
silently). :func:`check_in_place` refuses ``y op= v`` where numpy does.

>>> import numpy as np
>>> scatter(np.ones(2), np.zeros(3), at[1:]).tolist()
[0.0, 1.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import (
    ArgumentError,
    NoDerivativeRuleError,
    UnsupportedSyntaxError,
    UserCodeError,
)
from autodiff_tutor.runtime.backend import (
    add_gradients,
    array_module,
    copy_with_layout,
    dtype_kind,
    is_float_value,
    shape_of,
    shares_memory,
    zeros_like,
)

__all__ = [
    "add_at",
    "append_to_attribute",
    "assign_at",
    "at",
    "check_in_place",
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

    The copy keeps ``x``'s memory layout, its strides too, as the write in place would:
    whether a later ``reshape`` is a view or a copy depends on it.

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
    _check_written_once(shape_of(x), index)
    _check_not_truncated(x, value)
    result = copy_with_layout(x)
    result[index] = value
    return result


def overwritten(g: Any, index: Any) -> Any:
    """``g`` with zeros where ``x[index] = ...`` overwrote ``x``: the gradient of the old ``x``.

    >>> overwritten(np.ones(3), slice(1, None)).tolist()
    [1.0, 0.0, 0.0]
    """
    return assign_at(g, index, 0)


#: The ufunc numpy runs for each augmented operator (``y += v`` is ``np.add(y, v, out=y)``).
_IN_PLACE_UFUNCS = {
    "+=": "add",
    "-=": "subtract",
    "*=": "multiply",
    "/=": "divide",
    "//=": "floor_divide",
    "%=": "remainder",
    "**=": "power",
}


def check_in_place(y: Any, operator: str, value: Any) -> None:
    """``y op= value`` on an array writes the result into ``y``'s memory (numpy's
    ``np.add(y, value, out=y)``), so the result keeps ``y``'s dtype and shape: where
    numpy refuses (a float result into an integer or boolean array, a result of
    another shape), refuse too. Numbers and numpy scalars are rebound, never updated.

    The compiled code makes a new version of ``y`` instead (``y_2 = y + value``),
    which numpy's refusal must not turn into a number.

    >>> check_in_place(np.zeros(2), "+=", np.ones(2))  # fine: nothing to say
    >>> check_in_place(np.arange(2), "+=", np.ones(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.UserCodeError: this in-place update (+=) keeps the array's dtype, ...: ...
    """
    ufunc = _IN_PLACE_UFUNCS.get(operator)
    if ufunc is None or not hasattr(y, "flags") or isinstance(y, np.generic):
        return  # a number, a numpy scalar, a list, an array library without out=
    xp = array_module(y)
    operand = value if getattr(value, "dtype", None) is None else xp.empty(0, value.dtype)
    try:
        result = getattr(xp, ufunc)(xp.empty(0, y.dtype), operand).dtype
    except TypeError:
        return  # no loop for these dtypes: numpy says so in the update itself
    if not xp.can_cast(result, y.dtype, casting="same_kind"):
        raise UserCodeError(
            f"this in-place update ({operator}) keeps the array's dtype, {y.dtype}: numpy "
            f"refuses to cast the {result} result into it (it raises UFuncTypeError)",
            hint="make the array float where it is made (np.zeros(n), not np.zeros(n, "
            f"dtype=int); np.arange(2.0)), or write y = y {operator[:-1]} ... (a new array)",
        )
    try:
        shape = np.broadcast_shapes(shape_of(y), shape_of(value))
    except ValueError:
        return  # shapes that do not broadcast: numpy says so in the update itself
    if shape != shape_of(y):
        raise UserCodeError(
            f"this in-place update ({operator}) keeps the array's shape, {shape_of(y)}: the "
            f"result has shape {shape}, which numpy refuses (a non-broadcastable output)",
            hint=f"write y = y {operator[:-1]} ... to make a new array of the broadcast shape",
        )


def _check_written_once(shape: tuple[int, ...], index: Any) -> None:
    """Writing twice to one element keeps only the last write: refuse an index that
    names a position twice, however it is spelled (see :func:`_repeats_a_position`)."""
    if _repeats_a_position(shape, index):
        raise NoDerivativeRuleError(
            "an array write with repeated indices (x[[0, 0]] = v, x[[0, -3]] = v on a "
            "length-3 x, m[[0, 0], [1, 1]] = v) writes one position twice and keeps only "
            "the last value written there, so its gradient is not supported",
            hint="write each position once; to add up the values a position gets, add "
            "them one at a time in a loop (for k in range(len(v)): y[idx[k]] += v[k]), "
            "as np.add.at and np.bincount have no derivative rule",
        )


def _repeats_a_position(shape: tuple[int, ...], index: Any) -> bool:
    """Whether ``x[index]`` (``x`` of ``shape``) selects some element twice: integer
    arrays broadcast together (with the integers and boolean masks beside them) name
    one position twice, a negative index included. Slices and masks alone never
    repeat. An index numpy would refuse is left to numpy (``False``).

    >>> _repeats_a_position((3,), [0, -3]), _repeats_a_position((3, 3), ([0, 0], [1, 2]))
    (True, False)
    >>> _repeats_a_position((3, 3), np.ix_([0, 0], [1, 2]))
    True
    """
    parts = [np.asarray(p) if isinstance(p, list) else p for p in _parts(index)]
    if not any(_kind(p) in ("i", "u") and getattr(p, "ndim", 0) > 0 for p in parts):
        return False  # basic indexing and masks select each element once
    consumed = sum(_axes_consumed(p) for p in parts if p is not Ellipsis)
    axis, positions, sizes = 0, [], []
    try:
        for part in parts:
            if part is None:
                continue
            if part is Ellipsis:
                axis += len(shape) - consumed
            elif isinstance(part, slice):
                if not range(*part.indices(shape[axis])):
                    return False  # nothing is written
                axis += 1
            elif _kind(part) == "b" or isinstance(part, bool):
                if getattr(part, "ndim", 0) == 0:
                    if not part:
                        return False  # x[False] = v writes nothing
                    continue
                if tuple(part.shape) != tuple(shape[axis : axis + part.ndim]):
                    return False  # a mask of another shape: numpy says so at the write
                positions += list(array_module(part).nonzero(part))
                sizes += shape[axis : axis + part.ndim]
                axis += part.ndim
            elif _kind(part) in ("i", "u") or isinstance(part, int):
                positions.append(part)
                sizes.append(shape[axis])
                axis += 1
            else:
                return False  # not an index numpy reads: numpy says so at the write
    except IndexError:  # more parts than axes: numpy says so at the write
        return False
    if _out_of_bounds(positions, sizes):
        return False  # numpy refuses this index at the write, with its own words
    xp = array_module(*positions)  # lists beside cupy arrays: all on the device
    try:
        flat = xp.asarray(0)
        for where, size in zip(positions, sizes, strict=True):
            flat = flat * size + xp.asarray(where) % size  # x[-3] is x[0] on a length-3 x
    except ValueError:  # shapes that do not broadcast: numpy says so at the write
        return False
    flat = xp.reshape(flat, (-1,))
    unique = getattr(xp, "unique_values", None) or xp.unique
    return int(unique(flat).shape[0]) != int(flat.shape[0])


def _out_of_bounds(positions: list[Any], sizes: list[int]) -> bool:
    """Whether an integer names no element of its axis (numpy raises at the write)."""
    for where, size in zip(positions, sizes, strict=True):
        xp = array_module(where)
        where = xp.asarray(where)
        if bool(xp.any((where < -size) | (where >= size))):
            return True
    return False


def _axes_consumed(part: Any) -> int:
    """How many axes of ``x`` an index part reads: a mask its dimensions, ``None`` none."""
    if part is None or isinstance(part, bool):
        return 0
    if _kind(part) == "b":
        return getattr(part, "ndim", 0)
    return 1


def _kind(part: Any) -> str | None:
    """numpy's kind of an index part's dtype (``None`` for a slice, ``None``, ``...``)."""
    return dtype_kind(part) if getattr(part, "dtype", None) is not None else None


def _check_not_truncated(x: Any, value: Any) -> None:
    """A float written into an integer or boolean array is cast silently (truncated,
    or made ``True``/``False``): the value loses its gradient. Refuse the write."""
    kind = dtype_kind(x)
    if kind not in ("i", "u", "b") or not _holds_float(value):
        return
    dtype = str(x.dtype)
    cast = "rounds it toward zero" if kind != "b" else "turns it into True or False"
    spelled = "bool" if kind == "b" else "int" if dtype == "int64" else f"np.{dtype}"
    raise NoDerivativeRuleError(
        f"this writes a float into an array of {dtype}, and numpy {cast} without a word: "
        "the value written loses its gradient",
        hint="make the array float where it is made (np.zeros(n), not np.zeros(n, "
        "dtype=int); np.arange(2.0); np.array([0.0, 0.0])); if the cast is meant, write "
        f"it out: v.astype({spelled}) (which carries no gradient)",
    )


def _holds_float(value: Any) -> bool:
    """Whether ``value`` (an array, a number, a list of them) is floating-point."""
    if isinstance(value, (list, tuple)):
        return any(_holds_float(item) for item in value)
    return is_float_value(value)


def _parts(index: Any) -> tuple[Any, ...]:
    return index if isinstance(index, tuple) else (index,)


def _integer_parts(index: Any) -> list[Any]:
    """The parts of ``index`` that are integer arrays or lists (which numpy reads as
    positions, repeats included)."""
    parts = index if isinstance(index, tuple) else (index,)
    return [
        p
        for p in parts
        if isinstance(p, list) or getattr(p, "dtype", None) is not None and p.dtype.kind in "iu"
    ]
