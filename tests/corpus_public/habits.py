"""Everyday habits: keyword-only arguments, ``x.mean(axis=0, keepdims=True)``,
``np.linalg.norm(v, axis=1)``, ``@`` between 1-D vectors, lists built in loops then
``np.stack``/``np.concatenate``/``np.array``, ``max``/``min``/``abs``/``float`` on
Python scalars, f-strings in ``print``, ``assert x.shape == ...``, ``np.einsum``,
starred unpacking, augmented assignment on local arrays, ``x[..., 0]``."""

import numpy as np

from corpus_public import FLOAT_CAST, objective


def l2_penalty(w, *, lam=0.1, power=2):
    return lam * np.sum(np.abs(w) ** power)


@objective(lambda rng: (rng.normal(size=4), rng.normal(size=(6, 4))))
def keyword_only_helper_calls(w, X, *, lam=0.05):
    pred = X @ w
    return np.mean(pred**2) + l2_penalty(w, lam=lam) + l2_penalty(w, power=4, lam=0.01)


@objective(lambda rng: (rng.normal(size=(5, 3)) * 2 + 1,))
def standardize_keepdims(x):
    mu = x.mean(axis=0, keepdims=True)
    sd = x.std(axis=0, keepdims=True)
    z = (x - mu) / sd
    return np.sum(z[:, 0] * z[:, 1]) + np.sum(np.exp(z.max(axis=1)))


@objective(
    lambda rng: (rng.normal(size=(5, 3)),),
    autograd="autograd's norm(axis=1, keepdims=True) gives a gradient of shape (5, 5, 3)",
)
def row_norms_and_normalize(v):
    lengths = np.linalg.norm(v, axis=1)
    unit = v / np.linalg.norm(v, axis=1, keepdims=True)
    cos = unit @ unit.T
    return np.sum(lengths) + np.sum(np.triu(cos, 1) ** 2) + np.linalg.norm(v, "fro")


@objective(lambda rng: (rng.normal(size=3), rng.normal(size=(3, 3))), wrt=(0, 1))
def matmul_with_1d_vectors(v, A):
    quad = v @ A @ v
    Av = A @ v
    vA = v @ A
    return quad + Av @ vA + np.dot(v, v) * np.inner(Av, v)


@objective(lambda rng: (rng.normal(size=(4, 3)),))
def stack_and_concatenate_lists(x):
    rows = []
    feats = []
    for i in range(x.shape[0]):
        rows.append(np.tanh(x[i]))
        feats.append(x[i, :2] * (i + 1))
    H = np.stack(rows, axis=1)
    f = np.concatenate(feats)
    both = np.concatenate([H.ravel(), f, [1.0]])
    return np.sum(both**2) + H[0] @ H[1]


@objective(lambda rng: (rng.normal(size=(4, 3)),))
def append_then_np_array(x):
    losses = []
    for row in x:
        losses.append(np.sum(row**2) - row[0])
    losses = np.array(losses)
    weights = np.linspace(1.0, 2.0, len(losses))
    return np.dot(weights, losses) + losses.max()


@objective(lambda rng: (rng.normal(size=5),))
def python_max_min_abs(x):
    a, b = x[0], x[1]
    biggest = max(a, b, 0.5)
    smallest = min(x[2], x[3])
    clipped = min(max(x[4], -1.0), 1.0)
    return biggest**2 + abs(smallest) * 3 + clipped + max(abs(a), abs(b))


@objective(
    lambda rng: (rng.normal(size=4),),
    compiler=FLOAT_CAST,
    tracing=FLOAT_CAST,
    autograd="float() of an autograd box fails",
)
def float_cast_result(w):
    loss = float(np.sum((w - 1) ** 2))
    reg = 0.1 * float(np.linalg.norm(w))
    return float(loss + reg)


@objective(lambda rng: (rng.normal(size=3),), autograd="an f-string cannot format a box")
def print_fstrings_in_loop(w, steps=3):
    total = 0.0
    for i in range(steps):
        loss = np.sum((w * (i + 1) - 1.0) ** 2)
        total += loss
        print(f"step {i:2d} | loss {loss:8.4f} | |w| = {np.linalg.norm(w):.3e}")
    print(f"{total=}")
    return total


@objective(lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=(4, 2))), wrt=(0, 1))
def assert_shapes_everywhere(X, W):
    n, d = X.shape
    assert W.shape == (d, 2), f"expected ({d}, 2), got {W.shape}"
    H = np.tanh(X @ W)
    assert H.shape == (n, 2)
    assert H.ndim == 2 and H.size == n * 2
    out = H.sum(axis=1)
    assert out.shape == (n,), out.shape
    return np.sum(out**2)


