"""Second derivatives through a step whose gradient cannot be differentiated again
(``np.linalg.svdvals``, whose gradient's helper has no rule) are refused at the user's
line, never inside generated code; first derivatives through the same steps still
match central differences, and second derivatives of other steps in the same style
work (the Hessian-vector product against differences of the gradient), ``np.einsum``
and ``np.linalg.svd`` among them (their gradients' helpers have rules). A method that
writes into its object's attributes (``self.nfev += 1``) is refused saying so."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import grad, hessian
from autodiff_tutor.api import jvp
from autodiff_tutor.errors import AutodiffError


def through_svd(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return np.sum(s**3)


def through_svdvals(x):
    return np.sum(np.linalg.svdvals(x) ** 3)


def through_einsum(x):
    return np.sum(np.einsum("ij,jk->ik", x, x) ** 2)


def outer_of_gradient(x):
    return np.sum(grad(through_svdvals)(x) ** 2)


CASES = {
    through_svdvals: ("np.linalg.svdvals(x)", np.array([[2.0, 0.3], [0.1, 1.0]])),
}


@pytest.mark.parametrize("fn", list(CASES))
def test_a_second_derivative_is_refused_at_the_users_line(fn) -> None:
    text, x = CASES[fn]
    want = central_difference(fn, [x], 0)
    np.testing.assert_allclose(grad(fn)(x), want, rtol=1e-5)
    with pytest.raises(AutodiffError) as caught:
        jvp(grad(fn), (x,), (np.ones_like(x),))
    error = caught.value
    assert error.location is not None and error.location.filename == __file__
    assert text in error.location.text and "generated" not in error.location.filename
    assert "second derivatives through" in error.message
    assert "first derivatives through it work" in error.hint


def test_a_gradient_inside_a_function_is_refused_at_the_users_line_too() -> None:
    x = CASES[through_svdvals][1]
    with pytest.raises(AutodiffError) as caught:
        grad(outer_of_gradient)(x)
    assert caught.value.location is not None
    assert caught.value.location.filename == __file__


@pytest.mark.parametrize("fn", [through_einsum, through_svd])
def test_a_second_derivative_through_einsum_or_svd_matches_differences_of_the_gradient(fn):
    """Forward over reverse (jvp of grad): H v against central differences of autograd's
    gradient."""
    x, v = np.array([[1.0, 2.0], [3.0, -1.0]]), np.array([[0.5, -1.0], [0.3, 2.0]])
    _, hv = jvp(grad(fn), (x,), (v,))
    h = 1e-5
    along = [autograd_gradient(fn, [x + t * v], 0) for t in (h, -h)]
    want = (along[0] - along[1]) / (2 * h)
    np.testing.assert_allclose(hv, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad(fn)(x), central_difference(fn, [x], 0))


class Rosenbrock:
    """A benchmark class counting its evaluations, as scipy's benchmarks do."""

    def __init__(self):
        self.nfev = 0

    def fun(self, x):
        self.nfev += 1
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_a_second_derivative_of_a_method_counting_its_calls_says_so() -> None:
    bench = Rosenbrock()
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(
        grad(bench.fun)(x), central_difference(bench.fun, [x], 0), rtol=1e-6, atol=1e-6
    )
    with pytest.raises(AutodiffError) as caught:
        hessian(bench.fun)(x)
    message = " ".join(caught.value.message.split())
    assert "writes into an attribute of its object (self.nfev += 1)" in message
    assert "store_attribute" not in str(caught.value)  # no generated code in the words
    assert caught.value.location.text.strip() == "self.nfev += 1"
