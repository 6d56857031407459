"""Writes where numpy loses a value, in the compiler (``value_and_grad``, ``jvp``,
second order), on the programs of ``array_writes.py``: an index that names a position
twice, however it is spelled, and a float written into an integer or boolean array are
refused at the write; ``y += v`` that numpy itself refuses (a float result into an
integer array) is refused at the update; the same writes naming each position once,
and integer arrays used as numpy allows, are right (central differences in float64),
in the general pair and in the pair specialized at the second call."""

from __future__ import annotations

import inspect
import itertools

import array_writes
import numpy as np
import pytest
from array_writes import (
    DISTINCT,
    INTEGERS_RIGHT,
    NUMPY_REFUSES,
    REPEATED,
    TRUNCATED,
    TRUNCATED_IN_PLAIN_ARRAYS,
    X,
)
from oracles import central_difference
from program_checks import assert_right_in_mode

from autodiff_tutor import hessian, jvp, value_and_grad
from autodiff_tutor.compiler.pipeline import stages
from autodiff_tutor.errors import AutodiffError, NoDerivativeRuleError, UserCodeError
from autodiff_tutor.runtime.helpers_indexing import _repeats_a_position

MODES = ("compiler", "jvp")


def _call(mode, fn, x=X):
    if mode == "jvp":
        return jvp(fn, (x.copy(),), (np.linspace(-1.0, 1.0, x.size),))
    return value_and_grad(fn)(x.copy())


def _refused(call, line_text, kind=AutodiffError):
    """``call()`` is refused with ``kind``, located at the line of ``array_writes.py``
    holding ``line_text``."""
    with pytest.raises(kind) as info:
        call()
    location = info.value.location
    assert location is not None and location.filename == array_writes.__file__
    assert line_text in location.text, location.text
    return info.value


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("fn", "line"), REPEATED, ids=[f.__name__ for f, _ in REPEATED])
def test_a_write_naming_a_position_twice_is_refused_at_the_write(mode, fn, line):
    error = _refused(lambda: _call(mode, fn), line, NoDerivativeRuleError)
    assert "repeated indices" in error.message
    assert "in a loop" in error.hint
    assert "np.add.at and np.bincount have no derivative rule" in error.hint


def test_the_loop_the_refusal_suggests_compiles_and_is_right():
    assert_right_in_mode("compiler", array_writes.repeats_added_in_a_loop, X)


def write_at_rows(x, rows):
    m = np.zeros((3, 3))
    m[rows, [1, 1]] = x[:2]
    return np.sum(m * array_writes.K)


