"""Every elementwise primitive of the registry, through both modes of AD.

The rule walks (``test_rules_numeric``, ``test_rules_tangents``, ``test_rules_symbolic``)
call the rules directly. Here each elementwise primitive is *used*, as a student would:
``np.<op>`` inside a function, differentiated by the compiler (``grad``) and by tracing
(``value_and_gradient``), on the inputs of the finite-difference table (``CASES``, which
covers new elementwise records by itself). Both must match central differences, and
each other to rounding. So a primitive added to its family's module is checked end to
end in both modes, through its aliases' resolution, with no new test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from program_checks import assert_right_in_mode
from test_rules_numeric import CASES, Case, _prepare, central_difference

from autodiff_tutor import grad
from autodiff_tutor.rules.record import ELEMENTWISE
from autodiff_tutor.rules.registry import all_rules
from autodiff_tutor.tracing import value_and_gradient

ELEMENTWISE_OPS = sorted(op for op, rule in all_rules().items() if rule.shape == ELEMENTWISE)


def weighted_sum(fn: Callable[..., Any], g: Any, arity: int) -> Callable[..., Any]:
    """``sum(g * fn(inputs))`` as a plain function the compiler can read."""
    if arity == 1:

        def loss(x):
            return np.sum(fn(x) * g)

    else:

        def loss(x, y):
            return np.sum(fn(x, y) * g)

    return loss


PARAMS = [
    pytest.param(op, case, id=f"{op}-{case.label}")
    for op in ELEMENTWISE_OPS
    for case in CASES.get(op, [None])
]


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_both_modes_match_finite_differences(op: str, case: Case | None) -> None:
    rule, args, _, g = _prepare(op, case, np.float64)
    names = list(rule.inputs)
    loss = weighted_sum(case.primal, g, len(names))
    compiled = grad(loss, wrt=names)(*args)
    _, traced = value_and_gradient(loss, *args, wrt=names)
    for i, name in enumerate(names):
        expected = central_difference(case.primal, args, {}, g, i)[0]
        message = f"{op} {case.label}: d/d{name}"
        np.testing.assert_allclose(compiled[i], expected, rtol=1e-6, atol=1e-7, err_msg=message)
        np.testing.assert_allclose(traced[i], compiled[i], rtol=1e-12, atol=1e-15, err_msg=message)


def test_the_walk_covers_every_elementwise_rule() -> None:
    assert {p.values[0] for p in PARAMS} == set(ELEMENTWISE_OPS)
    assert "tanh" in ELEMENTWISE_OPS and "sum" not in ELEMENTWISE_OPS


def test_a_wrong_rule_would_be_caught() -> None:
    """The oracle can fail: a sine whose derivative has the wrong sign differs."""
    x = np.array([0.3, -1.2, 2.0])
    g = np.array([1.0, 0.5, -2.0])
    expected = central_difference(np.sin, [x], {}, g, 0)[0]
    assert not np.allclose(-g * np.cos(x), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grad(weighted_sum(np.sin, g, 1))(x), expected, rtol=1e-6)


def cast_to_int(x):
    return np.sum(x * x.astype(int))


def floor_as_data(x):
    return np.sum(x * np.floor(x))


def mask_as_float(x):
    return np.sum(x * (x > 0).astype(float))


def power_zero(x):
    return np.sum(np.maximum(x, 0.0) ** 0 * x)


def polynomial(x):
    p = 0.0 * x
    for k in range(3):
        p = p + x**k
    return np.sum(p)


INTEGER_VALUED = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]]) * 3.0


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
@pytest.mark.parametrize("fn", [cast_to_int, floor_as_data, mask_as_float])
def test_integer_valued_data_passes_no_gradient(mode, fn):
    """A cast to integers (``x.astype(int)``), ``np.floor`` and a mask cast to floats
    are data without gradient: the derivative of ``x * cast(x)`` is ``cast(x)``, in
    each mode."""
    assert_right_in_mode(mode, fn, INTEGER_VALUED)


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
@pytest.mark.parametrize("fn", [power_zero, polynomial])
def test_the_power_rule_at_a_zero_base(mode, fn):
    """``x ** 0`` and ``x ** k`` at ``x == 0`` (``k`` from 0): the derivative
    ``k * x ** (k - 1)`` is finite there (``0 ** -1`` is never formed), in each mode."""
    assert_right_in_mode(mode, fn, np.array([0.0, -1.0, 2.0]))
