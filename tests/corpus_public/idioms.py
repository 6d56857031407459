"""Habits the other corpora leave out: the walrus operator, ``itertools.combinations``
and ``functools.reduce``, ``reversed(range(n))`` and Horner's rule, ``try``/``except``
around a Cholesky, chained comparisons in ``if``, an early ``return`` inside a loop,
a lambda assigned to a name, comprehensions with ``if``, ``sum(w * w for w in Ws)``,
``x.T.dot(y)`` and column vectors from a course in Python (``np.c_``,
``theta.reshape(-1, 1)``), ``np.multiply``/``np.power``/``np.divide``, ``x[..., None]``,
``np.clip`` inside the loss, ``np.where`` on a computed mask, ``np.tile``/``np.repeat``,
``while True`` with ``break``, ``x[::-1]``, ``np.hypot``/``np.arctan2``/``np.log1p``,
``beale(*p)``, an array filled row by row, a recursive helper, lambdas kept in a list,
``np.linalg.norm`` orders, a global dict of loss weights, a loop that rebinds the
sequence it loops over."""

import functools
import itertools
import math

import numpy as np

from corpus_public import WRITES, objective

BOX_DOT = "autograd's boxes have no .dot method (x.T.dot(x))"


def _housing(rng):
    X = rng.normal(size=(6, 2))
    y = (X @ np.array([1.5, -0.5]) + 0.3 + 0.1 * rng.normal(size=6)).reshape(-1, 1)
    return 0.1 * rng.normal(size=3), X, y


@objective(_housing)
def column_vector_cost_np_c(theta, X, y, lambda_=0.1):
    m = len(y)
    X = np.c_[np.ones(m), X]
    theta = theta.reshape(-1, 1)
    h = X.dot(theta)
    J = 1 / (2 * m) * np.sum(np.square(h - y))
    reg = lambda_ / (2 * m) * np.sum(np.power(theta[1:], 2))
    grad_norm = np.sum(np.divide(X.T.dot(h - y), m) ** 2)
    return J + reg + 0.01 * grad_norm


@objective(_housing)
def multiply_subtract_function_forms(theta, X, y):
    m = X.shape[0]
    Xb = np.hstack([np.ones((m, 1)), X])
    z = np.dot(Xb, theta)
    h = np.divide(1.0, np.add(1.0, np.exp(np.negative(z))))
    t = (y.ravel() > y.mean()).astype(float)
    cost = -np.mean(np.multiply(t, np.log(h)) + np.multiply(np.subtract(1, t), np.log(1 - h)))
    return cost


@objective(lambda rng: (rng.normal(size=(4, 3)),), autograd=BOX_DOT)
def transpose_dot_and_outer(x):
    G = x.T.dot(x)
    c = x.sum(axis=0)
    return np.trace(G) + np.sum(np.outer(c, c) * G) / 10 + np.dot(x, x.T)[0, 1]


@objective(
    lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=(4, 2))),
    wrt=(0, 1),
    compiler="functools.reduce is refused (no derivative rule, a true hint); a loop or "
    "A @ B @ C @ A compiles",
)
def reduce_chain_of_matmuls(A, B):
    C = np.linspace(-1, 1, 6).reshape(2, 3)
    chain = functools.reduce(np.dot, [A, B, C, A])
    return np.sum(chain**2) / 100


@objective(lambda rng: (rng.normal(size=(5, 2)),))
def combinations_pair_energy(pts, k=0.5):
    energy = 0.0
    for i, j in itertools.combinations(range(len(pts)), 2):
        dx, dy = pts[i] - pts[j]
        d = np.hypot(dx, dy)
        energy += 1.0 / (d + 0.1) + k * d**2
    return energy


@objective(lambda rng: (rng.normal(size=5), rng.normal(size=3)), wrt=(0, 1))
def horner_reversed_range(coeffs, xs):
    acc = np.zeros_like(xs)
    for i in reversed(range(len(coeffs))):
        acc = acc * xs + coeffs[i]
    back = 0.0
    for c in coeffs[::-1]:
        back = back * 0.5 + c
    return np.sum(acc**2) + back


@objective(lambda rng: (rng.normal(size=6),))
def discounted_return_backwards(rewards, gamma=0.9):
    G = 0.0
    returns = []
    for r in reversed(rewards):
        G = r + gamma * G
        returns.append(G)
    returns = returns[::-1]
    baseline = sum(returns) / len(returns)
    return sum((g - baseline) ** 2 for g in returns)


