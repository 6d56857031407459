"""Recurrent cells unrolled over a short sequence: vanilla RNN, LSTM, GRU."""

import numpy as np
from scipy.special import expit

from corpus_models import model


def _seq(rng):
    return (
        rng.normal(size=(4, 3)) * 0.5,
        rng.normal(size=(3, 5)) * 0.5,
        rng.normal(size=(5, 5)) * 0.5,
    )


@model(_seq, wrt=(1, 2))
def rnn_tanh_last_state(xs, wx, wh):
    h = np.zeros(5)
    for t in range(4):
        h = np.tanh(xs[t] @ wx + h @ wh)
    return np.sum(h * h)


def _lstm(rng):
    return (
        rng.normal(size=(3, 2)) * 0.5,
        rng.normal(size=(2, 16)) * 0.5,
        rng.normal(size=(4, 16)) * 0.5,
    )


@model(_lstm, wrt=(0, 1, 2))
def lstm_cell_unrolled(xs, wx, wh):
    h = np.zeros(4)
    c = np.zeros(4)
    for t in range(3):
        z = xs[t] @ wx + h @ wh
        i = expit(z[0:4])
        f = expit(z[4:8])
        o = expit(z[8:12])
        g = np.tanh(z[12:16])
        c = f * c + i * g
        h = o * np.tanh(c)
    return np.sum(h) + 0.5 * np.sum(c * c)


def _gru(rng):
    return (
        rng.normal(size=(3, 2)) * 0.5,
        rng.normal(size=(2, 9)) * 0.5,
        rng.normal(size=(3, 9)) * 0.5,
    )


@model(_gru, wrt=(0, 1, 2))
def gru_cell_unrolled(xs, wx, wh):
    h = np.zeros(3)
    for t in range(3):
        zx = xs[t] @ wx
        zh = h @ wh
        r = expit(zx[0:3] + zh[0:3])
        u = expit(zx[3:6] + zh[3:6])
        n = np.tanh(zx[6:9] + r * zh[6:9])
        h = (1 - u) * n + u * h
    return np.sum(np.hstack([h, h * h]))


@model(lambda rng: (rng.normal(size=(5, 2)), rng.normal(size=(2, 2)) * 0.5), wrt=(0, 1))
def rnn_over_padded_sequence(xs, w):
    padded = np.pad(xs, ((1, 0), (0, 0)), mode="constant")
    h = np.zeros(2)
    for t in range(6):
        h = np.tanh(padded[t] + h @ w)
    return np.sum(h**2)
