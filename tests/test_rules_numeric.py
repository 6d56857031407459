"""Every derivative rule of the registry against central finite differences (float64).

The test walks ``all_rules()``, not the table below: a rule registered without an entry
in ``CASES`` fails with a message saying what to add, except an elementwise rule whose
record names a numpy function: its cases are then built from the record
(``from_record``). Each case calls ``rule.vjp`` directly (the registry's calling
convention: ``g``, then ``out`` and ``xp`` when the rule asks for them, then the
inputs, then the options by keyword), sums broadcasting results back with
``unbroadcast`` as the compiler does, and compares every input gradient with the
central difference of ``sum(g * primal(inputs))`` in float64. The same cases then run
in float32 to check that each gradient keeps its input's shape and dtype.

Domains are chosen away from kinks and poles (no ties for max/min, ``x > 0`` for log,
``|x| < 0.9`` for arcsin), so finite differences are a valid oracle.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from autodiff_tutor.rules.record import ELEMENTWISE
from autodiff_tutor.rules.registry import Rule, all_rules
from autodiff_tutor.runtime import helpers
from autodiff_tutor.runtime.backend import cast_like
from autodiff_tutor.runtime.helpers import unbroadcast

# --- the table: op -> primal + input sampler, with options --------------------------

Sampler = Callable[[np.random.Generator], list[Any]]


@dataclass
class Case:
    """One call of a rule: the primal, how to draw its inputs, the options."""

    primal: Callable[..., Any]
    sample: Sampler
    options: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    # indices of the inputs that carry gradient (None: all of them)
    differentiable: tuple[int, ...] | None = None


def normal(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.normal(size=shape)


def uniform(lo: float, hi: float, *shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.uniform(lo, hi, size=shape)


def away_from_zero(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Values with |v| in [0.5, 2] and a random sign: no kinks at 0, no poles."""
    return lambda rng: rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def svd_pullback_sample(rng: np.random.Generator) -> list[Any]:
    """Gradients at random and the reduced SVD ``u, s, vh`` of a random 4x3 matrix."""
    u, s, vh = np.linalg.svd(rng.normal(size=(4, 3)), full_matrices=False)
    return [*(rng.normal(size=np.shape(a)) for a in (u, s, vh)), u, s, vh]


def inputs(*samplers: Callable[[np.random.Generator], Any]) -> Sampler:
    return lambda rng: [s(rng) for s in samplers]


def sequence(*samplers: Callable[[np.random.Generator], Any]) -> Sampler:
    """One input that is a list of arrays (``concatenate``, ``stack``)."""
    return lambda rng: [[s(rng) for s in samplers]]


