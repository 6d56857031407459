"""Notebook habits: module-level constants and helpers, ``print`` and f-strings and
``assert`` inside the objective, ``math.`` on scalars, ``enumerate`` over ``(W, b)``
pairs, ``zip``, comprehensions, tuple returns with auxiliary values, keyword defaults,
closures, a seeded generator inside, early returns, ``while`` with a tolerance,
``x = x.copy(); x[...] = ...``, ``@``/``np.dot``/``.dot``, ``np.newaxis``, ``.T``,
``.reshape(-1)``, ``astype``, ``np.clip``, ``np.where``, ``np.maximum(0, x)``."""

import math

import numpy as np
from scipy.special import softmax

from corpus_public import (
    AUX_DICT,
    MATH_ON_BOXES,
    PLAIN_DOT,
    WRITES,
    objective,
)

FLAT = "x.flat has no derivative rule (refused at the attribute; x.reshape(-1)[3] works)"
LEARNING_RATE = 0.1
HIDDEN = 4
DATA = np.linspace(-1, 1, 6).reshape(3, 2)
TARGETS = np.array([0.5, -0.2, 0.1])
VERBOSE = False


def relu(z):
    return np.maximum(0, z)


def mse(pred, target):
    return np.mean((pred - target) ** 2)


@objective(lambda rng: (rng.normal(size=2),), autograd="an f-string cannot format a box")
def printing_and_asserting(w):
    pred = DATA @ w
    loss = mse(pred, TARGETS)
    assert pred.shape == (3,), f"bad shape {pred.shape}"
    print(f"loss = {loss:.4f}, lr = {LEARNING_RATE}")
    if VERBOSE:
        print("pred", pred)
    return loss


@objective(lambda rng: (rng.normal(size=3),), autograd=MATH_ON_BOXES)
def math_on_scalars(p):
    a, b, c = p[0], p[1], p[2]
    return (
        math.exp(0.5 * a) + math.sin(b) * math.cos(c) + math.log(1 + b * b) + math.sqrt(2 + a * a)
    )


def _layers(rng):
    sizes = [2, HIDDEN, HIDDEN, 1]
    return (
        [
            (0.5 * rng.normal(size=(m, n)), 0.1 * rng.normal(size=n))
            for m, n in zip(sizes[:-1], sizes[1:])
        ],
    )


@objective(_layers)
def enumerate_layers(layers):
    h = DATA
    for i, (W, b) in enumerate(layers):
        h = h @ W + b
        if i < len(layers) - 1:
            h = np.maximum(0, h)
    return np.sum((h.reshape(-1) - TARGETS) ** 2)


def _weights_biases(rng):
    weights = [0.5 * rng.normal(size=(2, 3)), 0.5 * rng.normal(size=(3, 1))]
    biases = [np.zeros(3), np.zeros(1)]
    return weights, biases


@objective(_weights_biases, wrt=(0, 1))
def zip_weights_biases(weights, biases):
    a = DATA
    for W, b in zip(weights, biases):
        a = np.tanh(np.dot(a, W) + b)
    return mse(a[:, 0], TARGETS)


@objective(lambda rng: ([rng.normal(size=(2, 2)), rng.normal(size=3), rng.normal(size=(1, 4))],))
def list_comprehension_penalty(ws, lam=0.01):
    norms = [np.sum(w**2) for w in ws]
    return lam * sum(norms) + sum(np.sum(np.abs(w)) for w in ws)


@objective(lambda rng: ({"w": rng.normal(size=2), "b": rng.normal(size=1)},))
def dict_comprehension_step(params):
    stepped = {k: v - LEARNING_RATE * 2 * v for k, v in params.items()}
    pred = DATA @ stepped["w"] + stepped["b"]
    return mse(pred, TARGETS)


def loss_and_accuracy(w):
    scores = DATA @ w
    loss = np.mean(np.log1p(np.exp(-scores * np.sign(TARGETS))))
    accuracy = np.mean((scores > 0) == (TARGETS > 0))
    return loss, {"accuracy": accuracy}


@objective(lambda rng: (rng.normal(size=2),), compiler=AUX_DICT)
def tuple_return_aux_unpacked(w):
    loss, aux = loss_and_accuracy(w)
    if aux["accuracy"] > 2:  # never: a value the training loop would log
        return 0.0 * loss
    return loss


@objective(lambda rng: (rng.normal(size=2),), compiler=AUX_DICT)
def tuple_return_indexed(w):
    return loss_and_accuracy(w)[0] + 0.1 * np.sum(w**2)