@objective(
    lambda rng: (rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(3, 3))),
    wrt=(0, 1, 2),
    autograd="autograd's einsum vjp of a trace ('ii->') fails in numpy's einsum",
)
def einsum_assortment(A, v, S):
    Av = np.einsum("ij,j->i", A, v)
    gram = np.einsum("bi,bj->ij", A, A)
    tr = np.einsum("ii->", S)
    dot = np.einsum("i,i", v, v)
    bil = np.einsum("i,ij,j->", Av, S, Av)
    return np.sum(gram * np.eye(4)) + tr**2 + dot + bil / 10


@objective(
    lambda rng: (rng.normal(size=6),),
    compiler="starred unpacking of an array (scale, *coeffs, shift = params) is refused: the "
    "hint says to read its parts (params[0], params[1:-1])",
)
def starred_unpacking(params):
    scale, *coeffs, shift = params
    first, second, *_ = coeffs
    poly = sum(c * 0.5**k for k, c in enumerate(coeffs))
    return scale**2 * poly + shift + first * second


@objective(lambda rng: (rng.normal(size=(3, 4)),))
def augmented_assign_local_arrays(x):
    y = x * 2.0
    y += 1.0
    y *= x
    y /= 3.0
    y **= 2
    y -= x.mean()
    return y.sum()


@objective(lambda rng: (rng.normal(size=(2, 3, 2)),))
def ellipsis_and_expand_dims(x):
    first = x[..., 0]
    last = x[:, -1]
    col = np.expand_dims(first, axis=-1)
    sq = np.squeeze(x[:, :1, :], axis=1)
    return np.sum(col * x) + np.sum(last**2) + np.sum(sq * first[:, :2])


@objective(
    lambda rng: (rng.normal(size=4), rng.normal(size=4)),
    wrt=(0, 1),
)
def np_sum_of_python_list(a, b):
    terms = [np.sum(a**2), a @ b, np.sum(np.sin(b))]
    avg = np.mean([np.max(a), np.max(b)])
    return np.sum(terms) + avg + sum(terms) / len(terms)


@objective(
    lambda rng: (rng.normal(size=(3, 2)),),
    compiler="config = config or {} (an options dict defaulting to None) is refused; the hint "
    "says what compiles: a dict default (config={}) or keyword parameters",
)
def conditional_expression_and_dict_get(x, config=None):
    config = config or {}
    scale = config.get("scale", 2.0)
    mode = config.get("mode", "sum")
    total = x.sum() if mode == "sum" else x.mean()
    sign = 1.0 if total > 0 else -1.0
    return scale * sign * total + np.sum(x**2)


@objective(lambda rng: (rng.normal(size=(4, 2)),))
def tuple_axis_and_methods(x):
    centered = x - x.mean(axis=(0, 1))
    peak = np.abs(centered).max(axis=0)
    return np.sum(centered**2, axis=(0, 1)) + peak.sum() + x.prod(axis=1).sum() + x.size * 0.1


def scaled_shifted(v, scale=1.0, shift=0.0):
    return scale * v + shift


@objective(lambda rng: (rng.normal(size=4), rng.normal(size=2)), wrt=(0, 1))
def double_star_options_into_helper(x, y):
    opts = {"scale": y[0], "shift": 0.5}
    reduce = {"axis": 0, "keepdims": True}
    out = scaled_shifted(x, **opts)
    return np.sum(out**2) + np.sum(np.sum(np.outer(x, y), **reduce) ** 2)


def _wb(rng):
    return 0.5 * rng.normal(size=(3, 2)), 0.1 * rng.normal(size=2)


@objective(_wb, wrt=(0, 1))
def params_list_updated_in_loop(W, b, lr=0.1):
    params = [W, b]
    X = np.linspace(-1, 1, 12).reshape(4, 3)
    for _ in range(3):
        out = np.tanh(X @ params[0] + params[1])
        params[0] = params[0] - lr * X.T @ (1 - out**2) / len(X)
        params[1] = params[1] - lr * (1 - out**2).mean(axis=0)
    return np.sum(np.tanh(X @ params[0] + params[1]) ** 2)


@objective(
    _wb,
    wrt=(0, 1),
    autograd="autograd is wrong here: h += 1.0 on a box makes a new box and hs keeps the old "
    "one (numpy changes the array hs holds)",
    compiler="h += 1.0 on an array the list hs holds changes hs too: refused (the hint says "
    "h = h + ..., which leaves hs as it is)",
)
def loop_items_changed_in_place(W, b):
    hs = [W[0] * 1.0, W[1] * 2.0, b * 3.0]
    for h in hs:
        h += 1.0
    return np.sum(np.stack(hs) ** 2)


@objective(lambda rng: (rng.normal(size=3),))
def loop_over_literal_values(x):
    total = 0.0
    for lam in (0.1, 0.01, 1.0):
        total = total + lam * np.sum(x**2)
    for w in [x, x**2, np.sin(x)]:
        total = total + np.sum(w * x)
    return total
