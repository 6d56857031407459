"""Names a user picks that the generated code also uses: ``xp`` for the array module
(the numpy/cupy-agnostic habit), and parameters called ``memory``, ``like``, ``stack``,
``size``."""

import numpy as np

from corpus_objects import program


def get_array_module(x):
    return np  # cupy.get_array_module(x) on a machine with a GPU


def logsumexp_loss(x):
    xp = get_array_module(x)
    m = xp.max(x, axis=1, keepdims=True)
    return xp.sum(m[:, 0] + xp.log(xp.sum(xp.exp(x - m), axis=1)))


@program("user_names", wrt=("x",))
def xp_from_get_array_module(rng):
    return logsumexp_loss, (rng.normal(size=(3, 4)),)


def xp_local(w, X):
    xp = np
    return xp.sum(xp.tanh(X @ w) ** 2)


@program("user_names", wrt=("w",))
def xp_local_alias(rng):
    return xp_local, (rng.normal(size=3), rng.normal(size=(4, 3)))


def memory_cell(memory, gate):
    return np.sum(np.tanh(memory) * (1 / (1 + np.exp(-gate))))


@program("user_names", wrt=("memory", "gate"))
def parameter_named_memory(rng):
    return memory_cell, (rng.normal(size=4), rng.normal(size=4))


def log_like(theta, like):
    return -np.sum(like * np.log(1 + np.exp(theta)))


@program("user_names", wrt=("theta",))
def parameter_named_like(rng):
    return log_like, (rng.normal(size=3), rng.random(3))


def stacked_energy(x, stack, size):
    total = 0.0
    for k in range(size):
        total = total + np.sum((x * stack[k]) ** 2)
    return total


@program("user_names", wrt=("x", "stack"))
def parameters_named_stack_and_size(rng):
    return stacked_energy, (rng.normal(size=3), rng.normal(size=(2, 3)), 2)


class ArrayModel:
    def __init__(self, xp):
        self.xp = xp

    def loss(self, w):
        xp = self.xp
        return xp.sum(xp.sin(w) ** 2)


@program("user_names", wrt=("w",))
def xp_stored_on_object(rng):
    return ArrayModel(np).loss, (rng.normal(size=4),)
