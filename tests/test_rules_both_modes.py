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
