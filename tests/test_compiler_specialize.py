"""Specialization on argument shapes and dtypes (stage 6b) and the simplify pass (6c).

``value_and_grad`` runs, from the second call with the same argument shapes and
dtypes, a pair specialized on them: ``unbroadcast`` calls that were no-ops are gone and
the backward is simplified. Checked here against central finite differences (an
oracle the compiler does not control): the specialized gradients, the fallback when
the shapes change, and that what ``show(specialized=True)`` prints is that code.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, grad, value_and_grad
from autodiff_tutor.compiler.pipeline import compile_derivative
from autodiff_tutor.compiler.specialize.probe import guard_key
from autodiff_tutor.compiler.specialized import compile_specialized, specialized_pair


def rosenbrock(x):
    a = x[1:] - x[:-1] ** 2
    b = 1.0 - x[:-1]
    return np.sum(100.0 * a * a + b * b)


def affine(W, b, x):
    return np.sum(np.tanh(x @ W + b) ** 2)


def horner(coefficients, x):
    value = 0.0
    for c in coefficients:
        value = value * x + c
    return np.sum(value)


def masked(x):
    return np.sum(x[x > 0] ** 2)


def _check(fn, args, wrt, gradients):
    for position, g in zip(wrt, gradients, strict=True):
        expected = central_difference(fn, args, position)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "fn, make, wrt",
    [
        (rosenbrock, lambda r, n: (r.uniform(-1.5, 1.5, n),), [0]),
        (
            affine,
            lambda r, n: (r.normal(size=(3, 4)), r.normal(size=4), r.normal(size=(n, 3))),
            [0, 1],
        ),
        (horner, lambda r, n: (r.uniform(-1, 1, 5), r.uniform(-1, 1, n)), [0, 1]),
    ],
)
def test_specialized_gradients_and_fallback_on_a_new_shape(fn, make, wrt):
    rng = np.random.default_rng(0)
    both = value_and_grad(fn, wrt=wrt)
    compiled = differentiable(fn)
    for n in (6, 6, 6, 9, 9, 6):  # first calls, the specialized pair, a new shape, back
        args = make(rng, n)
        value, gradients = both(*args)
        assert np.isclose(value, fn(*args))
        _check(fn, args, wrt, gradients)
    derivative = compiled.derivative(wrt)
    assert [k for k, pair in derivative.specializations.items() if pair is not None], (
        "the calls above ran no specialized pair"
    )
    for position, g in zip(wrt, gradients, strict=True):  # and against autograd
        np.testing.assert_allclose(g, autograd_gradient(fn, args, position), rtol=1e-10)


def test_specialized_show_is_the_shorter_code_that_runs():
    compiled = differentiable(rosenbrock)
    both = value_and_grad(compiled)
    x = np.linspace(-1.0, 1.0, 10)
    both(x), both(x)
    texts = compiled.specialized_sources()
    (text,) = [t for t in texts if t.startswith("# specialized for x: float64[10]\n")]
    backward = text.split("def rosenbrock_backward", 1)[1]
    general = compiled.backward_source()
    assert "unbroadcast" in general and "unbroadcast" not in backward
    assert backward.count("\n") < general.count("\n")
    for line in backward.splitlines()[2:-1]:  # every statement points at the user's line
        assert "# line " in line, line
    pair = compiled.derivative(0).specializations[((x.shape, x.dtype),)]
    out, memory = pair.forward(x)
    (dx,) = pair.backward(np.float64(1.0), memory)
    _check(rosenbrock, (x,), [0], [dx])


def test_show_prints_the_specialized_pair_once_arguments_were_seen(capsys):
    """Before any call ``show()`` prints the general pair; after ``value_and_grad`` met
    arguments it prints the pair that runs for them, headed by what it assumes, and
    ``show(specialized=False)`` still gives the general pair."""

    def chain(x):  # a function of this test alone: no other test's calls specialized it
        a = x[1:] - x[:-1] ** 2
        return np.sum(100.0 * a * a)

    compiled = differentiable(chain)
    compiled.show()
    before = capsys.readouterr().out
    assert before.strip() == compiled.source().strip()
    both = value_and_grad(compiled)
    x = np.linspace(-1.0, 1.0, 10)
    both(x), both(x)
    compiled.show()
    after = capsys.readouterr().out
    (specialized,) = compiled.specialized_sources()
    assert after.startswith("# specialized for x: float64[10]\n" + specialized.split("\n", 1)[1])
    assert "unbroadcast" not in after and "show(specialized=False)" in after
    compiled.show(specialized=False)
    assert capsys.readouterr().out == before


class _Scaled:
    def __init__(self):
        self.scale, self.W = 2.0, np.array([[1.0, 0.5, 0.0], [0.0, 1.0, -0.5], [0.2, 0.0, 1.0]])

    def loss(self, w, x):
        return np.sum((self.scale * (x @ self.W) * w) ** 2)


def test_calls_through_an_object_or_a_dict_run_the_specialized_pair(capsys):
    """A method reading its object's attributes, and a function taking a dict of
    arrays, are compiled as functions of the flattened values; from the second call
    those run the pair specialized on their shapes, which ``show()`` prints; gradients
    are checked against central
    differences, and an attribute changed between calls is read at the next call."""
    model = _Scaled()
    both = value_and_grad(model.loss)
    w, x = np.array([1.0, -0.5, 2.0]), np.array([0.3, 1.0, -1.2])
    for scale in (2.0, 2.0, 3.0):
        model.scale = scale
        _, dw = both(w, x)
        np.testing.assert_allclose(dw, central_difference(model.loss, (w, x), 0), rtol=1e-7)
    differentiable(model.loss).show()
    assert capsys.readouterr().out.startswith("# specialized for self_scale: float, self_W:")

    def loss(params, x):
        return np.sum((params["a"] * x) ** 2 + params["b"] * x)

    params = {"a": np.array([1.0, 2.0, -1.0]), "b": np.array([0.5, 0.0, 1.0])}
    by_dict = value_and_grad(loss)
    for _ in range(3):
        _, grads = by_dict(params, x)
    np.testing.assert_allclose(grads["a"], 2 * params["a"] * x * x)
    np.testing.assert_allclose(grads["b"], x)
    differentiable(loss).show()
    assert capsys.readouterr().out.startswith("# specialized for params_a: float64[3]")


def test_float32_and_float64_are_specialized_apart():
    both = value_and_grad(affine, wrt=[0, 1])
    rng = np.random.default_rng(1)
    W, b, x = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(5, 3))
    for dtype in (np.float64, np.float32, np.float32, np.float64):
        args = (W.astype(dtype), b.astype(dtype), x.astype(dtype))
        _, (dW, db) = both(*args)
        assert dW.dtype == dtype and db.dtype == dtype
        expected = autograd_gradient(affine, tuple(a.astype(np.float64) for a in args), 1)
        np.testing.assert_allclose(db, expected, rtol=1e-4 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("fn", [masked])  # branches: tests/test_specialize_regions.py
def test_data_dependent_shapes_are_not_specialized(fn):
    derivative = differentiable(fn).derivative(0)
    assert compile_specialized(derivative, (np.array([1.0, -2.0, 3.0]),)) is None
    g = grad(fn)
    for x in (np.array([1.0, -2.0, 3.0]), np.array([-1.0, -2.0, 2.5]), np.array([-5.0, 1.0, 1.0])):
        for _ in range(2):
            _check(fn, (x,), [0], [g(x)])


def test_large_arguments_free_dead_values_with_the_same_gradients():
    x = np.random.default_rng(2).uniform(-1.5, 1.5, 70_000)  # past RELEASE_FROM
    both = value_and_grad(rosenbrock)
    for _ in range(3):
        value, dx = both(x)
    pair = differentiable(rosenbrock).derivative(0).specializations[((x.shape, x.dtype),)]
    assert "del " in pair.forward_source and "del " not in pair.backward_source
    np.testing.assert_allclose(dx, autograd_gradient(rosenbrock, (x,), 0), rtol=1e-12)
    assert np.isclose(value, rosenbrock(x), rtol=1e-14)


def reshaped(x, w, shape):
    return np.sum(np.reshape(x, shape) * w)


def test_an_integer_array_that_decides_shapes_is_not_specialized_on():
    x, w = np.arange(1.0, 7.0), np.array([1.0, 2.0, 3.0])
    both = value_and_grad(reshaped, wrt=[0, 1])
    for shape in ([2, 3], [2, 3], [6, 1], [6, 1], [2, 3]):
        fixed = np.array(shape)
        _, gradients = both(x, w, fixed)
        _check(functools.partial(reshaped, shape=fixed), (x, w), [0, 1], gradients)
    derivative = differentiable(reshaped).derivative([0, 1])
    assert all(pair is None for pair in derivative.specializations.values())


def _corpora():
    from corpus_flow import load_all
    from corpus_straight import CORPUS

    straight = [(fn, sample, None) for fn, sample in CORPUS]
    flow = [(p.fn, p.sample, list(p.wrt)) for p in load_all() if not p.bug]
    return straight + flow


def test_every_corpus_program_gives_the_same_gradients_when_specialized():
    """The general pair is checked against finite differences and autograd by the
    corpus tests; here every program's specialized pair (second call, same shapes)
    must agree with it to rounding, and a call with other inputs as well."""
    specialized = 0
    for fn, sample, wrt in _corpora():
        args = sample(np.random.default_rng(3))
        wrt = wrt if wrt is not None else list(range(len(args)))
        both = value_and_grad(fn, wrt=wrt)
        try:
            first_value, first = both(*args)
        except Exception:  # noqa: BLE001 - refused programs are the corpus tests' business
            continue
        value, gradients = both(*args)
        np.testing.assert_allclose(value, first_value, rtol=1e-12, err_msg=fn.__name__)
        for g, expected in zip(gradients, first, strict=True):
            scale = np.max(np.abs(expected), initial=1.0)
            np.testing.assert_allclose(g, expected, rtol=1e-10, atol=1e-12 * scale)
            assert np.shape(g) == np.shape(expected) and np.result_type(g) == np.result_type(
                expected
            ), fn.__name__
        derivative = differentiable(fn).derivative(wrt)
        specialized += any(p is not None for p in derivative.specializations.values())
    assert specialized >= 30, f"only {specialized} corpus programs were specialized"


def _sum_only(x):
    return np.sum(x)


def _sum_scaled(x):
    return np.sum(x) * 3.0


def _sum_then_reduce(x):
    t = x * x
    return np.sum(t) * np.sum(x)


def _sum_of_products(x, w):
    t = x * w
    return np.sum(t + x)


@pytest.mark.parametrize("fn", [_sum_only, _sum_scaled, _sum_then_reduce, _sum_of_products])
def test_scalar_seeds_keep_gradients_that_are_arrays(fn):
    """A sum's scalar seed is read as a scalar only where elementwise arithmetic with an
    array of the full shape follows; a gradient returned as it is stays an array of the
    argument's shape (checked against central differences)."""
    rng = np.random.default_rng(3)
    params = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    args = tuple(rng.uniform(-1.0, 1.0, 5) for _ in params)
    f = value_and_grad(fn, wrt=list(range(len(args))))
    for _ in range(3):
        value, gradients = f(*args)
        gradients = gradients if isinstance(gradients, tuple) else (gradients,)
        for g in gradients:
            assert isinstance(g, np.ndarray) and g.shape == (5,)
        _check(fn, args, range(len(args)), gradients)
    assert differentiable(fn).derivative(list(params)).specializations