def test_rows_that_repeat_at_a_later_call_are_refused_by_the_specialized_pair():
    """The rows are values: the pair specialized on their shape and dtype sees them
    repeat only at the third call, and refuses there too."""
    compiled = value_and_grad(write_at_rows)
    distinct = np.array([0, 2])
    for _ in range(2):  # the general pair, then the specialized one
        value, gradient = compiled(X.copy(), distinct)
        want = central_difference(lambda x: write_at_rows(x, distinct), [X.copy()], 0)
        np.testing.assert_allclose(gradient, want, atol=1e-6)
    with pytest.raises(NoDerivativeRuleError, match="repeated indices"):
        compiled(X.copy(), np.array([0, -3]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", DISTINCT, ids=[f.__name__ for f in DISTINCT])
def test_the_same_spellings_naming_each_position_once_are_right(mode, fn):
    assert_right_in_mode(mode, fn, X)


@pytest.mark.parametrize("fn", DISTINCT + INTEGERS_RIGHT, ids=lambda f: f.__name__)
def test_the_specialized_pair_is_right_too(fn):
    compiled = value_and_grad(fn)
    want = central_difference(fn, [X.copy()], 0)
    for _ in range(3):  # the general pair, then the specialized one, twice
        value, gradient = compiled(X.copy())
        assert np.isclose(value, fn(X.copy()), rtol=1e-12)
        np.testing.assert_allclose(gradient, want, atol=1e-6)


TRUNCATIONS = TRUNCATED + TRUNCATED_IN_PLAIN_ARRAYS


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("fn", "line"), TRUNCATIONS, ids=[f.__name__ for f, _ in TRUNCATIONS])
def test_a_float_written_into_integers_is_refused_at_the_write(mode, fn, line):
    error = _refused(lambda: _call(mode, fn), line, NoDerivativeRuleError)
    assert "writes a float into an array of" in error.message
    assert "np.zeros(n)" in error.hint and ".astype(" in error.hint


def copy_of_an_int_argument(x, n):
    y = n.copy()
    y[0] = x[0]
    return np.sum(y * 1.0) + x[1]


def test_a_float_written_into_a_copy_of_an_integer_argument_is_refused():
    with pytest.raises(NoDerivativeRuleError, match="into an array of int64") as info:
        value_and_grad(copy_of_an_int_argument)(X.copy(), np.array([0, 0]))
    assert "y[0] = x[0]" in info.value.location.text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", INTEGERS_RIGHT, ids=lambda f: f.__name__)
def test_integer_arrays_used_as_numpy_allows_are_right(mode, fn):
    assert_right_in_mode(mode, fn, X)


CALLS = {
    "compiler": lambda fn: _call("compiler", fn),
    "jvp": lambda fn: _call("jvp", fn),
    "hessian": lambda fn: hessian(fn)(X.copy()),
}


@pytest.mark.parametrize("how", CALLS)
@pytest.mark.parametrize(("fn", "line"), NUMPY_REFUSES, ids=[f.__name__ for f, _ in NUMPY_REFUSES])
def test_an_update_numpy_refuses_is_refused_at_the_update(how, fn, line):
    with pytest.raises(TypeError):  # numpy's UFuncTypeError
        fn(X.copy())
    error = _refused(lambda: CALLS[how](fn), line)
    if "[" not in line:  # y += x on the array itself
        assert isinstance(error, UserCodeError) and "UFuncTypeError" in error.message
        assert "np.zeros(n)" in error.hint


def test_the_forward_checks_an_update_only_where_it_may_be_an_integer_array():
    def updates(x, n):
        s = 0.0
        h = np.zeros(3)
        y = x * 2.0
        k = np.arange(3)
        for i in range(3):
            s += x[i]
            h += x
            y -= 1
            k += n
        return s + np.sum(h) + np.sum(y) + np.sum(k * x)

    forward = stages(updates, ["x"])["forward"]
    checks = [line.strip() for line in forward.splitlines() if "check_in_place" in line]
    assert checks == ["check_in_place(k_2, '+=', n)"], forward
    x = np.array([0.5, -1.0, 2.0])
    value, gradient = value_and_grad(updates)(x, 2)
    np.testing.assert_allclose(gradient, central_difference(updates, [x, 2], 0), atol=1e-6)


SHAPES = [(5,), (3, 4), (2, 3, 4)]
INDEXES = [
    [0, -5],
    [1, 3, -1],
    ([0, 0], [1, -3]),
    ([0, 1], [1, 1]),
    np.ix_([0, -3], [1, 2]),
    np.ix_([0, 2], [1, 1]),
    ([[0], [1]], [2, 2]),
    (slice(None), [1, 1]),
    (slice(None, None, -1), [0, 1]),
    (Ellipsis, [0, -4]),
    (None, [0, 0]),
    (np.array([True, False, True]), [1, 1]),
    (np.array([True, False, False]), [1, 1]),
    ([0, 0], slice(0, 0)),
    (0, [0, 0, 1]),
    ([1, 1], 2, slice(None)),
    ([0, 1], slice(None), [0, 0]),
    ([0, 0], slice(None), [0, 1]),
    np.array([[True, False, True, False], [False, True, False, False], [True] * 4]),
    [],
]


@pytest.mark.parametrize(("shape", "index"), list(itertools.product(SHAPES, INDEXES)))
def test_a_repeat_is_found_as_numpy_selects_the_elements(shape, index):
    """The check agrees with numpy's own selection: the flat positions of the elements
    ``x[index]`` selects, repeated or not (indexes numpy refuses are left to numpy)."""
    positions = np.arange(int(np.prod(shape))).reshape(shape)
    try:
        picked = positions[index].reshape(-1)
    except (IndexError, ValueError):
        assert not _repeats_a_position(shape, index)
        return
    assert _repeats_a_position(shape, index) == (len(np.unique(picked)) != picked.size)


def test_the_shared_programs_are_what_their_lists_say():
    """Every list's programs run in numpy (but those numpy refuses), so the verdicts
    above are about the compiler, not about broken programs."""
    for fn in [f for f, _ in REPEATED + TRUNCATIONS] + DISTINCT + INTEGERS_RIGHT:
        assert np.isfinite(fn(X.copy()))
    assert inspect.getsourcefile(REPEATED[0][0]) == array_writes.__file__


zeros = np.zeros  # a global, which the local name below shadows


def shadowed_maker(x):
    zeros = np.arange
    y = zeros(4)
    y += x
    return np.sum(y)


def test_a_local_name_shadowing_a_numpy_maker_is_not_taken_for_it():
    """Only numpy's own array makers tell that an array is float: a local name that
    shadows one (``zeros``, bound to ``np.arange``) leaves the update checked."""
    with pytest.raises(UserCodeError, match="UFuncTypeError"):
        value_and_grad(shadowed_maker)(X.copy())
