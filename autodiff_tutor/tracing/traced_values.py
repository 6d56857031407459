"""Traced values as operations see them: telling a traced array from a plain value
(and one on the running trace from one that is not), the raw data inside, new traced
arrays around results, copies of plain inputs kept for the backward pass, and how a
record shows its inputs. :mod:`autodiff_tutor.tracing.dispatch` runs operations with
these.

>>> import numpy as np
>>> from autodiff_tutor.tracing import traced
>>> x = traced(np.ones(2))
>>> is_traced(x), is_live(x), unwrap([x, 2.0])[0].tolist()
(True, False, [1.0, 1.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.locations import here
from autodiff_tutor.runtime.backend import has_array_namespace, shape_of
from autodiff_tutor.tracing.tape import InputInfo, Origin, Tape, active_tape
from autodiff_tutor.tracing.value import TracedValue


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
