"""Tracing follows numpy through in-place updates, or refuses with a located error.

An update of an array is seen by its views (``v = t.reshape(-1); t /= 2.0``), as in
numpy, and an update *through* a view by its array; an update through an alias
(``z = y; z += 1.0``) is seen by ``y``; a plain array used in an operation and changed
afterwards (``t = np.sum(x * w); w -= 1.0``) leaves the gradient as it was at the
operation; a traced value written into an array the function made is followed, into a
plain array from outside it is a located error. Writes where numpy loses a value (the
programs of ``array_writes.py``: a position named twice, a float written into integers,
an update of integers numpy refuses) are located errors; the same writes naming each
position once are followed. Values are checked against plain numpy, gradients against
central finite differences.
"""

from __future__ import annotations

import copy

import array_writes
import numpy as np
import pytest
from fuzz.check import Loaded
from oracles import autograd_gradient, central_difference
from program_checks import assert_right_in_mode

from autodiff_tutor.errors import (
    AutodiffError,
    NoDerivativeRuleError,
    TracingError,
    UserCodeError,
)
from autodiff_tutor.ops import SReLUFunction
from autodiff_tutor.tracing import evaluate, gradient, traced, value_and_gradient

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])


def _check_like_numpy(fn, *args):
    """The traced value is numpy's, the gradient w.r.t. args[0] the finite difference."""
    value, grad = value_and_gradient(fn, *[a.copy() for a in args], wrt=0)
    expected = fn(*[a.copy() for a in args])
    assert np.allclose(value, expected, rtol=1e-12, atol=1e-12)
    assert np.allclose(grad, central_difference(fn, [a.copy() for a in args], 0), atol=1e-6)


def _refused(fn, *args, line_text: str) -> AutodiffError:
    with pytest.raises(AutodiffError) as info:
        value_and_gradient(fn, *args, wrt=0)
    error = info.value
    assert error.location is not None and error.location.filename == __file__
    assert line_text in error.location.text
    return error


def alias_update(x):
    y = x * 2.0
    z = y
    z += 1.0
    return np.sum(y * y)


def view_update_reshape(x):
    t = x * 1.0
    v = t.reshape(-1)
    t /= 2.0
    return np.sum(v * v)


def view_update_transpose(x):
    t = x + 0.0
    v = np.transpose(t)
    t *= 2.0
    return np.sum(v)


def views_of_views(x):
    t = x * 1.0
    v = t.reshape(-1)
    w = v[1:4]
    row = t[1]
    t /= 2.0
    t[0, 1] = 7.0 * x[1, 1]
    t[1] += x[0]
    return np.sum(v * np.sum(w)) + np.sum(t.T[0]) + np.sum(row * row)


def view_updated_through_the_view(x):
    t = x + 0.0
    v = t[0]
    v += 1.0
    return np.sum(t * t)


def plain_array_changed_later(x, w):
    t = np.sum(x * w)
    w -= 1.0
    return t


def element_writes(x):
    y = x * 1.0
    y[0] = np.tanh(x[1])
    y[:, 1] *= 0.5 + x[:, 0]
    y[1] += x[0]
    y[1:] = y[:1]
    return np.sum(y * y)


def update_without_views(x):
    y = np.sin(x)
    y -= x * x
    y **= 2
    return np.sum(y)


def test_an_alias_sees_the_in_place_update():
    _check_like_numpy(alias_update, X)


def test_an_update_without_views_is_followed():
    _check_like_numpy(update_without_views, X)


@pytest.mark.parametrize("fn", [view_update_reshape, view_update_transpose, views_of_views])
def test_the_views_of_an_updated_array_see_the_update(fn):
    _check_like_numpy(fn, X)


def view_updated_through_the_view_twin(x):
    t = x + np.array([[1.0], [0.0]])
    return np.sum(t * t)


def writes_through_views_of_views(x):
    t = x * 1.0
    v = t.T
    row = v[1]
    row *= x[0, 0]
    v[0] = np.tanh(x[1])
    flat = t.reshape(-1)
    flat[-1] = 2.0
    return np.sum(t * x) + np.sum(v * v) + np.sum(row)


