"""An exception raised while generated code runs is reported at the user's code.

The generated forward runs the user's operations: when one fails (numpy cannot
broadcast, an index is out of range), the error is a located ``UserCodeError`` at the
user's sub-expression, whose hint says that the function itself fails on these
arguments; each test checks that claim by calling the plain function. A custom op's
hand-written backward failing is reported at the op's call; derivative code of ours
failing is an ``InternalError`` at the line it differentiated. The user's own ``raise``
and ``assert`` keep their type, with a note saying where. In every case the original
exception is the cause (``raise ... from``), its traceback kept.
"""

from __future__ import annotations

import inspect
import linecache
import math
import sys
import traceback

import numpy as np
import pytest

from autodiff_tutor import differentiable, grad, jvp, value_and_grad, vjp
from autodiff_tutor.compiler import emit
from autodiff_tutor.errors import (
    AutodiffError,
    BackwardOutputError,
    InternalError,
    UserCodeError,
)
from autodiff_tutor.nn import Layer
from autodiff_tutor.nn.autodiff import compiled_forward
from autodiff_tutor.ops import DifferentiableFunction
from autodiff_tutor.tracing import evaluate, gradient, traced

#: Python 3.11+ knows the columns of each instruction: the caret under the failing
#: sub-expression of a line (else under the whole line, where tracing finds it).
COLUMNS = sys.version_info >= (3, 11)


