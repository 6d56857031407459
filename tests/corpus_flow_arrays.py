"""Flow corpus: writes into arrays (y[i] = ..., slices, +=) and lists built with append."""

from __future__ import annotations

import numpy as np
from corpus_flow import program, u


def _cumsum_reference(x):
    return np.sum(np.cumsum(x) ** 2)


@program(lambda rng: (u(rng, 5),), reference=_cumsum_reference)
def cumulative_sum_writes(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] + x[i]
    return np.sum(y * y)


def _thomas_reference(lower, diagonal, upper, rhs):
    n = diagonal.shape[0]
    c = [upper[0] / diagonal[0]]
    d = [rhs[0] / diagonal[0]]
    for i in range(1, n):
        denominator = diagonal[i] - lower[i - 1] * c[i - 1]
        c.append(upper[i] / denominator if i < n - 1 else 0.0)
        d.append((rhs[i] - lower[i - 1] * d[i - 1]) / denominator)
    x = [d[n - 1]]
    for i in range(n - 2, -1, -1):
        x.insert(0, d[i] - c[i] * x[0])
    return np.sum(np.array(x) * np.arange(1.0, n + 1))


def _tridiagonal_sample(rng):
    n = 5
    return (
        u(rng, n - 1, low=-1, high=1),
        u(rng, n, low=3, high=4),
        u(rng, n - 1, low=-1, high=1),
        u(rng, n),
    )


# Thomas algorithm for a diagonally dominant tridiagonal system, written element by element
@program(
    _tridiagonal_sample,
    wrt=(0, 1, 2, 3),
    reference=_thomas_reference,
    bug_at="compile",
)
def tridiagonal_solve(lower, diagonal, upper, rhs):
    n = diagonal.shape[0]
    c = np.zeros(n)
    d = np.zeros(n)
    c[0] = upper[0] / diagonal[0]
    d[0] = rhs[0] / diagonal[0]
    for i in range(1, n):
        denominator = diagonal[i] - lower[i - 1] * c[i - 1]
        if i < n - 1:
            c[i] = upper[i] / denominator
        d[i] = (rhs[i] - lower[i - 1] * d[i - 1]) / denominator
    x = np.zeros(n)
    x[n - 1] = d[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = d[i] - c[i] * x[i + 1]
    return np.sum(x * np.arange(1.0, n + 1))


def _column_update_reference(A):
    columns = [A[:, j] * A[:, (j + 1) % 3] for j in range(3)]
    return np.sum(np.stack(columns, axis=1) ** 2)


@program(
    lambda rng: (u(rng, 4, 3),),
    reference=_column_update_reference,
)
def column_augmented_writes(A):
    y = np.zeros((4, 3))
    for j in range(3):
        y[:, j] += A[:, j] * A[:, (j + 1) % 3]
    return np.sum(y**2)


def _slice_write_reference(x):
    y = np.concatenate([x[:1] * 2.0, np.sin(x[:-1]) * x[1:]])
    return np.sum(y * y) + y[-1]


@program(lambda rng: (u(rng, 5),), reference=_slice_write_reference)
def slice_writes(x):
    y = x * 2.0
    y[1:] = np.sin(x[:-1]) * x[1:]
    return np.sum(y * y) + y[-1]


def _branch_write_reference(x):
    first = x[0] * x[1] if x[0] > 0 else 0.0
    return (first + 1.0) ** 2 + np.sum(x[1:] ** 2) * x[2]


# seeds 0, 1 write (x[0] > 0); 2, 3 keep the zero
@program(
    lambda rng: (u(rng, 3),),
    seeds={0: "write", 1: "write", 2: "keep", 3: "keep"},
    path=lambda x: "write" if x[0] > 0 else "keep",
    reference=_branch_write_reference,
)
def write_in_branch(x):
    y = np.zeros(3)
    if x[0] > 0:
        y[0] = x[0] * x[1]
    y[1:] = x[1:] * x[1:]
    return (y[0] + 1.0) ** 2 + np.sum(y[1:]) * x[2]


def _overwrite_reference(x):
    return np.sum((x * x)[1:] ** 2) + 25.0 + 0.0 * x[0]


@program(lambda rng: (u(rng, 4),), reference=_overwrite_reference)
def overwritten_element_gets_no_gradient(x):
    y = x * x
    y[0] = 5.0
    return np.sum(y * y)


def _matrix_rows_reference(W, X):
    return np.sum(np.tanh(X @ W.T) * np.arange(1.0, 4.0))


@program(
    lambda rng: (u(rng, 3, 2), u(rng, 4, 2)),
    wrt=(0, 1),
    reference=_matrix_rows_reference,
)
def matrix_rows_written_in_loop(W, X):
    H = np.zeros((X.shape[0], W.shape[0]))
    for i in range(X.shape[0]):
        H[i] = np.tanh(W @ X[i])
    return np.sum(H * np.arange(1.0, 4.0))


@program(lambda rng: (u(rng, 4),))
def list_append_then_array(x):
    squares = []
    for v in x:
        squares.append(v * v if v > 0 else -v)
    return np.sum(np.array(squares) * x)


@program(lambda rng: (u(rng, 3), u(rng, 2)), wrt=(0, 1))
def list_append_then_concatenate(x, y):
    pieces = []
    for k in range(3):
        pieces.append(x * (k + 1))
        pieces.append(np.sin(y) * k)
    return np.sum(np.concatenate(pieces) ** 2)


@program(lambda rng: (u(rng, 3), u(rng, 3)), wrt=(0, 1))
def list_append_outside_loops(x, y):
    rows = []
    rows.append(x * y)
    rows.append(np.exp(x) - y)
    rows.append(x)
    return np.sum(np.stack(rows, axis=0) * np.arange(9.0).reshape(3, 3))


def _gauss_seidel_reference(A, b, sweeps):
    n = b.shape[0]
    x = [0.0] * n
    for _ in range(sweeps):
        for i in range(n):
            off_diagonal = sum(A[i, j] * x[j] for j in range(n) if j != i)
            x[i] = (b[i] - off_diagonal) / A[i, i]
    return sum(v * v for v in x)


def _diagonally_dominant(rng):
    return (u(rng, 3, 3, low=-1.0, high=1.0) + 4.0 * np.eye(3), u(rng, 3), 3)


@program(_diagonally_dominant, wrt=(0, 1), reference=_gauss_seidel_reference)
def gauss_seidel_sweeps(A, b, sweeps):
    x = np.zeros(b.shape[0])
    for _ in range(sweeps):
        for i in range(b.shape[0]):
            x[i] = (b[i] - A[i] @ x + A[i, i] * x[i]) / A[i, i]
    return np.sum(x * x)


def _smoothing_reference(x):
    y = list(x)
    for _ in range(2):
        for i in range(1, 4):
            y[i] = 0.5 * (y[i - 1] + y[i])
        y[0] = y[0] * 0.9
    return sum(v * v for v in y)


@program(
    lambda rng: (u(rng, 4),),
    reference=_smoothing_reference,
)
def smoothing_sweeps_with_boundary(x):
    y = x * 1.0
    for _ in range(2):
        for i in range(1, 4):
            y[i] = 0.5 * (y[i - 1] + y[i])
        y[0] = y[0] * 0.9
    return np.sum(y * y)
