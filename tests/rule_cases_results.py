"""Finite-difference cases of the primitives with several results (splits, slogdet,
eigh, svd) and of matrix norms and N-d ``np.dot``, merged into ``CASES`` of
``tests/test_rules_numeric.py``, which every registry walk reads.

A primitive with several results has a primal that returns a *list* (the walks seed
one gradient per item). Domains keep away from kinks: symmetric inputs with distinct
eigenvalues for eigh, random matrices (distinct, nonzero singular values) for svd,
entries away from zero for the column- and row-sum norms.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def sym_eigh(a: Any, UPLO: str = "L") -> list[Any]:
    """eigh of the symmetric part: perturbations that keep the input symmetric."""
    w, v = np.linalg.eigh((a + np.swapaxes(a, -1, -2)) / 2, UPLO=UPLO)
    return [w, v]


def slogdet_list(a: Any) -> list[Any]:
    sign, logdet = np.linalg.slogdet(a)
    return [sign, logdet]


def lstsq_list(a: Any, b: Any, rcond: Any = None) -> list[Any]:
    """Least squares with the rank as a float (a constant: its gradient is zero)."""
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
    return [x, residuals, np.float64(rank), s]


def reduced_svd(a: Any, full_matrices: bool = False) -> list[Any]:
    """The reduced SVD, the rule's form (the walk passes the rule's option as well)."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return [u, s, vh]


MATRIX_NORMS = [
    ("nuc", None, False, (3, 4)),
    (2, None, False, (4, 3)),
    (-2, None, False, (3, 3)),
    (1, None, False, (3, 4)),
    (-1, None, False, (3, 4)),
    (np.inf, None, False, (3, 4)),
    (-np.inf, None, False, (3, 4)),
    ("fro", (0, 2), True, (3, 2, 4)),
    ("nuc", (2, 0), False, (3, 2, 4)),
    (2, (0, 1), True, (3, 4, 2)),
    (1, (1, 0), False, (3, 4)),
    (np.inf, (-1, 0), True, (3, 2, 4)),
]


def results_cases() -> dict[str, list[Any]]:
    """The table (built on the helpers of test_rules_numeric)."""
    from rule_cases_breadth import einsum_primal, well_conditioned
    from test_rules_numeric import Case, away_from_zero, fixed, inputs, normal

    def einsum_case(spec: str, sx: tuple[int, ...], sy: tuple[int, ...]) -> Any:
        label = f"{spec} {sx}x{sy}"
        sample = inputs(fixed(spec), normal(*sx), normal(*sy))
        return Case(einsum_primal, sample, {}, label, differentiable=(1, 2))

    def split_cases(fn: Any, shapes_options: list[tuple[tuple[int, ...], dict]]) -> list[Any]:
        return [
            Case(fn, inputs(normal(*shape)), options, f"{shape} {options}")
            for shape, options in shapes_options
        ]

    return {
        "split": split_cases(
            np.split,
            [
                ((6,), {"indices_or_sections": 3}),
                ((4, 3), {"indices_or_sections": [1, 3]}),
                ((2, 6), {"indices_or_sections": 2, "axis": -1}),
            ],
        ),
        "array_split": split_cases(
            np.array_split,
            [((7,), {"indices_or_sections": 3}), ((2, 5), {"indices_or_sections": 2, "axis": 1})],
        ),
        "hsplit": split_cases(
            np.hsplit, [((6,), {"indices_or_sections": 2}), ((2, 4), {"indices_or_sections": [1]})]
        ),
        "vsplit": split_cases(np.vsplit, [((4, 3), {"indices_or_sections": 2})]),
        "dsplit": split_cases(np.dsplit, [((2, 1, 4), {"indices_or_sections": [1, 2]})]),
        "slogdet": [
            Case(slogdet_list, inputs(well_conditioned(3, 3)), {}, "3x3"),
            Case(slogdet_list, inputs(well_conditioned(2, 3, 3)), {}, "stacked"),
            Case(slogdet_list, inputs(lambda rng: -well_conditioned(3, 3)(rng)), {}, "negative"),
        ],
        "lstsq": [
            Case(lstsq_list, inputs(normal(5, 3), normal(5)), {}, "tall, vector b"),
            Case(lstsq_list, inputs(normal(5, 2), normal(5, 3)), {}, "tall, matrix b"),
            Case(lstsq_list, inputs(well_conditioned(3, 3), normal(3)), {}, "square"),
        ],
        "eigh": [
            Case(sym_eigh, inputs(normal(3, 3)), {}, "3x3"),
            Case(sym_eigh, inputs(normal(2, 4, 4)), {}, "stacked"),
            Case(sym_eigh, inputs(normal(3, 3)), {"UPLO": "U"}, "upper"),
        ],
        "svd": [
            Case(reduced_svd, inputs(normal(3, 3)), {"full_matrices": False}, "square"),
            Case(reduced_svd, inputs(normal(4, 2)), {"full_matrices": False}, "tall"),
            Case(reduced_svd, inputs(normal(2, 4)), {"full_matrices": False}, "wide"),
            Case(reduced_svd, inputs(normal(2, 3, 2)), {"full_matrices": False}, "stacked"),
        ],
        "svdvals": [
            Case(np.linalg.svdvals, inputs(normal(3, 4)), {}, "wide"),
            Case(np.linalg.svdvals, inputs(normal(2, 4, 3)), {}, "stacked"),
        ],
        "norm": [
            Case(
                np.linalg.norm,
                inputs(away_from_zero(*shape)),
                {"ord": ord, "axis": axis, "keepdims": keepdims},
                f"matrix ord={ord} axis={axis} kd={keepdims}",
            )
            for ord, axis, keepdims, shape in MATRIX_NORMS
        ],
        "einsum": [
            einsum_case(subscripts, sx, sy)
            for subscripts, sx, sy in [
                ("...ij,...jk->...ik", (2, 2, 3), (3, 2)),
                ("...ij,...jk", (2, 1, 2, 3), (4, 3, 2)),
                ("...j,j", (2, 3), (3,)),
                ("i...,i->...", (3, 2), (3,)),
                ("ij,ij->ij", (1, 3), (2, 3)),
                ("bij,bjk->bik", (1, 2, 3), (4, 3, 2)),
            ]
        ],
        "dot": [
            Case(np.dot, inputs(normal(*sx), normal(*sy)), label=f"{sx}.{sy}")
            for sx, sy in [
                ((2, 3, 4), (5, 4, 2)),
                ((2, 3, 4), (4,)),
                ((4,), (2, 4, 3)),
                ((2, 4), (3, 4, 2)),
                ((2, 3, 4), (4, 2)),
            ]
        ],
    }
