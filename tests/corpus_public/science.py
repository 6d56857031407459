"""Scientific objectives as written for ``scipy.optimize.minimize``: a flat parameter
vector ``p`` unpacked by slicing and reshape, least squares through
``np.linalg.solve``/``lstsq``, ODEs integrated by hand-written Euler and RK4 loops,
pairwise energies by broadcasting and ``np.triu_indices``, log-likelihoods with
``scipy.special`` and ``np.logaddexp``, Newton and fixed-point ``while`` loops."""

import math

import numpy as np
from scipy.special import expit, gammaln, logsumexp

from corpus_public import (
    MATH_ON_BOXES,
    WRITES,
    objective,
)

T_GRID = np.linspace(0.0, 2.0, 21)
Y_OBS = np.exp(-0.7 * T_GRID) * 1.5 + 0.2 + 0.01 * np.sin(7 * T_GRID)
SIGMA = 0.05 + 0.01 * T_GRID


@objective(
    lambda rng: (rng.normal(size=5),),
    autograd="autograd has no vjp for np.asarray",
)
def rosen(x):
    """The Rosenbrock function, as scipy.optimize.rosen writes it."""
    x = np.asarray(x)
    r = np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0)
    return r


def _flat(rng):
    X = rng.normal(size=(7, 2))
    Y = rng.normal(size=(7, 3))
    return rng.normal(size=2 * 3 + 3), X, Y


@objective(_flat)
def unpack_flat_vector(p, X, Y):
    W = p[:6].reshape(2, 3)
    b = p[6:9]
    resid = Y - (X @ W + b)
    return 0.5 * np.sum(resid**2)


@objective(_flat)
def unpack_with_split_and_shapes(p, X, Y, shapes=((2, 3), (3,))):
    sizes = [int(np.prod(s)) for s in shapes]
    offsets = np.cumsum([0] + sizes)
    W, b = [p[offsets[k] : offsets[k + 1]].reshape(s) for k, s in enumerate(shapes)]
    return np.mean((np.tanh(X @ W + b) - Y) ** 2)


def model_curve(t, a, b, c):
    return a * np.exp(-b * t) + c


@objective(lambda rng: (np.array([1.4, 0.6, 0.25]) + 0.05 * rng.normal(size=3),))
def chi2_curve_fit(p):
    a, b, c = p
    r = (Y_OBS - model_curve(T_GRID, a, b, c)) / SIGMA
    return np.sum(r**2)


def _ridge(rng):
    return rng.normal(size=(8, 3)), rng.normal(size=8)


@objective(_ridge, wrt=(0, 1))
def ridge_by_solve(X, y, lam=0.3):
    N, D = X.shape
    A = X.T @ X + lam * np.eye(D)
    w = np.linalg.solve(A, X.T @ y)
    return np.sum((X @ w - y) ** 2) / N + lam * w @ w


@objective(
    _ridge,
    wrt=(0, 1),
    autograd="autograd has no vjp for np.linalg.lstsq",
)
def least_squares_by_lstsq(A, b):
    coef, residuals, rank, sv = np.linalg.lstsq(A, b, rcond=None)
    return np.sum(coef**2) + np.sum((A @ coef - b) ** 2)


@objective(lambda rng: (np.array([0.8, 0.3]) + 0.05 * rng.normal(size=2),))
def euler_logistic_growth(theta):
    r, K = theta[0], 1.0 + theta[1]
    dt = T_GRID[1] - T_GRID[0]
    n = 0.1
    traj = [n]
    for _ in range(len(T_GRID) - 1):
        n = n + dt * r * n * (1 - n / K)
        traj.append(n)
    traj = np.array(traj)
    return np.sum((traj - 0.5) ** 2)


def pendulum(t, y, k, damping):
    return np.array([y[1], -k * np.sin(y[0]) - damping * y[1]])


def rk4_step(f, t, y, h, *args):
    k1 = f(t, y, *args)
    k2 = f(t + h / 2, y + h / 2 * k1, *args)
    k3 = f(t + h / 2, y + h / 2 * k2, *args)
    k4 = f(t + h, y + h * k3, *args)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


