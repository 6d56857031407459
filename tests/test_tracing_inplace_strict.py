"""Tracing of in-place writes on ``array_api_strict`` arrays follows what the library does.

``array_api_strict`` wraps numpy: a slice, a transpose, a reshape of an array is a view
of its memory, and a write into either changes both (an element ``t[0]`` is a copy).
Tracing sees that memory through DLPack. A write into an array whose views are alive is
followed (the views see it, as the library shows them); a write *through* a view is
refused, located, because tracing puts such a write back by integer index arrays,
which the library cannot write: the hint (write into the array with the view's index,
or make the view a new array) gives the library's value and gradient. Values are
checked against the function run on strict arrays, gradients against central
differences and autograd (on a twin written without writes, which autograd cannot
follow).
"""

from __future__ import annotations

import array_api_strict as xs
import numpy as np
import pytest
from oracles import autograd_gradient, central_difference
from wrapped_text import flat

from autodiff_tutor.errors import TracingError
from autodiff_tutor.tracing import evaluate, gradient, traced, value_and_gradient

X = np.array([0.3, -1.2, 0.7])


def test_the_library_makes_views_of_slices_transposes_and_reshapes():
    """The premise: writes through these change the array they were taken from."""
    t = xs.asarray([[1.0, 2.0, 3.0]])
    for view, where in ((t[0, 0:2], (0,)), (t.T, (0, 0)), (xs.reshape(t, (3,)), (0,))):
        view[where] = -1.0
        assert float(t[0, 0]) == -1.0
        t[0, 0] = 1.0
    element = t[0, 1]
    t[0, 1] = 9.0
    assert float(element) == 2.0  # an element is a copy


def _on_strict(fn):
    """``fn`` run on a strict array made from a numpy one (for the oracles)."""
    return lambda x: fn(xs.asarray(x))


def _traced_both_ways(fn, x):
    """Value and gradient by ``value_and_gradient`` and by ``evaluate`` + ``gradient``."""

    def with_gradient(v):
        y = fn(v)
        return y, gradient(y, v)

    return [value_and_gradient(fn, xs.asarray(x)), evaluate(with_gradient, traced(xs.asarray(x)))]


# -- writes into an array whose views are alive: followed ---------------------------------


def write_seen_by_a_slice(x):
    xp = x.__array_namespace__()
    t = x * 1.0
    v = t[0:2]
    t[0] = 5.0 * x[2]
    return xp.sum(v * v) + xp.sum(t * x)


def write_seen_by_a_slice_twin(x):
    t = np.concatenate([5.0 * x[2:3], x[1:]])
    return np.sum(t[0:2] * t[0:2]) + np.sum(t * x)


def update_seen_by_a_transpose_and_a_slice(x):
    xp = x.__array_namespace__()
    t = xp.reshape(x * 1.0, (1, 3))
    v = t.T
    w = t[:, 1:]
    t *= x
    return xp.sum(v * w[0, 0]) + xp.sum(w * w)


def update_seen_by_a_transpose_and_a_slice_twin(x):
    t = np.reshape(x * x, (1, 3))
    w = t[:, 1:]
    return np.sum(t.T * w[0, 0]) + np.sum(w * w)


def write_seen_by_a_reshape(x):
    xp = x.__array_namespace__()
    t = x * 1.0
    v = xp.reshape(t, (3, 1))
    t[1] = 4.0
    return xp.sum(v * v * x[0])


def write_seen_by_a_reshape_twin(x):
    t = np.concatenate([x[:1], np.array([4.0]), x[2:]])
    return np.sum(t * t * x[0])


@pytest.mark.parametrize(
    ("fn", "twin"),
    [
        (write_seen_by_a_slice, write_seen_by_a_slice_twin),
        (update_seen_by_a_transpose_and_a_slice, update_seen_by_a_transpose_and_a_slice_twin),
        (write_seen_by_a_reshape, write_seen_by_a_reshape_twin),
    ],
)
def test_a_write_into_an_array_is_seen_by_its_views(fn, twin):
    """The views see the write, as the library's own do: values and gradients as the
    library's, against central differences and autograd on a twin."""
    expected = central_difference(_on_strict(fn), [X], 0)
    np.testing.assert_allclose(expected, autograd_gradient(twin, [X], 0), atol=1e-6)
    for value, grad in _traced_both_ways(fn, X):
        assert type(grad) is type(xs.asarray(X))
        np.testing.assert_allclose(float(value), float(fn(xs.asarray(X))), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(grad), expected, atol=1e-6)
    value, grad = value_and_gradient(fn, X.copy())  # numpy arrays: the same numbers
    np.testing.assert_allclose(grad, expected, atol=1e-6)