def writes_through_views_of_views_twin(x):
    first = np.tanh(x[1])
    middle = x[:, 1] * x[0, 0]
    t = np.stack([first, middle, x[:, 2]], axis=1)
    t = np.concatenate([t.reshape(-1)[:-1], np.array([2.0])]).reshape(t.shape)
    return np.sum(t * x) + np.sum(t.T * t.T) + np.sum(t[:, 1])


@pytest.mark.parametrize(
    ("fn", "twin", "x"),
    [
        (view_updated_through_the_view, view_updated_through_the_view_twin, X),
        (writes_through_views_of_views, writes_through_views_of_views_twin, np.vstack([X, -X[:1]])),
    ],
)
def test_an_update_through_a_view_is_seen_by_its_array(fn, twin, x):
    """The write through the view is put back into the array (tracing/operators.py):
    values as numpy's, the gradient as autograd's on a twin without writes."""
    _check_like_numpy(fn, x)
    assert np.isclose(twin(x.copy()), fn(x.copy()), rtol=1e-12)
    _, grad = value_and_gradient(fn, x.copy(), wrt=0)
    np.testing.assert_allclose(grad, autograd_gradient(twin, [x.copy()], 0), rtol=1e-10)


def unstacked_row_written(x):
    t = x * 2.0
    a, b = np.unstack(t)  # a tuple of views of t's rows
    a[1] = 0.0
    b *= x[0, 0]
    return np.sum(t * np.arange(1.0, 7.0).reshape(2, 3))


def unstacked_column_written(x):
    t = x * 2.0
    a, b, c = np.unstack(t, axis=1)
    c[0] = x[1, 1] ** 2
    return np.sum(t * np.arange(1.0, 7.0).reshape(2, 3)) + np.sum(a)


@pytest.mark.parametrize("fn", [unstacked_row_written, unstacked_column_written])
def test_a_write_through_an_unstacked_piece_is_seen_by_its_array(fn):
    """``np.unstack`` returns a tuple of views, as ``np.split`` returns a list: a write
    through one piece is put back into the array (it was a located refusal)."""
    _check_like_numpy(fn, X)


def test_a_plain_array_changed_after_its_use_keeps_the_gradient():
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    value, grad = value_and_gradient(plain_array_changed_later, X, w.copy(), wrt=0)
    assert np.isclose(value, np.sum(X * w))
    assert np.array_equal(grad, w)  # d/dx sum(x * w) with w as it was used


def test_element_writes_follow_numpy():
    _check_like_numpy(element_writes, X)


@pytest.mark.parametrize(
    ("write", "expected"), [("y[0] = 1.0", [1.0, 4.0]), ("y[1:] = y[:1]", [2.0, 2.0])]
)
def test_an_element_write_and_a_slice_from_the_same_array_follow_numpy(write, expected):
    namespace = {"np": np}
    code = compile(f"def fun(x):\n    y = x * 2\n    {write}\n    return y\n", __file__, "exec")
    exec(code, namespace)
    out = evaluate(namespace["fun"], traced([1.0, 2.0]))
    assert np.asarray(out).tolist() == expected


def test_repeated_indices_in_a_write_are_a_located_error():
    def fun(x):
        y = x * 1.0
        y[[0, 0]] = 1.0
        return np.sum(y)

    _refused(fun, np.ones(3), line_text="y[[0, 0]] = 1.0")


WRITES_INTO_OUT = ["out[0] = x[0]", "out[1:] = x[1:]", "out[...] = x"]


@pytest.mark.parametrize("write", WRITES_INTO_OUT)
def test_a_traced_value_written_into_a_plain_array_from_outside_is_a_located_error(write):
    """A plain array the caller passed cannot take a trace (the caller's array would
    get the numbers only)."""
    namespace = {"np": np}
    source = f"def fun(x, out):\n    {write}\n    return np.sum(out * x)\n"
    exec(compile(source, __file__, "exec"), namespace)
    with pytest.raises(TracingError) as info:
        value_and_gradient(namespace["fun"], np.ones(3), np.zeros(3))
    assert "into a plain (untraced) numpy array" in info.value.message
    assert info.value.lineno == 2


