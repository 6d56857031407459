"""Course layer functions (a CS231n-like assignment): each ``*_forward`` returns
``(out, cache)``, the cache a tuple of what a hand-written backward would need. The
user asks ``vjp`` for the pullback and seeds the cache with ``None``."""

import numpy as np
from corpus_public.course import affine_forward, relu_forward

from corpus_objects import BOX_DOT, program


def affine_relu_forward(x, w, b):
    a, fc_cache = affine_forward(x, w, b)
    out, relu_cache = relu_forward(a)
    cache = (fc_cache, relu_cache)
    return out, cache


def sigmoid_forward(x):
    out = 1 / (1 + np.exp(-x))
    return out, out


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x @ Wx + prev_h @ Wh + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def word_embedding_forward(x, W):
    out = W[x]
    cache = (x, W.shape)
    return out, cache


def temporal_affine_forward(x, w, b):
    N, T, D = x.shape
    M = b.shape[0]
    out = x.reshape(N * T, D).dot(w).reshape(N, T, M) + b
    cache = x, w, b, out
    return out, cache


def layernorm_forward(x, gamma, beta, ln_param):
    eps = ln_param.get("eps", 1e-5)
    mu = np.mean(x, axis=1, keepdims=True)
    xc = x - mu
    var = np.mean(xc**2, axis=1, keepdims=True)
    std = np.sqrt(var + eps)
    xhat = xc / std
    out = gamma * xhat + beta
    cache = (xhat, gamma, std)
    return out, cache


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    i = 1 / (1 + np.exp(-a[:, :H]))
    f = 1 / (1 + np.exp(-a[:, H : 2 * H]))
    o = 1 / (1 + np.exp(-a[:, 2 * H : 3 * H]))
    g = np.tanh(a[:, 3 * H :])
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    cache = (x, prev_h, prev_c, Wx, Wh, a, i, f, o, g, next_c)
    return next_h, next_c, cache


def conv1d_forward(x, w, b, conv_param):
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, L = x.shape
    F, _, K = w.shape
    x_padded = np.pad(x, ((0, 0), (0, 0), (pad, pad)))
    L_out = 1 + (L + 2 * pad - K) // stride
    columns = []
    for t in range(L_out):
        window = x_padded[:, :, t * stride : t * stride + K]
        columns.append(np.einsum("nck,fck->nf", window, w) + b)
    out = np.stack(columns, axis=2)
    cache = (x, w, b, conv_param)
    return out, cache


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    else:
        out = x
    cache = (dropout_param, mask)
    return out, cache


def max_pool_forward(x, pool_param):
    N, C, H, W = x.shape
    ph, pw = pool_param["pool_height"], pool_param["pool_width"]
    out = x.reshape(N, C, H // ph, ph, W // pw, pw).max(axis=(3, 5))
    cache = (x, pool_param, out)
    return out, cache


def softmax_loss(x, y):
    shifted = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted), axis=1, keepdims=True)
    log_probs = shifted - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = probs.copy()
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


@program("cache_vjp", wrt=("x", "w", "b"), kind="vjp", autograd=BOX_DOT)
def affine_forward_cache(rng):
    return affine_forward, (rng.normal(size=(3, 2, 2)), rng.normal(size=(4, 5)), rng.normal(size=5))


@program("cache_vjp", wrt=("x",), kind="vjp")
def relu_forward_cache(rng):
    return relu_forward, (rng.normal(size=(4, 3)),)


@program("cache_vjp", wrt=("x", "w", "b"), kind="vjp", autograd=BOX_DOT)
def affine_relu_forward_cache(rng):
    return affine_relu_forward, (
        rng.normal(size=(2, 3)),
        rng.normal(size=(3, 4)),
        rng.normal(size=4),
    )


@program("cache_vjp", wrt=("x",), kind="vjp")
def sigmoid_forward_cache(rng):
    return sigmoid_forward, (rng.normal(size=(2, 5)),)


@program("cache_vjp", wrt=("x", "prev_h", "Wx", "Wh", "b"), kind="vjp")
def rnn_step_forward_cache(rng):
    N, D, H = 2, 3, 4
    return rnn_step_forward, (
        rng.normal(size=(N, D)), rng.normal(size=(N, H)), 0.3 * rng.normal(size=(D, H)),
        0.3 * rng.normal(size=(H, H)), rng.normal(size=H),
    )  # fmt: skip


@program("cache_vjp", wrt=("W",), kind="vjp")
def word_embedding_forward_cache(rng):
    return word_embedding_forward, (np.array([[0, 3, 1], [2, 2, 4]]), rng.normal(size=(5, 3)))


@program("cache_vjp", wrt=("x", "w", "b"), kind="vjp", autograd=BOX_DOT)
def temporal_affine_forward_cache(rng):
    return temporal_affine_forward, (
        rng.normal(size=(2, 3, 4)),
        rng.normal(size=(4, 2)),
        rng.normal(size=2),
    )


@program("cache_vjp", wrt=("x", "gamma", "beta"), kind="vjp")
def layernorm_forward_cache(rng):
    return layernorm_forward, (
        rng.normal(size=(3, 4)),
        rng.normal(size=4),
        rng.normal(size=4),
        {"eps": 1e-5},
    )


@program("cache_vjp", wrt=("x", "prev_h", "prev_c", "Wx", "Wh", "b"), kind="vjp")
def lstm_step_forward_next_h(rng):
    N, D, H = 2, 3, 2
    return lstm_step_forward, (
        rng.normal(size=(N, D)), rng.normal(size=(N, H)), rng.normal(size=(N, H)),
        0.4 * rng.normal(size=(D, 4 * H)), 0.4 * rng.normal(size=(H, 4 * H)),
        rng.normal(size=4 * H),
    )  # fmt: skip


@program("cache_vjp", wrt=("x",), kind="vjp", autograd="dx is written in place (dx[...] -= 1)")
def softmax_loss_with_hand_gradient(rng):
    return softmax_loss, (rng.normal(size=(4, 3)), np.array([0, 2, 1, 2]))


@program(
    "cache_vjp",
    wrt=("x", "w", "b"),
    kind="vjp",
    autograd="autograd's vjp of np.pad needs mode= given (np.pad(x, widths) fails)",
)
def conv1d_forward_cache_with_param_dict(rng):
    conv_param = {"stride": 2, "pad": 1}
    x, w = rng.normal(size=(2, 2, 7)), rng.normal(size=(3, 2, 3))
    return conv1d_forward, (x, w, rng.normal(size=3), conv_param)


@program("cache_vjp", wrt=("x",), kind="vjp")
def dropout_forward_cache_with_mask(rng):
    return dropout_forward, (rng.normal(size=(3, 4)), {"p": 0.6, "mode": "train", "seed": 123})


@program("cache_vjp", wrt=("x",), kind="vjp")
def max_pool_forward_cache(rng):
    return max_pool_forward, (rng.normal(size=(1, 2, 4, 4)), {"pool_height": 2, "pool_width": 2})
