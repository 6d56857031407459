"""A function of the user's that writes into its argument, wherever it is called.

Where no gradient flows through its result (an ``if`` or ``while`` test, an
``assert``, a loop's range, an index, a value kept whole) the compiled code runs a
helper as the plain function, on the caller's arrays. A helper that writes into its
argument (``a *= b``) must be refused there as where it is compiled in turn: located at
its write, with a note that says where it is called. Otherwise the compiled code reads
the arrays as if unchanged, and the gradient is silently wrong (fuzz construct
param_helper_write).

Each program calls the global ``helper``. With the helper that copies first (the
refusal's hint followed) every program compiles, and its value and gradient agree with
numpy, central differences and autograd; so do helpers that write only into arrays of
their own, or cannot write at all.
"""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest
import scipy.special
from oracles import autograd_gradient, central_difference
from wrapped_text import flat

import autodiff_tutor as ad
from autodiff_tutor.errors import UnsupportedSyntaxError

X = np.array([0.3, -1.2, 0.7])
W = np.array([1.5, 0.4, -0.8])


def scale_in_place(a, b):
    a *= b
    return a


def scale(a, b):
    a = a * b
    return a


helper = scale  # what the programs call; each test binds it


def in_if_test(x, w):
    if np.sum(helper(x, w)) > 0:
        return np.sum(x * x)
    return np.sum(np.sin(x))


def in_while_test(x, w):
    n = 0
    total = 0.0
    while np.sum(helper(x, w)) < 10.0 and n < 2:
        total = total + np.sum(x * x)
        n += 1
    return total + np.sum(x)


def in_assert(x, w):
    assert np.sum(helper(x, w)) < 100.0
    return np.sum(x * x)


def in_a_conditional_expression(x, w):
    y = x * 2.0 if np.sum(helper(x, w)) > 0 else x * 3.0
    return np.sum(x * y)


def in_a_range(x, w):
    total = 0.0
    for _ in range(1 + int(np.sum(helper(x, w)) > 0)):
        total = total + np.sum(x * x)
    return total


def in_a_comprehension_filter(x, w):
    rows = [x[i] * x[i] for i in range(3) if np.sum(helper(x, w)) > -100.0]
    return rows[0] + rows[2] + np.sum(x * x)


def in_a_default_of_a_nested_function(x, w):
    def scaled(a, big=np.sum(helper(x, w)) > 0):  # noqa: B008 - the place tested
        return a * 2.0 if big else a

    return np.sum(scaled(x) * x)


def in_a_generator_of_any(x, w):
    if any(np.sum(helper(r, w[0])) > 0 for r in x):
        return np.sum(x * x)
    return np.sum(x)


def in_a_print(x, w):
    print(np.sum(helper(x, w)) > 0)
    return np.sum(x * x)


def in_a_value_without_gradient(x, w):
    positive = np.sum(helper(x, w)) > 0
    return np.sum(x * x) if positive else np.sum(x)


def in_an_index(x, w):
    return np.sum(x * x) + x[int(np.sum(helper(x, w)) > 0)]


def in_a_call_without_gradient(x, w):
    signs = np.sign(helper(x, w))
    return np.sum(x * x * signs)


def on_a_local_array_without_gradient(x, w):
    mask = (x > 0) * 1.0
    y = x * mask
    count = np.sum(helper(mask, 2.0))
    return np.sum(y) * count


PLACES = [
    in_if_test,
    in_while_test,
    in_assert,
    in_a_conditional_expression,
    in_a_range,
    in_a_comprehension_filter,
    in_a_default_of_a_nested_function,
    in_a_generator_of_any,
    in_a_print,
    in_a_value_without_gradient,
    in_an_index,
    in_a_call_without_gradient,
    on_a_local_array_without_gradient,
]


def _line_of(fn, text: str = "helper(") -> int:
    """The file line of ``fn`` where ``text`` (the helper's call) is."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn", PLACES)
def test_a_helper_writing_into_its_argument_is_refused_where_it_runs_plainly(fn, monkeypatch):
    """Refused at the helper's write, in reverse and forward mode, with a note at the
    caller's line that calls it."""
    monkeypatch.setattr(sys.modules[__name__], "helper", scale_in_place)
    for call in (
        lambda: ad.value_and_grad(fn)(X.copy(), W.copy()),
        lambda: ad.jvp(fn, (X.copy(), W.copy()), (np.ones(3), np.zeros(3))),
    ):
        with pytest.raises(UnsupportedSyntaxError) as info:
            call()
        error = info.value
        assert error.location.filename == __file__
        assert "a *= b" in error.location.text
        assert "would change, in place" in flat(str(error))
        note = flat(" ".join(error.__notes__))
        assert f"scale_in_place is called by {fn.__name__}" in note
        assert f"line {_line_of(fn)}," in note