@pytest.mark.parametrize("write", WRITES_INTO_OUT)
def test_a_traced_value_written_into_the_functions_own_array_is_followed(write):
    """np.zeros made in the traced function is a buffer: the writes keep their trace."""
    namespace = {"np": np}
    source = f"def fun(x):\n    out = np.zeros(3)\n    {write}\n    return np.sum(out * x)\n"
    exec(compile(source, __file__, "exec"), namespace)
    fun = namespace["fun"]
    x = np.array([0.5, -1.0, 2.0])
    value, grad = value_and_gradient(fun, x)
    assert value == fun(x)
    np.testing.assert_allclose(grad, central_difference(fun, [x], 0), atol=1e-6)


def test_a_write_into_a_plain_array_at_the_end_is_still_refused():
    def fun(x, out):
        y = np.sum(x * x)
        out[0] = y
        return y, gradient(y, x)

    with pytest.raises(TracingError) as info:
        evaluate(fun, traced([1.0, 2.0]), np.zeros(2))
    assert "out[0] = y" in info.value.location.text


def test_an_update_that_would_change_the_shape_is_refused():
    def fun(x):
        y = x[0] * 1.0
        y += x
        return np.sum(y)

    error = _refused(fun, X, line_text="y += x")
    assert "(3,)" in error.message and "(2, 3)" in error.message


def test_an_update_keeps_the_dtype_like_numpy():
    def fun(x):
        y = x * 1.0
        y += np.ones(2)  # float64 into float32 stays float32 in numpy
        return y

    out = evaluate(fun, traced(np.ones(2, dtype=np.float32)))
    assert out.dtype == np.float32


def test_copy_copy_is_a_copy_not_an_alias():
    def fun(x):
        y = x * 1.0
        c = copy.copy(y)
        y += 1.0
        return np.sum(c)

    _check_like_numpy(fun, X)


def test_an_update_of_a_numpy_scalar_rebinds_like_numpy():
    def fun(x):
        s = np.sum(x) * 1.0  # a numpy scalar: immutable, so += makes a new one
        t = s
        t += 1.0
        return s * s

    _check_like_numpy(fun, X)


def test_an_element_write_into_a_numpy_scalar_is_a_located_error():
    def fun(x):
        s = np.sum(x)
        s[...] = 1.0
        return s

    _refused(fun, X, line_text="s[...] = 1.0")


def _accumulated(x):
    acc = np.zeros_like(x)
    for i in range(3):
        acc += np.tanh(x) * (i + 1)
    return np.sum(acc * acc)


def _recurrence(x):
    y = np.ones_like(x)
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * 0.5 + np.sin(x[i])
    return np.sum(y * y)


def _aliased(x):
    acc = np.zeros_like(x)
    seen = acc  # an alias sees the update, as in numpy
    acc += x * x
    acc[0] = np.cos(x[1])
    return np.sum(seen * x)


@pytest.mark.parametrize("fn", [_accumulated, _recurrence, _aliased])
def test_an_array_made_like_a_traced_one_takes_traced_updates(fn):
    # np.zeros_like/ones_like/empty_like(x) of a traced x is traced (a constant): the
    # updates keep their trace (the forms of the fuzz's idioms loop_inplace and
    # loop_write)
    _check_like_numpy(fn, X)


# -- an update through a view keeps the array's memory layout ----------------------------


def write_through_a_row_of_a_transposed_copy(x):
    t = x.T + 0.0  # numpy keeps x.T's layout: t is Fortran-ordered
    rows = t[1:]
    rows *= 2.0  # through the view: t changes, and stays Fortran-ordered
    flat = t.reshape(-1)  # so this is a copy, not a view
    t[0] = 5.0  # and does not change flat
    return np.sum(flat * flat) + np.sum(t * x.T)


def write_through_a_transpose_then_reshape(x):
    t = x.T + 0.0
    u = np.transpose(t)
    u *= 2.0
    s = t + 0.0  # Fortran-ordered as t is, in numpy
    flat = s.reshape(-1)  # a copy
    s[-1] *= 0.5
    return np.sum(flat * flat)


