"""Convolution and pooling written with loops and slices, as course assignments do."""

import numpy as np

from corpus_models import model


def _img(rng):
    return rng.normal(size=(5, 5)), rng.normal(size=(3, 3))


@model(_img, wrt=(0, 1))
def conv2d_valid_loops(image, kernel):
    out = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = np.sum(image[i : i + 3, j : j + 3] * kernel)
    return np.sum(np.tanh(out))


@model(_img, wrt=(0, 1))
def conv2d_same_padding(image, kernel):
    padded = np.pad(image, 1, mode="constant")
    total = 0.0
    for i in range(5):
        for j in range(5):
            total = total + np.sum(padded[i : i + 3, j : j + 3] * kernel) ** 2
    return total / 25.0


@model(lambda rng: (rng.normal(size=(4, 4)),))
def max_pool_2x2(x):
    pooled = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            pooled[i, j] = np.max(x[2 * i : 2 * i + 2, 2 * j : 2 * j + 2])
    return np.sum(pooled * np.array([[1.0, -2.0], [0.5, 3.0]]))


@model(lambda rng: (rng.normal(size=(4, 6)),))
def average_pool_by_reshape(x):
    blocks = np.reshape(x, (2, 2, 3, 2))
    pooled = np.mean(np.swapaxes(blocks, 1, 2), axis=(2, 3))
    return np.sum(np.exp(pooled))


@model(lambda rng: (rng.normal(size=12), rng.normal(size=3)), wrt=(0, 1))
def conv1d_with_flip(signal, taps):
    flipped = np.flip(taps)
    out = np.zeros(10)
    for t in range(10):
        out[t] = np.dot(signal[t : t + 3], flipped)
    return np.sum(out**2) + np.sum(np.diff(out) ** 2)


@model(lambda rng: (rng.normal(size=(2, 3, 3)), rng.normal(size=(4, 2))), wrt=(0, 1))
def pointwise_conv_einsum(x, w):
    y = np.einsum("chw,oc->ohw", x, w)
    return np.sum(np.maximum(y, 0.1 * y))
