"""Finite-difference cases of numpy's numerical routines (cross, convolve, trapezoid,
polyval, interp, gradient; :mod:`autodiff_tutor.rules.numerical`), merged into ``CASES`` of
``tests/test_rules_numeric.py`` through :func:`rule_cases_breadth.breadth_cases`.
``np.cross`` of 2-vectors, which numpy deprecates (and warns about in every call), is
tested in ``tests/test_rules_numerical_programs.py``."""

from __future__ import annotations

from typing import Any

import numpy as np


def knots(n: int) -> Any:
    """Increasing sample points, well apart (np.interp needs them increasing)."""
    return lambda rng: np.cumsum(rng.uniform(0.5, 1.5, size=n))


def query(*shape: int) -> Any:
    """Points inside and outside the knots' range, away from the knots (kinks)."""
    return lambda rng: rng.choice([-0.9, 0.25, 0.8, 1.3, 1.9, 2.6, 7.5], size=shape)


def spaced_gradient(f: Any, spacing: float = 1.0, **options: Any) -> Any:
    """``np.gradient`` with its spacing by position, as numpy takes it (``*varargs``)."""
    return np.gradient(f, spacing, **options)


def numerical_cases() -> dict[str, list[Any]]:
    from test_rules_numeric import Case, inputs, normal

    return {
        "cross": [
            Case(np.cross, inputs(normal(3), normal(3)), {}, "3-vectors"),
            Case(np.cross, inputs(normal(4, 3), normal(3)), {}, "broadcast"),
            Case(np.cross, inputs(normal(3, 2), normal(3, 2)), {"axis": 0}, "axis=0"),
        ],
        "convolve": [
            Case(np.convolve, inputs(normal(5), normal(3)), {}, "full"),
            Case(np.convolve, inputs(normal(3), normal(5)), {"mode": "same"}, "same"),
            Case(np.convolve, inputs(normal(6), normal(2)), {"mode": "valid"}, "valid"),
        ],
        "trapezoid": [
            Case(np.trapezoid, inputs(normal(5)), {}, "unit spacing"),
            Case(np.trapezoid, inputs(normal(2, 4)), {"axis": 0, "dx": 0.5}, "axis=0, dx"),
            Case(np.trapezoid, inputs(normal(2, 4)), {"x": np.array([0.0, 0.5, 2.0, 2.5])}, "x"),
        ],
        "gradient": [
            Case(np.gradient, inputs(normal(5)), {}, "1-d"),
            Case(np.gradient, inputs(normal(2)), {}, "two samples"),
            Case(spaced_gradient, inputs(normal(3, 4)), {"spacing": 0.3, "axis": 1}, "axis=1, h"),
            Case(spaced_gradient, inputs(normal(4, 2, 3)), {"spacing": 2.0, "axis": -3}, "axis=-3"),
        ],
        "interp": [
            Case(np.interp, inputs(query(7), knots(4), normal(4)), {}, "inside and out"),
            Case(
                np.interp,
                inputs(query(2, 3), knots(3), normal(3)),
                {"left": -1.0, "right": 2.0},
                "left, right",
            ),
        ],
        "polyval": [
            Case(np.polyval, inputs(normal(4), normal(3)), {}, "vector x"),
            Case(np.polyval, inputs(normal(3), normal(2, 2)), {}, "matrix x"),
            Case(np.polyval, inputs(normal(2), normal()), {}, "scalar x"),
        ],
    }
