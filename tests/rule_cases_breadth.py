"""Finite-difference cases of the breadth primitives (statistics, arrangement, linear
algebra, scipy), merged into ``CASES`` of ``tests/test_rules_numeric.py``, which every
registry walk (numeric, tangents, symbolic's numeric-only rules) reads.

Domains keep away from kinks: distinct values for sort/ptp, positive definite
matrices for cholesky, well-conditioned ones for inv/solve/det.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rule_cases_numerical import numerical_cases


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


def einsum_primal(subscripts: Any, x: Any, y: Any) -> Any:
    return np.einsum(str(subscripts), x, y)  # the table passes the string as a 0-d array


#: rows with one zero inside, two zeros, a zero first, none (cumprod's zero cases)
SCAN_ZEROS = np.array(
    [[0.7, 0.0, -1.2, 0.9], [1.1, 0.0, 0.8, 0.0], [0.0, -0.6, 1.3, 0.5], [0.9, -1.4, 0.6, 1.2]]
)


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
        ]
        + [  # exact at zeros: one in a scan, two, one first, none
            Case(np.cumprod, inputs(fixed(SCAN_ZEROS)), o, label)
            for o, label in [({"axis": 1}, "zeros axis=1"), ({"axis": 0}, "zeros axis=0")]
            + [({}, "zeros flat")]
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
        "median": [
            Case(np.median, inputs(distinct(3, 4)), o, label)
            for o, label in [
                ({}, "all"),
                ({"axis": 0}, "odd"),
                ({"axis": 1, "keepdims": True}, "even"),
            ]
        ],
        "quantile": [
            Case(np.quantile, inputs(distinct(3, 4)), o, label)
            for o, label in [({"q": 0.3}, "all"), ({"q": 0.8, "axis": 1, "keepdims": True}, "rows")]
        ],
        "percentile": [
            Case(np.percentile, inputs(distinct(3, 4)), o, label)
            for o, label in [({"q": 30.0}, "all"), ({"q": 90, "axis": 0}, "columns")]
        ],
        "sort": [
            Case(np.sort, inputs(distinct(3, 4)), o, label)
            for o, label in [({}, "last axis"), ({"axis": 0}, "axis=0"), ({"axis": None}, "flat")]
        ],
    }
    cases.update(arrangement_cases())
    cases.update(linalg_cases())
    cases.update(scipy_cases())
    cases.update(numerical_cases())
    del fixed, reductions
    return cases


def arrangement_cases() -> dict[str, list[Any]]:
    from test_rules_numeric import Case, inputs, normal, sequence

    def each(fn: Any, make: Any, settings: list[tuple[dict[str, Any], str]]) -> list[Any]:
        return [Case(fn, inputs(make), o, label) for o, label in settings]

    return {
        "flip": each(np.flip, normal(2, 3), [({}, "all"), ({"axis": 1}, "axis=1")]),
        "fliplr": each(np.fliplr, normal(2, 3), [({}, "2-d")]),
        "flipud": each(np.flipud, normal(2, 3), [({}, "2-d")]),
        "roll": each(
            np.roll,
            normal(3, 4),
            [
                ({"shift": 1}, "flat"),
                ({"shift": -2, "axis": 1}, "axis=1"),
                ({"shift": (1, 2), "axis": (0, 1)}, "tuple"),
            ],
        ),
        "rot90": each(
            np.rot90,
            normal(2, 3, 2),
            [({}, "k=1"), ({"k": 2}, "k=2"), ({"k": -1, "axes": (1, 2)}, "axes")],
        ),
        "broadcast_to": each(
            np.broadcast_to, normal(3, 1), [({"shape": (2, 3, 4)}, "(3,1)->(2,3,4)")]
        ),
        "ravel": each(np.ravel, normal(2, 3), [({}, "2-d")]),
        "flatten": each(lambda x: x.flatten(), normal(2, 3), [({}, "2-d")]),
        "swapaxes": each(np.swapaxes, normal(2, 3, 4), [({"axis1": 0, "axis2": 2}, "0<->2")]),
        "moveaxis": each(
            np.moveaxis,
            normal(2, 3, 4),
            [
                ({"source": 0, "destination": -1}, "0->-1"),
                ({"source": (0, 1), "destination": (2, 0)}, "tuple"),
            ],
        ),
        "atleast_1d": each(np.atleast_1d, normal(), [({}, "0-d")])
        + each(np.atleast_1d, normal(3), [({}, "1-d")]),
        "atleast_2d": each(np.atleast_2d, normal(3), [({}, "1-d")])
        + each(np.atleast_2d, normal(2, 3), [({}, "2-d")]),
        "atleast_3d": each(np.atleast_3d, normal(3), [({}, "1-d")])
        + each(np.atleast_3d, normal(2, 3), [({}, "2-d")]),
        "tile": each(np.tile, normal(2, 3), [({"reps": 2}, "int"), ({"reps": (2, 1, 2)}, "tuple")]),
        "repeat": each(
            np.repeat,
            normal(2, 3),
            [
                ({"repeats": 2}, "flat"),
                ({"repeats": [1, 0, 3], "axis": 1}, "per column"),
                ({"repeats": 2, "axis": 0}, "rows"),
            ],
        ),
        "pad": each(
            np.pad,
            normal(2, 3),
            [
                ({"pad_width": 1}, "1"),
                ({"pad_width": ((0, 1), (2, 0)), "constant_values": 3.0}, "pairs"),
                ({"pad_width": ((2, 1), (3, 4)), "mode": "reflect"}, "reflect"),
                ({"pad_width": 2, "mode": "edge"}, "edge"),
                ({"pad_width": ((1, 3), (4, 0)), "mode": "symmetric"}, "symmetric"),
                ({"pad_width": ((3, 1), (2, 5)), "mode": "wrap"}, "wrap"),
            ],
        ),
        "triu": each(np.triu, normal(3, 4), [({}, "k=0"), ({"k": -1}, "k=-1")]),
        "tril": each(np.tril, normal(3, 4), [({}, "k=0"), ({"k": 1}, "k=1")]),
        "trace": each(np.trace, normal(3, 4), [({}, "2-d"), ({"offset": 1}, "offset")])
        + each(np.trace, normal(2, 3, 3), [({"axis1": 1, "axis2": 2}, "batched")]),
        "diagonal": each(np.diagonal, normal(3, 4), [({}, "2-d"), ({"offset": -1}, "offset")])
        + each(np.diagonal, normal(2, 3, 3), [({"axis1": 1, "axis2": 2, "offset": 1}, "batched")]),
        "diag": each(np.diag, normal(3), [({}, "vector"), ({"k": 1}, "k=1")])
        + each(np.diag, normal(3, 4), [({}, "matrix"), ({"k": -1}, "matrix k=-1")]),
        "take": each(
            np.take,
            normal(3, 4),
            [
                ({"indices": np.array([0, 5, 5, 11])}, "flat"),
                ({"indices": np.array([2, 0, 2]), "axis": 1}, "axis=1"),
            ],
        ),
        "take_along_axis": each(
            np.take_along_axis,
            normal(3, 4),
            [
                ({"indices": np.array([[1], [3], [3]]), "axis": 1}, "labels"),
                ({"indices": np.array([[0, 1, 1, 2]]), "axis": 0}, "axis=0"),
                ({"indices": np.array([[2, 0]]), "axis": 1}, "indices broadcast over rows"),
            ],
        ),
        "hstack": [
            Case(np.hstack, sequence(normal(2, 3), normal(2, 1)), {}, "2-d"),
            Case(np.hstack, sequence(normal(3), normal(2)), {}, "1-d"),
        ],
        "vstack": [Case(np.vstack, sequence(normal(3), normal(2, 3)), {}, "1-d and 2-d")],
        "dstack": [Case(np.dstack, sequence(normal(2, 3), normal(2, 3, 2)), {}, "2-d and 3-d")],
        "column_stack": [
            Case(np.column_stack, sequence(normal(3), normal(3, 2)), {}, "1-d and 2-d")
        ],
    }


def linalg_cases() -> dict[str, list[Any]]:
    from test_rules_numeric import Case, fixed, inputs, normal

    def einsum_case(spec: str, sx: tuple[int, ...], sy: tuple[int, ...]) -> Any:
        return Case(
            einsum_primal,
            inputs(fixed(spec), normal(*sx), normal(*sy)),
            {},
            spec,
            differentiable=(1, 2),
        )

    return {
        "outer": [
            Case(np.outer, inputs(normal(3), normal(4)), {}, "vectors"),
            Case(np.outer, inputs(normal(2, 2), normal(3)), {}, "flattened"),
        ],
        "inner": [
            Case(np.inner, inputs(normal(3), normal(3)), {}, "vectors"),
            Case(np.inner, inputs(normal(2, 3), normal(3)), {}, "matrix, vector"),
            Case(np.inner, inputs(normal(2, 3), normal(4, 3)), {}, "matrices"),
            Case(np.inner, inputs(normal(2, 2, 3), normal(4, 3)), {}, "3-d"),
        ],
        "einsum": [
            einsum_case("ij,jk->ik", (2, 3), (3, 4)),
            einsum_case("bi,bi->b", (3, 2), (3, 2)),
            einsum_case("ij,k", (2, 3), (2,)),
            einsum_case("bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
            einsum_case("i,j->ij", (3,), (2,)),
            einsum_case("ij,ij->", (2, 3), (2, 3)),
        ],
        "tensordot": [
            Case(np.tensordot, inputs(normal(2, 3), normal(3, 4)), {"axes": 1}, "axes=1"),
            Case(np.tensordot, inputs(normal(2, 3, 4), normal(3, 4, 2)), {}, "axes=2"),
            Case(
                np.tensordot,
                inputs(normal(3, 2, 4), normal(4, 5, 3)),
                {"axes": ([0, 2], [2, 0])},
                "pairs",
            ),
            Case(np.tensordot, inputs(normal(2), normal(3)), {"axes": 0}, "outer"),
        ],
        "kron": [
            Case(np.kron, inputs(normal(2), normal(3)), {}, "vectors"),
            Case(np.kron, inputs(normal(2, 3), normal(2, 2)), {}, "matrices"),
            Case(np.kron, inputs(normal(2), normal(2, 3)), {}, "1-d and 2-d"),
        ],
        "solve": [
            Case(np.linalg.solve, inputs(well_conditioned(3, 3), normal(3)), {}, "vector b"),
            Case(np.linalg.solve, inputs(well_conditioned(3, 3), normal(3, 2)), {}, "matrix b"),
            Case(
                np.linalg.solve, inputs(well_conditioned(2, 3, 3), normal(2, 3, 2)), {}, "stacked"
            ),
        ],
        "inv": [
            Case(np.linalg.inv, inputs(well_conditioned(3, 3)), {}, "3x3"),
            Case(np.linalg.inv, inputs(well_conditioned(2, 2, 2)), {}, "stacked"),
        ],
        "det": [
            Case(np.linalg.det, inputs(well_conditioned(3, 3)), {}, "3x3"),
            Case(np.linalg.det, inputs(well_conditioned(2, 2, 2)), {}, "stacked"),
        ],
        "pinv": [
            Case(np.linalg.pinv, inputs(normal(3, 2)), {}, "tall"),
            Case(np.linalg.pinv, inputs(normal(2, 4)), {}, "wide"),
            Case(np.linalg.pinv, inputs(well_conditioned(3, 3)), {}, "square"),
        ],
        "cholesky": [Case(sym_cholesky, inputs(spd(3)), {}, "3x3")],
        "eigvalsh": [Case(sym_eigvalsh, inputs(spd(3)), {}, "3x3")],
    }


def scipy_cases() -> dict[str, list[Any]]:
    import scipy.special as special
    from scipy.stats import multivariate_normal, norm, t
    from test_rules_numeric import Case, binary, inputs, normal, unary, uniform

    def positive(*shape: int) -> Any:
        return uniform(0.3, 3.0, *shape)

    axes = [({}, "all"), ({"axis": 1}, "axis=1"), ({"axis": 0}, "axis=0")]
    return {
        "expit": unary(special.expit, normal),
        "logit": unary(special.logit, lambda *s: uniform(0.1, 0.9, *s)),
        "erf": unary(special.erf, normal),
        "erfc": unary(special.erfc, normal),
        "gammaln": unary(special.gammaln, positive),
        "digamma": unary(special.digamma, positive),
        "xlogy": binary(special.xlogy, normal, positive),
        "logsumexp": [Case(special.logsumexp, inputs(normal(3, 4)), o, label) for o, label in axes]
        + [
            Case(special.logsumexp, inputs(normal(3, 4)), {"axis": 1, "keepdims": True}, "kd"),
            Case(special.logsumexp, inputs(normal(3)), {"b": np.array([0.5, 1.0, 2.0])}, "b"),
        ],
        "softmax": [Case(special.softmax, inputs(normal(3, 4)), o, label) for o, label in axes],
        "log_softmax": [
            Case(special.log_softmax, inputs(normal(3, 4)), o, label) for o, label in axes
        ],
        "norm_logpdf": [
            Case(norm.logpdf, inputs(normal(3, 2), normal(2), positive(3, 1)), {}, "broadcast"),
            Case(norm.logpdf, inputs(normal(4), normal(), positive()), {}, "scalars"),
        ],
        "multivariate_normal_logpdf": [
            Case(
                lambda x, m, c: multivariate_normal.logpdf(x, m, (c + c.T) / 2),
                inputs(normal(4, 3), normal(3), spd(3)),
                {},
                "batch of 4",
            ),
            Case(
                lambda x, m, c: multivariate_normal.logpdf(x, m, (c + c.T) / 2),
                inputs(normal(2), normal(2), spd(2)),
                {},
                "one point",
            ),
        ],
        "t_logpdf": [
            Case(
                t.logpdf,
                inputs(normal(3, 2), uniform(2.0, 6.0, 2), normal(2), positive(3, 1)),
                {},
                "broadcast",
            ),
        ],
        "norm_pdf": [
            Case(norm.pdf, inputs(normal(3, 2), normal(2), positive(3, 1)), {}, "broadcast"),
        ],
        "norm_cdf": [
            Case(norm.cdf, inputs(normal(3, 2), normal(2), positive(3, 1)), {}, "broadcast"),
            Case(norm.cdf, inputs(normal(4), normal(), positive()), {}, "scalars"),
        ],
    }
