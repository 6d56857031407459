"""Layers with several inputs: ``Addition`` and ``Concatenation``.

``Addition`` has a hand-written backward (the gradient passes to every input);
``Concatenation`` has none: its gradient is derived from its numpy forward.

>>> import numpy as np
>>> add = Addition().initialize((np.zeros((2, 3)), np.zeros((2, 3))))
>>> add.predict(np.ones((2, 3)), np.ones((2, 3))).tolist()[0]
[2.0, 2.0, 2.0]
>>> cat = Concatenation().initialize((np.zeros((2, 3)), np.zeros((2, 1))))
>>> cat.predict(np.ones((2, 3)), np.zeros((2, 1))).shape
(2, 4)
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.errors import ArgumentError, DataFormatError
from autodiff_tutor.locations import location
from autodiff_tutor.nn.layer import Layer
from autodiff_tutor.ops.formats import channel_axis
from autodiff_tutor.runtime.backend import array_module

__all__ = ["Addition", "Concatenation"]


class Addition(Layer):
    """The sum of ``num_inputs`` arrays of the same shape (a residual connection).

    >>> Addition(3).num_inputs, Addition(3).description
    (3, 'Element-wise addition of 3 inputs')
    """

    type = "Addition"

    def __init__(self, num_inputs: int = 2, name: str | None = None) -> None:
        if isinstance(num_inputs, bool) or not isinstance(num_inputs, int) or num_inputs < 2:
            raise ArgumentError(f"Addition needs at least 2 inputs, got {num_inputs!r}", location())
        super().__init__(None, name, f"Element-wise addition of {num_inputs} inputs")
        self.num_inputs = num_inputs

    def predict(self, *X: Any) -> Any:
        """``X1 + X2 + ...``."""
        total = X[0]
        for x in X[1:]:
            total = total + x
        return total

    def backward(self, *args: Any) -> tuple[Any, ...]:
        """``(X..., Y, dY, memory)`` -> ``dY`` for every input."""
        dY = args[self.num_inputs + 1]
        return (dY,) * self.num_inputs


class Concatenation(Layer):
    """Two inputs joined along the channel axis; no backward (it is derived).

    >>> Concatenation().type
    'Concatenation'
    """

    num_inputs = 2
    type = "Concatenation"

    def initialize(self, layout: Any, rng: Any = None) -> Concatenation:
        """Initialize as any layer, then find the channel axis of the format."""
        super().initialize(layout, rng)
        axis = channel_axis(self.format or "BC")
        if axis is None:
            raise DataFormatError(
                f"Concatenation needs a channel axis in {self.format!r}", location()
            )
        self.axis = axis
        return self

    def predict(self, X1: Any, X2: Any) -> Any:
        """``[X1, X2]`` along the channel axis."""
        xp = array_module(X1, X2)
        return xp.concat([X1, X2], axis=self.axis)
