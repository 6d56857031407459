"""Every forward-mode (tangent) rule of the registry, against two oracles.

The walk is over ``all_rules()``: a rule without a ``jvp`` fails, naming its op. The
inputs come from the finite-difference table of ``tests/test_rules_numeric.py``
(``CASES``; ``tests/test_rules_helpers.py`` runs the same checks on more cases of the
runtime helpers' rules). For each case, in float64:

- the tangent equals the central difference of the primal along random directions
  (all differentiable inputs moved at once);
- the transpose identity ``<jvp(u), v> == <u, vjp(v)>`` holds against the vjp rule;
- inactive inputs, inlined both ways the compiler may use (terms dropped from a sum,
  or zeros substituted; see :mod:`autodiff_tutor.rules.record`), give the central
  difference with only the active inputs moved;

in float32 the tangent keeps the output's shape and dtype, and with a strict array-API
library the rules take their array module from ``xp``. Static checks: every
rule follows the parameter convention, and a rule with several array inputs is a sum
of terms that each name one tangent (or is listed in ``ZERO_FILLED`` with the reason).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_nn_backend import numpy_conversion_forbidden
from test_rules_numeric import CASES, Case, _prepare, call_rule, fixed, inputs

from autodiff_tutor.compiler.rule_inline import _formula, is_none_gradient
from autodiff_tutor.rules.registry import Rule, all_rules, helper_ops

SPECIAL = ("out", "xp")

# Rules with several inputs that are not written as a sum: an inactive tangent is
# replaced by zeros (lists, writes into arrays).
ZERO_FILLED = {
    "list_append": "a list output: [*d_xs, d_x]",
    "list_setitem": "a list output: d_xs with its item replaced by d_x",
    "assign_at": "d_x with d_value written at index: a list's entry too (ys[k] = v of a "
    "gradient function differentiated again), where a sum would join two lists",
    "add_lists": "lists of tangents, added element by element",
    "lstsq": "a list of tangents (solution, residuals, rank, singular values) from one helper",
}


# --- calling a tangent rule, and the oracles --------------------------------------------


def tangent_names(rule: Rule) -> list[str]:
    return [f"d_{name}" for name in rule.inputs]


def call_jvp(
    rule: Rule, out: Any, args: list[Any], options: dict[str, Any], tangents: list[Any]
) -> Any:
    """The rule's output tangent: everything by keyword (tangents are keyword-only)."""
    params = inspect.signature(rule.jvp).parameters
    kwargs = {**dict(zip(rule.inputs, args, strict=True)), **options}
    kwargs.update(zip(tangent_names(rule), tangents, strict=True))
    if "out" in params:
        kwargs["out"] = out
    if "xp" in params:
        kwargs["xp"] = np
    return rule.jvp(**kwargs)


def _shift(value: Any, direction: Any, step: float) -> Any:
    if direction is None:
        return value
    if isinstance(value, list):
        return [_shift(v, d, step) for v, d in zip(value, direction, strict=True)]
    return np.asarray(value, dtype=np.float64) + step * direction


def _map(fn: Callable[..., Any], *values: Any) -> Any:
    if isinstance(values[0], list):
        return [_map(fn, *parts) for parts in zip(*values, strict=True)]
    return fn(*values)


def directional_difference(
    primal: Callable[..., Any], args: list[Any], options: dict[str, Any], directions: list[Any]
) -> Any:
    """(f(x + h u) - f(x - h u)) / 2h in float64, ``u`` = ``directions`` (None: fixed)."""
    h = 1e-6

    def moved(step: float) -> Any:
        return primal(
            *[_shift(a, u, step) for a, u in zip(args, directions, strict=True)], **options
        )

    return _map(lambda up, down: (np.asarray(up) - np.asarray(down)) / (2 * h), moved(h), moved(-h))


def inner(a: Any, b: Any) -> float:
    """<a, b> for arrays or (nested) lists of arrays."""
    if isinstance(a, list):
        return sum((inner(x, y) for x, y in zip(a, b, strict=True)), 0.0)
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


def random_like(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, list):
        return [random_like(v, rng) for v in value]
    return rng.normal(size=np.shape(value)).astype(np.asarray(value).dtype)


