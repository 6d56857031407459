"""Attention: scaled dot-product, masked (causal), multi-head by reshapes, pooling."""

import numpy as np
from scipy.special import softmax

from corpus_models import model


def _qkv(rng):
    return rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))


@model(_qkv, wrt=(0, 1, 2))
def scaled_dot_product_attention(q, k, v):
    scores = q @ k.T / np.sqrt(3.0)
    weights = np.exp(scores - np.max(scores, axis=1, keepdims=True))
    weights = weights / np.sum(weights, axis=1, keepdims=True)
    return np.sum((weights @ v) ** 2)


@model(_qkv, wrt=(0, 1, 2))
def causal_attention_masked(q, k, v):
    scores = q @ k.T / np.sqrt(3.0)
    scores = np.where(np.tril(np.ones((4, 4))) > 0, scores, -1e9)
    weights = softmax(scores, axis=-1)
    return np.sum(weights @ v * np.array([1.0, -1.0]))


@model(
    lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=(4, 4)) * 0.5),
    wrt=(0, 1),
)
def two_head_self_attention(x, w):
    qkv = x @ w
    heads = np.transpose(np.reshape(qkv, (3, 2, 2)), (1, 0, 2))
    scores = np.matmul(heads, np.swapaxes(heads, -1, -2))
    weights = softmax(scores, axis=-1)
    mixed = np.matmul(weights, heads)
    return np.sum(np.moveaxis(mixed, 0, 1).reshape(3, 4) ** 2)


@model(lambda rng: (rng.normal(size=(5, 3)), rng.normal(size=3)), wrt=(0, 1))
def attention_pooling(h, query):
    logits = h @ query
    alpha = softmax(logits)
    pooled = alpha @ h
    return np.sum(pooled * pooled)
