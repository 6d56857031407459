"""Calls and their arguments, against central differences (or, for a refusal, its
located message and hint): a Python list of numbers among arrays in
``np.concatenate``, helpers with keyword-only parameters, ``enumerate(zip(...,
strict=True))``, scipy functions that convert their arguments (in tracing), ``**``
of a dict written in the function, the options-dict habit (``config = config or
{}``), ``scipy.stats.norm`` and ``t`` with and without ``loc`` and ``scale``, a call missing an
input, a method storing a cache on ``self``, and ``dict.get``.
"""

from __future__ import annotations

import types

import autograd
import autograd.numpy
import autograd.scipy.stats
import numpy as np
import pytest
from oracles import central_difference
from scipy.linalg import cho_factor
from scipy.special import logsumexp
from scipy.stats import norm, t

import autodiff_tutor as ad
from autodiff_tutor import tracing
from autodiff_tutor.errors import (
    ArgumentError,
    TracingError,
    TracingEscapeError,
    UnsupportedSyntaxError,
)


def padded_cable(h):
    ys = np.concatenate(([0.0], h, [0.0]))
    return np.sum(np.hypot(np.diff(ys), 0.5)) + ys @ ys


def joined_flat(h):
    both = np.concatenate([np.tanh(h).reshape(2, 2), [[1.0, 2.0]]], axis=None)
    return np.sum(both**3)


def joined_rows(h):
    both = np.concatenate([[[1.0, -1.0]], h.reshape(2, 2)], axis=0)
    return np.sum(np.sin(both) * np.arange(6.0).reshape(3, 2))


CONCATENATIONS = [padded_cable, joined_flat, joined_rows]
H = np.array([0.4, -0.3, 0.8, 0.1])


@pytest.mark.parametrize("fn", CONCATENATIONS)
def test_concatenate_with_a_list_of_numbers_compiler(fn):
    expected = central_difference(fn, [H], 0)
    both = ad.value_and_grad(fn)
    for _ in range(3):  # compiled, then the specialized fast path
        value, gradient = both(H)
        np.testing.assert_allclose(value, fn(H), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", CONCATENATIONS)
def test_concatenate_with_a_list_of_numbers_tracing(fn):
    value, gradient = tracing.value_and_gradient(fn, H)
    np.testing.assert_allclose(value, fn(H), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(fn, [H], 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", CONCATENATIONS)
def test_concatenate_with_a_list_of_numbers_jvp(fn):
    direction = np.array([1.0, -2.0, 0.5, 0.25])
    _, tangent = ad.jvp(fn, (H,), (direction,))
    expected = central_difference(fn, [H], 0) @ direction
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)


def penalty(w, *, lam=0.1, power=2):
    return lam * np.sum(np.abs(w) ** power)


def keyword_only_calls(w, lam):
    return penalty(w, lam=lam) + penalty(w, power=4, lam=0.01) + penalty(w)


W, LAM = np.array([0.7, -1.3, 0.2]), np.array(0.3)


def test_helper_with_keyword_only_parameters_compiler():
    expected = [central_difference(keyword_only_calls, [W, LAM], k) for k in (0, 1)]
    both = ad.value_and_grad(keyword_only_calls, wrt=("w", "lam"))
    for _ in range(3):
        value, (d_w, d_lam) = both(W, LAM)
        np.testing.assert_allclose(value, keyword_only_calls(W, LAM), rtol=1e-12)
        np.testing.assert_allclose(d_w, expected[0], rtol=1e-6)
        np.testing.assert_allclose(d_lam, expected[1], rtol=1e-6)


def test_helper_with_keyword_only_parameters_jvp():
    direction = np.array([1.0, 0.5, -1.0])
    _, tangent = ad.jvp(keyword_only_calls, (W, LAM), (direction, np.array(2.0)))
    expected = central_difference(keyword_only_calls, [W, LAM], 0) @ direction
    expected += 2.0 * central_difference(keyword_only_calls, [W, LAM], 1)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)


def scaled_sum(x, *, s):
    return np.sum(x * s)


def test_a_keyword_only_parameter_given_by_position_is_refused_at_every_call():
    """``f(x, *, s)`` called as ``f(x, 2.0)`` is refused as Python refuses it, by
    ``value_and_grad``, ``grad`` and ``jvp``, also after calls that bound ``s`` by
    keyword (which the cached path must not skip); by keyword it is differentiated."""
    x = np.array([1.0, -2.0])
    both = ad.value_and_grad(scaled_sum)
    for _ in range(2):
        value, d_x = both(x, s=2.0)
        np.testing.assert_allclose(d_x, central_difference(lambda x: scaled_sum(x, s=2.0), [x], 0))
    calls = [
        lambda: both(x, 2.0),
        lambda: ad.grad(scaled_sum)(x, 2.0),
        lambda: ad.jvp(scaled_sum, (x, 2.0), (np.ones(2), None)),
    ]
    for call in calls:
        with pytest.raises(ArgumentError, match="too many positional arguments"):
            call()


def enumerate_zip_strict(a, b):
    total = 0.0
    for i, (u, v) in enumerate(zip(a, b, strict=True)):
        total = total + (i + 1) * u * np.sin(v)
    return total


def test_enumerate_of_zip_strict_compiler():
    a, b = np.array([0.3, 0.5, -0.2]), np.array([1.0, 2.0, 0.5])
    gradients = ad.grad(enumerate_zip_strict, wrt=("a", "b"))(a, b)
    for k, gradient in enumerate(gradients):
        expected = central_difference(enumerate_zip_strict, [a, b], k)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="different lengths"):
        ad.grad(enumerate_zip_strict, wrt=("a", "b"))(a, b[:2])


