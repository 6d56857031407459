"""Networks: the seeds' evaluate/gradient/update training loop, state parameters, and
layers with several inputs and outputs in a graph; gradients against autograd and
central differences."""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.nn import (
    AUTODIFF_MODES,
    SGD,
    Adam,
    Addition,
    Concatenation,
    CrossEntropy,
    FullyConnected,
    Layer,
    Network,
    PReLULayer,
    Sequential,
    Softmax,
    one_hot,
    train,
)
from autodiff_tutor.tracing import evaluate, extract_data, gradient, last_tape
from autodiff_tutor.verify import check_layer

cross_entropy = CrossEntropy()


def model_loss(net, X, T):
    """The seeds' model loss: forward, loss, gradient with respect to the learnables."""
    Y, state = net.forward(X)
    loss = cross_entropy(Y, T)
    return loss, gradient(loss, net.learnables), state


class PlainPReLU(Layer):
    learnables = ("alpha",)

    def initial_values(self, layout, rng):
        return {"alpha": np.full((1, layout.shape[1]), 0.25)}

    def predict(self, X):
        return np.maximum(X, 0) + self.params["alpha"] * np.minimum(0, X)


def autograd_loss(params, X, T):
    (W1, b1), (alpha,), (W2, b2) = params
    h = X @ W1 + b1
    h = anp.maximum(h, 0) + alpha * anp.minimum(0, h)
    z = h @ W2 + b2
    z = z - anp.max(z, axis=1, keepdims=True)
    log_p = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
    return -anp.sum(T * log_p) / X.shape[0]


def data(seed=0, n=12):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 3)), one_hot(rng.integers(0, 2, n), 2)


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
@pytest.mark.parametrize("activation", [PlainPReLU, lambda: PReLULayer(initial_alpha=0.25)])
def test_evaluate_gradient_of_learnables_matches_autograd(mode, activation):
    X, T = data()
    net = Sequential([FullyConnected(4), activation(), FullyConnected(2), Softmax()], mode)
    net.initialize(X, seed=3)
    loss, grads, _ = evaluate(model_loss, net, X, T)
    keys = list(net.learnables)
    assert list(grads) == keys
    params = [(net.layers[0].params["W"], net.layers[0].params["b"])]
    params += [
        (net.layers[1].params["alpha"],),
        (net.layers[2].params["W"], net.layers[2].params["b"]),
    ]
    expected = autograd.grad(autograd_loss)(params, X, T)
    flat = [g for group in expected for g in group]
    np.testing.assert_allclose(float(extract_data(loss)), autograd_loss(params, X, T), rtol=1e-12)
    for key, e in zip(keys, flat, strict=True):
        np.testing.assert_allclose(grads[key], e, rtol=1e-9, atol=1e-12)
    alpha = net.layers[1].params["alpha"].copy()  # and central differences, in float64
    numeric = np.zeros_like(alpha)
    for i in np.ndindex(alpha.shape):
        values = []
        for step in (1e-6, -1e-6):
            net.layers[1].params["alpha"] = alpha.copy()
            net.layers[1].params["alpha"][i] += step
            values.append(float(cross_entropy(net.predict(X), T)))
        numeric[i] = (values[0] - values[1]) / 2e-6
    net.layers[1].params["alpha"] = alpha
    np.testing.assert_allclose(grads[keys[2]], numeric, rtol=1e-6, atol=1e-9)


def test_the_tape_shows_a_layer_with_a_backward_as_one_op():
    X, T = data()
    for mode in AUTODIFF_MODES:
        net = Sequential([FullyConnected(4), PReLULayer(), FullyConnected(2), Softmax()], mode)
        evaluate(model_loss, net.initialize(X), X, T)
        ops = [record.op for record in last_tape().records]
        assert ops == ["FullyConnected", "PReLULayer", "FullyConnected", "Softmax", "crossentropy"]
    net = Sequential([FullyConnected(4), PlainPReLU(), FullyConnected(2), Softmax()], "tracing")
    evaluate(model_loss, net.initialize(X), X, T)
    ops = [record.op for record in last_tape().records]
    assert ops[1:5] == ["maximum", "minimum", "multiply", "add"]  # no backward: traced through
    net = Sequential([FullyConnected(4), PlainPReLU(), FullyConnected(2), Softmax()], "compiler")
    evaluate(model_loss, net.initialize(X), X, T)
    assert [record.op for record in last_tape().records][1] == "PlainPReLU"  # compiled: one op