def test_rosenbrock_specialized_backward_reads_the_seed_as_a_scalar():
    """No ``unreduce`` spreading the seed, a first slice written (not added to zeros),
    and the forward's sum as the array method."""
    r = differentiable(rosenbrock)
    f = value_and_grad(r)
    x = np.random.default_rng(4).uniform(-1.5, 1.5, 7)
    f(x)
    _check(rosenbrock, (x,), [0], (f(x)[1],))
    pair = r.derivative(["x"]).specializations[guard_key((x,))]
    assert "unreduce" not in pair.backward_source
    assert "d_x[:-1] = " in pair.backward_source
    assert ".sum()" in pair.forward_source and "np.sum" not in pair.forward_source


def _log_softmax_loss(z, y):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return -np.sum(y * (z - lse)) / z.shape[0]


def _row_sums(z, y):
    s = np.sum(z * z, axis=1)  # no keepdims: the row gradient must be put back first
    return np.sum(s * y[:, 0]) + np.sum(np.sum(z, axis=0) * y[0])


def _column_scale(z, y):
    c = np.sum(z, axis=0, keepdims=True)
    return np.sum((c * 2.0) * z + y * np.mean(z))


@pytest.mark.parametrize("fn", [_log_softmax_loss, _row_sums, _column_scale])
def test_reduction_gradients_read_without_spreading(fn):
    """Gradients of reductions with and without ``keepdims``, read unspread where
    broadcasting gives the same arrays: the specialized gradients have the argument's
    shape and agree with central differences."""
    rng = np.random.default_rng(5)
    args = (rng.uniform(-1.0, 1.0, (4, 3)), rng.uniform(0.0, 1.0, (4, 3)))
    f = value_and_grad(fn, wrt=[0, 1])
    for _ in range(3):
        _, gradients = f(*args)
        assert [g.shape for g in gradients] == [(4, 3), (4, 3)]
        _check(fn, args, [0, 1], gradients)


