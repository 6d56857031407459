"""Tracing refuses writes into its variables (the arguments it traces) and into views
of them, as the compiler refuses writes into a parameter: one rule for
``value_and_gradient`` and for ``evaluate`` with ``gradient`` inside (first order and
``higher_derivatives=True``), located at the write, with the hint ``x = x.copy()``.

Each function below writes into its argument in one of the forms Python allows
(augmented operators, element and slice writes, ``np.fill_diagonal``),
directly, through a view (``reshape``, ``.T``, ``ravel``, slicing, a view of a view),
or inside a helper. The copy the hint asks for is differentiated right by both entry
points: against central differences of the function itself, and against autograd on
a twin written without writes. ``out=`` is refused into any traced array, as by the
compiler. Writes into arrays the function made (not a view of an argument) are
followed (``tests/test_tracing_inplace.py``).
"""

from __future__ import annotations

import array_api_strict as xs
import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor.errors import TracingError
from autodiff_tutor.tracing import evaluate, extract_data, gradient, traced, value_and_gradient

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])


def scaled_after_a_read(x):
    s = np.sum(x * x)
    x *= np.tanh(x)
    return s + np.sum(x)


def scaled_after_a_read_twin(x):
    return np.sum(x * x) + np.sum(x * np.tanh(x))


def corner_zeroed(x):
    x[0, 0] = 0.0
    return np.sum(np.sin(x) * x)


def corner_zeroed_twin(x):
    mask = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    return np.sum(np.sin(x * mask) * x * mask)


def column_added(x):
    x[:, 1] += x[:, 0] ** 2
    return np.sum(x * x)


def column_added_twin(x):
    middle = x[:, 1] + x[:, 0] ** 2
    return np.sum(x[:, 0] ** 2) + np.sum(middle**2) + np.sum(x[:, 2] ** 2)


def fancy_divided(x):
    x[[0, 1], 2] /= 2.0 + x[0, 0] ** 2
    return np.sum(np.cos(x))


def fancy_divided_twin(x):
    last = x[:, 2] / (2.0 + x[0, 0] ** 2)
    return np.sum(np.cos(x[:, :2])) + np.sum(np.cos(last))


def squared(x):
    x **= 2
    return np.sum(x * np.arange(6.0).reshape(2, 3))


def squared_twin(x):
    return np.sum(x**2 * np.arange(6.0).reshape(2, 3))


def reshaped_view_subtracted(x):
    t1 = np.sin(x).reshape(-1, 1)
    t2 = x.reshape(-1, 1)
    t2 -= t1
    return np.sum(t2 * t2) + np.sum(x**3)


def reshaped_view_subtracted_twin(x):
    t = x - np.sin(x)
    return np.sum(t * t) + np.sum(t**3)


def transpose_row_written(x):
    v = x.T
    v[0] = 1.0
    return np.sum(x * x)


def transpose_row_written_twin(x):
    return 2.0 + np.sum(x[:, 1:] ** 2)


def ravel_scaled(x):
    r = x.ravel()
    r *= np.cos(r)
    return np.sum(np.tanh(x))


def ravel_scaled_twin(x):
    return np.sum(np.tanh(x * np.cos(x)))


def slice_shifted(x):
    s = x[1:]
    s += x[0]
    return np.sum(x**2)


def slice_shifted_twin(x):
    return np.sum(x[0] ** 2) + np.sum((x[1] + x[0]) ** 2)


def view_of_a_view_written(x):
    rows = x.reshape(3, 2)
    rows[1][0] = 0.5
    return np.sum(x * np.arange(6.0).reshape(2, 3))


def view_of_a_view_written_twin(x):
    weights = np.array([[0.0, 1.0, 0.0], [3.0, 4.0, 5.0]])
    return 1.0 + np.sum(x * weights)


def diagonal_filled(x):
    np.fill_diagonal(x, 0.0)
    return np.sum(np.exp(x))


def diagonal_filled_twin(x):
    return 2.0 + np.sum(np.exp(x[0, 1:])) + np.exp(x[1, 0]) + np.exp(x[1, 2])


def halve(y):
    y /= 2.0 + np.sum(y * y)
    return y


def halved_in_a_helper(x):
    a = np.sum(np.cos(x))
    z = halve(x)
    return np.sum(z * x) + a


def halved_in_a_helper_twin(x):
    z = x / (2.0 + np.sum(x * x))
    return np.sum(z * z) + np.sum(np.cos(x))


def row_halved_in_a_helper(x):
    halve(x[0])
    return np.sum(x**3)


def row_halved_in_a_helper_twin(x):
    row = x[0] / (2.0 + np.sum(x[0] * x[0]))
    return np.sum(row**3) + np.sum(x[1] ** 3)


