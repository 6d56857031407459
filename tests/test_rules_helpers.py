"""The derivative rules of the runtime helpers (``autodiff_tutor/rules/helper_rules.py``).

Generated backward code calls these helpers, so differentiating it again uses their
rules. Each helper is checked like a primitive, on the table below: its vjp element by
element against central differences (float64), its jvp against central differences
along random directions, the transpose identity between the two, inactive inputs
inlined both ways, and float32 shapes and dtypes. The rule's parameters mirror the
helper's signature (its ``g`` renamed ``grad``), and the resolver names the helper by
the rule's op.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from rule_cases_breadth import SCAN_ZEROS
from test_rules_numeric import (
    CASES,
    GETITEM_INDICES,
    MASK,
    Case,
    call_rule,
    central_difference,
    fixed,
    inputs,
    normal,
    uniform,
)
from test_rules_tangents import (
    case_params,
    check_float32,
    check_inactive_inputs,
    check_jvp_against_differences,
    check_transpose_identity,
    prepare,
)

from autodiff_tutor.rules import names
from autodiff_tutor.rules.registry import all_rules, helper_ops, is_nondifferentiable
from autodiff_tutor.runtime import backend, helpers

WHERE = "HELPER_CASES in tests/test_rules_helpers.py"


def helper(op: str) -> Any:
    return getattr(helpers, op, None) or getattr(backend, op)


def with_grad(shape_of_grad: Any, *samplers: Any) -> Any:
    """Inputs ``grad, *others`` where grad's shape is computed from the others."""

    def sample(rng: np.random.Generator) -> list[Any]:
        others = [s(rng) for s in samplers]
        return [rng.normal(size=shape_of_grad(*others)), *others]

    return sample


def zeros(*shape: int) -> Any:
    return lambda rng: np.zeros(shape)


def spread(*shape: int) -> Any:
    """Distinct eigenvalues in increasing order along the last axis, at least 1 apart."""
    return lambda rng: np.cumsum(1.0 + rng.uniform(size=shape), axis=-1) - 2.0


def matmul_shape(x: Any, y: Any) -> tuple[int, ...]:
    return np.shape(np.matmul(x, y))


def dot_shape(x: Any, y: Any) -> tuple[int, ...]:
    return np.shape(np.dot(x, y))


def operand_shapes(op: str) -> list[tuple[tuple[int, ...], ...]]:
    """The operand shapes of the numeric table's cases of ``op`` (matmul, dot)."""
    rng = np.random.default_rng(0)
    return [tuple(np.shape(a) for a in case.sample(rng)) for case in CASES[op]]


MATMUL_SHAPES = operand_shapes("matmul")
DOT_SHAPES = operand_shapes("dot")


def bilinear(primal: Any, shapes: Any, grad_shape: Any, active: tuple[int, ...]) -> list[Case]:
    return [
        Case(primal, with_grad(grad_shape, normal(*sx), normal(*sy)), {}, f"{sx}x{sy}", active)
        for sx, sy in shapes
    ]


def reduced(x_shape: tuple[int, ...], options: dict[str, Any]) -> Case:
    grad = np.shape(np.sum(np.zeros(x_shape), **options))
    return Case(helpers.unreduce, inputs(normal(*grad), normal(*x_shape)), options, "", (0,))


def prod_case(sample: Any, options: dict[str, Any], label: str) -> Case:
    return Case(helpers.prod_others, inputs(sample), options, label)


def norm_grad_of(grad: Any, value: Any, x: Any, ord: Any, **options: Any) -> Any:
    """norm_grad with the norm's value recomputed from x, as it always is where the
    helper runs: so differences in x and in the value see the helper's true dependence
    (none, away from kinks, for the ords whose rule the helper has)."""
    ord = ord.item()  # the table gives it as a 0-d array
    return helpers.norm_grad(grad, np.linalg.norm(x, ord, **options), x, ord, **options)


def norm_grad_inputs(shape: tuple[int, ...], ord: Any, options: dict[str, Any]) -> Any:
    def sample(rng: np.random.Generator) -> list[Any]:
        x = rng.normal(size=shape)
        value = np.linalg.norm(x, ord, **options)
        return [rng.normal(size=np.shape(value)), value, x, ord]

    return sample


def svd_pullback_inputs(m: int, n: int, batch: tuple[int, ...]) -> Any:
    """``gu, gs, gvh`` at random, and ``u, s, vh``: the reduced SVD of a random matrix
    (its singular values distinct and nonzero, as the rule needs)."""

    def sample(rng: np.random.Generator) -> list[Any]:
        u, s, vh = np.linalg.svd(rng.normal(size=(*batch, m, n)), full_matrices=False)
        grads = [rng.normal(size=np.shape(a)) for a in (u, s, vh)]
        return [*grads, u, s, vh]

    return sample


