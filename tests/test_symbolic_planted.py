"""Planted bugs in hand-written backwards: each one is caught in the right region (or at
the right kink), with a counterexample that the op's own numpy code confirms.

Each bug is a one-line mutation of a real backward (the built-in SReLU and PReLU, and
the example ops of ``symbolic_examples``). Confirmation is independent of sympy: at
the counterexample point, central finite differences of the op's forward give the
report's expected value, the mutated backward gives the report's backward value, and
the two differ (for a kink: the backward's value lies outside the one-sided finite
differences).
"""

from __future__ import annotations

import pytest
from symbolic_examples import (
    Clip,
    Huber,
    ReLU,
    confirm_kink_counterexample,
    confirm_region_counterexample,
    mutant,
)

from autodiff_tutor.ops import PReLUFunction, SReLUFunction
from autodiff_tutor.verify.symbolic import verify_symbolic

BC = (1, 1)  # one observation, one channel: the shape of every input at a point
SRELU = {"assume": ["tl < tr"], "shape": BC, "args": ("BC",)}
PRELU = {"shape": BC, "args": ("BC",)}

# (kind of bug, op class, mutation (old, new[, method: "backward" by default]), options,
#  failing (input, region) pairs, failing kinks (boundary, input))
PLANTED = [
    (
        "wrong slope in one region",
        SReLUFunction,
        ("xp.where(left, al,", "xp.where(left, ar,"),
        SRELU,
        {("X", "X < tl")},
        {("X = tl", "X")},  # a bug inside a region also spoils the value at its edge
    ),
    (
        "wrong sign",
        SReLUFunction,
        ("* (1 - al)", "* (al - 1)"),
        SRELU,
        {("tl", "X < tl")},
        {("X = tl", "tl")},
    ),
    (
        "missing factor",
        SReLUFunction,
        ("dY_left * (X - tl)", "dY_left"),
        SRELU,
        {("al", "X < tl")},
        {("X = tl", "al")},
    ),
    (
        "gradients for the wrong parameters (the seeds' listing order X, tl, tr, al, ar)",
        SReLUFunction,
        ("return dX, d_tl, d_al, d_tr, d_ar", "return dX, d_tl, d_tr, d_al, d_ar"),
        SRELU,
        {("al", "X < tl"), ("al", "X > tr"), ("tr", "X < tl"), ("tr", "X > tr")},
        {("X = tr", "al"), ("X = tr", "X, tr")},  # X takes X > tr's slope, tr the other's
    ),
    (
        "boundary in the wrong place",
        SReLUFunction,
        ("dY * xp.astype(right, dY.dtype)", "dY * xp.astype(tl < X, dY.dtype)"),
        SRELU,
        {("tr", "tl < X < tr"), ("ar", "tl < X < tr")},
        set(),
    ),
    (
        "two pieces taken at X == tl: their slopes add up",
        SReLUFunction,
        (
            "dY * xp.where(left, al, xp.where(right, ar, 1.0))",
            "dY * (xp.where(left, al, xp.where(right, ar, 1.0)) + xp.astype(X == tl, X.dtype))",
        ),
        SRELU,
        set(),
        {("X = tl", "X")},
    ),
    (
        "memory values that are not the forward's cases (a bug in the forward)",
        SReLUFunction,
        ("return Y, left, right", "return Y, left, ~left", "forward"),
        SRELU,
        {("X", "tl < X < tr"), ("tr", "tl < X < tr"), ("ar", "tl < X < tr")},
        set(),
    ),
    (
        "mask of the wrong region",
        PReLUFunction,
        ("xp.minimum(X, 0)", "xp.maximum(X, 0)"),
        PRELU,
        {("alpha", "X < 0"), ("alpha", "X > 0")},
        set(),
    ),
    (
        "incoming gradient forgotten on one side",
        PReLUFunction,
        ("xp.where(X > 0, dY, alpha * dY)", "xp.where(X > 0, xp.ones_like(X), alpha * dY)"),
        PRELU,
        {("X", "X > 0")},
        set(),
    ),
    (
        "missing parameter in the outer slope",
        Huber,
        ("delta * xp.sign(x)", "xp.sign(x)"),
        {"assume": ["delta > 0"]},
        {("x", "x < -delta"), ("x", "x > delta")},
        set(),
    ),
    (
        "gradient given to the wrong bound",
        Clip,
        ("d_y * (x < lo)", "d_y * (x > hi)"),
        {"assume": ["lo < hi"]},
        {("lo", "x < lo"), ("lo", "x > hi")},
        set(),
    ),
    (
        "invalid value at the kink: relu'(0) = 2",
        ReLU,
        ("d_y * (x > 0)", "d_y * ((x > 0) + 2 * (x == 0))"),
        {},
        set(),
        {("x = 0", "x")},
    ),
]


def _make(index: int, base: type, mutation: tuple[str, ...], options: dict):
    cls = mutant(base, f"Planted{index}{base.__name__}", *mutation)
    return cls(*options.get("args", ()))


@pytest.mark.parametrize(
    ("index", "kind", "base", "mutation", "options", "regions", "kinks"),
    [(i, *case) for i, case in enumerate(PLANTED)],
    ids=[case[0] for case in PLANTED],
)
def test_planted_bug_is_caught_where_it_is(
    index, kind, base, mutation, options, regions, kinks
) -> None:
    op = _make(index, base, mutation, options)
    shape = options.get("shape", (1,))
    report = verify_symbolic(op, assume=options.get("assume", ()))
    assert not report.passed, f"{kind}: not caught\n{report.text()}"
    failed = {(c.input, c.region) for c in report.regions if not c.passed}
    assert failed == regions, report.text()
    for check in report.regions:
        if not check.passed:
            assert check.verdict == "differs"
            confirm_region_counterexample(op, report, check, shape)
    bad_kinks = [k for k in report.kinks if not k.passed]
    assert {(k.boundary, k.input) for k in bad_kinks} == kinks, report.text()
    for kink in bad_kinks:
        assert kink.verdict == "invalid"
        confirm_kink_counterexample(op, report, kink, shape)


def test_the_unmutated_ops_pass() -> None:
    """The mutations are the only difference: the originals verify."""
    for kind, base, _, options, _, _ in PLANTED:
        op = base(*options.get("args", ()))
        assert verify_symbolic(op, assume=options.get("assume", ())).passed, kind


def test_there_are_at_least_eight_planted_bugs() -> None:
    assert len(PLANTED) >= 8


def test_the_counterexample_of_a_missing_seed_has_a_seed_other_than_one() -> None:
    """With dY = 1 the missing factor would not show: the counterexample avoids it."""
    index = next(i for i, case in enumerate(PLANTED) if case[0].startswith("incoming gradient"))
    report = verify_symbolic(_make(index, *PLANTED[index][1:4]))
    check = report.entry("X", "X > 0")
    assert check.counterexample["dY"] != 1.0
    assert check.expected_value != check.got_value
