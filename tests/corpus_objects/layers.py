"""Layers, activations and losses as classes, as ML-from-scratch libraries write them:
an activation object with ``__call__`` (and a hand-written ``gradient`` the library
would use), a loss object with ``loss(y, y_pred)``, a layer with ``forward`` and a
``__call__`` that calls it."""

import numpy as np

from corpus_objects import BOX_DOT, program


class Sigmoid:
    def __call__(self, x):
        return 1 / (1 + np.exp(-x))

    def gradient(self, x):
        return self.__call__(x) * (1 - self.__call__(x))


class TanH:
    def __call__(self, x):
        return 2 / (1 + np.exp(-2 * x)) - 1


class LeakyReLU:
    def __init__(self, alpha=0.2):
        self.alpha = alpha

    def __call__(self, x):
        return np.where(x >= 0, x, self.alpha * x)


class ELU:
    def __init__(self, alpha=0.1):
        self.alpha = alpha

    def __call__(self, x):
        return np.where(x >= 0.0, x, self.alpha * (np.exp(x) - 1))


class SoftPlus:
    def __call__(self, x):
        return np.log(1 + np.exp(x))


class Softmax:
    def __call__(self, x):
        e_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e_x / np.sum(e_x, axis=-1, keepdims=True)


@program("callables", wrt=("x",), kind="vjp", differentiable=True)
def sigmoid_object(rng):
    return Sigmoid(), (rng.normal(size=(3, 4)),)


@program("callables", wrt=("x",), kind="vjp")
def sigmoid_object_vjp(rng):
    return Sigmoid(), (rng.normal(size=5),)


@program("callables", wrt=("x",), kind="vjp", differentiable=True)
def tanh_object(rng):
    return TanH(), (rng.normal(size=(2, 3)),)


@program("callables", wrt=("x",), kind="vjp", differentiable=True)
def leaky_relu_object(rng):
    return LeakyReLU(0.1), (rng.normal(size=(4, 3)),)


@program("callables", wrt=("x",), kind="vjp", differentiable=True)
def elu_object(rng):
    return ELU(alpha=0.5), (rng.normal(size=6),)


@program("callables", wrt=("x",), kind="vjp", differentiable=True)
def softmax_object(rng):
    return Softmax(), (rng.normal(size=(2, 5)),)


@program("callables", wrt=("x",), kind="vjp")
def softplus_object_vjp(rng):
    return SoftPlus(), (rng.normal(size=(3, 3)),)


@program("callables", wrt=("x",), kind="vjp", differentiable=True)
def sigmoid_gradient_method(rng):
    # the hand-written derivative, itself differentiated (a second derivative by hand)
    return Sigmoid().gradient, (rng.normal(size=4),)


class SquareLoss:
    def loss(self, y, y_pred):
        return 0.5 * np.power((y - y_pred), 2)

    def __call__(self, y, y_pred):
        return np.mean(0.5 * (y - y_pred) ** 2)


class CrossEntropy:
    def loss(self, y, p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p))


@program("callables", wrt=("y_pred",), differentiable=True)
def square_loss_object(rng):
    return SquareLoss(), (rng.normal(size=6), rng.normal(size=6))


@program("callables", wrt=("y_pred",), kind="vjp", differentiable=True)
def square_loss_elementwise_method(rng):
    return SquareLoss().loss, (rng.normal(size=4), rng.normal(size=4))


@program("callables", wrt=("p",), differentiable=True)
def cross_entropy_method(rng):
    y = (rng.random(5) > 0.5).astype(float)
    return CrossEntropy().loss, (y, rng.uniform(0.1, 0.9, size=5))


@program("callables", wrt=("p",))
def cross_entropy_grad_of_method(rng):
    y = (rng.random(7) > 0.5).astype(float)
    return CrossEntropy().loss, (y, rng.uniform(0.2, 0.8, size=7))


class Dense:
    def __init__(self, n_in, n_out, rng):
        limit = 1 / np.sqrt(n_in)
        self.W = rng.uniform(-limit, limit, (n_in, n_out))
        self.w0 = np.zeros((1, n_out))

    def forward(self, X):
        return X.dot(self.W) + self.w0

    def __call__(self, X):
        return self.forward(X)


@program(
    "callables", wrt=("X", "self.W", "self.w0"), kind="vjp", differentiable=True, autograd=BOX_DOT
)
def dense_forward_method(rng):
    return Dense(3, 2, rng).forward, (rng.normal(size=(4, 3)),)


@program("methods_inside", wrt=("X", "self.W"), kind="vjp", autograd=BOX_DOT)
def dense_call_calls_forward(rng):
    return Dense(4, 3, rng), (rng.normal(size=(2, 4)),)


class Sequential:
    def __init__(self, layers, activation):
        self.layers = layers
        self.activation = activation

    def __call__(self, X):
        h = X
        for layer in self.layers[:-1]:
            h = self.activation(layer(h))
        return self.layers[-1](h)


class MSEHead:
    def __init__(self, model):
        self.model = model

    def __call__(self, X, y):
        return np.mean((self.model(X)[:, 0] - y) ** 2)


@program("methods_inside", wrt=("X",), autograd=BOX_DOT)
def sequential_of_layer_objects(rng):
    model = Sequential([Dense(3, 4, rng), Dense(4, 4, rng), Dense(4, 1, rng)], TanH())
    return MSEHead(model), (rng.normal(size=(5, 3)), rng.normal(size=5))


class Conv1D:
    def __init__(self, kernel):
        self.kernel = kernel

    def forward(self, x):
        k = self.kernel.shape[0]
        return np.stack([np.sum(x[i : i + k] * self.kernel) for i in range(x.shape[0] - k + 1)])


@program("callables", wrt=("x", "self.kernel"), kind="vjp", differentiable=True)
def conv1d_forward_method(rng):
    return Conv1D(rng.normal(size=3)).forward, (rng.normal(size=7),)