def written_twice(x):
    x += 1.0
    x[0] *= x[1]
    return np.sum(x)


def written_twice_twin(x):
    return np.sum((x[0] + 1.0) * (x[1] + 1.0)) + np.sum(x[1] + 1.0)


#: (function, its twin without writes, the text of the write it is refused at)
FORMS = [
    (scaled_after_a_read, scaled_after_a_read_twin, "x *= np.tanh(x)"),
    (corner_zeroed, corner_zeroed_twin, "x[0, 0]"),
    (column_added, column_added_twin, "x[:, 1] += x[:, 0] ** 2"),
    (fancy_divided, fancy_divided_twin, "x[[0, 1], 2]"),
    (squared, squared_twin, "x **= 2"),
    (reshaped_view_subtracted, reshaped_view_subtracted_twin, "t2 -= t1"),
    (transpose_row_written, transpose_row_written_twin, "v[0]"),
    (ravel_scaled, ravel_scaled_twin, "r *= np.cos(r)"),
    (slice_shifted, slice_shifted_twin, "s += x[0]"),
    (view_of_a_view_written, view_of_a_view_written_twin, "rows[1][0]"),
    (diagonal_filled, diagonal_filled_twin, "np.fill_diagonal(x, 0.0)"),
    (halved_in_a_helper, halved_in_a_helper_twin, "y /= 2.0 + np.sum(y * y)"),
    (row_halved_in_a_helper, row_halved_in_a_helper_twin, "y /= 2.0 + np.sum(y * y)"),
    (written_twice, written_twice_twin, "x += 1.0"),
]
IDS = [fn.__name__ for fn, _, _ in FORMS]


def _by_value_and_gradient(fn, x):
    return value_and_gradient(fn, x)


def _by_evaluate(fn, x):
    def run(x):
        y = fn(x)
        return y, gradient(y, x)

    value, grad = evaluate(run, traced(x))
    return extract_data(value), grad


def _by_evaluate_higher(fn, x):
    def run(x):
        y = fn(x)
        slope = gradient(y, x, higher_derivatives=True)
        return y, gradient(np.sum(slope * slope), x)

    value, grad = evaluate(run, traced(x))
    return extract_data(value), grad


ENTRIES = [_by_value_and_gradient, _by_evaluate, _by_evaluate_higher]


@pytest.mark.parametrize("entry", ENTRIES, ids=["value_and_gradient", "evaluate", "higher"])
@pytest.mark.parametrize(("fn", "twin", "write"), FORMS, ids=IDS)
def test_a_write_into_the_argument_is_refused_at_the_write(fn, twin, write, entry):
    """Refused in every entry point, located at the write with the hint ``x =
    x.copy()``: followed, ``evaluate`` would give the gradient with respect to the
    written x, and ``value_and_gradient`` that with respect to the value passed in."""
    with pytest.raises(TracingError) as info:
        entry(fn, X.copy())
    error = info.value
    assert error.location is not None and error.location.filename == __file__
    assert write in error.location.text
    assert "writes in place into the traced variable 'x'" in error.message
    assert "x = x.copy()" in error.hint


