"""Bad inputs for the compiler's front doors (``grad``, ``value_and_grad``, ``vjp``,
``jvp``): each case is a call and what it must end in.

``ERROR`` means a located ``AutodiffError``; a function means a result, which the
function checks against numpy or autograd (never against autodiff_tutor itself).
"""

from __future__ import annotations

import functools

import numpy as np

from autodiff_tutor import grad, jvp, value_and_grad, vjp

ERROR = "error"
X = np.array([0.5, -1.0, 2.0])


def total(x):
    return np.sum(x * x)


def pair(x, y):
    return np.sum(x * y)


def with_default(x, scale=2.0):
    return np.sum(scale * x)


def vector(x):
    return np.sin(x)


def two_outputs(x):
    return np.sum(x), np.sum(x * x)


def returns_none(x):
    np.sum(x)


def returns_string(x):
    return "loss"


def returns_list(x):
    return [np.sum(x), np.sum(x)]


def returns_constant(x):
    return 3.0


def identity(x):
    return x


def mean_of(x):
    return np.mean(x)


def layers_sum(params, x):
    total = 0.0
    for W, b in params:
        total = total + np.sum(np.tanh(x @ W + b))
    return total


def uses_yield(x):
    yield np.sum(x)


def uses_try(x):
    try:
        y = np.sum(x)
    except ValueError:
        y = 0.0
    return y


def uses_with(x):
    with np.errstate(all="ignore"):
        y = np.sum(x)
    return y


def uses_global(x):
    global X
    return np.sum(x)


def uses_float(x):
    return float(np.sum(x)) * 2.0


def uses_item(x):
    return np.sum(x).item()


def uses_asarray(x):
    return np.sum(np.asarray(x))


def uses_sort(x):
    y = x * 1.0
    y.sort()
    return np.sum(y)


def uses_add_at(x):
    y = x * 1.0
    np.add.at(y, [0], 1.0)
    return np.sum(y)


def uses_i0(x):
    return np.sum(np.i0(x))  # the modified Bessel function: no derivative rule


def uses_del(x):
    y = x * 2.0
    del y
    return np.sum(x)


def uses_walrus(x):
    if x[0] > 0 and (s := np.sum(x)) > 0:  # after 'and': not always evaluated
        return s
    return -np.sum(x)


def uses_lambda(x):
    square = lambda v: v * v  # noqa: E731
    return np.sum(square(x))


def uses_nested_def(x):
    def square(v):
        return v * v

    return np.sum(square(x))


def uses_star_args(*xs):
    return np.sum(xs[0])


def uses_kwargs(x, **options):
    return np.sum(x)


def pair_sum(x, y):
    return np.sum(x + y)


def big_sum(x):
    return np.sum(x)


class Callable:
    def __call__(self, x):
        return np.sum(x * x)


def gradient_is(expected):
    """A checker: the result equals ``expected`` (nan where ``expected`` is nan)."""

    def check(result):
        return np.allclose(np.asarray(result, float), expected, equal_nan=True)

    return check


def _sum_of_squares_gradient(x):
    return 2 * np.asarray(x, dtype=float)


def _fresh_owned(result):
    """Gradients that are writable arrays sharing no memory with each other."""
    arrays = [np.asarray(r) for r in (result if isinstance(result, tuple) else (result,))]
    writable = all(isinstance(r, np.ndarray) and r.flags.writeable for r in arrays)
    apart = all(not np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1 :])
    return writable and apart


SEED = np.ones(3)

