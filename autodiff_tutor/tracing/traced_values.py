"""What a traced array holds, which traced arrays share memory, and traced values as
operations see them.

:class:`TracedValue` is the data part of a traced array (its raw array, trace, node
and origins); :class:`~autodiff_tutor.tracing.array.Traced` adds the operators. The
rest of tracing recognises traced arrays by this base class, so it needs no import
of the array module (no import cycle).

Every traced value is registered, by weak reference, with its trace (or with the
off-trace set). An in-place update (``t /= 2``) asks :func:`sharing_memory` which
other traced values see the same memory: numpy would change them too, and so would
the array-API libraries that wrap memory as numpy does (``array_api_strict``: its
slices, transposes and reshapes are views), whose memory tracing sees through DLPack
(:func:`may_share_memory`). Views that tracing made itself (``v = t.reshape(-1)``,
``t.T``, ``t[0]``: :func:`note_view`) see the update as in numpy, and writes through
them reach their array (:mod:`~autodiff_tutor.tracing.operators`); any other sharing
is refused instead of silently diverging from what the library does.

The helpers tell a traced array from a plain value (and one on the running trace from
one that is not), take the raw data out, make new traced arrays around results, copy
plain inputs kept for the backward pass, and show how a record sees its inputs:
:mod:`autodiff_tutor.tracing.dispatch` runs operations with them.

>>> import numpy as np
>>> base = TracedValue(np.zeros(4))
>>> view = TracedValue(base._data.reshape(2, 2))
>>> sharing_memory(base) == [view]
True
>>> is_traced(base), is_live(base), unwrap([base, 2.0])[0].tolist()
(True, False, [0.0, 0.0, 0.0, 0.0])
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from autodiff_tutor.locations import here
from autodiff_tutor.runtime.backend import array_module, has_array_namespace, shape_of
from autodiff_tutor.tracing.tape import InputInfo, Origin, Tape, active_tape

CPU_DEVICE = 1  # DLPack's kDLCPU: memory numpy can see
# id -> value, weakly (traced arrays are unhashable: == is elementwise)
_OFF_TRACE: weakref.WeakValueDictionary[int, TracedValue] = weakref.WeakValueDictionary()


class TracedValue:
    """The data of a traced array: raw array, trace, node id and origins."""

    __slots__ = (
        "_data",
        "_tape",
        "_node",
        "_origins",
        "_views",
        "_rebuild",
        "_base",
        "_unchecked",
        "__weakref__",
    )

    def __init__(self, data: Any, tape: Any = None, node: int | None = None, origins=frozenset()):
        self._data = data
        self._tape = tape
        self._node = node
        self._origins = origins
        self._views: list[weakref.ref[TracedValue]] = []  # traced views of this value
        self._rebuild: Callable[[TracedValue], TracedValue] | None = None  # view from base
        self._base: weakref.ref[TracedValue] | None = None  # the array this is a view of
        self._unchecked = False  # a view whose memory is not checked yet (see note_view)
        _registry(tape)[id(self)] = self

    def _become(self, other: TracedValue) -> None:
        """Take over ``other``'s data, trace and node (an in-place update, ``t += 1``)."""
        _registry(self._tape).pop(id(self), None)
        _registry(other._tape).pop(id(other), None)
        self._data, self._tape, self._node = other._data, other._tape, other._node
        self._origins = other._origins
        _registry(self._tape)[id(self)] = self


