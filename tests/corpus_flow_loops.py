"""Flow corpus: loops with a trip count fixed by the arguments (range, arrays, zip, enumerate)."""

from __future__ import annotations

import numpy as np
from corpus_flow import program, u


@program(lambda rng: (u(rng, 3, 3, low=-0.6, high=0.6), u(rng, 3, 2), u(rng, 4, 2)), wrt=(0, 1, 2))
def rnn_final_state(W, U, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x)
    return np.sum(h * h)


@program(
    lambda rng: (u(rng, 3, 3, low=-0.6, high=0.6), u(rng, 3, 2), u(rng, 4, 2)),
    wrt=(0, 1, 2),
)
def rnn_stack_states(W, U, xs):
    h = np.zeros(W.shape[0])
    hs = []
    for x in xs:
        h = np.tanh(W @ h + U @ x)
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


@program(lambda rng: (u(rng, 5), u(rng)), wrt=(0, 1))
def horner(coefficients, x):
    value = 0.0
    for c in coefficients:
        value = value * x + c
    return value


@program(lambda rng: (u(rng, 3, low=0.5, high=1.5), int(rng.integers(1, 5))))
def power_by_loop(x, n):
    y = x
    for _ in range(n):
        y = y * x
    return np.sum(y)


@program(lambda rng: (u(rng, 4), u(rng, 3)), wrt=(0, 1))
def zip_unequal_lengths(x, y):
    s = 0.0
    for a, b in zip(x, y):  # noqa: B905 (shorter wins, like Python)
        s = s + a * np.exp(b)
    return s


@program(lambda rng: (u(rng, 4),))
def enumerate_from_one(x):
    s = 0.0
    for i, v in enumerate(x, start=1):
        s = s + i * v * v
    return s


@program(lambda rng: (u(rng, 4),))
def enumerate_weights(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + (i + 1) * v * v - np.sin(i * v)
    return s


@program(lambda rng: (u(rng, 3, 3), u(rng, 3)), wrt=(0, 1))
def nested_loops_quadratic_form(A, x):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + x[i] * A[i, j] * x[j]
    return s


@program(lambda rng: (u(rng, 6),))
def reversed_range_with_step(x):
    s = 0.0
    for i in range(len(x) - 1, -1, -2):
        s = 0.5 * s + x[i] * x[i]
    return s


@program(lambda rng: (u(rng, 3, 4),))
def rows_of_matrix(X):
    total = 0.0
    previous = X[0]
    for row in X:
        total = total + np.sum(row * previous)
        previous = np.tanh(row)
    return total


@program(lambda rng: (u(rng, 4), u(rng)), wrt=(0, 1))
def tuple_swap_recurrence(x, a):
    p, q = a, 1.0
    for v in x:
        p, q = q, p + q * v
    return p * q


@program(lambda rng: (u(rng, 2), int(rng.integers(1, 4))))
def swap_then_swaps_in_loop(x, n):
    a = x[0] * 1.0
    b = np.sin(x[1])
    a, b = b, a
    for _ in range(n):
        a, b = b, a
        a = a * np.cos(b)
    return a + 2.0 * b


@program(lambda rng: (u(rng, 2), u(rng, 6, 2), u(rng, 6), int(rng.integers(2, 5))), wrt=(0, 1, 2))
def unrolled_gradient_descent(w, X, y, steps):
    for _ in range(steps):
        residual = X @ w - y
        w = w - 0.05 * (X.T @ residual)
    return np.sum((X @ w - y) ** 2)


@program(lambda rng: (u(rng, 3, low=0.2, high=1.0), u(rng, low=0.5, high=2.0), 5), wrt=(0, 1))
def euler_with_nested_helper(y, rate, n):
    def velocity(v):
        return rate * np.sin(v) - v * v

    for _ in range(n):
        y = y + 0.1 * velocity(y)
    return np.sum(y)


@program(lambda rng: (u(rng, 4, low=0.5, high=1.5),))
def augmented_assignments(x):
    h = x * 1.0
    s = 0.0
    for i in range(3):
        h *= x
        h += np.sin(h)
        h /= 1.5
        s += np.sum(h)
        s -= 0.1 * x[i]
    return s


@program(
    lambda rng: (u(rng, 3), u(rng, 3, low=0.5, high=1.0), u(rng, 2)),
    wrt=(0, 1, 2),
)
def nested_loops_over_arrays(x, scale, shift):
    total = 0.0
    for a in x:
        for b in shift:
            total = total + np.tanh(a * scale + b)[0] * b
    return total