def distinct(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """A random permutation of well-separated values: max/min without ties."""
    n = int(np.prod(shape))
    return lambda rng: (rng.permutation(n) * 0.7 + rng.uniform(-0.1, 0.1, n)).reshape(shape)


UNARY_SHAPES = [(), (5,), (2, 3)]


def unary(primal: Callable[..., Any], make: Callable[..., Any]) -> list[Case]:
    """A unary elementwise op on a 0-d, a 1-d and a 2-d input."""
    return [Case(primal, inputs(make(*s)), label=f"shape{s}") for s in UNARY_SHAPES]


# broadcasting pairs of binary ops: equal shapes, (3,1)x(4), scalar x array, (2,1,4)x(3,1)
BINARY_SHAPES = [((2, 3), (2, 3)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ()), ((2, 1, 4), (3, 1))]


def binary(
    primal: Callable[..., Any],
    make_x: Callable[..., Any],
    make_y: Callable[..., Any] | None = None,
) -> list[Case]:
    make_y = make_y or make_x
    return [
        Case(primal, inputs(make_x(*sx), make_y(*sy)), label=f"{sx}x{sy}")
        for sx, sy in BINARY_SHAPES
    ]


def reductions(primal: Callable[..., Any], make: Callable[..., Any]) -> list[Case]:
    """axis None / 0 / -1 / a tuple, with and without keepdims, on a (2, 3, 4) array."""
    cases = []
    for axis in (None, 0, -1, 1):
        for keepdims in (False, True):
            options = {"axis": axis, "keepdims": keepdims}
            cases.append(Case(primal, inputs(make(2, 3, 4)), options, f"axis={axis}-kd={keepdims}"))
    cases.append(Case(primal, inputs(make(5)), {}, "1-d"))
    return cases


def fixed(value: Any) -> Callable[[np.random.Generator], Any]:
    return lambda rng: value


def getitem_primal(x: Any, index: Any = None) -> Any:
    return x[index]


def setitem_primal(x: Any, value: Any, index: Any = None) -> Any:
    y = x.copy()
    y[index] = value
    return y


MASK = np.array([[True, False, True, False, True], [False, False, True, True, False]] * 2)

GETITEM_INDICES: list[tuple[str, Any]] = [
    ("int", 1),
    ("negative-int", -1),
    ("slice", slice(1, None)),
    ("step-slice", slice(None, None, 2)),
    ("column", (slice(None), 2)),
    ("ellipsis-none", (Ellipsis, None)),
    ("none-slice-int", (None, slice(1, 3), 0)),
    ("int-array-repeats", np.array([0, 2, 0, 3, 3])),
    ("two-int-arrays", (np.array([0, 1, 1]), np.array([2, 2, 4]))),
    ("bool-mask", MASK),
    ("bool-rows", np.array([True, False, True, True])),
]


def matrix_one_norm_inputs(rng: np.random.Generator) -> list[Any]:
    """``grad, value, x, ord`` of ``norm_grad`` for ``np.linalg.norm(x, 1)``."""
    x = rng.normal(size=(3, 4))
    return [rng.normal(), np.linalg.norm(x, 1), x, 1]


CASES: dict[str, list[Case]] = {
    # arithmetic
    "add": binary(np.add, normal),
    "subtract": binary(np.subtract, normal),
    "multiply": binary(np.multiply, normal),
    "divide": binary(np.divide, normal, away_from_zero),
    "power": binary(np.power, lambda *s: uniform(0.5, 2.0, *s), lambda *s: uniform(-1.5, 2.5, *s)),
    "negative": unary(np.negative, normal),
    "positive": unary(np.positive, normal),
    "square": unary(np.square, normal),
    # exponentials and logarithms
    "exp": unary(np.exp, normal),
    "expm1": unary(np.expm1, normal),
    "log": unary(np.log, lambda *s: uniform(0.2, 3.0, *s)),
    "log1p": unary(np.log1p, lambda *s: uniform(-0.8, 3.0, *s)),
    "sqrt": unary(np.sqrt, lambda *s: uniform(0.2, 3.0, *s)),
    # trigonometric and hyperbolic
    "sin": unary(np.sin, normal),
    "cos": unary(np.cos, normal),
    "tan": unary(np.tan, lambda *s: uniform(-1.2, 1.2, *s)),
    "arcsin": unary(np.arcsin, lambda *s: uniform(-0.9, 0.9, *s)),
    "arccos": unary(np.arccos, lambda *s: uniform(-0.9, 0.9, *s)),
    "arctan": unary(np.arctan, normal),
    "sinh": unary(np.sinh, normal),
    "cosh": unary(np.cosh, normal),
    "tanh": unary(np.tanh, normal),
    # kinks, away from them
    "abs": unary(np.abs, away_from_zero),
    "maximum": binary(np.maximum, normal),
    "minimum": binary(np.minimum, normal),
    "clip": [
        Case(
            np.clip,
            inputs(normal(3, 4), uniform(-1.5, -0.2, 4), uniform(0.2, 1.5, 3, 1)),
            label="bounds (4,) and (3,1)",
        ),
        Case(
            np.clip,
            inputs(normal(6), fixed(np.float64(-0.35)), fixed(np.float64(0.45))),
            label="scalar bounds",
        ),
    ],
    "where": [
        Case(
            np.where,
            inputs(lambda rng: rng.uniform(size=(3, 1)) > 0.5, normal(4), normal()),
            label="cond (3,1), x (4,), y ()",
            differentiable=(1, 2),
        ),
        Case(
            np.where,
            inputs(lambda rng: np.array([True, False, True]), normal(2, 3), normal(2, 3)),
            label="same shapes",
            differentiable=(1, 2),
        ),
    ],
    # reductions
    "sum": reductions(np.sum, normal)
    + [Case(np.sum, inputs(normal(2, 3, 4)), {"axis": (0, 2)}, "axis=(0,2)")],
    "mean": reductions(np.mean, normal)
    + [Case(np.mean, inputs(normal(2, 3, 4)), {"axis": (0, -1), "keepdims": True}, "axis=(0,-1)")],
    "max": reductions(np.max, distinct),
    "min": reductions(np.min, distinct),
    "prod": reductions(np.prod, lambda *s: uniform(0.5, 1.5, *s))
    + [
        Case(np.prod, inputs(fixed(np.array([2.0, 0.0, -1.5, 0.7]))), {}, "one zero"),
        Case(np.prod, inputs(fixed(np.array([[0.0, 3.0], [0.0, 0.0]]))), {"axis": 0}, "zeros"),
        Case(np.prod, inputs(uniform(0.5, 1.5, 2, 3, 4)), {"axis": (0, 2)}, "axis=(0,2)"),
        Case(
            np.prod,
            inputs(fixed(np.array([[[0.0, 2.0], [1.5, 0.5]], [[3.0, 0.0], [0.0, 1.0]]]))),
            {"axis": (0, -1), "keepdims": True},
            "axes with zeros",
        ),
    ],
    # linear algebra
    "matmul": [
        Case(np.matmul, inputs(normal(*sx), normal(*sy)), label=f"{sx}@{sy}")
        for sx, sy in [
            ((3,), (3,)),
            ((2, 3), (3,)),
            ((3,), (3, 4)),
            ((2, 3), (3, 4)),
            ((5, 2, 3), (3, 4)),
            ((2, 3), (5, 3, 4)),
            ((2, 1, 2, 3), (4, 3, 2)),
            ((5, 2, 3), (3,)),
            ((3,), (5, 3, 2)),
        ]
    ],
    "dot": [
        Case(np.dot, inputs(normal(*sx), normal(*sy)), label=f"{sx}.{sy}")
        for sx, sy in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((), (2, 3))]
    ],
    "norm": [
        Case(np.linalg.norm, inputs(away_from_zero(5)), {}, "vector"),
        Case(np.linalg.norm, inputs(away_from_zero(3, 4)), {}, "matrix (Frobenius)"),
        Case(np.linalg.norm, inputs(away_from_zero(3, 4)), {"axis": -1}, "axis=-1"),
        Case(np.linalg.norm, inputs(away_from_zero(3, 4)), {"axis": 0, "keepdims": True}, "ax0-kd"),
        Case(np.linalg.norm, inputs(away_from_zero(4)), {"ord": 2, "axis": 0}, "ord=2"),
        Case(np.linalg.norm, inputs(away_from_zero(5)), {"ord": 1}, "ord=1"),
        Case(np.linalg.norm, inputs(distinct(5)), {"ord": np.inf}, "ord=inf"),
        Case(np.linalg.norm, inputs(distinct(5)), {"ord": -np.inf}, "ord=-inf"),
        Case(np.linalg.norm, inputs(away_from_zero(5)), {"ord": 3}, "ord=3"),
        Case(np.linalg.norm, inputs(away_from_zero(5)), {"ord": 0.5}, "ord=0.5"),
        Case(np.linalg.norm, inputs(away_from_zero(3, 4)), {"ord": 1, "axis": 1}, "rows ord=1"),
        Case(
            np.linalg.norm,
            inputs(away_from_zero(3, 4)),
            {"ord": 3, "axis": 0, "keepdims": True},
            "columns ord=3 kd",
        ),
    ],
    # shapes
    "reshape": [
        Case(np.reshape, inputs(normal(2, 3)), {"shape": (3, 2)}, "(2,3)->(3,2)"),
        Case(np.reshape, inputs(normal(2, 3, 2)), {"shape": (-1,)}, "flatten"),
        Case(np.reshape, inputs(normal(6)), {"shape": (1, 2, 3)}, "add axes"),
    ],
    "squeeze": [
        Case(np.squeeze, inputs(normal(1, 3, 1)), {}, "all"),
        Case(np.squeeze, inputs(normal(1, 3, 1)), {"axis": 0}, "axis=0"),
        Case(np.squeeze, inputs(normal(2, 1)), {"axis": -1}, "axis=-1"),
    ],
    "expand_dims": [
        Case(np.expand_dims, inputs(normal(2, 3)), {"axis": 0}, "axis=0"),
        Case(np.expand_dims, inputs(normal(2, 3)), {"axis": -1}, "axis=-1"),
        Case(np.expand_dims, inputs(normal(2, 3)), {"axis": 1}, "axis=1"),
    ],
    "transpose": [
        Case(np.transpose, inputs(normal(2, 3)), {}, "matrix"),
        Case(np.transpose, inputs(normal(2, 3, 4)), {}, "3-d reversed"),
        Case(np.transpose, inputs(normal(2, 3, 4)), {"axes": (1, 2, 0)}, "axes=(1,2,0)"),
        Case(np.transpose, inputs(normal(2, 3, 4)), {"axes": (-1, 0, 1)}, "negative axes"),
    ],
    "concatenate": [
        Case(np.concatenate, sequence(normal(2, 3), normal(1, 3)), {"axis": 0}, "axis=0"),
        Case(
            np.concatenate,
            sequence(normal(2, 3), normal(2, 1), normal(2, 2)),
            {"axis": -1},
            "axis=-1",
        ),
        Case(np.concatenate, sequence(normal(3), normal(2)), {}, "1-d default axis"),
        Case(np.concatenate, sequence(normal(2, 3), normal(4)), {"axis": None}, "axis=None"),
    ],
    "stack": [
        Case(np.stack, sequence(normal(2, 3), normal(2, 3)), {"axis": 0}, "axis=0"),
        Case(np.stack, sequence(normal(2, 3), normal(2, 3), normal(2, 3)), {"axis": -1}, "axis=-1"),
        Case(np.stack, sequence(normal(3), normal(3)), {"axis": 1}, "axis=1"),
    ],
    "getitem": [
        Case(getitem_primal, inputs(normal(4, 5)), {"index": index}, label)
        for label, index in GETITEM_INDICES
    ]
    + [Case(getitem_primal, inputs(normal(2, 3, 4)), {"index": (Ellipsis, 1)}, "3-d ellipsis")],
    "astype": [
        Case(
            lambda x, dtype=None: x.astype(dtype),
            inputs(normal(2, 3)),
            {"dtype": np.float64},
            "to float64",
        ),
    ],
    "copy": unary(np.copy, normal),
    "setitem": [
        Case(setitem_primal, inputs(normal(4, 5), normal(*shape)), {"index": index}, label)
        for label, index, shape in [
            ("row", 1, (5,)),
            ("row broadcast", 1, ()),
            ("slice", slice(1, 3), (2, 5)),
            ("column broadcast", (slice(None), 2), (1,)),
            ("mask", MASK, (MASK.sum(),)),
            ("ellipsis", (Ellipsis, 0), (4,)),
        ]
    ],
    "list_append": [
        Case(
            lambda xs, x: xs + [x],
            lambda rng: [[rng.normal(size=2), rng.normal(size=3)], rng.normal(size=(2, 2))],
            label="two + one",
        ),
        Case(lambda xs, x: xs + [x], lambda rng: [[], rng.normal(size=3)], label="empty + one"),
    ],
    "make_list": [
        Case(lambda xs: list(xs), sequence(normal(2), normal(3, 1)), label="two arrays"),
    ],
    "list_setitem": [
        Case(
            lambda xs, x, index: [x if i == index % len(xs) else v for i, v in enumerate(xs)],
            lambda rng: [[rng.normal(size=2), rng.normal(size=(3, 1))], rng.normal(size=4)],
            {"index": index},
            label=label,
        )
        for index, label in [(0, "first"), (-1, "last")]
    ],
    # --- the runtime helpers of generated code, as primitives (second derivatives) ---
    # Their shape-only parameters (x in unbroadcast(grad, x)...) carry no gradient.
    "unbroadcast": [
        Case(
            helpers.unbroadcast,
            inputs(normal(2, 3), normal(3)),
            label="(2,3)->(3,)",
            differentiable=(0,),
        ),
        Case(
            helpers.unbroadcast,
            inputs(normal(2, 3), normal(2, 1)),
            label="(2,3)->(2,1)",
            differentiable=(0,),
        ),
    ],
    "unreduce": [
        Case(
            helpers.unreduce,
            inputs(normal(2), normal(2, 3)),
            {"axis": 1},
            "axis=1",
            differentiable=(0,),
        ),
        Case(
            helpers.unreduce, inputs(normal(), normal(2, 3)), {}, "axis=None", differentiable=(0,)
        ),
        Case(
            helpers.unreduce,
            inputs(normal(1, 3), normal(2, 3)),
            {"axis": 0, "keepdims": True},
            "keepdims",
            differentiable=(0,),
        ),
    ],
    "cast_like": [
        Case(cast_like, inputs(normal(3), normal(3)), label="same dtype", differentiable=(0,)),
    ],
    "broadcast_like": [
        Case(
            helpers.broadcast_like,
            inputs(normal(3), normal(2, 3)),
            label="(3,)->(2,3)",
            differentiable=(0,),
        ),
        Case(
            helpers.broadcast_like,
            inputs(normal(2, 1), normal(2, 4)),
            label="(2,1)->(2,4)",
            differentiable=(0,),
        ),
    ],
    "checked_gradient": [
        Case(helpers.checked_gradient, inputs(normal(2, 3), normal(2, 3)), differentiable=(0,)),
    ],
    "checked_output": [Case(helpers.checked_output, inputs(normal(2, 3)))],
    "untranspose": [
        Case(helpers.untranspose, inputs(normal(3, 2)), {"axes": (1, 0)}, "2-d"),
        Case(helpers.untranspose, inputs(normal(4, 2, 3)), {"axes": (2, 0, 1)}, "3-d"),
        Case(helpers.untranspose, inputs(normal(2, 3, 4)), {"axes": (-1, 0, 1)}, "negative axes"),
    ],
    "matmul_dx": [
        Case(
            helpers.matmul_dx,
            inputs(normal(2, 4), normal(2, 3), normal(3, 4)),
            label="2-d",
            differentiable=(0, 2),
        ),
        Case(
            helpers.matmul_dx,
            inputs(normal(2), normal(2, 3), normal(3)),
            label="matrix@vec",
            differentiable=(0, 2),
        ),
    ],
    "matmul_dy": [
        Case(
            helpers.matmul_dy,
            inputs(normal(2, 4), normal(2, 3), normal(3, 4)),
            label="2-d",
            differentiable=(0, 1),
        ),
        Case(
            helpers.matmul_dy,
            inputs(normal(4), normal(3), normal(3, 4)),
            label="vec@matrix",
            differentiable=(0, 1),
        ),
    ],
    "dot_dx": [
        Case(
            helpers.dot_dx,
            inputs(normal(2, 4), normal(2, 3), normal(3, 4)),
            label="2-d",
            differentiable=(0, 2),
        ),
    ],
    "dot_dy": [
        Case(
            helpers.dot_dy,
            inputs(normal(2, 4), normal(2, 3), normal(3, 4)),
            label="2-d",
            differentiable=(0, 1),
        ),
    ],
    "scatter": [
        Case(
            helpers.scatter,
            inputs(normal(5), normal(4, 5)),
            {"index": 1},
            "row",
            differentiable=(0,),
        ),
        Case(
            helpers.scatter,
            inputs(normal(3), normal(4)),
            {"index": np.array([0, 2, 0])},
            "repeated",
            differentiable=(0,),
        ),
    ],
    "overwritten": [
        Case(helpers.overwritten, inputs(normal(4, 2)), {"index": slice(1, 3)}, "slice"),
    ],
    "assign_at": [
        Case(
            helpers.assign_at,
            inputs(normal(4, 3), fixed(1), normal(3)),
            label="row",
            differentiable=(0, 2),
        ),
        Case(
            helpers.assign_at,
            inputs(normal(4, 3), fixed((slice(None), 0)), normal()),
            label="column broadcast",
            differentiable=(0, 2),
        ),
    ],
    "split_like": [
        Case(
            helpers.split_like,
            lambda rng: [
                rng.normal(size=(5, 2)),
                [rng.normal(size=(2, 2)), rng.normal(size=(3, 2))],
            ],
            label="axis 0",
            differentiable=(0,),
        ),
    ],
    "unstack": [
        Case(helpers.unstack, inputs(normal(3, 2)), {"axis": 0}, "axis=0"),
        Case(helpers.unstack, inputs(normal(3, 2)), {"axis": -1}, "axis=-1"),
    ],
    "add_lists": [
        Case(
            helpers.add_lists,
            lambda rng: [
                [rng.normal(size=2), rng.normal(size=(2, 2))],
                [rng.normal(size=2), rng.normal(size=(2, 2))],
            ],
            label="two lists",
        ),
    ],
    "prod_others": [
        Case(helpers.prod_others, inputs(uniform(0.5, 1.5, 4)), {}, "1-d"),
        Case(helpers.prod_others, inputs(uniform(0.5, 1.5, 2, 3)), {"axis": 1}, "axis=1"),
        Case(helpers.prod_others, inputs(fixed(np.array([2.0, 0.0, -1.5, 0.0]))), {}, "zeros"),
    ],
    "einsum_operand": [
        Case(
            helpers.einsum_operand,
            inputs(fixed("ij,jk->ik"), normal(2, 4), normal(2, 3), normal(3, 4), fixed(1)),
            differentiable=(1, 2, 3),
        ),
    ],
    "cumprod_grad": [
        Case(helpers.cumprod_grad, inputs(normal(2, 3), uniform(0.5, 1.5, 2, 3)), {"axis": 1}),
        Case(helpers.cumprod_grad, inputs(normal(4), fixed(np.array([2.0, 0.0, -1.5, 0.0]))), {}),
    ],
    # (the full tables of these are in tests/test_rules_helpers.py)
    "undo_diff": [Case(helpers.undo_diff, inputs(normal(2, 3)), {"n": 2}, "n=2")],
    "unpad": [
        Case(
            helpers.unpad,
            inputs(
                normal(
                    6,
                )
            ),
            {"pad_width": 1, "mode": "edge"},
            "edge",
        )
    ],
    "unsplit": [Case(helpers.unsplit, inputs(lambda r: [r.normal(size=2), r.normal(size=3)]), {})],
    "embed_diagonal": [
        Case(helpers.embed_diagonal, inputs(normal(2), normal(3, 2)), {}, "", differentiable=(0,))
    ],
    "untake_along_axis": [
        Case(
            helpers.untake_along_axis,
            inputs(normal(2, 1), normal(2, 3), fixed(np.array([[0], [2]]))),
            {"axis": 1},
            differentiable=(0,),
        )
    ],
    "eigh_grad": [
        Case(
            helpers.eigh_grad,
            inputs(normal(3), normal(3, 3), fixed(np.array([-1.0, 0.5, 2.0])), normal(3, 3)),
            {},
        )
    ],
    "svd_pullback": [
        Case(helpers.svd_pullback, svd_pullback_sample, {}, "tall"),
    ],
    "norm_grad": [
        Case(
            lambda grad, value, x, ord: helpers.norm_grad(grad, np.linalg.norm(x, 1), x, 1),
            matrix_one_norm_inputs,
            {},
            "matrix 1, the norm recomputed",
            differentiable=(0, 2),
        )
    ],
    "unjoin": [
        Case(
            helpers.unjoin,
            inputs(normal(5), fixed([np.zeros(2), np.zeros(3)]), fixed("hstack")),
            {},
            differentiable=(0,),
        )
    ],
}