def line_of(fn, snippet: str) -> int:
    """The file line of ``fn`` 's source that contains ``snippet``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if snippet in line)


def assert_at(error: AutodiffError, fn, snippet: str, columns: bool = True) -> None:
    """``error`` is located at ``snippet`` in ``fn`` 's source, the caret under it
    (where ``columns`` are known: the compiler's own; tracing's from Python 3.11)."""
    where = error.location
    assert where.filename == inspect.getsourcefile(fn)
    assert where.line == line_of(fn, snippet)
    if columns:
        assert where.text[where.column : where.column + where.length] == snippet
    assert f"    {where.text.rstrip()}\n    {where.caret()}" in str(error)


def plain_error(fn, *args) -> Exception:
    """What calling ``fn`` directly raises (the hint's claim)."""
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


def assert_the_function_itself_fails(error: UserCodeError, fn, *args) -> None:
    """The hint says so; calling ``fn`` raises the same exception, same message."""
    cause = error.__cause__
    assert f"{fn.__name__} itself failing on these arguments" in error.hint
    plain = plain_error(fn, *args)
    assert type(plain) is type(cause) and str(plain) == str(cause)
    assert f"{type(cause).__name__}: {cause}" in error.message


def product_sum(x, w):
    y = x @ w
    return np.sum(y * x)


PRODUCT_ARGS = (np.ones(3), np.ones((3, 2)))

FRONT_DOORS = {
    "grad": lambda f, args: grad(f)(*args),
    "value_and_grad": lambda f, args: value_and_grad(f)(*args),
    "vjp": lambda f, args: vjp(f, *args),
    "jvp": lambda f, args: jvp(f, args, (np.ones_like(args[0]), *[None] * (len(args) - 1))),
}


@pytest.mark.parametrize("door", FRONT_DOORS)
def test_a_broadcast_error_in_the_forward_is_located_at_the_users_expression(door):
    with pytest.raises(UserCodeError) as info:
        FRONT_DOORS[door](product_sum, PRODUCT_ARGS)
    error = info.value
    assert_at(error, product_sum, "y * x")
    assert isinstance(error.__cause__, ValueError) and not isinstance(error, ValueError)
    assert "could not be broadcast together with shapes (2,) (3,)" in error.message
    assert_the_function_itself_fails(error, product_sum, *PRODUCT_ARGS)
    shown = "".join(traceback.format_exception(error))
    assert "<autodiff_tutor generated product_sum" in shown  # the cause's traceback is kept


def picked(x, i):
    y = np.tanh(x)
    return np.sum(y[i] * x)


def test_an_index_out_of_range_is_located_at_the_indexing():
    args = (np.ones(3), 5)
    with pytest.raises(UserCodeError) as info:
        grad(picked)(*args)
    assert_at(info.value, picked, "y[i]")
    assert isinstance(info.value.__cause__, IndexError)
    assert_the_function_itself_fails(info.value, picked, *args)


def checked(x):
    if np.any(x < 0):
        raise ValueError("x must not be negative")
    assert x.shape == (2,), "two values please"
    return np.sum(np.sqrt(x))


@pytest.mark.parametrize(
    ("x", "kind", "snippet"),
    [
        (np.array([-1.0, 4.0]), ValueError, 'raise ValueError("x must not be negative")'),
        (np.ones(3), AssertionError, 'assert x.shape == (2,), "two values please"'),
    ],
)
def test_the_users_own_raise_and_assert_keep_their_type_with_a_note(x, kind, snippet):
    with pytest.raises(kind) as info:
        grad(checked)(x)
    assert type(info.value) is kind  # what `except ValueError` in the user's code expects
    plain = plain_error(checked, x)  # (pytest adds its explanation to a plain assert's)
    assert type(plain) is kind and str(plain).splitlines()[0] == str(info.value)
    (note,) = info.value.__notes__
    assert f'File "{__file__}", line {line_of(checked, snippet)}' in note
    assert snippet in note


def looped(x, n):
    s = 0.0
    for i in range(n):
        if i < 2:
            s = s + np.sum(x * x)
        else:
            s = s + np.sum(x[i + 5] * x)
    return s


def waiting(x, limit):
    k = 0
    s = np.sum(x)
    while s < limit:
        s = s + np.sum(x[k:] * x[: k + 1])
        k = k + 1
    return s


@pytest.mark.parametrize(
    ("fn", "args", "snippet", "kind"),
    [
        (looped, (np.ones(3), 3), "x[i + 5]", IndexError),
        (waiting, (np.ones(4), 100.0), "x[k:] * x[: k + 1]", ValueError),
    ],
)
def test_errors_inside_loops_and_branches_point_at_their_line(fn, args, snippet, kind):
    with pytest.raises(UserCodeError) as info:
        grad(fn)(*args)
    assert_at(info.value, fn, snippet)
    assert isinstance(info.value.__cause__, kind)
    assert_the_function_itself_fails(info.value, fn, *args)


def solved(x, a):
    y = x * 2.0
    z = np.linalg.inv(a) @ y
    return np.sum(np.tanh(z) * x)


def test_the_specialized_pair_locates_errors_in_expressions_it_wrote_on_one_line():
    both = value_and_grad(differentiable(solved))
    x, a = np.ones(2), np.eye(2)
    both(x, a)
    both(x, a)  # the second call with these shapes runs the specialized pair
    (specialized,) = differentiable(solved).specialized_sources(0)
    merged = next(line for line in specialized.splitlines() if "x * 2.0" in line)
    assert "tanh" in merged and "@" in merged  # three of the user's lines in one

    with pytest.raises(UserCodeError) as info:
        both(x, np.zeros((2, 2)))
    assert_at(info.value, solved, "np.linalg.inv(a)")
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)
    assert_the_function_itself_fails(info.value, solved, x, np.zeros((2, 2)))

    if not COLUMNS:
        return  # which part of the merged line failed: from Python 3.11
    huge = np.full(2, 1e308)
    with np.errstate(over="raise"), pytest.raises(UserCodeError) as info:
        both(huge, a)  # overflows in x * 2.0, inside the merged line
    assert_at(info.value, solved, "x * 2.0")
    assert isinstance(info.value.__cause__, FloatingPointError)
    with np.errstate(over="raise"):
        assert_the_function_itself_fails(info.value, solved, huge, a)


class Halves(DifferentiableFunction):
    """Adds half the first half of an even-length vector to its second half; the
    backward is wrong (numpy cannot add its terms), or raises on purpose."""

    def __init__(self, backward_raises: bool = False):
        super().__init__(save_inputs_for_backward=True)
        self.backward_raises = backward_raises

    def forward(self, x):
        n = x.shape[0] // 2
        return x[:n] * 0.5 + x[n:]

    def backward(self, d_y, compute_gradients, x):
        if self.backward_raises:
            raise RuntimeError("backward not written yet")
        return np.concatenate([d_y, d_y]) + x[:-1]  # one element short


