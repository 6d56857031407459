"""``np.einsum`` beyond the two-operand rule, in both modes, against central
differences and autograd: three or more operands as two-operand einsums in turn (one
step per pair, at the user's line), also with ``...``; one operand as the sum,
transpose, trace, diagonal or axis move it is, also with ``...`` and with any letter
written twice (``'iij->j'``). A letter three times, and ``...`` left out of the
output, are refused at the call in both modes, with the rule's own message and a hint
whose rewrite keeps the gradient."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, grad
from autodiff_tutor.api import jvp, vjp
from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.tracing import value_and_gradient

RNG = np.random.default_rng(14)
A = RNG.normal(size=(2, 3))
B = RNG.normal(size=(3, 4))
C = RNG.normal(size=(4, 2))
V = RNG.normal(size=3)


def chain(a, b, c):
    return np.sum(np.einsum("ij,jk,kl->il", a, b, c) ** 2)


def implicit_output(a, b, c):
    return np.sum(np.sin(np.einsum("ij,jk,kl", a, b, c)))


def shared_letter(a, b, c):
    return np.einsum("ij,ij,ij->", a, b, c)


def four(a, b, c):
    return np.sum(np.einsum("ab,bc,cd,d->a", a, b, c, np.ones(2)) ** 3)


def trace(a, b, c):
    return np.einsum("ii->", a @ b @ c) * np.einsum("ii", c @ a @ b)


def transpose_and_sum(a, b, c):
    return np.sum(np.einsum("ij->ji", a) ** 2) + np.sum(
        np.einsum("ijk->kj", b[..., None] * c[0]) ** 3
    )


def diagonal_of(a, b, c):
    return np.sum(np.einsum("ii->i", c @ a @ b) ** 3) + np.einsum("ij->", a)


def trace_twin(a, b, c):  # autograd's einsum has no diagonal rule: its np.trace does
    return np.trace(a @ b @ c) * np.trace(c @ a @ b)


def diagonal_twin(a, b, c):
    return np.sum(np.diagonal(c @ a @ b, axis1=-1, axis2=-2) ** 3) + np.sum(a)


AUTOGRAD_TWIN = {trace: trace_twin, diagonal_of: diagonal_twin}

CASES = {
    chain: (A, B, C),
    trace: (A, B, C),
    transpose_and_sum: (A, B, C),
    diagonal_of: (A, B, C),
    implicit_output: (A, B, C),
    shared_letter: (A, 2 * A, A + 1.0),
    four: (A, B, C),
}


@pytest.mark.parametrize("fn", list(CASES))
@pytest.mark.parametrize("index", [0, 1, 2])
def test_three_or_more_operands_in_both_modes(fn, index) -> None:
    args = CASES[fn]
    want = central_difference(fn, list(args), index)
    twin = AUTOGRAD_TWIN.get(fn, fn)
    np.testing.assert_allclose(autograd_gradient(twin, list(args), index), want, rtol=1e-6)
    np.testing.assert_allclose(grad(fn, wrt=index)(*args), want, rtol=1e-6, atol=1e-9)

    def one(x):
        return fn(*args[:index], x, *args[index + 1 :])

    traced = value_and_gradient(one, args[index])[1]
    np.testing.assert_allclose(traced, want, rtol=1e-6, atol=1e-9)


def test_forward_mode_agrees() -> None:
    directions = [RNG.normal(size=x.shape) for x in (A, B, C)]
    _, tangent = jvp(chain, (A, B, C), directions)
    want = sum(
        np.sum(central_difference(chain, [A, B, C], i) * d) for i, d in enumerate(directions)
    )
    np.testing.assert_allclose(tangent, want, rtol=1e-6)


def test_the_generated_code_has_one_einsum_per_pair() -> None:
    source = differentiable(chain).source()
    assert "np.einsum('ij,jk->ik', a, b)" in source
    assert "np.einsum('ik,kl->il', t1, c)" in source


def three_equal(a):
    return np.sum(np.einsum("iii->i", a[None] * a[:, None]))


def dots_dropped(a):
    return np.sum(np.einsum("...j->j", a))


def diagonal_in_three(a):
    return np.sum(np.einsum("ii,ij,jk->k", a, a, a))


def three_in_turn(a):  # the hint's rewrite, written by hand
    return np.sum(np.einsum("ik,kl->il", np.einsum("ij,jk->ik", a, a), a))


SQUARE = np.array([[1.0, 2.0], [-0.5, 0.3]])


@pytest.mark.parametrize(
    ("fn", "x"), [(three_equal, SQUARE), (dots_dropped, V), (diagonal_in_three, SQUARE)]
)
def test_refused_at_the_call_in_both_modes(fn, x) -> None:
    with pytest.raises(NoDerivativeRuleError) as compiled:
        grad(fn)(x)
    with pytest.raises(NoDerivativeRuleError) as by_tracing:
        value_and_gradient(fn, x)
    for error in (compiled.value, by_tracing.value):
        assert error.location is not None and error.location.filename == __file__
        assert "np.einsum(" in error.location.text
        assert "two operands" in error.hint and "np.trace" in error.hint


def test_the_rewrite_the_hint_names_keeps_the_gradient() -> None:
    want = central_difference(three_in_turn, [SQUARE], 0)
    np.testing.assert_allclose(grad(three_in_turn)(SQUARE), want, rtol=1e-6)
    np.testing.assert_allclose(value_and_gradient(three_in_turn, SQUARE)[1], want, rtol=1e-6)


STACK = RNG.normal(size=(2, 3, 3))
CUBE = RNG.normal(size=(3, 3, 2))
ROWS = [RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), RNG.normal(size=3)]


def stacked_diagonal(a):
    return np.sum(np.einsum("...ii->...i", a) ** 3)


def stacked_trace(a):
    return np.sum(np.sin(np.einsum("...ii->...", a)))


def stacked_transpose(a):
    return np.sum(np.einsum("...ij->...ji", a) * np.arange(9.0).reshape(3, 3))


def letters_around_dots(a):
    return np.sum(np.einsum("i...j->j...i", a) * np.arange(18.0).reshape(2, 3, 3))


def diagonal_then_sum(a):
    return np.sum(np.einsum("iij->j", a) ** 2)


def dots_in_three(a, b, c):
    return np.sum(np.einsum("...i,...i,...i->...", a, b, c) ** 2)


def dots_implicit(a, b, c):
    return np.sum(np.tanh(np.einsum("...i,...i,i", a, b, c)))


def stacked_diagonal_twin(a):  # autograd's einsum has no diagonal rule
    return np.sum(np.diagonal(a, axis1=-1, axis2=-2) ** 3)


def stacked_trace_twin(a):
    return np.sum(np.sin(np.sum(np.diagonal(a, axis1=-1, axis2=-2), axis=-1)))


def diagonal_then_sum_twin(a):
    return np.sum(np.sum(np.diagonal(np.moveaxis(a, 2, 0), axis1=-1, axis2=-2), axis=-1) ** 2)


ONE_OPERAND = {
    stacked_diagonal: (STACK, stacked_diagonal_twin),
    stacked_trace: (STACK, stacked_trace_twin),
    stacked_transpose: (STACK, stacked_transpose),
    letters_around_dots: (CUBE, letters_around_dots),
    diagonal_then_sum: (CUBE, diagonal_then_sum_twin),
}


@pytest.mark.parametrize("fn", list(ONE_OPERAND), ids=lambda f: f.__name__)
def test_one_operand_with_dots_or_a_diagonal_in_both_modes(fn) -> None:
    x, twin = ONE_OPERAND[fn]
    want = central_difference(fn, [x], 0)
    np.testing.assert_allclose(autograd_gradient(twin, [x], 0), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grad(fn)(x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(value_and_gradient(fn, x)[1], want, rtol=1e-6, atol=1e-9)
    tangent = RNG.normal(size=x.shape)
    np.testing.assert_allclose(jvp(fn, (x,), (tangent,))[1], np.sum(want * tangent), rtol=1e-6)


@pytest.mark.parametrize("fn", [dots_in_three, dots_implicit], ids=lambda f: f.__name__)
@pytest.mark.parametrize("index", [0, 1, 2])
def test_three_operands_with_dots_in_both_modes(fn, index) -> None:
    want = central_difference(fn, list(ROWS), index)
    np.testing.assert_allclose(autograd_gradient(fn, list(ROWS), index), want, rtol=1e-6)
    np.testing.assert_allclose(grad(fn, wrt=index)(*ROWS), want, rtol=1e-6, atol=1e-9)

    def one(x):
        return fn(*ROWS[:index], x, *ROWS[index + 1 :])

    np.testing.assert_allclose(value_and_gradient(one, ROWS[index])[1], want, rtol=1e-6)


def test_the_generated_code_of_dots_is_the_primitives() -> None:
    assert "np.diagonal(a, axis1=-2, axis2=-1)" in differentiable(stacked_diagonal).source()
    source = differentiable(dots_in_three).source()
    assert "np.einsum('...i,...i->...i', a, b)" in source
    assert "np.einsum('...i,...i->...', t1, c)" in source


# -- second derivatives: einsum_operand (the gradient's helper) has rules of its own -----


def quadratic_form(x, a):
    return np.einsum("i,ij,j", x, a, x) + np.sum(np.tanh(np.einsum("ij,j->i", a.T, x)))


@pytest.mark.parametrize("index", [0, 1])
def test_hessian_vector_products_through_einsum(index) -> None:
    """``vjp`` of the gradient (Hv) against central differences of autograd's gradient:
    the second derivative goes through einsum_operand's own rule."""
    x, a, v = V, RNG.normal(size=(3, 3)), RNG.normal(size=(3,) if index == 0 else (3, 3))
    args = [x, a]
    _, pullback = vjp(grad(quadratic_form, wrt=index), x, a, wrt=[index])
    (hv,) = pullback(v)
    h = 1e-5

    def along(t):
        moved = [arg + t * v if i == index else arg for i, arg in enumerate(args)]
        return autograd_gradient(quadratic_form, moved, index)

    np.testing.assert_allclose(hv, (along(h) - along(-h)) / (2 * h), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(  # the first derivative, against central differences too
        grad(quadratic_form, wrt=index)(x, a), central_difference(quadratic_form, args, index)
    )
