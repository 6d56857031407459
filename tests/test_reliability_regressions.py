"""Minimal programs that were once wrong numbers, found by the fuzzer and the
bad-input corpus: views then in-place updates, casts to integers, the power rule at
zero, products over axes, empty means, second order through a helper, zero-trip loops,
a parameter named like a generated helper, memory and layouts.

Each must compile now (a refusal fails the test), give numpy's value, and a derivative
that agrees with central finite differences in float64 (and autograd where noted).
"""

from __future__ import annotations

import linecache
import warnings

import autograd
import numpy as np
import pytest
from oracles import autograd_gradient, central_difference, with_autograd_numpy

import autodiff_tutor as ad
from autodiff_tutor import tracing
from autodiff_tutor.compiler.emit import forget_source
from autodiff_tutor.errors import AutodiffError

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])


def _located_here(error: AutodiffError) -> bool:
    return error.location is not None and error.location.filename in (__file__, "<regression>")


def compiled_result(call):
    """``call()``'s result; a refusal fails the test, saying where it was located
    (every program here compiles: each was a wrong number once, and is right now)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return call()
        except AutodiffError as error:
            located = "located here" if _located_here(error) else "NOT located here"
            pytest.fail(f"refused ({located}), where it must compile:\n{error}")


def assert_right(mode: str, fn, x: np.ndarray) -> None:
    """``fn`` at ``x`` in ``mode`` (compiler, jvp or tracing) compiles, its value is
    numpy's and its derivative agrees with central differences."""
    expected_value = fn(x.copy())
    expected = central_difference(fn, [x.copy()], 0)
    direction = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    if mode == "jvp":
        expected = np.sum(expected * direction)
    calls = {
        "compiler": lambda: ad.value_and_grad(fn)(x.copy()),
        "tracing": lambda: tracing.value_and_gradient(fn, x.copy()),
        "jvp": lambda: ad.jvp(fn, (x.copy(),), (direction,)),
    }
    value, got = compiled_result(calls[mode])
    assert np.allclose(value, expected_value, rtol=1e-12), (value, expected_value)
    assert np.allclose(got, expected, atol=1e-6), (got, expected)


# -- views made by numpy functions are not seen as aliases ----------------------------


def transpose_view(x):
    t = x + 0.0
    v = np.transpose(t)
    t *= 2.0
    return np.sum(v * v)


def reshape_view(x):
    t = x + 0.0
    v = np.reshape(t, (-1,))
    t /= 2.0
    return np.sum(v * v)


def transpose_view_element_write(x):
    t = x + 0.0
    v = np.transpose(t)
    t[:, 0] = 1.5
    return np.sum(v * v)


def squeeze_view(x):
    t = x + 0.0
    v = np.squeeze(t[None])
    t *= 2.0
    return np.sum(v * v)


@pytest.mark.parametrize("mode", ["compiler", "jvp"])
@pytest.mark.parametrize(
    "fn", [transpose_view, reshape_view, squeeze_view, transpose_view_element_write]
)
def test_view_then_in_place_update(mode, fn):
    assert_right(mode, fn, X)


# -- casts to integers or booleans pass a gradient --------------------------------------


def cast_to_int(x):
    return np.sum(x * x.astype(int))


def floor_as_data(x):
    return np.sum(x * np.floor(x))


def mask_as_float(x):
    return np.sum(x * (x > 0).astype(float))


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
def test_cast_to_int_has_no_gradient(mode):
    assert_right(mode, cast_to_int, X * 3.0)


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
@pytest.mark.parametrize("fn", [floor_as_data, mask_as_float])
def test_other_integer_valued_data_is_already_right(mode, fn):
    assert_right(mode, fn, X * 3.0)


# -- the power rule at a zero base -------------------------------------------------------


def power_zero(x):
    return np.sum(np.maximum(x, 0.0) ** 0 * x)


def polynomial(x):
    p = 0.0 * x
    for k in range(3):
        p = p + x**k
    return np.sum(p)


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
@pytest.mark.parametrize("fn", [power_zero, polynomial])
def test_power_rule_at_zero(mode, fn):
    assert_right(mode, fn, np.array([0.0, -1.0, 2.0]))


