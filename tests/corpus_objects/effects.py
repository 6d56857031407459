"""Statements kept for their effect: ``np.random.seed(0)`` before a dropout mask, prints
and shape checks, ``assert``, writes into a dict of state that gets no gradient
(``bn_param["running_mean"] = ...``, a counter on ``self``)."""

import numpy as np

from corpus_objects import program


def dropout_loss(w, X):
    np.random.seed(0)
    mask = (np.random.rand(*X.shape) < 0.7) / 0.7
    h = np.tanh(X @ w) * mask[:, : w.shape[1]]
    return np.sum(h**2)


@program("effects", wrt=("w",))
def seeded_dropout(rng):
    return dropout_loss, (rng.normal(size=(3, 3)), rng.normal(size=(4, 3)))


def verbose_loss(w, X, y):
    pred = X @ w
    print("pred shape:", pred.shape)
    assert pred.shape == y.shape, "shapes differ"
    loss = np.mean((pred - y) ** 2)
    print(f"loss = {loss}")
    return loss


@program("effects", wrt=("w",))
def prints_and_asserts(rng):
    return verbose_loss, (rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5))


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    if mode == "train":
        sample_mean = np.mean(x, axis=0)
        sample_var = np.var(x, axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
        cache = (x_hat, gamma, sample_var, eps)
    else:
        x_hat = (x - running_mean) / np.sqrt(running_var + eps)
        out = gamma * x_hat + beta
        cache = None
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, cache


@program("effects", wrt=("x", "gamma", "beta"), kind="vjp")
def batchnorm_running_statistics(rng):
    x = rng.normal(size=(5, 3))
    return batchnorm_forward, (x, rng.normal(size=3), rng.normal(size=3), {"mode": "train"})


def batchnorm_loss(gamma, beta, x, bn_param):
    out, _ = batchnorm_forward(x, gamma, beta, bn_param)
    return np.sum(out**3)


@program("effects", wrt=("gamma", "beta"))
def batchnorm_state_inside_loss(rng):
    return batchnorm_loss, (
        rng.normal(size=2),
        rng.normal(size=2),
        rng.normal(size=(4, 2)),
        {"mode": "train", "momentum": 0.5},
    )


class CountingObjective:
    def __init__(self, A):
        self.A = A
        self.calls = 0
        self.history = []

    def __call__(self, x):
        self.calls += 1
        value = np.sum((self.A @ x) ** 2) + np.sum(np.cos(x))
        self.history.append(self.calls)
        return value


@program("effects", wrt=("x",))
def counter_on_self(rng):
    return CountingObjective(rng.normal(size=(3, 3))), (rng.normal(size=3),)


def checked_softmax_loss(W, X, y):
    if not np.all(np.isfinite(X)):
        raise ValueError("X has NaN or inf")
    np.random.seed(1)
    scores = X @ W
    scores = scores - np.max(scores, axis=1, keepdims=True)
    p = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    return -np.mean(np.log(p[np.arange(X.shape[0]), y]))


@program("effects", wrt=("W",))
def finite_check_and_seed(rng):
    return checked_softmax_loss, (
        rng.normal(size=(3, 3)),
        rng.normal(size=(4, 3)),
        np.array([0, 2, 1, 0]),
    )