CASES = [
    # -- wrt ------------------------------------------------------------------------
    ("wrt-float", lambda: grad(total, wrt=0.5)(X), ERROR),
    ("wrt-unknown-name", lambda: grad(total, wrt="z")(X), ERROR),
    ("wrt-duplicate-positions", lambda: grad(pair, wrt=[0, 0])(X, X), ERROR),
    ("wrt-duplicate-names", lambda: grad(pair, wrt=["x", "x"])(X, X), ERROR),
    ("wrt-name-and-position-same", lambda: grad(pair, wrt=[0, "x"])(X, X), ERROR),
    ("wrt-out-of-range", lambda: grad(total, wrt=5)(X), ERROR),
    ("wrt-negative-out-of-range", lambda: grad(total, wrt=-5)(X), ERROR),
    ("wrt-bool", lambda: grad(total, wrt=True)(X), ERROR),
    ("wrt-nested-list", lambda: grad(pair, wrt=[[0]])(X, X), ERROR),
    ("wrt-none-entry", lambda: grad(pair, wrt=[None])(X, X), ERROR),
    ("wrt-empty", lambda: grad(pair, wrt=[])(X, X), ERROR),
    ("wrt-object", lambda: grad(total, wrt=object())(X), ERROR),
    ("wrt-negative-index", lambda: grad(pair, wrt=-1)(X, 2 * X), gradient_is(X)),
    (
        "wrt-default-parameter",
        lambda: grad(with_default, wrt="scale")(X, 2.0),
        gradient_is(np.sum(X)),
    ),
    ("vjp-wrt-float", lambda: vjp(total, X, wrt=0.5), ERROR),
    # -- arguments ------------------------------------------------------------------
    ("too-many-arguments", lambda: grad(total)(X, X, X), ERROR),
    ("too-few-arguments", lambda: grad(pair)(X), ERROR),
    ("no-arguments", lambda: grad(total)(), ERROR),
    ("unknown-keyword", lambda: grad(total)(X, z=1.0), ERROR),
    ("keyword-argument", lambda: grad(pair, wrt="y")(X, y=2 * X), gradient_is(X)),
    ("integer-array", lambda: grad(total)(np.arange(3)), ERROR),
    ("bool-array", lambda: grad(total)(np.array([True, False])), ERROR),
    ("object-array", lambda: grad(total)(np.array([1.0, "a"], dtype=object)), ERROR),
    ("object-array-of-floats", lambda: grad(total)(np.array([1.0, 2.0], dtype=object)), ERROR),
    ("string-argument", lambda: grad(total)("abc"), ERROR),
    ("none-argument", lambda: grad(total)(None), ERROR),
    ("dict-argument", lambda: grad(total)({"x": X}), ERROR),
    ("python-int", lambda: grad(total)(3), ERROR),
    ("python-float", lambda: grad(total)(3.0), gradient_is(6.0)),
    ("python-list", lambda: grad(total)([1.0, 2.0]), gradient_is([2.0, 4.0])),
    ("nested-ragged-list", lambda: grad(total)([[1.0], [2.0, 3.0]]), ERROR),
    ("float32-array", lambda: grad(total)(np.ones(2, np.float32)), gradient_is([2.0, 2.0])),
    ("read-only-array", lambda: grad(total)(np.broadcast_to(1.0, (3,))), gradient_is(2.0)),
    ("non-contiguous-array", lambda: grad(total)(np.arange(6.0)[::2]), gradient_is([0, 4, 8])),
    (  # structured arguments: gradients in the same structure
        "list-of-weight-tuples",
        lambda: grad(layers_sum, wrt=0)([(np.eye(2), np.zeros(2))], np.ones(2))[0][1],
        gradient_is(1 - np.tanh(np.ones(2)) ** 2),
    ),
    # -- special values and shapes ---------------------------------------------------
    ("empty-array", lambda: grad(total)(np.zeros(0)), gradient_is(np.zeros(0))),
    ("zero-size-2d", lambda: grad(total)(np.zeros((0, 3))), gradient_is(np.zeros((0, 3)))),
    ("mean-of-empty", lambda: grad(mean_of)(np.zeros(0)), gradient_is(np.zeros(0))),
    ("nan-input", lambda: grad(total)(np.array([np.nan, 1.0])), gradient_is([np.nan, 2.0])),
    ("inf-input", lambda: grad(total)(np.array([np.inf, 1.0])), gradient_is([np.inf, 2.0])),
    ("scalar-0d-array", lambda: grad(total)(np.array(3.0)), gradient_is(6.0)),
    (
        "many-dimensions",
        lambda: grad(total)(np.ones((1,) * 32)),
        gradient_is(np.full((1,) * 32, 2.0)),
    ),
    ("large-array", lambda: grad(total)(np.ones(2_000_000)), gradient_is(2.0)),
    # -- outputs --------------------------------------------------------------------
    ("vector-output", lambda: grad(vector)(X), ERROR),
    ("tuple-output", lambda: grad(two_outputs)(X), ERROR),
    ("none-output", lambda: grad(returns_none)(X), ERROR),
    ("string-output", lambda: grad(returns_string)(X), ERROR),
    ("list-output", lambda: grad(returns_list)(X), ERROR),
    ("constant-output", lambda: grad(returns_constant)(X), gradient_is(np.zeros(3))),
    # -- the function itself --------------------------------------------------------
    ("partial", lambda: grad(functools.partial(pair, y=X))(X), gradient_is(X)),
    ("callable-object", lambda: grad(Callable())(X), gradient_is(2 * X)),
    ("builtin", lambda: grad(np.sin)(X), ERROR),
    ("not-callable", lambda: grad(3)(X), ERROR),
    ("a-class", lambda: grad(Callable)(X), ERROR),
    ("star-args", lambda: grad(uses_star_args)(X), gradient_is([np.ones(3)])),  # d *xs
    ("double-star-kwargs", lambda: grad(uses_kwargs)(X), gradient_is(1.0)),
    # -- unsupported syntax and escapes -------------------------------------------------
    ("yield", lambda: grad(uses_yield)(X), ERROR),
    ("try-except", lambda: grad(uses_try)(X), ERROR),
    ("with", lambda: grad(uses_with)(X), gradient_is(np.ones(3))),
    ("global", lambda: grad(uses_global)(X), ERROR),
    ("float-escape", lambda: grad(uses_float)(X), ERROR),
    ("item-escape", lambda: grad(uses_item)(X), ERROR),
    ("asarray-alias", lambda: grad(uses_asarray)(X), gradient_is(np.ones_like(X))),
    ("sort-in-place", lambda: grad(uses_sort)(X), ERROR),
    ("add-at", lambda: grad(uses_add_at)(X), ERROR),
    ("no-rule-i0", lambda: grad(uses_i0)(X), ERROR),
    ("del", lambda: grad(uses_del)(X), gradient_is(np.ones(3))),
    ("walrus", lambda: grad(uses_walrus)(X), ERROR),
    ("inner-lambda", lambda: grad(uses_lambda)(X), gradient_is(2 * X)),
    ("nested-def", lambda: grad(uses_nested_def)(X), gradient_is(2 * X)),
    # -- vjp seeds ------------------------------------------------------------------
    ("vjp-no-seed", lambda: vjp(vector, X)[1](), ERROR),
    ("vjp-two-seeds", lambda: vjp(vector, X)[1](SEED, SEED), ERROR),
    ("vjp-seed-wrong-shape", lambda: vjp(vector, X)[1](np.ones(4)), ERROR),
    ("vjp-seed-string", lambda: vjp(vector, X)[1]("a"), ERROR),
    ("vjp-seed-list", lambda: vjp(vector, X)[1]([1.0, 1.0, 1.0]), gradient_is(np.cos(X))),
    ("vjp-seed-int-array", lambda: vjp(vector, X)[1](np.ones(3, int)), gradient_is(np.cos(X))),
    ("vjp-seed-object", lambda: vjp(vector, X)[1](object()), ERROR),
    ("vjp-scalar-seed-for-vector", lambda: vjp(vector, X)[1](1.0), ERROR),
    ("vjp-identity-returns-fresh", lambda: vjp(identity, X)[1](SEED)[0], _fresh_owned),
    ("vjp-int-argument-only", lambda: vjp(total, np.arange(3)), ERROR),
    # -- jvp tangents ---------------------------------------------------------------
    ("jvp-too-few-tangents", lambda: jvp(pair, (X, X), (X,)), ERROR),
    ("jvp-all-none", lambda: jvp(total, (X,), (None,)), ERROR),
    ("jvp-tangent-wrong-shape", lambda: jvp(total, (X,), (np.ones(4),)), ERROR),
    ("jvp-tangent-string", lambda: jvp(total, (X,), ("a",)), ERROR),
    ("jvp-int-argument", lambda: jvp(total, (np.arange(3),), (np.ones(3),)), ERROR),
    ("jvp-args-not-a-sequence", lambda: jvp(total, X, (X,)), ERROR),
    ("jvp-identity-returns-fresh", lambda: jvp(identity, (X,), (SEED,))[1], _fresh_owned),
    # -- gradients are the caller's own --------------------------------------------
    ("grad-two-inputs-fresh", lambda: grad(pair_sum, wrt=[0, 1])(X, X), _fresh_owned),
    (
        "value-and-grad-large-sum-writable",
        lambda: value_and_grad(big_sum)(np.ones(10_000))[1],
        _fresh_owned,
    ),
]
