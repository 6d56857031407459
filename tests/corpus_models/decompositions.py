"""Models built on primitives with several results and on matrix norms: a GP with
``slogdet``, PCA by ``eigh``, low-rank and spectral penalties by ``svd`` and matrix
norms, an LSTM cell whose gates come from one ``np.split``, a sequence model with an
N-d ``np.dot``."""

import numpy as np

from corpus_models import model


def _gp(rng):
    return np.array([0.3]), np.array([-0.5]), rng.normal(size=6), np.linspace(-1.0, 1.0, 6)


@model(_gp, wrt=(0, 1))
def gp_marginal_likelihood_slogdet(log_length, log_noise, y, x):
    d = x[:, None] - x[None, :]
    k = np.exp(-0.5 * d * d / np.exp(2 * log_length[0])) + np.exp(2 * log_noise[0]) * np.eye(6)
    sign, logdet = np.linalg.slogdet(k)
    return 0.5 * y @ np.linalg.solve(k, y) + 0.5 * logdet


def _pca(rng):
    return (rng.normal(size=(8, 4)) * np.array([3.0, 2.0, 1.0, 0.5]),)


@model(_pca)
def pca_reconstruction_error(data):
    centered = data - np.mean(data, axis=0)
    cov = centered.T @ centered / 8
    w, v = np.linalg.eigh(cov)
    top = v[:, 2:]
    recon = centered @ top @ top.T
    return np.sum((centered - recon) ** 2) + np.sum(w)


def _completion(rng):
    truth = rng.normal(size=(4, 2)) @ rng.normal(size=(2, 5))
    mask = rng.uniform(size=(4, 5)) < 0.7
    return rng.normal(size=(4, 5)), truth, mask


@model(_completion)
def nuclear_norm_matrix_completion(w, truth, mask):
    fit = np.sum(np.where(mask, w - truth, 0.0) ** 2)
    return fit + 0.5 * np.linalg.norm(w, "nuc")


def _spectral(rng):
    return rng.normal(size=(4, 3)), rng.normal(size=(6, 4)), rng.normal(size=(6, 3))


@model(_spectral)
def spectral_norm_regression(w, x, y):
    residual = x @ w - y
    return np.mean(residual**2) + 0.1 * np.linalg.norm(w, 2) + 0.05 * np.linalg.norm(w, 1)


@model(_spectral)
def truncated_svd_energy(w, x, y):
    u, s, vh = np.linalg.svd(x @ w, full_matrices=False)
    low_rank = (u[:, :2] * s[:2]) @ vh[:2]
    return np.sum((low_rank - y) ** 2) + np.sum(s[2:])


def _lstm(rng):
    return (
        rng.normal(size=(3, 16)) * 0.4,
        rng.normal(size=(4, 16)) * 0.4,
        np.zeros(16),
        rng.normal(size=(2, 3)),
        rng.normal(size=(2, 4)),
        rng.normal(size=(2, 4)),
    )


@model(_lstm, wrt=(0, 1, 2))
def lstm_cell_split_gates(w_x, w_h, b, x, h, c):
    z = x @ w_x + h @ w_h + b
    i, f, o, g = np.split(z, 4, axis=1)
    c_next = c / (1 + np.exp(-f)) + np.tanh(g) / (1 + np.exp(-i))
    h_next = np.tanh(c_next) / (1 + np.exp(-o))
    return np.sum(h_next**2) + np.sum(c_next)


def _sequence(rng):
    return rng.normal(size=(5, 2)) * 0.5, rng.normal(size=(3, 4, 5)), rng.normal(size=(3, 4, 2))


@model(_sequence)
def sequence_projection_nd_dot(w, xs, targets):
    logits = np.dot(xs, w)
    first, rest = np.array_split(logits, [1], axis=1)
    return np.sum((logits - targets) ** 2) + np.sum(np.tanh(first)) * 0.1 + np.mean(rest)
