"""Scientific-computing exercises: a five-point stencil on ``u[1:-1, 1:-1]``, an
edge-preserving energy with ``np.roll``, Simpson's rule by stepped slices, Gauss-Legendre
nodes from ``np.polynomial``, an RK4 loop on a tuple state, a shooting-method residual,
Kepler's equation by Newton steps, an implicit heat step by ``np.linalg.solve``, a
matrix exponential by its series, a Gaussian KL with ``inv``/``det``/``trace``, a 1-D
finite-element stiffness assembled by slices, a Morse potential over
``i, j = np.triu_indices(n, 1)``, a reprojection error with ``np.cross``, and the
test functions of optimization courses written ``x, y = p``, and spectra and
factorizations (``eigh``, ``svd``, ``slogdet``, ``kron``, ``cumprod``,
``take_along_axis``)."""

import numpy as np

from corpus_public import WRITES, objective


@objective(lambda rng: (rng.normal(size=(6, 6)),))
def poisson_stencil_residual(u, h=0.2):
    f = np.ones((4, 4))
    lap = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]) / h**2
    boundary = np.sum(u[0, :] ** 2) + np.sum(u[-1, :] ** 2) + np.sum(u[1:-1, 0] ** 2)
    return np.sum((lap + f) ** 2) * h**2 + boundary + np.sum(u[1:-1, -1] ** 2)


@objective(lambda rng: (rng.normal(size=(5, 5)), rng.normal(size=(5, 5))))
def perona_malik_energy_roll(u, f, lam=0.5, k=0.7):
    gx = np.roll(u, -1, axis=1) - u
    gy = np.roll(u, -1, axis=0) - u
    smooth = np.sum(np.log(1 + (gx**2 + gy**2) / k**2))
    return 0.5 * np.sum((u - f) ** 2) + lam * smooth


@objective(
    lambda rng: (rng.normal(size=3),),
    autograd="autograd has no vjp for np.trapezoid",
)
def simpson_rule_stepped_slices(c, n=10):
    x = np.linspace(0.0, 1.0, n + 1)
    y = np.exp(-c[0] * x) * np.cos(c[1] * x) + c[2] * x**2
    h = x[1] - x[0]
    integral = h / 3 * (y[0] + 4 * np.sum(y[1:-1:2]) + 2 * np.sum(y[2:-1:2]) + y[-1])
    return (integral - 0.5) ** 2 + 0.01 * np.trapezoid(y**2, x)


@objective(
    lambda rng: (rng.normal(size=2),),
    autograd="autograd.numpy has no polynomial module (np.polynomial.legendre.leggauss)",
)
def gauss_legendre_quadrature(theta):
    nodes, weights = np.polynomial.legendre.leggauss(6)
    a, b = 0.0, 2.0
    t = 0.5 * (b - a) * nodes + 0.5 * (a + b)
    f = np.sin(theta[0] * t) ** 2 + theta[1] * t
    return 0.5 * (b - a) * np.sum(weights * f)


@objective(lambda rng: (np.array([1.0, 0.2, 0.8, 0.3]) + 0.05 * rng.normal(size=4),))
def lotka_volterra_rk4_tuple_state(p, x0=1.0, y0=0.5, dt=0.1, steps=8):
    a, b, c, d = p

    def rhs(state):
        x, y = state
        return (a * x - b * x * y, d * x * y - c * y)

    state = (x0, y0)
    for _ in range(steps):
        k1 = rhs(state)
        k2 = rhs(tuple(s + 0.5 * dt * k for s, k in zip(state, k1)))
        k3 = rhs(tuple(s + 0.5 * dt * k for s, k in zip(state, k2)))
        k4 = rhs(tuple(s + dt * k for s, k in zip(state, k3)))
        state = tuple(s + dt / 6 * (q1 + 2 * q2 + 2 * q3 + q4)
                      for s, q1, q2, q3, q4 in zip(state, k1, k2, k3, k4))  # fmt: skip
    x, y = state
    return (x - 1.2) ** 2 + (y - 0.4) ** 2


