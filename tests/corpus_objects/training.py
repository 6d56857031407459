"""Training loops over a model object: ``value_and_grad(model.loss, wrt=["self.W",
...])`` made once, then each step rebinds the attributes (``model.W = model.W - lr *
dW``); every step's gradient is compared with central differences at the new values."""

import numpy as np

from corpus_objects import program

STEPS = 4


class LinearModel:
    def __init__(self, d, rng):
        self.W = 0.1 * rng.normal(size=d)
        self.b = np.array(0.0)

    def loss(self, X, y):
        return np.mean((X @ self.W + self.b - y) ** 2)


@program("training_loops", wrt=("self.W", "self.b"), steps=STEPS)
def linear_regression_training(rng):
    return LinearModel(3, rng).loss, (rng.normal(size=(6, 3)), rng.normal(size=6))


class TwoLayerNet:
    def __init__(self, sizes, rng):
        self.params = {
            "W1": 0.5 * rng.normal(size=(sizes[0], sizes[1])),
            "b1": np.zeros(sizes[1]),
            "W2": 0.5 * rng.normal(size=(sizes[1], sizes[2])),
            "b2": np.zeros(sizes[2]),
        }

    def forward(self, X):
        h = np.tanh(X @ self.params["W1"] + self.params["b1"])
        return h @ self.params["W2"] + self.params["b2"]

    def loss(self, X, y):
        scores = self.forward(X)
        scores = scores - np.max(scores, axis=1, keepdims=True)
        log_p = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
        return -np.mean(log_p[np.arange(X.shape[0]), y])


@program("training_loops", wrt=("self.params",), steps=STEPS)
def two_layer_net_dict_params(rng):
    return TwoLayerNet((3, 4, 3), rng).loss, (rng.normal(size=(5, 3)), np.array([0, 1, 2, 1, 0]))


class MLP:
    def __init__(self, sizes, rng):
        self.weights = [0.5 * rng.normal(size=(m, n)) for m, n in zip(sizes[:-1], sizes[1:])]

    def __call__(self, X):
        h = X
        for W in self.weights[:-1]:
            h = np.tanh(h @ W)
        return h @ self.weights[-1]

    def loss(self, X, y):
        return np.mean((self(X)[:, 0] - y) ** 2)


@program("training_loops", wrt=("self.weights",), steps=STEPS)
def mlp_list_of_weights(rng):
    return MLP((2, 3, 3, 1), rng).loss, (rng.normal(size=(4, 2)), rng.normal(size=4))


class Logistic:
    def __init__(self, d, rng, l2=0.01):
        self.w = 0.1 * rng.normal(size=d)
        self.l2 = l2

    def __call__(self, X, y):
        z = X @ self.w
        return np.mean(np.logaddexp(0.0, -y * z)) + self.l2 * np.sum(self.w**2)


@program("training_loops", wrt=("self.w",), steps=STEPS)
def callable_model_training(rng):
    return Logistic(3, rng), (rng.normal(size=(7, 3)), np.sign(rng.normal(size=7)))


class RNNModel:
    def __init__(self, n_in, n_hidden, rng):
        self.Wx = 0.4 * rng.normal(size=(n_in, n_hidden))
        self.Wh = 0.4 * rng.normal(size=(n_hidden, n_hidden))
        self.v = 0.4 * rng.normal(size=n_hidden)

    def step(self, x, h):
        return np.tanh(x @ self.Wx + h @ self.Wh)

    def loss(self, xs, target):
        h = np.zeros(self.Wh.shape[0])
        for t in range(xs.shape[0]):
            h = self.step(xs[t], h)
        return (h @ self.v - target) ** 2


@program("training_loops", wrt=("self.Wx", "self.Wh", "self.v"), steps=STEPS)
def rnn_training_with_step_method(rng):
    return RNNModel(2, 3, rng).loss, (rng.normal(size=(4, 2)), 0.5)


class AnnealedSoftmax:
    """A temperature and a penalty on a schedule: Python floats rebound each step."""

    def __init__(self, d, k, rng):
        self.W = 0.3 * rng.normal(size=(d, k))
        self.temperature = 2.0
        self.penalty = 0.1

    def loss(self, X, y):
        scores = X @ self.W / self.temperature
        scores = scores - np.max(scores, axis=1, keepdims=True)
        log_p = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
        return -np.mean(log_p[np.arange(X.shape[0]), y]) + self.penalty * np.sum(self.W**2)

    def on_step_end(self):
        self.temperature = self.temperature * 0.5
        self.penalty = self.penalty + 0.2


@program("training_loops", wrt=("self.W",), steps=STEPS)
def annealed_temperature_and_penalty(rng):
    return AnnealedSoftmax(3, 3, rng).loss, (rng.normal(size=(5, 3)), np.array([2, 0, 1, 1, 2]))


def _tanh(z):
    return np.tanh(z)


def _softsign(z):
    return z / (1 + np.abs(z))


class SwitchingActivation:
    """The activation function is an attribute, swapped during training."""

    def __init__(self, d, rng):
        self.W = 0.5 * rng.normal(size=(d, d))
        self.v = 0.5 * rng.normal(size=d)
        self.activation = _tanh
        self.steps = 0

    def loss(self, X, y):
        h = self.activation(X @ self.W)
        return np.mean((h @ self.v - y) ** 2)

    def on_step_end(self):
        self.steps += 1
        self.activation = _softsign if self.steps % 2 else _tanh


@program("training_loops", wrt=("self.W", "self.v"), steps=STEPS)
def activation_attribute_swapped(rng):
    return SwitchingActivation(3, rng).loss, (rng.normal(size=(4, 3)), rng.normal(size=4))


class ShapeChangingData:
    """The same model called on batches of different sizes, the batch an attribute."""

    def __init__(self, rng):
        self.w = rng.normal(size=2)
        self.batches = [rng.normal(size=(n, 2)) for n in (3, 5, 4, 6)]
        self.step = 0

    def loss(self, scale):
        X = self.batches[self.step % len(self.batches)]
        return scale * np.mean(np.log1p(np.exp(X @ self.w)))

    def on_step_end(self):
        self.step += 1


@program("training_loops", wrt=("self.w",), steps=STEPS)
def batch_attribute_changes_shape(rng):
    return ShapeChangingData(rng).loss, (1.5,)
