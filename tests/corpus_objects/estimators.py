"""Estimator classes as in scikit-learn-like scripts: parameters set in ``__init__``,
a ``loss`` method (the weights passed in, or read from ``self``), a ``fit`` that the
user would hand ``model.loss`` to an optimizer from."""

import numpy as np

from corpus_objects import program


def _regression(rng, n=8, d=3):
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y


class RidgeRegression:
    def __init__(self, alpha=0.5):
        self.alpha = alpha

    def loss(self, w, X, y):
        residual = X @ w - y
        return 0.5 * np.mean(residual**2) + 0.5 * self.alpha * np.dot(w, w)

    def fit(self, X, y):
        self.coef_ = np.zeros(X.shape[1])
        return self


@program("callables", wrt=("w",), differentiable=True)
def ridge_loss_method(rng):
    X, y = _regression(rng)
    model = RidgeRegression(alpha=0.3)
    return model.loss, (rng.normal(size=3), X, y)


class LogisticRegression:
    def __init__(self, n_features, C=1.0, rng=None):
        self.w = 0.1 * rng.normal(size=n_features)
        self.b = 0.0
        self.C = C

    def predict_proba(self, X):
        return 1.0 / (1.0 + np.exp(-(X @ self.w + self.b)))

    def loss(self, X, y):
        z = X @ self.w + self.b
        data = np.mean(np.logaddexp(0.0, z) - y * z)
        return data + np.sum(self.w**2) / (2 * self.C * X.shape[0])


@program("callables", wrt=("self.w",), differentiable=True)
def logistic_loss_reads_self(rng):
    X, _ = _regression(rng)
    y = (rng.random(8) > 0.5).astype(float)
    model = LogisticRegression(3, C=2.0, rng=rng)
    return model.loss, (X, y)


@program("callables", wrt=("self.w",))
def logistic_loss_grad_of_method(rng):
    X, _ = _regression(rng, n=6, d=4)
    y = (rng.random(6) > 0.5).astype(float)
    model = LogisticRegression(4, rng=rng)
    return model.loss, (X, y)


class SoftmaxRegression:
    def __init__(self, n_classes, reg=1e-2):
        self.n_classes = n_classes
        self.reg = reg

    def loss(self, W, X, y):
        scores = X @ W
        scores = scores - np.max(scores, axis=1, keepdims=True)
        log_probs = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
        one_hot = np.eye(self.n_classes)[y]
        return -np.sum(one_hot * log_probs) / X.shape[0] + self.reg * np.sum(W * W)


@program("callables", wrt=("W",), differentiable=True)
def softmax_regression_loss(rng):
    X = rng.normal(size=(6, 4))
    y = np.array([0, 1, 2, 1, 0, 2])
    return SoftmaxRegression(3).loss, (0.1 * rng.normal(size=(4, 3)), X, y)


@program("callables", wrt=("W",))
def softmax_regression_grad(rng):
    X = rng.normal(size=(5, 3))
    y = np.array([1, 0, 1, 1, 0])
    return SoftmaxRegression(2, reg=0.1).loss, (0.1 * rng.normal(size=(3, 2)), X, y)


class PoissonGLM:
    """Counts with a log link."""

    def __init__(self, offset):
        self.offset = offset

    def negative_log_likelihood(self, beta, X, counts):
        eta = X @ beta + self.offset
        return np.sum(np.exp(eta) - counts * eta)


@program("callables", wrt=("beta",), differentiable=True)
def poisson_glm_nll(rng):
    X = 0.3 * rng.normal(size=(7, 2))
    counts = rng.poisson(2.0, size=7).astype(float)
    return PoissonGLM(np.log(2.0)).negative_log_likelihood, (0.1 * rng.normal(size=2), X, counts)


class HuberRegressor:
    def __init__(self, epsilon=1.35):
        self.epsilon = epsilon

    def objective(self, params, X, y):
        w, sigma = params[:-1], np.exp(params[-1])
        r = (y - X @ w) / sigma
        smooth = np.sqrt(1.0 + r**2) - 1.0  # pseudo-Huber
        return np.sum(sigma * self.epsilon**2 * smooth) + X.shape[0] * sigma


@program("callables", wrt=("params",), differentiable=True)
def pseudo_huber_objective(rng):
    X, y = _regression(rng, n=6, d=2)
    return HuberRegressor().objective, (np.array([0.2, -0.1, 0.0]), X, y)


class GaussianProcessPrior:
    def __init__(self, X):
        self.X = X

    def kernel(self, log_length):
        d = self.X[:, None, :] - self.X[None, :, :]
        return np.exp(-0.5 * np.sum(d**2, axis=2) / np.exp(2 * log_length))

    def neg_log_marginal(self, log_length, y):
        K = self.kernel(log_length) + 0.1 * np.eye(self.X.shape[0])
        alpha = np.linalg.solve(K, y)
        return 0.5 * y @ alpha + 0.5 * np.linalg.slogdet(K)[1]


@program("callables", wrt=("log_length",), differentiable=True)
def gp_marginal_likelihood_method(rng):
    X = rng.normal(size=(5, 2))
    return GaussianProcessPrior(X).neg_log_marginal, (np.array(0.3), rng.normal(size=5))


class KMeansSoft:
    def __init__(self, X, temperature=0.5):
        self.X = X
        self.temperature = temperature

    def __call__(self, centers):
        d2 = np.sum((self.X[:, None, :] - centers[None, :, :]) ** 2, axis=2)
        m = np.min(d2, axis=1, keepdims=True)
        soft_min = m[:, 0] - self.temperature * np.log(
            np.sum(np.exp(-(d2 - m) / self.temperature), axis=1)
        )
        return np.mean(soft_min)


@program("callables", wrt=("centers",), differentiable=True)
def soft_kmeans_callable_object(rng):
    X = rng.normal(size=(9, 2))
    return KMeansSoft(X), (rng.normal(size=(3, 2)),)


@program("callables", wrt=("centers",))
def soft_kmeans_grad_of_object(rng):
    X = rng.normal(size=(6, 3))
    return KMeansSoft(X, temperature=1.0), (rng.normal(size=(2, 3)),)


class LinearSVM:
    def __init__(self, C):
        self.C = C

    def squared_hinge(self, w, b, X, y):
        margins = np.maximum(0.0, 1.0 - y * (X @ w + b))
        return 0.5 * np.dot(w, w) + self.C * np.sum(margins**2)


@program("callables", wrt=("w", "b"), differentiable=True)
def squared_hinge_svm(rng):
    X = rng.normal(size=(8, 3))
    y = np.sign(rng.normal(size=8))
    return LinearSVM(C=0.7).squared_hinge, (0.3 * rng.normal(size=3), np.array(0.1), X, y)
