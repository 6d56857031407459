"""Engineering and finance scripts: mean-variance portfolios with a budget penalty and
a Sharpe ratio, robot-arm forward kinematics by ``np.cumsum`` of joint angles, springs
between masses listed as edges, an optimal-control cost rolled out over a horizon,
Black-Scholes with ``scipy.stats.norm``, a seeded Monte-Carlo price, trajectories by
``np.interp``, ``np.diff``, ``np.gradient`` and ``np.hypot``."""

import numpy as np
from scipy.stats import norm

from corpus_public import objective


def _portfolio(rng):
    A = rng.normal(size=(4, 4))
    Sigma = A @ A.T / 4 + 0.1 * np.eye(4)
    mu = np.array([0.05, 0.08, 0.03, 0.1])
    return np.full(4, 0.25) + 0.05 * rng.normal(size=4), Sigma, mu


@objective(_portfolio)
def portfolio_variance_budget(w, Sigma, mu, *, risk_aversion=3.0, penalty=10.0):
    variance = w @ Sigma @ w
    expected = mu @ w
    budget = (np.sum(w) - 1.0) ** 2
    return 0.5 * risk_aversion * variance - expected + penalty * budget


def _returns(rng):
    return np.full(3, 1 / 3) + 0.05 * rng.normal(size=3), 0.01 + 0.05 * rng.normal(size=(20, 3))


@objective(_returns)
def negative_sharpe_ratio(weights, returns, rf=0.001):
    weights = weights / weights.sum()
    port = returns @ weights
    excess = port.mean() - rf
    return -excess / port.std(ddof=1) * np.sqrt(252)


def _arm(rng):
    return rng.uniform(-1, 1, size=3), np.array([1.0, 0.8, 0.5])


@objective(_arm, wrt=(0, 1))
def robot_arm_reach_cumsum(thetas, lengths, target=(1.2, 0.9)):
    angles = np.cumsum(thetas)
    x = np.sum(lengths * np.cos(angles))
    y = np.sum(lengths * np.sin(angles))
    return (x - target[0]) ** 2 + (y - target[1]) ** 2 + 0.01 * np.sum(thetas**2)


@objective(
    _arm,
    wrt=(0, 1),
    autograd="np.array of a list of boxes fails",
)
def robot_arm_joint_positions_list(thetas, lengths):
    points = [np.zeros(2)]
    angle = 0.0
    for theta, length in zip(thetas, lengths, strict=True):
        angle = angle + theta
        step = length * np.array([np.cos(angle), np.sin(angle)])
        points.append(points[-1] + step)
    points = np.array(points)
    obstacle = np.array([0.5, 0.5])
    clearance = np.linalg.norm(points - obstacle, axis=1)
    return np.sum(1.0 / clearance) + np.sum(points[-1] ** 2)


def _masses(rng):
    grid = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    return grid + 0.1 * rng.normal(size=grid.shape), np.array([1.0, 2.0, 1.0, 3.0])


EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]


@objective(_masses)
def spring_mass_edges(x, masses, k=5.0, rest=1.0, g=9.81):
    energy = 0.0
    for a, b in EDGES:
        length = np.linalg.norm(x[a] - x[b])
        r = rest * np.sqrt(2) if (a, b) == (0, 2) else rest
        energy += 0.5 * k * (length - r) ** 2
    energy += g * np.dot(masses, x[:, 1])
    return energy


@objective(_masses)
def spring_mass_all_pairs(x, masses, k=2.0):
    n = len(x)
    diff = x[:, None, :] - x[None, :, :]
    dist = np.sqrt((diff**2).sum(-1) + np.eye(n))
    iu = np.triu_indices(n, 1)
    rest = np.ones((n, n))[iu]
    return 0.5 * k * np.sum((dist[iu] - rest) ** 2) + 0.1 * masses @ (x**2).sum(axis=1)


def _control(rng):
    return 0.1 * rng.normal(size=(6, 1)), np.array([1.0, 0.0])