@pytest.mark.parametrize("entry", ENTRIES[:2], ids=["value_and_gradient", "evaluate"])
@pytest.mark.parametrize(("fn", "twin", "write"), FORMS, ids=IDS)
def test_the_copy_the_hint_asks_for_is_followed(fn, twin, write, entry):
    """``x = x.copy()`` first (here: the function called on a copy): the writes change
    the copy, as numpy changes the array, and the gradient is with respect to the
    value passed in, by both entry points."""
    assert np.isclose(twin(X.copy()), fn(X.copy()), rtol=1e-12)
    value, grad = entry(lambda x: fn(x.copy()), X.copy())
    np.testing.assert_allclose(value, fn(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, central_difference(fn, [X.copy()], 0), atol=1e-6)
    np.testing.assert_allclose(grad, autograd_gradient(twin, [X.copy()], 0), rtol=1e-10)


def added_with_out(x):
    np.add(x, np.sin(x), out=x)
    return np.sum(x * x)


@pytest.mark.parametrize("entry", ENTRIES, ids=["value_and_gradient", "evaluate", "higher"])
def test_out_into_the_argument_is_refused_as_a_write_into_it(entry):
    """``out=`` into the traced argument is a write into a variable of the trace:
    refused at the call, with the hint ``x = x.copy()``."""
    with pytest.raises(TracingError) as info:
        entry(added_with_out, X.copy())
    assert "np.add(x, np.sin(x), out=x)" in info.value.location.text
    assert "writes in place into the traced variable 'x'" in info.value.message
    assert "x = x.copy()" in info.value.hint


@pytest.mark.parametrize("entry", ENTRIES[:2], ids=["value_and_gradient", "evaluate"])
def test_out_into_a_copy_is_followed(entry):
    """``out=`` into an array of the function's own (a copy) writes the result into it,
    as numpy does: the gradient matches central differences and autograd's of a twin."""
    value, grad = entry(lambda x: added_with_out(x.copy()), X.copy())
    np.testing.assert_allclose(value, added_with_out(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, central_difference(added_with_out, [X.copy()], 0), atol=1e-6)
    twin = lambda x: np.sum((x + np.sin(x)) ** 2)  # noqa: E731
    np.testing.assert_allclose(grad, autograd_gradient(twin, [X.copy()], 0), rtol=1e-10)


def test_the_two_entry_points_refuse_with_the_same_message():
    with pytest.raises(TracingError) as by_value:
        _by_value_and_gradient(transpose_row_written, X.copy())
    with pytest.raises(TracingError) as by_evaluate:
        _by_evaluate(transpose_row_written, X.copy())
    assert by_value.value.message == by_evaluate.value.message
    assert "through 'v', which shares its memory" in by_value.value.message


def test_a_write_in_a_helper_is_located_in_the_helper():
    with pytest.raises(TracingError) as info:
        value_and_gradient(halved_in_a_helper, X.copy())
    assert "y /= 2.0" in info.value.location.text
    assert "through 'y'" in info.value.message
    assert "where halved_in_a_helper starts" in info.value.hint


def test_an_attribute_is_copied_into_a_local_name():
    """``wrt="self.W"``: the hint copies into a local name, so that the object keeps
    its own array (assigning ``self.W`` would leave a traced copy on it)."""

    class Model:
        def __init__(self):
            self.W = X.copy()

        def loss(self, scale):
            self.W[0, 0] = scale
            return np.sum(self.W**2)

    model = Model()
    with pytest.raises(TracingError) as info:
        value_and_gradient(model.loss, 2.0, wrt="self.W")
    assert "W = self.W.copy()" in info.value.hint
    assert np.array_equal(model.W, X)  # the object has its own array back


def made_here_and_written(x):
    y = x[[1, 0]]  # fancy indexing copies: not a view of x
    y[0] = np.tanh(y[1])
    z = x.copy().reshape(-1)
    z[::2] *= 3.0
    c = np.zeros_like(x)
    c += x
    return np.sum(y * y) + np.sum(z * x.reshape(-1)) + np.sum(c)


def made_here_and_written_twin(x):
    first = np.tanh(x[0])
    z = x.reshape(-1) * np.array([3.0, 1.0, 3.0, 1.0, 3.0, 1.0])
    return np.sum(first**2) + np.sum(x[0] ** 2) + np.sum(z * x.reshape(-1)) + np.sum(x)


@pytest.mark.parametrize("entry", ENTRIES[:2], ids=["value_and_gradient", "evaluate"])
def test_writes_into_arrays_made_here_are_followed(entry):
    value, grad = entry(made_here_and_written, X.copy())
    np.testing.assert_allclose(value, made_here_and_written(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, central_difference(made_here_and_written, [X], 0), atol=1e-6)
    expected = autograd_gradient(made_here_and_written_twin, [X.copy()], 0)
    np.testing.assert_allclose(grad, expected, rtol=1e-10)


def test_a_new_variable_of_extracted_data_is_a_variable_too():
    def fun(x):
        restart = traced(extract_data(x))  # a new variable on the trace
        restart[0] = 1.0
        return np.sum(restart)

    with pytest.raises(TracingError) as info:
        evaluate(fun, traced(np.ones(2)))
    assert "the traced variable 'extract_data(x)'" in info.value.message
    assert "c = restart.copy()" in info.value.hint


def strict_row_written(x):
    xp = x.__array_namespace__()
    row = x[0, :]  # a view: array_api_strict wraps numpy
    row[0] = 0.5
    return xp.sum(x * x)


def strict_reshape_written(x):
    xp = x.__array_namespace__()
    rows = xp.reshape(x, (3, 2))
    rows[1, 0] = 0.5
    return xp.sum(x * x)


@pytest.mark.parametrize("fn", [strict_row_written, strict_reshape_written])
def test_a_write_through_a_view_is_refused_in_array_api_strict_too(fn):
    """Its views share memory with the argument, which tracing sees through DLPack
    (the library has no may_share_memory): the write through the view is refused."""
    with pytest.raises(TracingError) as info:
        value_and_gradient(fn, xs.asarray(X.copy()))
    assert "writes in place into the traced variable 'x'" in info.value.message


def test_after_the_trace_ended_the_values_are_plain_to_write():
    x = evaluate(lambda x: x, traced(np.ones(2)))
    x[0] = 5.0  # the trace has ended: nothing to differentiate
    assert extract_data(x).tolist() == [5.0, 1.0]
