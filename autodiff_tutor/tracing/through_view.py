"""Writes *through* a view that tracing made: the array it was taken from sees them.

``v = t.T; v[0] = 1`` (or ``v *= 2``) changes ``t`` in numpy. Tracing records the
write on ``v`` (a new value for ``v``), then puts that value back into ``t``: which
element of ``t`` each element of ``v`` is, is read from memory (``t``'s elements are
numbered in place for a moment, and ``v`` shows their numbers), and
``t = assign_at(t, positions, v)`` is recorded, so the gradient flows through it.
Then ``t``'s views are rebuilt from it, as after any update of ``t``
(:func:`~autodiff_tutor.tracing.operators.update`).

A write through memory that tracing did not see shared (a view made outside the
trace, or through numpy functions it does not know) stays refused, and so does a write
through a view of an array whose library cannot write at positions
(``array_api_strict``, which has no integer-array writes: :func:`puts_back`); writes
into the array a view was taken from are followed there too (its views are rebuilt).

>>> import numpy as np
>>> positions(np.zeros((2, 3)).T[1], np.zeros((2, 3)))  # unrelated arrays
>>> base = np.zeros((2, 3))
>>> positions(base.T[1], base).tolist()
[1, 4]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.runtime.helpers import assign_at
from autodiff_tutor.tracing import dispatch
from autodiff_tutor.tracing.value import TracedValue, base_of, views_of


def follows(view: TracedValue, sharers: list[TracedValue]) -> bool:
    """Whether a write through ``view`` can be put back: ``view`` is a view tracing
    made, and every traced array sharing its memory is its root or a view of it.

    >>> from autodiff_tutor.tracing.value import note_view
    >>> base = TracedValue(np.zeros((2, 3)))
    >>> view = note_view(TracedValue(base._data.T), base, lambda b: b)
    >>> stranger = TracedValue(base._data[0])  # shares memory, not made by tracing
    >>> follows(view, [base]), follows(view, [base, stranger])
    (True, False)
    """
    if base_of(view) is None:
        return False
    root = view
    while base_of(root) is not None:
        root = base_of(root)
    family = [root, *(v for _, v in views_of(root))]
    return all(any(s is f for f in family) for s in sharers)


def put_back(view: TracedValue, result: TracedValue, update: Any) -> bool:
    """``view`` takes ``result``'s value, written into the array it is a view of (and so
    on up to the root, whose views are then rebuilt by ``update``). Returns ``False``
    when the positions cannot be read (the caller refuses the write)."""
    parent = base_of(view)
    where = positions(view._data, parent._data)
    if where is None:
        return False
    # each element of view, as an index into parent: assign_at then keeps parent's
    # memory layout, as numpy's write does (a later reshape is a view or a copy by it)
    index = tuple(array_module(where).unravel_index(where, parent.shape))
    raw_parent, raw_value = parent._data, result._data

    def forward() -> Any:
        return assign_at(raw_parent, index, raw_value)

    new_parent = dispatch.apply("assign_at", "y[...] = ...", forward, [parent, index, result], {})
    if base_of(parent) is not None:
        return put_back(parent, new_parent, update)
    update(parent, new_parent)
    return True


def puts_back(data: Any) -> bool:
    """Whether a write through a view of ``data`` can be put back: its library tells
    which memory arrays share and writes by integer index arrays (numpy, cupy; not
    ``array_api_strict``, whose views tracing still sees, through DLPack).

    >>> import array_api_strict as xs
    >>> puts_back(np.zeros(2)), puts_back(xs.zeros(2))
    (True, False)
    """
    try:
        return getattr(array_module(data), "may_share_memory", None) is not None
    except TypeError:
        return False


def positions(view: Any, base: Any) -> Any:
    """For each element of ``view``, its position in ``base`` flattened (C order), read
    from memory; ``None`` unless ``view`` lies inside ``base`` and both are writable
    real floating arrays with exact positions."""
    if not puts_back(base):
        return None
    xp = array_module(view, base)
    kind = getattr(getattr(base, "dtype", None), "kind", "")
    if kind != "f" or not hasattr(view, "shape") or not xp.may_share_memory(view, base):
        return None
    if base.size >= 2 ** (np.finfo(base.dtype).nmant + 1):
        return None  # positions would not be exact in this precision
    if not getattr(base.flags, "writeable", True):  # read-only memory (cupy has no flag)
        return None
    saved = base.copy()
    try:
        base[...] = xp.reshape(xp.arange(base.size, dtype=base.dtype), base.shape)
        found = xp.asarray(view).astype(np.int64)
    finally:
        base[...] = saved
    return found
