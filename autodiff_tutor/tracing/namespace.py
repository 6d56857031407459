"""A traced-aware array namespace, for the ``xp = array_module(x); xp.tanh(x)`` style.

numpy hands traced arrays to tracing through its dispatch protocols
(``__array_ufunc__``, ``__array_function__``), so ``np.tanh(x)`` works on a traced
``x``. Array-API libraries (``array_api_strict``) and cupy have no such protocol for
foreign types; for them, a traced array's ``__array_namespace__`` (which
``array_module`` reads) is a :class:`TracedNamespace`: the library's own functions,
routed through tracing whenever an argument is traced.

>>> import array_api_strict as xs
>>> from autodiff_tutor.runtime.backend import array_module
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> def f(x):
...     xp = array_module(x)
...     y = xp.sum(xp.tanh(x) * x)
...     return gradient(y, x)
>>> g = evaluate(f, traced(xs.asarray([0.0, 1.0])))
>>> [round(float(v), 6) for v in g]
[0.0, 1.181568]
"""

from __future__ import annotations

import functools
from typing import Any

from autodiff_tutor.rules.names import is_array_module
from autodiff_tutor.tracing import dispatch, traced_values


class TracedNamespace:
    """The functions of array module ``xp``, tracing-aware (see the module docstring).

    >>> import numpy as np
    >>> numpy_like(np).tanh(0.0)  # plain values pass straight through
    np.float64(0.0)
    """

    def __init__(self, xp: Any):
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._xp, name)
        if is_array_module(value):
            return numpy_like(value)
        if callable(value) and not isinstance(value, type):
            return traced_function(value, f"{self._xp.__name__}.{name}")
        return value

    def __repr__(self) -> str:
        return f"<traced namespace of {self._xp.__name__}>"


@functools.lru_cache(maxsize=16)
def numpy_like(xp: Any) -> TracedNamespace:
    """The traced-aware namespace of array module ``xp`` (cached per module).

    >>> import numpy as np
    >>> numpy_like(np) is numpy_like(np)
    True
    """
    return TracedNamespace(xp)


@functools.lru_cache(maxsize=1024)
def traced_function(fn: Any, name: str) -> Any:
    """``fn`` routed through tracing (its derivative rule, or a located refusal)
    whenever an argument is traced; ``fn`` itself otherwise. ``name`` is how the
    user calls it, for messages.

    >>> import numpy as np
    >>> traced_function(np.sum, "np.sum")([1.0, 2.0])
    np.float64(3.0)
    """

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not traced_values.traced_leaves([args, kwargs]):
            return fn(*args, **kwargs)
        return dispatch.call_function(fn, args, kwargs, name)

    return call


def method_fallback(xp: Any, op: str, inputs: list[Any], options: dict[str, Any]) -> Any:
    """Compute method ``op`` (``x.sum(axis=0)``) with the functions of an array-API
    namespace, for arrays that have no such method.

    >>> import array_api_strict as xs
    >>> method_fallback(xs, "sum", [xs.ones((2, 3))], {"axis": 0})
    Array([2., 2., 2.], dtype=array_api_strict.float64)
    """
    x = inputs[0]
    if op in ("sum", "mean", "max", "min", "prod"):
        axis, keepdims = options.get("axis"), bool(options.get("keepdims", False))
        return getattr(xp, op)(x, axis=axis, keepdims=keepdims)
    if op == "reshape":
        return xp.reshape(x, tuple(options["shape"]))
    if op == "transpose":
        axes = options.get("axes")
        return xp.permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None else tuple(axes))
    if op == "squeeze":
        axis = options.get("axis")
        if axis is None:
            axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
        return xp.squeeze(x, axis=axis)
    if op == "clip":
        return xp.clip(x, min=inputs[1], max=inputs[2])
    if op == "astype":
        return xp.astype(x, options["dtype"])
    if op == "copy":
        return xp.asarray(x, copy=True)
    if op == "dot" and x.ndim <= 2 and inputs[1].ndim <= 2:
        return xp.matmul(x, inputs[1])
    raise AttributeError(f"{op}: no array-API equivalent of this method")