@objective(
    lambda rng: (np.array([2.0, 0.3]) + 0.1 * rng.normal(size=2), np.array([0.5, 0.0])),
    wrt=(0, 1),
    autograd="np.array of a list of boxes fails",
)
def rk4_pendulum_fit(params, y0):
    k, damping = params
    ts = np.linspace(0, 1.0, 11)
    h = ts[1] - ts[0]
    y = y0
    thetas = [y[0]]
    for t in ts[:-1]:
        y = rk4_step(pendulum, t, y, h, k, damping)
        thetas.append(y[0])
    return np.sum((np.array(thetas) - 0.4 * np.cos(2 * ts)) ** 2)


@objective(
    lambda rng: (rng.normal(size=2),),
    autograd=WRITES,
)
def euler_into_preallocated(theta, n_steps=20):
    a, b = theta
    dt = 0.05
    x = np.zeros(n_steps + 1)
    x[0] = 1.0
    for i in range(n_steps):
        x[i + 1] = x[i] + dt * (a * x[i] - b * x[i] ** 3)
    return np.sum(x) * dt


def _positions(rng):
    grid = np.array([[0, 0, 0], [1.1, 0, 0], [0, 1.1, 0], [1.1, 1.1, 0.1], [0.5, 0.6, 1.0]])
    return (grid + 0.05 * rng.normal(size=grid.shape),)


@objective(
    _positions,
    autograd="autograd gives nan: 0 * inf at sqrt(0) on the unused diagonal",
)
def lennard_jones_triu(pos, epsilon=1.0, sigma=1.0):
    n = pos.shape[0]
    diff = pos[:, np.newaxis, :] - pos[np.newaxis, :, :]
    r = np.sqrt(np.sum(diff**2, axis=-1))
    i, j = np.triu_indices(n, k=1)
    sr6 = (sigma / r[i, j]) ** 6
    return np.sum(4 * epsilon * (sr6**2 - sr6))


@objective(_positions)
def coulomb_with_mask(pos):
    charges = np.array([1.0, -1.0, 1.0, -1.0, 0.5])
    diff = pos[:, None, :] - pos[None, :, :]
    dist = np.linalg.norm(diff + np.eye(len(pos))[:, :, None], axis=2)
    mask = np.triu(np.ones((len(pos), len(pos)), dtype=bool), k=1)
    pair = np.outer(charges, charges) / dist
    return np.sum(pair[mask])


@objective(lambda rng: (np.cumsum(1 + 0.1 * rng.normal(size=6)),))
def spring_chain_energy(x, k=2.0, rest=1.0):
    stretch = np.diff(x) - rest
    return 0.5 * k * np.sum(stretch**2) + 0.1 * np.sum(x**2)


def _mixture(rng):
    data = np.concatenate([rng.normal(-1, 0.5, size=6), rng.normal(2, 0.7, size=6)])
    return np.array([0.1, -0.9, 1.8, math.log(0.5), math.log(0.6)]), data


@objective(_mixture)
def two_gaussian_mixture_logaddexp(p, data):
    logit_w, mu1, mu2, log_s1, log_s2 = p
    log_w1 = -np.logaddexp(0, -logit_w)
    log_w2 = -np.logaddexp(0, logit_w)
    s1, s2 = np.exp(log_s1), np.exp(log_s2)
    lp1 = log_w1 - 0.5 * ((data - mu1) / s1) ** 2 - log_s1 - 0.5 * np.log(2 * np.pi)
    lp2 = log_w2 - 0.5 * ((data - mu2) / s2) ** 2 - log_s2 - 0.5 * np.log(2 * np.pi)
    return -np.sum(np.logaddexp(lp1, lp2))


@objective(_mixture)
def mixture_with_scipy_logsumexp(p, data):
    means = p[1:3]
    log_sd = p[3:5]
    log_w = np.array([-np.logaddexp(0, -p[0]), -np.logaddexp(0, p[0])])
    z = (data[:, None] - means[None, :]) / np.exp(log_sd)
    comp = log_w - 0.5 * z**2 - log_sd - 0.5 * np.log(2 * np.pi)
    return -np.sum(logsumexp(comp, axis=1))


