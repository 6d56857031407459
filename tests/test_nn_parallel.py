"""Data-parallel training on a real Dask ``LocalCluster`` (processes, 2 workers of one
thread): compiled gradients from a module and from a test body run on the workers and
match the client's; shard results combine in shard order whichever worker computed
them; training in parallel matches the single-process loop; a worker that dies
mid-epoch is replaced by the engine without changing the result; a traced value sent
to a worker arrives without its trace (the seeds' pitfall)."""

import numpy as np
import parallel_functions as funcs
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, value_and_grad
from autodiff_tutor.errors import TracingError
from autodiff_tutor.nn import SGD, FullyConnected, Sequential, Softmax, SReLULayer, train
from autodiff_tutor.tracing import evaluate, gradient, traced

distributed = pytest.importorskip("distributed")
from autodiff_tutor.nn.parallel import ParallelGradient, train_parallel  # noqa: E402

RNG = np.random.default_rng(7)
X = RNG.normal(size=(24, 3))
Y = RNG.normal(size=24)
LABELS = (X[:, 0] + X[:, 1] > 0).astype(int)
W = RNG.normal(size=3)


def start_cluster():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    return cluster, distributed.Client(cluster)


@pytest.fixture(scope="module")
def client():
    cluster, client = start_cluster()
    yield client
    client.close()
    cluster.close()


def workers_of(client):
    return sorted(client.scheduler_info()["workers"])


def network():
    model = Sequential([FullyConnected(4), SReLULayer(), FullyConnected(2), Softmax()])
    return model.initialize(X)


def test_compiled_gradients_from_a_module_and_a_body_match_on_the_workers(client):
    @differentiable
    def body_loss(w, X, y):  # sent by value, as from a notebook cell
        return np.sum(np.log1p(np.exp(X @ w)) - y * (X @ w)) / X.shape[0]

    for loss in (funcs.mean_squared_error, body_loss):
        both = value_and_grad(loss)
        on_worker = client.submit(both, W, X, Y, pure=False).result()
        here = both(W, X, Y)
        np.testing.assert_allclose(on_worker[0], here[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(on_worker[1], here[1], rtol=1e-12, atol=1e-12)
        oracle = central_difference(loss.fn, [W, X, Y], 0)
        np.testing.assert_allclose(on_worker[1], oracle, rtol=1e-6, atol=1e-8)


def test_shards_average_to_the_whole_whichever_worker_computes_them(client):
    both = ParallelGradient(client, value_and_grad(funcs.mean_squared_error), X, Y, shards=2)
    a, b = workers_of(client)
    value, slope = both(W, workers=[a, b])
    swapped_value, swapped_slope = both(W, workers=[b, a])
    assert value == swapped_value and np.array_equal(slope, swapped_slope)
    whole_value, whole_slope = value_and_grad(funcs.mean_squared_error)(W, X, Y)
    np.testing.assert_allclose(value, whole_value, rtol=1e-12)
    np.testing.assert_allclose(slope, whole_slope, rtol=1e-12, atol=1e-14)


def test_tracing_inside_evaluate_on_the_workers(client):
    def traced_loss(w, X, y):  # the gradient is taken inside evaluate, on the worker
        def loss_and_gradient(w):
            residual = np.tanh(X @ w) - y
            loss = np.sum(residual * residual) / X.shape[0]
            return loss, gradient(loss, w)

        return evaluate(loss_and_gradient, traced(w))

    value, slope = ParallelGradient(client, traced_loss, X, Y, shards=3)(W)
    whole_value, whole_slope = value_and_grad(funcs.mean_squared_error)(W, X, Y)
    np.testing.assert_allclose(value, whole_value, rtol=1e-12)
    np.testing.assert_allclose(slope, whole_slope, rtol=1e-12, atol=1e-14)


def test_training_in_parallel_matches_the_single_process_loop(client):
    serial, parallel = network(), network()
    kwargs = dict(optimizer=None, epochs=3, batch_size=10, progress=False, seed=3)
    expected = train(serial, X, LABELS, **{**kwargs, "optimizer": SGD(0.1)})
    history = train_parallel(client, parallel, X, LABELS, **{**kwargs, "optimizer": SGD(0.1)})
    np.testing.assert_allclose(history.loss, expected.loss, rtol=1e-12)
    for key, value in serial.learnables.items():
        np.testing.assert_allclose(parallel.learnables[key], value, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("autodiff", ["compiler", "tracing"])
def test_a_training_step_does_not_depend_on_which_worker_computed_which_shard(client, autodiff):
    a, b = workers_of(client)
    results = []
    for workers in ([a, b], [b, a]):
        model = network()
        history = train_parallel(
            client, model, X, LABELS, optimizer=SGD(0.1), epochs=2, batch_size=12,
            progress=False, autodiff=autodiff, workers=workers,
        )  # fmt: skip
        results.append((history.loss, model.learnables))
    (loss_ab, params_ab), (loss_ba, params_ba) = results
    assert loss_ab == loss_ba
    assert all(np.array_equal(params_ab[k], params_ba[k]) for k in params_ab)


def test_a_traced_value_sent_to_a_worker_arrives_without_its_trace(client):
    def on_the_worker(shipped):
        def fun(x):
            return gradient(np.sum(x * shipped), shipped)

        return evaluate(fun, traced([3.0, 4.0]))

    with pytest.raises(TracingError) as caught:
        client.submit(on_the_worker, traced([1.0, 2.0]), pure=False).result()
    assert "pickled (sent to another process" in caught.value.message
    assert "send the" in caught.value.hint and "gradients" in caught.value.hint


def test_a_worker_killed_mid_epoch_leaves_the_training_result_unchanged(tmp_path):
    cluster, client = start_cluster()
    try:
        marker = tmp_path / "killed"
        kwargs = dict(epochs=2, batch_size=12, progress=False, seed=1)
        calm, killed = network(), network()
        expected = train_parallel(client, calm, X, LABELS, optimizer=SGD(0.1), **kwargs)
        history = train_parallel(
            client, killed, X, LABELS, optimizer=SGD(0.1),
            loss=funcs.CrossEntropyThatKillsItsWorker(marker), **kwargs,
        )  # fmt: skip
        assert marker.exists()  # a worker did die, in the first step
        assert history.loss == expected.loss
        assert all(np.array_equal(killed.learnables[k], v) for k, v in calm.learnables.items())
    finally:
        client.close()
        cluster.close()
