"""Classification and regression losses: softmax cross-entropy, multiclass SVM, focal,
logistic, Huber, contrastive, triplet."""

import numpy as np
from scipy.special import expit, log_softmax

from corpus_models import model

LABELS = np.array([2, 0, 1, 2])


def _cls(rng):
    return rng.normal(size=(4, 3)), rng.normal(size=(3, 3)) * 0.5


@model(_cls, wrt=(0, 1))
def softmax_cross_entropy(x, w):
    logits = x @ w
    logits = logits - np.max(logits, axis=1, keepdims=True)
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.take_along_axis(logp, LABELS[:, None], axis=1))


@model(_cls, wrt=(0, 1))
def cross_entropy_with_log_softmax(x, w):
    logp = log_softmax(x @ w, axis=1)
    return -np.sum(logp[np.arange(4), LABELS]) / 4.0


@model(_cls, wrt=(0, 1))
def multiclass_svm_hinge(x, w):
    scores = x @ w
    correct = np.take_along_axis(scores, LABELS[:, None], axis=1)
    margins = np.maximum(0.0, scores - correct + 1.0)
    margins = margins * (np.arange(3)[None, :] != LABELS[:, None])
    return np.sum(margins) / 4.0 + 0.1 * np.sum(w * w)


@model(_cls, wrt=(0, 1))
def focal_loss(x, w):
    logits = x @ w
    p = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    p = p / np.sum(p, axis=1, keepdims=True)
    pt = p[np.arange(4), LABELS]
    return -np.mean((1 - pt) ** 2 * np.log(pt))


@model(lambda rng: (rng.normal(size=3), rng.normal(size=(6, 3))), wrt=(0,))
def logistic_regression_nll(w, features):
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    p = expit(features @ w)
    return -np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)) + 0.01 * np.dot(w, w)


@model(lambda rng: (rng.normal(size=8) * 2,))
def huber_loss(r):
    small = np.abs(r) <= 1.0
    return np.sum(np.where(small, 0.5 * r * r, np.abs(r) - 0.5))


@model(
    lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))),
    wrt=(0, 1, 2),
)
def triplet_margin_loss(anchor, positive, negative):
    dp = np.linalg.norm(anchor - positive, axis=1)
    dn = np.linalg.norm(anchor - negative, axis=1)
    return np.sum(np.maximum(dp - dn + 0.5, 0.0) + 0.01 * dp)


@model(lambda rng: (rng.normal(size=(4, 3)), rng.normal(size=(4, 3))), wrt=(0, 1))
def cosine_contrastive_loss(a, b):
    an = a / np.linalg.norm(a, axis=1, keepdims=True)
    bn = b / np.linalg.norm(b, axis=1, keepdims=True)
    sim = an @ bn.T / 0.5
    logp = sim - np.log(np.sum(np.exp(sim), axis=1, keepdims=True))
    return -np.trace(logp) / 4.0