def from_record(rule: Rule) -> list[Case]:
    """Cases for an elementwise rule that the table above does not list, from its record
    alone: numpy's function of the op's name on the unary or binary shapes, inputs drawn
    from the record's domain (its ``positive`` inputs from [0.2, 3], the others normal).

    So adding an elementwise primitive adds its finite-difference checks."""
    primal = getattr(np, rule.op, None)
    if primal is None or len(rule.inputs) > 2:
        return []  # no numpy function of that name: the walk asks for an entry
    positive = rule.symbolic.positive if rule.symbolic is not None else ()
    makes = [
        (lambda *s: uniform(0.2, 3.0, *s)) if name in positive else normal for name in rule.inputs
    ]
    return unary(primal, makes[0]) if len(makes) == 1 else binary(primal, *makes)


CASES.update(
    {
        op: from_record(rule)
        for op, rule in all_rules().items()
        if op not in CASES and rule.shape == ELEMENTWISE and from_record(rule)
    }
)

# the breadth primitives' cases (statistics, arrangement, linear algebra, scipy)
from rule_cases_breadth import breadth_cases  # noqa: E402

CASES.update(breadth_cases())

# several results (splits, slogdet, eigh, svd), matrix norms, N-d dot: added to the table
from rule_cases_results import results_cases  # noqa: E402

