"""Habits of course assignments and notebooks, differentiated in both modes (and
forward mode where it applies) against central differences, or refused located with a
hint that compiles: pairwise distances whose unused diagonal takes ``sqrt(0)``, writes
into fresh arrays made from a parameter's shape, ``np.random.rand(*x.shape)`` and other
shapes spread into calls, a helper's dict read by key, dict keys made in a loop over a
written range, ``np.linalg.lstsq``, and helpers defined inside the function called in
comprehensions.
"""

import numpy as np
import pytest
from oracles import central_difference, structured_central_difference

from autodiff_tutor import grad, jvp, value_and_grad
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.tracing import value_and_gradient

POSITIONS = np.array([[0.0, 0.1, 0.0], [1.1, 0.0, 0.2], [0.1, 1.0, -0.1], [1.0, 1.2, 0.9]])


def lennard_jones(pos):
    diff = pos[:, np.newaxis, :] - pos[np.newaxis, :, :]
    r = np.sqrt(np.sum(diff**2, axis=-1))  # 0 on the diagonal
    i, j = np.triu_indices(pos.shape[0], k=1)
    sr6 = (1.0 / r[i, j]) ** 6
    return np.sum(4 * (sr6**2 - sr6))


def masked_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def test_unused_sqrt_of_zero_gives_a_finite_gradient_in_both_modes():
    want = central_difference(lennard_jones, [POSITIONS], 0)
    both = value_and_grad(lennard_jones)
    for _ in range(3):  # checked, then the specialized fast path
        np.testing.assert_allclose(both(POSITIONS)[1], want, rtol=1e-6, atol=1e-8)
    _, traced = value_and_gradient(lennard_jones, POSITIONS)
    np.testing.assert_allclose(traced, want, rtol=1e-6, atol=1e-8)


def test_unused_sqrt_of_zero_in_forward_mode():
    direction = np.random.default_rng(0).normal(size=POSITIONS.shape)
    _, tangent = jvp(lennard_jones, (POSITIONS,), (direction,))
    assert np.isclose(
        tangent, np.sum(central_difference(lennard_jones, [POSITIONS], 0) * direction)
    )


def sum_sqrt(x):
    return np.sum(np.sqrt(x))


def test_masked_sqrt_at_zero_is_zero_and_a_used_sqrt_of_zero_stays_infinite():
    x = np.array([0.0, 0.25, 4.0])
    np.testing.assert_allclose(grad(masked_sqrt)(x), [0.0, 1.0, 0.25])
    np.testing.assert_allclose(value_and_gradient(masked_sqrt, x)[1], [0.0, 1.0, 0.25])
    with np.errstate(divide="ignore"):
        used = grad(sum_sqrt)(x)  # sqrt'(0) = inf, the convention
    assert used[0] == np.inf and np.allclose(used[1:], [1.0, 0.25])


def euler_into_zeros(theta, n_steps=6):
    a, b = theta
    x = np.zeros(n_steps + 1)  # fresh, though its size comes from a parameter
    x[0] = 1.0
    for i in range(n_steps):
        x[i + 1] = x[i] + 0.1 * (a * x[i] - b * x[i] ** 3)
    return np.sum(x)


def running_mean(x):
    out = np.empty_like(x)
    mean = 0.0
    for i in range(x.shape[0]):
        mean = mean + (x[i] - mean) / (i + 1)
        out[i] = mean
    return np.sum(out**2)


def ones_and_eye(x, n=3):
    m = np.eye(n) * 2.0
    m[0, :] = x
    v = np.ones(n)
    v[1] = x[1] ** 2
    return np.sum(m @ v)


@pytest.mark.parametrize("fn", [euler_into_zeros, running_mean, ones_and_eye])
def test_writes_into_fresh_arrays_are_differentiated(fn):
    x = np.array([0.7, -0.4, 1.3])[: 2 if fn is euler_into_zeros else 3]
    np.testing.assert_allclose(grad(fn)(x), central_difference(fn, [x], 0), rtol=1e-6, atol=1e-8)


def test_tracing_differentiates_writes_into_an_array_made_like_a_traced_one():
    # np.empty_like/zeros_like/ones_like of a traced array is a traced constant (as
    # numpy's dispatch gives a like-typed array): the writes keep their trace
    x = np.array([0.7, -0.4, 1.3])
    value, g = value_and_gradient(running_mean, x.copy())
    assert value == pytest.approx(running_mean(x.copy()), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(running_mean, [x], 0), rtol=1e-6)


X = np.arange(6.0).reshape(2, 3)


def plain_dot(W):
    return np.sum(np.tanh(X.dot(W)))