@pytest.mark.parametrize("optimizer", [lambda: SGD(0.2, momentum=0.5), lambda: Adam(0.05)])
def test_an_evaluate_loop_with_update_trains_exactly_like_train(optimizer):
    X, T = data(1, n=16)
    labels = np.argmax(T, axis=1)

    def network():
        return Sequential([FullyConnected(5), PlainPReLU(), FullyConnected(2), Softmax()])

    net = network().initialize(X, seed=0)
    opt = optimizer()
    losses = []
    for _ in range(8):
        loss, grads, state = evaluate(model_loss, net, X, T)
        opt.update(net, grads)
        losses.append(float(extract_data(loss)))
    reference = network().initialize(X, seed=0)
    history = train(reference, X, labels, optimizer=optimizer(), epochs=8, progress=False)
    np.testing.assert_allclose(losses, history.loss, rtol=1e-12)
    assert losses[-1] < losses[0]
    for key, value in net.learnables.items():
        np.testing.assert_allclose(value, reference.learnables[key], rtol=1e-12)


def test_update_refuses_what_is_not_a_gradient_dict():
    net = Sequential([PlainPReLU()]).initialize(np.zeros((2, 2)))
    with pytest.raises(ArgumentError, match="needs a dict of gradients"):
        SGD().update(net, [np.zeros((1, 2))])
    with pytest.raises(ArgumentError, match="no node named 'nope'"):
        SGD().update(net, {("nope", "alpha"): np.zeros((1, 2))})


class RunningCenter(Layer):
    """Batch-norm-like: training subtracts the batch mean and updates a running mean
    (a state parameter); predict subtracts the running mean."""

    states = ("mean",)

    def initial_state(self, layout, rng):
        return {"mean": np.zeros((1, layout.shape[1]))}

    def predict(self, X):
        return X - self.state["mean"], self.state["mean"]

    def forward(self, X):
        batch = np.mean(X, axis=0, keepdims=True)
        return X - batch, 0.9 * self.state["mean"] + 0.1 * batch


class HandRunningCenter(RunningCenter):
    """The same with the seeds' backward for a state: dLdSout in, dLdSin out."""

    def backward(self, X, Y, dY, d_new_mean, memory):
        n = X.shape[0]
        dX = dY - np.mean(dY, axis=0, keepdims=True) + 0.1 * d_new_mean / n
        return dX, 0.9 * d_new_mean


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
@pytest.mark.parametrize("layer_class", [RunningCenter, HandRunningCenter])
def test_a_state_layer_passes_check_layer_with_gradients_through_its_state(mode, layer_class):
    report = check_layer(layer_class(), (6, 3), autodiff=mode)
    assert report.passed, report
    assert report["initialize"].message == "parameters: mean (1, 3)"
    assert "2 output(s)" in report["forward"].message


def test_a_wrong_state_gradient_is_caught():
    class Forgetful(HandRunningCenter):
        def backward(self, X, Y, dY, d_new_mean, memory):
            return dY - np.mean(dY, axis=0, keepdims=True), 0.9 * d_new_mean  # no 0.1/n term

    report = check_layer(Forgetful(), (6, 3))
    assert [e.category for e in report.failures()] == ["finite differences"]
    assert "d/d X" in report["finite differences"].message


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_forward_returns_the_new_state_and_reset_state_restores_it(mode):
    X, T = data(2)
    net = Sequential([FullyConnected(3), RunningCenter(), FullyConnected(2), Softmax()], mode)
    net.initialize(X)
    assert list(net.state) == [("RunningCenter", "mean")]
    np.testing.assert_array_equal(net.state[("RunningCenter", "mean")], np.zeros((1, 3)))
    hidden = X @ net.layers[0].params["W"] + net.layers[0].params["b"]
    _, _, state = evaluate(model_loss, net, X, T)
    expected = 0.1 * np.mean(hidden, axis=0, keepdims=True)
    np.testing.assert_allclose(extract_data(state[("RunningCenter", "mean")]), expected)
    np.testing.assert_array_equal(net.state[("RunningCenter", "mean")], np.zeros((1, 3)))
    net.state = state  # kept only when the caller says so, as in the seeds
    np.testing.assert_allclose(net.state[("RunningCenter", "mean")], expected)
    assert isinstance(net.state[("RunningCenter", "mean")], np.ndarray)
    _, state = net.forward(X)  # outside evaluate: plain arrays
    np.testing.assert_allclose(state[("RunningCenter", "mean")], 0.9 * expected + expected)
    net.reset_state()
    np.testing.assert_array_equal(net.state[("RunningCenter", "mean")], np.zeros((1, 3)))
    # train keeps the state of every step
    train(net, X, np.argmax(T, axis=1), epochs=2, progress=False)
    assert np.all(net.state[("RunningCenter", "mean")] != 0)


