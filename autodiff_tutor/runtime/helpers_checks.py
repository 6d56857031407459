"""What generated code checks where the front door or the protocol would have.

A gradient function (forward, seed and backward in a row, differentiated again for
second derivatives) seeds its backward with ``seed_one(out)``: 1 for a scalar output,
refused otherwise, as ``grad`` refuses it.

Through the protocol, ``op_forward`` checks how many values ``forward`` returned and
``op_backward`` checks each gradient against its input. A gradient function that is
differentiated again calls ``forward`` and ``backward`` themselves (so that the
compiler reads and differentiates them, see ``compile_gradient_function``); these
helpers keep the checks there. Each returns its value unchanged (its derivative
rule is the identity), or raises where the protocol would have.

>>> import numpy as np
>>> checked_gradient(np.ones(2), np.zeros(2)).tolist()
[1.0, 1.0]
>>> try:
...     checked_gradient(np.ones(3), np.zeros(2))
... except BackwardOutputError as error:
...     print(error.message.split(", where")[0])
a custom op's backward returned a gradient of shape (3,) for an input of shape (2,)
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.errors import BackwardOutputError, ForwardOutputError, NonScalarOutputError
from autodiff_tutor.runtime.backend import ones_like, shape_of, size

__all__ = ["checked_gradient", "checked_output", "seed_one"]


def seed_one(out: Any) -> Any:
    """1, shaped and typed like the scalar ``out`` (the seed of a gradient function);
    an output of more than one element has no gradient, only a Jacobian.

    >>> import numpy as np
    >>> seed_one(np.float64(2.5))
    np.float64(1.0)
    """
    if isinstance(out, (tuple, list)) or size(out) != 1:
        shape = (
            f"a {type(out).__name__}"
            if isinstance(out, (tuple, list))
            else f"an array of shape {shape_of(out)}"
        )
        raise NonScalarOutputError(
            f"a gradient was taken of a function that returns {shape}; a gradient needs "
            "a scalar output",
            hint="reduce it (np.sum, np.mean), or use jvp or vjp with a seed",
        )
    return ones_like(out)


def checked_output(value: Any) -> Any:
    """``value``, an output of a custom op's ``forward``; a tuple or a list (more values
    returned than the op declares) is refused.

    >>> checked_output(2.0)
    2.0
    """
    if isinstance(value, (tuple, list)):
        raise ForwardOutputError(
            f"a custom op's forward returned a {type(value).__name__} where it declares "
            "one array (its outputs, then its memory values, as num_outputs=... and "
            "num_memory_values=... say)",
            hint="return what the op declares, or declare the extra values",
        )
    return value


def checked_gradient(gradient: Any, like: Any) -> Any:
    """``gradient``, which a custom op's ``backward`` returned for the input ``like``:
    refused unless it has that input's shape (and its dtype, for a float input)."""
    if gradient is None or shape_of(gradient) != shape_of(like):
        got = "None" if gradient is None else f"a gradient of shape {shape_of(gradient)}"
        raise BackwardOutputError(
            f"a custom op's backward returned {got} for an input of shape {shape_of(like)}, "
            "where a gradient of the input's shape is needed",
            hint="return one gradient per input, shaped like it; check_op(op, *inputs) "
            "runs every check and explains each one",
        )
    kind = getattr(getattr(like, "dtype", None), "kind", None)
    dtype = getattr(gradient, "dtype", None)
    if kind == "f" and dtype is not None and dtype != like.dtype:
        raise BackwardOutputError(
            f"a custom op's backward returned a gradient of dtype {dtype} for an input "
            f"of dtype {like.dtype}",
            hint="compute the gradient in the input's dtype",
        )
    return gradient
