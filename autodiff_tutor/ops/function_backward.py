"""The backward half of a custom op's protocol: what the forward keeps (``Saved``:
exactly what the op declared), and the call of the user's ``backward`` with it, whose
result ``op_backward`` validates (count, shape, dtype, array module, ``None`` only
where no gradient was asked for) before anything uses it.

A mixin of :class:`~autodiff_tutor.ops.function.DifferentiableFunction`.

>>> import numpy as np
>>> from autodiff_tutor.ops import DifferentiableFunction
>>> class Double(DifferentiableFunction):
...     def forward(self, x):
...         return 2 * x
...     def backward(self, d_y, compute_gradients):
...         return 2 * d_y
>>> outputs, saved = Double().op_forward(np.ones(2))
>>> saved.inputs, saved.outputs, saved.memory
((), (), ())
>>> Double().op_backward((np.ones(2),), (True,), saved)
(array([2., 2.]),)
>>> Double().op_backward((np.ones(3),), (True,), saved)
Traceback (most recent call last):
    ...
autodiff_tutor.errors.BackwardOutputError: ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autodiff_tutor.errors import ArgumentError, BackwardOutputError
from autodiff_tutor.ops.signatures import bind_arguments, gradient_flags
from autodiff_tutor.ops.validate import (
    InputSpec,
    as_gradient_tuple,
    gradient_problems,
    numpy_gradients_fine,
)


@dataclass(slots=True)
class Saved:
    """What an op keeps between forward and backward: exactly what it declared.

    ``specs`` records each input's name, shape, dtype and array module (not the
    input itself), so the backward's result can be validated.

    >>> import numpy as np
    >>> from autodiff_tutor.ops import PReLUFunction
    >>> _, saved = PReLUFunction("BC").op_forward(np.ones((2, 3)), np.ones((1, 3)))
    >>> [spec.name for spec in saved.specs], len(saved.inputs), saved.outputs
    (['X', 'alpha'], 2, ())
    """

    specs: tuple[InputSpec, ...]
    inputs: tuple[Any, ...] = ()
    outputs: tuple[Any, ...] = ()
    memory: tuple[Any, ...] = ()


class BackwardCalls:
    """Calling the user's ``backward`` with what was saved, validated (see the module)."""

    def op_backward_raw(
        self, d_outputs: tuple[Any, ...], compute_gradients: tuple[bool, ...], saved: Saved
    ) -> Any:
        """Call the user's ``backward`` and return its result unchecked.

        ``check_op`` uses this to sort problems into categories; everything else calls
        :meth:`op_backward`, which validates. When no gradient is requested the user's
        backward is not called at all.
        """
        d_outputs = self._d_outputs(d_outputs)
        flags = gradient_flags(compute_gradients, len(saved.specs), self)
        return self._run_backward(d_outputs, flags, saved)

    def _d_outputs(self, d_outputs: Any) -> tuple[Any, ...]:
        d_outputs = tuple(d_outputs)
        if len(d_outputs) != self.num_outputs:
            raise ArgumentError(
                f"op_backward of {self.name!r} got {len(d_outputs)} output gradient(s) "
                f"for {self.num_outputs} output(s)",
                hint="pass one gradient per output, in a tuple",
            )
        return d_outputs

    def _run_backward(
        self, d_outputs: tuple[Any, ...], flags: tuple[bool, ...], saved: Saved
    ) -> Any:
        if not any(flags):  # nothing requested: nothing to compute
            return (None,) * len(flags)
        args = (*d_outputs, flags, *saved.inputs, *saved.outputs, *saved.memory)
        bind_arguments(self.backward, args, "backward", self, lambda: self._backward_layout(saved))
        return self.backward(*args)

    def op_backward(
        self, d_outputs: tuple[Any, ...], compute_gradients: tuple[bool, ...], saved: Saved
    ) -> tuple[Any, ...]:
        """Run the user's ``backward`` and validate its result (one gradient per input)."""
        if type(d_outputs) is not tuple or len(d_outputs) != self.num_outputs:
            d_outputs = self._d_outputs(d_outputs)  # converted, or a clear error
        flags = gradient_flags(compute_gradients, len(saved.specs), self)
        result = self._run_backward(d_outputs, flags, saved)
        if type(result) is tuple and numpy_gradients_fine(saved.specs, flags, result):
            return result  # checked with a few comparisons: the common case
        problems = gradient_problems(self.name, saved.specs, flags, result)
        if problems:
            raise BackwardOutputError(
                "\n".join(p.message for p in problems),
                hint="a gradient has exactly its input's shape, dtype and array module; "
                "check_op(op, *inputs) runs every check and explains each one",
            )
        grads = as_gradient_tuple(result, len(saved.specs))
        assert grads is not None  # a wrong count is a problem above
        return grads

    def _backward_layout(self, saved: Saved) -> str:
        parts = [f"{self.num_outputs} output gradient(s)", "compute_gradients"]
        if self.save_inputs_for_backward:
            parts.append(f"{len(saved.inputs)} input(s)")
        if self.save_outputs_for_backward:
            parts.append(f"{len(saved.outputs)} output(s)")
        if self.num_memory_values:
            parts.append(f"{self.num_memory_values} memory value(s)")
        return ", then ".join(parts)
