"""Course-assignment style (a CS231n-like first half of a deep learning course):
``N, D = X.shape``, softmax and SVM losses with loops over samples, a two-layer net
with a dict of W1/b1/W2/b2, ``reg * np.sum(W * W)``, dropout masks from a fixed seed,
batchnorm with running statistics, layer helpers returning ``(out, cache)``."""

import numpy as np

from corpus_public import (
    PLAIN_DOT,
    WRITES,
    objective,
)

NUM_CLASSES = 3


def _linear(rng):
    X = rng.normal(size=(5, 4))
    y = np.array([0, 2, 1, 1, 0])
    W = 0.1 * rng.normal(size=(4, NUM_CLASSES))
    return W, X, y, 0.05


@objective(_linear, autograd=PLAIN_DOT)
def softmax_loss_naive(W, X, y, reg):
    loss = 0.0
    num_train = X.shape[0]
    for i in range(num_train):
        scores = X[i].dot(W)
        scores -= np.max(scores)
        correct_class_score = scores[y[i]]
        loss += -correct_class_score + np.log(np.sum(np.exp(scores)))
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


@objective(_linear)
def svm_loss_naive(W, X, y, reg):
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1  # note delta = 1
            if margin > 0:
                loss += margin
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


@objective(_linear, autograd=WRITES)
def svm_loss_vectorized(W, X, y, reg):
    N = X.shape[0]
    scores = X.dot(W)
    correct = scores[np.arange(N), y][:, np.newaxis]
    margins = np.maximum(0, scores - correct + 1)
    margins[np.arange(N), y] = 0
    loss = np.sum(margins) / N
    loss += reg * np.sum(W * W)
    return loss


@objective(_linear)
def softmax_loss_vectorized(W, X, y, reg):
    N, D = X.shape
    scores = X @ W
    scores = scores - scores.max(axis=1, keepdims=True)
    exp_scores = np.exp(scores)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    correct_logprobs = -np.log(probs[range(N), y])
    data_loss = np.sum(correct_logprobs) / N
    reg_loss = 0.5 * reg * np.sum(W * W)
    return data_loss + reg_loss


def _net(rng):
    params = {
        "W1": 0.3 * rng.normal(size=(4, 6)),
        "b1": 0.1 * rng.normal(size=6),
        "W2": 0.3 * rng.normal(size=(6, NUM_CLASSES)),
        "b2": 0.1 * rng.normal(size=NUM_CLASSES),
    }
    X = rng.normal(size=(5, 4))
    return params, X, np.array([0, 2, 1, 1, 0])


@objective(_net, autograd=PLAIN_DOT)
def two_layer_net_loss(params, X, y, reg=0.05):
    W1, b1 = params["W1"], params["b1"]
    W2, b2 = params["W2"], params["b2"]
    N, D = X.shape
    hidden = np.maximum(0, X.dot(W1) + b1)
    scores = hidden.dot(W2) + b2
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    loss += reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
    return loss


def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def relu_forward(x):
    out = np.maximum(0, x)
    cache = x
    return out, cache


@objective(_net, autograd=PLAIN_DOT)
def affine_relu_affine_with_caches(params, X, y):
    a, fc_cache = affine_forward(X, params["W1"], params["b1"])
    h, relu_cache = relu_forward(a)
    scores, fc2_cache = affine_forward(h, params["W2"], params["b2"])
    N = X.shape[0]
    correct = scores[np.arange(N), y]
    return np.mean(np.log(np.sum(np.exp(scores), axis=1)) - correct)


def _fc(rng):
    dims = [4, 5, 5, NUM_CLASSES]
    params = {}
    for i in range(len(dims) - 1):
        params["W" + str(i + 1)] = 0.4 * rng.normal(size=(dims[i], dims[i + 1]))
        params["b" + str(i + 1)] = np.zeros(dims[i + 1])
    return params, rng.normal(size=(5, 4))


@objective(_fc)
def fully_connected_net_string_keys(params, X, num_layers=3, reg=0.01):
    out = X
    for i in range(1, num_layers):
        out = np.maximum(0, out @ params["W%d" % i] + params["b%d" % i])
    scores = out @ params[f"W{num_layers}"] + params[f"b{num_layers}"]
    loss = np.sum(scores**2) / X.shape[0]
    for i in range(1, num_layers + 1):
        loss += 0.5 * reg * np.sum(params["W" + str(i)] ** 2)
    return loss


@objective(_fc)
def fully_connected_net_literal_range(params, X, reg=0.01):
    out = X
    for i in range(1, 3):
        out = np.maximum(0, out @ params["W%d" % i] + params["b" + str(i)])
    scores = out @ params["W3"] + params["b3"]
    loss = np.sum(scores**2) / X.shape[0]
    for i in range(1, 4):
        loss += 0.5 * reg * np.sum(params[f"W{i}"] ** 2)
    return loss


@objective(lambda rng: (rng.normal(size=(4, 5)),))
def dropout_forward_train(x, p=0.5):
    np.random.seed(0)
    mask = (np.random.rand(*x.shape) < p) / p
    out = x * mask
    return np.sum(out**2)


