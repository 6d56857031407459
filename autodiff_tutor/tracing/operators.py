"""The operators of traced arrays: binary and unary operators, in-place updates and
element writes, each computed on the raw data and recorded by
:func:`~autodiff_tutor.tracing.dispatch.apply`.

In-place updates follow numpy: every name of the updated array sees the new value,
and so do the views tracing made of it (they are rebuilt from the new value). An
update *through* such a view (``v = t[0]; v += 1``) is put back into ``t``
(:mod:`~autodiff_tutor.tracing.through_view`). An update of memory another traced
array shares in a way tracing did not make is refused with a located error, and so is
a write into a variable of the trace or a view of one
(:mod:`~autodiff_tutor.tracing.variable_writes`).

>>> import numpy as np
>>> from autodiff_tutor.tracing import traced
>>> y = traced(np.zeros(3))
>>> alias = y
>>> y += 1.0
>>> alias
traced(array([1., 1., 1.]), not on a trace)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import AutodiffError, TracingError
from autodiff_tutor.locations import location, stores_back
from autodiff_tutor.ops.formatted import is_formatted
from autodiff_tutor.runtime.backend import array_module, shape_of
from autodiff_tutor.runtime.helpers import assign_at
from autodiff_tutor.tracing import dispatch, messages, traced_values
from autodiff_tutor.tracing.through_view import follows, put_back, puts_back
from autodiff_tutor.tracing.value import TracedValue, sharing_memory, views_of
from autodiff_tutor.tracing.variable_writes import refuse_write

_SYMBOLS = {
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "divide": "/",
    "power": "**",
    "matmul": "@",
    "floor_divide": "//",
    "remainder": "%",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
    "equal": "==",
    "not_equal": "!=",
}


def binary(op: str, function: Any, reflected: bool = False) -> Any:
    """The method for a binary operator (``reflected``: the ``__radd__`` form)."""

    def method(self: TracedValue, other: Any) -> Any:
        if is_formatted(other):
            return NotImplemented  # the formatted array's operator labels the result
        a, b = (other, self) if reflected else (self, other)
        name = f"the {_SYMBOLS[op]} operator"

        def forward() -> Any:
            return function(traced_values.unwrap(a), traced_values.unwrap(b))

        return dispatch.apply(op, name, forward, [a, b], {})

    method.__name__ = f"__{'r' if reflected else ''}{function.__name__.strip('_')}__"
    return method


def unary(op: str, function: Any) -> Any:
    """The method for a unary operator (``-x``, ``abs(x)``)."""

    def method(self: TracedValue) -> Any:
        return dispatch.apply(
            op, f"{function.__name__}()", lambda: function(self._data), [self], {}
        )

    return method


def in_place(op: str, function: Any) -> Any:
    """The method for an augmented operator (``y += v``): see the module docstring."""
    compute = binary(op, function)
    symbol = _SYMBOLS[op] + "="

    def method(self: TracedValue, other: Any) -> Any:
        if not isinstance(self._data, np.generic):  # numpy scalars are rebound, not written
            refuse_write(self, f"y {symbol} ...")
        shared = _unknown_sharers(self)
        through = bool(shared) and not stores_back()  # v += 1 on a view: written back
        if through and not follows(self, shared):
            raise messages.in_place_shared(f"y {symbol} ...")
        result = compute(self, other)
        if not traced_values.is_traced(result) or result.shape != self.shape:
            raise messages.in_place_shape(f"y {symbol} ...", self.shape, shape_of(result))
        if result.dtype != self.dtype:  # numpy keeps the dtype of the updated array
            result = result.astype(self.dtype)
        if through:
            if not put_back(self, result, update):
                raise _not_put_back(self, f"y {symbol} ...")
            return self
        if shared or isinstance(self._data, np.generic):
            # y[i] += v: the store that follows writes the new y[i] into y; and numpy
            # scalars are immutable: numpy rebinds the name to a new scalar
            return result
        update(self, result)
        return self

    method.__name__ = f"__i{function.__name__.strip('_')}__"
    return method


def set_item(y: Any, index: Any, value: Any) -> None:
    """``y[index] = value`` on traced ``y``: ``y`` becomes a recorded copy with the write."""
    raw_index, raw_value = traced_values.unwrap(index), traced_values.unwrap(value)
    if isinstance(y._data, np.generic):
        raise TracingError(
            f"y[...] = ... on a numpy scalar ({y._data.dtype}): numpy scalars cannot "
            "be changed (numpy raises TypeError)",
            location(),
            hint="write y = new_value, or make y an array (np.asarray is fine before tracing)",
        )
    refuse_write(y, "y[...] = ...")
    shared = _unknown_sharers(y, raw_index)
    if shared and not follows(y, shared):
        raise messages.in_place_shared("y[...] = ...")

    def forward() -> Any:
        return assign_at(y._data, raw_index, raw_value)

    try:
        result = dispatch.apply("assign_at", "y[...] = ...", forward, [y, raw_index, value], {})
    except AutodiffError as error:
        raise error.located_at(location()) from None
    if not shared:
        update(y, result)
    elif not put_back(y, result, update):  # a write through a view: its array sees it
        raise _not_put_back(y, "y[...] = ...")


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """``np.fill_diagonal(a, val)`` with traced values: the write ``a[k, k] = val`` for
    ``k < min(a.shape)`` (numpy's, without ``wrap``), recorded as ``y[...] = ...`` is.

    >>> from autodiff_tutor.tracing import evaluate, traced
    >>> def zero_diagonal(x):
    ...     a = x * 1.0  # an array of its own: a write into x itself is refused
    ...     fill_diagonal(a, 0.0)
    ...     return a
    >>> evaluate(zero_diagonal, traced(np.ones((2, 2))))
    traced(array([[0., 1.],
           [1., 0.]]), trace ... (evaluate(zero_diagonal)) has ended)
    """
    if wrap:
        raise messages.unsupported_arguments("np.fill_diagonal", ["wrap"], ())
    if not isinstance(a, TracedValue):
        raise messages.element_into_plain()
    shape = shape_of(a._data)
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) > 1):
        np.fill_diagonal(np.empty(shape), 0.0)  # numpy's own error for this shape
    set_item(a, np.diag_indices(min(shape), len(shape)), val)


def _unknown_sharers(y: TracedValue, index: Any = None) -> list[TracedValue]:
    """Traced values sharing ``y``'s memory (at ``index``) that are not views tracing
    made of ``y``: an update of ``y`` would change them in numpy, invisibly to tracing."""
    known = [view for _, view in views_of(y)]
    return [o for o in sharing_memory(y, index) if all(o is not k for k in known)]


def _not_put_back(view: TracedValue, what: str) -> TracingError:
    """The refusal of a write through ``view`` that could not be put back."""
    if puts_back(view._data):  # an integer array, memory it cannot number...
        return messages.in_place_shared(what)
    return messages.through_view_not_followed(what, array_module(view._data).__name__)


def update(y: TracedValue, result: TracedValue) -> None:
    """``y`` takes ``result``'s value in place; its views are rebuilt from it, so that
    they see the update, as numpy's views do."""
    views = views_of(y)
    y._become(result)
    for parent, view in views:
        view._become(view._rebuild(parent))
