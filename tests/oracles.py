"""Oracles that no code of this project controls: finite differences and autograd."""

import types

import autograd
import autograd.numpy as anp
import numpy as np


def central_difference(fn, args, index, eps=1e-6):
    """Gradient of scalar ``fn`` w.r.t. ``args[index]`` by central differences (float64).

    Each perturbed argument is laid out in memory as the one given (a Fortran-ordered
    array stays so): numpy's choice of a view or a copy, and so the value of a
    function that writes through one, can depend on it."""
    args = [np.array(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in args]
    x = np.asarray(args[index])  # a numpy scalar: a 0-d array
    gradient = np.zeros(x.shape, dtype=np.float64)
    for position in np.ndindex(x.shape):
        plus = x.copy(order="K")
        minus = x.copy(order="K")
        plus[position] += eps
        minus[position] -= eps
        f_plus = fn(*args[:index], plus, *args[index + 1 :])
        f_minus = fn(*args[:index], minus, *args[index + 1 :])
        gradient[position] = (float(f_plus) - float(f_minus)) / (2 * eps)
    return gradient


def structured_central_difference(fn, args, index, eps=1e-6):
    """Central differences w.r.t. every leaf of ``args[index]`` (a list, tuple or dict
    of arrays, nested, or one array), one gradient per leaf in order."""
    gradients = []
    for path in _paths(args[index]):
        leaf = np.asarray(_get(args[index], path), dtype=np.float64)
        gradient = np.zeros_like(leaf)
        for k in range(leaf.size):
            values = []
            for sign in (1, -1):
                moved = leaf.copy().reshape(-1)
                moved[k] += sign * eps
                call = list(args)
                call[index] = _put(args[index], path, moved.reshape(leaf.shape))
                values.append(float(fn(*call)))
            gradient.reshape(-1)[k] = (values[0] - values[1]) / (2 * eps)
        gradients.append(gradient)
    return gradients


def _paths(value, path=()):
    if isinstance(value, dict):
        return [p for key in value for p in _paths(value[key], (*path, key))]
    if isinstance(value, (list, tuple)):
        return [p for i, item in enumerate(value) for p in _paths(item, (*path, i))]
    return [path]


def _get(value, path):
    for key in path:
        value = value[key]
    return value


def _put(value, path, leaf):
    """A copy of ``value`` with the leaf at ``path`` replaced."""
    if not path:
        return leaf
    key, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, key: _put(value[key], rest, leaf)}
    items = [_put(v, rest, leaf) if i == key else v for i, v in enumerate(value)]
    return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)


def with_autograd_numpy(fn):
    """The same function, its ``np`` global replaced by ``autograd.numpy``."""
    namespace = dict(fn.__globals__)
    namespace["np"] = anp
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def autograd_gradient(fn, args, index):
    """Gradient by the independent AD library autograd."""
    return autograd.grad(with_autograd_numpy(fn), index)(*args)