def note_view(result: Any, base: TracedValue, rebuild: Callable[[Any], Any]) -> Any:
    """Remember that ``result`` is a view of ``base`` (their data share memory), and how
    to make it again from ``base`` (``rebuild(base)``, recorded on the trace): after an
    in-place update of ``base``, its views are rebuilt, as numpy's views see the
    update. Returns ``result``.

    Views are remembered where numpy sees the memory: numpy's at once; those of an
    array-API library on the CPU (``array_api_strict``, whose slices, transposes and
    reshapes are views) as candidates whose memory is read through DLPack only when a
    write needs it (:func:`base_of`), so that tracing that writes nothing never converts
    its arrays. A view on a GPU (cupy) is not remembered: the arrays sharing its memory
    are found by cupy's ``may_share_memory``, and a write into either is refused.
    """
    if not isinstance(result, TracedValue) or result is base:
        return result
    if isinstance(result._data, np.ndarray) and isinstance(base._data, np.ndarray):
        if not np.may_share_memory(result._data, base._data):
            return result
    elif _memory_seen_later(result._data) and _memory_seen_later(base._data):
        result._unchecked = True
    else:
        return result
    result._rebuild = rebuild
    result._base = weakref.ref(base)
    if len(base._views) >= 64:  # a loop making views of one array: drop the dead ones
        base._views = [ref for ref in base._views if ref() is not None]
    base._views.append(weakref.ref(result))
    return result


def base_of(value: TracedValue) -> TracedValue | None:
    """The traced array ``value`` is a view of (:func:`note_view`), while both are alive
    and, for a view noted unchecked, share memory now that it is checked.

    >>> import array_api_strict as xs
    >>> base = TracedValue(xs.asarray([1.0, 2.0, 3.0]))
    >>> view = note_view(TracedValue(base._data[0:2]), base, lambda b: b)
    >>> element = note_view(TracedValue(base._data[0]), base, lambda b: b)  # a copy
    >>> base_of(view) is base, base_of(element)
    (True, None)
    """
    base = value._base() if value._base is not None else None
    if base is not None and value._unchecked:
        value._unchecked = False
        if not may_share_memory(value._data, base._data):
            value._base, base = None, None
    return base


def _memory_seen_later(data: Any) -> bool:
    """Whether ``data``'s memory can be seen through DLPack, its library having no
    ``may_share_memory`` of its own (array-API libraries)."""
    if not hasattr(data, "__dlpack__") or not hasattr(data, "shape"):
        return False
    try:
        return getattr(array_module(data), "may_share_memory", None) is None
    except TypeError:
        return False


def views_of(value: TracedValue) -> list[tuple[TracedValue, TracedValue]]:
    """``(parent, view)`` for the live traced views of ``value`` and their own views,
    parents before children.

    >>> import numpy as np
    >>> base = TracedValue(np.zeros(4))
    >>> view = note_view(TracedValue(base._data[:2]), base, lambda b: b)
    >>> [v is view for _, v in views_of(base)]
    [True]
    """
    found: list[tuple[TracedValue, TracedValue]] = []
    queue = [value]
    while queue:
        parent = queue.pop(0)
        alive = [v for v in (ref() for ref in parent._views) if v is not None]
        alive = [v for v in alive if base_of(v) is parent]
        parent._views = [weakref.ref(v) for v in alive]
        for view in alive:
            if view is not value and all(view is not v for _, v in found):
                found.append((parent, view))
                queue.append(view)
    return found


def _registry(tape: Any) -> weakref.WeakValueDictionary[int, TracedValue]:
    return tape.values if tape is not None else _OFF_TRACE


def sharing_memory(value: TracedValue, index: Any = None) -> list[TracedValue]:
    """The other traced values (on ``value``'s trace) whose data may overlap ``value``'s,
    or with ``index``, overlap the elements ``value[index]`` (exactly, where numpy can
    tell: basic indexing of arrays whose memory numpy sees).

    >>> data = np.zeros(3)
    >>> base, head = TracedValue(data), TracedValue(data[:1])
    >>> sharing_memory(base, slice(1, None)), sharing_memory(base, 0) == [head]
    ([], True)
    """
    shared = _overlapping(value)
    region = _region(value._data, index) if index is not None and shared else None
    if region is None:
        return shared
    exact = []
    for other in shared:
        memory = numpy_memory(other._data)
        try:
            if memory is None or np.shares_memory(memory, region, max_work=10**6):
                exact.append(other)
        except (TypeError, ValueError, np.exceptions.TooHardError):
            exact.append(other)
    return exact