def _checked_pair(fn, args):
    """Three calls of ``value_and_grad`` (general, then specialized) checked against
    central differences; the pair specialized on ``args``."""
    compiled = differentiable(fn)
    f = value_and_grad(compiled, wrt=list(range(len(args))))
    for _ in range(3):
        _, gradients = f(*args)
        _check(fn, args, range(len(args)), gradients)
    params = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    return compiled.derivative(list(params)).specializations[guard_key(args)]


def _log_sum_exp_reused(z, y):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return np.sum(lse * y[:, :1]) + np.sum(m * m)  # m read again: its gradient is not zero


def _shifted_by_another_axis(z, y):
    m = np.max(z, axis=0, keepdims=True)  # the shift and the sum on different axes
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return np.sum(lse * y)


@pytest.mark.parametrize("fn", [_log_softmax_loss, _log_sum_exp_reused, _shifted_by_another_axis])
def test_the_stabilizing_max_of_a_log_sum_exp_sends_no_gradient(fn):
    """The max subtracted inside a log-sum-exp has no gradient (the backward drops it:
    no ``tie_share``); where the max is read elsewhere, or the axes differ, it keeps
    its gradient. Checked against central differences, ties included (equal entries)."""
    from autodiff_tutor.compiler.pipeline import front_end
    from autodiff_tutor.compiler.specialize.shifts import shift_names

    dropped = fn is _log_softmax_loss
    assert shift_names(front_end(fn).program) == ({"m"} if dropped else set())
    rng = np.random.default_rng(6)
    z = rng.uniform(-1.0, 1.0, (4, 3))
    z[1, 2] = z[1, 0] = 2.0  # a tie at the row maximum
    args = (z, rng.uniform(0.0, 1.0, (4, 3)))
    pair = _checked_pair(fn, args)
    assert ("tie_share" in pair.backward_source) != dropped


