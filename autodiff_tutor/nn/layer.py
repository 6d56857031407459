"""The ``Layer`` base class: learnable parameters, ``initialize``, ``predict``, ``backward``.

A layer holds its learnable parameters in ``params`` (a dict of arrays, named in
``learnables``), sizes them in ``initialize(layout)`` from an example input or a
:class:`Layout` (shape + data format), and maps ``X`` to ``Y`` in ``predict``. Its
gradient comes from one of two places:

- a **custom backward**: override ``backward(X, Y, dY, memory)`` and return
  ``(dX, d_param1, d_param2, ...)`` in the order of ``learnables`` (the seeds'
  ``[dLdX, dLdW...] = backward(layer, X, Y, dLdY, memory)``);
- an **op**: return a :class:`~autodiff_tutor.ops.DifferentiableFunction` (or any
  protocol op) from ``function()`` taking ``(X, *params)``; forward and backward then
  go through it, ``compute_gradients`` included.

:class:`LayerOp` turns a layer into a protocol op with inputs ``(X, *params)``, which
is how the training loop runs it and how ``check_layer`` checks it: what the backward
returns is validated either way.

>>> import numpy as np
>>> from autodiff_tutor.nn import PReLULayer
>>> layer = PReLULayer().initialize(Layout((5, 3), "BC"))
>>> layer.params["alpha"].shape
(1, 3)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import ArgumentError, BackwardOutputError, DataFormatError
from autodiff_tutor.ops.formats import check_format
from autodiff_tutor.ops.validate import as_gradient_tuple, describe_inputs, gradient_problems
from autodiff_tutor.runtime.backend import array_module, shape_of

__all__ = ["Layer", "LayerOp", "Layout"]


@dataclass(frozen=True)
class Layout:
    """The shape and data format of a layer's input, without the data.

    ``xp`` and ``dtype`` say which array module and dtype parameters get (numpy and
    float64 by default).

    >>> Layout((28, 28, 3, 16), "SSCB").format
    'SSCB'
    """

    shape: tuple[int, ...]
    format: str
    dtype: Any = None
    xp: Any = None

    def __post_init__(self) -> None:
        check_format(self.format, len(self.shape))

    def module(self) -> Any:
        """The array module parameters are created with."""
        return self.xp if self.xp is not None else np

    def example(self) -> Any:
        """A zero array with this layout (used to pass layouts through a network)."""
        xp = self.module()
        dtype = self.dtype if self.dtype is not None else xp.float64
        return xp.zeros(self.shape, dtype=dtype)


def as_layout(layout: Any, fmt: str | None) -> Layout:
    """A :class:`Layout` from a layout or an example array (whose format is ``fmt``).

    >>> as_layout(np.zeros((4, 2)), None)
    Layout(shape=(4, 2), format='BC', dtype=dtype('float64'), xp=<module 'numpy' ...>)
    """
    if isinstance(layout, Layout):
        return layout
    shape = shape_of(layout)
    if fmt is None:
        if len(shape) != 2:
            raise DataFormatError(
                f"cannot tell which axis of an example of shape {shape} is the channel",
                hint="give the layer a format, e.g. SReLULayer('SSCB'), or pass "
                "Layout(shape, format) to initialize",
            )
        fmt = "BC"
    return Layout(shape, fmt, getattr(layout, "dtype", None), array_module(layout))


class Layer:
    """Base class of layers (see the module docstring).

    >>> class Identity(Layer):
    ...     def predict(self, X):
    ...         return X
    ...     def backward(self, X, Y, dY, memory):
    ...         return (dY,)
    >>> Identity().predict(3.0)
    3.0
    """

    #: Names of the learnable parameters, in the order ``backward`` returns them.
    learnables: tuple[str, ...] = ()

    def __init__(self, fmt: str | None = None, name: str | None = None) -> None:
        self.format = check_format(fmt) if fmt is not None else None
        self.name = name or type(self).__name__
        self.params: dict[str, Any] = {}

    # --- set-up ----------------------------------------------------------------------

    @property
    def initialized(self) -> bool:
        """Whether every learnable parameter has a value."""
        return all(name in self.params for name in self.learnables)

    def initialize(self, layout: Any, rng: np.random.Generator | None = None) -> Layer:
        """Size and create the learnable parameters for inputs with ``layout``.

        ``layout`` is a :class:`Layout` or an example input. Parameters that already
        have a value are kept. Returns the layer, so calls chain.
        """
        layout = as_layout(layout, self.format)
        if self.format is not None and self.format != layout.format:
            raise DataFormatError(
                f"layer {self.name!r} has format {self.format!r} but is initialized for "
                f"inputs in format {layout.format!r}",
                hint="create the layer without a format, or with the input's format",
            )
        self.format = layout.format
        rng = rng if rng is not None else np.random.default_rng(0)
        for name, values in self.initial_values(layout, rng).items():
            if name not in self.params:
                xp = layout.module()
                dtype = layout.dtype if layout.dtype is not None else xp.float64
                self.params[name] = xp.asarray(values, dtype=dtype)
        return self

    def initial_values(self, layout: Layout, rng: np.random.Generator) -> dict[str, Any]:
        """Initial parameter values (numpy arrays) for ``layout``; none by default."""
        return {}

    def parameters(self) -> tuple[Any, ...]:
        """The learnable parameters in ``learnables`` order."""
        self._require_initialized()
        return tuple(self.params[name] for name in self.learnables)

    def _require_initialized(self) -> None:
        missing = [name for name in self.learnables if name not in self.params]
        if missing:
            raise ArgumentError(
                f"layer {self.name!r} has no value for {', '.join(map(repr, missing))}",
                hint="call layer.initialize(example_input) (or model.initialize) first",
            )

    def with_params(self, values: tuple[Any, ...]) -> Layer:
        """A shallow copy of the layer whose parameters are ``values``."""
        clone = copy.copy(self)
        clone.params = dict(zip(self.learnables, values, strict=True))
        return clone

    # --- computation -----------------------------------------------------------------

    def function(self) -> Any:
        """The op computing this layer from ``(X, *params)``, or ``None`` (custom backward)."""
        return None

    def predict(self, X: Any) -> Any:
        """Forward ``X`` through the layer."""
        op = self.function()
        if op is None:
            raise NotImplementedError(f"{type(self).__name__} must define predict(self, X)")
        outputs, _ = op.op_forward(X, *self.parameters())
        return outputs[0]

    def forward(self, X: Any) -> tuple[Any, Any]:
        """``(Y, memory)`` for training: ``memory`` is passed back to ``backward``."""
        op = self.function()
        if op is None:
            return self.predict(X), None
        outputs, saved = op.op_forward(X, *self.parameters())
        return outputs[0], saved

    def backward(self, X: Any, Y: Any, dY: Any, memory: Any) -> tuple[Any, ...]:
        """``(dX, d_param1, ...)``: override it, or provide ``function()``."""
        op = self.function()
        if op is None:
            raise NotImplementedError(
                f"{type(self).__name__} has neither backward(X, Y, dY, memory) nor function()"
            )
        return tuple(op.op_backward((dY,), (True,) * (1 + len(self.learnables)), memory))

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{shape_of(v)}" for k, v in self.params.items())
        return f"<{self.name} format={self.format!r} params: {shapes or 'none'}>"


class LayerOp:
    """A layer as a protocol op with inputs ``(X, *params)`` and one output ``Y``.

    >>> import numpy as np
    >>> from autodiff_tutor.nn import PReLULayer
    >>> layer = PReLULayer().initialize(np.zeros((2, 3)))
    >>> op = LayerOp(layer)
    >>> (Y,), saved = op.op_forward(-np.ones((2, 3)), layer.params["alpha"])
    >>> [g.shape for g in op.op_backward((np.ones((2, 3)),), (True, True), saved)]
    [(2, 3), (1, 3)]
    """

    num_outputs = 1

    def __init__(self, layer: Layer) -> None:
        self.layer = layer
        self.name = layer.name
        self.format = layer.format
        #: Layers with a custom backward get no flags: they compute every gradient.
        self.honours_compute_gradients = layer.function() is not None

    def input_names(self, count: int) -> tuple[str, ...]:
        """``("X", *learnables)``: the op's inputs."""
        return ("X", *self.layer.learnables)[:count]

    def op_forward(self, X: Any, *params: Any) -> tuple[tuple[Any], Any]:
        """Run the layer's ``forward`` with ``params`` as its parameters."""
        clone = self.layer.with_params(params)
        Y, memory = clone.forward(X)
        specs = describe_inputs(("X", *self.layer.learnables), (X, *params))
        return (Y,), (clone, X, Y, memory, specs)

    def op_backward_raw(self, d_outputs: Any, compute_gradients: Any, saved: Any) -> Any:
        """The layer's gradients, unvalidated (unrequested ones dropped for custom layers)."""
        clone, X, Y, memory, specs = saved
        flags = tuple(bool(f) for f in compute_gradients)
        op = clone.function()
        if op is not None:
            if hasattr(op, "op_backward_raw"):
                return op.op_backward_raw(tuple(d_outputs), flags, memory)
            return op.op_backward(tuple(d_outputs), flags, memory)
        result = clone.backward(X, Y, d_outputs[0], memory)
        grads = as_gradient_tuple(result, len(specs))
        if grads is None:
            return result
        return tuple(g if wanted else None for g, wanted in zip(grads, flags, strict=True))

    def op_backward(self, d_outputs: Any, compute_gradients: Any, saved: Any) -> tuple[Any, ...]:
        """The layer's gradients ``(dX, *d_params)``, validated like an op's."""
        result = self.op_backward_raw(d_outputs, compute_gradients, saved)
        specs = saved[4]
        flags = tuple(bool(f) for f in compute_gradients)
        problems = gradient_problems(self.name, specs, flags, result)
        if problems:
            raise BackwardOutputError(
                "\n".join(p.message for p in problems),
                hint="backward returns (dX, d_param...) in the order of learnables, each "
                "with its input's shape and dtype; check_layer(layer, X) explains each check",
            )
        grads = as_gradient_tuple(result, len(specs))
        assert grads is not None
        return grads

    def source(self) -> str:
        """The source of the layer's class."""
        import inspect

        return inspect.getsource(type(self.layer))
