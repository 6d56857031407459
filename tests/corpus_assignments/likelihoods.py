"""Assignments with scipy: Gaussian and Student-t likelihoods, logsumexp, softmax."""

import numpy as np
import scipy.special
import scipy.stats as st
from scipy.special import log_softmax, logsumexp, softmax
from scipy.stats import multivariate_normal, norm

from corpus_assignments import assignment


def _data(rng):
    return rng.normal(size=2), rng.normal(size=8) * 1.5 + 0.3


@assignment(_data)
def gaussian_nll_with_norm_logpdf(params, data):
    mu, log_sigma = params[0], params[1]
    return -np.sum(norm.logpdf(data, mu, np.exp(log_sigma)))


@assignment(_data)
def gaussian_nll_with_keywords(params, data):
    return -np.sum(norm.logpdf(data, loc=params[0], scale=np.exp(params[1])))


@assignment(_data)
def frozen_normal_distribution(params, data):
    model = norm(params[0], np.exp(params[1]))
    return -np.mean(model.logpdf(data))


@assignment(_data)
def gaussian_cdf_probit(params, data):
    p = norm.cdf(params[0] * data + params[1])
    return -np.sum(np.log(p + 1e-9))


@assignment(_data)
def student_t_regression(params, data):
    return -np.sum(st.t.logpdf(data, 4.0, params[0], np.exp(params[1])))


def _mvn(rng):
    return rng.normal(size=2), rng.normal(size=(5, 2))


@assignment(_mvn)
def multivariate_normal_mean_fit(mean, points):
    cov = np.array([[1.0, 0.3], [0.3, 2.0]])
    return -np.sum(multivariate_normal.logpdf(points, mean, cov))


def _mixture(rng):
    return rng.normal(size=(2,)), rng.normal(size=10)


@assignment(_mixture)
def two_component_mixture_logsumexp(means, data):
    log_weights = np.log(np.array([0.4, 0.6]))
    comps = norm.logpdf(data[:, None], means[None, :], 1.0) + log_weights
    return -np.sum(logsumexp(comps, axis=1))


@assignment(lambda rng: (rng.normal(size=(4, 3)), np.array([0, 2, 1, 2])))
def softmax_cross_entropy_scipy(logits, labels):
    p = softmax(logits, axis=1)
    return -np.mean(np.log(p[np.arange(4), labels]))


@assignment(lambda rng: (rng.normal(size=(4, 3)), np.array([1, 0, 2, 2])))
def log_softmax_nll_scipy(logits, labels):
    return -np.sum(log_softmax(logits, axis=1)[np.arange(4), labels])


@assignment(lambda rng: (rng.normal(size=5),))
def logsumexp_through_module(x):
    return scipy.special.logsumexp(2.0 * x) - scipy.special.logsumexp(x)


@assignment(lambda rng: (rng.normal(size=(3, 2)), rng.normal(size=(3, 2))), wrt=(0, 1))
def vae_gaussian_elbo_terms(
    mu,
    log_var,
):
    eps = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
    z = mu + np.exp(0.5 * log_var) * eps
    log_q = np.sum(norm.logpdf(z, mu, np.exp(0.5 * log_var)))
    log_p = np.sum(norm.logpdf(z))
    return log_q - log_p


@assignment(lambda rng: (rng.normal(size=3), rng.normal(size=(6, 3)), rng.integers(0, 2, 6)))
def logistic_regression_expit(w, X, y):
    p = scipy.special.expit(X @ w)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