def _counts(rng):
    X = rng.normal(size=(10, 3))
    y = np.array([0, 1, 3, 2, 0, 5, 1, 1, 2, 4])
    return 0.1 * rng.normal(size=3), X, y


@objective(_counts)
def poisson_glm_nll(beta, X, y):
    eta = X @ beta
    return np.sum(np.exp(eta) - y * eta + gammaln(y + 1))


@objective(lambda rng: (np.array([0.1, math.log(0.8), math.log(4.0)]) + 0.05 * rng.normal(size=3),))
def student_t_negloglik(p):
    data = np.array([-0.3, 0.8, 1.9, -2.2, 0.1, 0.4])
    mu, log_scale, log_nu = p
    scale, nu = np.exp(log_scale), np.exp(log_nu)
    z = (data - mu) / scale
    ll = (
        gammaln((nu + 1) / 2)
        - gammaln(nu / 2)
        - 0.5 * np.log(nu * np.pi)
        - np.log(scale)
        - (nu + 1) / 2 * np.log1p(z**2 / nu)
    )
    return -np.sum(ll)


@objective(lambda rng: (rng.normal(size=3), rng.normal(size=(9, 3))))
def bernoulli_loglik_expit_clip(w, X):
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1])
    p = np.clip(expit(X @ w), 1e-12, 1 - 1e-12)
    return -np.sum(y * np.log(p) + (1 - y) * np.log(1 - p))


@objective(lambda rng: (np.array([2.0 + rng.random()]),), autograd=MATH_ON_BOXES)
def newton_sqrt_while_tolerance(a, tol=1e-12):
    x = a[0]
    dx = 1.0
    while abs(dx) > tol:
        dx = (x * x - a[0]) / (2 * x)
        x = x - dx
    return x + math.sqrt(2.0) * a[0]


@objective(lambda rng: (0.3 + 0.1 * rng.random(3),))
def fixed_point_iteration(c, tol=1e-10, max_iter=200):
    x = np.zeros_like(c)
    for it in range(max_iter):
        x_new = np.cos(x) * c
        if np.max(np.abs(x_new - x)) < tol:
            break
        x = x_new
    return np.sum(x_new**2)


@objective(lambda rng: (rng.random(8),), autograd=WRITES)
def heat_equation_explicit(u0, alpha=0.2, steps=10):
    u = u0.copy()
    for _ in range(steps):
        u_new = u.copy()
        u_new[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = u_new
    return np.sum(u**2)


@objective(lambda rng: (rng.normal(size=(3, 3)) + 3 * np.eye(3),))
def log_det_and_inverse_quadratic(S):
    v = np.array([1.0, -0.5, 2.0])
    sign, logdet = np.linalg.slogdet(S)
    Sinv = np.linalg.inv(S)
    return logdet + v @ Sinv @ v + 0.1 * np.trace(S @ S.T)


@objective(lambda rng: (np.sort(rng.random(6)) * 2,), autograd="autograd has no np.trapezoid")
def trapezoid_and_cumsum(y):
    t = np.linspace(0, 1, 6)
    area = np.trapezoid(y**2, t)
    running = np.cumsum(y) / np.arange(1, 7)
    return area + np.sum(running**2) + np.interp(0.35, t, y)


@objective(
    lambda rng: (np.array([0.5, -1.0, 2.0]) + 0.1 * rng.normal(size=3),),
    autograd="autograd's polyval fails on a box",
)
def polynomial_fit_residual(coeffs):
    x = np.linspace(-1, 1, 9)
    y = np.cos(2 * x)
    return np.sum((np.polyval(coeffs, x) - y) ** 2)


@objective(lambda rng: (rng.normal(size=(4, 3)),))
def gram_kernel_rbf(X, length=0.8):
    sq = np.sum(X**2, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2 * X @ X.T
    K = np.exp(-0.5 * np.maximum(d2, 0) / length**2) + 1e-3 * np.eye(len(X))
    y = np.arange(4.0)
    alpha = np.linalg.solve(K, y)
    return y @ alpha + np.sum(np.log(np.diag(np.linalg.cholesky(K))))
