"""``LayerOp``: a layer as a protocol op with inputs ``(X..., *params, *state)``.

Its outputs are the layer's outputs followed by its new state values. The backward
is the layer's own (a ``backward`` method or its ``function()`` op) when it has one,
else derived from the numpy forward (:mod:`autodiff_tutor.nn.autodiff`). What the
backward returns is validated either way. ``method`` picks the function the op runs:
``"forward"`` (training, the default) or ``"predict"`` (inference).

>>> import numpy as np
>>> from autodiff_tutor.nn import PReLULayer
>>> layer = PReLULayer(3).initialize(np.zeros((2, 3)))
>>> op = LayerOp(layer)
>>> (Y,), saved = op.op_forward(-np.ones((2, 3)), layer.params["alpha"])
>>> [g.shape for g in op.op_backward((np.ones((2, 3)),), (True, True), saved)]
[(2, 3), (1, 3)]
"""

from __future__ import annotations

import inspect
from typing import Any

from autodiff_tutor.errors import ArgumentError, BackwardOutputError
from autodiff_tutor.locations import location
from autodiff_tutor.nn.autodiff import (
    check_autodiff,
    compiled_backward,
    compiled_forward,
    generator_states,
    traced_backward,
)
from autodiff_tutor.nn.layer import Layer, as_outputs
from autodiff_tutor.ops.function import (
    as_gradient_tuple,
    bind_arguments,
    describe_inputs,
    gradient_problems,
)

__all__ = ["LayerOp", "input_names"]


def input_names(layer: Layer) -> tuple[str, ...]:
    """``("X", "alpha")``: a layer op's input names (``X1``, ``X2``... for several).

    >>> from autodiff_tutor.nn import PReLULayer
    >>> input_names(PReLULayer())
    ('X', 'alpha')
    """
    n = layer.num_inputs
    xs = ("X",) if n == 1 else tuple(f"X{i + 1}" for i in range(n))
    return (*xs, *layer.learnables, *layer.states)


class LayerOp:
    """A layer as a protocol op (see the module docstring).

    >>> import numpy as np
    >>> from autodiff_tutor.nn import Layer
    >>> class Square(Layer):
    ...     def predict(self, X):
    ...         return X * X
    >>> op = LayerOp(Square().initialize(np.zeros((1, 1))), autodiff="tracing")
    >>> (Y,), saved = op.op_forward(np.array([[3.0]]))
    >>> op.op_backward((np.array([[1.0]]),), (True,), saved)
    (array([[6.]]),)
    """

    def __init__(self, layer: Layer, autodiff: str = "compiler", method: str = "forward") -> None:
        if method not in ("forward", "predict"):
            raise ArgumentError(
                f"method must be 'forward' or 'predict', got {method!r}", location()
            )
        self.layer = layer
        self.autodiff = check_autodiff(autodiff)
        self.method = method
        self.name = layer.name
        self.format = layer.format
        self.num_outputs = layer.num_outputs + len(layer.states)
        self.op = layer.function()
        if self.op is not None and (layer.num_inputs != 1 or layer.states):
            raise ArgumentError(
                f"layer {layer.name!r}: a function() op serves one input and no state",
                location(),
                hint="write backward(...) instead, or leave it out to have it derived",
            )
        #: Layers with a backward method compute every gradient: they get no flags.
        self.honours_compute_gradients = self.op is not None or not layer.has_backward

    def input_names(self, count: int) -> tuple[str, ...]:
        """The op's inputs: the layer's inputs, parameters and state."""
        return input_names(self.layer)[:count]

    def _split(self, inputs: tuple[Any, ...]) -> tuple[tuple, tuple, tuple]:
        n, p = self.layer.num_inputs, len(self.layer.learnables)
        expected = n + p + len(self.layer.states)
        if len(inputs) != expected:
            raise ArgumentError(
                f"layer {self.name!r} takes {expected} inputs {input_names(self.layer)}, "
                f"got {len(inputs)}",
                location(),
            )
        return inputs[:n], inputs[n : n + p], inputs[n + p :]

    def op_forward(self, *inputs: Any) -> tuple[tuple[Any, ...], Any]:
        """Run the layer's ``forward`` (or ``predict``) with the given parameters."""
        X, params, state = self._split(inputs)
        clone = self.layer.with_params(params, state)
        memory = None
        if self.op is not None:
            outputs, memory = self.op.op_forward(*inputs)
        elif not clone.has_backward and self.autodiff == "compiler":
            outputs, memory = compiled_forward(clone, self.method, X)
        else:
            if not clone.has_backward:  # tracing: the backward repeats the draws
                memory = generator_states(clone)
            outputs = as_outputs(clone, getattr(clone, self.method)(*X))
        specs = describe_inputs(input_names(self.layer), inputs)
        return tuple(outputs), (clone, X, tuple(outputs), memory, specs)

    def op_backward_raw(self, d_outputs: Any, compute_gradients: Any, saved: Any) -> Any:
        """The layer's gradients, unvalidated (unrequested ones dropped)."""
        clone, X, outputs, memory, specs = saved
        flags = tuple(bool(f) for f in compute_gradients)
        d_outputs = tuple(d_outputs)
        if self.op is not None:
            if hasattr(self.op, "op_backward_raw"):
                return self.op.op_backward_raw(d_outputs, flags, memory)
            return self.op.op_backward(d_outputs, flags, memory)
        if clone.has_backward:
            m = clone.num_outputs
            given = (*X, *outputs[:m], *d_outputs, None)
            bind_arguments(clone.backward, given, "backward", self, lambda: _layout(clone, X))
            result = clone.backward(*given)
        elif self.autodiff == "compiler":
            result = compiled_backward(memory, d_outputs)
        else:
            result = traced_backward(clone, self.method, X, d_outputs, (outputs, memory))
        grads = as_gradient_tuple(result, len(specs))
        if grads is None:
            return result
        return tuple(g if wanted else None for g, wanted in zip(grads, flags, strict=True))

    def op_backward(self, d_outputs: Any, compute_gradients: Any, saved: Any) -> tuple[Any, ...]:
        """The layer's gradients ``(dX..., *d_params, *d_state)``, validated like an op's."""
        result = self.op_backward_raw(d_outputs, compute_gradients, saved)
        specs = saved[4]
        flags = tuple(bool(f) for f in compute_gradients)
        problems = gradient_problems(self.name, specs, flags, result)
        if problems:
            raise BackwardOutputError(
                "\n".join(p.message for p in problems),
                hint="backward returns (dX..., d_param...) in the order of learnables, each "
                "with its input's shape and dtype; check_layer(layer, X) explains each check",
            )
        grads = as_gradient_tuple(result, len(specs))
        assert grads is not None
        return grads

    def source(self) -> str:
        """The source of the layer's class."""
        return inspect.getsource(type(self.layer))


def _layout(layer: Layer, X: tuple[Any, ...]) -> str:
    """The parameters a layer's ``backward`` takes, after ``self``: its inputs, its
    outputs, their gradients, then ``memory``."""
    inputs = [f"X{i + 1}" for i in range(len(X))] if len(X) > 1 else ["X"]
    outputs = [f"Y{i + 1}" for i in range(layer.num_outputs)] if layer.num_outputs > 1 else ["Y"]
    return ", ".join([*inputs, *outputs, *(f"d{y}" for y in outputs), "memory"])
