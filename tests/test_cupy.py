"""The custom ops, checks, layers and training loop on cupy arrays (needs cupy and a GPU).

Skipped with a reason where cupy is not installed or sees no CUDA device (the ``gpu``
marker, see ``conftest.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from autodiff_tutor.nn import Adam, FullyConnected, Sequential, Softmax, SReLULayer, train
from autodiff_tutor.ops import PReLUFunction, SReLUFunction, op_vjp
from autodiff_tutor.verify import check_layer, check_op

cupy = pytest.importorskip("cupy", reason="cupy is not installed: no GPU tests")
pytestmark = pytest.mark.gpu


def srelu_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return (
        1.5 * rng.standard_normal((2, 3, 4, 5)),
        rng.uniform(-1.0, -0.2, (1, 1, 4, 1)),
        rng.uniform(0.0, 1.0, (1, 1, 4, 1)),
        rng.uniform(0.2, 1.0, (1, 1, 4, 1)),
        rng.uniform(0.0, 2.0, (1, 1, 4, 1)),
    )


def test_srelu_and_prelu_on_cupy_match_numpy():
    inputs = srelu_inputs()
    d_Y = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    gpu = tuple(cupy.asarray(a) for a in inputs)
    for op, n in ((SReLUFunction("SSCB"), 5), (PReLUFunction("SSCB"), 2)):
        (Y,), grads = op_vjp(op, gpu[:n], (cupy.asarray(d_Y),))
        (Y_np,), grads_np = op_vjp(op, inputs[:n], (d_Y,))
        assert isinstance(Y, cupy.ndarray)
        np.testing.assert_allclose(cupy.asnumpy(Y), Y_np, rtol=1e-12)
        for g, g_np in zip(grads, grads_np, strict=True):
            assert isinstance(g, cupy.ndarray)
            np.testing.assert_allclose(cupy.asnumpy(g), g_np, rtol=1e-10, atol=1e-12)


def test_check_op_and_check_layer_run_their_gpu_pass():
    report = check_op(SReLUFunction("SSCB"), *srelu_inputs())
    assert report.passed, str(report)
    assert report["GPU"].status == "passed", report["GPU"].message
    report = check_layer(SReLULayer(), (6, 3))
    assert report["GPU"].status == "passed", report["GPU"].message


def test_training_on_cupy_matches_numpy():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((64, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(np.int64)

    def model():
        return Sequential([FullyConnected(8), SReLULayer(), FullyConnected(2), Softmax()])

    cpu = train(model().initialize(X), X, y, optimizer=Adam(0.03), epochs=10, progress=False)
    X_gpu, y_gpu = cupy.asarray(X), cupy.asarray(y)
    gpu_model = model().initialize(X_gpu)
    gpu = train(gpu_model, X_gpu, y_gpu, optimizer=Adam(0.03), epochs=10, progress=False)
    assert all(
        isinstance(v, cupy.ndarray) for layer in gpu_model.layers for v in layer.params.values()
    )
    np.testing.assert_allclose(gpu.loss, cpu.loss, rtol=1e-9)


def test_formatted_cupy_arrays_keep_their_labels_and_module():
    from autodiff_tutor.ops import dims, formatted, srelu, strip_dims
    from autodiff_tutor.tracing import evaluate, gradient, traced

    inputs = srelu_inputs()
    gpu = [cupy.asarray(a) for a in inputs]
    X = formatted(gpu[0], "SSCB")
    Y = srelu(X, *gpu[1:])
    assert dims(Y) == "SSCB" and isinstance(strip_dims(Y), cupy.ndarray)
    pooled = cupy.sum(strip_dims(Y), axis=(0, 1))
    assert dims(formatted(pooled, "CB").T) == "BC"
    np.testing.assert_allclose(cupy.asnumpy(strip_dims(Y)), srelu(*inputs, fmt="SSCB"))

    def loss(X):
        return gradient(srelu(X, *gpu[1:]).sum(), X)

    d_X = evaluate(loss, traced(gpu[0], "SSCB"))
    d_X_np = evaluate(lambda X: gradient(srelu(X, *inputs[1:]).sum(), X), traced(inputs[0], "SSCB"))
    assert dims(d_X) == "SSCB" and isinstance(strip_dims(d_X), cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(strip_dims(d_X)), strip_dims(d_X_np))
