"""The ``Layer`` base class: learnable parameters, state, ``predict``, ``forward``, ``backward``.

A layer holds its learnable parameters in ``params`` (a dict of arrays, named in
``learnables``) and its state parameters in ``state`` (named in ``states``: a running
mean, a recurrent hidden state), sizes them in ``initialize(layout)`` from an example
input or a :class:`Layout` (shape + data format), and maps its ``num_inputs`` inputs
to its ``num_outputs`` outputs in ``predict``; ``forward`` is the training-time
version (``predict`` unless overridden, e.g. for dropout). A layer with state returns
the new state values after its outputs. Its gradient comes from one of three places:

- **nothing**: with only ``predict`` (and ``forward``) written in numpy, the gradient
  is derived automatically, by the compiler or by tracing (``autodiff=``; see
  :mod:`autodiff_tutor.nn.autodiff`);
- a **custom backward**: override ``backward(X..., Y..., dY..., memory)`` and return
  ``(dX..., d_param1, d_param2, ...)`` in the order of ``learnables`` (MATLAB's
  ``[dLdX, dLdW...] = backward(layer, X, Y, dLdY, memory)``); a layer with state also
  receives the gradients of its new state after ``dY`` and returns those of its state
  after the parameters' (``dLdSout`` / ``dLdSin``). ``memory`` is ``None``: recompute
  what the backward needs from ``X`` and ``Y`` (as MATLAB's networks require);
- an **op**: return a :class:`~autodiff_tutor.ops.DifferentiableFunction` (or any
  protocol op) from ``function()`` taking ``(X, *params)``; forward and backward then
  go through it, ``compute_gradients`` included.

:class:`~autodiff_tutor.nn.layer_op.LayerOp` turns a layer into a protocol op with
inputs ``(X..., *params, *state)``, which is how networks run it and how
``check_layer`` checks it.

>>> import numpy as np
>>> from autodiff_tutor.nn import PReLULayer
>>> layer = PReLULayer(3).initialize(Layout((5, 3), "BC"))
>>> layer.params["alpha"].shape, layer.description
((1, 3), 'PReLU with 3 channels')
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import ArgumentError, DataFormatError
from autodiff_tutor.locations import location
from autodiff_tutor.ops.formats import check_format
from autodiff_tutor.runtime.backend import array_module, shape_of

__all__ = ["Layer", "Layout", "as_outputs"]


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
                location(),
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
    >>> Identity().predict(3.0), Identity().has_backward, Identity().type
    (3.0, True, 'Identity')
    """

    #: Names of the learnable parameters, in the order ``backward`` returns them.
    learnables: tuple[str, ...] = ()
    #: Names of the state parameters (not learned; ``predict`` returns new values).
    states: tuple[str, ...] = ()
    #: How many arrays ``predict`` takes and returns (not counting state).
    num_inputs: int = 1
    num_outputs: int = 1
    #: A one-line description and the layer's type (the class name by default).
    description: str = ""
    type: str = ""

    def __init__(
        self, fmt: str | None = None, name: str | None = None, description: str | None = None
    ) -> None:
        self.format = check_format(fmt) if fmt is not None else None
        self.name = name or type(self).__name__
        self.description = description or self.description or self.name
        self.type = self.type or type(self).__name__
        self.params: dict[str, Any] = {}
        self.state: dict[str, Any] = {}
        self._initial_state: dict[str, Any] = {}

    # --- set-up ----------------------------------------------------------------------

    @property
    def initialized(self) -> bool:
        """Whether every learnable and state parameter has a value."""
        return all(n in self.params for n in self.learnables) and all(
            n in self.state for n in self.states
        )

    @property
    def has_backward(self) -> bool:
        """Whether the layer brings its own backward (a method or an op in ``function``)."""
        return type(self).backward is not Layer.backward or self.function() is not None

    def initialize(self, layout: Any, rng: np.random.Generator | None = None) -> Layer:
        """Size and create the learnable (and state) parameters for inputs with ``layout``.

        ``layout`` is a :class:`Layout` or an example input (a tuple of them for a
        layer with several inputs). Parameters that already have a value are kept.
        Returns the layer, so calls chain.
        """
        layouts = layout if isinstance(layout, tuple) and self.num_inputs > 1 else (layout,)
        layouts = tuple(as_layout(item, self.format) for item in layouts)
        first = layouts[0]
        if self.format is not None and self.format != first.format:
            raise DataFormatError(
                f"layer {self.name!r} has format {self.format!r} but is initialized for "
                f"inputs in format {first.format!r}",
                location(),
                hint="create the layer without a format, or with the input's format",
            )
        self.format = first.format
        rng = rng if rng is not None else np.random.default_rng(0)
        given = layouts if self.num_inputs > 1 else first
        xp = first.module()
        dtype = first.dtype if first.dtype is not None else xp.float64
        for name, values in self.initial_values(given, rng).items():
            if name not in self.params:
                self.params[name] = xp.asarray(values, dtype=dtype)
        for name, values in self.initial_state(given, rng).items():
            self._initial_state[name] = xp.asarray(values, dtype=dtype)
            if name not in self.state:
                self.state[name] = self._initial_state[name]
        return self

    def initial_values(self, layout: Any, rng: np.random.Generator) -> dict[str, Any]:
        """Initial parameter values (numpy arrays) for ``layout``; none by default."""
        return {}

    def initial_state(self, layout: Any, rng: np.random.Generator) -> dict[str, Any]:
        """Initial state values for ``layout`` (what ``reset_state`` returns to); none."""
        return {}

    def reset_state(self) -> Layer:
        """Put every state parameter back to its initial value; returns the layer.

        >>> import numpy as np
        >>> class Count(Layer):
        ...     states = ("n",)
        ...     def initial_state(self, layout, rng):
        ...         return {"n": np.zeros(())}
        ...     def predict(self, X):
        ...         return X, self.state["n"] + 1
        >>> layer = Count().initialize(np.zeros((1, 1)))
        >>> layer.state["n"] = layer.predict(np.zeros((1, 1)))[1]
        >>> float(layer.state["n"]), float(layer.reset_state().state["n"])
        (1.0, 0.0)
        """
        self.state = dict(self._initial_state)
        return self

    def parameters(self) -> tuple[Any, ...]:
        """The learnable parameters in ``learnables`` order."""
        self._require_initialized()
        return tuple(self.params[name] for name in self.learnables)

    def state_values(self) -> tuple[Any, ...]:
        """The state parameters in ``states`` order."""
        self._require_initialized()
        return tuple(self.state[name] for name in self.states)

    def _require_initialized(self) -> None:
        missing = [n for n in self.learnables if n not in self.params]
        missing += [n for n in self.states if n not in self.state]
        if missing:
            raise ArgumentError(
                f"layer {self.name!r} has no value for {', '.join(map(repr, missing))}",
                location(),
                hint="call layer.initialize(example_input) (or model.initialize) first",
            )

    def with_params(self, values: tuple[Any, ...], state: tuple[Any, ...] = ()) -> Layer:
        """A shallow copy of the layer whose parameters (and state) are ``values``."""
        clone = copy.copy(self)
        clone.params = dict(zip(self.learnables, values, strict=True))
        if state:
            clone.state = dict(zip(self.states, state, strict=True))
        return clone

    # --- computation -----------------------------------------------------------------

    def function(self) -> Any:
        """The op computing this layer from ``(X, *params)``, or ``None``."""
        return None

    def predict(self, *X: Any) -> Any:
        """Forward ``X`` through the layer (inference)."""
        op = self.function()
        if op is None:
            raise NotImplementedError(f"{type(self).__name__} must define predict(self, X)")
        outputs, _ = op.op_forward(*X, *self.parameters())
        return outputs[0] if len(outputs) == 1 else outputs

    def forward(self, *X: Any) -> Any:
        """Forward ``X`` through the layer at training time: ``predict`` unless overridden."""
        return self.predict(*X)

    def backward(self, *args: Any) -> tuple[Any, ...]:
        """``(dX..., d_param1, ...)`` from ``(X..., Y..., dY..., memory)``: override it,
        provide ``function()``, or leave both out to have the gradient derived."""
        raise NotImplementedError(f"{type(self).__name__} has no backward")

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{shape_of(v)}" for k, v in {**self.params, **self.state}.items())
        return f"<{self.name} format={self.format!r} params: {shapes or 'none'}>"


def as_outputs(layer: Layer, result: Any) -> tuple[Any, ...]:
    """What ``predict`` or ``forward`` returned, as a tuple of outputs then new state.

    >>> as_outputs(Layer(), 1.0)
    (1.0,)
    """
    count = layer.num_outputs + len(layer.states)
    if count == 1:
        return (result,)
    if not isinstance(result, tuple) or len(result) != count:
        got = f"{len(result)} values" if isinstance(result, tuple) else "one value"
        raise ArgumentError(
            f"{layer.name}.predict returned {got}; it has {layer.num_outputs} output(s) "
            f"and {len(layer.states)} state parameter(s), so it returns {count} values",
            location(),
            hint="return the outputs, then the new value of each state parameter, as a tuple",
        )
    return result