HELPER_CASES: dict[str, list[Case]] = {
    "unbroadcast": [
        Case(helpers.unbroadcast, inputs(normal(*g), normal(*x)), {}, f"{g}->{x}", (0,))
        for g, x in [((2, 3, 4), (3, 1)), ((2, 3), ()), ((2, 3), (1, 3)), ((4, 3), (4, 3))]
    ],
    "unreduce": [
        reduced((3, 4), {"axis": 1}),
        reduced((2, 3, 4), {"axis": 1}),
        reduced((2, 3, 4), {"axis": 1, "keepdims": True}),
        reduced((2, 3, 4), {"axis": (0, 2)}),
        reduced((2, 3, 4), {"axis": -1}),
        reduced((2, 3), {}),
        reduced((2, 3), {"keepdims": True}),
        Case(helpers.unreduce, inputs(normal(), normal(3, 4)), {"axis": 0}, "grad broadcast", (0,)),
    ],
    "broadcast_like": [
        Case(helpers.broadcast_like, inputs(normal(*v), normal(*like)), {}, f"{v}->{like}", (0,))
        for v, like in [((3,), (2, 3)), ((2, 1), (2, 4)), ((), (3,)), ((2, 3), (2, 3))]
    ],
    "checked_gradient": [
        Case(helpers.checked_gradient, inputs(normal(*s), normal(*s)), {}, f"{s}", (0,))
        for s in [(3,), (2, 3), ()]
    ],
    "checked_output": [Case(helpers.checked_output, inputs(normal(2, 3)), {}, "array")],
    "cast_like": [Case(backend.cast_like, inputs(normal(2, 3), normal(2, 3)), {}, "same", (0,))],
    "matmul_dx": bilinear(helpers.matmul_dx, MATMUL_SHAPES, matmul_shape, (0, 2)),
    "matmul_dy": bilinear(helpers.matmul_dy, MATMUL_SHAPES, matmul_shape, (0, 1)),
    "dot_dx": bilinear(helpers.dot_dx, DOT_SHAPES, dot_shape, (0, 2)),
    "dot_dy": bilinear(helpers.dot_dy, DOT_SHAPES, dot_shape, (0, 1)),
    "scatter": [
        Case(
            helpers.scatter,
            with_grad(lambda x, index=index: np.shape(x[index]), normal(4, 5)),
            {"index": index},
            label,
            (0,),
        )
        for label, index in GETITEM_INDICES
    ],
    "overwritten": [
        Case(helpers.overwritten, inputs(normal(4, 5)), {"index": index}, label)
        for label, index in [
            ("int", 1),
            ("slice", slice(1, 3)),
            ("column", (slice(None), 2)),
            ("mask", MASK),
            ("int-array", np.array([0, 2])),
        ]
    ],
    "assign_at": [
        Case(
            helpers.assign_at, inputs(normal(4, 5), fixed(index), normal(*shape)), {}, label, (0, 2)
        )
        for label, index, shape in [
            ("row", np.array(1), (5,)),
            ("row broadcast", np.array(2), ()),
            ("rows", np.array([3, 0]), (2, 5)),
            ("mask", MASK, (MASK.sum(),)),
        ]
    ],
    "split_like": [
        Case(
            helpers.split_like,
            inputs(normal(5, 3), fixed([np.zeros((2, 3)), np.zeros((3, 3))])),
            {"axis": 0},
            "axis=0",
            (0,),
        ),
        Case(
            helpers.split_like,
            inputs(normal(2, 4), fixed([np.zeros((2, 1)), np.zeros((2, 3))])),
            {"axis": -1},
            "axis=-1",
            (0,),
        ),
        Case(
            helpers.split_like,
            inputs(normal(5), fixed([np.zeros(3), np.zeros(2)])),
            {},
            "1-d",
            (0,),
        ),
    ],
    "unstack": [
        Case(helpers.unstack, inputs(normal(3, 2, 4)), {"axis": axis}, f"axis={axis}")
        for axis in (0, 1, -1)
    ],
    "untranspose": [
        Case(helpers.untranspose, inputs(normal(*shape)), {"axes": axes}, f"axes={axes}")
        for shape, axes in [((3, 2), (1, 0)), ((4, 2, 3), (2, 0, 1)), ((2, 3, 4), (-1, 0, 1))]
    ],
    "add_lists": [
        Case(
            helpers.add_lists,
            inputs(
                lambda rng: [rng.normal(size=2), rng.normal(size=(3, 1))],
                lambda rng: [rng.normal(size=2), rng.normal(size=(3, 1))],
            ),
            {},
            "two lists",
        )
    ],
    "prod_others": [
        prod_case(uniform(0.5, 1.5, 5), {}, "1-d"),
        prod_case(uniform(0.5, 1.5, 2, 3, 4), {}, "axis=None"),
        prod_case(uniform(-1.5, 1.5, 2, 3, 4), {"axis": 0}, "axis=0"),
        prod_case(uniform(-1.5, 1.5, 2, 3, 4), {"axis": 1}, "axis=1"),
        prod_case(uniform(-1.5, 1.5, 2, 3, 4), {"axis": -1}, "axis=-1"),
        prod_case(uniform(-1.5, 1.5, 2, 3, 4), {"axis": (0, 2)}, "axis=(0, 2)"),
        prod_case(uniform(-1.5, 1.5, 2, 3, 4), {"axis": (-1, 1)}, "axis=(-1, 1)"),
        prod_case(
            fixed(np.array([[0.0, 3.0, 0.0], [2.0, 0.0, 1.5]])), {"axis": (0, 1)}, "tuple, zeros"
        ),
        prod_case(fixed(np.array([2.0, 0.0, -1.5, 0.7])), {}, "one zero"),
        prod_case(fixed(np.array([[0.0, 3.0, 0.0], [0.0, 0.0, 0.0]])), {"axis": 1}, "zeros"),
        prod_case(fixed(np.array([[0.0, 2.0], [0.0, 0.5], [4.0, 0.0]])), {"axis": 0}, "two zeros"),
    ],
    "einsum_operand": [  # the gradient of a two-operand einsum, for operand 0 or 1
        Case(
            helpers.einsum_operand,
            inputs(fixed(s), normal(*g), normal(*a), normal(*b), fixed(which)),
            {},
            f"{s} {which}",
            (1, 2, 3),
        )
        for s, g, a, b, which in [
            ("ij,jk->ik", (2, 4), (2, 3), (3, 4), 0),
            ("ij,jk->ik", (2, 4), (2, 3), (3, 4), 1),
            ("ij,j->i", (3,), (3, 4), (4,), 1),
            ("i,i->", (), (3,), (3,), 0),
            ("...j,j", (2,), (2, 3), (3,), 0),
            ("ij,kj->ik", (1, 2), (1, 3), (2, 3), 1),
        ]
    ],
    "undo_diff": [  # the gradient of np.diff: grad has the differences' shape
        Case(helpers.undo_diff, inputs(normal(*shape)), options, label)
        for shape, options, label in [
            ((4,), {}, "n=1"),
            ((2, 3), {"n": 2}, "n=2"),
            ((3, 2), {"axis": 0}, "axis=0"),
            ((2, 1, 3), {"n": 3, "axis": 1}, "n=3 axis=1"),
        ]
    ],
    "unpad": [  # the gradient of np.pad: grad has the padded shape
        Case(helpers.unpad, inputs(normal(*shape)), options, label)
        for shape, options, label in [
            ((5, 4), {"pad_width": 1}, "constant"),
            ((4, 5), {"pad_width": ((0, 1), (2, 0))}, "constant uneven"),
            ((7,), {"pad_width": (2, 1), "mode": "reflect"}, "reflect"),
            ((6, 4), {"pad_width": ((1, 2), (1, 0)), "mode": "edge"}, "edge"),
            ((8,), {"pad_width": (3, 1), "mode": "symmetric"}, "symmetric"),
            ((8,), {"pad_width": (2, 3), "mode": "wrap"}, "wrap"),
        ]
    ],
    "embed_diagonal": [  # the gradient of np.diagonal: grad is the diagonal, last axis
        Case(helpers.embed_diagonal, inputs(normal(*g), normal(*x)), options, label, (0,))
        for g, x, options, label in [
            ((3,), (3, 3), {}, "square"),
            ((2,), (3, 2), {}, "tall"),
            ((2,), (3, 3), {"offset": 1}, "offset=1"),
            ((2,), (3, 4), {"offset": -1}, "offset=-1"),
            ((2, 2), (2, 3, 3), {"offset": 1, "axis1": 1, "axis2": 2}, "batched"),
        ]
    ],
    "untake_along_axis": [  # the gradient of np.take_along_axis: grad has indices' shape
        Case(
            helpers.untake_along_axis,
            inputs(normal(*np.shape(index)), normal(*x), fixed(index)),
            options,
            label,
            (0,),
        )
        for x, index, options, label in [
            ((2, 3), np.array([[0], [2]]), {"axis": 1}, "one per row"),
            ((3, 2), np.array([[0, 1], [0, 1], [2, 2]]), {"axis": 0}, "repeats"),
            ((4,), np.array([3, 0, 3]), {"axis": None}, "axis=None"),
        ]
    ],
    "unjoin": [  # the gradient of np.hstack and its kin: one piece per input
        Case(
            helpers.unjoin,
            with_grad(lambda xs, how: np.shape(getattr(np, how)(xs)), fixed(xs), fixed(how)),
            {},
            how,
            (0,),
        )
        for how, xs in [
            ("hstack", [np.zeros(2), np.zeros(3)]),
            ("hstack", [np.zeros((2, 1)), np.zeros((2, 3))]),
            ("vstack", [np.zeros(3), np.zeros((2, 3))]),
            ("dstack", [np.zeros((2, 2)), np.zeros((2, 2, 1))]),
            ("column_stack", [np.zeros(2), np.zeros((2, 2))]),
        ]
    ],
    "unsplit": [  # the gradient of np.split and its kin: the pieces joined back
        Case(
            helpers.unsplit,
            inputs(lambda rng, shapes=shapes: [rng.normal(size=s) for s in shapes]),
            options,
            label,
        )
        for shapes, options, label in [
            ([(2, 3), (1, 3)], {}, "axis=0"),
            ([(2, 1), (2, 3), (2, 2)], {"axis": 1}, "axis=1"),
            ([(3,), (2,)], {}, "1-d"),
        ]
    ],
    "norm_grad": [  # the gradient of norm(x, ord) for the ords other than Frobenius
        Case(norm_grad_of, norm_grad_inputs(shape, ord, options), options, label, (0, 2))
        for shape, ord, options, label in [
            ((3, 4), 1, {}, "matrix 1"),
            ((3, 4), -np.inf, {}, "matrix -inf"),
            ((2, 3, 4), np.inf, {"axis": (0, 2), "keepdims": True}, "matrix inf axes"),
            ((3, 4), 1, {"axis": 1}, "vector 1 rows"),
            ((5,), np.inf, {}, "vector inf"),
            ((3, 4), "nuc", {}, "matrix nuc"),
            ((4, 3), 2, {}, "matrix 2"),
            ((3, 3), -2, {}, "matrix -2"),
            ((2, 3, 4), "nuc", {"axis": (2, 0)}, "matrix nuc axes"),
        ]
    ],
    "eigh_grad": [  # the gradient of eigh: a rational function of (gw, gv, w, v)
        Case(helpers.eigh_grad, inputs(normal(3), normal(3, 3), spread(3), normal(3, 3)), {}, "3"),
        Case(
            helpers.eigh_grad,
            inputs(normal(2, 3), normal(2, 3, 3), spread(2, 3), normal(2, 3, 3)),
            {},
            "stacked",
        ),
        Case(
            helpers.eigh_grad,
            inputs(normal(3), zeros(3, 3), spread(3), normal(3, 3)),
            {},
            "eigenvalues only",
        ),
    ],
    "svd_pullback": [  # the gradient of svd: a rational function of (gu, gs, gvh, u, s, vh)
        Case(helpers.svd_pullback, svd_pullback_inputs(m, n, batch), {}, label)
        for m, n, batch, label in [
            (3, 3, (), "square"),
            (4, 2, (), "tall"),
            (2, 4, (), "wide"),
            (3, 2, (2,), "stacked tall"),
        ]
    ],
    "cumprod_grad": [  # the gradient of cumprod: grad has the scan's shape (flat for None)
        Case(helpers.cumprod_grad, inputs(normal(3, 4), uniform(0.5, 1.5, 3, 4)), o, label)
        for o, label in [({"axis": 1}, "axis=1"), ({"axis": 0}, "axis=0")]
    ]
    + [
        Case(helpers.cumprod_grad, inputs(normal(12), uniform(-1.5, 1.5, 3, 4)), {}, "flat"),
        Case(  # rows: two zeros, one zero first, one zero inside, none
            helpers.cumprod_grad,
            inputs(normal(4, 4), fixed(SCAN_ZEROS)),
            {"axis": 1},
            "zeros axis=1",
        ),
        Case(helpers.cumprod_grad, inputs(normal(4, 4), fixed(SCAN_ZEROS)), {"axis": 0}, "zeros 0"),
        Case(helpers.cumprod_grad, inputs(normal(16), fixed(SCAN_ZEROS)), {}, "zeros flat"),
    ],
}