@objective(lambda rng: (np.array([0.8, 2.0]) + 0.1 * rng.normal(size=2),))
def shooting_method_residual(s_k, n=20, target=0.3):
    s, k = s_k[0], s_k[1]
    h = 1.0 / n
    y, v = 0.0, s
    for _ in range(n):
        a = -k * y - 0.1 * v
        y_mid = y + 0.5 * h * v
        v_mid = v + 0.5 * h * a
        y = y + h * v_mid
        v = v + h * (-k * y_mid - 0.1 * v_mid)
    return (y - target) ** 2


@objective(lambda rng: (np.array([0.3, 1.1]) + 0.05 * rng.normal(size=2),))
def kepler_equation_newton(e_M, iters=8):
    e, M = e_M
    E = M
    for _ in range(iters):
        E = E - (E - e * np.sin(E) - M) / (1 - e * np.cos(E))
    x = np.cos(E) - e
    y = np.sqrt(1 - e**2) * np.sin(E)
    return x**2 + 2 * y


@objective(lambda rng: (rng.random(size=6) + 0.5,))
def implicit_heat_steps_solve(u0, alpha=0.4, steps=3):
    n = u0.shape[0]
    A = (1 + 2 * alpha) * np.eye(n) - alpha * np.eye(n, k=1) - alpha * np.eye(n, k=-1)
    u = u0
    for _ in range(steps):
        u = np.linalg.solve(A, u)
    return np.sum(u**2) + u[n // 2]


@objective(lambda rng: (0.3 * rng.normal(size=(3, 3)),))
def matrix_exponential_series(A, terms=12):
    E = np.eye(A.shape[0])
    term = np.eye(A.shape[0])
    for k in range(1, terms):
        term = term @ A / k
        E = E + term
    return np.trace(E) + np.sum(E[0] ** 2)


def _gauss(rng):
    L1 = np.tril(rng.normal(size=(3, 3))) + 2 * np.eye(3)
    L2 = np.tril(rng.normal(size=(3, 3))) + 2 * np.eye(3)
    return rng.normal(size=3), L1 @ L1.T, rng.normal(size=3), L2 @ L2.T


@objective(_gauss, wrt=(0, 1, 2, 3))
def gaussian_kl_inv_det_trace(m1, S1, m2, S2):
    k = m1.shape[0]
    S2_inv = np.linalg.inv(S2)
    diff = m2 - m1
    return 0.5 * (
        np.trace(S2_inv @ S1)
        + diff.T @ S2_inv @ diff
        - k
        + np.log(np.linalg.det(S2) / np.linalg.det(S1))
    )


@objective(
    lambda rng: (1.0 + 0.2 * rng.random(size=5), 0.1 * rng.normal(size=4)),
    wrt=(0, 1),
    autograd=WRITES,
)
def fem_stiffness_assembled_by_slices(E, u_free, L=1.0, load=1.0):
    n_el = E.shape[0]
    h = L / n_el
    K = np.zeros((n_el + 1, n_el + 1))
    for e in range(n_el):
        ke = E[e] / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
        K[e : e + 2, e : e + 2] += ke
    u = np.concatenate([[0.0], u_free, [0.0]])
    f = load * h * np.ones(n_el + 1)
    return 0.5 * u @ K @ u - f @ u


def _atoms(rng):
    grid = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]], dtype=float)
    return (grid * 1.1 + 0.05 * rng.normal(size=grid.shape),)


@objective(_atoms)
def morse_potential_triu_unpacked(pos, D=1.0, a=1.5, r0=1.0):
    n = len(pos)
    i, j = np.triu_indices(n, 1)
    r = np.linalg.norm(pos[i] - pos[j], axis=1)
    return np.sum(D * (1 - np.exp(-a * (r - r0))) ** 2 - D)