def _loop_of_sums(W, h0):
    h = h0
    total = 0.0
    for _ in range(3):
        h = np.tanh(h @ W)
        total = total + np.sum(h * h)
    return total


def test_a_sum_in_a_loop_reads_its_gradient_unspread():
    """Inside a loop too, a sum's scalar gradient is read as it is where elementwise
    arithmetic broadcasts it (no ``unreduce``, nothing kept for it on the stack)."""
    rng = np.random.default_rng(7)
    args = (rng.uniform(-0.5, 0.5, (3, 3)), rng.uniform(-1.0, 1.0, (2, 3)))
    pair = _checked_pair(_loop_of_sums, args)
    assert "unreduce" not in pair.backward_source and "like(" not in pair.forward_source


# --- the lookup: the common call by its arrays' shapes and dtypes, else the full key ---


def _square_sum(x):
    return np.sum(x * x)


def test_a_numpy_scalar_does_not_take_the_specialization_of_a_0d_array():
    derivative = compile_derivative(_square_sum, ["x"])
    pair = specialized_pair(derivative, (np.asarray(3.0),))
    assert pair is not None
    assert specialized_pair(derivative, (np.asarray(5.0),)) is pair  # the same key
    assert specialized_pair(derivative, (np.float64(3.0),)) is not pair


def test_a_boolean_array_runs_the_general_code():
    derivative = compile_derivative(_square_sum, ["x"])
    assert specialized_pair(derivative, (np.ones(3),)) is not None
    assert specialized_pair(derivative, (np.ones(3, bool),)) is None
    assert specialized_pair(derivative, (np.ones(3, np.float32),)) is not None