for _op, _cases in results_cases().items():
    CASES[_op] = CASES.get(_op, []) + _cases

# --- calling a rule and the finite-difference oracle ---------------------------------


def call_rule(rule: Rule, g: Any, out: Any, args: list[Any], options: dict[str, Any]) -> list[Any]:
    """The rule's gradients, one entry per input, as the compiler would use them."""
    special = [g]
    if rule.uses_out:
        special.append(out)
    if rule.uses_xp:
        special.append(np)
    result = rule.vjp(*special, *args, **options)
    grads = [result] if len(rule.inputs) == 1 else list(result)
    assert len(grads) == len(rule.inputs), f"{rule.op}: {len(grads)} gradients for {rule.inputs}"
    if rule.sequence:
        grads = [list(grads[0])]
    if rule.broadcasting:
        grads = [None if d is None else unbroadcast(d, x) for d, x in zip(grads, args, strict=True)]
    return grads


def _leaves(value: Any) -> list[np.ndarray]:
    """The arrays of an input: the input itself, or each array of a sequence input."""
    return list(value) if isinstance(value, list) else [value]


def central_difference(
    primal: Callable[..., Any], args: list[Any], options: dict[str, Any], g: Any, i: int
) -> list[np.ndarray]:
    """d/d args[i] of sum(g * primal(args)), element by element, in float64.

    A primal that returns a list of arrays (``list_append``) has a list ``g``.
    """

    # private copies as real arrays (a 0-d input may be a numpy scalar, which is immutable)
    args = [
        [np.array(v) for v in a]
        if isinstance(a, list)
        else a
        if isinstance(a, tuple)
        else np.array(a)
        for a in args
    ]

    def loss() -> float:
        out = primal(*args, **options)
        if isinstance(out, list):
            return float(sum(np.sum(gi * oi) for gi, oi in zip(g, out, strict=True)))
        return float(np.sum(g * out))

    gradients = []
    for leaf in _leaves(args[i]):
        grad = np.zeros(np.shape(leaf))
        flat = leaf.reshape(-1)  # a view: perturbing it perturbs the input
        for j in range(flat.size):
            v = flat[j]
            h = 1e-6 * max(1.0, abs(v))
            flat[j] = v + h
            up = loss()
            flat[j] = v - h
            down = loss()
            flat[j] = v
            grad.reshape(-1)[j] = (up - down) / (2 * h)
        gradients.append(grad)
    return gradients