A_DYN = np.array([[1.0, 0.1], [0.0, 1.0]])
B_DYN = np.array([[0.005], [0.1]])
Q_COST = np.diag([1.0, 0.1])


@objective(_control, wrt=(0, 1))
def optimal_control_rollout(u, x0, horizon=6, r=0.01):
    x = x0
    states = [x]
    cost = 0.0
    for t in range(horizon):
        x = A_DYN @ x + B_DYN @ u[t]
        states.append(x)
        cost += x @ Q_COST @ x + r * (u[t] @ u[t])
    X = np.stack(states)
    return cost + 10.0 * np.sum(X[-1] ** 2)


@objective(_control)
def pendulum_swing_rollout(u, x0, dt=0.1):
    theta, omega = x0
    cost = 0.0
    for t in range(u.shape[0]):
        alpha = -9.81 * np.sin(theta) - 0.1 * omega + u[t, 0]
        omega = omega + dt * alpha
        theta = theta + dt * omega
        cost = cost + 0.01 * u[t, 0] ** 2
    return cost + (theta - np.pi) ** 2 + omega**2


@objective(
    lambda rng: (np.array([100.0, 0.2]) + rng.normal(size=2) * [1.0, 0.01],),
)
def black_scholes_norm_cdf(params, K=105.0, T=0.5, r=0.02):
    S, sigma = params
    d1 = (np.log(S / K) + (r + 0.5 * sigma**2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    call = S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)
    return call


@objective(lambda rng: (np.array([100.0, 0.2]) + rng.normal(size=2) * [1.0, 0.01],))
def monte_carlo_call_seeded(params, K=100.0, T=1.0, r=0.01, n_paths=2000):
    S0, sigma = params
    rng = np.random.default_rng(42)
    z = rng.standard_normal(n_paths)
    ST = S0 * np.exp((r - 0.5 * sigma**2) * T + sigma * np.sqrt(T) * z)
    payoff = np.maximum(ST - K, 0.0)
    return np.exp(-r * T) * payoff.mean()


def _profile(rng):
    return 1.0 + 0.2 * rng.normal(size=5), np.linspace(0.0, 4.0, 5)


@objective(_profile, autograd="autograd has no vjp for np.interp")
def interp_speed_profile(knots_v, knots_t):
    t = np.linspace(0.05, 3.95, 17)
    v = np.interp(t, knots_t, knots_v)
    accel = np.diff(v) / np.diff(t)
    return np.sum(v**2) * (t[1] - t[0]) + 0.5 * np.sum(accel**2)


@objective(
    lambda rng: (np.sin(np.linspace(0, 3, 8)) + 0.1 * rng.normal(size=8),),
    autograd="autograd's np.gradient takes no spacing argument",
)
def trajectory_jerk_np_gradient(x, dt=0.1):
    v = np.gradient(x, dt)
    a = np.gradient(v, dt)
    jerk = np.diff(a) / dt
    return 1e-3 * np.sum(jerk**2) + np.sum((x - 0.5) ** 2)


@objective(lambda rng: (0.3 * rng.normal(size=6),))
def cable_length_hypot(heights, span=5.0):
    xs = np.linspace(0.0, span, len(heights) + 2)
    ys = np.concatenate(([0.0], heights, [0.0]))
    segments = np.hypot(np.diff(xs), np.diff(ys))
    sag_energy = 9.81 * np.sum(segments * (ys[:-1] + ys[1:]) / 2)
    return sag_energy + 50.0 * (segments.sum() - 1.05 * span) ** 2


@objective(lambda rng: (np.array([20.0, 0.8]) + rng.normal(size=2) * [0.5, 0.02],))
def projectile_range_while(v0_angle, drag=0.05, dt=0.02):
    v0, angle = v0_angle
    vx, vy = v0 * np.cos(angle), v0 * np.sin(angle)
    x, y = 0.0, 0.0
    while y >= 0.0:
        speed = np.sqrt(vx**2 + vy**2)
        vx = vx - drag * speed * vx * dt
        vy = vy - (9.81 + drag * speed * vy) * dt
        x, y = x + vx * dt, y + vy * dt
    return -x
