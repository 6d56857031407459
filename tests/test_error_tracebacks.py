"""What the traceback of an error raised out of a front door shows: the user's cell and
functions, then the located message; the toolkit's own frames only on request
(``full_tracebacks(True)``), or for a bug of the toolkit (``InternalError``)."""

from __future__ import annotations

import re
import traceback

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell

import autodiff_tutor
from autodiff_tutor import grad
from autodiff_tutor.errors import (
    ArgumentError,
    GradientEscapeError,
    TracingEscapeError,
    front_door,
    full_tracebacks,
)
from autodiff_tutor.tracing import evaluate, traced

PACKAGE = autodiff_tutor.__path__[0]

SETUP = "import numpy as np\nfrom autodiff_tutor import grad\nfrom autodiff_tutor import tracing\n"

#: a compiler error raised from a method's def (inlined through the object: the
#: deepest road into the compiler), and a tracing error raised in the user's function
COMPILER_CELL = """class Model:
    def __init__(self):
        self.W = np.ones(3)
    def loss(self, x):
        return float(np.sum(self.W * x))
grad(Model().loss, wrt="self.W")(np.ones(3))"""
TRACING_CELL = """def scale(x):
    return float(x[0]) * x
tracing.evaluate(scale, tracing.traced(np.ones(2)))"""


@pytest.fixture
def shell():
    """A real IPython shell (no colors), the global one while the test runs."""
    shell = InteractiveShell.instance(colors="nocolor")
    shell.run_cell(SETUP)
    yield shell
    InteractiveShell.clear_instance()


def shown_by(shell, cell: str, capsys) -> list[str]:
    """The lines IPython prints when ``cell`` raises."""
    capsys.readouterr()
    result = shell.run_cell(cell)
    assert result.error_in_exec is not None
    return re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out).splitlines()


def before_the_caret(lines: list[str]) -> int:
    return next(i for i, line in enumerate(lines) if re.fullmatch(r"\s+\^+\s*", line))


def test_a_compiler_error_in_ipython_shows_the_cell_then_the_message(shell, capsys):
    lines = shown_by(shell, COMPILER_CELL, capsys)
    assert before_the_caret(lines) <= 15
    assert not any(PACKAGE in line for line in lines)
    assert any(line.startswith("GradientEscapeError: float turns") for line in lines)
    assert lines[-2].startswith("  hint: keep it an array")


def test_a_tracing_error_in_ipython_shows_the_users_function_too(shell, capsys):
    lines = shown_by(shell, TRACING_CELL, capsys)
    assert before_the_caret(lines) <= 20  # two frames of the user's, a 3-line message
    assert not any(PACKAGE in line for line in lines)
    assert any(re.match(r"Cell In\[\d+\], line 2, in scale", line) for line in lines)


def test_the_full_traceback_is_there_on_request(shell, capsys):
    full_tracebacks(True)
    try:
        lines = shown_by(shell, COMPILER_CELL, capsys)
    finally:
        full_tracebacks(False)
    assert before_the_caret(lines) > 50
    assert any(PACKAGE in line for line in lines)


def _escaping(x):
    return float(np.sum(x))


def test_a_script_sees_its_own_frames_only():
    with pytest.raises(GradientEscapeError) as info:
        grad(_escaping)(np.ones(2))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert all(not frame.filename.startswith(PACKAGE) for frame in frames)
    assert frames[-1].name == "test_a_script_sees_its_own_frames_only"


def test_frames_of_the_user_between_the_toolkits_are_kept():
    with pytest.raises(TracingEscapeError) as info:
        evaluate(_escaping, traced(np.ones(2)))
    names = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert names == ["test_frames_of_the_user_between_the_toolkits_are_kept", "_escaping"]


TRAINING_CELL = """from autodiff_tutor.nn import FullyConnected, Layer, Sequential, Softmax, train
class Twice(Layer):
    def double(self, X, times=2):
        return X if times == 0 else 2 * self.double(X, times - 1)
    def predict(self, X):
        return self.double(X)
X, y = np.ones((4, 2)), np.array([0, 1, 0, 1])
train(Sequential([FullyConnected(2), Twice(), Softmax()]).initialize(X), X, y, epochs=1,
      progress=False)"""


def test_the_training_loop_is_a_front_door_too(shell, capsys):
    """An error raised while training shows the user's frames and the message, not the
    toolkit's frames between them."""
    lines = shown_by(shell, TRAINING_CELL, capsys)
    assert before_the_caret(lines) <= 15, "\n".join(lines)
    assert not any(PACKAGE in line for line in lines), "\n".join(lines)


@front_door
def refuses_without_a_place(x):
    raise ArgumentError(f"cannot take {x!r}")


def test_a_front_doors_error_without_a_place_is_located_at_the_users_call():
    """Every error through a front door is located: one raised deep inside without a
    place of its own is located at the user's call of the door."""
    with pytest.raises(ArgumentError) as refused:
        refuses_without_a_place(3)
    assert refused.value.location.filename == __file__
    assert "refuses_without_a_place(3)" in refused.value.location.text
