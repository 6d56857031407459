"""Conversions in the user's traced code that keep the trace: ``np.array([a, b])``,
``np.asarray(t)``, ``np.r_[a, b]`` / ``np.c_[a, b]`` and scalar casts such as
``np.float64(t)``.

numpy converts in C (through ``__array__``, which must return a plain array), so
these calls would drop the trace. The user's code run by ``evaluate``
(:mod:`~autodiff_tutor.tracing.user_code`) sees these versions instead: a traced
value stays itself (``asarray``) or a recorded copy (``array``); a list of traced
values is stacked (``np.stack``, recorded); a cast is ``astype``. Without a traced
value, each is numpy's own, and its result a plain array.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> def polar(r):
...     p = array_function(np.array)([r * np.cos(0.0), r * np.sin(0.5)])
...     return gradient(np.sum(p), r)
>>> round(float(evaluate(polar, traced(2.0))), 6)
1.479426
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from autodiff_tutor.tracing import dispatch, messages
from autodiff_tutor.tracing.traced_values import is_traced, traced_leaves

#: numpy's conversions, and whether each copies a traced value
CONVERSIONS = {"array": True, "asarray": False, "asanyarray": False, "ascontiguousarray": False}
#: the numpy scalar types a traced value may be cast with (float32 rounds: not here)
SCALAR_TYPES = (np.float64, np.int64, np.int32)


def stacked(value: Any) -> Any:
    """A traced array from a traced value or a (nested) list or tuple holding some.

    >>> from autodiff_tutor.tracing import traced
    >>> stacked([traced(1.0), 2.0])
    traced(array([1., 2.]), not on a trace)
    """
    if is_traced(value) or not isinstance(value, (list, tuple)):
        return value
    items = [stacked(v) if traced_leaves([v]) else v for v in value]
    return dispatch.call_function(np.stack, (items,), {}, "np.array")


def array_function(fn: Any) -> Any:
    """``np.array`` (or ``asarray``...) that keeps traced values traced (see the module).

    >>> array_function(np.asarray)([1, 2])
    array([1, 2])
    """
    copies = CONVERSIONS[fn.__name__]
    name = f"np.{fn.__name__}"

    @functools.wraps(fn)
    def convert(obj: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not traced_leaves([obj]):  # plain data stays plain: other libraries take it
            return fn(obj, dtype, *args, **kwargs)
        extra = [k for k in kwargs if k not in ("copy", "order")] + (["order"] if args else [])
        if extra:
            raise messages.unsupported_arguments(name, extra, ("dtype", "copy"))
        value = stacked(obj)
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        if value is obj and (kwargs.get("copy") or (copies and kwargs.get("copy") is None)):
            return value.copy()
        return value

    return convert


def list_arguments(fn: Any, inputs: int) -> Any:
    """``fn`` (``np.mean``...) with its first ``inputs`` positional arguments, when
    lists or tuples holding traced values (``np.mean([a, b])``), stacked first: numpy
    looks for traced values in the arguments themselves, not inside lists.

    >>> from autodiff_tutor.tracing import traced
    >>> list_arguments(np.mean, 1)([traced(1.0), traced(3.0)])
    traced(np.float64(2.0), not on a trace)
    """

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, (list, tuple)) and traced_leaves([a]) for a in args[:inputs]):
            args = tuple(stacked(a) if k < inputs else a for k, a in enumerate(args))
        return fn(*args, **kwargs)

    return call


class ScalarCast:
    """A numpy scalar type (``np.float64``) that casts a traced value with ``astype``;
    it is still the type for ``isinstance`` and as a ``dtype``.

    >>> f64 = ScalarCast(np.float64)
    >>> f64(2), isinstance(np.float64(1.0), f64), np.zeros(1, dtype=f64).dtype
    (np.float64(2.0), True, dtype('float64'))
    """

    def __init__(self, kind: type) -> None:
        self._kind = kind
        self.dtype = np.dtype(kind)

    def __call__(self, *args: Any) -> Any:
        if args and traced_leaves([args[0]]):
            return stacked(args[0]).astype(self._kind)
        return self._kind(*args)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self._kind)

    def __subclasscheck__(self, cls: type) -> bool:
        return issubclass(cls, self._kind)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # not an array, nor a module: the type's own fields only
            raise AttributeError(name)
        return getattr(self._kind, name)

    def __repr__(self) -> str:
        return repr(self._kind)


class JoinIndex:
    """``np.r_[...]`` (``axis=0``) or ``np.c_[...]`` (``axis=-1``, 1-d pieces as
    columns) that joins traced pieces with ``np.concatenate`` (recorded); pieces given
    as slices or strings (``np.r_[0:3]``, ``np.r_['0,2', ...]``) only without traced
    values.

    >>> JoinIndex(np.c_, columns=True)[np.ones(2), np.zeros(2)]
    array([[1., 0.],
           [1., 0.]])
    """

    def __init__(self, real: Any, columns: bool) -> None:
        self._real = real
        self._columns = columns

    def __getitem__(self, key: Any) -> Any:
        pieces = key if isinstance(key, tuple) else (key,)
        if not traced_leaves(list(pieces)):
            return self._real[key]
        name = "np.c_" if self._columns else "np.r_"
        if any(isinstance(p, (slice, str)) for p in pieces):
            raise messages.unsupported_call(
                f"{name}[...] with a slice or a string and a traced value",
                "join the pieces with np.concatenate([...]) (or np.stack)",
            )
        shaped = [self._piece(stacked(p)) for p in pieces]
        axis = -1 if self._columns else 0
        return dispatch.call_function(np.concatenate, (shaped,), {"axis": axis}, name)

    def _piece(self, piece: Any) -> Any:
        ndim = len(piece.shape) if hasattr(piece, "shape") else np.ndim(piece)
        if self._columns and ndim <= 1:
            return np.reshape(piece, (-1, 1))
        return np.reshape(piece, (1,)) if ndim == 0 else piece

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


__all__ = [
    "CONVERSIONS",
    "SCALAR_TYPES",
    "JoinIndex",
    "ScalarCast",
    "array_function",
    "list_arguments",
    "stacked",
]