def may_share_memory(a: Any, b: Any) -> bool:
    """Whether two arrays may overlap: the library's ``may_share_memory`` (numpy, cupy),
    else numpy's on their memory seen through DLPack (array-API libraries on the CPU,
    such as ``array_api_strict``, whose slices, transposes and reshapes are views as
    numpy's are); ``False`` where neither can tell.

    >>> import array_api_strict as xs
    >>> t = xs.asarray([1.0, 2.0, 3.0])
    >>> may_share_memory(t[0:2], t), may_share_memory(t[0], t)  # an element: a copy
    (True, False)
    """
    overlaps = _overlap_test(b)
    return overlaps is not None and overlaps(a)


def _overlap_test(data: Any) -> Callable[[Any], bool] | None:
    """A test of whether another array may share ``data``'s memory (see
    :func:`may_share_memory`), or ``None`` where nothing can tell."""
    try:
        library = getattr(array_module(data), "may_share_memory", None)
    except TypeError:
        return None
    memory = numpy_memory(data) if library is None else None
    if library is None and memory is None:
        return None

    def overlaps(other: Any) -> bool:
        try:
            if library is not None:
                return bool(library(other, data))
            seen = numpy_memory(other)
            return seen is not None and np.may_share_memory(seen, memory)
        except (TypeError, ValueError):
            return False

    return overlaps


def numpy_memory(data: Any) -> np.ndarray | None:
    """``data`` itself if a numpy array, else a numpy array over its memory (through
    DLPack), or ``None`` where numpy cannot see it (a number, a GPU array).

    >>> import array_api_strict as xs
    >>> numpy_memory(xs.asarray([1.0, 2.0])).tolist(), numpy_memory(2.0)
    ([1.0, 2.0], None)
    """
    if isinstance(data, np.ndarray):
        return data
    try:
        if data.__dlpack_device__()[0] != CPU_DEVICE:
            return None
        return np.from_dlpack(data)
    except (TypeError, ValueError, AttributeError, BufferError, RuntimeError):
        return None


def _region(data: Any, index: Any) -> Any:
    """``data[index]`` as a numpy view of ``data``'s memory, or ``None`` (fancy indexing
    copies; memory numpy cannot see)."""
    memory = numpy_memory(data)
    if memory is None:
        return None
    parts = index if isinstance(index, tuple) else (index,)
    if not any(part is Ellipsis for part in parts):
        parts = (*parts, Ellipsis)  # y[0] of a vector: a 0-d view, not a scalar copy
    try:
        region = memory[parts]
    except (IndexError, TypeError, ValueError):
        return None
    return region if np.may_share_memory(region, memory) else None


def _overlapping(value: TracedValue) -> list[TracedValue]:
    overlaps = _overlap_test(value._data)
    if overlaps is None:
        return []
    values = list(_registry(value._tape).values())
    return [other for other in values if other is not value and overlaps(other._data)]


def is_traced(value: Any) -> bool:
    """Whether ``value`` is a traced array (on a running trace or not).

    >>> is_traced(1.0)
    False
    """
    return isinstance(value, TracedValue)


def is_live(value: Any, tape: Tape | None = None) -> bool:
    """Whether ``value`` is a traced array on the running trace.

    >>> from autodiff_tutor.tracing import traced
    >>> is_live(traced(1.0))  # not inside evaluate()
    False
    """
    tape = tape if tape is not None else active_tape()
    return tape is not None and is_traced(value) and value._tape is tape


