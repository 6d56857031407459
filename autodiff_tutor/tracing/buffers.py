"""Buffers: the new arrays a traced function makes (``out = np.zeros((n, m))``), made
traced constants so that the traced values written into them keep their trace.

In MATLAB, assigning a ``dlarray`` into a numeric array makes that array a
``dlarray``. numpy cannot do that for a foreign type: ``out[i] = t`` on a plain
ndarray converts ``t`` in C, and the array stays plain. So the user's code, run by
``evaluate`` (:mod:`~autodiff_tutor.tracing.user_code`), sees array-making functions
(``np.zeros``, ``ones``, ``empty``, ``full``, ``eye``, ``identity``) that give a
traced array off the trace: a constant, which behaves as the plain array would
(``float(out[0])`` is fine), until a traced value is written or added into it
(``out[i] = t``, ``out[:, j] += t``, ``np.add(a, t, out=out)``); from then on it is on
the trace. A buffer that never got a traced value leaves ``evaluate`` as a plain array.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> def squares(x):
...     out = np.zeros(2)
...     for i in range(2):
...         out[i] = x[i] ** 2
...     return gradient(np.sum(out), x)
>>> evaluate(squares, traced([1.0, 3.0]))
array([2., 6.])
"""

from __future__ import annotations

import functools
from typing import Any

from autodiff_tutor.locations import here
from autodiff_tutor.tracing.array import Traced
from autodiff_tutor.tracing.tape import Origin, active_tape
from autodiff_tutor.tracing.traced_values import is_live, is_traced, traced_leaves, unwrap

#: the array-making functions whose results become buffers
BUFFER_FUNCTIONS = frozenset({"zeros", "ones", "empty", "full", "eye", "identity"})


def buffer(raw: Any) -> Traced:
    """``raw`` as a traced constant made by the user's code (off the trace).

    >>> import numpy as np
    >>> buffer(np.zeros(2))
    traced(array([0., 0.]), not on a trace)
    """
    return Traced(raw, None, None, frozenset({Origin("buffer", here())}))


def is_buffer(value: Any) -> bool:
    """Whether ``value`` is a buffer that no traced value was written into.

    >>> import numpy as np
    >>> is_buffer(buffer(np.ones(1))), is_buffer(np.ones(1))
    (True, False)
    """
    return (
        is_traced(value)
        and value._tape is None
        and any(origin.kind == "buffer" for origin in value._origins)
    )


def plain_buffers(value: Any) -> Any:
    """``value`` with its buffers (also inside lists, tuples and dicts) as plain arrays:
    what the function returns of them is what numpy would have returned.

    >>> import numpy as np
    >>> plain_buffers((buffer(np.ones(1)), 2.0))
    (array([1.]), 2.0)
    """
    if is_buffer(value):
        return value._data
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(plain_buffers(v) for v in value)
    if isinstance(value, dict) and type(value) is dict:
        return {k: plain_buffers(v) for k, v in value.items()}
    return value


def buffer_function(fn: Any) -> Any:
    """``fn`` (``np.zeros``...) making buffers while a trace runs.

    >>> import numpy as np
    >>> buffer_function(np.zeros)(2)  # no trace running: numpy's own result
    array([0., 0.])
    """

    @functools.wraps(fn)
    def make(*args: Any, **kwargs: Any) -> Any:
        if active_tape() is None:
            return fn(*unwrap(args), **unwrap(kwargs))
        if fn.__name__ == "full":
            return _full(fn, *args, **kwargs)
        return buffer(fn(*unwrap(args), **unwrap(kwargs)))

    return make


def _full(fn: Any, shape: Any, fill_value: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``np.full(shape, t)`` of a traced fill value: the buffer plus ``t``, on the trace."""
    if not any(is_live(t) for t in traced_leaves([fill_value])):
        return buffer(fn(unwrap(shape), unwrap(fill_value), dtype, **kwargs))
    zeros = buffer(fn(unwrap(shape), 0, dtype or unwrap(fill_value).dtype, **kwargs))
    return zeros + fill_value


__all__ = ["BUFFER_FUNCTIONS", "buffer", "buffer_function", "is_buffer", "plain_buffers"]