class SplitHalves(Layer):
    """Two outputs: the first and the second half of the channels (no backward)."""

    num_outputs = 2

    def predict(self, X):
        half = X.shape[1] // 2
        return X[:, :half], X[:, half:]


def graph_network(mode):
    """X -> fc -> split -> (a, b); a -> fa, b -> fb; fa + fb -> cat with X -> out."""
    net = Network(inputs=("X",), autodiff=mode)
    net.add("fc", FullyConnected(4))
    net.add("split", SplitHalves())
    net.add("fa", FullyConnected(3), inputs=("split",))
    net.add("fb", FullyConnected(3), inputs=("split:1",))
    net.add("sum", Addition(), inputs=("fa", "fb"))
    net.add("cat", Concatenation(), inputs=("sum", "X"))
    net.add("out", FullyConnected(2))
    net.add("softmax", Softmax())
    return net


def graph_autograd(p, X, T):
    h = X @ p["fc/W"] + p["fc/b"]
    a = h[:, :2] @ p["fa/W"] + p["fa/b"]
    b = h[:, 2:] @ p["fb/W"] + p["fb/b"]
    z = anp.concatenate([a + b, X], axis=1) @ p["out/W"] + p["out/b"]
    z = z - anp.max(z, axis=1, keepdims=True)
    return -anp.sum(T * (z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True)))) / X.shape[0]


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_a_graph_with_two_input_and_two_output_layers_matches_autograd(mode):
    X, T = data(3)
    net = graph_network(mode).initialize(X, seed=1)
    params = {f"{node}/{name}": v for (node, name), v in net.learnables.items()}
    expected = autograd.grad(graph_autograd)(params, X, T)
    _, grads, _ = evaluate(model_loss, net, X, T)
    Y, tape = net.record(X)
    (value,), saved = cross_entropy.op_forward(Y, T)
    d_Y, _ = cross_entropy.op_backward((np.float64(1.0),), (True, False), saved)
    by_hand = net.backward(tape, d_Y)
    np.testing.assert_allclose(float(value), graph_autograd(params, X, T), rtol=1e-12)
    for (node, name), g in grads.items():
        np.testing.assert_allclose(g, expected[f"{node}/{name}"], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(by_hand[(node, name)], g, rtol=1e-12, atol=1e-14)

    def loss_of_W(W):
        net.layer("fa").params["W"] = W
        out = net.predict(X)
        return -np.sum(T * np.log(out)) / X.shape[0]

    W = net.layer("fa").params["W"].copy()
    h, numeric = 1e-6, np.zeros_like(W)
    for i in np.ndindex(W.shape):
        up, down = W.copy(), W.copy()
        up[i] += h
        down[i] -= h
        numeric[i] = (loss_of_W(up) - loss_of_W(down)) / (2 * h)
    net.layer("fa").params["W"] = W
    np.testing.assert_allclose(grads[("fa", "W")], numeric, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_check_layer_covers_multi_input_and_multi_output_layers(mode):
    for layer, sample in [
        (Addition(), [(5, 3), (5, 3)]),
        (Addition(3), [(5, 2), (5, 2), (5, 2)]),
        (Concatenation(), [(5, 3), (5, 1)]),
        (SplitHalves(), (5, 4)),
    ]:
        report = check_layer(layer, sample, autodiff=mode)
        assert report.passed, report
        assert report["finite differences"].status == "passed"

    class WrongAddition(Addition):
        def backward(self, X1, X2, Y, dY, memory):
            return dY, 2 * dY

    report = check_layer(WrongAddition(), [(5, 3), (5, 3)])
    assert [e.category for e in report.failures()] == ["finite differences"]
    assert "d/d X2" in report["finite differences"].message


def test_network_building_errors_are_clear():
    net = Network()
    with pytest.raises(ArgumentError, match="reads 'nowhere', which is not an input"):
        net.add("a", FullyConnected(2), inputs=("nowhere",))
    with pytest.raises(ArgumentError, match="takes 2 input\\(s\\), given 1"):
        net.add("sum", Addition())
    net.add("a", FullyConnected(2))
    with pytest.raises(ArgumentError, match="already has a node or input named 'a'"):
        net.add("a", FullyConnected(2))
    bad = type("Bad", (Layer,), {"num_outputs": 2, "predict": lambda self, X: X})()
    with pytest.raises(ArgumentError, match="predict returned one value"):
        Sequential([bad]).initialize(np.zeros((2, 2)))


class Recurrent(Layer):
    """A recurrent layer: the hidden state h (one row per sequence) is a state parameter."""

    learnables = ("W", "U")
    states = ("h",)

    def initial_values(self, layout, rng):
        return {"W": 0.5 * rng.standard_normal((layout.shape[1], 3)), "U": 0.5 * np.eye(3)}

    def initial_state(self, layout, rng):
        return {"h": np.zeros((layout.shape[0], 3))}

    def predict(self, X):
        h = np.tanh(X @ self.params["W"] + self.state["h"] @ self.params["U"])
        return h, h


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_a_recurrent_hidden_state_is_carried_between_calls_and_reset(mode):
    rng = np.random.default_rng(5)
    X1, X2 = rng.standard_normal((2, 4, 2))
    T = one_hot(rng.integers(0, 2, 4), 2)
    report = check_layer(Recurrent(), (4, 2), autodiff=mode)
    assert report.passed, report
    assert "4 observations and 1 observation" in report["forward"].message

    net = Sequential([Recurrent(), FullyConnected(2), Softmax()], mode).initialize(X1, seed=2)
    W, U = net.layers[0].params["W"], net.layers[0].params["U"]
    Wo, bo = net.layers[1].params["W"], net.layers[1].params["b"]
    _, _, state = evaluate(model_loss, net, X1, T)
    h1 = np.tanh(X1 @ W)
    np.testing.assert_allclose(extract_data(state[("Recurrent", "h")]), h1, rtol=1e-12)
    net.state = state
    _, grads, state = evaluate(model_loss, net, X2, T)

    def step_loss(W, U, Wo, bo):  # the second step, h1 carried as data (as in the seeds)
        h2 = anp.tanh(X2 @ W + h1 @ U)
        z = h2 @ Wo + bo
        z = z - anp.max(z, axis=1, keepdims=True)
        return -anp.sum(T * (z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True)))) / 4

    expected = autograd.grad(step_loss, (0, 1, 2, 3))(W, U, Wo, bo)
    for key, e in zip(net.learnables, expected, strict=True):
        np.testing.assert_allclose(grads[key], e, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        extract_data(state[("Recurrent", "h")]), np.tanh(X2 @ W + h1 @ U), rtol=1e-12
    )
    net.reset_state()
    np.testing.assert_array_equal(net.state[("Recurrent", "h")], np.zeros((4, 3)))