def unwrap(value: Any) -> Any:
    """The raw data of traced arrays, inside lists and tuples too.

    >>> from autodiff_tutor.tracing import traced
    >>> unwrap([traced(1.0), 2.0])
    [array(1.), 2.0]
    """
    if is_traced(value):
        return value._data
    if isinstance(value, (list, tuple)):
        return type(value)(unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def traced_leaves(value: Any) -> list[Any]:
    """The traced arrays in ``value`` (inside lists, tuples and dicts).

    >>> from autodiff_tutor.tracing import traced
    >>> len(traced_leaves([traced(1.0), {"w": traced(2.0)}, 3.0]))
    2
    """
    if is_traced(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in traced_leaves(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in traced_leaves(v)]
    return []


def origins_of(value: Any) -> frozenset[Origin]:
    """Why a traced value is not followed by the running trace.

    >>> from autodiff_tutor.tracing import traced
    >>> [o.kind for o in origins_of(traced(1.0))]
    ['outside']
    """
    tape = value._tape
    if tape is not None and tape is not active_tape():
        return frozenset({Origin("ended", tape.describe())})
    return value._origins


def make(
    raw: Any,
    like: TracedValue,
    tape: Tape | None = None,
    node: int | None = None,
    origins: frozenset[Origin] = frozenset(),
) -> Any:
    """A new traced array around ``raw``, of the same class as the traced value ``like``.

    >>> from autodiff_tutor.tracing import traced
    >>> make(np.ones(2), traced(0.0))
    traced(array([1., 1.]), not on a trace)
    """
    return type(like)(raw, tape, node, origins)


def snapshot(value: Any) -> Any:
    """A copy of a plain (untraced) array kept for the backward pass, so that a later
    in-place change of it (``w -= 1``) cannot change the gradient; other values as
    they are (lists of values element by element).

    >>> w = np.ones(2)
    >>> snapshot(w) is w, snapshot(2.0)
    (False, 2.0)
    """
    if isinstance(value, list):
        return [snapshot(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.copy()
    if is_traced(value) or isinstance(value, type) or not has_array_namespace(value):
        return value  # numbers, dtypes, options; traced data is never written in place
    copy = getattr(value, "copy", None)  # cupy arrays (array-API arrays are not mutable here)
    return copy() if callable(copy) else value


def dtype_name(raw: Any) -> str:
    """The dtype of ``raw`` as a short string.

    >>> dtype_name(np.ones(2, np.float32)), dtype_name(2.0)
    ('float32', 'float')
    """
    return str(getattr(raw, "dtype", type(raw).__name__))


def wrap_untraced(result: Any, leaves: list[Any]) -> Any:
    """Wrap array results of an unrecorded operation on traced values (off the trace).

    >>> from autodiff_tutor.tracing import traced
    >>> wrap_untraced(np.ones(1), [traced(1.0)])
    traced(array([1.]), not on a trace)
    """
    if isinstance(result, (tuple, list)):
        return like_result(result, [wrap_untraced(r, leaves) for r in result])
    if not (hasattr(result, "shape") and hasattr(result, "dtype")) or not leaves:
        return result
    if active_tape() is None:
        origins = frozenset({Origin("outside", here())})
    else:
        origins = frozenset().union(*(origins_of(t) for t in leaves))
    return make(result, leaves[0], None, None, origins)


def input_info(value: Any, tape: Tape) -> InputInfo:
    """How the inspector shows one input of a record.

    >>> input_info(2.0, Tape("f")).label, input_info(np.ones(3), Tape("f")).shape
    ('2.0', (3,))
    """
    if is_live(value, tape):
        return InputInfo(value._node, shape_of(value._data), tape.nodes[value._node].label)
    if is_traced(value):
        return InputInfo(None, shape_of(value._data), "untraced", origins_of(value))
    if hasattr(value, "shape"):  # arrays and numpy scalars
        met_after, data_of = tape.meet_plain(value)
        return InputInfo(None, shape_of(value), "const", met_after=met_after, data_of=data_of)
    if isinstance(value, (bool, int, float, complex)):
        return InputInfo(None, None, repr(value))
    return InputInfo(None, None, type(value).__name__)


def flat_infos(inputs: list[Any], tape: Tape) -> list[InputInfo]:
    infos = []
    for value in inputs:
        items = value if isinstance(value, (list, tuple)) else [value]
        infos.extend(input_info(v, tape) for v in items)
    return infos


def like_result(out: Any, items: list[Any]) -> Any:
    """``items`` in the container numpy returned: a list, a tuple or a named tuple.

    >>> like_result(np.linalg.slogdet(np.eye(2)), [1.0, 0.0]).logabsdet
    0.0
    """
    if isinstance(out, list):
        return items
    return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
