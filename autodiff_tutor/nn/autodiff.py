"""Gradients of layers without a backward: derived from their numpy ``forward``.

MATLAB's rule: a layer's backward is optional; without one, the software
differentiates the forward automatically. Two ways, picked with ``autodiff=``:

- ``"compiler"`` (the default): the layer's method (``forward`` at training time,
  ``predict`` at inference) is compiled by the source-to-source compiler, the layer
  seen as the structure of its attributes, so ``self.params["alpha"]`` is an input
  like ``X``; the generated backward computes the gradients;
- ``"tracing"``: the method runs on traced arrays and the gradient comes from the
  tape. As a protocol op (in ``train``, ``check_layer``) the forward runs again in the
  backward, on a tape of its own, with the random draws of the layer's numpy
  ``Generator`` attributes replayed (a forward that still gives other outputs, say
  from ``np.random.rand``, is refused rather than given a wrong gradient); inside
  ``evaluate`` the layer's numpy operations simply go on the running tape.

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

import numpy as np

from autodiff_tutor.compiler.failures import run_located
from autodiff_tutor.errors import ArgumentError, NoDerivativeRuleError, UnsupportedSyntaxError
from autodiff_tutor.locations import location
from autodiff_tutor.nn.layer import Layer, as_outputs
from autodiff_tutor.runtime.backend import array_module, shape_of, zeros_like

__all__ = [
    "AUTODIFF_MODES",
    "check_autodiff",
    "compiled_backward",
    "compiled_forward",
    "generator_states",
    "restore_generators",
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
            location(),
            hint="'compiler' compiles the layer's forward; 'tracing' records it on a tape",
        )
    return mode


def generator_states(layer: Layer) -> list[tuple[np.random.Generator, Any]]:
    """The layer's numpy ``Generator`` attributes with their current states.

    >>> class Noisy(Layer):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.rng = np.random.default_rng(0)
    >>> [type(g).__name__ for g, _ in generator_states(Noisy())]
    ['Generator']
    """
    found = [v for v in vars(layer).values() if isinstance(v, np.random.Generator)]
    return [(g, g.bit_generator.state) for g in found]


def restore_generators(states: list[tuple[np.random.Generator, Any]]) -> None:
    """Put generators back to saved states: the next draws repeat.

    >>> rng = np.random.default_rng(0)
    >>> saved = [(rng, rng.bit_generator.state)]
    >>> first = rng.random()
    >>> restore_generators(saved)
    >>> rng.random() == first
    True
    """
    for generator, state in states:
        generator.bit_generator.state = state


def _wrt(layer: Layer, x_names: list[str]) -> list[str]:
    return [
        *x_names,
        *(["self.params"] if layer.learnables else []),
        *(["self.state"] if layer.states else []),
    ]


def compiled_forward(layer: Layer, method: str, X: tuple[Any, ...]) -> tuple[tuple, Any]:
    """Run ``layer.<method>(*X)`` through the compiler: ``(outputs, memory)``.

    The method is compiled once per class and structure of the layer's attributes
    (see the module docstring for an example).
    """
    from autodiff_tutor.api.arguments import flatten_call
    from autodiff_tutor.api.compiled import differentiable
    from autodiff_tutor.pytree import ObjectView

    if method == "forward" and type(layer).forward is Layer.forward:
        method = "predict"  # the base class's forward only calls predict: compile that
    compiled = differentiable(getattr(type(layer), method))
    x_names = compiled.params[1 : 1 + len(X)]
    try:
        view = ObjectView(layer)
        flat = flatten_call(compiled, _wrt(layer, x_names), (view, *X), {})
        assert flat is not None  # the layer itself is always a structure
        derivative = differentiable(flat.function).derivative(list(flat.wrt))
    except (UnsupportedSyntaxError, NoDerivativeRuleError) as error:
        hint = f"{error.hint}; or let tracing differentiate the layer: autodiff='tracing'"
        raise type(error)(error.message, error.location, hint=hint.lstrip("; ")) from None
    out, memory = run_located(derivative.forward, *flat.args)
    return as_outputs(layer, out), (layer, flat, derivative, memory)


def compiled_backward(memory: Any, d_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``(dX..., d_params..., d_state...)`` from the generated backward."""
    layer, flat, derivative, saved = memory
    rebuilt = flat.rebuild(tuple(run_located(derivative.backward, *d_outputs, saved)))
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
    layer: Layer,
    method: str,
    X: tuple[Any, ...],
    d_outputs: tuple[Any, ...],
    forward: tuple[tuple[Any, ...], list] | None = None,
) -> tuple[Any, ...]:
    """``(dX..., d_params..., d_state...)`` by tracing ``layer.<method>(*X)`` again.

    ``forward`` is ``(outputs, generator states)`` of the forward run: the draws are
    replayed, and outputs that still differ raise an ``ArgumentError``.
    """
    from autodiff_tutor.tracing import evaluate, gradient, is_traced, stop_gradient, traced

    def pulled(X: list, params: list, state: list) -> tuple[Any, ...]:
        clone = layer.with_params(tuple(params), tuple(state))
        if forward is not None:
            after = generator_states(layer)
            restore_generators(forward[1])
        outputs = as_outputs(layer, getattr(clone, method)(*X))
        if forward is not None:
            restore_generators(after)
            _check_repeated(layer, method, forward[0], stop_gradient(outputs))
        terms = [
            array_module(y).sum(y * d)
            for y, d in zip(outputs, d_outputs, strict=True)
            if is_traced(y)
        ]
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


def _check_repeated(layer: Layer, method: str, first: tuple, again: tuple) -> None:
    xp = array_module(*first)
    for k, (a, b) in enumerate(zip(first, again, strict=True)):
        if shape_of(a) != shape_of(b) or not bool(xp.all(a == b)):
            raise ArgumentError(
                f"layer {layer.name!r}: {method} gave output {k} different values when run "
                "again for the backward pass (with tracing, the forward runs twice)",
                location(),
                hint="draw random numbers from a numpy Generator attribute "
                "(self.rng = np.random.default_rng(seed)), whose draws are replayed, "
                "or use autodiff='compiler'",
            )