def test_tracing_hint_for_a_plain_arrays_dot_method_is_the_operator():
    with pytest.raises(AutodiffError) as raised:
        value_and_gradient(plain_dot, np.ones((3, 2)))
    assert raised.value.location.text.strip() == "return np.sum(np.tanh(X.dot(W)))"
    assert "X @ W or np.dot(X, W)" in raised.value.hint
    assert "np.asarray" not in raised.value.hint


def dropout(x, p=0.5):
    np.random.seed(0)
    mask = (np.random.rand(*x.shape) < p) / p
    return np.sum(np.tanh(x * mask) ** 2)


def reshape_to(x):
    return np.sum(np.tanh(x.reshape(*Y_LIKE.shape)) @ np.arange(2.0))


Y_LIKE = np.zeros((3, 2))


def scale(a, n, m):
    return a * n * m


def spread_into_helper(x):
    return np.sum(scale(x, *Y_LIKE.shape))


@pytest.mark.parametrize("fn", [dropout, reshape_to])
def test_a_shape_spread_into_a_call_is_differentiated(fn):
    x = np.linspace(-1.0, 1.2, 6)
    want = central_difference(fn, [x], 0)
    both = value_and_grad(fn)
    for _ in range(3):
        np.testing.assert_allclose(both(x)[1], want, rtol=1e-6, atol=1e-8)
    _, tangent = jvp(fn, (x,), (np.ones(6),))
    assert np.isclose(tangent, want.sum())


def test_a_shape_spread_into_a_call_that_carries_gradient_is_refused_at_the_star():
    with pytest.raises(AutodiffError, match="'\\*' unpacking into a call that carries") as raised:
        grad(spread_into_helper)(np.ones(6))
    location = raised.value.location
    assert location.text[location.column :].startswith("*Y_LIKE.shape")


def metrics_of(w):
    scores = np.tanh(POSITIONS[:, :2] @ w)
    return {"loss": np.sum(scores**2), "peak": np.max(scores)}


def reads_metrics(w):
    metrics = metrics_of(w)
    return metrics["loss"] + 0.5 * metrics_of(w)["peak"]


def reads_a_missing_key(w):
    return metrics_of(w)["accuracy"]


def test_a_helpers_dict_read_by_key_is_differentiated():
    w = np.array([0.4, -0.9])
    want = central_difference(reads_metrics, [w], 0)
    both = value_and_grad(reads_metrics)
    for _ in range(3):
        value, gradient = both(w)
        assert np.isclose(value, reads_metrics(w))
        np.testing.assert_allclose(gradient, want, rtol=1e-6, atol=1e-8)
    _, tangent = jvp(reads_metrics, (w,), (np.array([1.0, 2.0]),))
    assert np.isclose(tangent, want @ np.array([1.0, 2.0]))


def test_a_key_the_helper_does_not_return_is_refused_at_the_key():
    with pytest.raises(AutodiffError, match="returns a dict with the keys loss, peak") as raised:
        grad(reads_a_missing_key)(np.array([0.4, -0.9]))
    location = raised.value.location
    assert location.text[location.column :].startswith('"accuracy"')


LAYERS = {
    "W1": np.array([[0.5, -0.3], [0.8, 0.1]]),
    "b1": np.array([0.1, -0.2]),
    "W2": np.array([[0.7, 0.2], [-0.4, 0.9]]),
    "b2": np.array([0.0, 0.3]),
}


def keys_from_a_range(params, X):
    out = X
    for i in range(1, 3):
        out = np.tanh(out @ params["W%d" % i] + params[f"b{i}"])  # noqa: UP031 (course style)
    return np.sum(out**2) + 0.1 * sum(np.sum(params["W" + str(i)] ** 2) for i in (1, 2))


def keys_from_a_parameter(params, X, layers=2):
    out = X
    for i in range(1, layers + 1):
        out = np.tanh(out @ params[f"W{i}"])
    return np.sum(out)


def test_dict_keys_made_in_a_loop_over_a_written_range():
    X = POSITIONS[:, :2]
    gradient = grad(keys_from_a_range)(LAYERS, X)
    want = structured_central_difference(keys_from_a_range, [LAYERS, X], 0)
    for key, expected in zip(LAYERS, want, strict=True):
        np.testing.assert_allclose(gradient[key], expected, rtol=1e-6, atol=1e-8)


def test_dict_keys_from_an_int_argument_compile_once_per_value():
    X = POSITIONS[:, :2]
    compiled = value_and_grad(keys_from_a_parameter)
    for layers in (2, 1, 2):
        for _ in range(3):  # the third call runs the specialized pair
            value, gradient = compiled(LAYERS, X, layers)
        assert value == pytest.approx(keys_from_a_parameter(LAYERS, X, layers))
        want = structured_central_difference(keys_from_a_parameter, [LAYERS, X, layers], 0)
        for key, expected in zip(LAYERS, want, strict=True):
            np.testing.assert_allclose(gradient[key], expected, rtol=1e-6, atol=1e-8)


