"""``np.array(x)`` / ``np.asarray(x)`` of a value that carries gradient.

The compiler reads the source, so it follows them: ``np.array(x)`` is a copy,
``np.asarray(x)`` (and ``asanyarray``, ``ascontiguousarray``) returns x itself when x
already is such an array, so it is an alias of x: a write into it is a write into x,
refused for a parameter, as for a view. A ``dtype`` is a cast (``x.astype``). Tracing
cannot follow them (numpy converts through ``__array__``, which must return a plain
array): there the conversion is a located escape whose hint says so and names
``x.copy()`` / ``np.copy(x)``. Oracles: central differences and autograd's own
``autograd.numpy.array``.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference, with_autograd_numpy

from autodiff_tutor import differentiable, grad, value_and_grad
from autodiff_tutor.api import jvp
from autodiff_tutor.errors import AutodiffError, TracingEscapeError
from autodiff_tutor.tracing import value_and_gradient

X = np.array([1.0, -2.0, 0.5])


def through_array(x):
    y = np.array(x)
    return np.sum(y * x)


def through_asarray(x):
    y = np.asarray(x)
    return np.sum(y * x)


def through_asanyarray(x):
    y = np.asanyarray(x)
    return np.sum(np.sin(y) * x)


def through_contiguous(x):
    y = np.ascontiguousarray(x.T)
    return np.sum(y**3)


def through_array_of_a_local(x):
    t = np.tanh(x)
    y = np.array(t, order="C")
    return np.sum(y * t)


def through_copy_method(x):
    y = x.copy()
    return np.sum(y * x)


def through_np_copy(x):
    y = np.copy(x)
    return np.sum(y * x)


def through_float_dtype(x):
    y = np.array(x, dtype=np.float64)
    return np.sum(y * y * x)


def write_into_a_copy(x):
    t = x * 2.0
    y = np.array(t)
    y[0] = 0.0
    return np.sum(y * t)


CONVERSIONS = [
    through_array,
    through_asarray,
    through_asanyarray,
    through_contiguous,
    through_array_of_a_local,
    through_copy_method,
    through_np_copy,
    through_float_dtype,
    write_into_a_copy,
]


def _autograd_version(fn):
    """The same math with autograd's differentiable ``np.array`` in every conversion
    (autograd follows ``autograd.numpy.array`` but has no rule for its asarray)."""
    namespace = dict(fn.__globals__)
    exec(
        "def f(x):\n"
        + "\n".join(
            "    "
            + line.replace("np.asanyarray(", "np.array(")
            .replace("np.asarray(", "np.array(")
            .replace("np.ascontiguousarray(", "np.array(")
            .replace("np.copy(", "np.array(")
            .replace("x.copy()", "np.array(x)")
            .replace(', order="C"', "")
            .replace(", dtype=np.float64", "")
            for line in _body(fn)
        ),
        namespace,
    )
    return namespace["f"]


def _body(fn) -> list[str]:
    import inspect

    return [line[4:] for line in inspect.getsource(fn).splitlines()[1:] if line.strip()]


@pytest.mark.parametrize("fn", CONVERSIONS)
def test_the_compiler_differentiates_a_conversion(fn) -> None:
    x = X.reshape(1, 3) if fn is through_contiguous else X
    want = central_difference(fn, [x], 0)
    got = grad(fn)(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    if fn is not write_into_a_copy:  # autograd cannot write into an array
        np.testing.assert_allclose(got, autograd_gradient(_autograd_version(fn), [x], 0))


@pytest.mark.parametrize("fn", [through_array, through_asarray, through_float_dtype])
def test_forward_mode_agrees_with_the_gradient(fn) -> None:
    direction = np.array([0.3, -1.0, 2.0])
    _, tangent = jvp(fn, (X,), (direction,))
    np.testing.assert_allclose(tangent, central_difference(fn, [X], 0) @ direction, rtol=1e-6)


def test_the_generated_code_reads_as_a_copy() -> None:
    source = differentiable(through_array).source()
    assert "y = np.array(x)" in source
    assert "d_x = d_y" in source or "d_x += d_y" in source or "d_x = d_x + d_y" in source


def test_an_integer_dtype_passes_no_gradient_as_astype_does() -> None:
    def rounded(x):
        return np.sum(np.array(x, dtype=int) * x)

    def by_astype(x):
        return np.sum(x.astype(int) * x)

    x = np.array([1.3, -2.6, 0.4])
    np.testing.assert_array_equal(grad(rounded)(x), grad(by_astype)(x))
    np.testing.assert_allclose(grad(rounded)(x), central_difference(rounded, [x], 0), atol=1e-6)


def test_a_float32_dtype_is_a_cast() -> None:
    def single(x):
        return np.sum(np.asarray(x, dtype=np.float32) * 2.0)

    got = grad(single)(X)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, 2.0 * np.ones(3))


def write_into_asarray_of_a_parameter(x):
    y = np.asarray(x)
    y[0] = 0.0
    return np.sum(y)


def write_into_array_without_copy(x):
    y = np.array(x, copy=False)
    y[0] = 0.0
    return np.sum(y)


def write_into_asarray_of_a_local(x):
    t = x * 2.0
    y = np.asarray(t)
    y[0] = 0.0
    return np.sum(y * t)


@pytest.mark.parametrize(
    "fn",
    [
        write_into_asarray_of_a_parameter,
        write_into_array_without_copy,
    ],
)
def test_asarray_is_an_alias_so_a_write_into_it_is_refused_at_its_line(fn) -> None:
    """numpy writes into x as well (asarray returns x itself): a write into a
    parameter is refused, located, as in PyTorch and JAX."""
    x = X.copy()
    with pytest.raises(AutodiffError) as caught:
        grad(fn)(x)
    error = caught.value
    assert error.location is not None and error.location.filename == __file__
    assert "y[...] = ..." in str(error) and "share" in str(error)


def test_a_write_into_asarray_of_a_local_is_seen_by_the_local() -> None:
    """``y = np.asarray(t)`` is ``t`` itself: the write changes ``t`` too, and the
    gradient follows both (numpy's own run is the value oracle)."""
    x = X.copy()
    expected = central_difference(write_into_asarray_of_a_local, [x], 0)
    value, gradient = value_and_grad(write_into_asarray_of_a_local)(x)
    assert value == pytest.approx(write_into_asarray_of_a_local(X.copy()))
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)