halves, raising_halves = Halves(), Halves(backward_raises=True)


def through_halves(x):
    return np.sum(halves(np.sin(x)) ** 2)


def through_raising_halves(x):
    return np.sum(raising_halves(x))


def test_a_custom_ops_forward_failing_is_the_function_failing():
    x = np.ones(5)  # odd length: the op's forward cannot add its halves
    with pytest.raises(UserCodeError) as info:
        grad(through_halves)(x)
    assert_at(info.value, through_halves, "halves(np.sin(x))")
    assert_the_function_itself_fails(info.value, through_halves, x)


def test_a_custom_ops_backward_failing_is_located_at_its_call():
    x = np.ones(4)
    through_halves(x)  # the function itself runs fine
    for run in (lambda: grad(through_halves)(x), lambda: vjp(through_halves, x)[1](1.0)):
        with pytest.raises(UserCodeError) as info:
            run()
        assert_at(info.value, through_halves, "halves(np.sin(x))")
        assert info.value.message.startswith("the backward of halves raised ValueError")
        assert "the backward you wrote for halves failed" in info.value.hint  # as called
        frames = traceback.extract_tb(info.value.__cause__.__traceback__)
        assert frames[-1].name == "backward" and frames[-1].filename == __file__


class ShortGradient(Halves):
    def backward(self, d_y, compute_gradients, x):
        return np.concatenate([d_y, d_y])[:-1]  # the wrong shape: the op's check says so


short_gradient = ShortGradient()


def wrong_shape_through_op(x):
    return np.sum(short_gradient(x))


def test_the_toolkits_own_errors_keep_their_type_located_at_the_users_call():
    with pytest.raises(BackwardOutputError) as info:
        grad(wrong_shape_through_op)(np.ones(4))
    assert "has shape (3,), but the input has shape (4,)" in info.value.message
    assert_at(info.value, wrong_shape_through_op, "short_gradient(x)")
    with pytest.raises(BackwardOutputError) as info:
        evaluate(traced_model, traced(np.ones(4)), short_gradient)
    assert_at(info.value, traced_model, "op(y)", columns=COLUMNS)


def test_a_custom_ops_backward_raising_on_purpose_keeps_its_type():
    with pytest.raises(RuntimeError, match="not written yet") as info:
        grad(through_raising_halves)(np.ones(4))
    (note,) = info.value.__notes__
    assert f"line {line_of(through_raising_halves, 'np.sum(raising_halves(x))')}" in note


def test_an_error_in_derivative_code_of_ours_is_an_internal_error(monkeypatch):
    # a runtime helper with a bug: it calls numpy wrongly (inv takes one argument)
    monkeypatch.setitem(emit.RUNTIME, "unreduce", np.linalg.inv)

    def total(x):  # a function of its own: compiled after the patch, with the broken helper
        y = np.sin(x)
        return np.sum(y * x)

    x = np.ones(3)
    with pytest.raises(InternalError) as info:
        grad(total)(x)
    assert_at(info.value, total, "np.sum(y * x)")
    assert "internal error, please report" in info.value.hint
    assert "total itself ran fine" in info.value.hint
    assert isinstance(info.value.__cause__, TypeError)
    total(x)  # the hint says the function ran fine: it does


def test_an_error_in_tangent_code_of_ours_is_an_internal_error(monkeypatch):
    # a runtime helper with a bug: the array module it gives has no array functions
    monkeypatch.setitem(emit.RUNTIME, "array_module", lambda *values: math)

    def waves(x):
        y = np.sin(x)
        return np.sum(y * y)

    x = np.ones(3)
    with pytest.raises(InternalError) as info:
        jvp(waves, (x,), (x,))
    assert_at(info.value, waves, "np.sin(x)")  # its tangent needs xp.cos(x)
    assert "waves ran fine up to here" in info.value.hint


def helper_with_bug(v):
    return v[:2] + v


