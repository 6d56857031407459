"""Statistics and machine learning as lecture notes and small scripts write them:
GLM log-likelihoods, a Gaussian process with a Cholesky factor, mixtures through
``scipy.special.logsumexp``, soft k-means, a t-SNE-like objective, smoothed robust and
sparse regression, a tiny attention block with layer norm, 1-D convolutions, a Kalman
filter and LSTM/GRU steps in loops."""

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit, logsumexp

from corpus_public import TRACING_SCIPY, objective


def _glm(rng):
    X = np.hstack([np.ones((12, 1)), rng.normal(size=(12, 2))])
    y = (rng.random(12) < 0.5).astype(float)
    return 0.2 * rng.normal(size=3), X, y


@objective(_glm)
def logistic_glm_loglik(beta, X, y):
    eta = X @ beta
    ll = y * eta - np.logaddexp(0.0, eta)
    return -ll.sum()


def _counts(rng):
    X = np.column_stack([np.ones(10), rng.normal(size=10)])
    exposure = rng.uniform(0.5, 2.0, size=10)
    y = rng.poisson(2.0, size=10).astype(float)
    return 0.1 * rng.normal(size=2), X, y, exposure


@objective(_counts)
def poisson_glm_with_offset(beta, X, y, exposure, alpha=0.01):
    log_mu = np.log(exposure) + X @ beta
    mu = np.exp(log_mu)
    nll = np.sum(mu - y * log_mu)
    return nll / len(y) + alpha / 2 * beta[1:] @ beta[1:]


def _gp(rng):
    X = np.sort(rng.uniform(-2, 2, size=(6, 1)), axis=0)
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=6)
    return np.array([0.1, -0.3, -2.0]) + 0.05 * rng.normal(size=3), X, y


def rbf_kernel(XA, XB, length, amp):
    sqdist = np.sum(XA**2, 1).reshape(-1, 1) + np.sum(XB**2, 1) - 2 * XA @ XB.T
    return amp**2 * np.exp(-0.5 / length**2 * sqdist)


@objective(_gp, autograd="autograd's np.diagonal vjp takes only the last two axes (make_diagonal)")
def gp_nll_cholesky_two_solves(log_params, X, y):
    length, amp, noise = np.exp(log_params)
    n = len(y)
    K = rbf_kernel(X, X, length, amp) + noise * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y.T @ alpha + np.sum(np.log(np.diagonal(L))) + 0.5 * n * np.log(2 * np.pi)


@objective(
    _gp,
    autograd="autograd has no scipy.linalg.cho_solve",
    compiler="scipy.linalg.cho_factor has no derivative rule: refused at the call (the hint: "
    "a numpy function with a rule, such as np.linalg.cholesky, or a DifferentiableFunction)",
    tracing=TRACING_SCIPY,
)
def gp_nll_cho_solve(log_params, X, y):
    length, amp, noise = np.exp(log_params)
    K = rbf_kernel(X, X, length, amp) + noise * np.eye(len(X))
    c, low = cho_factor(K)
    alpha = cho_solve((c, low), y)
    return 0.5 * y @ alpha + np.log(np.diag(c)).sum()


def _gmm(rng):
    data = np.vstack([rng.normal(-1, 0.4, size=(5, 2)), rng.normal(1, 0.6, size=(5, 2))])
    means = np.array([[-0.8, -1.2], [0.9, 1.1]]) + 0.1 * rng.normal(size=(2, 2))
    return means, np.log(np.array([0.5, 0.7])), np.array([0.2, -0.1]), data


@objective(_gmm, wrt=(0, 1, 2))
def gmm_isotropic_logsumexp(means, log_sd, logits, data):
    d = data.shape[1]
    log_pi = logits - logsumexp(logits)
    sq = np.sum((data[:, None, :] - means[None, :, :]) ** 2, axis=-1)
    log_comp = -0.5 * sq / np.exp(2 * log_sd) - d * log_sd - 0.5 * d * np.log(2 * np.pi)
    return -logsumexp(log_pi + log_comp, axis=1).mean()


def _clusters(rng):
    X = np.vstack([rng.normal(0, 0.3, size=(4, 2)), rng.normal(2, 0.3, size=(4, 2))])
    return np.array([[0.1, -0.2], [1.8, 2.2]]) + 0.1 * rng.normal(size=(2, 2)), X


@objective(_clusters)
def soft_kmeans_energy(centers, X, *, beta=3.0):
    d2 = ((X[:, np.newaxis, :] - centers) ** 2).sum(axis=2)
    logits = -beta * d2
    logits -= logits.max(axis=1, keepdims=True)
    r = np.exp(logits)
    r /= r.sum(axis=1, keepdims=True)
    return np.sum(r * d2)


def _tsne(rng):
    P = rng.random((5, 5))
    P = P + P.T
    np.fill_diagonal(P, 0.0)
    return 0.5 * rng.normal(size=(5, 2)), P / P.sum()


@objective(_tsne, autograd="autograd cannot write into an array (np.fill_diagonal)")
def tsne_kl_fill_diagonal(Y, P):
    sum_Y = np.sum(np.square(Y), 1)
    num = 1.0 / (1.0 + np.add(np.add(-2.0 * np.dot(Y, Y.T), sum_Y).T, sum_Y))
    np.fill_diagonal(num, 0.0)
    Q = np.maximum(num / np.sum(num), 1e-12)
    return np.sum(P * np.log(np.maximum(P, 1e-12) / Q))


