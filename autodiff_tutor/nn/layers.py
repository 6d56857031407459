"""Built-in layers: ``FullyConnected``, ``PReLULayer``, ``SReLULayer``, ``Softmax``, ``Dropout``.

``FullyConnected`` and ``Softmax`` have hand-written backward functions (MATLAB's
custom-layer pattern); ``PReLULayer`` and ``SReLULayer`` are built on their ops
(:mod:`autodiff_tutor.ops`), so their gradients, ``compute_gradients`` included,
come from the ops' backward. ``Dropout`` has no backward: its gradient is derived
from its (random, training-time) ``forward``.

>>> import numpy as np
>>> from autodiff_tutor.nn import Sequential
>>> model = Sequential([FullyConnected(4), SReLULayer(), FullyConnected(2), Softmax()])
>>> model.initialize(np.zeros((8, 2))).predict(np.ones((8, 2))).shape
(8, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import ArgumentError, DataFormatError
from autodiff_tutor.locations import location
from autodiff_tutor.nn.layer import Layer, Layout
from autodiff_tutor.ops.formats import channel_axis, channel_shape
from autodiff_tutor.ops.prelu import PReLUFunction
from autodiff_tutor.ops.srelu import SRELU_PARAMETERS, SReLUFunction
from autodiff_tutor.runtime.backend import array_module

__all__ = ["Dropout", "FullyConnected", "PReLULayer", "SReLULayer", "Softmax"]


class FullyConnected(Layer):
    """``Y = X @ W + b`` for inputs in format ``"BC"`` (observations x features).

    Weights are Glorot-uniform, the bias starts at zero.

    >>> import numpy as np
    >>> fc = FullyConnected(3).initialize(np.zeros((5, 2)))
    >>> fc.params["W"].shape, fc.params["b"].shape
    ((2, 3), (1, 3))
    """

    learnables = ("W", "b")
    type = "FullyConnected"

    def __init__(self, output_size: int, name: str | None = None) -> None:
        if isinstance(output_size, bool) or not isinstance(output_size, int) or output_size < 1:
            raise ArgumentError(
                f"FullyConnected needs a positive integer output size, got {output_size!r}",
                location(),
            )
        # "BC" only: initialize says so if the input is not
        super().__init__(None, name, f"Fully connected layer with output size {output_size}")
        self.output_size = output_size

    def initial_values(self, layout: Layout, rng: np.random.Generator) -> dict[str, Any]:
        """Glorot-uniform ``W`` of shape (inputs, outputs), zero ``b`` of shape (1, outputs)."""
        if layout.format != "BC":
            raise DataFormatError(
                f"FullyConnected takes inputs in format 'BC', got {layout.format!r}",
                location(),
                hint="reshape the data to (observations, features) first",
            )
        n_in, n_out = layout.shape[1], self.output_size
        limit = np.sqrt(6.0 / (n_in + n_out))
        return {
            "W": rng.uniform(-limit, limit, size=(n_in, n_out)),
            "b": np.zeros((1, n_out)),
        }

    def predict(self, X: Any) -> Any:
        """``X @ W + b``."""
        W, b = self.parameters()
        return X @ W + b

    def backward(self, X: Any, Y: Any, dY: Any, memory: Any) -> tuple[Any, Any, Any]:
        """``dX = dY W^T``, ``dW = X^T dY``, ``db`` = column sums of ``dY``."""
        W, _ = self.parameters()
        xp = array_module(X, dY)
        dX = dY @ W.T
        dW = X.T @ dY
        db = xp.sum(dY, axis=0, keepdims=True)
        return dX, dW, db


class Softmax(Layer):
    """Softmax over the channel axis, with a hand-written backward.

    >>> import numpy as np
    >>> Softmax().initialize(np.zeros((1, 2))).predict(np.array([[0.0, 0.0]])).tolist()
    [[0.5, 0.5]]
    """

    type = "Softmax"
    description = "Softmax"

    def predict(self, X: Any) -> Any:
        """``exp(X - max) / sum(exp(X - max))`` along the channel axis."""
        xp = array_module(X)
        c = self._axis()
        E = xp.exp(X - xp.max(X, axis=c, keepdims=True))
        return E / xp.sum(E, axis=c, keepdims=True)

    def backward(self, X: Any, Y: Any, dY: Any, memory: Any) -> tuple[Any]:
        """``dX = Y * (dY - sum(dY * Y))``, the sum along the channel axis."""
        xp = array_module(Y, dY)
        return (Y * (dY - xp.sum(dY * Y, axis=self._axis(), keepdims=True)),)

    def _axis(self) -> int:
        fmt = self.format or "BC"
        c = channel_axis(fmt)
        if c is None:
            raise DataFormatError(
                f"Softmax needs a channel axis ('C') in its format {fmt!r}", location()
            )
        return c


class PReLULayer(Layer):
    """A PReLU layer: a learnable slope ``alpha`` per channel for the negative inputs.

    As in MATLAB, ``PReLULayer(num_channels)`` describes itself as "PReLU with N
    channels" and draws ``alpha`` uniformly from [0, 1) (MATLAB's ``rand``), one per
    channel; ``initial_alpha=0.25`` starts every channel at He et al.'s 0.25 instead.
    Without ``num_channels`` the count comes from the input at ``initialize``.

    >>> import numpy as np
    >>> layer = PReLULayer(3).initialize(np.zeros((2, 3)))
    >>> layer.description, layer.type, layer.params["alpha"].shape
    ('PReLU with 3 channels', 'PReLU', (1, 3))
    >>> bool(np.all((0 <= layer.params["alpha"]) & (layer.params["alpha"] < 1)))
    True
    >>> PReLULayer(initial_alpha=0.25).initialize(np.zeros((2, 2))).params["alpha"].tolist()
    [[0.25, 0.25]]
    """

    learnables = ("alpha",)
    type = "PReLU"

    def __init__(
        self,
        num_channels: int | None = None,
        fmt: str | None = None,
        name: str | None = None,
        initial_alpha: float | None = None,
    ) -> None:
        if num_channels is not None and (
            isinstance(num_channels, bool) or not isinstance(num_channels, int) or num_channels < 1
        ):
            raise ArgumentError(
                f"PReLULayer needs a positive integer number of channels, got {num_channels!r}",
                location(),
            )
        described = f"PReLU with {num_channels} channels" if num_channels else "PReLU"
        super().__init__(fmt, name, described)
        self.num_channels = num_channels
        self.initial_alpha = initial_alpha

    def initial_values(self, layout: Layout, rng: np.random.Generator) -> dict[str, Any]:
        """``alpha`` per channel: uniform in [0, 1), or ``initial_alpha`` everywhere."""
        shape = channel_shape(layout.format, layout.shape)
        channels = int(np.prod(shape))
        if self.num_channels is not None and channels != self.num_channels:
            raise DataFormatError(
                f"layer {self.name!r} has {self.num_channels} channels but its input "
                f"has {channels}",
                location(),
                hint="give PReLULayer the number of channels of the data it follows",
            )
        if self.initial_alpha is not None:
            return {"alpha": np.full(shape, float(self.initial_alpha))}
        return {"alpha": rng.uniform(0.0, 1.0, size=shape)}

    def function(self) -> PReLUFunction:
        """The op this layer runs: :class:`~autodiff_tutor.ops.PReLUFunction`."""
        return PReLUFunction(self.format or "BC")


class SReLULayer(Layer):
    """An SReLU layer: thresholds ``tl < tr`` and slopes ``al``, ``ar`` per channel.

    Initial values are random, per channel: ``tl`` in [-1, 0), ``tr`` in [0, 1),
    slopes in [0, 1) (MATLAB's example draws all four from [0, 1), which can put the left
    threshold to the right of the right one).

    >>> import numpy as np
    >>> layer = SReLULayer().initialize(np.zeros((4, 3)))
    >>> bool(np.all(layer.params["tl"] < layer.params["tr"]))
    True
    """

    learnables = SRELU_PARAMETERS
    type = "SReLU"
    description = "SReLU"

    def initial_values(self, layout: Layout, rng: np.random.Generator) -> dict[str, Any]:
        """Random thresholds and slopes of the channel-wise shape."""
        shape = channel_shape(layout.format, layout.shape)
        return {
            "tl": rng.uniform(-1.0, 0.0, size=shape),
            "al": rng.uniform(0.0, 1.0, size=shape),
            "tr": rng.uniform(0.0, 1.0, size=shape),
            "ar": rng.uniform(0.0, 1.0, size=shape),
        }

    def function(self) -> SReLUFunction:
        """The op this layer runs: :class:`~autodiff_tutor.ops.SReLUFunction`."""
        return SReLUFunction(self.format or "BC")


class Dropout(Layer):
    """Dropout: at training time each element is zeroed with probability ``rate`` and
    the rest scaled by ``1 / (1 - rate)``; ``predict`` passes ``X`` through.

    The mask is drawn from ``self.rng`` (seeded), so ``check_layer`` can replay it.
    There is no backward: the gradient is derived from ``forward``.

    >>> import numpy as np
    >>> layer = Dropout(0.5).initialize(np.zeros((2, 3)))
    >>> X = np.ones((2, 3))
    >>> layer.predict(X).tolist()[0], sorted(set(layer.forward(X).ravel().tolist()))
    ([1.0, 1.0, 1.0], [0.0, 2.0])
    """

    type = "Dropout"

    def __init__(self, rate: float = 0.5, seed: int = 0, name: str | None = None) -> None:
        if not 0 <= rate < 1:
            raise ArgumentError(f"Dropout rate must be in [0, 1), got {rate!r}", location())
        super().__init__(None, name, f"Dropout with rate {rate}")
        self.rate = float(rate)
        self.rng = np.random.default_rng(seed)

    def predict(self, X: Any) -> Any:
        """``X`` unchanged (inference)."""
        return X

    def forward(self, X: Any) -> Any:
        """``X * mask / (1 - rate)``, the mask drawn afresh on every call."""
        xp = array_module(X)
        keep = xp.asarray(self.rng.random(X.shape) >= self.rate)
        return X * xp.astype(keep, X.dtype) / (1 - self.rate)
