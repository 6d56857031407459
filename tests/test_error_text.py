"""How errors and warnings read: wrapped at word boundaries, notebook cells named as
IPython names them ("cell In[3], line 2"), never the kernel's temporary file."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from wrapped_text import flat

from autodiff_tutor import grad
from autodiff_tutor.course import explain_errors
from autodiff_tutor.errors import WIDTH, AutodiffError, Location, cell_name, place, wrap
from autodiff_tutor.tracing import evaluate, extract_data, gradient, last_tape, traced
from autodiff_tutor.tracing.messages import extracted_and_continued, in_place

LONG = in_place("y[0] = 1")


def _lines_fit(text: str, first: str = "") -> bool:
    lines = (first + text).splitlines()
    return all(len(line) <= WIDTH or " " not in line.strip() for line in lines)


def test_a_long_message_is_wrapped_between_words_and_keeps_every_word():
    text = str(LONG)
    assert _lines_fit(text, first="TracingError: ")
    assert len(text.splitlines()) > 3
    assert flat(text).startswith(flat(LONG.message))  # same words, in order, none split
    assert flat(LONG.hint) in flat(text)


def test_code_lines_of_a_hint_keep_their_indentation():
    text = wrap("call it like this:\n    y, dy = evaluate(f, traced(x0))", first="  hint: ")
    assert text.splitlines()[1] == "    y, dy = evaluate(f, traced(x0))"


def test_a_located_error_keeps_its_source_line_and_caret_unwrapped():
    where = Location("model.py", 3, 8, "    y = " + "x * " * 30 + "x", 5)
    error = AutodiffError("a message " * 20, where, hint="a hint " * 20)
    lines = str(error).splitlines()
    shown = "    " + where.text.rstrip()
    assert shown in lines  # the source line, whole, however long
    caret = lines[lines.index(shown) + 1]
    assert caret.strip() == "^^^^^" and caret.index("^") == 4 + 8


def test_warnings_are_wrapped_too():
    def fun(x):
        y = x + extract_data(x) ** 2
        return gradient(y, x)

    with pytest.warns(Warning) as caught:
        evaluate(fun, traced(2.5))
    text = str(caught[0].message)
    assert len(text.splitlines()) > 2
    assert all(len(line) <= WIDTH for line in text.splitlines()[1:])
    assert flat(text) == flat(extracted_and_continued("gradient(y, x)", "x", _extraction()))


def _extraction():
    return last_tape().extractions[0]


@pytest.fixture
def kernel(ipython_cells):
    """A stand-in IPython kernel that ran this test file as cell 7."""
    return ipython_cells({__file__: 7})


def test_outside_ipython_files_keep_their_names():
    assert cell_name(__file__) is None or "IPython" in sys.modules
    assert place("/home/me/model.py", 12) == "model.py:12"


def test_compiler_errors_name_the_cell(kernel):
    def bad(x):
        return np.sum(np.random.normal(x))

    with pytest.raises(AutodiffError) as info:
        grad(bad)(np.ones(2))
    text = str(info.value)
    line = bad.__code__.co_firstlineno + 1
    assert f"Cell In[7], line {line}, column" in text
    assert __file__ not in text


def test_tracing_records_errors_and_warnings_name_the_cell(kernel):
    def fun(x):
        y = x + extract_data(x) ** 2
        return gradient(y, x)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate(fun, traced(2.5))
    line = fun.__code__.co_firstlineno + 1
    where = f"cell In[7], line {line}"
    assert {r.where for r in last_tape().records} == {where}
    assert f"extract_data() at {where} took" in flat(str(caught[0].message))
    assert caught[0].filename == "Cell In[7]" and caught[0].lineno == line + 1
    shown = warnings.formatwarning(
        caught[0].message, caught[0].category, caught[0].filename, caught[0].lineno
    )
    assert shown.splitlines()[-1].strip() == "return gradient(y, x)"  # the source line
    assert __file__ not in shown


def test_explain_errors_prints_wrapped_lines(capsys):
    with explain_errors():
        raise LONG
    printed = capsys.readouterr().out
    assert all(len(line) <= WIDTH for line in printed.splitlines())
    assert flat(LONG.message) in flat(printed)