# -- prod over a tuple of axes -----------------------------------------------------------


def prod_over_axes(x):
    return np.prod(x, axis=(0, 1))


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
def test_prod_over_a_tuple_of_axes(mode):
    assert_right(mode, prod_over_axes, X)


# -- np.mean of an empty array ------------------------------------------------------------


def mean_of(x):
    return np.mean(x)


@pytest.mark.parametrize("mode", ["compiler", "tracing"])
def test_mean_of_an_empty_array(mode):
    if mode == "compiler":
        value, got = compiled_result(lambda: ad.value_and_grad(mean_of)(np.zeros(0)))
    else:
        value, got = compiled_result(lambda: tracing.value_and_gradient(mean_of, np.zeros(0)))
    assert np.isnan(value) and got.shape == (0,)


# -- second order through a helper ------------------------------------------------------


def helper(a):
    return np.tanh(a) * a


def calls_helper(x):
    return np.sum(helper(x))


def test_second_order_through_a_helper():
    x = np.array([0.3, -0.8])
    v = np.array([1.0, 0.5])
    result = compiled_result(lambda: ad.vjp(ad.grad(calls_helper), x)[1](v))

    def gradient_along(t):
        return ad.grad(calls_helper)(x + t * v)

    expected = (gradient_along(1e-5) - gradient_along(-1e-5)) / 2e-5
    assert np.allclose(result[0], expected, atol=1e-6)


# -- a helper whose module is unknown ------------------------------------------------------


def test_helper_without_a_module_name():
    source = (
        "import numpy as np\n\ndef h(a):\n    return np.tanh(a)\n\n"
        "def f(x):\n    return np.sum(h(x))\n"
    )
    linecache.cache["<regression>"] = (len(source), None, source.splitlines(True), "<regression>")
    namespace: dict = {}
    exec(compile(source, "<regression>", "exec"), namespace)
    assert_right("compiler", namespace["f"], np.array([0.2, -0.4]))


# -- found by the bad-input corpus ----------------------------------------------------


def concatenate_flat(x):
    return np.sum(np.concatenate([x, x * x], axis=None))


@pytest.mark.parametrize("mode", ["compiler", "tracing"])
def test_concatenate_with_axis_none(mode):
    assert_right(mode, concatenate_flat, X)


def loop_variable_after_zero_trips(x):
    acc = 0.0
    n = 0
    for i in range(n):
        acc = acc + np.sum(x * i)
    return acc + np.sum(x)


def test_a_loop_that_runs_zero_times():
    assert_right("compiler", loop_variable_after_zero_trips, X)


def parameter_named_xp(x, xp):
    return np.sum(x * xp)


def test_a_parameter_named_xp_compiles_as_written():
    """A parameter named ``xp`` (a name the generated code also uses) keeps its name:
    the generated code calls its own array module by another."""
    value, grads = compiled_result(
        lambda: ad.value_and_grad(parameter_named_xp, wrt=[0, 1])(X, 2 * X)
    )
    assert np.isclose(value, np.sum(2 * X * X))
    assert np.allclose(grads[0], 2 * X) and np.allclose(grads[1], X)


# -- found by the long fuzz run: memory --------------------------------------------------


def _make_loss():
    def loss(x):
        return np.sum(x * x)

    return loss


def test_a_compiled_function_is_freed_with_its_function():
    import gc
    import weakref

    loss = _make_loss()
    ad.grad(loss)(np.ones(2))
    ref = weakref.ref(loss)
    del loss
    gc.collect()
    assert ref() is None


def test_generated_sources_leave_linecache_with_their_function():
    import gc
    import linecache

    before = set(linecache.cache)
    loss = _make_loss()
    ad.grad(loss)(np.ones(2))
    generated = [n for n in set(linecache.cache) - before if "autodiff_tutor generated" in n]
    assert generated
    del loss
    gc.collect()
    linecache.checkcache()  # no KeyError, whenever the collector took the source away
    ad.grad(_make_loss())(np.ones(2))  # gone at the latest at the next compile
    assert not set(generated) & set(linecache.cache)