HELPER_OPS = sorted(helper_ops())
PARAMS = case_params(HELPER_CASES, HELPER_OPS)


# --- the table covers exactly the helpers' rules ----------------------------------------


def test_the_table_covers_every_helper_rule() -> None:
    """Every rule of shape ``HELPER`` has cases, and every case is of such a rule."""
    assert "unbroadcast" in HELPER_OPS and "unpad" in HELPER_OPS  # the query finds them
    assert set(HELPER_CASES) == set(HELPER_OPS), f"add cases: {set(HELPER_OPS) - set(HELPER_CASES)}"


@pytest.mark.parametrize("op", HELPER_OPS)
def test_rule_mirrors_the_helper(op: str) -> None:
    """Same parameters as the helper (``g`` is ``grad``), and the resolver's op name."""
    rule = all_rules()[op]
    fn = helper(op)
    assert names.op_of_callable(fn) == op
    expected = ["grad" if p == "g" else p for p in inspect.signature(fn).parameters]
    assert rule.signature_parameters() == expected
    for name, default in rule.options.items():
        declared = inspect.signature(fn).parameters[name].default
        assert declared is inspect.Parameter.empty or declared == default, f"{op}: {name}"


@pytest.mark.parametrize(
    "op",
    ["tie_share", "inverse_axes", "size", "shape_of", "zeros_like", "ones_like", "array_module"],
)
def test_static_helpers_are_not_differentiable(op: str) -> None:
    assert names.op_of_callable(helper(op)) == op
    assert is_nondifferentiable(op)
    assert op not in all_rules()