@objective(
    lambda rng: (rng.normal(size=(3, 3)),),
    compiler="try/except is refused, located, with the true hint to move the error "
    "handling out of the function",
)
def try_cholesky_except_fallback(A):
    S = A @ A.T + 0.5 * np.eye(3)
    try:
        L = np.linalg.cholesky(S)
        logdet = 2 * np.sum(np.log(np.diag(L)))
    except np.linalg.LinAlgError:
        logdet = np.log(np.linalg.det(S))
    return logdet + np.trace(S) / 3


@objective(lambda rng: (rng.normal(size=6),))
def chained_comparison_piecewise(x):
    total = 0.0
    for xi in x:
        if -0.5 < xi < 0.5:
            total += xi**2
        elif 0.5 <= xi < 2.0:
            total += xi - 0.25
        else:
            total += np.abs(xi) * 1.5
    return total


@objective(lambda rng: (rng.normal(size=4),))
def early_return_inside_loop(w, X=None, tol=1e-3):
    X = np.linspace(-1, 1, 8).reshape(2, 4) if X is None else X
    loss = np.sum((X @ w) ** 2)
    for step in range(50):
        if loss < tol:
            return loss + step
        w = w - 0.05 * 2 * X.T @ (X @ w)
        loss = np.sum((X @ w) ** 2)
    return loss


@objective(lambda rng: (rng.normal(size=5),))
def walrus_in_condition(x):
    total = 0.0
    if (n := np.sum(x**2)) > 1.0:
        total = total + np.log(n)
    else:
        total = total + n
    clipped = [v for xi in x if (v := np.tanh(xi)) > -0.9]
    return total + sum(clipped)


@objective(lambda rng: (rng.normal(size=(3, 4)),))
def lambda_assigned_and_comprehension_if(x):
    act = lambda z: np.log1p(np.exp(z))  # noqa: E731
    sq = lambda z, s=2.0: s * z**2  # noqa: E731
    rows = [act(r).sum() for r in x if r.shape[0] == 4]
    big = [sq(v) for v in x.ravel() if v > 0]
    return sum(rows) + sum(big)


def _layers(rng):
    return [rng.normal(size=(3, 3)) for _ in range(3)], rng.normal(size=(2, 3))


@objective(_layers)
def generator_sum_of_squares(Ws, X, lam=0.01):
    H = X
    for W in Ws:
        H = np.tanh(H @ W)
    penalty = sum(np.sum(W * W) for W in Ws)
    frob = sum(np.linalg.norm(W) for W in Ws)
    return np.sum(H**2) + lam * penalty + lam * frob


@objective(lambda rng: (rng.normal(size=(4, 3)), rng.normal(size=(5, 3))), wrt=(0, 1))
def ellipsis_none_pairwise_distances(A, B):
    diff = A[:, None, :] - B[None, ...]
    D = np.sqrt(np.sum(diff**2, axis=-1) + 1e-12)
    w = np.exp(-D)[..., None]
    return np.sum(w * diff**2) + D.min()


@objective(lambda rng: (rng.random(size=6) * 1.2 - 0.1,))
def clip_inside_log_loss(p, y=(1, 0, 1, 1, 0, 0)):
    y = np.asarray(y, dtype=float)
    q = np.clip(p, 1e-3, 1 - 1e-3)
    return -np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))


@objective(lambda rng: (rng.normal(size=(4, 3)),))
def where_on_computed_mask(x, thresh=0.3):
    norms = np.sqrt(np.sum(x**2, axis=1, keepdims=True))
    mask = norms > thresh
    scaled = np.where(mask, x / norms, x / thresh)
    leaky = np.where(x > 0, x, 0.1 * x)
    return np.sum(scaled**2) + np.sum(leaky)


@objective(lambda rng: (rng.normal(size=3),))
def tile_and_repeat_features(w):
    X = np.arange(12.0).reshape(4, 3) / 10
    W = np.tile(w, (4, 1))
    r = np.repeat(w, 2)
    return np.sum(np.sin(X * W)) + np.sum(r[::2] * r[1::2]) + np.sum(np.tile(w, 2) ** 3)


@objective(lambda rng: (np.array([2.0, 0.5]) + 0.1 * rng.normal(size=2),))
def while_true_with_break(p, lr=0.1):
    x = p
    step = 0
    while True:
        x = x - lr * (x - np.array([1.0, -1.0])) * p[0]
        step += 1
        if step >= 5:
            break
    return np.sum(x**2)


@objective(lambda rng: (rng.normal(size=(5, 2)),))
def polar_coordinates_arctan2(xy):
    r = np.hypot(xy[:, 0], xy[:, 1])
    phi = np.arctan2(xy[:, 1], xy[:, 0])
    return np.sum(r * np.cos(2 * phi)) + np.sum(np.log1p(r**2)) + np.sum(np.expm1(0.1 * r))


