"""Tuple unpacking from any value: shapes, arrays, tuples of parameters, loop targets."""

import numpy as np

from corpus_python.common import Program


def centered_variance(X):
    N, D = X.shape
    mean = np.sum(X, axis=0) / N
    return np.sum((X - mean) ** 2) / (N * D)


def rbf_kernel_sum(log_params, X):
    ell, sf = np.exp(log_params)
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = sf**2 * np.exp(-0.5 * sq / ell**2)
    return np.sum(K)


def cubic_from_tuple(coeffs, t):
    a, b, c = coeffs
    return np.sum(a * t**3 + b * t**2 + c * t)


def dense_layer_tuple(layer, X):
    W, b = layer
    return np.sum(np.tanh(X @ W + b) ** 2)


def lstm_like_state(state, x):
    h, c = state
    g = np.tanh(x + h)
    c_new = 0.5 * c + 0.5 * g
    return np.sum(np.tanh(c_new) * h)


def starred_head_tail(parts):
    first, *rest = parts
    return np.sum(first * sum(np.sin(r) for r in rest))


def starred_middle(x):
    head, *middle, last = x[0], x[1], x[2], x[3]
    return head * last + sum(m**2 for m in middle)


def nested_targets(x):
    (a, b), c = (x[0], x[1]), x[2]
    return a * b + np.exp(c)


def enumerate_zip_pairs(x, y):
    s = 0.0
    for i, (u, v) in enumerate(zip(x, y)):  # noqa: B905
        s = s + (i + 1) * u * v
    return s


def rows_unpacked_in_loop(P):
    total = 0.0
    for row in P:
        px, py = row
        total = total + px**2 * py
    return total


def _pair(rng):
    return (rng.normal(size=3), rng.normal(size=3))


PROGRAMS = [
    Program(centered_variance, lambda r: (r.normal(size=(4, 3)),), loop_free=True),
    Program(
        rbf_kernel_sum,
        lambda r: (0.3 * r.normal(size=2), r.normal(size=(3, 2))),
        loop_free=True,
    ),
    Program(
        cubic_from_tuple,
        lambda r: (tuple(r.normal(size=3) for _ in range(3)), r.normal(size=3)),
        loop_free=True,
    ),
    Program(
        dense_layer_tuple,
        lambda r: ((r.normal(size=(3, 2)), r.normal(size=2)), r.normal(size=(4, 3))),
        loop_free=True,
    ),
    Program(lstm_like_state, lambda r: (_pair(r), r.normal(size=3)), loop_free=True),
    Program(starred_head_tail, lambda r: ([r.normal(size=2) for _ in range(3)],)),
    Program(starred_middle, lambda r: (r.normal(size=4),)),
    Program(nested_targets, lambda r: (r.normal(size=3),), loop_free=True),
    Program(enumerate_zip_pairs, lambda r: (r.normal(size=4), r.normal(size=4)), wrt=(0, 1)),
    Program(rows_unpacked_in_loop, lambda r: (r.normal(size=(4, 2)),)),
]