# --- the oracles -------------------------------------------------------------------------


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_vjp_matches_central_differences(op: str, case: Case | None) -> None:
    rule, args, out, g = prepare(op, case, np.float64, WHERE)
    grads = call_rule(rule, g, out, args, case.options)
    which = case.differentiable or range(len(rule.inputs))
    for i, name in enumerate(rule.inputs):
        if i not in which:
            assert grads[i] is None, f"{op}: {name} only gives a shape, its gradient is None"
            continue
        expected = central_difference(case.primal, args, case.options, g, i)
        got = grads[i] if isinstance(args[i], list) else [grads[i]]
        assert len(got) == len(expected), f"{op} d{name}: {len(got)} pieces"
        for piece, want in zip(got, expected, strict=True):
            assert np.shape(piece) == np.shape(want), f"{op} d{name}: shape {np.shape(piece)}"
            np.testing.assert_allclose(piece, want, rtol=1e-6, atol=1e-7, err_msg=f"{op} d{name}")


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_jvp_matches_central_differences(op: str, case: Case | None) -> None:
    prepare(op, case, np.float64, WHERE)
    check_jvp_against_differences(op, case)


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_jvp_is_the_transpose_of_the_vjp(op: str, case: Case | None) -> None:
    prepare(op, case, np.float64, WHERE)
    check_transpose_identity(op, case)


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_inactive_inputs_inline_both_ways(op: str, case: Case | None) -> None:
    prepare(op, case, np.float64, WHERE)
    check_inactive_inputs(op, case)


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_jvp_keeps_shape_and_float32(op: str, case: Case | None) -> None:
    prepare(op, case, np.float32, WHERE)
    check_float32(op, case)