@pytest.mark.parametrize(
    "fn", [write_through_a_row_of_a_transposed_copy, write_through_a_transpose_then_reshape]
)
def test_an_update_through_a_view_keeps_the_memory_layout(fn):
    """A write through a view, put back into a Fortran-ordered array, keeps it
    Fortran-ordered, so a later reshape is a copy, as in numpy, and does not take later
    writes: values as numpy's."""
    _check_like_numpy(fn, X)


SRELU = SReLUFunction("BC")


def _srelu_then_write_through_a_view(alpha, x):
    y = np.sum(SRELU(x, -0.5 - 0.0 * alpha, alpha, 0.4 + 0.0 * alpha, 0.5 + 0.0 * alpha))
    flat = x.reshape(-1)  # a view of the plain input the op saved for its backward
    flat[0] = 5.0
    return y


def _srelu_alone(alpha, x):
    return np.sum(SRELU(x, -0.5 - 0.0 * alpha, alpha, 0.4 + 0.0 * alpha, 0.5 + 0.0 * alpha))


def test_a_plain_input_a_custom_op_saved_and_later_written_keeps_the_gradient():
    """A custom op saves its plain input ``x`` for the backward; a write into ``x``
    after the call (through a view) must not reach the saved value: the gradient is
    that of the value the op was called on."""
    alpha, x = np.full((1, 3), 0.2), np.array([[-3.0, 0.1, 1.2]])
    value, got = value_and_gradient(_srelu_then_write_through_a_view, alpha, x.copy(), wrt=0)
    assert np.isclose(value, _srelu_alone(alpha, x))
    np.testing.assert_allclose(got, central_difference(_srelu_alone, [alpha, x], 0), atol=1e-6)


def traced_view_of_a_view_then_two_writes(x):
    v1 = x + 0.0
    v2 = np.transpose(v1)
    v1 += 1.0
    v3 = v2 * 1.0
    v3[2] = np.tanh(v2).reshape(-1)[:3]
    v4 = v3 + 0.0
    v5 = np.reshape(v4, (-1,))
    v4 /= 2.0
    return np.sum(v5)


def traced_view_twin(x):
    """The same value without writes (the reshape of the Fortran-ordered v4 copies)."""
    v2 = np.transpose(x + 1.0)
    row = np.tanh(v2).reshape(-1)[:3]
    return np.sum(np.concatenate([v2[:2], row[None], v2[3:]]))


