"""Plain arrays passed to ``evaluate``, as the traced function sees them: ``X.dot(W)``
with a traced ``W``.

``ndarray.dot`` converts its argument in C (through ``__array__``), so ``X.dot(W)``
with the caller's plain ``X`` and a traced ``W`` would drop the trace, although
``X @ W`` and ``np.dot(X, W)`` keep it. The traced function is given each plain
numeric array argument as a :class:`PlainArgument`: a view of the same memory (writes
reach the caller's array, as in numpy; it is an ``ndarray`` for ``isinstance`` and
for C code), whose ``dot`` hands a traced argument to ``np.dot``. Its views keep the
class (``X[i].dot(W)``, ``X.T.dot(W)``); computed results are plain arrays, and what
the function returns is made plain again (:func:`unmarked`).

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> def loss(w, X):
...     return gradient(np.sum(X.dot(w)), w)
>>> evaluate(loss, traced(np.zeros(2)), np.array([[1.0, 2.0], [3.0, 4.0]]))
array([4., 6.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.tracing.traced_values import traced_leaves


class PlainArgument(np.ndarray):
    """A plain array argument of the traced function (see the module docstring).

    >>> X = np.ones(2).view(PlainArgument)
    >>> X, type(X * 2).__name__, isinstance(X, np.ndarray)
    (array([1., 1.]), 'ndarray', True)
    """

    __array_priority__ = -1000.0  # np.dot(a, X) of a plain a gives a plain array

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        if return_scalar:
            return array[()]
        return array.view(np.ndarray) if type(array) is not np.ndarray else array

    def dot(self, b: Any, out: Any = None) -> Any:  # type: ignore[override]
        """``X.dot(b)``; a traced ``b`` goes to ``np.dot``, which tracing follows."""
        if out is None and traced_leaves([b]):
            return np.dot(self.view(np.ndarray), b)
        if out is None:
            return np.ndarray.dot(self, b)
        return np.ndarray.dot(self, b, out)

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))


def marked(value: Any) -> Any:
    """``value`` as the traced function sees it: a plain numeric ndarray as a
    :class:`PlainArgument` view (lists and dicts stay the caller's own objects).

    >>> type(marked(np.ones(1))).__name__, marked([np.ones(1)])[0].__class__.__name__
    ('PlainArgument', 'ndarray')
    """
    if type(value) is np.ndarray and value.dtype.kind in "biuf":
        return value.view(PlainArgument)
    return value


def unmarked(value: Any) -> Any:
    """``value`` with every :class:`PlainArgument` (also inside lists, tuples and
    dicts) a plain ndarray again.

    >>> type(unmarked(np.ones(1).view(PlainArgument))).__name__
    'ndarray'
    """
    if isinstance(value, PlainArgument):
        return value.view(np.ndarray)
    if type(value) in (list, tuple):
        return type(value)(unmarked(v) for v in value)
    if type(value) is dict:
        return {k: unmarked(v) for k, v in value.items()}
    return value


__all__ = ["PlainArgument", "marked", "unmarked"]