def _camera(rng):
    points = rng.normal(size=(6, 3)) + np.array([0.0, 0.0, 5.0])
    axis_angle = 0.1 * rng.normal(size=3)
    t = 0.1 * rng.normal(size=3)
    observed = rng.normal(size=(6, 2)) * 0.1
    return axis_angle, t, points, observed


@objective(
    _camera,
    wrt=(0, 1, 2),
    autograd="autograd's np.cross vjp fails to broadcast a (3,) axis against (6, 3) points",
)
def reprojection_error_rodrigues(axis_angle, t, points, observed, f=500.0):
    theta = np.linalg.norm(axis_angle)
    k = axis_angle / theta
    cos, sin = np.cos(theta), np.sin(theta)
    rotated = (points * cos + np.cross(k, points) * sin
               + np.outer(points @ k, k) * (1 - cos))  # fmt: skip
    P = rotated + t
    projected = f * P[:, :2] / P[:, 2:3]
    residual = projected / f - observed
    return np.sum(residual**2)


@objective(lambda rng: (np.array([1.0, 0.5]) + 0.3 * rng.normal(size=2),))
def beale_tuple_unpacked(p):
    x, y = p
    return (1.5 - x + x * y) ** 2 + (2.25 - x + x * y**2) ** 2 + (2.625 - x + x * y**3) ** 2


@objective(lambda rng: (rng.normal(size=2),))
def himmelblau_and_rosenbrock(p, a=1.0, b=100.0):
    x, y = p
    himmelblau = (x**2 + y - 11) ** 2 + (x + y**2 - 7) ** 2
    rosenbrock = (a - x) ** 2 + b * (y - x**2) ** 2
    return himmelblau + rosenbrock


@objective(lambda rng: (0.5 * rng.normal(size=2),))
def goldstein_price(p):
    x, y = p
    first = 1 + (x + y + 1) ** 2 * (19 - 14 * x + 3 * x**2 - 14 * y + 6 * x * y + 3 * y**2)
    second = 30 + (2 * x - 3 * y) ** 2 * (18 - 32 * x + 12 * x**2 + 48 * y - 36 * x * y + 27 * y**2)
    return np.log(first * second)


@objective(lambda rng: (rng.normal(size=(3, 3)),))
def eigh_spectrum_penalty(A):
    S = 0.5 * (A + A.T)
    w, V = np.linalg.eigh(S)
    return np.sum(w**2) + w[-1] - w[0] + np.sum(V[:, -1] ** 4)


@objective(lambda rng: (rng.normal(size=(4, 3)),))
def svd_low_rank_residual(M):
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    approx = (U[:, :2] * s[:2]) @ Vt[:2]
    return np.sum((M - approx) ** 2) + s[0]


@objective(lambda rng: (rng.normal(size=(3, 3)) + 3 * np.eye(3),))
def slogdet_and_kron(A):
    sign, logabs = np.linalg.slogdet(A)
    K = np.kron(A, np.eye(2))
    return sign * logabs + np.sum(np.tensordot(A, A, axes=([1], [0])) ** 2) / 50 + np.trace(K)


@objective(lambda rng: (rng.normal(size=8),), autograd="autograd has no vjp for np.cumprod")
def second_differences_and_cumprod(x):
    d2 = np.diff(x, n=2)
    growth = np.cumprod(1 + 0.1 * np.tanh(x))
    return np.sum(d2**2) + growth[-1] + np.sum(np.cumsum(x)[::2])


@objective(
    lambda rng: (rng.normal(size=(4, 5)),),
    autograd="autograd has no vjp for np.take_along_axis",
)
def argmax_selection_take_along_axis(scores):
    best = np.argmax(scores, axis=1)
    picked = np.take_along_axis(scores, best[:, None], axis=1)
    top = scores[np.arange(scores.shape[0]), best]
    s = np.sort(scores, axis=1)
    return np.sum(picked**2) + np.sum(top) + np.sum(s[:, -2:] - s[:, :2])
