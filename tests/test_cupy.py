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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_srelu_and_prelu_on_cupy_match_numpy(dtype):
    # op_vjp checks each gradient's dtype against its input's: float32 stays float32
    inputs = tuple(a.astype(dtype) for a in srelu_inputs())
    d_Y = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(dtype)
    gpu = tuple(cupy.asarray(a) for a in inputs)
    tolerance = {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-5}
    for op, n in ((SReLUFunction("SSCB"), 5), (PReLUFunction("SSCB"), 2)):
        (Y,), grads = op_vjp(op, gpu[:n], (cupy.asarray(d_Y),))
        (Y_np,), grads_np = op_vjp(op, inputs[:n], (d_Y,))
        assert isinstance(Y, cupy.ndarray) and Y.dtype == dtype
        np.testing.assert_allclose(cupy.asnumpy(Y), Y_np, **tolerance)
        for g, g_np in zip(grads, grads_np, strict=True):
            assert isinstance(g, cupy.ndarray) and g.dtype == dtype
            np.testing.assert_allclose(cupy.asnumpy(g), g_np, **tolerance)


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


def _net(W1, b1, tl, al, tr, ar, W2, X, Y):
    a = SRELU_BC(X @ W1 + b1, tl, al, tr, ar)
    r = a @ W2 - Y
    return np.sum(r * r) / X.shape[0]


SRELU_BC = SReLUFunction("BC")


def _rnn(Wh, Wx, b, xs, h0):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx + b)
        total = total + (h * h).sum()
    return total


def test_compiled_gradients_on_cupy_match_numpy():
    # value_and_grad of compiled functions (a custom op's network, a loop of matrix
    # products) on cupy arrays, three calls: cupy gradients, numpy's numbers
    from autodiff_tutor import value_and_grad

    rng = np.random.default_rng(4)
    net = (
        rng.normal(size=(3, 4)),
        rng.normal(size=4),
        np.full((1, 4), -0.4),
        np.full((1, 4), 0.2),
        np.full((1, 4), 0.5),
        np.full((1, 4), 1.5),
        rng.normal(size=(4, 2)),
        rng.normal(size=(6, 3)),
        rng.normal(size=(6, 2)),
    )
    rnn = (
        0.4 * rng.normal(size=(5, 5)),
        rng.normal(size=(3, 5)),
        rng.normal(size=5),
        rng.normal(size=(4, 2, 3)),
        rng.normal(size=(2, 5)),
    )
    for fn, args, wrt in ((_net, net, list(range(7))), (_rnn, rnn, [0, 1, 2])):
        expected = value_and_grad(fn, wrt=wrt)(*args)[1]
        both = value_and_grad(fn, wrt=wrt)
        for _ in range(3):
            _, grads = both(*(cupy.asarray(a) for a in args))
        for g, g_np in zip(grads, expected, strict=True):
            assert isinstance(g, cupy.ndarray)
            np.testing.assert_allclose(cupy.asnumpy(g), g_np, rtol=1e-10, atol=1e-12)
