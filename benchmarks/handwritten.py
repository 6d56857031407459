"""Hand-written numpy value-and-gradient functions: the speed to reach.

One function per workload, written the way a careful person writes a backward pass
by hand: the forward is the workload's own formulation (the same operations, so the
value is the same), it keeps only what the backward needs, and the backward does no
work twice (no gradients nobody asked for, no broadcasting where shapes match,
weight gradients of a loop batched into one matrix product where that is natural).

Each returns ``(value, gradients)`` with one gradient per ``wrt`` position of the
workload. They are checked against central finite differences by the smoke test
(``tests/test_benchmarks_smoke.py``), and every AD system is checked against them.

>>> x = np.array([1.0, 1.0, 1.0])
>>> value, (dx,) = rosenbrock(x)
>>> float(value), (dx + 0.0).tolist()  # + 0.0 turns -0.0 into 0.0
(0.0, [0.0, 0.0, 0.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

Gradients = tuple[Any, tuple[Any, ...]]


def rosenbrock(x: np.ndarray) -> Gradients:
    """Value and gradient of ``workloads.rosenbrock``.

    >>> value, (dx,) = rosenbrock(np.array([0.0, 0.0]))
    >>> float(value), dx.tolist()
    (1.0, [-2.0, 0.0])
    """
    head = x[:-1]
    a = x[1:] - head**2
    b = 1.0 - head
    value = np.sum(100.0 * a * a + b * b)
    d_a = 200.0 * a
    dx = np.empty_like(x)
    dx[:-1] = -2.0 * (head * d_a + b)
    dx[-1] = 0.0
    dx[1:] += d_a
    return value, (dx,)


def mlp(W1: Any, b1: Any, W2: Any, b2: Any, X: Any, Y: Any) -> Gradients:
    """Value and gradients (W1, b1, W2, b2) of ``workloads.mlp``.

    >>> W1, W2 = np.zeros((2, 3)), np.zeros((3, 2))
    >>> value, grads = mlp(W1, np.zeros(3), W2, np.zeros(2), np.ones((1, 2)), np.eye(2)[:1])
    >>> round(float(value), 6), grads[3].tolist()
    (0.693147, [-0.5, 0.5])
    """
    batch = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    s = np.sum(e, axis=1, keepdims=True)
    lse = np.log(s) + m
    value = -np.sum(Y * (z - lse)) / batch
    # d value / d z = (softmax(z) * sum(Y, axis=1) - Y) / batch
    d_z = (e * (np.sum(Y, axis=1, keepdims=True) / s) - Y) / batch
    d_W2 = h.T @ d_z
    d_b2 = np.sum(d_z, axis=0)
    d_pre = (d_z @ W2.T) * (1.0 - h * h)
    d_W1 = X.T @ d_pre
    d_b1 = np.sum(d_pre, axis=0)
    return value, (d_W1, d_b1, d_W2, d_b2)


def scalar_loop(x: np.ndarray) -> Gradients:
    """Value and gradient of ``workloads.scalar_loop`` (the same element-by-element loop).

    >>> value, (dx,) = scalar_loop(np.array([0.0, 2.0]))
    >>> float(value), (dx + 0.0).tolist()
    (4.0, [0.0, 4.0])
    """
    n = x.shape[0]
    before = np.empty(n)  # s before step i
    cosines = np.empty(n)
    s = 0.0
    for i in range(n):
        c = np.cos(x[i])
        before[i] = s
        cosines[i] = c
        s = s * c + x[i] * x[i]
    dx = np.empty_like(x)
    d_s = 1.0
    for i in range(n - 1, -1, -1):
        xi = x[i]
        dx[i] = d_s * (2.0 * xi - before[i] * np.sin(xi))
        d_s = d_s * cosines[i]
    return s, (dx,)


def horner(coefficients: np.ndarray, x: np.ndarray) -> Gradients:
    """Value and gradients (coefficients, x) of ``workloads.horner``.

    >>> value, (dc, dx) = horner(np.array([1.0, 2.0]), np.array([3.0]))
    >>> float(value), dc.tolist(), dx.tolist()
    (5.0, [3.0, 1.0], [1.0])
    """
    before = []  # value before each step
    value: Any = 0.0
    for c in coefficients:
        before.append(value)
        value = value * x + c
    d_value = np.ones_like(x)
    d_x = np.zeros_like(x)
    d_c = np.empty_like(coefficients)
    for k in range(len(coefficients) - 1, -1, -1):
        d_c[k] = np.sum(d_value)
        d_x += d_value * before[k]
        d_value = d_value * x
    return np.sum(value), (d_c, d_x)


def newton_sqrt(a: np.ndarray) -> Gradients:
    """Value and gradient of ``workloads.newton_sqrt``, through every Newton step taken.

    >>> value, (da,) = newton_sqrt(np.array([4.0]))
    >>> round(float(value), 9), round(float(da[0]), 9)
    (2.0, 0.25)
    """
    steps = []
    y = a
    while np.max(np.abs(y * y - a)) > 1e-10:
        r = a / y
        steps.append((y, r))
        y = 0.5 * (y + r)
    value = np.sum(y)
    d_y = np.ones_like(y)
    d_a = np.zeros_like(a)
    for y_k, r_k in reversed(steps):
        # y' = (y + a / y) / 2:  dy'/da = 1 / (2 y),  dy'/dy = (1 - a / y**2) / 2
        q = 0.5 * d_y / y_k
        d_a += q
        d_y = 0.5 * d_y - q * r_k
    d_a += d_y  # y starts as a
    return value, (d_a,)


def rnn(Wh: Any, Wx: Any, b: Any, xs: Any, h0: Any) -> Gradients:
    """Value and gradients (Wh, Wx, b) of ``workloads.rnn``.

    >>> value, grads = rnn(np.zeros((2, 2)), np.zeros((1, 2)), np.zeros(2),
    ...                    np.ones((3, 1, 1)), np.zeros((1, 2)))
    >>> float(value), [g.shape for g in grads]
    (0.0, [(2, 2), (1, 2), (2,)])
    """
    T = xs.shape[0]
    hs = np.empty((T + 1, *h0.shape))  # hs[t] is the state before step t
    hs[0] = h0
    total = 0.0
    for t in range(T):
        h = np.tanh(hs[t] @ Wh + xs[t] @ Wx + b)
        hs[t + 1] = h
        total = total + np.sum(h * h)
    d_pre = np.empty((T, *h0.shape))  # gradient at the pre-activation of each step
    d_h = np.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        h = hs[t + 1]
        d_pre[t] = (d_h + 2.0 * h) * (1.0 - h * h)
        d_h = d_pre[t] @ Wh.T
    flat = d_pre.reshape(-1, d_pre.shape[-1])
    d_Wh = hs[:-1].reshape(-1, hs.shape[-1]).T @ flat
    d_Wx = xs.reshape(-1, xs.shape[-1]).T @ flat
    d_b = np.sum(flat, axis=0)
    return total, (d_Wh, d_Wx, d_b)


def srelu_net(
    W1: Any, b1: Any, tl: Any, al: Any, tr: Any, ar: Any, W2: Any, X: Any, Y: Any
) -> Gradients:
    """Value and gradients (W1, b1, tl, al, tr, ar, W2) of ``workloads.srelu_net``.

    Assumes ``tl < tr`` (the workload's thresholds are drawn that way), so the three
    pieces of SReLU never overlap.

    >>> W1, W2, Y = np.eye(2), np.eye(2), np.zeros((1, 2))
    >>> p = [np.array([[v, v]]) for v in (-1.0, 0.1, 1.0, 0.5)]
    >>> value, grads = srelu_net(W1, np.zeros(2), *p, W2, np.array([[-3.0, 0.5]]), Y)
    >>> round(float(value), 6), grads[3].round(6).tolist()
    (1.69, [[4.8, 0.0]])
    """
    batch = X.shape[0]
    z = X @ W1 + b1
    left, right = z <= tl, tr <= z
    # each piece is linear: a = slope * z + offset, with per-channel slope and offset
    slope = np.where(left, al, np.where(right, ar, 1.0))
    a = slope * z + np.where(left, tl - al * tl, np.where(right, tr - ar * tr, 0.0))
    r = a @ W2 - Y
    value = np.sum(r * r) / batch
    d_r = (2.0 / batch) * r
    d_W2 = a.T @ d_r
    d_a = d_r @ W2.T
    d_left, d_right = d_a * left, d_a * right
    sum_left = np.sum(d_left, axis=0, keepdims=True)
    sum_right = np.sum(d_right, axis=0, keepdims=True)
    d_tl = sum_left * (1.0 - al)
    d_al = np.sum(d_left * z, axis=0, keepdims=True) - sum_left * tl  # sum(d_left * (z - tl))
    d_tr = sum_right * (1.0 - ar)
    d_ar = np.sum(d_right * z, axis=0, keepdims=True) - sum_right * tr
    d_z = d_a * slope
    d_W1 = X.T @ d_z
    d_b1 = np.sum(d_z, axis=0)
    return value, (d_W1, d_b1, d_tl, d_al, d_tr, d_ar, d_W2)


HANDWRITTEN = {
    "rosenbrock": rosenbrock,
    "mlp": mlp,
    "scalar_loop": scalar_loop,
    "horner": horner,
    "newton_while": newton_sqrt,
    "rnn": rnn,
    "srelu_net": srelu_net,
}
