"""explain_errors: the pitfalls the lessons show on purpose are caught, printed without
the (run-dependent) notebook file names, and anything else still fails loudly."""

import re
import warnings

import numpy as np
import pytest

from autodiff_tutor import differentiable, grad
from autodiff_tutor.course import explain_errors, render_error, tidy
from autodiff_tutor.errors import GradientEscapeError, TracingError
from autodiff_tutor.tracing import evaluate, extract_data, gradient, traced


def test_compiler_escape_is_caught_and_located(capsys):
    def f(x):
        s = float(x)
        return x * s

    with explain_errors() as seen:
        grad(f)(2.0)
    assert isinstance(seen.error, GradientEscapeError)
    out = capsys.readouterr().out
    assert out.startswith("GradientEscapeError: float turns 'x' into a plain value")
    assert "s = float(x)" in out and "^^^^^^^^" in out
    assert "hint: " in out and __file__ not in out
    assert re.search(r"at line \d+, column 13:", out)


def test_tracing_error_and_warning(capsys):
    def made_inside(x1):
        x2 = traced(0.0)
        return gradient(x1 + x2, x2)

    with explain_errors() as seen:
        evaluate(made_inside, traced(1.0))
    assert isinstance(seen.error, TracingError)
    assert "not on the trace" in capsys.readouterr().out

    def extracted(x):
        return gradient(x + extract_data(x) ** 2, x)

    with explain_errors() as seen:
        value = evaluate(extracted, traced(2.5))
    assert value == 1.0 and seen.error is None and len(seen.warnings) == 1
    assert capsys.readouterr().out.startswith("TracingWarning: gradient(")


def test_clean_block_and_other_errors():
    with explain_errors() as seen:
        np.sum(np.ones(2))
    assert seen.error is None and seen.warnings == []
    with pytest.raises(ZeroDivisionError), explain_errors():
        _ = 1 / 0
    with explain_errors(catch=(ZeroDivisionError,)) as seen:
        _ = 1 / 0
    assert isinstance(seen.error, ZeroDivisionError)


def test_other_warnings_pass_through():
    with warnings.catch_warnings(record=True) as outer:
        warnings.simplefilter("always")
        with explain_errors() as seen:
            warnings.warn("not about tracing", RuntimeWarning, stacklevel=1)
    assert seen.warnings == []
    assert [str(w.message) for w in outer] == ["not about tracing"]


def test_tidy_removes_cell_file_names():
    text = 'File "/tmp/ipykernel_4711/3871719731.py", at 3871719731.py:10, in model.py:3'
    assert tidy(text) == 'File "cell", at cell line 10, in model.py:3'
    assert render_error(ValueError("/tmp/ipykernel_1/1234567.py")) == "ValueError: cell"


def test_compiled_function_in_a_differentiable_error():
    @differentiable
    def g(x):
        return np.sum(x * x.sum().item())  # np.asarray(x) is differentiated (an alias)

    with explain_errors() as seen:
        grad(g)(np.ones(2))
    assert isinstance(seen.error, GradientEscapeError)
    assert "x.sum().item" in seen.error.message
