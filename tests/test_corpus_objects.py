"""Programs organized as Python programmers organize them (``tests/corpus_objects/``:
bound methods and callable objects, ``*args`` methods, methods called inside the code,
``(out, cache)`` layer functions, functions as values, static structure, user names the
generated code also uses, effect statements, training loops over a model object), in
both modes: the compiler (``value_and_grad`` three times, or ``vjp`` with ``None``
seeds, through ``differentiable()`` where the program says so; every step of a training
loop) and tracing, each against central differences in float64, and autograd against
central differences. What a mode refuses is ``xfail(strict=True)`` with the refusal
written beside it (``tests/corpus_objects/today.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from corpus_objects import MODULES, ROWS, load_all, today
from corpus_objects.checks import (
    build,
    check_autograd,
    check_compiler,
    check_tracing,
    compare,
    expected,
    owner,
    step_attributes,
)

from autodiff_tutor.errors import AutodiffError

PROGRAMS = load_all()
BY_NAME = {p.name: p for p in PROGRAMS}


def marked(mode: str) -> list[object]:
    """One parameter per program, ``xfail(strict=True)`` where ``today.py`` has a reason
    for ``mode``: a refusal must still raise an ``AutodiffError`` (so a change that
    turns it into a wrong number fails the test), a recorded wrong number an
    ``AssertionError``."""
    params = []
    for p in PROGRAMS:
        reason = getattr(p, mode)
        raises = AssertionError if reason and reason.startswith("WRONG") else AutodiffError
        marks = [pytest.mark.xfail(strict=True, raises=raises, reason=reason)] if reason else []
        params.append(pytest.param(p.name, id=p.name, marks=marks))
    return params


def test_the_corpus_is_large_and_covers_every_row() -> None:
    assert len(PROGRAMS) >= 80, len(PROGRAMS)
    assert len(BY_NAME) == len(PROGRAMS), "names are unique"
    assert {p.row for p in PROGRAMS} == set(ROWS)
    assert {p.module for p in PROGRAMS} == {f"corpus_objects.{m}" for m in MODULES}


def test_what_is_refused_today_names_programs_of_the_corpus() -> None:
    assert set(today.COMPILER) <= set(BY_NAME)
    assert set(today.TRACING) <= set(BY_NAME)


def test_the_checks_catch_a_wrong_gradient() -> None:
    """A gradient off by a little in one entry fails the comparison (the checks are not
    vacuous)."""
    p = BY_NAME["linear_regression_training"]
    call, args = build(p)
    right = expected(p, call, args, None)
    compare(p, [w[0] for w in right], right)
    wrong = [w[0].copy() for w in right]
    wrong[0].flat[0] += 1e-3
    with pytest.raises(AssertionError):
        compare(p, wrong, right)


def test_a_training_step_rebinds_the_attributes() -> None:
    """Each step gives the model new arrays (``model.W = model.W - lr * dW``), so the
    next step's gradient is at new values."""
    p = BY_NAME["two_layer_net_dict_params"]
    call, args = build(p)
    before = owner(call).params
    gradients = [{k: np.ones_like(v) for k, v in before.items()}]
    step_attributes(p, call, gradients)
    after = owner(call).params
    assert after is not before
    assert all(not np.array_equal(after[k], before[k]) for k in before)


@pytest.mark.parametrize("name", marked("compiler"))
def test_compiler_matches_finite_differences(name: str) -> None:
    check_compiler(BY_NAME[name])


@pytest.mark.parametrize("name", marked("tracing"))
def test_tracing_matches_finite_differences(name: str) -> None:
    check_tracing(BY_NAME[name])


@pytest.mark.parametrize("name", [p.name for p in PROGRAMS])
def test_finite_differences_agree_with_autograd(name: str) -> None:
    """The oracles agree with each other, so each mode is checked against both."""
    p = BY_NAME[name]
    if p.autograd:
        pytest.skip(f"autograd: {p.autograd}")
    check_autograd(p)