@pytest.mark.filterwarnings("ignore:Output seems independent of input")
@pytest.mark.parametrize("fn", PLACES)
def test_the_helper_that_copies_first_compiles_everywhere(fn, monkeypatch):
    """The refusal's hint followed (``a = a * b``): value as numpy's, gradient as central
    differences and autograd, in reverse and forward mode."""
    monkeypatch.setattr(sys.modules[__name__], "helper", scale)
    value, (dx, dw) = ad.value_and_grad(fn, wrt=(0, 1))(X.copy(), W.copy())
    assert np.isclose(value, fn(X.copy(), W.copy()))
    for index, gradient in ((0, dx), (1, dw)):
        expected = central_difference(fn, [X, W], index)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
        if fn is not in_a_print:  # autograd's boxes print as boxes
            np.testing.assert_allclose(gradient, autograd_gradient(fn, [X, W], index), atol=1e-12)
    _, tangent = ad.jvp(fn, (X.copy(), W.copy()), (np.ones(3), np.zeros(3)))
    assert np.isclose(tangent, np.sum(central_difference(fn, [X, W], 0)), atol=1e-6)


# -- helpers run plainly that leave their arguments as they were compile -----------------


def writes_into_its_own_array(a, b):
    c = np.zeros(a.shape)
    c[0] = 1.0
    return np.sum(a * b) + np.sum(c)


def cannot_be_compiled_but_writes_nothing(a, b):
    try:
        return np.sum(a * b)
    except ValueError:
        return 0.0


def writes_through_another_helper(a, b):
    return np.sum(scale_in_place(a, b))


@ad.differentiable
def compiled_helper_writing(a, b):
    a *= b
    return a


@pytest.mark.parametrize(
    "clean", [writes_into_its_own_array, cannot_be_compiled_but_writes_nothing]
)
def test_a_helper_that_leaves_its_arguments_compiles_in_a_test(clean, monkeypatch):
    """Run as the plain function, a helper that writes only into arrays of its own (read,
    and accepted), or one the compiler cannot read but that writes nothing (``try``), is
    fine in an ``if`` test."""
    monkeypatch.setattr(sys.modules[__name__], "helper", clean)

    def program(x, w):
        if helper(x, w) > 0:
            return np.sum(x * x)
        return np.sum(np.sin(x))

    for w in (W, -W):  # both branches
        value, gradient = ad.value_and_grad(program)(X.copy(), w.copy())
        assert np.isclose(value, program(X.copy(), w.copy()))
        np.testing.assert_allclose(gradient, central_difference(program, [X, w], 0), atol=1e-8)
        np.testing.assert_allclose(gradient, autograd_gradient(program, [X, w], 0), atol=1e-12)


def calls_a_library_function_in_a_test(x, w):
    if np.sum(scipy.special.softmax(x * w)) > 0.5:
        return np.sum(x * x)
    return np.sum(x)


def test_a_library_function_in_a_test_runs_as_it_is():
    """A library's function (scipy's softmax: its source calls helpers with ``*args``) is
    not the user's: the compiler does not read it, wherever it is called."""
    value, gradient = ad.value_and_grad(calls_a_library_function_in_a_test)(X.copy(), W.copy())
    assert np.isclose(value, calls_a_library_function_in_a_test(X.copy(), W.copy()))
    expected = central_difference(calls_a_library_function_in_a_test, [X, W], 0)
    np.testing.assert_allclose(gradient, expected, atol=1e-8)


@pytest.mark.parametrize(
    ("writer", "called"),
    [
        (
            writes_through_another_helper,
            "scale_in_place is called by writes_through_another_helper",
        ),
        (compiled_helper_writing, "compiled_helper_writing is called by program"),
    ],
)
def test_a_write_reached_through_another_helper_or_a_compiled_one_is_refused(
    writer, called, monkeypatch
):
    """The write is found through a helper that calls the writing one, and through a
    ``@differentiable`` helper (which also runs as the plain function there)."""
    monkeypatch.setattr(sys.modules[__name__], "helper", writer)

    def program(x, w):
        if np.sum(helper(x, w)) > 0:
            return np.sum(x * x)
        return np.sum(x)

    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.grad(program)(X.copy(), W.copy())
    assert "a *= b" in info.value.location.text
    assert called in flat(" ".join(info.value.__notes__))


def double_in_place(a):
    a *= 2.0
    return a


def calls_a_function_it_is_given(x, act):
    if np.sum(act(x)) > 0:
        return np.sum(x * x)
    return np.sum(x)


def test_a_function_passed_in_that_writes_into_its_argument_is_refused_at_the_write():
    """A parameter holding a function is read while compiling (the function is known at
    the call); called in a test, where it runs plainly, its write into the caller's
    array is refused at the write, with a note at the call."""
    with pytest.raises(UnsupportedSyntaxError, match=r"'a \*= \.\.\.' would change") as info:
        ad.grad(calls_a_function_it_is_given, wrt=0)(X.copy(), double_in_place)
    assert info.value.location.line == _line_of(double_in_place, "a *= 2.0")
    note = flat(" ".join(info.value.__notes__))
    assert "double_in_place is called by calls_a_function_it_is_given" in note
