"""Finite-difference cases of the breadth primitives (statistics, arrangement, linear
algebra, scipy), merged into ``CASES`` of ``tests/test_rules_numeric.py``, which every
registry walk (numeric, tangents, symbolic's numeric-only rules) reads.

Domains keep away from kinks: distinct values for sort/ptp, positive definite
matrices for cholesky, well-conditioned ones for inv/solve/det.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def spd(n: int) -> Any:
    """A symmetric positive definite matrix (well conditioned)."""
    return lambda rng: (lambda a: a @ a.T / n + np.eye(n))(rng.normal(size=(n, n)))


def well_conditioned(*shape: int) -> Any:
    """Matrices near the identity: invertible, determinant away from 0."""
    return lambda rng: np.eye(shape[-1]) * 2 + 0.3 * rng.normal(size=shape)


def with_nan(*shape: int) -> Any:
    def sample(rng: np.random.Generator) -> np.ndarray:
        x = rng.normal(size=shape)
        x.reshape(-1)[::3] = np.nan
        return x

    return sample


def sym_cholesky(a: Any) -> Any:
    """cholesky of the symmetric part: perturbations that keep the input symmetric."""
    return np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) / 2)


def sym_eigvalsh(a: Any) -> Any:
    return np.linalg.eigvalsh((a + np.swapaxes(a, -1, -2)) / 2)


def breadth_cases() -> dict[str, list[Any]]:
    """The table (built on the helpers of test_rules_numeric)."""
    from test_rules_numeric import Case, distinct, fixed, inputs, normal, reductions, uniform

    stats = [
        ({}, "all"),
        ({"axis": 0}, "axis=0"),
        ({"axis": -1, "keepdims": True}, "axis=-1 kd"),
        ({"axis": (0, 2), "ddof": 1}, "axes (0,2) ddof=1"),
        ({"ddof": 2}, "ddof=2"),
    ]
    cases: dict[str, list[Any]] = {
        "var": [Case(np.var, inputs(normal(2, 3, 4)), o, label) for o, label in stats],
        "std": [Case(np.std, inputs(normal(2, 3, 4)), o, label) for o, label in stats],
        "ptp": [
            Case(np.ptp, inputs(distinct(3, 4)), o, label)
            for o, label in [
                ({}, "all"),
                ({"axis": 0}, "axis=0"),
                ({"axis": 1, "keepdims": True}, "kd"),
            ]
        ],
        "nansum": [
            Case(np.nansum, inputs(with_nan(3, 4)), o, label)
            for o, label in [
                ({}, "all"),
                ({"axis": 0}, "axis=0"),
                ({"axis": 1, "keepdims": True}, "kd"),
            ]
        ],
        "nanmean": [
            Case(np.nanmean, inputs(with_nan(3, 4)), o, label)
            for o, label in [
                ({}, "all"),
                ({"axis": 0}, "axis=0"),
                ({"axis": 1, "keepdims": True}, "kd"),
            ]
        ],
        "average": [
            Case(np.average, inputs(normal(3, 4)), {}, "no weights"),
            Case(np.average, inputs(normal(3, 4)), {"axis": 0}, "axis=0"),
            Case(
                np.average,
                inputs(normal(3, 4)),
                {"axis": 1, "weights": np.array([1.0, 2.0, 0.5, 3.0])},
                "1-d weights",
            ),
            Case(
                np.average,
                inputs(normal(3, 3)),
                {"axis": 0, "weights": np.array([1.0, 2.0, 0.5]), "keepdims": True},
                "1-d weights axis 0",
            ),
            Case(
                np.average,
                inputs(normal(2, 3)),
                {"weights": np.arange(1.0, 7.0).reshape(2, 3)},
                "full weights",
            ),
        ],
        "cumsum": [
            Case(np.cumsum, inputs(normal(3, 4)), o, label)
            for o, label in [({}, "flat"), ({"axis": 0}, "axis=0"), ({"axis": -1}, "axis=-1")]
        ],
        "cumprod": [
            Case(np.cumprod, inputs(uniform(0.5, 1.5, 3, 4)), o, label)
            for o, label in [({}, "flat"), ({"axis": 0}, "axis=0"), ({"axis": -1}, "axis=-1")]
        ],
        "diff": [
            Case(np.diff, inputs(normal(3, 5)), o, label)
            for o, label in [
                ({}, "n=1"),
                ({"n": 2}, "n=2"),
                ({"axis": 0}, "axis=0"),
                ({"n": 3, "axis": 1}, "n=3"),
            ]
        ],
        "sort": [
            Case(np.sort, inputs(distinct(3, 4)), o, label)
            for o, label in [({}, "last axis"), ({"axis": 0}, "axis=0"), ({"axis": None}, "flat")]
        ],
    }
    del fixed, reductions
    return cases
