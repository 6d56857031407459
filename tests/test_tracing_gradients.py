"""Tracing-mode gradients against oracles it does not control: central finite
differences (float64) and autograd; plus the seeds' Rosenbrock, the registry's
conventions at kinks, retain semantics and the shapes of results."""

import warnings

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor.errors import TracingError
from autodiff_tutor.rules.registry import lookup
from autodiff_tutor.tracing import (
    evaluate,
    extract_data,
    gradient,
    traced,
    value_and_gradient,
)

# --- a corpus of functions written as students write them (np.*, methods, operators) --


def elementwise(x):
    return np.sum(np.tanh(x) * np.exp(x) + np.sin(x) ** 2 / (1 + x * x) - np.cos(x))


def logs_roots(x):
    return np.sum(np.log(x) + np.sqrt(x) + np.log1p(x) + np.arctan(x))


def centered_squares(x):
    return np.sum((x - x.mean(axis=1, keepdims=True)) ** 2)


def mean_axis_then_dot(x, w):
    return np.mean(x, axis=0) @ w


def max_rows(x):
    return np.sum(np.max(x, axis=1) ** 2) + x.min()


def dense_layer(W, b, X):
    return np.sum(np.tanh(X @ W + b) ** 2)


def quadratic_form(x, A):
    return x @ A @ x


def dot_vectors(x, y):
    return np.dot(x, y) * np.dot(x, x)


def outer_broadcast(a, b):
    return np.sum((a * b + a / (b * b + 1)) ** 2)


def positive_mask(x):
    return np.sum(x[x > 0] ** 2) + np.sum(x * (x < 0))


def repeated_index(x, w):
    return np.sum(x[np.array([0, 0, 2])] * w)


def slices(x):
    return np.sum(x[1:, ::2] ** 3) + x[0, -1] * x[-1, 0]


def concatenate_pieces(x, y):
    return np.sum(np.concatenate([x, 2 * y, x * y]) ** 2)


def stack_columns(x, y, v):
    return np.sum(np.stack([x, y], axis=1) @ v)


def where_select(x):
    return np.sum(np.where(x > 0, x**2, -x))


def relu_squares(x):
    return np.sum(np.maximum(x, 0) ** 2 + np.minimum(x, 0.5))


def clip_inside(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2 + x)


def euclidean_norm(x):
    return np.linalg.norm(x) + np.linalg.norm(x * x, axis=0).sum()


def reshape_transpose(x, y):
    return np.sum((x.reshape(3, 2).T @ y) ** 2) + np.sum(np.transpose(x.reshape(2, 3)))


def broadcast_power(x, y):
    return np.sum(x / (y + 3) ** 1.5)


def absolute(x):
    return np.sum(np.abs(x) * x)


def product(x):
    return np.prod(x) + np.prod(x.reshape(2, 2), axis=0).sum()


def fan_out(x):
    y = x * x
    return np.sum(y * y + y - np.square(y))


def python_loop(x, W):
    h = x
    for _ in range(3):
        h = np.tanh(W @ h + h)
    return np.sum(h)


def squeeze_expand(x):
    return np.sum(np.squeeze(np.expand_dims(x, 0)) ** 2) + np.sum(x.squeeze())


def rng_points(rng, shapes, positive=False):
    values = [rng.uniform(-1.5, 1.5, size=s) for s in shapes]
    return [np.abs(v) + 0.5 for v in values] if positive else values


CORPUS = [
    (elementwise, [(5,)], False),
    (logs_roots, [(2, 3)], True),
    (centered_squares, [(3, 4)], False),
    (mean_axis_then_dot, [(4, 3), (3,)], False),
    (max_rows, [(3, 4)], False),
    (dense_layer, [(3, 2), (2,), (4, 3)], False),
    (quadratic_form, [(3,), (3, 3)], False),
    (dot_vectors, [(4,), (4,)], False),
    (outer_broadcast, [(3, 1), (1, 4)], False),
    (positive_mask, [(6,)], False),
    (repeated_index, [(4,), (3,)], False),
    (slices, [(3, 4)], False),
    (concatenate_pieces, [(3,), (3,)], False),
    (stack_columns, [(3,), (3,), (2,)], False),
    (where_select, [(6,)], False),
    (relu_squares, [(6,)], False),
    (clip_inside, [(6,)], False),
    (euclidean_norm, [(2, 3)], False),
    (reshape_transpose, [(6,), (3,)], False),
    (broadcast_power, [(2, 3), (3,)], True),
    (absolute, [(5,)], False),
    (product, [(4,)], False),
    (fan_out, [(4,)], False),
    (python_loop, [(3,), (3, 3)], False),
    (squeeze_expand, [(3,)], False),
]
IDS = [fn.__name__ for fn, _, _ in CORPUS]


