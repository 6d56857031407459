"""Primitives given an axis option that takes another path through their rule: ``np.prod``
over a tuple of axes, ``np.concatenate`` with ``axis=None`` (its inputs flattened), in
each mode, against central differences."""

from __future__ import annotations

import numpy as np
import pytest
from program_checks import assert_right_in_mode

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])


def prod_over_axes(x):
    return np.prod(x, axis=(0, 1))


def concatenate_flat(x):
    return np.sum(np.concatenate([x, x * x], axis=None))


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
def test_prod_over_a_tuple_of_axes(mode):
    """``np.prod(x, axis=(0, 1))``: the product of every element, whose derivative
    divides by none of them."""
    assert_right_in_mode(mode, prod_over_axes, X)


@pytest.mark.parametrize("mode", ["compiler", "tracing"])
def test_concatenate_with_axis_none(mode):
    """``np.concatenate(..., axis=None)`` joins its inputs flattened; the gradient of
    each is its part of the result's, in its own shape."""
    assert_right_in_mode(mode, concatenate_flat, X)
