"""Layers without a backward (gradient derived by the compiler or by tracing), layers
whose training forward differs from predict, and the seeds' PReLU constructor."""

from __future__ import annotations

import array_api_strict as xps
import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from wrapped_text import wrapped

from autodiff_tutor.errors import ArgumentError, DataFormatError, UnsupportedSyntaxError
from autodiff_tutor.nn import (
    AUTODIFF_MODES,
    SGD,
    Dropout,
    FullyConnected,
    Layer,
    LayerOp,
    Layout,
    PReLULayer,
    Sequential,
    Softmax,
    train,
)
from autodiff_tutor.ops import channel_shape, reduce_to_channels
from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.verify import check_layer


class PlainPReLU(Layer):
    """The seeds' PReLU written with predict only: max(X, 0) + alpha min(0, X)."""

    learnables = ("alpha",)

    def initial_values(self, layout, rng):
        return {"alpha": np.full(channel_shape(layout.format, layout.shape), 0.25)}

    def predict(self, X):
        return np.maximum(X, 0) + self.params["alpha"] * np.minimum(0, X)


class HandPReLU(PlainPReLU):
    """The same layer with the seeds' hand-written backward."""

    def backward(self, X, Y, dY, memory):
        dX = np.where(X > 0, dY, self.params["alpha"] * dY)
        return dX, reduce_to_channels(np.minimum(0, X) * dY, self.format)