def zeros_like(value: Any) -> Any:
    if isinstance(value, list):
        return [zeros_like(v) for v in value]
    return np.zeros_like(value)


def differentiable(rule: Rule, case: Case) -> list[int]:
    return list(case.differentiable or range(len(rule.inputs)))


def directions(rule: Rule, case: Case, args: list[Any], active: list[int]) -> list[Any]:
    rng = np.random.default_rng(zlib.crc32(f"tangent-{rule.op}-{case.label}".encode()))
    return [random_like(a, rng) if i in active else None for i, a in enumerate(args)]


def assert_close(got: Any, want: Any, message: str, rtol: float = 1e-6) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{message}: list length"
        for g, w in zip(got, want, strict=True):
            assert_close(g, w, message, rtol)
        return
    assert np.shape(got) == np.shape(want), f"{message}: shape {np.shape(got)} != {np.shape(want)}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-7, err_msg=message)


# --- the inliner's two ways with an inactive tangent, done on the rule's AST -------------


def tangent_expression(rule: Rule) -> ast.expr:
    """The rule's return expression, local assignments substituted (as the inliner sees it)."""
    expressions, _ = _formula(inspect.unwrap(rule.jvp))
    assert len(expressions) == 1, f"{rule.op}: a tangent rule returns one expression"
    return expressions[0]


def terms(expr: ast.expr) -> list[ast.expr]:
    """The terms of a sum: through ``+``, ``-`` and unary ``-``."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return terms(expr.left) + terms(expr.right)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return terms(expr.operand)
    return [expr]


def mentions(expr: ast.expr, names: set[str]) -> list[str]:
    return [n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id in names]


def is_sum_of_single_tangent_terms(rule: Rule) -> bool:
    names = set(tangent_names(rule))
    return all(len(mentions(t, names)) == 1 for t in terms(tangent_expression(rule)))


def drop_terms(expr: ast.expr, inactive: set[str]) -> ast.expr | None:
    """``expr`` without the terms that mention an inactive tangent (None: nothing left)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        left, right = drop_terms(expr.left, inactive), drop_terms(expr.right, inactive)
        if left is None or right is None:
            if right is not None and isinstance(expr.op, ast.Sub):
                return ast.UnaryOp(ast.USub(), right)
            return left if right is None else right
        return ast.BinOp(left, expr.op, right)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        operand = drop_terms(expr.operand, inactive)
        return None if operand is None else ast.UnaryOp(ast.USub(), operand)
    return None if mentions(expr, inactive) else expr


def evaluate(rule: Rule, expr: ast.expr, bindings: dict[str, Any]) -> Any:
    code = compile(ast.fix_missing_locations(ast.Expression(expr)), f"<{rule.op} jvp>", "eval")
    return eval(code, dict(inspect.unwrap(rule.jvp).__globals__), bindings)  # noqa: S307


def bindings_for(
    rule: Rule, out: Any, args: list[Any], options: dict[str, Any], tangents: list[Any]
) -> dict[str, Any]:
    values = {"out": out, "xp": np, **rule.options, **options}
    values.update(zip(rule.inputs, args, strict=True))
    values.update(zip(tangent_names(rule), tangents, strict=True))
    return values


# --- parameters of the walk -------------------------------------------------------------


def case_params(
    table: dict[str, list[Case]], ops: list[str], optional: frozenset[str] = frozenset()
) -> list[Any]:
    """One param per case of each op; an op without cases fails, unless ``optional``."""
    params = []
    for op in ops:
        if not table.get(op) and op in optional:
            continue
        if not table.get(op):
            params.append(pytest.param(op, None, id=f"{op}-MISSING"))
            continue
        params.extend(
            pytest.param(op, c, id=f"{op}-{c.label or k}") for k, c in enumerate(table[op])
        )
    return params


def prepare(op: str, case: Case | None, dtype: Any, where: str = "test_rules_numeric.py") -> Any:
    if case is None:
        pytest.fail(f"rule {op!r} has no case to check its tangent with: add one to {where}")
    return _prepare(op, case, dtype)


# --- the checks (test_rules_helpers.py runs them on the helpers' table) -------------------


