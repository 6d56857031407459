"""Statements kept for their side effect: print, assert, with, raise, logging."""

import logging

import numpy as np

from corpus_python.common import Program

LOG = logging.getLogger("corpus_python")


def printed_loss(w, X, y):
    residual = X @ w - y
    loss = np.mean(residual**2)
    print(f"loss = {loss} over {len(y)} samples")
    return loss


def asserted_shapes(W, X):
    assert X.ndim == 2, "X must be a matrix"
    assert W.shape[0] == X.shape[1], f"shapes {W.shape} and {X.shape} do not match"
    Z = X @ W
    assert np.allclose(Z, X @ W)
    return np.sum(np.log1p(Z**2))


def errstate_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x**2 + 1.0)
    return np.sum(y * x)


def raise_on_bad_input(x):
    if np.any(x <= 0):
        raise ValueError("x must be positive")
    return np.sum(np.sqrt(x) * x)


def print_each_step(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.cos(k * x))
        print("step", k, "partial sum", s)
    return s


def logged_value(x):
    energy = np.sum(x**4) / 4
    LOG.debug("energy %s", energy)
    return energy


def testing_check(x):
    np.testing.assert_array_less(-100.0, x)
    return np.sum(np.tanh(x) * x)


def _positive(r):
    return (np.abs(r.normal(size=4)) + 0.5,)


PROGRAMS = [
    Program(
        printed_loss,
        lambda r: (r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)),
        loop_free=True,
    ),
    Program(
        asserted_shapes, lambda r: (r.normal(size=(3, 2)), r.normal(size=(4, 3))), loop_free=True
    ),
    Program(errstate_log, lambda r: (r.normal(size=4),), loop_free=True),
    Program(raise_on_bad_input, _positive),
    Program(print_each_step, lambda r: (r.normal(size=3),)),
    Program(logged_value, lambda r: (r.normal(size=4),), loop_free=True),
    Program(testing_check, lambda r: (r.normal(size=4),), loop_free=True, autograd=False),
]
