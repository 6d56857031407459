"""``hvp`` and ``hessian`` at the front door: against autograd's Hessian and against
central differences of the compiled gradient."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import grad, hessian, hvp
from autodiff_tutor.errors import ArgumentError


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def autograd_rosenbrock(x):
    return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def weighted(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def autograd_weighted(w, x):
    return anp.sum(anp.tanh(x @ w) ** 2)


X = np.array([-1.2, 1.0, 0.5])


def test_the_hessian_matches_autograd_and_differences_of_the_gradient():
    compiled = hessian(rosenbrock)(X)
    np.testing.assert_allclose(compiled, autograd.hessian(autograd_rosenbrock)(X), rtol=1e-10)
    for i in range(X.size):
        row = central_difference(lambda x, i=i: grad(rosenbrock)(x)[i], [X], 0)
        np.testing.assert_allclose(compiled[i], row, rtol=1e-5, atol=1e-5)


def test_the_hessian_of_a_matrix_input_has_its_shape_twice():
    rng = np.random.default_rng(0)
    w, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    compiled = hessian(weighted)(w, x)
    assert compiled.shape == (3, 2, 3, 2)
    np.testing.assert_allclose(compiled, autograd.hessian(autograd_weighted)(w, x), rtol=1e-10)


def test_hvp_by_name_matches_autograd():
    rng = np.random.default_rng(1)
    w, x, v = rng.normal(size=(3, 2)), rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    compiled = hvp(weighted, wrt="w")(w, x, v)
    expected = autograd.hessian_vector_product(autograd_weighted)(w, x, v)
    np.testing.assert_allclose(compiled, expected, rtol=1e-10)


def test_several_inputs_are_refused():
    with pytest.raises(ArgumentError, match="one input"):
        hessian(weighted, wrt=[0, 1])(np.ones((3, 2)), np.ones((4, 3)))