@objective(lambda rng: (rng.normal(size=3),))
def math_exp_log_on_scalars(p):
    a, b = float(1.5), float(0.25)
    scale = math.exp(-a) + math.log(2.0)
    k = p[0] * scale + math.sqrt(b) * p[1]
    return k**2 + np.exp(p[2]) * math.pi


@objective(lambda rng: (rng.normal(size=(3, 3)) + 2 * np.eye(3),))
def inverse_and_determinant_of_2d_dot(A):
    B = np.dot(A, A.T)
    inv = np.linalg.inv(B)
    return np.trace(inv) + np.log(np.abs(np.linalg.det(A))) + np.dot(inv, B)[0, 0]


def beale(x, y):
    return (1.5 - x + x * y) ** 2 + (2.25 - x + x * y**2) ** 2


@objective(lambda rng: (np.array([1.0, 0.5]) + 0.3 * rng.normal(size=2),))
def helper_called_with_star_params(p):
    return beale(*p) + np.hypot(*p)


@objective(lambda rng: (rng.normal(size=(4, 3)),), autograd=WRITES)
def zeros_like_filled_row_by_row(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = np.tanh(x[i]) * (i + 1)
    out[:, 0] += x[:, -1]
    out[1:] *= 2.0
    return np.sum(out**2)


@objective(lambda rng: (rng.normal(size=5),), autograd="autograd's boxes have no .copy method")
def copy_then_reverse_slice_write(x):
    y = x.copy()
    y[::-1] = y * 2.0
    y[1:3] = y[1:3] ** 2
    z = y[::2]
    return np.sum(z) + np.sum(y * x)


def poly_recursive(coeffs, t):
    if len(coeffs) == 1:
        return coeffs[0]
    return coeffs[0] + t * poly_recursive(coeffs[1:], t)


@objective(
    lambda rng: (rng.normal(size=4),),
    compiler="a recursive helper is refused, located, with the true hint to write the "
    "recursion as a loop",
)
def recursive_helper(coeffs):
    return poly_recursive(coeffs, 0.7) ** 2 + poly_recursive(coeffs[::-1], -0.3)


@objective(
    lambda rng: (rng.normal(size=3),),
    compiler="a list of lambdas is refused, located: a lambda compiles assigned to a name and "
    "called by it (the hint says so, and that a list of functions cannot be compiled)",
)
def closures_over_loop_variable(w):
    fns = []
    for k in range(3):
        fns.append(lambda v, k=k: np.sin(v * (k + 1)))
    return sum(np.sum(f(w)) for f in fns)


@objective(
    lambda rng: (rng.normal(size=(3, 4)),),
    autograd="autograd has no gradient of np.linalg.norm(X, ord=1) of a matrix",
)
def norm_orders_and_axes(X):
    return (
        np.linalg.norm(X, ord=1)
        + np.linalg.norm(X, 2)
        + np.sum(np.linalg.norm(X, ord=np.inf, axis=1))
        + np.linalg.norm(X.ravel(), 3)
    )


@objective(lambda rng: (rng.normal(size=6),))
def integer_and_negative_powers(x):
    return np.sum(x**3) + np.sum(x ** (-2)) + np.sum(np.abs(x) ** 0.5) + np.sum(np.power(x, 4))


LOSS_WEIGHTS = {"mse": 1.0, "l1": 0.1, "smooth": 0.01}
LAMBDAS = {0.1, 1.0}


@objective(
    lambda rng: (rng.normal(size=5), rng.normal(size=5)),
    compiler="terms[name] of a dict made here, with name from a loop over a global dict: "
    "refused, located (a global's keys may change after compiling); the true hint says to "
    "loop over the dict indexed (for name, term in terms.items())",
)
def weighted_terms_from_global_dict(pred, target):
    terms = {
        "mse": np.mean((pred - target) ** 2),
        "l1": np.mean(np.abs(pred - target)),
        "smooth": np.sum(np.diff(pred) ** 2),
    }
    total = 0.0
    for name in LOSS_WEIGHTS:
        total = total + LOSS_WEIGHTS[name] * terms[name]
    for lam in LAMBDAS:
        total = total + lam * np.sum(pred**2)
    return total


@objective(lambda rng: (rng.normal(size=4),))
def loop_rebinds_its_sequence(x):
    total = 0.0
    for v in x:
        total = total + v * np.sum(x)
        x = np.roll(x, 1) * 0.9
    return total