@pytest.mark.parametrize(("fn", "shapes", "positive"), CORPUS, ids=IDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_gradients_match_finite_differences_and_autograd(fn, shapes, positive, seed):
    args = rng_points(np.random.default_rng(seed), shapes, positive)
    wrt = list(range(len(args)))
    value, grads = value_and_gradient(fn, *args, wrt=wrt)
    assert value == fn(*args)
    assert len(grads) == len(args)
    for i, g in enumerate(grads):
        assert np.shape(g) == np.shape(args[i])
        assert np.asarray(g).dtype == np.float64
        np.testing.assert_allclose(g, central_difference(fn, args, i), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g, autograd_gradient(fn, args, i), rtol=1e-10, atol=1e-12)


def test_rosenbrock_of_the_seeds():
    def rosenbrock(x):
        y = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
        return y, gradient(y, x)

    value, slope = evaluate(rosenbrock, traced([-1.0, 2.0]))
    assert extract_data(value) == 104.0
    assert slope.tolist() == [396.0, 200.0]


def test_value_and_gradient_with_one_position_or_a_name():
    value, g = value_and_gradient(elementwise, np.array([0.5, -0.25]))
    assert isinstance(g, np.ndarray) and g.shape == (2,)
    _, by_name = value_and_gradient(dot_vectors, np.ones(2), np.arange(2.0), wrt="y")
    assert by_name.tolist() == [2.0, 2.0]  # x * (x . x)
    _, one_tuple = value_and_gradient(dot_vectors, np.ones(2), np.arange(2.0), wrt=[1])
    assert isinstance(one_tuple, tuple) and len(one_tuple) == 1


# --- kinks follow the registry's documented conventions (same rules as the compiler) --


def _rule_gradients(op, *inputs):
    rule = lookup(op)
    special = (np,) if rule.uses_xp else ()
    return rule.vjp(np.ones(np.broadcast(*inputs).shape), *special, *inputs)


def test_relu_at_zero_follows_the_registry_rule():
    x = np.array([-1.0, 0.0, 2.0])
    g = evaluate(lambda t: gradient(np.sum(np.maximum(t, 0.0)), t), traced(x))
    expected = _rule_gradients("maximum", x, 0.0)[0]
    assert g.tolist() == expected.tolist()
    assert g[1] == 0.5  # the convention: a tie splits the gradient in halves


def test_maximum_ties_between_traced_values_split_the_gradient():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0])

    def f(a, b):
        return gradient(np.sum(np.maximum(a, b)), a, b)

    ga, gb = evaluate(f, traced(x), traced(y))
    ra, rb = _rule_gradients("maximum", x, y)
    assert ga.tolist() == ra.tolist() == [0.5, 0.0, 1.0]
    assert gb.tolist() == rb.tolist() == [0.5, 1.0, 0.0]


def test_max_reduction_ties_share_the_gradient():
    x = np.array([[3.0, 3.0, 1.0], [0.0, 2.0, 2.0]])
    g = evaluate(lambda t: gradient(np.sum(np.max(t, axis=1)), t), traced(x))
    rule = lookup("max")
    out = np.max(x, axis=1)
    expected = rule.vjp(np.ones(2), out, x, axis=1)
    assert g.tolist() == expected.tolist() == [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]