def _as_arrays(value: Any, dtype: Any) -> Any:
    """Floating inputs as arrays of ``dtype`` (0-d inputs as numpy scalars)."""
    if isinstance(value, list):
        return [_as_arrays(v, dtype) for v in value]
    if isinstance(value, (tuple, slice)):  # an index given as an input (assign_at)
        return value
    value = np.asarray(value)
    if value.dtype.kind != "f":
        return value
    value = value.astype(dtype)
    return value if value.ndim else value[()]


def _params() -> list[Any]:
    params = []
    for op in sorted(all_rules()):
        if op not in CASES:
            params.append(pytest.param(op, None, id=f"{op}-MISSING"))
            continue
        for k, case in enumerate(CASES[op]):
            params.append(pytest.param(op, case, id=f"{op}-{case.label or k}"))
    return params


def _prepare(op: str, case: Case | None, dtype: Any) -> tuple[Rule, list[Any], Any, Any]:
    rule = all_rules()[op]
    if case is None:
        pytest.fail(
            f"rule {op!r} has no finite-difference case: add an entry\n"
            f"    {op!r}: [Case(<numpy primal>, inputs(<sampler per input>), "
            f"{{<options>}}, '<label>')],\n"
            f"to CASES in tests/test_rules_numeric.py (its inputs are {rule.inputs}, "
            f"its options {dict(rule.options)})"
        )
    unknown = set(case.options) - set(rule.options)
    assert not unknown, f"{op}: options {unknown} are not parameters of the rule"
    rng = np.random.default_rng(zlib.crc32(f"{op}-{case.label}".encode()))
    args = _as_arrays(case.sample(rng), dtype)
    assert len(args) == len(rule.inputs), f"{op}: the case draws {len(args)} inputs"
    out = case.primal(*args, **case.options)
    if isinstance(out, list):  # list-valued primitives: one seed array per element
        g = [_as_arrays(rng.normal(size=np.shape(o)), dtype) for o in out]
    else:
        g = _as_arrays(rng.normal(size=np.shape(out)), dtype)
    return rule, args, out, g


