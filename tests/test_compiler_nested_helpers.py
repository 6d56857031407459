"""Helpers defined inside the differentiated function (and lambdas), which the
compiler inlines where they are called, against central differences (or, for a
refusal, its located message and hint): arguments Python binds otherwise (``**opts``,
unknown keywords, extra arguments), defaults read where the helper is defined (the
closure-in-a-loop idiom), early returns and keyword-only parameters, helpers given a
function to call, helpers without a value, and a helper defined inside another.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

import autodiff_tutor as ad
from autodiff_tutor.errors import UnsupportedSyntaxError


def nested_double_star(x):
    def scaled(v, scale=1.0, shift=0.0):
        return scale * v + shift

    opts = {"scale": 2.0, "shift": 0.5}
    return np.sum(scaled(x, **opts) ** 2)


def nested_unknown_keyword(x):
    def scaled(v, scale=1.0):
        return scale * v

    return np.sum(scaled(x, scal=2.0) ** 2)


def lambda_extra_argument(x):
    act = lambda z, k=1.0: np.tanh(k * z)  # noqa: E731
    return np.sum(act(x, 3.0, 0.5))


def nested_star_args(x):
    def scaled(v, scale=1.0):
        return scale * v

    extra = (2.0,)
    return np.sum(scaled(x, *extra) ** 2)


@pytest.mark.parametrize(
    ("fn", "words", "caret"),
    [
        (nested_double_star, "'**' unpacking into the nested helper 'scaled'", "opts"),
        (nested_unknown_keyword, "scaled has no parameter 'scal'", "2.0"),
        (lambda_extra_argument, "too many arguments for", "0.5"),
        (nested_star_args, "'*' unpacking", "*extra"),
    ],
)
def test_nested_helper_arguments_python_binds_otherwise_are_refused(fn, words, caret):
    """Python binds ``**opts`` and ``*extra`` (and raises TypeError for the other two);
    the compiler refuses all four, located, rather than compute with the defaults."""
    x = np.array([1.0, -2.0, 0.5])
    with pytest.raises(UnsupportedSyntaxError, match=words.replace("*", r"\*")) as info:
        ad.value_and_grad(fn)(x)
    location = info.value.location
    assert location.filename == __file__
    assert location.text[location.column :].startswith(caret)


def default_read_at_the_def(x):
    k = 2.0
    w = x * 1.0

    def g(v, k=k, w=w):
        return k * v + w

    k = 5.0
    w = x * 3.0
    return np.sum(g(x) ** 2) + np.sum(w)


def defaults_in_a_loop(x):
    total = 0.0
    for k in range(3):
        f = lambda z, k=k: z * (k + 1)  # noqa: E731
        total = total + np.sum(f(x) ** 2)
    return total


def _matches_differences(fn):
    """``value_and_grad`` three times (compiled, then the fast path) against central
    differences at one point."""
    x = np.array([0.5, -1.0, 2.0])
    expected = central_difference(fn, [x], 0)
    both = ad.value_and_grad(fn)
    for _ in range(3):
        value, gradient = both(x)
        np.testing.assert_allclose(value, fn(x), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6)


def nested_early_return(x):
    def act(v, kind="relu"):
        if kind == "tanh":
            return np.tanh(v)
        return np.maximum(v, 0.1 * v)

    return np.sum(act(x) ** 2) + np.sum(act(x, kind="tanh"))


def nested_keyword_only(x):
    def pen(w, *, lam=0.1, p=2):
        return lam * np.sum(np.abs(w) ** p)

    return pen(x) + pen(x, lam=0.5, p=3)


@pytest.mark.parametrize("fn", [default_read_at_the_def, defaults_in_a_loop])
def test_nested_helper_defaults_are_read_where_defined(fn):
    _matches_differences(fn)


@pytest.mark.parametrize("fn", [nested_early_return, nested_keyword_only])
def test_nested_helpers_with_early_returns_or_keyword_only_parameters(fn):
    _matches_differences(fn)


def nested_helper_given_a_function(x):
    def bumped(a):
        return a * np.sin(a)

    def apply(fn, a):
        return fn(a) + 0.5 * fn(a * a)

    return np.sum(apply(bumped, x)) + np.sum(apply(np.tanh, x))


def test_a_nested_helper_calls_the_function_it_is_given():
    """``fn(a)`` inside a nested helper given ``bumped`` (or ``np.tanh``) by name calls
    that function, not a call of a local variable."""
    _matches_differences(nested_helper_given_a_function)


def nested_keyword_only_given_by_position(x):
    def pen(w, *, lam=0.1):
        return lam * np.sum(w**2)

    return pen(x, 0.5)


def test_a_keyword_only_parameter_given_by_position_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match="too many arguments for pen"):
        ad.grad(nested_keyword_only_given_by_position)(np.ones(2))


def nested_bare_return(x):
    out = []

    def push(v):
        out.append(v * 2.0)
        return

    push(x)
    return np.sum(out[0])


def nested_without_return(x):
    hist = []

    def log(v):
        hist.append(v)

    log(np.sum(x**2))
    return hist[0]


@pytest.mark.parametrize(
    ("fn", "caret"), [(nested_bare_return, "return"), (nested_without_return, "def log")]
)
def test_a_nested_helper_without_a_value_is_refused_with_a_hint(fn, caret):
    with pytest.raises(UnsupportedSyntaxError, match="must return a value") as info:
        ad.grad(fn)(np.array([0.5, -1.0]))
    assert info.value.location.text[info.value.location.column :].startswith(caret)
    assert "return v" in info.value.hint


def helper_inside_a_helper(x):
    def outer(v):
        def inner(u):
            return u * 3.0

        return inner(v) + 1.0

    return np.sum(outer(x) ** 2)


def helpers_side_by_side(x):
    def inner(u):
        return u * 3.0

    def outer(v):
        return inner(v) + 1.0

    return np.sum(outer(x) ** 2)


def test_a_helper_inside_a_helper_is_refused_and_the_hint_compiles():
    with pytest.raises(UnsupportedSyntaxError, match="inside the nested helper 'outer'") as info:
        ad.grad(helper_inside_a_helper)(np.array([0.5, -1.0]))
    assert info.value.location.text[info.value.location.column :].startswith("def inner")
    _matches_differences(helpers_side_by_side)