def test_clip_at_the_bounds_and_abs_at_zero_follow_the_rules():
    x = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    g = evaluate(lambda t: gradient(np.sum(np.clip(t, -0.5, 0.5)), t), traced(x))
    assert g.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]  # bounds are inclusive
    g_abs = evaluate(lambda t: gradient(np.sum(abs(t)), t), traced(x))
    assert g_abs.tolist() == [-1.0, -1.0, 0.0, 1.0, 1.0]


def test_power_of_a_negative_base_gives_no_warning():
    # the exponent's formula (log of the base) is never computed when only the base
    # is traced, as in the compiler's inlined code
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = evaluate(lambda t: gradient(np.sum(t**2), t), traced([-3.0, 0.0]))
    assert g.tolist() == [-6.0, 0.0]


# --- retain, several variables, structures -------------------------------------------


def test_retain_allows_several_gradients_of_one_trace():
    def f(x):
        y = x * x
        first = gradient(np.sum(y), x, retain=True)
        second = gradient(np.sum(y * x), x, retain=True)
        third = gradient(y[0], x)
        return first, second, third

    first, second, third = evaluate(f, traced([1.0, 2.0]))
    assert first.tolist() == [2.0, 4.0]
    assert second.tolist() == [3.0, 12.0]
    assert third.tolist() == [2.0, 0.0]


def test_without_retain_the_trace_is_released():
    def f(x):
        y = np.sum(x * x)
        gradient(y, x)
        with pytest.raises(TracingError, match="retain=True"):
            gradient(y, x)
        return True

    assert evaluate(f, traced([1.0]))


def test_gradients_of_a_dict_of_parameters_keep_the_structure():
    def loss(params, X):
        y = np.sum((X @ params["W"] + params["b"]) ** 2)
        return gradient(y, params)

    params = {"W": traced(np.ones((2, 3))), "b": traced(np.zeros(3))}
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    grads = evaluate(loss, params, X)
    assert set(grads) == {"W", "b"}
    expected_b = 2 * (X @ np.ones((2, 3))).sum(axis=0)
    assert grads["b"].tolist() == expected_b.tolist()
    assert grads["W"].tolist() == (2 * X.T @ (X @ np.ones((2, 3)))).tolist()


def test_gradient_with_respect_to_an_intermediate_value():
    def f(x):
        h = x * 3
        y = np.sum(h * h)
        return gradient(y, h, x)

    dh, dx = evaluate(f, traced([1.0, 2.0]))
    assert dh.tolist() == [6.0, 12.0]
    assert dx.tolist() == [18.0, 36.0]


def test_float32_stays_float32():
    x = np.array([0.5, 1.5], dtype=np.float32)
    g = evaluate(lambda t: gradient(np.sum(np.tanh(t) * 2), t), traced(x))
    assert g.dtype == np.float32


def test_gradient_arrays_are_writable_and_fresh():
    g = evaluate(lambda t: gradient(np.sum(t), t), traced(np.ones((2, 2))))
    g[0, 0] = 5.0  # a reduction's rule broadcasts; the result must not be a view
    assert g.tolist() == [[5.0, 1.0], [1.0, 1.0]]


def test_augmented_assignment_rebinds_and_gives_the_right_gradient():
    def f(x):
        y = x * 1.0
        y += 1.0
        y *= y
        return gradient(np.sum(y), x)

    x = traced([1.0, 2.0])
    assert evaluate(f, x).tolist() == [4.0, 6.0]
    assert extract_data(x).tolist() == [1.0, 2.0]  # the argument is untouched


def test_array_methods_are_listed_documented_and_differentiated():
    """``x.sum``, ``x.reshape``... are methods of the traced array a student can find
    (``dir``, tab completion, ``help``) and their gradients match central differences."""
    x = np.array([0.5, -1.0, 2.0])
    for name in ("sum", "mean", "max", "min", "prod", "reshape", "transpose", "clip", "copy"):
        assert name in dir(traced(x))
        assert f"x.{name}(...)" in getattr(traced(x), name).__doc__

    def f(x):
        return x.reshape(3, 1).sum() * x.prod() + x.clip(-0.5, 1.0).mean() + x.copy().max()

    _, g = value_and_gradient(f, x)
    np.testing.assert_allclose(g, central_difference(f, [x], 0), rtol=1e-6)