@pytest.mark.parametrize(("op", "case"), _params())
def test_rule_matches_finite_differences(op: str, case: Case | None) -> None:
    rule, args, out, g = _prepare(op, case, np.float64)
    grads = call_rule(rule, g, out, args, case.options)
    which = case.differentiable or range(len(rule.inputs))
    for i in range(len(rule.inputs)):
        if i not in which:
            assert grads[i] is None, f"{op}: input {rule.inputs[i]} carries no gradient"
            continue
        expected = central_difference(case.primal, args, case.options, g, i)
        got = _leaves(grads[i])
        assert len(got) == len(expected), f"{op}: {len(got)} pieces for {len(expected)} arrays"
        for piece, want, x in zip(got, expected, _leaves(args[i]), strict=True):
            assert np.shape(piece) == np.shape(x), f"{op} d{rule.inputs[i]}: shape"
            np.testing.assert_allclose(
                piece, want, rtol=1e-6, atol=1e-7, err_msg=f"{op}: d/d{rule.inputs[i]}"
            )


@pytest.mark.parametrize(("op", "case"), _params())
def test_rule_keeps_shape_and_float32(op: str, case: Case | None) -> None:
    rule, args, out, g = _prepare(op, case, np.float32)
    grads = call_rule(rule, g, out, args, case.options)
    which = case.differentiable or range(len(rule.inputs))
    for i in which:
        for piece, x in zip(_leaves(grads[i]), _leaves(args[i]), strict=True):
            name = f"{op} d{rule.inputs[i]}"
            assert np.shape(piece) == np.shape(x), f"{name}: shape {np.shape(piece)}"
            assert np.asarray(piece).dtype == np.float32, f"{name}: dtype {piece.dtype}"


