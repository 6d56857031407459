"""The compiler on straight-line code, against oracles it does not control."""

import numpy as np
import pytest
from corpus_straight import CORPUS
from oracles import autograd_gradient, central_difference

from autodiff_tutor.api import differentiable, grad, value_and_grad

IDS = [fn.__name__ for fn, _ in CORPUS]


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 40


@pytest.mark.parametrize(("fn", "sample"), CORPUS, ids=IDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradients_match_finite_differences_and_autograd(fn, sample, seed):
    args = sample(np.random.default_rng(seed))
    wrt = list(range(len(args)))
    value, gradients = value_and_grad(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    for i, gradient in enumerate(gradients):
        assert np.shape(gradient) == np.shape(args[i]), f"gradient {i} has the wrong shape"
        assert np.asarray(gradient).dtype == np.float64
        expected_fd = central_difference(fn, args, i)
        np.testing.assert_allclose(gradient, expected_fd, rtol=1e-5, atol=1e-6)
        expected_ad = autograd_gradient(fn, args, i)
        np.testing.assert_allclose(gradient, expected_ad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("fn", "sample"), CORPUS[:20], ids=IDS[:20])
def test_float32_in_float32_out(fn, sample):
    args = tuple(a.astype(np.float32) for a in sample(np.random.default_rng(5)))
    gradients = grad(fn, wrt=list(range(len(args))))(*args)
    for a, g in zip(args, gradients, strict=True):
        assert np.asarray(g).dtype == np.float32
        assert np.shape(g) == np.shape(a)


def test_rosenbrock_of_the_seeds():
    value, gradient = value_and_grad(CORPUS[0][0])(np.array([-1.0, 2.0]))
    assert value == 104.0
    assert gradient.tolist() == [396.0, 200.0]


def test_unused_input_gets_zero_gradient_of_its_shape_and_dtype():
    def f(x, unused):
        return np.sum(x * x)

    dx, du = grad(f, wrt=[0, 1])(np.ones(3), np.ones((2, 2), dtype=np.float32))
    assert dx.tolist() == [2.0, 2.0, 2.0]
    assert du.shape == (2, 2) and du.dtype == np.float32 and not du.any()


def test_wrt_by_name_and_position_agree():
    def f(a, b):
        return np.sum(a * np.exp(b))

    a, b = np.arange(3.0), np.linspace(0, 1, 3)
    by_name = grad(f, wrt="b")(a, b)
    by_position = grad(f, wrt=1)(a, b)
    np.testing.assert_array_equal(by_name, by_position)
    np.testing.assert_allclose(by_name, a * np.exp(b))


def test_decorated_function_still_runs_as_written():
    @differentiable
    def f(x, scale=2.0):
        return np.sum(scale * x)

    assert f(np.ones(3)) == 6.0
    assert f(np.ones(3), scale=1.0) == 3.0
    assert grad(f)(np.ones(3), scale=3.0).tolist() == [3.0, 3.0, 3.0]


def test_compiled_code_is_cached_per_wrt():
    @differentiable
    def f(x, y):
        return np.sum(x * y)

    assert f.derivative(0) is f.derivative("x")
    assert f.derivative(0) is not f.derivative([0, 1])


def test_python_float_inputs():
    def f(x):
        return x * x * 3.0

    assert grad(f)(2.0) == 12.0


def test_globals_are_read_when_called():
    namespace = {"np": np, "SCALE": 2.0}
    exec("def f(x):\n    return np.sum(SCALE * x)\n", namespace)
    # exec'd functions have no source: see test_compiler_errors; here use a module global
    assert grad(_scaled)(np.ones(2)).tolist() == [SCALE, SCALE]


SCALE = 3.0


def _scaled(x):
    return np.sum(SCALE * x)