def forward_with_metrics(w):
    scores = DATA @ w
    margins = scores * np.sign(TARGETS)
    return {"loss": np.mean(np.log1p(np.exp(-margins))), "margin": np.min(margins)}


@objective(lambda rng: (rng.normal(size=2),))
def helper_returning_dict(w):
    metrics = forward_with_metrics(w)
    return metrics["loss"] + 0.01 * metrics["margin"] + 0.0 * forward_with_metrics(w)["loss"]


def make_loss(data, targets, l2=0.1):
    def loss(w):
        residual = data @ w - targets
        return residual @ residual + l2 * w.dot(w)

    return loss


closure_loss = make_loss(DATA, TARGETS)
objective(lambda rng: (rng.normal(size=2),), autograd=PLAIN_DOT)(closure_loss)


@objective(lambda rng: (rng.normal(size=(3, 2)),))
def keyword_defaults(x, scale=2.0, eps=1e-8, axis=0):
    norm = np.sqrt(np.sum(x**2, axis=axis, keepdims=True) + eps)
    return scale * np.sum(x / norm)


@objective(lambda rng: (rng.normal(size=(3, 2)),))
def default_rng_noise_inside(x):
    rng = np.random.default_rng(0)
    noise = rng.normal(size=x.shape)
    jitter = rng.uniform(-0.1, 0.1)
    return np.sum((x + 0.1 * noise) ** 2) * (1 + jitter)


@objective(lambda rng: (rng.normal(size=4),))
def early_return_branches(x, kind="l2"):
    if kind == "l1":
        return np.sum(np.abs(x))
    if kind == "l2":
        return np.sum(x**2)
    return np.max(x)


@objective(lambda rng: (rng.normal(size=4) + 0.5,))
def early_return_on_value(x):
    s = np.sum(x)
    if s > 0:
        return s**2
    elif s > -1:
        return -s
    return 0.0 * s


@objective(lambda rng: (rng.normal(size=3),))
def while_tolerance_gradient_descent(x0, tol=1e-6):
    x = x0
    step = 1.0
    n = 0
    while step > tol and n < 50:
        g = 2 * (x - 1.0) * 0.3
        x = x - LEARNING_RATE * g
        step = np.linalg.norm(LEARNING_RATE * g)
        n += 1
    return np.sum(x**3)


@objective(lambda rng: (rng.normal(size=5),), autograd=WRITES)
def copy_then_assign(x):
    x = x.copy()
    x[0] = x[0] * 2
    x[1:3] += 1.0
    x[-1] = np.exp(x[-1])
    return np.sum(x**2)


@objective(
    lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=(4, 2))), wrt=(0, 1), autograd=PLAIN_DOT
)
def matmul_three_ways(A, B):
    c1 = A @ B
    c2 = np.dot(A, B)
    c3 = A.dot(B)
    c4 = np.matmul(A, B).T
    return np.sum(c1 * c2) + np.sum(c3.T * c4)


@objective(lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=4)), wrt=(0, 1))
def newaxis_transpose_reshape(X, v):
    col = v[:, np.newaxis]
    outer = col * v[np.newaxis, :]
    flat = (X @ outer @ X.T).reshape(-1)
    return np.sum(flat[::2]) + np.sum(X.T.reshape(-1) * np.arange(12))


@objective(lambda rng: (rng.normal(size=6) * 2,))
def astype_clip_where_maximum(x):
    x = x.astype(np.float64)
    idx = (np.abs(x) > 1).astype(int)
    clipped = np.clip(x, -1.5, 1.5)
    leaky = np.where(x > 0, x, 0.1 * x)
    return np.sum(clipped**2) + np.sum(leaky * idx) + np.sum(np.maximum(0, x) ** 3)


@objective(lambda rng: (rng.random(5) * 0.9 + 0.05,))
def binary_cross_entropy_clip(p):
    y = np.array([1, 0, 0, 1, 1])
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


@objective(lambda rng: (rng.normal(size=(4, 3)),))
def python_builtins_on_arrays(X):
    n, d = X.shape
    total = 0
    for row in X:
        total += max(row) - min(row) + abs(row[0])
    return total / n + len(X) * float(d) * 0.0 + round(2.4)


@objective(lambda rng: (rng.normal(size=4),), autograd=WRITES)  # np.empty_like(x): traced
def running_stats_in_loop(x):
    out = np.empty_like(x)
    mean = 0.0
    for i, xi in enumerate(x):
        mean = mean + (xi - mean) / (i + 1)
        out[i] = mean
    return np.sum(out**2)


