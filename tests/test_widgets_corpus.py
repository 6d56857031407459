"""The code view and the stepper on every program of the compiler's corpora.

The stepper runs the generated backward under ``sys.settrace``; what it returns and
what its last step shows must be exactly what ``grad`` computes, for straight-line
code and for loops, branches and calls. The code view must reach every commented
backward line from its line picker.
"""

from __future__ import annotations

import numpy as np
import pytest
from corpus_flow import load_all
from corpus_straight import CORPUS

from autodiff_tutor import grad
from autodiff_tutor.widgets import backward_stepper, code_view

CASES = [
    pytest.param(fn, sample, (0,) if fn.__code__.co_argcount == 1 else None, id=fn.__name__)
    for fn, sample in CORPUS
]
CASES += [pytest.param(p.fn, p.sample, p.wrt, id=p.name) for p in load_all() if not p.bug]


def _all_positions(fn):
    return tuple(range(fn.__code__.co_argcount - len(fn.__defaults__ or ())))


@pytest.mark.parametrize(("fn", "sample", "wrt"), CASES)
def test_stepper_ends_with_the_gradient_of_grad(fn, sample, wrt):
    args = sample(np.random.default_rng(0))
    wrt = list(wrt if wrt is not None else _all_positions(fn))
    stepper = backward_stepper(fn, *args, wrt=wrt)
    expected = grad(fn, wrt=wrt)(*args)
    assert len(stepper.gradients) == len(expected)
    for got, want in zip(stepper.gradients, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
    stepper.slider.value = stepper.slider.max
    assert stepper.current_line.strip().startswith("return ")
    names = [f"d_{stepper.derivative.wrt[k]}" for k in range(len(wrt))]
    returned = stepper.correspondence.backward_text(stepper.step.number)
    assert all(name in returned for name in names)


@pytest.mark.parametrize(("fn", "sample", "wrt"), CASES)
def test_code_view_reaches_every_commented_line(fn, sample, wrt):
    view = code_view(fn, wrt=list(wrt) if wrt is not None else None)
    commented = {
        line for line in view.correspondence.backward_source.splitlines() if "  # line " in line
    }
    seen = set()
    for _, value in view.line_picker.options:
        view.line_picker.value = value
        seen |= {line for line in view.highlighted["backward"] if "#" in line}
    assert seen == commented