def test_generated_sources_freed_inside_linecache_leave_it_at_the_next_compile():
    name = "<autodiff_tutor generated freed #0>"
    linecache.cache[name] = (0, None, [], name)
    # the collector may free a generated function while linecache.checkcache reads
    # its keys one by one: taking one away then would make that loop fail
    inside_linecache = compile("forget_source(name)", linecache.__file__, "exec")
    exec(inside_linecache, {"forget_source": forget_source, "name": name})
    assert name in linecache.cache

    def fresh(x):
        return np.sum(x * x)

    ad.grad(fresh)(np.ones(2))  # compiles: a safe point
    assert name not in linecache.cache


def prod_over_two_axes(x):
    v1 = np.prod(x, axis=(0, 1), keepdims=True)
    return np.sum(v1 * v1)


def prod_over_the_outer_axes(x):
    return np.sum(np.sin(np.prod(x, axis=(0, -1))))


def prod_over_one_axis(x):
    return np.sum(np.prod(x, axis=1) ** 2)


@pytest.mark.parametrize(
    ("fn", "shape"),
    [
        (prod_over_two_axes, (3, 4)),
        (prod_over_the_outer_axes, (2, 3, 2)),
        (prod_over_one_axis, (3, 4)),
    ],
)
def test_second_order_of_prod_over_axes(fn, shape):
    """Was a TypeError in generated code (fuzz N=20000, seed 3567): the tangent rule of
    the prod_others helper took one integer axis."""
    x = np.random.default_rng(0).uniform(0.5, 1.5, size=shape) * np.sign(
        np.random.default_rng(1).normal(size=shape)
    )
    direction = np.random.default_rng(2).normal(size=shape)
    _, got = ad.jvp(ad.grad(fn), (x,), (direction,))
    hessian = autograd.hessian(with_autograd_numpy(fn))(x)
    expected = np.tensordot(hessian, direction, axes=direction.ndim)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    _, pullback = ad.vjp(ad.grad(fn), x)  # reverse over reverse: the Hessian is symmetric
    np.testing.assert_allclose(pullback(direction)[0], expected, rtol=1e-9, atol=1e-12)
    h = 1e-6
    grad = ad.grad(fn)
    differences = (grad(x + h * direction) - grad(x - h * direction)) / (2 * h)
    np.testing.assert_allclose(got, differences, rtol=1e-5, atol=1e-6)


def traced_view_of_a_view_then_two_writes(x):
    v1 = x + 0.0
    v2 = np.transpose(v1)
    v1 += 1.0
    v3 = v2 * 1.0
    v3[2] = np.tanh(v2).reshape(-1)[:3]
    v4 = v3 + 0.0
    v5 = np.reshape(v4, (-1,))
    v4 /= 2.0
    return np.sum(v5)


def traced_view_twin(x):
    """The same value without writes (the reshape of the Fortran-ordered v4 copies)."""
    v2 = np.transpose(x + 1.0)
    row = np.tanh(v2).reshape(-1)[:3]
    return np.sum(np.concatenate([v2[:2], row[None], v2[3:]]))


def test_tracing_view_after_element_write_sees_a_later_update():
    """Was a wrong value (fuzz seed 17483): the element write's copy lost the array's
    Fortran layout, so a later reshape was a view where numpy's is a copy. The write's
    copy keeps the layout now (``assign_at``)."""
    x = np.random.default_rng(1).normal(size=(3, 4))
    fn = traced_view_of_a_view_then_two_writes
    value, gradient = tracing.value_and_gradient(fn, x.copy())
    assert np.isclose(value, fn(x.copy()), rtol=1e-12)
    assert np.isclose(traced_view_twin(x), fn(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(fn, [x], 0), atol=1e-6)
    np.testing.assert_allclose(gradient, autograd_gradient(traced_view_twin, [x], 0))
    assert_right("compiler", fn, x)