@objective(lambda rng: (rng.normal(size=(4, 5)),))
def inverted_dropout_default_rng(x, keep_prob=0.8):
    rng = np.random.default_rng(0)
    mask = rng.random(x.shape) < keep_prob
    out = np.where(mask, x / keep_prob, 0.0)
    return np.sum(np.tanh(out))


BN_RUNNING_MEAN = np.array([0.1, -0.2, 0.0])
BN_RUNNING_VAR = np.array([1.0, 0.5, 2.0])


def _bn(rng):
    return rng.normal(size=(6, 3)) * 2 + 1, 1 + 0.1 * rng.normal(size=3), 0.1 * rng.normal(size=3)


@objective(_bn, wrt=(0, 1, 2))
def batchnorm_forward_train(x, gamma, beta, eps=1e-5, momentum=0.9):
    sample_mean = np.mean(x, axis=0)
    sample_var = np.var(x, axis=0)
    x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
    out = gamma * x_hat + beta
    running_mean = momentum * BN_RUNNING_MEAN + (1 - momentum) * sample_mean
    running_var = momentum * BN_RUNNING_VAR + (1 - momentum) * sample_var
    assert running_mean.shape == running_var.shape
    return np.sum(out * np.arange(18.0).reshape(6, 3) / 10)


@objective(_bn, wrt=(0, 1, 2))
def batchnorm_forward_test_mode(x, gamma, beta, mode="test", eps=1e-5):
    if mode == "train":
        mu, var = x.mean(axis=0), x.var(axis=0)
    elif mode == "test":
        mu, var = BN_RUNNING_MEAN, BN_RUNNING_VAR
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    out = gamma * (x - mu) / np.sqrt(var + eps) + beta
    return np.sum(np.sin(out))


@objective(_bn, wrt=(0, 1, 2))
def layernorm_by_transpose(x, gamma, beta, eps=1e-5):
    xt = x.T
    mu = xt.mean(axis=0)
    var = xt.var(axis=0)
    x_hat = ((xt - mu) / np.sqrt(var + eps)).T
    out = gamma * x_hat + beta
    return np.sum(out**3) / 10


def _rnn(rng):
    N, T, D, H = 2, 4, 3, 5
    x = rng.normal(size=(N, T, D))
    h0 = rng.normal(size=(N, H))
    Wx = 0.3 * rng.normal(size=(D, H))
    Wh = 0.3 * rng.normal(size=(H, H))
    b = 0.1 * rng.normal(size=H)
    return x, h0, Wx, Wh, b


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


@objective(_rnn, wrt=(0, 1, 2, 3, 4), autograd=PLAIN_DOT)
def rnn_forward_list_of_states(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    hs = []
    prev_h = h0
    for t in range(T):
        prev_h, _ = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        hs.append(prev_h)
    h = np.stack(hs, axis=1)
    return np.sum(h * h) + np.sum(h[:, -1, :])


@objective(_rnn, wrt=(0, 1, 2, 3, 4), autograd=WRITES)
def rnn_forward_into_zeros(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    prev_h = h0
    for t in range(T):
        prev_h = np.tanh(x[:, t, :] @ Wx + prev_h @ Wh + b)
        h[:, t, :] = prev_h
    return np.sum(h**2)


def _embed(rng):
    return rng.normal(size=(7, 3)), np.array([[0, 3, 6], [3, 3, 1]])


@objective(_embed)
def word_embedding_forward(W, x):
    out = W[x, :]
    N, T, D = out.shape
    return np.sum(out.reshape(N * T, D) @ np.arange(1.0, D + 1))


def _temporal(rng):
    x = rng.normal(size=(2, 3, 4))
    y = np.array([[0, 1, 3], [2, 2, 0]])
    mask = np.array([[True, True, False], [True, True, True]])
    return x, y, mask


@objective(_temporal)
def temporal_softmax_loss(x, y, mask):
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    return loss


def _conv(rng):
    return rng.normal(size=(1, 2, 4, 4)), 0.3 * rng.normal(size=(2, 2, 3, 3)), rng.normal(size=2)


@objective(_conv, wrt=(0, 1, 2), autograd=WRITES)
def conv_forward_naive(x, w, b, stride=1, pad=1):
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    window = x_pad[n, :, i * stride : i * stride + HH, j * stride : j * stride + WW]
                    out[n, f, i, j] = np.sum(window * w[f]) + b[f]
    return np.sum(out**2) / 100


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _logreg(rng):
    return 0.1 * rng.normal(size=4), rng.normal(size=(8, 4)), (rng.random(8) > 0.5).astype(float)


@objective(_logreg)
def logistic_cost_with_helper(theta, X, y, lambda_=0.1):
    m = len(y)
    h = sigmoid(X @ theta)
    J = (-y @ np.log(h) - (1 - y) @ np.log(1 - h)) / m
    J += lambda_ / (2 * m) * np.sum(theta[1:] ** 2)
    return J