# -- writes through a view: refused, and the hint followed --------------------------------


def slice_filled(x):
    xp = x.__array_namespace__()
    t = x * 1.0
    v = t[0:2]
    v[...] = 0.0
    return xp.sum(t * t)


def slice_scaled(x):
    xp = x.__array_namespace__()
    t = x * 1.0
    v = t[0:2]
    v *= x[2]
    return xp.sum(t * t)


def transpose_written(x):
    xp = x.__array_namespace__()
    t = xp.reshape(x * 1.0, (1, 3))
    v = t.T
    v[0, 0] = 2.0
    return xp.sum(t * t)


def reshape_written(x):
    xp = x.__array_namespace__()
    t = x * 1.0
    v = xp.reshape(t, (3, 1))
    v[1, 0] -= x[0]
    return xp.sum(t * t)


@pytest.mark.parametrize("fn", [slice_filled, slice_scaled, transpose_written, reshape_written])
def test_a_write_through_a_view_is_refused_at_its_line(fn):
    """Located at the write, saying the library's views share memory and what to write
    instead; the same function on numpy arrays is followed, against central differences."""
    for entry in (
        lambda: value_and_gradient(fn, xs.asarray(X)),
        lambda: evaluate(fn, traced(xs.asarray(X))),
    ):
        with pytest.raises(TracingError) as info:
            entry()
        error = info.value
        assert error.location.filename == __file__
        assert error.location.text.strip().startswith("v")
        assert "array_api_strict arrays share memory with their views" in flat(error.message)
        assert "t[0:2] = 0.0 rather than v = t[0:2]; v[...] = 0.0" in flat(error.hint)
    value, grad = value_and_gradient(fn, X.copy())
    np.testing.assert_allclose(value, fn(X.copy()), rtol=1e-13)
    np.testing.assert_allclose(grad, central_difference(fn, [X], 0), atol=1e-6)


def slice_filled_by_index(x):  # the hint, for slice_filled
    xp = x.__array_namespace__()
    t = x * 1.0
    t[0:2] = 0.0
    return xp.sum(t * t)


def slice_scaled_by_index(x):  # the hint, for slice_scaled
    xp = x.__array_namespace__()
    t = x * 1.0
    t[0:2] *= x[2]
    return xp.sum(t * t)


def slice_made_new(x):  # the hint's other branch: the view a new array
    xp = x.__array_namespace__()
    t = x * 1.0
    v = t[0:2] * 1.0
    v *= x[2]
    return xp.sum(t * t) + xp.sum(v * x[0:2])


def slice_filled_by_index_twin(x):
    t = np.concatenate([np.zeros(2), x[2:]])
    return np.sum(t * t)


def slice_scaled_by_index_twin(x):
    t = np.concatenate([x[0:2] * x[2], x[2:]])
    return np.sum(t * t)


def slice_made_new_twin(x):
    return np.sum(x * x) + np.sum(x[0:2] * x[2] * x[0:2])


@pytest.mark.parametrize(
    ("fn", "twin"),
    [
        (slice_filled_by_index, slice_filled_by_index_twin),
        (slice_scaled_by_index, slice_scaled_by_index_twin),
        (slice_made_new, slice_made_new_twin),
    ],
)
def test_the_hint_gives_the_librarys_value_and_gradient(fn, twin):
    expected = central_difference(_on_strict(fn), [X], 0)
    np.testing.assert_allclose(expected, autograd_gradient(twin, [X], 0), atol=1e-6)
    for value, grad in _traced_both_ways(fn, X):
        np.testing.assert_allclose(float(value), float(fn(xs.asarray(X))), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(grad), expected, atol=1e-6)
