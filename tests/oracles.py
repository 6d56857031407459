"""Oracles that no code of this project controls: finite differences and autograd."""

import types

import autograd
import autograd.numpy as anp
import numpy as np


def central_difference(fn, args, index, eps=1e-6):
    """Gradient of scalar ``fn`` w.r.t. ``args[index]`` by central differences (float64)."""
    args = [np.array(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in args]
    x = args[index]
    gradient = np.zeros(x.shape, dtype=np.float64)  # C order: flat below is a view
    flat = gradient.reshape(-1)
    for i in range(x.size):
        plus = x.copy().reshape(-1)
        minus = x.copy().reshape(-1)
        plus[i] += eps
        minus[i] -= eps
        f_plus = fn(*args[:index], plus.reshape(x.shape), *args[index + 1 :])
        f_minus = fn(*args[:index], minus.reshape(x.shape), *args[index + 1 :])
        flat[i] = (float(f_plus) - float(f_minus)) / (2 * eps)
    return gradient


def with_autograd_numpy(fn):
    """The same function, its ``np`` global replaced by ``autograd.numpy``."""
    namespace = dict(fn.__globals__)
    namespace["np"] = anp
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def autograd_gradient(fn, args, index):
    """Gradient by the independent AD library autograd."""
    return autograd.grad(with_autograd_numpy(fn), index)(*args)
