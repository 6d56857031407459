"""``check_layer``: a layer checked like an op, on the functions it trains and predicts with.

The layer becomes an op with inputs ``(X..., *params, *state)``
(:class:`~autodiff_tutor.nn.LayerOp`) and goes through
:func:`~autodiff_tutor.verify.numeric.checks.check_op`. Two entries come first:

- ``initialize``: the parameters (and state) it created for the sample;
- ``predict``: whether ``predict`` (inference) and ``forward`` (training) agree. When
  they differ (dropout, batch norm: a legitimate training-time forward) both are
  checked: the usual categories on ``forward``, the same ones prefixed ``predict:``
  on ``predict`` (for a layer with a backward, which serves ``forward``, only
  whether ``predict`` runs); the entry says which ran on which. A random ``forward`` that
  draws from a numpy ``Generator`` attribute (``self.rng``) is checked with the same
  draws replayed on every call.

A ``gradient`` entry says where the gradient comes from: the layer's backward, or
derived from its forward by the compiler or by tracing (``autodiff=``).

>>> from autodiff_tutor.nn import PReLULayer
>>> report = check_layer(PReLULayer(), (6, 4))
>>> report.passed, report["gradient"].message
(True, "from the layer's function() op: PReLUFunction")
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import front_door
from autodiff_tutor.nn.autodiff import generator_states, restore_generators
from autodiff_tutor.nn.layer import Layer, Layout, as_outputs
from autodiff_tutor.nn.layer_op import LayerOp, input_names
from autodiff_tutor.ops.formats import batch_axis
from autodiff_tutor.runtime.backend import shape_of
from autodiff_tutor.verify.numeric.checks import check_op, differs
from autodiff_tutor.verify.numeric.common import describe
from autodiff_tutor.verify.numeric.report import CheckEntry, CheckReport

__all__ = ["check_layer"]


def _sample(sample: Any, rng: np.random.Generator) -> tuple[Any, Any]:
    """``(array, layout)`` from an array, a shape or a :class:`Layout`."""
    if isinstance(sample, tuple):
        data = rng.standard_normal(sample)
        return data, data
    if isinstance(sample, Layout):
        xp = sample.module()
        return xp.asarray(rng.standard_normal(sample.shape), dtype=sample.example().dtype), sample
    return sample, sample


class _Replaying(LayerOp):
    """A layer op whose random draws (from numpy ``Generator`` attributes) repeat."""

    def __init__(self, layer: Layer, autodiff: str, method: str) -> None:
        super().__init__(layer, autodiff, method)
        self.generators = generator_states(layer)

    def op_forward(self, *inputs: Any) -> tuple[tuple[Any, ...], Any]:
        restore_generators(self.generators)
        return super().op_forward(*inputs)


def _gradient_entry(layer: Layer, autodiff: str) -> CheckEntry:
    op = layer.function()
    if op is not None:
        source = f"from the layer's function() op: {type(op).__name__}"
    elif layer.has_backward:
        source = "from the layer's backward"
    elif autodiff == "compiler":
        source = "no backward: derived from the forward by the compiler (autodiff='compiler')"
    else:
        source = "no backward: derived from the forward by tracing (autodiff='tracing')"
    return CheckEntry("gradient", "passed", source)


@front_door
def check_layer(
    layer: Any, sample: Any, *, autodiff: str = "compiler", **options: Any
) -> CheckReport:
    """Check a :class:`~autodiff_tutor.nn.Layer` on a sample input (or its shape).

    ``sample`` is an array, a shape (random normal float64 data is drawn) or a
    :class:`~autodiff_tutor.nn.Layout`; a list of them for a layer with several
    inputs. An uninitialized layer is initialized for it. A layer without a backward
    is differentiated by ``autodiff`` (``"compiler"`` or ``"tracing"``). ``options``
    go to :func:`check_op`.

    >>> import numpy as np
    >>> from autodiff_tutor.nn import Layer
    >>> class Cube(Layer):
    ...     def predict(self, X):
    ...         return X ** 3
    >>> report = check_layer(Cube(), (5, 2), autodiff="tracing")
    >>> report.passed, report["finite differences"].status
    (True, 'passed')
    """
    rng = np.random.default_rng(options.get("seed", 0))
    samples = [_sample(s, rng) for s in (sample if isinstance(sample, list) else [sample])]
    X = tuple(data for data, _ in samples)
    layouts = tuple(layout for _, layout in samples)
    name = getattr(layer, "name", type(layer).__name__)
    try:
        layer.initialize(layouts if len(layouts) > 1 else layouts[0])
        values = {**layer.params, **layer.state}
        shapes = ", ".join(f"{k} {shape_of(v)}" for k, v in values.items())
        first = CheckEntry("initialize", "passed", f"parameters: {shapes or 'none'}")
    except Exception as exc:  # the user's initialize: report whatever it raises
        entry = CheckEntry("initialize", "failed", f"initialize raised {describe(exc)}")
        return CheckReport(name, [entry])
    inputs = (*X, *layer.parameters(), *layer.state_values())
    options.setdefault("data_inputs", _data_positions(layer, X))
    predict_entry, split = _predict_entry(layer, X)
    op_class = _Replaying if split == "random" else LayerOp
    op = op_class(layer, autodiff, "forward")
    entries = [first, predict_entry, _gradient_entry(layer, autodiff)]
    entries += check_op(op, *inputs, **options).entries
    if split is not None:
        predicted = check_op(LayerOp(layer, autodiff, "predict"), *inputs, **options)
        for e in predicted.entries:
            if e.category == "GPU":
                continue
            if layer.has_backward and e.category != "forward":
                why = "the layer's backward is forward's (training): predict has no gradient"
                e = CheckEntry(e.category, "skipped", why)
            entries.append(CheckEntry(f"predict: {e.category}", e.status, e.message))
    return CheckReport(name, entries)


def _data_positions(layer: Layer, X: tuple[Any, ...]) -> tuple[int, ...]:
    """The op inputs that carry observations: the data, and state with a batch axis
    of the same size (a recurrent hidden state), sliced together for one observation."""
    axis = batch_axis(layer.format or "BC")
    if axis is None or len(shape_of(X[0])) <= axis:
        return tuple(range(len(X)))
    n = shape_of(X[0])[axis]
    first = len(X) + len(layer.learnables)
    states = [
        first + k
        for k, value in enumerate(layer.state_values())
        if len(shape_of(value)) > axis and shape_of(value)[axis] == n
    ]
    return (*range(len(X)), *states)


def _predict_entry(layer: Layer, X: tuple[Any, ...]) -> tuple[CheckEntry, str | None]:
    """The ``predict`` entry, and ``None`` (predict is forward), ``"differs"`` or ``"random"``."""
    names = ", ".join(input_names(layer))
    try:
        predicted = as_outputs(layer, layer.predict(*X))
    except Exception as exc:  # the user's predict: report whatever it raises
        return CheckEntry("predict", "failed", f"predict raised {describe(exc)}"), None
    replay = _Replaying(layer, "compiler", "forward")
    try:
        inputs = (*X, *layer.parameters(), *layer.state_values())
        trained, _ = LayerOp(layer, "tracing").op_forward(*inputs)
        again, _ = LayerOp(layer, "tracing").op_forward(*inputs)
    except Exception as exc:  # reported by the forward category too
        return CheckEntry("predict", "failed", f"forward raised {describe(exc)}"), None
    for k, (a, b) in enumerate(zip(predicted, trained, strict=True)):
        if shape_of(a) != shape_of(b):
            message = f"output {k} of predict has shape {shape_of(a)}, of forward {shape_of(b)}"
            return CheckEntry("predict", "failed", message), None
    if not any(differs(a, b) for a, b in zip(predicted, trained, strict=True)):
        message = (
            f"runs; output {shape_of(predicted[0])}, the same as forward's: every check below "
            f"ran on forward({names}) and so covers predict"
        )
        return CheckEntry("predict", "passed", message), None
    random = any(differs(a, b) for a, b in zip(trained, again, strict=True))
    if random and not replay.generators:
        message = (
            "forward is random (two runs on the same input differ) and draws from no numpy "
            "Generator attribute, so its checks cannot repeat the draws: draw from "
            "self.rng = np.random.default_rng(...) and check_layer replays them"
        )
        return CheckEntry("predict", "failed", message), "random"
    how = "random, its draws replayed for the checks; " if random else ""
    message = (
        f"predict and forward differ (a training-time forward: {how}legitimate): the "
        f"categories below ran on forward({names}) (training), those named 'predict: ...' "
        "on predict (inference)"
    )
    return CheckEntry("predict", "passed", message), "random" if random else "differs"