@objective(lambda rng: (rng.normal(size=(10, 2)), rng.normal(size=2)), wrt=(1,))
def minibatch_loop_with_step(X, w, batch_size=4):
    N = X.shape[0]
    total = 0.0
    for start in range(0, N, batch_size):
        xb = X[start : start + batch_size]
        total += np.sum(np.tanh(xb @ w)) / len(xb)
    return total


@objective(lambda rng: (rng.normal(size=(3, 4)),))
def method_chains_and_keepdims(x):
    centered = x - x.mean(axis=1, keepdims=True)
    scaled = centered / (x.std(axis=1, keepdims=True) + 1e-6)
    return (scaled**2).sum(axis=0).max() + np.abs(x).sum() * 0.1 + x.T.ravel()[3]


@objective(lambda rng: (rng.normal(size=5),))
def sort_and_topk(x):
    s = np.sort(x)[::-1]
    top = s[:3]
    idx = np.argsort(x)
    return np.sum(top**2) + x[idx[0]] * 2.0


@objective(lambda rng: (rng.normal(size=(2, 3)), rng.normal(size=(3, 2))), wrt=(0, 1))
def einsum_kron_outer(A, B):
    c = np.einsum("ij,jk->ik", A, B)
    k = np.kron(c, np.eye(2))
    o = np.outer(A[0], B[:, 1])
    return np.sum(k**2) + np.trace(o) + np.sum(np.tril(A @ A.T))


def softplus(z):
    return np.logaddexp(0, z)


@objective(lambda rng: (rng.normal(size=4),))
def nested_helpers_and_lambda(x):
    act = lambda z: softplus(z) - 0.5 * z  # noqa: E731
    square = lambda z: z * z  # noqa: E731
    return np.sum(square(act(x))) + sum(act(xi) for xi in x)


@objective(lambda rng: (rng.random(6) * 0.8 + 0.1,))
def entropy_with_where(p):
    p = p / p.sum()
    q = np.array([0.0, 0.2, 0.2, 0.2, 0.2, 0.2])
    kl = np.sum(np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0) / p), 0.0))
    return -np.sum(p * np.log(p)) + kl


@objective(lambda rng: (rng.normal(size=6),), autograd=WRITES)
def boolean_mask_assignment(x):
    y = x.copy()
    y[y < 0] = 0.0
    y[np.abs(x) > 1.5] *= 0.5
    return np.sum(y**2) + np.sum(x[x > 0])


@objective(
    lambda rng: (rng.normal(size=5),),
    compiler="np.add.at writes into an array in place (refused with a true hint)",
    tracing="np.bincount has no derivative rule (refused at the call)",
    autograd="autograd has no bincount weights nor add.at",
)
def bincount_and_add_at(x):
    groups = np.array([0, 1, 0, 2, 1])
    sums = np.bincount(groups, weights=x, minlength=3)
    acc = np.zeros(3)
    np.add.at(acc, groups, x**2)
    return np.sum(sums**2) + np.sum(acc * np.arange(1.0, 4.0))


@objective(
    lambda rng: (rng.normal(size=(2, 5)),),
    compiler=FLAT,
    tracing=FLAT,
    autograd="autograd has no vjp for np.flip",
)
def unpack_rows_flip_roll(x):
    a, b = x
    return np.sum(a[::-1] * b) + np.sum(np.roll(a, 2) * np.flip(b)) + x.flat[3] * 2.0


@objective(
    lambda rng: (rng.normal(size=(3, 4)),),
    autograd=WRITES,
)
def slice_augassign_in_loop(x):
    h = np.zeros((3, 4))
    for t in range(4):
        h[:, t] += np.tanh(x[:, t]) * (t + 1)
        if t > 0:
            h[:, t] += 0.5 * h[:, t - 1]
    return np.sum(h**2)


@objective(lambda rng: (rng.normal(size=4).astype(np.float32),))
def float32_input(x):
    return np.sum(np.exp(x) * x)


@objective(
    lambda rng: (rng.normal(size=(3, 4)),),
    autograd="autograd has no scipy.special.softmax",
)
def scipy_softmax_cross_entropy(z):
    from_scipy = softmax(z, axis=1)
    labels = np.array([1, 0, 3])
    return -np.mean(np.log(from_scipy[np.arange(3), labels]))
