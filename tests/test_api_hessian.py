"""``hvp`` and ``hessian`` at the front door: against autograd's Hessian and against
central differences of the compiled gradient."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import grad, hessian, hvp, vjp
from autodiff_tutor.errors import ArgumentError, NonScalarOutputError


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


def cubic_times(x):
    return x[0] ** 3 * x[1]


def test_a_list_of_numbers_is_one_array():
    """``hessian(f)([1.0, 2.0])`` as ``grad`` and ``hvp`` take it: one array (it was a
    raw ValueError from numpy's reshape)."""
    expected = autograd.hessian(cubic_times)(np.array([1.0, 2.0]))
    for given in ([1.0, 2.0], (1.0, 2.0)):
        np.testing.assert_allclose(hessian(cubic_times)(given), expected)


def test_a_structure_of_arrays_is_refused_with_the_product_that_works():
    for structure in ([np.array([1.0]), np.array([2.0])], {"a": np.ones(2)}):
        with pytest.raises(ArgumentError) as raised:
            hessian(lambda p: np.sum(p[0] ** 2))(structure)
        assert "hessian takes an array for 'p'" in " ".join(str(raised.value).split())
        assert "hvp(f)(p, v)" in raised.value.hint
        assert raised.value.location.filename == __file__


def squares(x):
    return x**2


def test_a_vector_output_is_refused_at_the_users_call():
    """Not in the generated gradient function's seed line."""
    x = np.array([1.0, 2.0])
    calls = [
        lambda: hessian(squares)(x),
        lambda: hvp(squares)(x, x),
        lambda: grad(grad(squares))(x),
    ]
    for call in calls:
        with pytest.raises(NonScalarOutputError) as raised:
            call()
        assert raised.value.location.filename == __file__
        assert "(squares)" in raised.value.location.text


class Squashed:
    def __init__(self):
        self.W = np.array([[1.0, 0.5], [0.2, 2.0]])

    def loss(self, x):
        return np.sum(np.tanh(self.W @ x) ** 2)


def test_an_attribute_as_wrt_is_refused_with_the_product_that_works():
    """The hint's form computes the Hessian times v (checked against differences of the
    gradient), where hessian and hvp take parameters only."""
    model, x = Squashed(), np.array([0.3, -0.8])
    for door in (
        lambda: hessian(model.loss, wrt="self.W")(x),
        lambda: hvp(model.loss, wrt="self.W")(x, np.ones((2, 2))),
    ):
        with pytest.raises(ArgumentError) as raised:
            door()
        assert "names an attribute of an object" in " ".join(str(raised.value).split())
    v = np.array([[1.0, 0.0], [0.0, -1.0]])
    product = vjp(grad(model.loss, wrt="self.W"), x, wrt="self.W")[1](v)[0]

    def along(t):
        shifted = Squashed()
        shifted.W = model.W + t[0] * v
        return grad(shifted.loss, wrt="self.W")(x)

    expected = np.stack(
        [
            central_difference(lambda t, i=i: along(t).ravel()[i], [np.zeros(1)], 0)[0]
            for i in range(4)
        ]
    ).reshape(2, 2)
    np.testing.assert_allclose(product, expected, rtol=1e-5, atol=1e-8)
