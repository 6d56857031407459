"""A user's global or closure variable named like a runtime helper of the generated
code (``size``, ``like``, ``zeros_like``, ``unbroadcast``, ``memory``, ``xp``).

The user's name wins over the generated code's helper: ``size = 3.0`` is read as 3.0
(not our helper, which would raise a TypeError blamed on the user), and a user's own
``zeros_like`` is called (not ours, which would give a wrong gradient of 0). Each
gradient here is checked against central differences; names rebound after compiling are
seen, as in Python.
"""

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, grad, hessian, jvp, value_and_grad, vjp
from autodiff_tutor.errors import AutodiffError

size = 3.0  # a notebook constant with a helper's name


def zeros_like(x):  # a user's function with a helper's name (not numpy's)
    return x * 3.0


def unbroadcast(x, y):
    return x * y


memory = 0.5  # a name the generated backward uses for its own parameter
xp = np  # 'import numpy as xp', as array-API style code does


def scaled(x):
    return np.sum(x * size * x)


def own_zeros_like(x):
    return np.sum(zeros_like(x) * x) + np.sum(unbroadcast(x, 2.0))


def loop_with_own_names(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s * memory + xp.sin(x[i]) * size
    return s


def _with_numpys():
    from numpy import ones_like, zeros_like  # numpy's own, in the function's closure

    def with_numpys(x):
        return np.sum((zeros_like(x) + ones_like(x) * 2.0) * x * x)

    return with_numpys


with_numpys = _with_numpys()


X = np.array([0.3, -1.2, 2.0, 0.7])


@pytest.mark.parametrize("fn", [scaled, own_zeros_like, loop_with_own_names, with_numpys])
def test_gradients_match_differences(fn):
    f = differentiable(fn)
    expected = central_difference(fn, [X], 0)
    np.testing.assert_allclose(grad(f)(X), expected, rtol=1e-7, atol=1e-8)
    both = value_and_grad(f)
    for _ in range(3):  # the general call, then the pair specialized on shapes
        value, gradient = both(X)
        np.testing.assert_allclose(value, fn(X), rtol=1e-13)
        np.testing.assert_allclose(gradient, expected, rtol=1e-7, atol=1e-8)


def test_a_global_rebound_after_compiling_is_seen():
    global size
    f = differentiable(scaled)
    both = value_and_grad(f)
    both(X), both(X)
    try:
        size = 5.0
        value, gradient = both(X)
        np.testing.assert_allclose(value, np.sum(5.0 * X * X))
        np.testing.assert_allclose(gradient, 10.0 * X)
    finally:
        size = 3.0


def test_a_closure_variable_with_a_helpers_name_is_read_live():
    like = 2.0

    def g(x):
        return np.sum(x * like * x)

    f = value_and_grad(differentiable(g))
    np.testing.assert_allclose(f(X)[1], 4.0 * X)
    like = 4.0  # noqa: F841 - the closure cell, read by g and by the generated code
    np.testing.assert_allclose(f(X)[1], 8.0 * X)


def test_the_shown_code_reads_the_users_names():
    f = differentiable(own_zeros_like)
    grad(f)(X)
    shown = f.forward_source() + f.backward_source()
    assert "__user" not in shown
    assert "differentiable(zeros_like)" in shown  # the user's function, by its name
    assert "unbroadcast_(" in shown  # the helper, renamed where the user's name is taken


def cubic(x):
    return np.sum(x * x * x * size)


def test_forward_mode_and_second_derivatives():
    f = differentiable(scaled)
    value, tangent = jvp(f, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(value, np.sum(size * X * X))
    np.testing.assert_allclose(tangent, np.sum(2 * size * X))
    first = grad(cubic)
    v = np.array([1.0, -0.5, 0.25, 2.0])
    _, hvp = jvp(first, (X,), (v,))  # forward over reverse: H v = 6 size x v
    np.testing.assert_allclose(hvp, 6 * size * X * v)
    _, pullback = vjp(first, X, wrt=[0])  # reverse over reverse
    np.testing.assert_allclose(pullback(v)[0], 6 * size * X * v)


def test_an_undefined_name_fails_as_in_python():
    def h(x):
        return np.sum(x * at)  # noqa: F821 - 'at' is a helper's name, undefined here

    with pytest.raises(NameError):
        h(X)
    with pytest.raises(AutodiffError) as caught:
        grad(differentiable(h))(X)
    assert "NameError" in str(caught.value)
    assert "x * at" in str(caught.value)  # located at the user's line


# -- the function's own variables with those names -----------------------------------


def own_variables(x):
    like = np.sum(x * x)
    stack = []
    for i in range(x.shape[0]):
        stack.append(np.sin(x[i]) * like)
    memory = np.stack(stack)
    size_2 = 2.0  # a name the renamed versions of 'size' could take
    size = x * size_2
    like = like * size_2 + np.sum(memory) + np.sum(size * size)
    return like


def own_module_alias(x):
    xp = np
    scale = lambda at: at * 2.0  # noqa: E731 - a lambda's parameter with a helper's name
    return xp.sum(xp.tanh(scale(x)) * x)


@pytest.mark.parametrize("fn", [own_variables, own_module_alias])
def test_variables_named_like_helpers(fn):
    f = differentiable(fn)
    expected = central_difference(fn, [X], 0)
    both = value_and_grad(f)
    for _ in range(3):
        value, gradient = both(X)
        np.testing.assert_allclose(value, fn(X), rtol=1e-13)
        np.testing.assert_allclose(gradient, expected, rtol=1e-7, atol=1e-8)
    shown = f.forward_source() + f.backward_source()
    assert "__user" not in shown


def check_in_place(a, operator, b):  # a user's function named like the in-place check
    return a * 0.5


def own_check_in_place(x):
    y = np.arange(4) * 1  # integers: the forward checks the update below
    y += 1
    z = x * y + check_in_place(x, "+=", x)
    return np.sum(z**2)


def variable_named_check_in_place(x):
    check_in_place = np.arange(4) * 1
    check_in_place += 1
    return np.sum((x * check_in_place) ** 2)


def test_the_in_place_check_is_renamed_beside_a_users_name_and_still_checks():
    """The generated code's own check is renamed beside the user's function or
    variable, runs, and is recognized as the check again when the gradient is
    differentiated a second time."""
    f = differentiable(own_check_in_place)
    assert "check_in_place_(" in f.forward_source()
    expected = central_difference(own_check_in_place, [X], 0)
    np.testing.assert_allclose(grad(f)(X), expected, rtol=1e-7, atol=1e-8)
    weights = (np.arange(4) + 1.0) ** 2
    np.testing.assert_allclose(hessian(variable_named_check_in_place)(X), np.diag(2 * weights))

    def refused(x):
        check_in_place = np.arange(4) * 1
        check_in_place += x
        return np.sum(check_in_place)

    with pytest.raises(AutodiffError, match="UFuncTypeError"):
        grad(refused)(X)


scatter = 1.5  # a global named like a helper, read by code the compiler inlines


def scaled_by_scatter(x, *args):
    return np.sum(x * scatter)


def passes_its_extras_on(x, *args):
    return scaled_by_scatter(x, *args)


def test_a_helpers_name_read_by_inlined_code_is_the_users():
    """The helper is inlined (its *args bound per count) after the first renaming: its
    names are renamed too (jvp read the runtime helper, an InternalError)."""
    x = np.array([0.3, 0.5])
    expected = central_difference(lambda v: passes_its_extras_on(v, 0.1), [x], 0)
    np.testing.assert_allclose(grad(passes_its_extras_on)(x, 0.1), expected, rtol=1e-6)
    _, tangent = jvp(passes_its_extras_on, (x, 0.1), (np.ones(2), None))
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)
