"""Deep-learning course assignments as students write them: a conv-relu-pool-affine
net with a loop over filters and ``np.pad``, pooling by reshape, ``x.reshape(N, -1)``,
``scores[np.arange(N), y]``, batch norm with a ``bn_param`` dict, dropout with a mask
argument, weight decay over ``params.values()``, skip-gram with negative sampling,
a tied-weight autoencoder, residual blocks, siamese and cosine margins, label
smoothing, distillation with a temperature, momentum SGD unrolled."""

import numpy as np

from corpus_public import PLAIN_DOT, objective

BOX_DOT = "autograd's boxes have no .dot method (pooled.reshape(N, -1).dot(W2))"


def _convnet(rng):
    params = {
        "W1": 0.3 * rng.normal(size=(2, 1, 3, 3)),
        "b1": 0.1 * rng.normal(size=2),
        "W2": 0.3 * rng.normal(size=(2 * 2 * 2, 3)),
        "b2": 0.1 * rng.normal(size=3),
    }
    X = rng.normal(size=(2, 1, 4, 4))
    y = np.array([2, 0])
    return params, X, y


@objective(_convnet, autograd=BOX_DOT)
def convnet_loop_over_filters(params, X, y):
    W1, b1 = params["W1"], params["b1"]
    W2, b2 = params["W2"], params["b2"]
    N = X.shape[0]
    F, C, HH, WW = W1.shape
    xp = np.pad(X, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="constant")
    maps = []
    for f in range(F):
        rows = []
        for i in range(4):
            cols = []
            for j in range(4):
                window = xp[:, :, i : i + HH, j : j + WW]
                cols.append(np.sum(window * W1[f], axis=(1, 2, 3)) + b1[f])
            rows.append(np.stack(cols, axis=1))
        maps.append(np.stack(rows, axis=1))
    conv = np.stack(maps, axis=1)
    relu = np.maximum(0, conv)
    pooled = relu.reshape(N, F, 2, 2, 2, 2).max(axis=(3, 5))
    scores = pooled.reshape(N, -1).dot(W2) + b2
    scores = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
    return -np.sum(log_probs[np.arange(N), y]) / N


