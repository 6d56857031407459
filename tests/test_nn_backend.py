"""Backend independence: ops, checks, layers and training on a strict array library.

``array_api_strict`` only offers the array API standard; here its arrays also refuse
to be converted to numpy, so any hidden ``np.asarray(X)`` on the user's data fails.
"""

from __future__ import annotations

import contextlib

import array_api_strict as xps
import numpy as np
import pytest
from array_api_strict._array_object import Array

from autodiff_tutor.nn import (
    AUTODIFF_MODES,
    SGD,
    Adam,
    CrossEntropy,
    Dropout,
    FullyConnected,
    Layer,
    Layout,
    PReLULayer,
    Sequential,
    Softmax,
    SReLULayer,
    accuracy,
    one_hot,
    train,
)
from autodiff_tutor.ops import PReLUFunction, SReLUFunction, op_vjp
from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.tracing import evaluate, extract_data, gradient
from autodiff_tutor.verify import check_layer, check_op


class ConvertedToNumpy(AssertionError):
    pass


@contextlib.contextmanager
def numpy_conversion_forbidden():
    def refuse(self, *args, **kwargs):
        raise ConvertedToNumpy("a strict array was converted to numpy")

    saved = {name: getattr(Array, name) for name in ("__array__", "__buffer__", "__dlpack__")}
    try:
        for name in saved:
            setattr(Array, name, refuse)
        yield
    finally:
        for name, method in saved.items():
            setattr(Array, name, method)


def to_numpy(x):
    return np.asarray(x)  # only outside numpy_conversion_forbidden, to compare results


def test_the_guard_really_forbids_conversion():
    with numpy_conversion_forbidden(), pytest.raises(ConvertedToNumpy):
        np.asarray(xps.ones(2))


def srelu_inputs(rng):
    return (
        1.5 * rng.standard_normal((5, 3)),
        rng.uniform(-1.0, -0.2, (1, 3)),
        rng.uniform(0.0, 1.0, (1, 3)),
        rng.uniform(0.2, 1.0, (1, 3)),
        rng.uniform(0.0, 2.0, (1, 3)),
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_srelu_and_prelu_run_on_strict_arrays_and_match_numpy(dtype):
    rng = np.random.default_rng(0)
    inputs = tuple(a.astype(dtype) for a in srelu_inputs(rng))
    d_Y = rng.standard_normal((5, 3)).astype(dtype)
    strict = tuple(xps.asarray(a) for a in inputs)
    with numpy_conversion_forbidden():
        (Y,), grads = op_vjp(SReLUFunction("BC"), strict, (xps.asarray(d_Y),))
        (Z,), (d_X, d_alpha) = op_vjp(
            PReLUFunction("BC"), strict[:2], (xps.asarray(d_Y),)
        )  # alpha = tl here: any channel-wise array will do
    assert all(isinstance(g, Array) for g in (Y, Z, d_X, d_alpha, *grads))
    (Y_np,), grads_np = op_vjp(SReLUFunction("BC"), inputs, (d_Y,))
    np.testing.assert_array_equal(to_numpy(Y), Y_np)
    for g, g_np in zip(grads, grads_np, strict=True):
        assert g.dtype == getattr(xps, dtype)
        np.testing.assert_array_equal(to_numpy(g), g_np)


def test_check_op_and_check_layer_run_on_strict_arrays():
    rng = np.random.default_rng(1)
    strict = tuple(xps.asarray(a) for a in srelu_inputs(rng))
    P = xps.asarray(rng.dirichlet(np.ones(3), 4))
    T = one_hot(xps.asarray([0, 2, 1, 1]), 3)
    with numpy_conversion_forbidden():
        reports = [
            check_op(SReLUFunction("BC"), *strict),
            check_op(PReLUFunction("BC"), *strict[:2]),
            check_op(CrossEntropy(), P, T),
            check_layer(SReLULayer(), Layout((6, 3), "BC", xp=xps)),
            check_layer(FullyConnected(2), Layout((6, 3), "BC", xp=xps)),
            check_layer(Softmax(), Layout((6, 3), "BC", xp=xps)),
        ]
    for report in reports:
        assert report.passed, str(report)
        assert report["finite differences"].status == "passed"
        assert report["GPU"].status == "skipped"


@pytest.mark.parametrize("optimizer", [lambda: Adam(0.03), lambda: SGD(0.1, 0.9)])
def test_training_on_strict_arrays_matches_numpy(optimizer):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((60, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(np.int64)  # XOR-like quadrants

    def model():
        return Sequential(
            [FullyConnected(8), SReLULayer(), PReLULayer(), FullyConnected(2), Softmax()]
        )

    numpy_model = model().initialize(X, seed=3)
    numpy_history = train(
        numpy_model, X, y, optimizer=optimizer(), epochs=20, batch_size=16, progress=False
    )
    X_strict, y_strict = xps.asarray(X), xps.asarray(y)
    with numpy_conversion_forbidden():
        strict_model = model().initialize(X_strict, seed=3)
        strict_history = train(
            strict_model,
            X_strict,
            y_strict,
            optimizer=optimizer(),
            epochs=20,
            batch_size=16,
            progress=False,
        )
        strict_accuracy = accuracy(strict_model, X_strict, y_strict)
    assert all(isinstance(v, Array) for layer in strict_model.layers for v in layer.params.values())
    np.testing.assert_allclose(strict_history.loss, numpy_history.loss, rtol=1e-10)
    assert strict_history.final_loss < strict_history.loss[0]
    assert strict_accuracy == accuracy(numpy_model, X, y)


class PortablePReLU(Layer):
    """A PReLU with no backward, written with the input's array module."""

    learnables = ("alpha",)

    def initial_values(self, layout, rng):
        return {"alpha": np.full((1, layout.shape[1]), 0.25)}

    def predict(self, X):
        xp = array_module(X)
        return xp.where(X > 0, X, self.params["alpha"] * X)


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_derived_layers_and_the_evaluate_loop_on_strict_arrays_match_numpy(mode):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((24, 2))
    T = one_hot(rng.integers(0, 2, 24), 2)
    loss_op = CrossEntropy()

    def model_loss(net, X, T):
        Y, _ = net.forward(X)
        loss = loss_op(Y, T)
        return loss, gradient(loss, net.learnables)

    losses = {}
    for name, (X_in, T_in) in {"numpy": (X, T), "strict": (xps.asarray(X), xps.asarray(T))}.items():
        with numpy_conversion_forbidden() if name == "strict" else contextlib.nullcontext():
            net = Sequential(
                [FullyConnected(6), PortablePReLU(), Dropout(0.2), FullyConnected(2), Softmax()],
                mode,
            ).initialize(X_in, seed=1)
            optimizer = Adam(0.05)
            losses[name] = []
            for _ in range(5):
                loss, grads = evaluate(model_loss, net, X_in, T_in)
                optimizer.update(net, grads)
                losses[name].append(float(extract_data(loss)))
        if name == "strict":
            assert all(isinstance(g, Array) for g in grads.values())
    np.testing.assert_allclose(losses["strict"], losses["numpy"], rtol=1e-10)