def calls_a_helper(x):
    return np.sum(helper_with_bug(x * 2.0))


def test_a_compiled_helper_failing_is_located_in_the_helper():
    x = np.ones(3)
    with pytest.raises(UserCodeError) as info:
        grad(calls_a_helper)(x)
    assert_at(info.value, helper_with_bug, "v[:2] + v")
    assert_the_function_itself_fails(info.value, helper_with_bug, x * 2.0)
    plain_error(calls_a_helper, x)  # and the caller fails with it


def dict_loss(params, x):
    h = x @ params["w"]
    return np.sum(h + params["b"])


def test_structured_arguments_and_layers_locate_errors_at_the_users_line():
    args = ({"w": np.ones((3, 2)), "b": np.ones(3)}, np.ones((4, 3)))
    with pytest.raises(UserCodeError) as info:
        grad(dict_loss)(*args)
    assert_at(info.value, dict_loss, 'h + params["b"]')
    assert_the_function_itself_fails(info.value, dict_loss, *args)

    class Mismatched(Layer):
        def predict(self, X):
            Y = X[:, :1] + X.T
            return Y**3

    layer, X = Mismatched().initialize(np.zeros((1, 2))), np.ones((3, 2))
    with pytest.raises(UserCodeError) as info:
        compiled_forward(layer, "predict", (X,))
    assert_at(info.value, Mismatched.predict, "X[:, :1] + X.T")
    assert_the_function_itself_fails(info.value, layer.predict, X)


def test_a_second_derivative_locates_errors_at_the_users_line():
    def cubic(x, w):
        y = x * x * x
        return np.sum(y * w)

    args = (np.ones(3), np.ones(2))
    for run in (
        lambda: grad(grad(cubic))(*args),
        lambda: jvp(grad(cubic), args, (np.ones(3), None)),  # forward over reverse
    ):
        with pytest.raises(UserCodeError) as info:
            run()
        assert_at(info.value, cubic, "y * w")  # not the generated gradient's line
        assert_the_function_itself_fails(info.value, cubic, *args)


CELL = "def cell_loss(x, w):\n    return np.sum(x @ w)\n"


def test_errors_in_notebook_cells_name_the_cell(ipython_cells):
    filename = "/tmp/ipykernel_4242/2051367291.py"
    linecache.cache[filename] = (len(CELL), None, CELL.splitlines(keepends=True), filename)
    namespace = {"np": np}
    exec(compile(CELL, filename, "exec"), namespace)  # as IPython runs a cell
    ipython_cells({filename: 3})
    with pytest.raises(UserCodeError) as info:
        grad(namespace["cell_loss"])(np.ones(3), np.ones((2, 2)))
    text = str(info.value)
    assert "Cell In[3], line 2, column 19" in text and filename not in text
    shown = text.splitlines()
    assert shown[shown.index("        return np.sum(x @ w)") + 1] == " " * (4 + 18) + "^^^^^"


def traced_model(x, op):
    y = np.sin(x)
    z = op(y)
    return gradient(np.sum(z), x)


def test_tracing_reports_a_custom_ops_failing_backward_at_its_call():
    with pytest.raises(UserCodeError) as info:
        evaluate(traced_model, traced(np.ones(4)), Halves())
    assert_at(info.value, traced_model, "op(y)", columns=COLUMNS)
    assert info.value.message.startswith("the backward of Halves raised ValueError")
    with pytest.raises(RuntimeError) as raised:
        evaluate(traced_model, traced(np.ones(4)), Halves(backward_raises=True))
    assert f"line {line_of(traced_model, 'op(y)')}" in raised.value.__notes__[0]


def test_tracing_leaves_forward_errors_in_the_users_own_frames():
    with pytest.raises(ValueError, match="broadcast") as info:
        evaluate(traced_model, traced(np.ones(5)), Halves())  # odd length
    frames = traceback.extract_tb(info.value.__traceback__)
    lines = {(frame.filename, frame.lineno) for frame in frames}
    assert (__file__, line_of(traced_model, "op(y)")) in lines  # the user's call
    assert frames[-1].name == "forward" and frames[-1].filename == __file__
