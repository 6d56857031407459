"""Python builtins and the math module on values that carry gradient; lambdas."""

import math

import numpy as np

from corpus_python.common import Program


def hinge_floor(x):
    m = max(np.sum(x), 1.0)
    return m * 2.0 + np.sum(x**2)


def smallest_of_three(x):
    a, b, c = np.sum(x), np.sum(x**2) - 5.0, 2.0 * x[0]
    return min(a, b, c)


def absolute_error(x):
    return abs(np.sum(x) - 3.0) + 0.5 * np.sum(x**2)


def math_scalar_chain(x):
    s = np.sum(x**2) + 1.0
    return math.exp(-s / 10.0) + math.log(s) + math.sqrt(s)


def math_trig(x):
    a, b, c = x
    return math.sin(a) * math.cos(b) + math.tanh(c)


def weighted_by_position(x):
    s = 0.0
    for i in range(len(x)):
        s = s + (i + 1) * x[i] ** 2
    return s


def discounted_return(rewards):
    g = 0.0
    for r in reversed(rewards):
        g = r + 0.9 * g
    return g * g


def sorted_static_keys(x, keys=(3, 0, 2)):
    s = 0.0
    for k in sorted(keys):
        s = s * 0.5 + x[k] ** 2
    return s


def scale_if_float(x, scale=2.0):
    y = x
    if isinstance(scale, float):
        y = x * scale
    return np.sum(np.sin(y))


def lambda_activation(X, W):
    act = lambda z: np.tanh(z) * 0.5 + 0.5 * z  # noqa: E731
    return np.sum(act(X @ W) ** 2)


def lambda_two_arguments(x, y):
    sq = lambda a, b: (a - b) ** 2  # noqa: E731
    return np.sum(sq(x, y) + sq(2 * x, y))


PROGRAMS = [
    Program(hinge_floor, lambda r: (r.normal(size=3) + 1.0,), loop_free=True),
    Program(smallest_of_three, lambda r: (r.normal(size=3),), loop_free=True),
    Program(absolute_error, lambda r: (r.normal(size=3),), loop_free=True),
    Program(
        math_scalar_chain,
        lambda r: (r.normal(size=3),),
        loop_free=True,
        autograd=False,
    ),
    Program(
        math_trig,
        lambda r: (r.normal(size=3),),
        loop_free=True,
        autograd=False,
    ),
    Program(weighted_by_position, lambda r: (r.normal(size=4),)),
    Program(discounted_return, lambda r: (r.normal(size=5),)),
    Program(sorted_static_keys, lambda r: (r.normal(size=4),)),
    Program(scale_if_float, lambda r: (r.normal(size=3),)),
    Program(
        lambda_activation,
        lambda r: (r.normal(size=(4, 3)), r.normal(size=(3, 2))),
        wrt=(0, 1),
        loop_free=True,
    ),
    Program(
        lambda_two_arguments,
        lambda r: (r.normal(size=3), r.normal(size=3)),
        wrt=(0, 1),
        loop_free=True,
    ),
]
