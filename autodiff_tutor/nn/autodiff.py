"""Gradients of layers without a backward: derived from their numpy ``forward``.

The seeds' rule: a layer's backward is optional; without one, the software
differentiates the forward automatically. Two ways, picked with ``autodiff=``:

- ``"compiler"`` (the default): the layer's method (``forward`` at training time,
  ``predict`` at inference) is compiled by the source-to-source compiler, the layer
  seen as the structure of its attributes, so ``self.params["alpha"]`` is an input
  like ``X``; the generated backward computes the gradients;
- ``"tracing"``: the method runs on traced arrays and the gradient comes from the
  tape. As a protocol op (in ``train``, ``check_layer``) the forward runs again in the
  backward, on a tape of its own; inside ``evaluate`` the layer's numpy operations
  simply go on the running tape.

>>> import numpy as np
>>> from autodiff_tutor.nn import Layer
>>> class Cube(Layer):
...     def predict(self, X):
...         return X ** 3
>>> layer = Cube().initialize(np.zeros((1, 2)))
>>> outputs, memory = compiled_forward(layer, "predict", (np.array([[1.0, 2.0]]),))
>>> compiled_backward(memory, (np.ones((1, 2)),))[0].tolist()
[[3.0, 12.0]]
>>> traced_backward(layer, "predict", (np.array([[1.0, 2.0]]),), (np.ones((1, 2)),))[0].tolist()
[[3.0, 12.0]]
"""

from __future__ import annotations

import warnings
from typing import Any

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.nn.layer import Layer, as_outputs
from autodiff_tutor.runtime.backend import array_module, zeros_like

__all__ = [
    "AUTODIFF_MODES",
    "check_autodiff",
    "compiled_backward",
    "compiled_forward",
    "traced_backward",
]

#: How a layer without a backward is differentiated.
AUTODIFF_MODES = ("compiler", "tracing")


def check_autodiff(mode: str) -> str:
    """``mode`` if it is one of :data:`AUTODIFF_MODES`, else an ``ArgumentError``.

    >>> check_autodiff("tracing")
    'tracing'
    """
    if mode not in AUTODIFF_MODES:
        raise ArgumentError(
            f"autodiff must be 'compiler' or 'tracing', got {mode!r}",
            hint="'compiler' compiles the layer's forward; 'tracing' records it on a tape",
        )
    return mode


def _wrt(layer: Layer, x_names: list[str]) -> list[str]:
    return [
        *x_names,
        *(["self.params"] if layer.learnables else []),
        *(["self.state"] if layer.states else []),
    ]


def compiled_forward(layer: Layer, method: str, X: tuple[Any, ...]) -> tuple[tuple, Any]:
    """Run ``layer.<method>(*X)`` through the compiler: ``(outputs, memory)``."""
    from autodiff_tutor import pytree
    from autodiff_tutor.api import vjp
    from autodiff_tutor.compiled import differentiable

    compiled = differentiable(getattr(type(layer), method))
    x_names = compiled.params[1 : 1 + len(X)]
    flat = pytree.flatten_call(
        compiled, _wrt(layer, x_names), (pytree.ObjectView(layer), *X), {}
    )
    assert flat is not None  # the layer itself is always a structure
    out, pullback = vjp(flat.function, *flat.args, wrt=list(flat.wrt))
    return as_outputs(layer, out), (layer, flat, pullback)


def compiled_backward(memory: Any, d_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``(dX..., d_params..., d_state...)`` from the generated backward."""
    layer, flat, pullback = memory
    rebuilt = flat.rebuild(pullback(*d_outputs))
    rebuilt = rebuilt if isinstance(rebuilt, tuple) else (rebuilt,)
    count = layer.num_inputs
    grads = list(rebuilt[:count])
    rest = list(rebuilt[count:])
    if layer.learnables:
        d_params = rest.pop(0)
        grads += [d_params[name] for name in layer.learnables]
    if layer.states:
        d_state = rest.pop(0)
        grads += [d_state[name] for name in layer.states]
    return tuple(grads)


def traced_backward(
    layer: Layer, method: str, X: tuple[Any, ...], d_outputs: tuple[Any, ...]
) -> tuple[Any, ...]:
    """``(dX..., d_params..., d_state...)`` by tracing ``layer.<method>(*X)`` again."""
    from autodiff_tutor.tracing import evaluate, gradient, is_traced, traced

    def pulled(X: list, params: list, state: list) -> tuple[Any, ...]:
        clone = layer.with_params(tuple(params), tuple(state))
        outputs = as_outputs(layer, getattr(clone, method)(*X))
        xp = array_module(*d_outputs)
        terms = [xp.sum(y * d) for y, d in zip(outputs, d_outputs, strict=True) if is_traced(y)]
        if not terms:
            return tuple(zeros_like(v._data) for v in (*X, *params, *state))
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        with warnings.catch_warnings():  # an input that does not reach an output: 0
            warnings.simplefilter("ignore")
            grads = gradient(total, X, params, state)
        return tuple(g for group in grads for g in group)

    inputs = (
        [traced(x) for x in X],
        [traced(p) for p in layer.parameters()],
        [traced(s) for s in layer.state_values()],
    )
    return evaluate(pulled, *inputs)
