"""The one protocol that compiled functions and custom operations share.

A *differentiable operation* answers two calls:

- ``op_forward(*inputs) -> (outputs, saved)``: ``outputs`` is a tuple (one entry per
  output); ``saved`` is whatever the backward pass needs (saved inputs, saved
  outputs, memory values), opaque to the caller.
- ``op_backward(d_outputs, compute_gradients, saved) -> d_inputs``: ``d_outputs`` is
  a tuple with one gradient per output, ``compute_gradients`` a tuple of bools (one
  per input); the result is a tuple with one gradient per input, ``None`` where
  ``compute_gradients`` is false.

Plus ``name``, ``num_outputs`` and a ``source()`` to show. A compiled function
(``@differentiable``) and a :class:`~autodiff_tutor.ops.DifferentiableFunction`
both implement it, so either can be used inside the other, in the tracing mode, and
by every check (``check_op``, ``verify_symbolic``).

>>> class Double:
...     name, num_outputs = "double", 1
...     def op_forward(self, x):
...         return (2 * x,), None
...     def op_backward(self, d_outputs, compute_gradients, saved):
...         return (2 * d_outputs[0] if compute_gradients[0] else None,)
...     def source(self):
...         return "y = 2 x"
>>> is_differentiable_op(Double())
True
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class DifferentiableOp(Protocol):
    """Structural type of a differentiable operation (see the module docstring)."""

    name: str
    num_outputs: int

    def op_forward(self, *inputs: Any) -> tuple[tuple[Any, ...], Any]: ...

    def op_backward(
        self,
        d_outputs: tuple[Any, ...],
        compute_gradients: tuple[bool, ...],
        saved: Any,
    ) -> tuple[Any, ...]: ...

    def source(self) -> str: ...


def is_differentiable_op(obj: Any) -> bool:
    """Whether ``obj`` implements the protocol (and so is a primitive to the compiler).

    >>> is_differentiable_op(len)
    False
    """
    return callable(getattr(obj, "op_forward", None)) and callable(
        getattr(obj, "op_backward", None)
    )