@objective(_tsne)
def tsne_kl_masked(Y, P):
    n = Y.shape[0]
    D = np.sum((Y[:, None] - Y[None]) ** 2, axis=-1)
    off = 1.0 - np.eye(n)
    num = off / (1.0 + D)
    Q = num / num.sum()
    return np.sum(np.where(off > 0, P * (np.log(P + np.eye(n)) - np.log(Q + np.eye(n))), 0.0))


def _regression(rng):
    X = rng.normal(size=(9, 3))
    y = X @ np.array([1.0, 0.0, -2.0]) + rng.standard_t(2, size=9)
    return 0.3 * rng.normal(size=3), X, y


@objective(_regression)
def huber_ridge_regression(w, X, y, delta=1.0, lam=0.1):
    r = y - X @ w
    quad = 0.5 * r**2
    lin = delta * (np.abs(r) - 0.5 * delta)
    return np.where(np.abs(r) <= delta, quad, lin).mean() + lam * np.linalg.norm(w) ** 2


@objective(_regression)
def lasso_smoothed_abs(w, X, y, *, lam=0.5, eps=1e-3):
    n = X.shape[0]
    resid = X @ w - y
    return resid @ resid / (2 * n) + lam * np.sum(np.sqrt(w * w + eps))


def _attention(rng):
    x = rng.normal(size=(4, 6))
    Wq, Wk, Wv = (0.4 * rng.normal(size=(6, 6)) for _ in range(3))
    return x, Wq, Wk, Wv, 1 + 0.1 * rng.normal(size=6), 0.1 * rng.normal(size=6)


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


@objective(_attention, wrt=(0, 1, 2, 3, 4, 5))
def attention_block_pre_norm(x, Wq, Wk, Wv, gamma, beta):
    h = layer_norm(x, gamma, beta)
    q, k, v = h @ Wq, h @ Wk, h @ Wv
    d_k = q.shape[-1]
    att = softmax(q @ k.T / np.sqrt(d_k), axis=-1)
    out = x + att @ v
    return np.sum(out**2) / out.size


def _signal(rng):
    return rng.normal(size=10), rng.normal(size=3)


@objective(_signal, wrt=(0, 1), autograd="autograd has no vjp for np.convolve")
def conv1d_np_convolve(signal, kernel):
    smoothed = np.convolve(signal, kernel, mode="valid")
    target = np.linspace(-1, 1, len(smoothed))
    return np.mean((smoothed - target) ** 2)


@objective(_signal, wrt=(0, 1))
def conv1d_loop_over_taps(signal, kernel):
    K = len(kernel)
    n_out = len(signal) - K + 1
    out = np.zeros(n_out)
    for k in range(K):
        out = out + kernel[k] * signal[k : k + n_out]
    return np.sum(np.tanh(out) ** 2)


def _kalman(rng):
    ys = np.cumsum(rng.normal(size=8)) * 0.5
    return np.array([np.log(0.5), np.log(0.3)]) + 0.05 * rng.normal(size=2), ys


@objective(_kalman)
def kalman_filter_nll(log_q_r, ys):
    q, r = np.exp(log_q_r[0]), np.exp(log_q_r[1])
    m, P = 0.0, 1.0
    nll = 0.0
    for y in ys:
        m_pred, P_pred = m, P + q
        S = P_pred + r
        K = P_pred / S
        innov = y - m_pred
        nll += 0.5 * (np.log(2 * np.pi * S) + innov**2 / S)
        m = m_pred + K * innov
        P = (1 - K) * P_pred
    return nll


def _lstm(rng):
    H, D = 3, 2
    return (
        0.4 * rng.normal(size=(4 * H, D)),
        0.4 * rng.normal(size=(4 * H, H)),
        np.zeros(4 * H),
        rng.normal(size=(5, D)),
    )


@objective(_lstm, wrt=(0, 1, 2))
def lstm_np_split_gates(W, U, b, xs):
    H = U.shape[1]
    h, c = np.zeros(H), np.zeros(H)
    for x in xs:
        z = W @ x + U @ h + b
        i, f, o, g = np.split(z, 4)
        i, f, o = expit(i), expit(f), expit(o)
        c = f * c + i * np.tanh(g)
        h = o * np.tanh(c)
    return np.sum(h**2) + 0.1 * c.sum()


def _gru(rng):
    H, D = 3, 2
    return 0.4 * rng.normal(size=(3 * H, H + D)), rng.normal(size=(4, D))


@objective(_gru)
def gru_concatenate_state(W, xs):
    H = W.shape[0] // 3
    h = np.zeros(H)
    sig = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    for t in range(xs.shape[0]):
        hx = np.concatenate([h, xs[t]])
        z = sig(W[:H] @ hx)
        r = sig(W[H : 2 * H] @ hx)
        h_tilde = np.tanh(W[2 * H :] @ np.concatenate([r * h, xs[t]]))
        h = (1 - z) * h + z * h_tilde
    return h @ h


def _multi(rng):
    return 0.2 * rng.normal(size=(3, 4)), rng.normal(size=(7, 3)), rng.integers(0, 4, size=7)


@objective(_multi)
def multinomial_one_hot_eye(W, X, y, l2=1e-2):
    K = W.shape[1]
    Y = np.eye(K)[y]
    logits = X @ W
    log_probs = logits - logsumexp(logits, axis=1, keepdims=True)
    return -(Y * log_probs).sum() / X.shape[0] + l2 * (W**2).sum()
