"""Functions and objects that live in an importable module, for the pickling tests:
another process finds them by name (``pickling_functions.loss``)."""

import functools

import numpy as np

from autodiff_tutor import differentiable


def squash(h):
    """A helper the compiled loss calls: compiled with it in the other process."""
    return np.tanh(h)


@differentiable
def loss(W, b, X):
    """A compiled loss at module level: pickled by reference."""
    h = squash(X @ W + b)
    return np.sum(h * h)


def energy(x, scale=1.0):
    """A plain function at module level: ``grad(energy)`` pickles it by reference."""
    return scale * np.sum(np.sin(x) * x**2)


def cube(x):
    """A scalar function of a scalar, for ``grad(grad(cube))``."""
    return x**3 + 2 * x


class Model:
    """An object whose bound method and ``__call__`` are differentiated."""

    def __init__(self, W):
        self.W = W

    def loss(self, X):
        return np.sum(np.tanh(X @ self.W) ** 2)

    def __call__(self, X):
        return np.sum(np.exp(X @ self.W))


scaled_energy = functools.partial(energy, scale=3.0)