def log_normalizer(z):
    return logsumexp(z) + np.sum(z**2)


def cholesky_log_det(a):
    c, _ = cho_factor(a @ a.T + np.eye(2))
    return np.sum(np.log(np.diag(c)))


def test_tracing_follows_a_scipy_function_with_a_rule():
    """logsumexp written in the traced function goes to its rule (scipy's own code would
    convert the traced array with np.asarray)."""
    z = np.array([0.1, 0.5])
    _, gradient = tracing.value_and_gradient(log_normalizer, z)
    np.testing.assert_allclose(gradient, central_difference(log_normalizer, [z], 0), rtol=1e-6)


def test_tracing_refuses_a_scipy_function_without_a_rule_at_the_call():
    with pytest.raises(TracingError) as info:
        tracing.value_and_gradient(cholesky_log_det, np.eye(2))
    error = info.value
    assert error.message.startswith("scipy.linalg.cho_factor has no derivative rule")
    assert error.location.filename == __file__
    assert error.location.text[error.location.column :].startswith("cho_factor(")


class Normalizer:
    """A method: code tracing does not reach (scipy there is scipy's own)."""

    def log_normalizer(self, z):
        return logsumexp(z) + np.sum(z**2)

    def converts(self, x):
        return np.sum(np.asarray(x) ** 2)


def test_tracing_names_the_scipy_function_that_converts_where_it_does_not_reach():
    with pytest.raises(TracingEscapeError) as info:
        tracing.value_and_gradient(lambda z: Normalizer().log_normalizer(z), np.array([0.1, 0.5]))
    error = info.value
    assert error.message.startswith("logsumexp (scipy's: it converts its arguments")
    assert error.location.filename == __file__
    assert error.location.text[error.location.column :].startswith("logsumexp(")
    assert "write logsumexp with numpy functions" in error.hint
    assert "the compiler (@differentiable) has a rule" in error.hint
    assert "np.array(x) and np.asarray(x)" not in error.hint


def test_tracing_conversion_written_by_the_user_keeps_its_hint():
    with pytest.raises(TracingEscapeError) as info:
        tracing.value_and_gradient(lambda x: Normalizer().converts(x), np.ones(2))
    assert info.value.message.startswith("np.asarray() (or np.array()")
    assert "x.copy()" in info.value.hint


def scaled_shifted(v, scale=1.0, shift=0.0):
    return scale * v + shift


def module_helper_double_star(x, y):
    opts = {"scale": y[0], "shift": y[1]}
    total = np.sum(scaled_shifted(x, **opts) ** 2)
    return total + np.sum(np.sum(np.outer(x, y), **{"axis": 0, "keepdims": True}) ** 2)


def test_double_star_of_a_dict_written_here_is_spread_into_keywords():
    x, y = np.array([1.0, -2.0, 0.5]), np.array([2.0, 0.5])
    both = ad.value_and_grad(module_helper_double_star, wrt=("x", "y"))
    for _ in range(3):
        value, gradients = both(x, y)
        np.testing.assert_allclose(value, module_helper_double_star(x, y), rtol=1e-12)
        for k, gradient in enumerate(gradients):
            expected = central_difference(module_helper_double_star, [x, y], k)
            np.testing.assert_allclose(gradient, expected, rtol=1e-6)


def options_or_empty(x, config=None):
    config = config or {}
    return config.get("scale", 2.0) * np.sum(x**2)


def options_if_none(x, config=None):
    if config is None:
        config = {}
    return config.get("scale", 2.0) * np.sum(x**2)


def options_dict_default(x, config={}):  # noqa: B006 - the habit the hint offers
    return config.get("scale", 2.0) * np.sum(x**2)