@objective(lambda rng: (rng.normal(size=(2, 3, 4, 4)),))
def average_pool_then_global_mean(x):
    N, C, H, W = x.shape
    pooled = x.reshape(N, C, H // 2, 2, W // 2, 2).mean(axis=(3, 5))
    gap = pooled.mean(axis=(2, 3))
    return np.sum(gap**2) + np.sum(pooled[:, :, 0, :] * pooled[:, :, 1, :])


def _bn(rng):
    return 1.0 + 0.1 * rng.normal(size=4), 0.1 * rng.normal(size=4), rng.normal(size=(6, 4)) * 2 + 1


@objective(_bn, wrt=(0, 1, 2))
def batchnorm_with_bn_param_dict(gamma, beta, x):
    bn_param = {"mode": "train", "eps": 1e-5, "momentum": 0.9}
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    if mode == "train":
        mu = x.mean(axis=0)
        xc = x - mu
        var = (xc**2).mean(axis=0)
        out = gamma * xc * (var + eps) ** -0.5 + beta
        running_mean = momentum * running_mean + (1 - momentum) * mu
        running_var = momentum * running_var + (1 - momentum) * var
    else:
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return np.sum(out**3) / N + 0.1 * np.sum(bn_param["running_mean"])


def _dropout(rng):
    return rng.normal(size=(4, 5)), rng.random(size=(4, 5))


@objective(_dropout)
def dropout_with_mask_argument(x, u, p=0.6, train=True):
    if train:
        mask = (u < p) / p
        out = x * mask
    else:
        out = x
    return np.sum(np.tanh(out) ** 2)


def _mlp(rng):
    params = {
        "W1": 0.4 * rng.normal(size=(3, 5)),
        "b1": np.zeros(5),
        "W2": 0.4 * rng.normal(size=(5, 2)),
        "b2": np.zeros(2),
    }
    return params, rng.normal(size=(4, 3)), np.array([1, 0, 1, 1])


@objective(_mlp)
def weight_decay_over_params_values(params, X, y, reg=1e-2):
    h = np.maximum(0, X @ params["W1"] + params["b1"])
    scores = h @ params["W2"] + params["b2"]
    N = X.shape[0]
    correct = scores[np.arange(N), y]
    lse = np.log(np.exp(scores).sum(axis=1))
    data_loss = np.mean(lse - correct)
    reg_loss = 0.5 * reg * sum(np.sum(p * p) for p in params.values())
    weights_only = sum(np.sum(W**2) for name, W in params.items() if name.startswith("W"))
    return data_loss + reg_loss + 1e-3 * weights_only


def _skipgram(rng):
    W_in = 0.3 * rng.normal(size=(6, 3))
    W_out = 0.3 * rng.normal(size=(6, 3))
    centers = np.array([0, 2, 5])
    contexts = np.array([1, 3, 4])
    negatives = np.array([[3, 4], [0, 1], [2, 2]])
    return W_in, W_out, centers, contexts, negatives


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@objective(_skipgram, wrt=(0, 1))
def skipgram_negative_sampling(W_in, W_out, centers, contexts, negatives):
    loss = 0.0
    for c, o, neg in zip(centers, contexts, negatives):
        v_c = W_in[c]
        u_o = W_out[o]
        loss -= np.log(sigmoid(u_o @ v_c))
        u_neg = W_out[neg]
        loss -= np.sum(np.log(sigmoid(-u_neg @ v_c)))
    return loss / len(centers)


@objective(_skipgram, wrt=(0, 1))
def skipgram_batched_index_arrays(W_in, W_out, centers, contexts, negatives):
    V = W_in[centers]
    U = W_out[contexts]
    pos = np.sum(U * V, axis=1)
    neg = np.einsum("bkd,bd->bk", W_out[negatives], V)
    return -np.mean(np.log(sigmoid(pos)) + np.sum(np.log(sigmoid(-neg)), axis=1))


def _autoencoder(rng):
    return 0.3 * rng.normal(size=(5, 3)), np.zeros(3), np.zeros(5), rng.random(size=(4, 5))


@objective(_autoencoder, wrt=(0, 1, 2))
def tied_weight_autoencoder(W, b_h, b_v, X, rho=0.1, beta=0.5):
    H = sigmoid(X @ W + b_h)
    X_rec = sigmoid(H @ W.T + b_v)
    recon = -np.mean(np.sum(X * np.log(X_rec) + (1 - X) * np.log(1 - X_rec), axis=1))
    rho_hat = H.mean(axis=0)
    kl = rho * np.log(rho / rho_hat) + (1 - rho) * np.log((1 - rho) / (1 - rho_hat))
    return recon + beta * kl.sum()


def _residual(rng):
    Ws = [0.3 * rng.normal(size=(4, 4)) for _ in range(4)]
    bs = [0.1 * rng.normal(size=4) for _ in range(4)]
    return Ws, bs, rng.normal(size=(3, 4))


@objective(_residual, wrt=(0, 1))
def residual_blocks_zip_pairs(Ws, bs, x):
    h = x
    pairs = list(zip(Ws, bs))
    for (W1, b1), (W2, b2) in zip(pairs[::2], pairs[1::2]):
        out = np.maximum(0, h @ W1 + b1)
        out = out @ W2 + b2
        h = np.maximum(0, out + h)
    return np.sum(h**2) / h.shape[0]


def _siamese(rng):
    a = rng.normal(size=(5, 3))
    b = rng.normal(size=(5, 3))
    same = np.array([1, 0, 1, 0, 0])
    return a, b, same


@objective(_siamese, wrt=(0, 1))
def siamese_contrastive_margin(a, b, same, margin=2.0):
    d = np.sqrt(np.sum((a - b) ** 2, axis=1) + 1e-9)
    pos = same * d**2
    neg = (1 - same) * np.maximum(0, margin - d) ** 2
    return 0.5 * np.mean(pos + neg)


@objective(_siamese, wrt=(0, 1))
def cosine_embedding_where(a, b, same, margin=0.1):
    cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    loss = np.where(same == 1, 1 - cos, np.maximum(0, cos - margin))
    return loss.mean()


def _logits(rng):
    return rng.normal(size=(5, 4)), np.array([0, 3, 1, 1, 2]), rng.normal(size=(5, 4))


@objective(_logits)
def label_smoothing_eye_rows(z, y, teacher, eps=0.1):
    N, C = z.shape
    one_hot = np.eye(C)[y]
    target = (1 - eps) * one_hot + eps / C
    m = z.max(axis=1, keepdims=True)
    log_softmax = z - m - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return -np.sum(target * log_softmax) / N


@objective(_logits)
def distillation_with_temperature(z, y, teacher, T=3.0, alpha=0.7):
    def softmax(s):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    p_teacher = softmax(teacher / T)
    log_p_student = np.log(softmax(z / T))
    kl = np.sum(p_teacher * (np.log(p_teacher) - log_p_student), axis=1).mean()
    hard = -np.log(softmax(z)[np.arange(len(y)), y]).mean()
    return alpha * T**2 * kl + (1 - alpha) * hard


def _momentum(rng):
    return 0.3 * rng.normal(size=(3, 1)), rng.normal(size=(8, 3)), rng.normal(size=(8, 1))


@objective(_momentum, autograd=PLAIN_DOT)
def momentum_sgd_unrolled(w, X, y, lr=0.1, mu=0.9, steps=4):
    v = np.zeros_like(w)
    m = X.shape[0]
    for t in range(steps):
        grad = X.T.dot(X.dot(w) - y) / m
        v = mu * v - lr * grad
        w = w + v
    residual = X.dot(w) - y
    return 0.5 * np.sum(residual**2) / m


@objective(
    lambda rng: (rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 3))),
    wrt=(0, 1, 2),
)
def triplet_hardest_negative(anchor, positive, negative, margin=0.5):
    d_pos = np.sum((anchor - positive) ** 2, axis=1)
    d_all = np.sum((anchor[:, np.newaxis, :] - negative[np.newaxis, :, :]) ** 2, axis=-1)
    d_neg = d_all.min(axis=1)
    return np.maximum(0, d_pos - d_neg + margin).mean()


@objective(lambda rng: (rng.normal(size=(4, 3)), rng.random(size=4)))
def mixup_pairs_by_permutation(x, lam):
    perm = np.array([2, 0, 3, 1])
    mixed = lam[:, None] * x + (1 - lam[:, None]) * x[perm]
    W = np.linspace(-1, 1, 6).reshape(3, 2)
    return np.sum(np.tanh(mixed @ W) ** 2)