@pytest.mark.parametrize("mode", AUTODIFF_MODES)
def test_predict_inside_evaluate_is_differentiable_and_uses_predict(mode):
    X, T = data(6)
    net = Sequential([FullyConnected(3), RunningCenter(), FullyConnected(2), Softmax()], mode)
    net.initialize(X, seed=0)
    net.layers[1].state["mean"] = np.full((1, 3), 0.3)

    def predict_loss(net, X, T):
        loss = cross_entropy(net.predict(X), T)
        return loss, gradient(loss, net.learnables)

    _, grads = evaluate(predict_loss, net, X, T)
    W, b = net.layers[0].params["W"], net.layers[0].params["b"]
    Wo, bo = net.layers[2].params["W"], net.layers[2].params["b"]

    def loss(W, b, Wo, bo):  # predict subtracts the running mean, not the batch mean
        z = (X @ W + b - 0.3) @ Wo + bo
        z = z - anp.max(z, axis=1, keepdims=True)
        return -anp.sum(T * (z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True)))) / len(X)

    expected = autograd.grad(loss, (0, 1, 2, 3))(W, b, Wo, bo)
    for key, e in zip(net.learnables, expected, strict=True):
        np.testing.assert_allclose(grads[key], e, rtol=1e-9, atol=1e-12)


def test_the_course_grader_checks_a_state_layer():
    from autodiff_tutor.course import check_backward

    X = np.random.default_rng(0).standard_normal((6, 3))
    assert check_backward(HandRunningCenter(), X).passed

    class Forgetful(HandRunningCenter):
        def backward(self, X, Y, dY, d_new_mean, memory):
            return dY, 0.9 * d_new_mean

    feedback = check_backward(Forgetful(), X)
    assert not feedback.passed and "finite differences" in feedback.message


def test_a_layer_object_is_one_node() -> None:
    """The same layer object at two nodes would have its parameters stepped by one
    node's gradient only: refused where the network is built, naming both nodes."""
    shared = FullyConnected(3)
    with pytest.raises(ArgumentError) as refused:
        Sequential([shared, Softmax(), shared])
    assert "is already node 'FullyConnected'" in refused.value.message
    assert refused.value.location.filename == __file__
    Sequential([FullyConnected(3), Softmax(), FullyConnected(3)])  # two layers: two nodes
