"""Layers: initialize from a layout, check_layer, and a whole network against autograd."""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from autodiff_tutor.errors import ArgumentError, BackwardOutputError, DataFormatError
from autodiff_tutor.nn import (
    CrossEntropy,
    FullyConnected,
    Layer,
    Layout,
    PReLULayer,
    Sequential,
    Softmax,
    SReLULayer,
    one_hot,
)
from autodiff_tutor.verify import check_layer, check_op


def test_initialize_sizes_channel_parameters_from_a_layout():
    layer = SReLULayer().initialize(Layout((8, 8, 3, 16), "SSCB"))
    assert layer.format == "SSCB"
    assert {k: v.shape for k, v in layer.params.items()} == dict.fromkeys(
        ("tl", "al", "tr", "ar"), (1, 1, 3, 1)
    )
    assert np.all(layer.params["tl"] < layer.params["tr"])


def test_initialize_from_an_example_and_keeps_existing_values():
    layer = PReLULayer()
    layer.params["alpha"] = np.full((1, 4), 0.1)
    layer.initialize(np.zeros((2, 4)))
    assert layer.params["alpha"].tolist() == [[0.1] * 4]
    fc = FullyConnected(3).initialize(np.zeros((5, 7), np.float32))
    assert fc.params["W"].shape == (7, 3) and fc.params["W"].dtype == np.float32


def test_initialize_errors_are_clear():
    with pytest.raises(DataFormatError, match="cannot tell which axis"):
        SReLULayer().initialize(np.zeros((2, 3, 4)))
    with pytest.raises(DataFormatError, match="format 'SSCB' but is initialized for inputs in"):
        SReLULayer("SSCB").initialize(Layout((4, 3), "BC"))
    with pytest.raises(DataFormatError, match="FullyConnected takes inputs in format 'BC'"):
        FullyConnected(3).initialize(Layout((4, 4, 3, 2), "SSCB"))
    with pytest.raises(
        ArgumentError,
        match=r"(?s)no value for 'W', 'b'.*test_nn_layers.py.*hint: call layer.initialize",
    ):
        FullyConnected(3).predict(np.zeros((2, 2)))
    with pytest.raises(ArgumentError, match="positive integer output size"):
        FullyConnected(0)


@pytest.mark.parametrize(
    ("layer", "sample"),
    [
        (FullyConnected(4), (6, 3)),
        (Softmax(), (6, 3)),
        (PReLULayer(), (6, 3)),
        (SReLULayer(), (6, 3)),
        (PReLULayer(), Layout((3, 2, 4, 5), "SSCB")),
        (SReLULayer(), Layout((3, 2, 4, 5), "SSCB")),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Layer) else str(getattr(v, "format", v)),
)
def test_built_in_layers_pass_check_layer(layer, sample):
    report = check_layer(layer, sample)
    assert report.passed, str(report)
    assert report["finite differences"].status == "passed"
    assert report["gradient shapes"].status == "passed"


def test_cross_entropy_passes_check_op():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((5, 3))
    P = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    report = check_op(CrossEntropy(), P, one_hot(np.array([0, 2, 1, 1, 0]), 3))
    assert report.passed, str(report)


class Scale(Layer):
    """A user's layer with a custom backward: y = s * X, one learnable s per feature."""

    learnables = ("s",)

    def __init__(self, forget_batch_sum=False):
        super().__init__("BC")
        self.forget_batch_sum = forget_batch_sum

    def initial_values(self, layout, rng):
        return {"s": rng.uniform(0.5, 1.5, (1, layout.shape[1]))}

    def predict(self, X):
        return self.params["s"] * X

    def backward(self, X, Y, dY, memory):
        ds = dY * X if self.forget_batch_sum else np.sum(dY * X, axis=0, keepdims=True)
        return dY * self.params["s"], ds


def test_a_custom_backward_layer_is_checked_like_an_op():
    assert check_layer(Scale(), (5, 3)).passed
    report = check_layer(Scale(forget_batch_sum=True), (5, 3))
    assert {e.category for e in report.failures()} == {"gradient shapes"}
    assert "sum over axes (0,) is missing" in report["gradient shapes"].message


def test_a_wrong_gradient_stops_training_with_a_clear_error():
    model = Sequential([Scale(forget_batch_sum=True)]).initialize(np.zeros((4, 2)))
    Y, tape = model.record(np.ones((4, 2)))
    with pytest.raises(BackwardOutputError, match=r"input 1 \('s'\) has shape \(4, 2\)"):
        model.backward(tape, np.ones_like(Y))


def test_sequential_rejects_non_layers():
    with pytest.raises(ArgumentError, match="item 1 is a ufunc, not a Layer"):
        Sequential([Softmax(), np.tanh])


def network_autograd(params, X, T):
    """The same network written independently with autograd.numpy."""
    (W1, b1), (tl, al, tr, ar), (W2, b2), (alpha,), (W3, b3) = params
    h = X @ W1 + b1
    h = anp.where(h <= tl, tl + al * (h - tl), anp.where(h < tr, h, tr + ar * (h - tr)))
    h = h @ W2 + b2
    h = anp.where(h > 0, h, alpha * h)
    z = h @ W3 + b3
    z = z - anp.max(z, axis=1, keepdims=True)
    log_p = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
    return -anp.sum(T * log_p) / X.shape[0]


def test_network_gradients_match_autograd():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((7, 4))
    T = one_hot(rng.integers(0, 3, 7), 3)
    model = Sequential(
        [
            FullyConnected(5),
            SReLULayer(),
            FullyConnected(6),
            PReLULayer(),
            FullyConnected(3),
            Softmax(),
        ]
    ).initialize(X, seed=1)
    P, tape = model.record(X)
    (value,), saved = CrossEntropy().op_forward(P, T)
    d_P, _ = CrossEntropy().op_backward((np.float64(1.0),), (True, False), saved)
    grads = model.backward(tape, d_P)

    # autograd.numpy's where does not sum gradients over broadcast axes: broadcast first
    def full(p):
        return anp.broadcast_to(p, (7, p.shape[1]))

    layers = [layer for layer in model.layers if layer.learnables]

    def loss(flat):
        params, k = [], 0
        for layer in layers:
            n = len(layer.learnables)
            group = flat[k : k + n]
            if isinstance(layer, (SReLULayer, PReLULayer)):
                group = [full(p) for p in group]
            params.append(tuple(group))
            k += n
        return network_autograd(params, X, T)

    flat = [layer.params[name] for layer in layers for name in layer.learnables]
    expected_value = loss(flat)
    expected = autograd.grad(loss)(flat)
    np.testing.assert_allclose(float(value), expected_value, rtol=1e-12)
    got = list(grads.values())
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)
