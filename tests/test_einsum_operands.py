"""``np.einsum`` beyond the two-operand rule, in both modes, against central
differences and autograd: three or more operands as two-operand einsums in turn (one
step per pair, at the user's line); one operand as the sum, transpose, trace or
diagonal it is. ``...`` with three operands and other diagonals (``'iij->'``) are
refused at the call in both modes, with the rule's own message and a hint whose
rewrite keeps the gradient."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, grad
from autodiff_tutor.api import jvp
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
    return np.einsum("iij->j", a[None] * a[:, None])


def dots_and_three(a):
    return np.sum(np.einsum("...j,jk,kl->...l", a, B, C))


def implicit_diagonal(a):
    return np.sum(np.einsum("iij", a[None] * a[:, None]))


def three_in_turn(a):  # the hint's rewrite, written by hand
    return np.sum(np.einsum("ik,kl->il", np.einsum("ij,jk->ik", a, a), a))


SQUARE = np.array([[1.0, 2.0], [-0.5, 0.3]])


@pytest.mark.parametrize(
    ("fn", "x"), [(three_equal, SQUARE), (dots_and_three, A), (implicit_diagonal, SQUARE)]
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
