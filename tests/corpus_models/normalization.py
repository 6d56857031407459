"""Normalisation layers: batch norm, layer norm, group norm, whitening by std."""

import numpy as np

from corpus_models import model


def _bn(rng):
    return rng.normal(size=(6, 4)), rng.normal(size=4) + 1.0, rng.normal(size=4)


@model(_bn, wrt=(0, 1, 2))
def batch_norm_train(x, gamma, beta):
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    xhat = (x - mean) / np.sqrt(var + 1e-5)
    y = gamma * xhat + beta
    return np.sum(y * y * np.arange(1.0, 5.0))


@model(_bn, wrt=(0, 1, 2))
def layer_norm_tanh(x, gamma, beta):
    mu = np.mean(x, axis=-1, keepdims=True)
    sigma = np.std(x, axis=-1, keepdims=True)
    h = np.tanh(gamma * (x - mu) / (sigma + 1e-6) + beta)
    return np.sum(h[:, 0] - h[:, 3] * h[:, 1])


@model(lambda rng: (rng.normal(size=(2, 4, 3)),))
def group_norm_two_groups(x):
    groups = np.reshape(x, (2, 2, 6))
    centered = groups - np.mean(groups, axis=2, keepdims=True)
    normed = centered / np.sqrt(np.var(groups, axis=2, ddof=1, keepdims=True) + 1e-3)
    return np.sum(np.reshape(normed, (2, 4, 3))[:, 0, :] ** 3)


@model(lambda rng: (rng.normal(size=(8, 3)), rng.normal(size=3)), wrt=(0, 1))
def standardized_regression(features, w):
    z = (features - features.mean(axis=0)) / features.std(axis=0, ddof=1)
    pred = z @ w
    target = np.linspace(-1.0, 1.0, 8)
    return np.mean((pred - target) ** 2)


@model(lambda rng: (rng.normal(size=(5, 3)),))
def rms_norm(x):
    scale = np.sqrt(np.mean(np.square(x), axis=1, keepdims=True) + 1e-6)
    return np.sum(np.cumsum(x / scale, axis=1)[:, -1] ** 2)