def check_jvp_against_differences(op: str, case: Case) -> None:
    rule, args, out, _ = prepare(op, case, np.float64)
    active = differentiable(rule, case)
    us = directions(rule, case, args, active)
    got = call_jvp(rule, out, args, case.options, us)
    want = directional_difference(case.primal, args, case.options, us)
    assert_close(got, want, f"{op} jvp vs central difference")


def check_transpose_identity(op: str, case: Case) -> None:
    rule, args, out, v = prepare(op, case, np.float64)
    active = differentiable(rule, case)
    us = directions(rule, case, args, active)
    lhs = inner(call_jvp(rule, out, args, case.options, us), v)
    grads = call_rule(rule, v, out, args, case.options)
    rhs = sum(inner(us[i], grads[i]) for i in active)
    scale = 1.0 + abs(lhs) + abs(rhs)
    assert abs(lhs - rhs) <= 1e-10 * scale, f"{op}: <jvp(u), v> = {lhs!r}, <u, vjp(v)> = {rhs!r}"


def check_inactive_inputs(op: str, case: Case) -> None:
    """Every proper subset of the inputs active, inlined by dropping terms and by zeros."""
    rule, args, out, _ = prepare(op, case, np.float64)
    every = differentiable(rule, case)
    expr = tangent_expression(rule)
    droppable = is_sum_of_single_tangent_terms(rule)
    for k in range(1, len(every)):
        for active in itertools.combinations(every, k):
            us = directions(rule, case, args, list(active))
            want = directional_difference(case.primal, args, case.options, us)
            label = f"{op} with only {[rule.inputs[i] for i in active]} active"
            zeros = [u if i in active else zeros_like(args[i]) for i, u in enumerate(us)]
            filled = evaluate(rule, expr, bindings_for(rule, out, args, case.options, zeros))
            assert_close(filled, want, f"{label}, zeros substituted")
            if droppable:
                inactive = {f"d_{rule.inputs[i]}" for i in every if i not in active}
                kept = drop_terms(expr, inactive)
                assert kept is not None, f"{label}: every term was dropped"
                dropped = evaluate(rule, kept, bindings_for(rule, out, args, case.options, us))
                dropped = np.broadcast_to(dropped, np.shape(out))  # what the inliner must add
                assert_close(dropped, want, f"{label}, terms dropped")


def check_float32(op: str, case: Case) -> None:
    rule, args, out, _ = prepare(op, case, np.float32)
    us = directions(rule, case, args, differentiable(rule, case))
    got = call_jvp(rule, out, args, case.options, us)
    for piece, o in zip(_pieces(got), _pieces(out), strict=True):
        assert np.shape(piece) == np.shape(o), f"{op}: tangent shape {np.shape(piece)}"
        assert np.asarray(piece).dtype == np.asarray(o).dtype, f"{op}: dtype {piece.dtype}"


