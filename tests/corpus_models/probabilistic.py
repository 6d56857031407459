"""Probabilistic models: GP marginal likelihood, VAE ELBO, mixtures, Bayesian
regression, Poisson and Student-like likelihoods."""

import numpy as np
from scipy.special import gammaln, logsumexp
from scipy.stats import multivariate_normal, norm, t

from corpus_models import model


def _gp(rng):
    return np.array([0.3]), np.array([0.2]), rng.normal(size=5), np.linspace(-1.0, 1.0, 5)


@model(_gp, wrt=(0, 1))
def gp_negative_marginal_likelihood(log_length, log_noise, y, x):
    d = x[:, None] - x[None, :]
    k = np.exp(-0.5 * d * d / np.exp(2 * log_length[0])) + np.exp(2 * log_noise[0]) * np.eye(5)
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(k, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(chol))) + 2.5 * np.log(2 * np.pi)


@model(_gp, wrt=(0, 1))
def gp_marginal_likelihood_det(log_length, log_noise, y, x):
    d = x[:, None] - x[None, :]
    k = np.exp(-0.5 * d * d / np.exp(2 * log_length[0])) + np.exp(2 * log_noise[0]) * np.eye(5)
    return 0.5 * y @ np.linalg.inv(k) @ y + 0.5 * np.log(np.linalg.det(k))


def _vae(rng):
    return (
        rng.normal(size=(3, 2)) * 0.5,
        rng.normal(size=(3, 2)) * 0.3,
        rng.normal(size=(3, 2)),
        rng.normal(size=(2, 4)) * 0.5,
        rng.normal(size=(3, 4)),
    )


@model(_vae, wrt=(0, 1, 3))
def vae_elbo_gaussian(mu, log_sigma, eps, w_dec, x):
    sigma = np.exp(log_sigma)
    z = mu + sigma * eps
    recon = np.tanh(z @ w_dec)
    log_lik = np.sum(norm.logpdf(x, recon, 0.5))
    kl = 0.5 * np.sum(mu**2 + sigma**2 - 1.0 - 2.0 * log_sigma)
    return -(log_lik - kl)


def _mix(rng):
    return rng.normal(size=3), np.zeros(3) + 0.1, rng.normal(size=3) * 0.1, rng.normal(size=7)


@model(_mix, wrt=(0, 1, 2))
def gaussian_mixture_nll(means, log_scales, logits, data):
    log_w = logits - logsumexp(logits)
    comp = norm.logpdf(data[:, None], means[None, :], np.exp(log_scales)[None, :])
    return -np.sum(logsumexp(comp + log_w, axis=1))


@model(_mix, wrt=(0, 1, 2))
def gaussian_mixture_nll_by_hand(means, log_scales, logits, data):
    log_w = logits - np.log(np.sum(np.exp(logits)))
    scales = np.exp(log_scales)
    z = (data[:, None] - means) / scales
    comp = -0.5 * z * z - np.log(scales) - 0.5 * np.log(2 * np.pi) + log_w
    top = np.max(comp, axis=1, keepdims=True)
    return -np.sum(top[:, 0] + np.log(np.sum(np.exp(comp - top), axis=1)))


def _poisson(rng):
    return (
        rng.normal(size=3) * 0.3,
        rng.normal(size=(6, 3)),
        np.array([0.0, 1.0, 3.0, 2.0, 0.0, 5.0]),
    )


@model(_poisson, wrt=(0,))
def poisson_regression_nll(w, features, counts):
    rate = np.exp(features @ w)
    return np.sum(rate - counts * np.log(rate) + gammaln(counts + 1.0))


@model(lambda rng: (rng.normal(size=4), rng.normal(size=(9, 4)), rng.normal(size=9)), wrt=(0,))
def bayesian_linear_regression_map(w, features, y):
    resid = y - features @ w
    return 0.5 * np.sum(resid**2) / 0.25 + 0.5 * np.linalg.norm(w) ** 2


@model(lambda rng: (rng.normal(size=5), rng.uniform(0.5, 2.0, size=5)), wrt=(0, 1))
def student_t_like_robust_loss(r, s):
    return np.sum(np.log1p((r / s) ** 2) + np.log(s))


def _mvn(rng):
    return rng.normal(size=2), np.array([0.3, -0.2]), rng.normal(size=(5, 2))


@model(_mvn, wrt=(0, 1))
def multivariate_normal_fit(mean, log_scales, data):
    scales = np.exp(log_scales)
    cov = np.outer(scales, scales) * np.array([[1.0, 0.3], [0.3, 1.0]])
    return -np.sum(multivariate_normal.logpdf(data, mean, cov))


@model(lambda rng: (rng.normal(size=6), np.array([1.0])), wrt=(0, 1))
def student_t_regression_residuals(r, log_scale):
    return -np.sum(t.logpdf(r, 4.0, 0.0, np.exp(log_scale[0])))