def test_an_element_write_keeps_the_layout_a_later_reshape_depends_on():
    """An element write into a Fortran-ordered array (a transpose's copy) keeps that
    layout (``assign_at``), so a later ``reshape`` of it copies, as numpy's does, and
    does not see the update after it. Checked in tracing and the compiler against
    numpy, central differences and autograd on a twin without writes."""
    x = np.random.default_rng(1).normal(size=(3, 4))
    fn = traced_view_of_a_view_then_two_writes
    value, gradient = value_and_gradient(fn, x.copy())
    assert np.isclose(value, fn(x.copy()), rtol=1e-12)
    assert np.isclose(traced_view_twin(x), fn(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(fn, [x], 0), atol=1e-6)
    np.testing.assert_allclose(gradient, autograd_gradient(traced_view_twin, [x], 0))
    assert_right_in_mode("compiler", fn, x)


# --- writes where numpy loses a value (the programs of array_writes.py) -------------------

TRUNCATIONS = array_writes.TRUNCATED


def _refused_in(module, fn, line_text: str, kind=AutodiffError) -> AutodiffError:
    """``fn`` traced is refused with ``kind``, located at ``line_text`` of ``module``."""
    with pytest.raises(kind) as info:
        value_and_gradient(fn, array_writes.X.copy())
    location = info.value.location
    assert location is not None and location.filename == module.__file__
    assert line_text in location.text, location.text
    return info.value


@pytest.mark.parametrize(
    ("fn", "line"), array_writes.REPEATED, ids=[f.__name__ for f, _ in array_writes.REPEATED]
)
def test_a_write_naming_a_position_twice_in_any_spelling_is_a_located_error(fn, line):
    error = _refused_in(array_writes, fn, line, NoDerivativeRuleError)
    assert "repeated indices" in error.message and "in a loop" in error.hint


@pytest.mark.parametrize(
    "fn", array_writes.DISTINCT + array_writes.INTEGERS_RIGHT, ids=lambda f: f.__name__
)
def test_writes_naming_each_position_once_and_integer_buffers_used_rightly_follow_numpy(fn):
    assert_right_in_mode("tracing", fn, array_writes.X)


@pytest.mark.parametrize(("fn", "line"), TRUNCATIONS, ids=[f.__name__ for f, _ in TRUNCATIONS])
def test_a_float_written_into_an_integer_buffer_is_a_located_error(fn, line):
    error = _refused_in(array_writes, fn, line, NoDerivativeRuleError)
    assert "writes a float into an array of" in error.message and ".astype(" in error.hint


@pytest.mark.parametrize(
    ("fn", "line"),
    array_writes.TRUNCATED_IN_PLAIN_ARRAYS,
    ids=[f.__name__ for f, _ in array_writes.TRUNCATED_IN_PLAIN_ARRAYS],
)
def test_a_float_written_into_a_plain_integer_array_is_a_located_error(fn, line):
    _refused_in(array_writes, fn, line, TracingError)


@pytest.mark.parametrize(
    ("fn", "line"),
    array_writes.NUMPY_REFUSES,
    ids=[f.__name__ for f, _ in array_writes.NUMPY_REFUSES],
)
def test_an_update_of_integers_numpy_refuses_is_a_located_error(fn, line):
    with pytest.raises(TypeError):  # numpy's UFuncTypeError
        fn(array_writes.X.copy())
    error = _refused_in(array_writes, fn, line, UserCodeError)
    assert "UFuncTypeError" in error.message


def test_an_update_of_a_float32_buffer_keeps_its_dtype():
    """numpy casts a float64 result back into a float32 array updated in place."""

    def fun(x):
        y = np.zeros(3, dtype=np.float32)
        y += x
        return y

    out = evaluate(fun, traced(np.array([0.1, 0.2, 0.3])))
    assert out.dtype == np.float32


# -- conversions numpy answers with the array itself ---------------------------------------

SAME_ARRAY = [
    "np.float64(t)",
    "np.array(t, copy=None)",
    "np.array(t, copy=False)",
    "np.array(t, dtype=np.float64, copy=None)",
    "np.asarray(t)",
    "np.asarray(t, dtype=np.float64)",
    "np.asanyarray(t)",
    "np.ascontiguousarray(t)",
]
NEW_ARRAY = [
    "np.array(t)",
    "np.array(t, dtype=np.float64)",
    "np.asarray(t, copy=True)",
    "np.array([t[0], t[1], t[2]])",
]


def _converted_then_written(conversion: str) -> Loaded:
    source = (
        "import numpy as np\n\n\ndef f(x):\n"
        "    t = x * 2.0\n"
        f"    y = {conversion}\n"
        "    y[1] = x[2] * 3.0\n"
        "    return np.sum(t * np.array([1.0, 2.0, 3.0])) + np.sum(y * x)\n"
    )
    return Loaded(source, seed=0)


@pytest.mark.parametrize("conversion", SAME_ARRAY + NEW_ARRAY)
def test_a_conversion_is_the_array_itself_where_numpy_returns_it(conversion):
    """``np.float64(t)`` of a float64 array, ``np.array(t, copy=None)``, ``np.asarray(t)``
    return ``t`` itself in numpy, so a write through the result changes ``t``; the copies
    (``np.array(t)``, a list stacked) do not. Tracing asks numpy on the raw data
    (a copy before: 10.0 where numpy gives 5.2 without the last term)."""
    loaded = _converted_then_written(conversion)
    x = np.array([0.5, 1.2, 0.7])
    shared = np.shares_memory(eval(conversion, {"np": np, "t": x}), x)
    assert shared == (conversion in SAME_ARRAY)  # numpy's own answer, as listed
    _check_like_numpy(loaded.f, x)
    loaded.close()


def test_a_write_through_np_float64_of_an_array_is_numpys_value():
    """The bug hunt's numbers: numpy 5.2 with gradient [2, 0, 6] (a copy gave 10.0)."""
    loaded = Loaded(
        "import numpy as np\n\n\ndef f(x):\n    t = x * 2.0\n    y = np.float64(t)\n"
        "    y[1] = 0.0\n    return np.sum(t * np.array([1.0, 2.0, 3.0]))\n",
        seed=0,
    )
    value, got = value_and_gradient(loaded.f, np.array([0.5, 1.2, 0.7]))
    assert np.isclose(value, 5.2)
    np.testing.assert_allclose(got, [2.0, 0.0, 6.0])
    loaded.close()


def cast_without_copy_written(x):
    t = x * 2.0
    y = t.astype(t.dtype, copy=False)
    y[1] = 0.0
    return np.sum(t)


def test_astype_without_a_copy_is_refused_at_its_line():
    """``t.astype(t.dtype, copy=False)`` is ``t`` in numpy; tracing refuses the option
    at the call rather than make a copy."""
    _refused(cast_without_copy_written, np.ones(3), line_text="t.astype(t.dtype, copy=False)")


# -- an augmented assignment to an entry of a list or dict: the array it holds changes --

ROWS_WEIGHTS = np.arange(1.0, 7.0).reshape(2, 3)


def split_part_scaled(x):
    t = x * 2.0
    parts = np.split(t, 2)
    parts[0] *= 3.0  # numpy: t[0] triples
    return np.sum(t**2)


def dict_entry_of_a_view(x):
    t = x * 2.0
    d = {"head": t[:1], "tail": t[1:]}
    d["head"] -= x[1]  # numpy: t[:1] changes
    return np.sum(t**2) + np.sum(d["tail"])


def rows_of_list_scaled(x):
    t = x * 2.0
    rows = list(t)
    rows[1] *= 5.0  # numpy: t[1] changes
    return np.sum(t * ROWS_WEIGHTS)


def rows_of_a_shallow_copy_scaled(x):
    t = x * 2.0
    rows = list(t)
    rows = rows.copy()  # the same rows
    rows[1] *= 5.0
    return np.sum(t * ROWS_WEIGHTS)


def rows_of_a_buffer_scaled(x):
    c = np.ones((2, 3))
    rows = [r for r in c]
    rows[1] *= x[0]  # numpy: c[1] changes
    return np.sum(c * x)


def nested_entry_scaled(x):
    t = x * 2.0
    held = {"rows": [t[0], t[1]]}
    held["rows"][-1] += x[0]  # the container: held["rows"], a list
    return np.sum(t * ROWS_WEIGHTS)


def first_of(items):
    return items


def entry_of_a_call_scaled(x):
    t = x * 2.0
    rows = [t[0], t[1]]
    first_of(rows)[1] *= 5.0  # a container the source cannot name: written through
    return np.sum(t * ROWS_WEIGHTS)


def array_entry_scaled(x):
    t = x * 2.0
    acc = [t]
    acc[0] *= x  # the array itself
    return np.sum(t * ROWS_WEIGHTS)


def element_of_an_array_scaled(x):
    y = x * 1.0
    y[1] *= 3.0  # an array's row: the store after the operator writes it
    y[0][1] += x[1, 2]
    return np.sum(y * ROWS_WEIGHTS)


@pytest.mark.parametrize(
    "fn",
    [
        split_part_scaled,
        dict_entry_of_a_view,
        rows_of_list_scaled,
        rows_of_a_shallow_copy_scaled,
        rows_of_a_buffer_scaled,
        nested_entry_scaled,
        entry_of_a_call_scaled,
        array_entry_scaled,
        element_of_an_array_scaled,
    ],
)
def test_an_entry_written_in_place_changes_the_array_it_holds(fn):
    """``rows[k] op= v`` and ``d[k] op= v`` run the array's in-place operator, as in
    numpy: a view held by a list or dict (a row, a part of np.split, a slice) writes
    into its array. The value is numpy's, the gradient central differences."""
    assert_right_in_mode("tracing", fn, X)


def entry_of_the_variable_written(x):
    lst = [x]
    lst[0] += 1.0
    return np.sum(x * ROWS_WEIGHTS)


def test_an_entry_write_into_the_traced_variable_is_refused():
    error = _refused(entry_of_the_variable_written, X.copy(), line_text="lst[0] += 1.0")
    assert "x = x.copy()" in error.hint