def _pieces(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def check_signature(rule: Rule) -> None:
    """``[out], [xp]``, inputs and options as the vjp has them, then keyword-only tangents."""
    params = list(inspect.signature(rule.jvp).parameters.values())
    names = [p.name for p in params]
    special = [n for n in names if n in SPECIAL]
    assert names[: len(special)] == special, f"{rule.op}: out/xp must come first: {names}"
    primal = [p for p in params[len(special) :] if p.kind is not p.KEYWORD_ONLY]
    assert [p.name for p in primal] == rule.signature_parameters(), f"{rule.op}: {names}"
    defaults = {p.name: p.default for p in primal if p.name in rule.options}
    assert defaults == rule.options, f"{rule.op}: option defaults {defaults} != {rule.options}"
    keyword_only = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    assert keyword_only == tangent_names(rule), f"{rule.op}: tangents {keyword_only}"


def check_terms(rule: Rule) -> None:
    """Tangents of inputs without gradient are unused; the others appear, in droppable terms."""
    names = set(mentions(tangent_expression(rule), set(tangent_names(rule))))
    for i, name in enumerate(rule.inputs):
        if is_none_gradient(rule, i):
            assert f"d_{name}" not in names, f"{rule.op}: d_{name} has no gradient, yet is used"
        else:
            assert f"d_{name}" in names, f"{rule.op}: the tangent d_{name} is never used"
    several = sum(not is_none_gradient(rule, i) for i in range(len(rule.inputs))) > 1
    if several and rule.op not in ZERO_FILLED:
        assert is_sum_of_single_tangent_terms(rule), (
            f"{rule.op}: write the tangent as a sum of terms that each contain one d_<input> "
            "(so the inliner can drop an inactive one), or list it in ZERO_FILLED with why"
        )


# --- the walk ------------------------------------------------------------------------------


@pytest.mark.parametrize("op", sorted(all_rules()))
def test_every_rule_has_a_tangent_rule(op: str) -> None:
    rule = all_rules()[op]
    assert rule.jvp is not None, (
        f"rule {op!r} has no forward-mode rule: add @defjvp({op!r}) below its "
        "@defvjp, in its family's module (autodiff_tutor/rules/<family>.py)"
    )
    check_signature(rule)
    check_terms(rule)


# the helpers' rules are walked by tests/test_rules_helpers.py on its own table (which
# must cover them all); here, on the numeric table's cases of them where it has some
PARAMS = case_params(CASES, sorted(all_rules()), optional=helper_ops())


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_jvp_matches_central_differences(op: str, case: Case | None) -> None:
    check_jvp_against_differences(op, case)


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_jvp_is_the_transpose_of_the_vjp(op: str, case: Case | None) -> None:
    check_transpose_identity(op, case)


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_inactive_inputs_inline_both_ways(op: str, case: Case | None) -> None:
    check_inactive_inputs(op, case)


@pytest.mark.parametrize(("op", "case"), PARAMS)
def test_jvp_keeps_shape_and_float32(op: str, case: Case | None) -> None:
    check_float32(op, case)


# --- the checks can fail ---------------------------------------------------------------------


def test_a_wrong_tangent_is_caught() -> None:
    wrong = Rule("sin", lambda g, xp, x: g * xp.cos(x), ("x",), {}, False, True)
    wrong.jvp = lambda xp, x, *, d_x: -d_x * xp.cos(x)
    x, u = np.array([0.3, -1.2]), np.array([1.0, 0.5])
    got = call_jvp(wrong, np.sin(x), [x], {}, [u])
    assert not np.allclose(got, directional_difference(np.sin, [x], {}, [u]))


def test_a_tangent_that_is_not_a_sum_of_terms_is_flagged() -> None:
    def divide(g, out, x, y):
        return g / y, -g * out / y

    def divide_tangent(out, x, y, *, d_x, d_y):
        return (d_x - out * d_y) / y  # right, but dropping d_y drops d_x with it

    rule = Rule("divide", divide, ("x", "y"), {}, True, False, written_jvp=divide_tangent)
    assert not is_sum_of_single_tangent_terms(rule)
    with pytest.raises(AssertionError, match="sum of terms"):
        check_terms(rule)


def test_a_dropped_term_needs_the_broadcast_to_the_output() -> None:
    """``d_x + d_y`` with ``d_y`` inactive is ``d_x``: x's shape, not the output's."""
    rule = all_rules()["add"]
    x, y, u = np.ones((3, 1)), np.ones(4), np.arange(3.0)[:, None]
    kept = drop_terms(tangent_expression(rule), {"d_y"})
    assert ast.unparse(kept) == "d_x"
    tangent = evaluate(rule, kept, bindings_for(rule, x + y, [x, y], {}, [u, None]))
    assert tangent.shape == (3, 1) != (x + y).shape
    np.testing.assert_array_equal(np.broadcast_to(tangent, (3, 4)), np.repeat(u, 4, axis=1))


def test_drop_terms_keeps_signs() -> None:
    expr = ast.parse("d_x / y - out * d_y / y", mode="eval").body
    assert ast.unparse(drop_terms(expr, {"d_x"})) == "-(out * d_y / y)"
    assert ast.unparse(drop_terms(expr, {"d_y"})) == "d_x / y"
    assert drop_terms(expr, {"d_x", "d_y"}) is None


def test_norm_tangent_of_a_matrix_norm_is_its_gradient_along_the_direction() -> None:
    """Matrix norms: the nuclear norm's tangent along d is
    <u vh, d>, the same number as its gradient's inner product with d."""
    rule = all_rules()["norm"]
    m = np.array([[1.0, -2.0], [0.5, 3.0]])
    d = np.array([[0.3, 1.0], [-2.0, 0.5]])
    u, _, vh = np.linalg.svd(m)
    tangent = call_jvp(rule, np.linalg.norm(m, "nuc"), [m], {"ord": "nuc"}, [d])
    assert tangent == pytest.approx(np.sum((u @ vh) * d), rel=1e-12)


# --- at kinks, forward and reverse mode pick the same value --------------------------------
# Central differences say nothing at a kink; the transpose identity still must hold there,
# so the tangent rule takes the vjp rule's convention (abs'(0) = 0, ties split equally,
# clip's bounds inclusive, norm'(0) = 0).

TIES = np.array([[3.0, 3.0, 1.0], [2.0, 5.0, 5.0]])

KINKS: dict[str, list[Case]] = {
    "abs": [Case(np.abs, inputs(fixed(np.array([0.0, 1.0, -2.0]))), {}, "x = 0")],
    "maximum": [
        Case(np.maximum, inputs(fixed(np.array([1.0, 2.0, 3.0])), fixed(np.array([1.0, 0.0, 3.0]))))
    ],
    "minimum": [
        Case(np.minimum, inputs(fixed(np.array([1.0, 2.0, 3.0])), fixed(np.array([1.0, 0.0, 3.0]))))
    ],
    "clip": [
        Case(
            np.clip,
            inputs(fixed(np.array([-1.0, 0.5, 1.0, 2.0])), fixed(np.float64(-1.0)), fixed(1.0)),
            label="x on both bounds",
        )
    ],
    "max": [Case(np.max, inputs(fixed(TIES)), {"axis": a}, f"ties axis={a}") for a in (None, 0, 1)],
    "min": [
        Case(np.min, inputs(fixed(-TIES)), {"axis": a}, f"ties axis={a}") for a in (None, 0, 1)
    ],
    "norm": [Case(np.linalg.norm, inputs(fixed(np.zeros((2, 3)))), {"axis": 1}, "x = 0")],
}


@pytest.mark.parametrize(
    ("op", "case"),
    [
        pytest.param(op, c, id=f"{op}-{c.label or k}")
        for op in KINKS
        for k, c in enumerate(KINKS[op])
    ],
)
def test_at_kinks_the_tangent_takes_the_vjps_convention(op: str, case: Case) -> None:
    check_transpose_identity(op, case)


# --- backend independence: the same tangent from a strict array-API library ---------------
# Left out: concatenate, dot (the standard spells it concat, and has no dot); squeeze
# (axis=None); transpose (x.T beyond 2-D, as in its vjp); getitem (partial indices);
# rules whose helper is not array-API (prod: cumprod; setitem: .copy()).

STRICT_OPS = """abs add add_lists arccos arcsin arctan astype cast_like clip copy cos cosh
divide exp expand_dims expm1 list_append log log1p make_list matmul max maximum mean min
minimum multiply negative norm positive power reshape sin sinh split_like sqrt square
stack subtract sum tan tanh unbroadcast unreduce where""".split()


def _strict(value: Any, xp: Any) -> Any:
    if isinstance(value, list):
        return [_strict(v, xp) for v in value]
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fb":
        return xp.asarray(np.asarray(value))
    return value


@pytest.mark.parametrize(
    ("op", "case"), [p for p in PARAMS if p.values[0] in STRICT_OPS and p.values[1] is not None]
)
def test_jvp_runs_on_a_strict_array_library(op: str, case: Case) -> None:
    xp = pytest.importorskip("array_api_strict")
    rule, args, out, _ = prepare(op, case, np.float64)
    us = directions(rule, case, args, differentiable(rule, case))
    want = call_jvp(rule, out, args, case.options, us)
    kwargs = {**dict(zip(rule.inputs, _strict(args, xp), strict=True)), **case.options}
    kwargs.update(zip(tangent_names(rule), _strict(us, xp), strict=True))
    params = inspect.signature(rule.jvp).parameters
    kwargs.update({"out": _strict(out, xp), "xp": xp})
    with numpy_conversion_forbidden():  # a rule that calls numpy on them fails here
        got = rule.jvp(**{k: v for k, v in kwargs.items() if k in params})
    assert_close(_map(np.asarray, got), want, f"{op} on array_api_strict")
