"""Small helpers the checks share: which inputs are differentiable, casting, random seeds.

>>> import numpy as np
>>> is_float_array(np.zeros(2)), is_float_array(np.arange(2)), is_float_array(1.0)
(True, False, False)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.ops.function import is_array
from autodiff_tutor.runtime.backend import array_module, dtype_kind, shape_of

__all__ = [
    "backward_raw",
    "cast_inputs",
    "describe",
    "input_names",
    "is_float_array",
    "random_like",
]


def is_float_array(x: Any) -> bool:
    """Whether ``x`` is a real floating-point array (a differentiable input).

    >>> import numpy as np
    >>> is_float_array(np.float32(1.0))
    True
    """
    return is_array(x) and dtype_kind(x) == "f"


def cast_inputs(inputs: tuple[Any, ...], dtype: str) -> tuple[Any, ...]:
    """Float inputs cast to ``dtype`` (``"float32"`` or ``"float64"``), others unchanged.

    >>> import numpy as np
    >>> [x.dtype for x in cast_inputs((np.zeros(2), np.arange(2)), "float32")]
    [dtype('float32'), dtype('int64')]
    """
    out = []
    for x in inputs:
        if is_float_array(x):
            xp = array_module(x)
            x = xp.astype(x, getattr(xp, dtype))
        out.append(x)
    return tuple(out)


def random_like(y: Any, rng: np.random.Generator) -> Any:
    """Standard-normal values with ``y``'s shape, dtype and array module.

    >>> import numpy as np
    >>> random_like(np.zeros((2, 1), np.float32), np.random.default_rng(0)).dtype
    dtype('float32')
    """
    xp = array_module(y)
    return xp.asarray(rng.standard_normal(shape_of(y)), dtype=y.dtype)


def backward_raw(op: Any, d_outputs: tuple[Any, ...], flags: tuple[bool, ...], saved: Any) -> Any:
    """The backward's result before validation where the op offers it (``op_backward_raw``),
    else its ``op_backward``.

    >>> import numpy as np
    >>> from autodiff_tutor.ops import PReLUFunction
    >>> op = PReLUFunction("BC")
    >>> _, saved = op.op_forward(np.ones((1, 2)), np.ones((1, 2)))
    >>> backward_raw(op, (np.ones((1, 2)),), (True, False), saved)[1] is None
    True
    """
    raw = getattr(op, "op_backward_raw", None)
    if raw is not None:
        return raw(tuple(d_outputs), flags, saved)
    return op.op_backward(tuple(d_outputs), flags, saved)


def input_names(op: Any, count: int) -> tuple[str, ...]:
    """The op's input names (``input<i>`` where it does not say).

    >>> input_names(object(), 2)
    ('input0', 'input1')
    """
    names = getattr(op, "input_names", None)
    if callable(names):
        return tuple(names(count))
    return tuple(f"input{i}" for i in range(count))


def describe(exc: BaseException) -> str:
    """``TypeError: first line of the message``.

    >>> describe(ValueError("bad\\nmore"))
    'ValueError: bad'
    """
    text = str(exc).splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