def test_no_stale_entries() -> None:
    stale = sorted(set(CASES) - set(all_rules()))
    assert not stale, f"CASES has entries for ops that are no longer rules: {stale}"


def test_the_oracle_catches_a_wrong_rule() -> None:
    """The check can fail: a sine rule with the wrong sign is rejected."""
    rule = Rule("sin", lambda g, xp, x: -g * xp.cos(x), ("x",), {}, False, True)
    rng = np.random.default_rng(0)
    x, g = rng.normal(size=4), rng.normal(size=4)
    grads = call_rule(rule, g, np.sin(x), [x], {})
    expected = central_difference(np.sin, [x], {}, g, 0)[0]
    assert not np.allclose(grads[0], expected, rtol=1e-6, atol=1e-7)


# Calls outside what a rule's formula covers: the rule must be right, or refuse clearly
# (an AutodiffError), never return a silent wrong gradient or fail deep inside numpy.
RIGHT_OR_REJECTED = [
    (
        "setitem",  # repeated indices: only the last write lands
        Case(
            setitem_primal,
            inputs(normal(4), normal(3)),
            {"index": np.array([0, 2, 0])},
            "repeated index",
        ),
    ),
]


@pytest.mark.parametrize(
    ("op", "case"), [pytest.param(op, c, id=f"{op}-{c.label}") for op, c in RIGHT_OR_REJECTED]
)
def test_rule_outside_its_formula_is_right_or_rejected(op: str, case: Case) -> None:
    from autodiff_tutor.errors import AutodiffError

    rule, args, out, g = _prepare(op, case, np.float64)
    try:
        grads = call_rule(rule, g, out, args, case.options)
    except AutodiffError:
        return  # refused with a clear error: fine
    for i, x in enumerate(args):
        expected = central_difference(case.primal, args, case.options, g, i)[0]
        assert np.shape(grads[i]) == np.shape(x), f"{op} d{rule.inputs[i]}: shape"
        np.testing.assert_allclose(
            grads[i], expected, rtol=1e-6, atol=1e-7, err_msg=f"{op} {case.label}: silent wrong"
        )
