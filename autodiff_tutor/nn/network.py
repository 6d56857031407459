"""``Sequential``: layers applied one after the other, with a forward and a backward pass.

The backward pass walks the layers in reverse, each one as a
:class:`~autodiff_tutor.nn.layer.LayerOp`, so every layer's gradients are validated
(shape, dtype, array module) on every step.

>>> import numpy as np
>>> from autodiff_tutor.nn import FullyConnected, PReLULayer
>>> model = Sequential([FullyConnected(3), PReLULayer()]).initialize(np.zeros((4, 2)))
>>> Y, tape = model.forward(np.ones((4, 2)))
>>> grads = model.backward(tape, np.ones_like(Y))
>>> [(layer.name, name, g.shape) for (layer, name), g in grads.items()]
[('FullyConnected', 'W', (2, 3)), ('FullyConnected', 'b', (1, 3)), ('PReLULayer', 'alpha', (1, 3))]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.nn.layer import Layer, LayerOp, Layout

__all__ = ["Sequential"]


class Sequential:
    """A list of layers; ``predict`` applies them in order.

    >>> import numpy as np
    >>> from autodiff_tutor.nn import Softmax
    >>> Sequential([Softmax()]).initialize(np.zeros((1, 2))).predict(np.zeros((1, 2))).tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, layers: list[Layer]) -> None:
        layers = list(layers)
        for i, layer in enumerate(layers):
            if not isinstance(layer, Layer):
                raise ArgumentError(
                    f"Sequential: item {i} is a {type(layer).__name__}, not a Layer",
                    hint="build the model from autodiff_tutor.nn layers",
                )
        self.layers = layers

    def initialize(self, layout: Any, seed: int = 0) -> Sequential:
        """Initialize every layer, passing an example input through the network."""
        rng = np.random.default_rng(seed)
        example = layout.example() if isinstance(layout, Layout) else layout
        for layer in self.layers:
            layer.initialize(example, rng)
            example = layer.predict(example)
        return self

    def predict(self, X: Any) -> Any:
        """The network's output for ``X``."""
        for layer in self.layers:
            X = layer.predict(X)
        return X

    def forward(self, X: Any) -> tuple[Any, list[tuple[LayerOp, Any]]]:
        """The output and a tape of what each layer's backward needs."""
        tape = []
        for layer in self.layers:
            op = LayerOp(layer)
            (X,), saved = op.op_forward(X, *layer.parameters())
            tape.append((op, saved))
        return X, tape

    def backward(self, tape: list[tuple[LayerOp, Any]], dY: Any) -> dict[tuple[Layer, str], Any]:
        """Gradients of every learnable parameter, keyed by ``(layer, name)``."""
        per_layer = []
        for i in reversed(range(len(tape))):
            op, saved = tape[i]
            learnables = op.layer.learnables
            flags = (i > 0,) + (True,) * len(learnables)
            dX, *d_params = op.op_backward((dY,), flags, saved)
            per_layer.append({(op.layer, n): g for n, g in zip(learnables, d_params, strict=True)})
            dY = dX
        return {key: g for grads in reversed(per_layer) for key, g in grads.items()}

    def parameters(self) -> Iterator[tuple[Layer, str]]:
        """Every learnable parameter as ``(layer, name)``."""
        for layer in self.layers:
            for name in layer.learnables:
                yield layer, name

    def __repr__(self) -> str:
        return "Sequential(\n" + "".join(f"  {layer!r}\n" for layer in self.layers) + ")"