@pytest.mark.parametrize("fn", [options_or_empty, options_if_none])
def test_options_dict_defaulting_to_none_hints_what_compiles(fn):
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.value_and_grad(fn)(np.array([1.0, -2.0]))
    assert "def f(x, config={})" in info.value.hint
    assert info.value.location.filename == __file__
    x = np.array([1.0, -2.0])  # the hint's own advice compiles, caller's dict or not
    for options in ({}, {"scale": 3.0}):
        value, gradient = ad.value_and_grad(options_dict_default)(x, options)
        np.testing.assert_allclose(value, options_dict_default(x, options))
        np.testing.assert_allclose(
            gradient, central_difference(options_dict_default, [x, options], 0)
        )


def standard_normal_calls(x):
    return np.sum(norm.cdf(x) * norm.pdf(2.0 * x)) + np.sum(norm.logpdf(x))


def normal_cdf_with_loc_scale(x):
    return np.sum(norm.cdf(x[:2], x[2], np.exp(x[3])) ** 2)


@pytest.mark.parametrize("fn", [standard_normal_calls, normal_cdf_with_loc_scale])
def test_scipy_normal_with_and_without_loc_and_scale(fn):
    x = np.array([0.3, -1.1, 0.4, -0.2])
    expected = central_difference(fn, [x], 0)
    both = ad.value_and_grad(fn)
    for _ in range(3):
        value, gradient = both(x)
        np.testing.assert_allclose(value, fn(x), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)
    direction = np.array([1.0, -0.5, 2.0, 0.25])
    _, tangent = ad.jvp(fn, (x,), (direction,))
    np.testing.assert_allclose(tangent, expected @ direction, rtol=1e-6)


def student_t_standard(x):
    return np.sum(t.logpdf(x[:3], 3.0))  # scipy's loc=0, scale=1, left out


def student_t_with_loc_scale(x):
    return np.sum(t.logpdf(x[:2], 3.0, x[2], np.exp(x[3])))


@pytest.mark.parametrize("fn", [student_t_standard, student_t_with_loc_scale])
def test_student_t_with_and_without_loc_and_scale_in_both_modes(fn):
    """``t.logpdf(x, df)`` takes scipy's ``loc=0, scale=1`` (the rule's defaults) in
    the compiler and in tracing, against central differences and autograd."""
    x = np.array([0.3, -1.1, 0.4, -0.2])
    expected = central_difference(fn, [x], 0)
    np.testing.assert_allclose(autograd.grad(_with_autograd_t(fn))(x), expected, rtol=1e-6)
    both = ad.value_and_grad(fn)
    for _ in range(3):
        value, gradient = both(x)
        np.testing.assert_allclose(value, fn(x), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)
    value, gradient = tracing.value_and_gradient(fn, x)
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)


def _with_autograd_t(fn):
    """``fn`` with autograd's numpy and ``t`` in its globals."""
    names = {**fn.__globals__, "np": autograd.numpy, "t": autograd.scipy.stats.t}
    return types.FunctionType(fn.__code__, names)


def student_t_without_df(x):
    return np.sum(t.logpdf(x))


def test_a_call_missing_an_input_says_how_to_write_it():
    with pytest.raises(UnsupportedSyntaxError, match="is missing df") as info:
        ad.grad(student_t_without_df)(np.array([0.3, -1.1]))
    assert "t.logpdf(x, df, loc, scale)" in info.value.hint


class CachingModel:
    def __init__(self):
        self.W = np.array([[0.5, -0.3], [0.2, 0.8]])

    def loss(self, X):
        h = np.tanh(X @ self.W)
        self.cache = h
        return np.sum(h**2)


def test_a_method_storing_a_cache_on_self_gets_a_true_hint():
    model = CachingModel()
    message = "the value written into self.cache must not depend on"
    with pytest.raises(UnsupportedSyntaxError, match=message) as info:
        ad.value_and_grad(model.loss, wrt="self.W")(np.ones((3, 2)))
    assert "local variable" in info.value.hint and "list or dict" not in info.value.hint
    assert info.value.location.text[info.value.location.column :].startswith("self.cache")


def dict_get_with_defaults(x):
    d = {"a": x * 2.0}
    b = d.get("b", x**2)
    c = d.get("c")
    return np.sum(d.get("a") * b) + (0.0 if c is None else np.sum(c))


def test_get_of_a_dict_built_here():
    x = np.array([0.5, -1.0, 2.0])
    value, gradient = ad.value_and_grad(dict_get_with_defaults)(x)
    np.testing.assert_allclose(value, dict_get_with_defaults(x), rtol=1e-12)
    expected = central_difference(dict_get_with_defaults, [x], 0)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6)
