"""Functions as values, as example code passes them around: a ``nonlinearity``
parameter, a sampler or objective handed in, ``functools.partial``, a factory
``f(a)(x)``, module-level lambdas, a lambda on its own line, ``grad(lambda ...)``."""

from functools import partial

import numpy as np

from corpus_objects import program

sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))
softplus = lambda z: np.logaddexp(0.0, z)


def relu(x):
    return np.maximum(0.0, x)


def swish(x):
    return x * sigmoid(x)


def mlp_loss(params, X, y, nonlinearity=np.tanh):
    h = X
    for W, b in params[:-1]:
        h = nonlinearity(h @ W + b)
    W, b = params[-1]
    return np.mean((h @ W + b - y) ** 2)


def _mlp(rng, sizes=(3, 4, 1)):
    params = [
        (0.5 * rng.normal(size=(m, n)), 0.1 * rng.normal(size=n))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]
    return params, rng.normal(size=(5, sizes[0])), rng.normal(size=(5, sizes[-1]))


def dense_block(W, x, nonlinearity):
    return np.sum(nonlinearity(x @ W))


@program("functions_as_values", wrt=("W",))
def nonlinearity_parameter_function(rng):
    return dense_block, (rng.normal(size=(3, 2)), rng.normal(size=(4, 3)), swish)


@program("functions_as_values", wrt=("W",))
def nonlinearity_parameter_module_lambda(rng):
    return dense_block, (rng.normal(size=(3, 2)), rng.normal(size=(4, 3)), sigmoid)


@program("functions_as_values", wrt=("W",))
def nonlinearity_parameter_numpy_ufunc(rng):
    return dense_block, (rng.normal(size=(2, 2)), rng.normal(size=(3, 2)), np.tanh)


@program("functions_as_values", wrt=("params",))
def partial_mlp_nonlinearity(rng):
    params, X, y = _mlp(rng)
    return partial(mlp_loss, nonlinearity=softplus), (params, X, y)


@program(
    "functions_as_values",
    wrt=("params",),
    autograd="the default nonlinearity=np.tanh is numpy's own tanh, bound when the def ran",
)
def mlp_default_nonlinearity(rng):
    params, X, y = _mlp(rng, sizes=(2, 3, 3, 1))
    return mlp_loss, (params, X, y)


def gaussian_log_density(x, mean, log_std):
    return -0.5 * np.sum(((x - mean) / np.exp(log_std)) ** 2) - np.sum(log_std)


@program("functions_as_values", wrt=("mean", "log_std"))
def partial_fixing_data(rng):
    data = rng.normal(size=4)
    return partial(gaussian_log_density, data), (rng.normal(size=4), 0.1 * rng.normal(size=4))


def make_objective(A, b):
    def objective(x):
        return np.sum((A @ x - b) ** 2) + np.sum(softplus(x))

    return objective


def fit_with(objective, x):
    return objective(x) + 0.5 * np.sum(x**2)


@program("functions_as_values", wrt=("x",))
def objective_handed_to_helper(rng):
    objective = make_objective(rng.normal(size=(4, 3)), rng.normal(size=4))
    return fit_with, (objective, rng.normal(size=3))


@program("functions_as_values", wrt=("x",))
def closure_factory_result(rng):
    return make_objective(rng.normal(size=(3, 3)), rng.normal(size=3)), (rng.normal(size=3),)


def make_loss(kind):
    if kind == "l2":
        return lambda r: np.sum(r**2)
    return lambda r: np.sum(np.log(np.cosh(r)))


def regression_loss(w, X, y):
    return make_loss("logcosh")(X @ w - y) + 0.1 * make_loss("l2")(w)


@program("functions_as_values", wrt=("w",))
def factory_called_immediately(rng):
    return regression_loss, (rng.normal(size=2), rng.normal(size=(5, 2)), rng.normal(size=5))


def energy(x):
    pair = lambda a, b: np.exp(-((a - b) ** 2))
    return pair(x[0], x[1]) + pair(x[1], x[2]) + np.sum(x**2)


@program("functions_as_values", wrt=("x",))
def lambda_on_its_own_line(rng):
    return energy, (rng.normal(size=3),)


@program("functions_as_values", wrt=("x",))
def grad_of_lambda(rng):
    A = rng.normal(size=(3, 3))
    return (lambda x: np.sum(np.tanh(A @ x) ** 2)), (rng.normal(size=3),)


@program("functions_as_values", wrt=("x",))
def grad_of_module_lambda(rng):
    return (lambda x: np.sum(softplus(x) * sigmoid(x))), (rng.normal(size=5),)


def sample_mean(sampler, theta, eps):
    return np.mean(sampler(theta, eps) ** 2)


def reparameterized(theta, eps):
    return theta[0] + np.exp(theta[1]) * eps


@program("functions_as_values", wrt=("theta",))
def sampler_parameter(rng):
    return sample_mean, (reparameterized, rng.normal(size=2), rng.normal(size=6))


def compose(f, g):
    return lambda x: f(g(x))


def composed_loss(x):
    h = compose(np.sin, sigmoid)
    return np.sum(h(x) ** 2)


@program("functions_as_values", wrt=("x",))
def composed_functions(rng):
    return composed_loss, (rng.normal(size=4),)


ACTIVATIONS = {"relu": relu, "sigmoid": sigmoid, "swish": swish}


def configured_layer(W, x, activation="swish"):
    act = ACTIVATIONS[activation]
    return np.sum(act(x @ W) ** 2)


@program("functions_as_values", wrt=("W",))
def activation_looked_up_by_name(rng):
    return configured_layer, (rng.normal(size=(3, 2)), rng.normal(size=(4, 3)))
