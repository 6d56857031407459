"""A module under a local name (``mod = np``, ``la = np.linalg``, ``m = math``) or as a
parameter's default (``def f(x, xp=np)``): its functions are the module's, with their
derivative rules: ``mod.sum(y)`` is numpy's ``sum``, not a method call on a value."""

import math

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, value_and_grad


def numpy_by_other_names(x):
    mod = np
    la = np.linalg
    again = mod  # an alias of the alias
    return la.norm(x) + again.sum(mod.exp(x) * x) + math.sin(1.0)


def math_by_another_name(x):
    m = math
    return np.sum(x * m.pi) + m.cos(x[0]) * m.exp(x[1])


def array_api_style(x):
    xp = np  # a local 'xp': also a name the generated backward uses
    return xp.sum(xp.tanh(x) * x)


@pytest.mark.parametrize("fn", [numpy_by_other_names, math_by_another_name, array_api_style])
def test_gradients_through_module_aliases_match_differences(fn):
    x = np.array([0.3, -1.0, 2.0])
    expected = central_difference(fn, [x], 0)
    both = value_and_grad(differentiable(fn))
    for _ in range(3):  # general, then specialized
        value, gradient = both(x)
        np.testing.assert_allclose(value, fn(x), rtol=1e-13)
        np.testing.assert_allclose(gradient, expected, rtol=1e-7, atol=1e-8)


def array_api_parameter(w, X, xp=np):  # the array-API habit: the module as a parameter
    return xp.sum(xp.tanh(X @ w) ** 2)


def test_a_module_parameter_is_the_module_passed():
    import array_api_strict as xs

    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(4, 3)), np.array([0.3, -0.2, 0.5])
    expected = central_difference(array_api_parameter, [w, X], 0)
    both = value_and_grad(differentiable(array_api_parameter))
    for _ in range(3):
        np.testing.assert_allclose(both(w, X)[1], expected, rtol=1e-7)
    np.testing.assert_allclose(both(w, X, np)[1], expected, rtol=1e-7)
    strict = value_and_grad(differentiable(array_api_parameter))(xs.asarray(w), xs.asarray(X), xs)[
        1
    ]
    assert type(strict) is type(xs.asarray(w))  # computed by the module passed in
    np.testing.assert_allclose(np.asarray(strict), expected, rtol=1e-7)


def test_a_module_passed_to_a_parameter_without_default_is_that_module():
    """A module is known at the call, as a function passed is: the compiled code is
    specialized on it (and compiled again for another module)."""

    def no_default(w, X, xp):
        return xp.sum(xp.tanh(X @ w) ** 2)

    X, w = np.linspace(-1.0, 1.0, 12).reshape(4, 3), np.array([0.3, -0.2, 0.5])
    vg = value_and_grad(differentiable(no_default))
    for _ in range(3):  # compiled, then the specialized pair
        value, gradient = vg(w, X, np)
        np.testing.assert_allclose(value, no_default(w, X, np), rtol=1e-12)
        expected = central_difference(lambda v: no_default(v, X, np), [w], 0)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
