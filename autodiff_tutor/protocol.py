"""The one protocol that compiled functions and custom operations share.

A *differentiable operation* answers two calls:

- ``op_forward(*inputs) -> (outputs, memory)``: ``outputs`` is a tuple (one entry per
  output); ``memory`` is whatever the backward pass needs (inputs, outputs and other
  values it keeps), opaque to the caller.
- ``op_backward(d_outputs, compute_gradients, memory) -> d_inputs``: ``d_outputs`` is
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
...     def op_backward(self, d_outputs, compute_gradients, memory):
...         return (2 * d_outputs[0] if compute_gradients[0] else None,)
...     def source(self):
...         return "y = 2 x"
>>> is_differentiable_op(Double())
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

_op_factories: list[Callable[[Callable[..., Any]], Any]] = []


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
        memory: Any,
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


#: How an operation runs when one of its inputs is traced: the tracing mode sets it when
#: it is imported (no value is traced before that), so operations need not import it.
_traced_calls: list[Callable[[Any, tuple[Any, ...]], tuple[bool, Any]]] = []


def register_traced_call(call: Callable[[Any, tuple[Any, ...]], tuple[bool, Any]]) -> None:
    """Set how an operation runs on traced inputs (``autodiff_tutor.tracing`` registers
    its ``call_op``): ``call(op, inputs)`` gives ``(True, outputs)`` when an input is
    traced, else ``(False, None)``."""
    _traced_calls[:] = [call]


def call_if_traced(op: Any, inputs: tuple[Any, ...]) -> tuple[bool, Any]:
    """``(True, outputs)``: ``op`` ran on ``inputs`` recorded on their trace, because one
    of them is traced; else ``(False, None)``: the caller runs ``op`` itself.

    >>> call_if_traced(None, (1.0, 2.0))
    (False, None)
    """
    return _traced_calls[0](op, inputs) if _traced_calls else (False, None)


def register_op_factory(factory: Callable[[Callable[..., Any]], Any]) -> None:
    """Set how a plain function becomes an operation (``autodiff_tutor.api`` registers
    ``differentiable``): generated code calls :func:`as_op` without importing the API."""
    _op_factories[:] = [factory]


def as_op(fn: Callable[..., Any]) -> Any:
    """The differentiable operation of a user function (compiled on first use).

    >>> import autodiff_tutor, numpy as np
    >>> def square(x):
    ...     return x * x
    >>> op = as_op(square)
    >>> op.op_forward(np.array([3.0]))[0]
    (array([9.]),)
    """
    return _op_factories[0](fn)