def central_differences(f, x, h=1e-6):
    """Central differences of scalar ``f`` at float64 ``x``, element by element."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        g[i] = (f(up) - f(down)) / (2 * h)
    return g


def layer_vjp(layer, mode, X, dY):
    op = LayerOp(layer, mode)
    (Y,), saved = op.op_forward(X, *layer.parameters())
    return Y, op.op_backward((dY,), (True,) * (1 + len(layer.learnables)), saved)


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_a_layer_without_backward_gets_gradients_matching_differences_and_autograd(mode):
    rng = np.random.default_rng(0)
    X, dY = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    layer = PlainPReLU().initialize(X)
    alpha = layer.params["alpha"] + rng.uniform(0, 0.5, (1, 3))
    layer.params["alpha"] = alpha
    Y, (dX, d_alpha) = layer_vjp(layer, mode, X, dY)

    def loss_x(x):
        return np.sum(layer.predict(x) * dY)

    def loss_alpha(a):
        return np.sum(layer.with_params((a,)).predict(X) * dY)

    np.testing.assert_allclose(dX, central_differences(loss_x, X), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(d_alpha, central_differences(loss_alpha, alpha), rtol=1e-7)

    def autograd_loss(x, a):
        return anp.sum((anp.maximum(x, 0) + a * anp.minimum(0, x)) * dY)

    np.testing.assert_allclose(dX, autograd.grad(autograd_loss, 0)(X, alpha), rtol=1e-12)
    np.testing.assert_allclose(d_alpha, autograd.grad(autograd_loss, 1)(X, alpha), rtol=1e-12)
    report = check_layer(PlainPReLU(), (6, 3), autodiff=mode)
    assert report.passed, report
    assert report["gradient"].message.startswith("no backward: derived")
    assert mode in report["gradient"].message


class PortablePReLU(PlainPReLU):
    """The same layer written with the array module of its input."""

    def predict(self, X):
        xp = array_module(X)
        return xp.where(X > 0, X, self.params["alpha"] * X)


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_a_derived_layer_runs_on_strict_arrays(mode):
    report = check_layer(PortablePReLU(), Layout((6, 3), "BC", xp=xps), autodiff=mode)
    assert report.passed, report
    assert report["finite differences"].status == "passed"


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_a_layer_without_backward_trains_like_the_same_layer_with_one(mode):
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((40, 2)), rng.integers(0, 2, 40)
    losses = {}
    for layer_class in (HandPReLU, PlainPReLU):
        model = Sequential([FullyConnected(6), layer_class(), FullyConnected(2), Softmax()])
        model.initialize(X, seed=0)
        history = train(model, X, y, optimizer=SGD(0.1), epochs=15, progress=False, autodiff=mode)
        losses[layer_class.__name__] = history.loss
    assert losses["PlainPReLU"][-1] < losses["PlainPReLU"][0]
    np.testing.assert_allclose(losses["PlainPReLU"], losses["HandPReLU"], rtol=1e-12)


def test_a_hand_written_backward_is_used_in_both_modes():
    calls = []

    class Counted(HandPReLU):
        def backward(self, X, Y, dY, memory):
            calls.append(1)
            return super().backward(X, Y, dY, memory)

    layer = Counted().initialize(np.zeros((2, 3)))
    for mode in AUTODIFF_MODES:
        layer_vjp(layer, mode, np.ones((2, 3)), np.ones((2, 3)))
    assert len(calls) == 2
    assert check_layer(Counted(), (4, 3))["gradient"].message == "from the layer's backward"


def test_unknown_autodiff_mode_is_refused():
    with pytest.raises(ArgumentError, match="autodiff must be 'compiler' or 'tracing'"):
        check_layer(PlainPReLU(), (4, 3), autodiff="symbolic")


class Centering(Layer):
    """Training subtracts the batch mean; predict subtracts a fixed offset of zero."""

    def predict(self, X):
        return X

    def forward(self, X):
        return X - np.mean(X, axis=0, keepdims=True)


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_check_layer_accepts_a_forward_that_differs_from_predict(mode):
    report = check_layer(Centering(), (6, 3), autodiff=mode)
    assert report.passed, report
    assert "predict and forward differ" in report["predict"].message
    assert "ran on forward(X) (training)" in report["predict"].message
    assert report["finite differences"].status == "passed"
    assert report["predict: finite differences"].status == "passed"


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_check_layer_checks_both_functions_and_finds_a_bug_in_forward_only(mode):
    class WrongTraining(Centering):
        def backward(self, X, Y, dY, memory):
            return (dY,)  # right for predict, wrong for forward (the mean is missing)

    report = check_layer(WrongTraining(), (6, 3), autodiff=mode)
    assert [e.category for e in report.failures()] == ["finite differences"]
    assert report["predict: forward"].status == "passed"
    assert report["predict: finite differences"].status == "skipped"

    class RightTraining(Centering):
        def backward(self, X, Y, dY, memory):
            return (dY - np.mean(dY, axis=0, keepdims=True),)

    assert check_layer(RightTraining(), (6, 3), autodiff=mode).passed


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_a_random_forward_is_checked_with_its_draws_replayed(mode):
    report = check_layer(Dropout(0.4), (8, 3), autodiff=mode)
    assert report.passed, report
    assert "random, its draws replayed" in report["predict"].message
    layer = Dropout(0.4).initialize(np.zeros((8, 3)))
    X, dY = np.random.default_rng(2).standard_normal((2, 8, 3))
    Y, (dX,) = layer_vjp(layer, mode, X, dY)
    kept = Y != 0
    np.testing.assert_array_equal(dX, np.where(kept, dY / 0.6, 0.0))


class GlobalRandom(Layer):
    def predict(self, X):
        return X

    def forward(self, X):
        return X * (np.random.rand(*X.shape) > 0.5)


def test_a_random_forward_without_a_generator_is_refused_not_wrong():
    report = check_layer(GlobalRandom(), (6, 3), autodiff="tracing")
    assert report["predict"].status == "failed"
    assert "self.rng = np.random.default_rng" in report["predict"].message
    layer = GlobalRandom().initialize(np.zeros((6, 3)))
    with pytest.raises(ArgumentError, match=wrapped("different values when run again")):
        layer_vjp(layer, "tracing", np.ones((6, 3)), np.ones((6, 3)))


def test_prelu_layer_constructor_follows_the_seeds():
    layer = PReLULayer(4, name="prelu1")
    assert (layer.name, layer.description, layer.type) == (
        "prelu1",
        "PReLU with 4 channels",
        "PReLU",
    )
    layer.initialize(Layout((5, 5, 4, 2), "SSCB"), np.random.default_rng(7))
    alpha = layer.params["alpha"]
    assert alpha.shape == (1, 1, 4, 1)
    np.testing.assert_array_equal(alpha.ravel(), np.random.default_rng(7).uniform(0, 1, 4))
    assert np.all((alpha >= 0) & (alpha < 1)) and len(set(alpha.ravel())) == 4
    assert PReLULayer().description == "PReLU"
    same = PReLULayer(initial_alpha=0.25).initialize(np.zeros((2, 3)))
    assert same.params["alpha"].tolist() == [[0.25] * 3]
    with pytest.raises(DataFormatError, match="has 4 channels but its input has 3"):
        PReLULayer(4).initialize(np.zeros((2, 3)))
    with pytest.raises(ArgumentError, match="positive integer number of channels"):
        PReLULayer(0)


def test_a_layer_the_compiler_cannot_read_is_refused_at_its_line_with_tracing_suggested():
    class Helper(Layer):
        def double(self, X, times=2):  # recursion: the compiler unrolls none
            if times == 0:
                return X
            return 2 * self.double(X, times - 1)

        def predict(self, X):
            return self.double(X) + 1

    X, y = np.random.default_rng(0).standard_normal((4, 2)), np.array([0, 1, 0, 1])
    model = Sequential([FullyConnected(2), Helper(), Softmax()]).initialize(X)
    with pytest.raises(
        UnsupportedSyntaxError, match=r"(?s)'double' calls itself.*autodiff='tracing'"
    ) as info:
        train(model, X, y, epochs=1, progress=False)
    assert info.value.location.text.strip() == "return self.double(X) + 1"
    history = train(model, X, y, epochs=3, progress=False, autodiff="tracing")
    assert len(history.loss) == 3
    assert check_layer(Helper(), (4, 2), autodiff="tracing").passed
