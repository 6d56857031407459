"""``np.einsum`` beyond its rule (two operands, each letter once per operand): one
operand, three operands and diagonals are refused at the call in both modes, with
the rule's own message and a hint whose rewrite keeps the gradient (checked here
against central differences in both modes)."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import grad
from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.tracing import value_and_gradient


def one_operand(a):
    return np.einsum("ij->", a)


def three_operands(a):
    return np.sum(np.einsum("ij,jk,kl->il", a, a, a))


def diagonal(a):
    return np.einsum("ii->", a)


def three_in_turn(a):  # the hint's rewrite of three_operands
    return np.sum(np.einsum("ik,kl->il", np.einsum("ij,jk->ik", a, a), a))


A = np.array([[1.0, 2.0], [-0.5, 0.3]])


@pytest.mark.parametrize("fn", [one_operand, three_operands, diagonal])
def test_refused_at_the_call_in_both_modes(fn) -> None:
    with pytest.raises(NoDerivativeRuleError) as compiled:
        grad(fn)(A)
    with pytest.raises(NoDerivativeRuleError) as by_tracing:
        value_and_gradient(fn, A)
    for error in (compiled.value, by_tracing.value):
        assert error.location is not None and error.location.filename == __file__
        assert "np.einsum(" in error.location.text
        assert "two operands" in error.hint and "np.trace" in error.hint


def test_the_rewrite_the_hint_names_keeps_the_gradient() -> None:
    np.testing.assert_allclose(three_in_turn(A), three_operands(A))
    want = central_difference(three_in_turn, [A], 0)
    np.testing.assert_allclose(grad(three_in_turn)(A), want, rtol=1e-6)
    np.testing.assert_allclose(value_and_gradient(three_in_turn, A)[1], want, rtol=1e-6)
