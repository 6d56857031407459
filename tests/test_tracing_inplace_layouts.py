"""Tracing follows numpy's memory layouts, on which its choice of a view or a copy rests.

``y.ravel()`` and ``y.reshape(-1)`` are views of a C-ordered ``y`` and copies of a
Fortran-ordered one (or of a slice with gaps), so a write through them reaches ``y`` or
is lost. Tracing decides by asking numpy on its raw arrays, so those must be laid out
as numpy's: a traced argument keeps the layout it was passed with, an update in place
keeps the array's layout (numpy writes into its memory), and a conversion has numpy's.
Values are checked against numpy on the same layouts, gradients against central
differences that keep the argument's layout (``oracles.central_difference``).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import value_and_grad
from autodiff_tutor.tracing import value_and_gradient

W = np.arange(1.0, 7.0).reshape(2, 3)
K = np.arange(1.0, 10.0).reshape(3, 3)
FORTRAN = np.arange(6.0).reshape(3, 2).T / 7  # (2, 3), a transpose: Fortran-ordered
SQUARE_F = np.asfortranarray(np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5], [0.9, -0.2, 0.6]]))


def _check_like_numpy(fn, x, modes=("tracing",)):
    """Value as numpy's and gradient as central differences, on ``x``'s own layout."""
    expected = fn(x.copy(order="K"))
    differences = central_difference(fn, [x], 0)
    calls = {
        "tracing": lambda: value_and_gradient(fn, x.copy(order="K")),
        "compiler": lambda: value_and_grad(fn)(x.copy(order="K")),
    }
    for mode in modes:
        value, gradient = calls[mode]()
        assert np.isclose(value, expected, rtol=1e-12), (mode, value, expected)
        np.testing.assert_allclose(gradient, differences, atol=1e-6, err_msg=mode)


def ravel_written(x):
    y = x * 1.0  # keeps x's layout (numpy's order='K')
    v = y.ravel()  # a view of a C-ordered y, a copy of a Fortran-ordered one
    v[0] = 10.0 * x[1, 1]
    return np.sum(y * W)


def test_a_fortran_ordered_argument_keeps_its_layout():
    """The bug hunt's numbers: numpy 9.2857 with gradient W (the write is lost: the
    ravel copies); tracing copied the argument in C order, so its ravel was a view
    (13.5714)."""
    value, gradient = value_and_gradient(ravel_written, FORTRAN.copy(order="K"))
    assert np.isclose(value, 9.285714285714285)
    np.testing.assert_allclose(gradient, W)
    _check_like_numpy(ravel_written, FORTRAN)
    _check_like_numpy(ravel_written, np.ascontiguousarray(FORTRAN))  # C order: a view


def zeros_like_reshaped_and_written(x):
    y = np.zeros_like(x)  # x's layout
    y.reshape(-1)[3] = x[1, 1] * 5.0
    return np.sum(y * W) + np.sum(x * x)


def zeros_like_ravelled_and_written(x):
    y = np.zeros_like(x)
    r = y.ravel()
    r[3] = x[1, 1] * 5.0
    return np.sum(y * W) + np.sum(x * x)


@pytest.mark.parametrize("fn", [zeros_like_reshaped_and_written, zeros_like_ravelled_and_written])
@pytest.mark.parametrize("x", [FORTRAN, np.ascontiguousarray(FORTRAN)], ids=["F", "C"])
def test_an_array_made_like_an_argument_has_its_layout(fn, x):
    _check_like_numpy(fn, x)


def updated_by_another_layout_then_ravelled(x):
    y = x * 1.0  # Fortran-ordered
    y += np.arange(9.0).reshape(3, 3) * x[0, 0]  # numpy keeps y's layout
    v = y.reshape(-1)  # so this is a copy
    v[1] = 10.0 * x[1, 1]
    return np.sum(y * K)


def slice_with_gaps_updated_then_ravelled(x):
    y = (x * 2.0)[:, ::2]  # its array dies: y is a slice with gaps of no traced array
    y += 1.0
    v = y.ravel()  # a copy in numpy, after the update too
    v[0] = 10.0 * x[1, 1]
    return np.sum(y * K[:, :2])


def slice_with_gaps_written_then_ravelled(x):
    y = (x * 2.0)[::-1, ::2]
    y[1, 1] = x[0, 0] ** 2
    v = y.ravel()
    v[0] = 10.0 * x[1, 1]
    return np.sum(y * K[:, :2])


@pytest.mark.parametrize(
    "fn",
    [
        updated_by_another_layout_then_ravelled,
        slice_with_gaps_updated_then_ravelled,
        slice_with_gaps_written_then_ravelled,
    ],
)
def test_an_update_in_place_keeps_the_arrays_layout(fn):
    """numpy writes into the array's memory, so its strides stay (a Fortran order, gaps,
    a reversed axis); tracing's new value for it is laid out the same, and a later
    ``ravel`` is a copy as in numpy (it was a view, and saw the write)."""
    _check_like_numpy(fn, SQUARE_F if fn is updated_by_another_layout_then_ravelled else K / 9)


def test_a_write_into_a_slice_with_gaps_keeps_its_strides_when_compiled():
    """The compiled write ``y_2 = assign_at(y, ...)`` keeps y's strides too (it kept a
    Fortran order, not gaps: the ravel was a view)."""
    _check_like_numpy(slice_with_gaps_written_then_ravelled, K / 9, modes=("compiler",))


CONVERSIONS = [
    ("np.ascontiguousarray(t)", SQUARE_F),  # a copy of a Fortran-ordered t
    ("np.asarray(t, order='C')", SQUARE_F),
    ("np.asarray(t, order='F')", np.ascontiguousarray(SQUARE_F)),
    ("np.array(t, copy=None, order='C')", SQUARE_F),
    ("np.asarray(t, order='F')", SQUARE_F),  # t itself
]


@pytest.mark.parametrize(("conversion", "x"), CONVERSIONS)
def test_a_conversion_to_another_layout_is_a_copy_as_in_numpy(conversion, x):
    """numpy copies a conversion that asks for another layout, and returns ``t`` itself
    for one that does not; a write through the result shows which (tracing returned
    ``t`` for each)."""
    namespace = {"np": np, "K": K}
    exec(
        "def fn(x):\n"
        "    t = x * 1.0\n"
        f"    y = {conversion}\n"
        "    y[0, 1] = 0.0\n"
        "    return np.sum(t * K)\n",
        namespace,
    )
    _check_like_numpy(namespace["fn"], x)


def copied_then_ravelled(x):
    y = np.array(x * 1.0)  # np.array copies in numpy's order='K': Fortran stays
    r = y.ravel()
    r[3] = x[1, 1] * 5.0
    return np.sum(y * K)


def test_a_copy_by_np_array_keeps_the_layout():
    _check_like_numpy(copied_then_ravelled, SQUARE_F)
