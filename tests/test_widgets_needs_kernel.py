"""Which views answer without a kernel, and which say that they need one.

A saved page (the book) has no kernel: a view whose controls update through Python
carries the ``autodiff-needs-kernel`` class and, first among its children, a note
(hidden where a kernel runs; the book's stylesheet shows it and switches the
controls off). Views that answer in the browser (the code view, a stepper whose steps
are drawn ahead) carry neither. The browser tests check what the book shows.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from widget_subjects import Cube, leaky, leaky_backward

from autodiff_tutor import differentiable
from autodiff_tutor.tracing import evaluate, gradient, last_tape, traced
from autodiff_tutor.verify import check_op
from autodiff_tutor.verify.symbolic import verify_symbolic
from autodiff_tutor.widgets import (
    backend_switch,
    backward_stepper,
    check_report_view,
    code_view,
    derivative_explorer,
    tape_view,
    verification_view,
)
from autodiff_tutor.widgets.needs_kernel import NEEDS_KERNEL, NOTE
from autodiff_tutor.widgets.stepper import PRERENDERED_STEPS

BOOK_CSS = "book/_static/needs_kernel.css"


@differentiable
def loss(w, x):
    h = np.tanh(x * w)
    return np.sum(h * h)


@differentiable
def repeated(x, n):
    for _ in range(n):
        x = np.sin(x)
    return x


def _tape():
    def model(x):
        y = np.sum(np.sin(x))
        return gradient(y, x)

    evaluate(model, traced(np.ones(2)))
    return last_tape()


KERNEL_BOUND = {
    "explorer": lambda: derivative_explorer(lambda x: np.sin(x), (-1.0, 1.0)),
    "tape view": lambda: tape_view(_tape()),
    "verification view": lambda: verification_view(verify_symbolic(leaky, leaky_backward)),
    "check view": lambda: check_report_view(check_op(Cube(), np.array([0.5, 1.0]))),
    "backend switch": backend_switch,
    "long stepper": lambda: backward_stepper(repeated, 0.3, PRERENDERED_STEPS),
}
IN_THE_BROWSER = {
    "code view": lambda: code_view(loss, wrt="w"),
    "stepper": lambda: backward_stepper(loss, np.ones(2), np.ones(2)),
}


@pytest.mark.parametrize("make", KERNEL_BOUND.values(), ids=KERNEL_BOUND.keys())
def test_views_that_update_through_python_say_they_need_a_kernel(make):
    view = make()
    assert NEEDS_KERNEL in view._dom_classes
    note = view.children[0]
    assert NOTE in note._dom_classes and "Needs a running Python kernel" in note.value
    assert 'style="display:none"' in note.value  # hidden where a kernel runs


@pytest.mark.parametrize("make", IN_THE_BROWSER.values(), ids=IN_THE_BROWSER.keys())
def test_views_that_answer_in_the_browser_carry_no_note(make):
    view = make()
    assert NEEDS_KERNEL not in view._dom_classes
    assert all(NOTE not in getattr(child, "_dom_classes", ()) for child in view.children)


def test_the_book_stylesheet_shows_the_note_and_switches_the_controls_off():
    css = open(BOOK_CSS, encoding="utf-8").read()
    assert re.search(r"\.autodiff-kernel-note[^{]*\{[^}]*display:\s*block\s*!important", css)
    assert re.search(
        r"\.autodiff-needs-kernel \.widget-slider[^{]*\{[^}]*pointer-events:\s*none", css
    )
    config = open("book/_ext/offline_scripts.py", encoding="utf-8").read()
    assert 'add_css_file("needs_kernel.css")' in config