def keys_from_array_values(params, X):
    return np.sum(X @ params[f"W{int(np.argmax(X[0])) + 1}"])


def test_dict_keys_known_only_at_run_time_are_refused_with_what_compiles():
    with pytest.raises(AutodiffError, match="known only at run time") as raised:
        grad(keys_from_array_values)(LAYERS, POSITIONS[:, :2])
    assert "range(1, 3)" in raised.value.hint
    assert 'params[f"W{int(' in raised.value.location.text


def least_squares(A, b):
    coef, residuals, rank, sv = np.linalg.lstsq(A, b, rcond=None)
    return np.sum(coef**2) + np.sum(residuals) + 0.1 * np.sum(sv)


def rank_deficient_fit(A, b):
    doubled = np.concatenate([A, A[:, :1]], axis=1)
    return np.sum(np.linalg.lstsq(doubled, b)[0])


@pytest.mark.parametrize("b_shape", [(6,), (6, 2)])
def test_lstsq_in_both_modes_and_forward(b_shape):
    rng = np.random.default_rng(3)
    A, b = rng.normal(size=(6, 3)), rng.normal(size=b_shape)
    want = [central_difference(least_squares, [A, b], i) for i in (0, 1)]
    both = value_and_grad(least_squares, wrt=[0, 1])
    for _ in range(3):
        for got, expected in zip(both(A, b)[1], want, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    traced = value_and_gradient(least_squares, A, b, wrt=[0, 1])[1]
    for got, expected in zip(traced, want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    dA, db = rng.normal(size=A.shape), rng.normal(size=b.shape)
    _, tangent = jvp(least_squares, (A, b), (dA, db))
    assert np.isclose(tangent, np.sum(want[0] * dA) + np.sum(want[1] * db))


def test_lstsq_of_a_rank_deficient_matrix_is_refused_at_the_call():
    rng = np.random.default_rng(4)
    with pytest.raises(AutodiffError, match="rank 3 with 4 columns") as raised:
        grad(rank_deficient_fit)(rng.normal(size=(6, 3)), rng.normal(size=6))
    assert "np.linalg.lstsq(doubled, b)" in raised.value.location.text


def softplus(z):
    return np.logaddexp(0, z)


def helper_in_a_generator(x):
    act = lambda z: softplus(z) - 0.5 * z  # noqa: E731
    return sum(act(xi) for xi in x)


def loop_name_bound_before(x):
    xi = x[0]  # the comprehension's own xi is another variable (Python 3 scoping)
    square = lambda z: z * z  # noqa: E731
    return sum([square(xi) for xi in x]) + xi


def def_helper_in_a_list_comprehension(x):
    def total(v):
        return sum([t * t for t in v])

    return total(x) + np.sum(np.stack([total(x[i:]) for i in range(2)]))


def helper_in_a_dict_comprehension(x):
    scale = lambda z: 2.0 * z  # noqa: E731
    return sum({k: scale(v) for k, v in zip("ab", x, strict=False)}.values())


@pytest.mark.parametrize(
    "fn", [helper_in_a_generator, loop_name_bound_before, def_helper_in_a_list_comprehension]
)
def test_nested_helpers_called_in_comprehensions(fn):
    x = np.array([0.3, -1.1, 2.0])
    both = value_and_grad(fn)
    for _ in range(3):
        value, gradient = both(x)
        assert np.isclose(value, fn(x))  # the value as well as the gradient
        np.testing.assert_allclose(gradient, central_difference(fn, [x], 0), rtol=1e-6, atol=1e-8)


def test_a_nested_helper_in_a_dict_comprehension_is_refused_at_the_call():
    with pytest.raises(AutodiffError, match="called inside a dict\\s+comprehension") as raised:
        grad(helper_in_a_dict_comprehension)(np.array([0.3, -1.1]))
    location = raised.value.location
    assert location.text[location.column :].startswith("scale(v)")


def helper_in_a_loops_iterable(x):
    def rows(m):
        return m.reshape(2, -1)

    s = 0.0
    for r in rows(x):
        for v in rows(r * 2.0).reshape(-1):
            s = s + np.sin(v)
    return s


def test_a_nested_helper_in_a_loops_iterable():
    x = np.array([0.5, 1.5, -2.0, 0.3])
    np.testing.assert_allclose(
        grad(helper_in_a_loops_iterable)(x),
        central_difference(helper_in_a_loops_iterable, [x], 0),
        rtol=1e-6,
        atol=1e-8,
    )