def test_an_option_that_changes_the_shape_is_refused_at_its_line() -> None:
    def more_axes(x):
        return np.sum(np.array(x, ndmin=2))

    with pytest.raises(AutodiffError) as caught:
        grad(more_axes)(X)
    assert caught.value.location is not None and caught.value.location.filename == __file__
    assert "ndmin" in str(caught.value) and "np.reshape" in caught.value.hint


@pytest.mark.parametrize("fn", [through_array, through_asarray])
def test_tracing_follows_a_conversion_in_the_functions_own_code(fn) -> None:
    """np.array(x) / np.asarray(x) in the traced function keep the trace (a copy, or x)."""
    want = central_difference(fn, [X], 0)
    np.testing.assert_allclose(value_and_gradient(fn, X)[1], want, rtol=1e-6)


class Converter:
    """A method: code tracing does not reach (numpy there is numpy)."""

    def convert(self, x):
        y = np.asarray(x)
        return y


def test_tracing_refuses_a_conversion_where_it_does_not_reach_at_its_line() -> None:
    with pytest.raises(TracingEscapeError) as caught:
        value_and_gradient(lambda x: np.sum(Converter().convert(x) * x), X)
    error = caught.value
    assert error.location is not None and error.location.filename == __file__
    assert "y = np." in str(error)
    assert "__array__" in error.hint and "x.copy() or np.copy(x)" in error.hint
    assert "compiler" in error.hint


@pytest.mark.parametrize("fn", [through_copy_method, through_np_copy])
def test_the_copy_the_tracing_hint_names_keeps_the_gradient(fn) -> None:
    want = central_difference(fn, [X], 0)
    np.testing.assert_allclose(value_and_gradient(fn, X)[1], want, rtol=1e-6)


def asarray_of_a_list(x):
    ys = []
    ys.append(x * 2.0)
    ys.append(x)
    return np.sum(np.asarray(ys))


def test_asarray_of_a_list_with_gradient_stays_a_located_escape_naming_stack() -> None:
    with pytest.raises(AutodiffError) as caught:
        grad(asarray_of_a_list)(X)
    assert caught.value.location is not None and caught.value.location.filename == __file__
    assert "np.stack" in caught.value.hint


@pytest.mark.parametrize("fn", [through_array, through_asarray, through_asanyarray])
def test_a_conversion_has_second_derivatives(fn) -> None:
    """Its gradient (``d_x = d_x + d_y``) is differentiated again: the Hessian-vector
    product matches autograd's (forward over reverse against reverse over reverse)."""
    import autograd

    direction = np.array([0.5, 1.0, -2.0])
    _, hvp = jvp(grad(fn), (X,), (direction,))
    twin = with_autograd_numpy(_autograd_version(fn))
    want = autograd.grad(lambda x: autograd.numpy.dot(autograd.grad(twin)(x), direction))(X)
    np.testing.assert_allclose(hvp, want, rtol=1e-9, atol=1e-12)