# --- dtypes: a gradient has its input's dtype ---------------------------------------------


def test_cast_like_sends_the_gradient_back_in_the_input_dtype() -> None:
    rule = all_rules()["cast_like"]
    grad, x = np.ones(3, np.float64), np.zeros(3, np.float32)
    d_grad, d_x = rule.vjp(np.ones(3, np.float32), grad, x)
    assert d_grad.dtype == np.float64 and d_x is None


def test_unbroadcast_gradient_has_grads_shape_and_dtype() -> None:
    rule = all_rules()["unbroadcast"]
    grad, x = np.ones((2, 3), np.float64), np.zeros((1, 3), np.float32)
    d_grad, _ = rule.vjp(np.full((1, 3), 2.0, np.float32), np, grad, x)
    assert d_grad.shape == (2, 3) and d_grad.dtype == np.float64
    assert d_grad.tolist() == [[2.0] * 3] * 2


def test_prod_others_second_derivative_is_exact_at_zeros() -> None:
    """d p_i / d x_k = product of all but x_i and x_k: with two zeros only that pair survives."""
    rule = all_rules()["prod_others"]
    x = np.array([0.0, 2.0, 0.0, 3.0])
    columns = [rule.jvp(np, x, d_x=np.eye(4)[k]) for k in range(4)]
    jacobian = np.stack(columns, axis=1)
    expected = np.zeros((4, 4))
    expected[0, 2] = expected[2, 0] = 6.0  # drop x_0 and x_2: 2 * 3
    np.testing.assert_array_equal(jacobian, expected)
