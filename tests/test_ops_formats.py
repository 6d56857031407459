"""Data-format labels ("SSCB"): validation, channel axis, channel-wise reductions."""

from __future__ import annotations

import array_api_strict as xps
import numpy as np
import pytest
from wrapped_text import wrapped

from autodiff_tutor.errors import DataFormatError
from autodiff_tutor.ops import (
    batch_axis,
    channel_axis,
    channel_shape,
    check_channel_parameter,
    check_format,
    find_dims,
    reduce_to_channels,
)


@pytest.mark.parametrize(
    ("fmt", "ndim", "match"),
    [
        ("SSCC", 4, r"2 'C' \(channel\) labels"),
        ("SBB", 3, r"2 'B' \(batch\) labels"),
        ("SXCB", 4, r"unknown label\(s\) 'X'"),
        ("sscb", 4, r"unknown label"),
        ("SSCB", 3, r"labels 4 axes but the array has 3"),
    ],
)
def test_bad_formats_are_rejected_with_a_reason(fmt, ndim, match):
    with pytest.raises(DataFormatError, match=match):
        check_format(fmt, ndim)


def test_a_format_must_be_a_string():
    with pytest.raises(DataFormatError, match=wrapped("must be a string")):
        check_format(["S", "C"])


def test_axes_by_label():
    assert find_dims("SSCB", "S") == (0, 1)
    assert channel_axis("SSCB") == 2 and batch_axis("SSCB") == 3
    assert channel_axis("TB") is None and batch_axis("SC") is None
    assert channel_shape("SSCB", (5, 6, 3, 2)) == (1, 1, 3, 1)
    assert channel_shape("SSB", (5, 6, 2)) == (1, 1, 1)


@pytest.mark.parametrize(
    ("fmt", "shape"), [("SSCB", (4, 5, 3, 2)), ("CB", (3, 7)), ("BTC", (2, 4, 3))]
)
def test_reduce_to_channels_sums_every_other_axis(fmt, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    c = fmt.index("C")
    expected = x.sum(axis=tuple(i for i in range(len(shape)) if i != c), keepdims=True)
    result = reduce_to_channels(x, fmt)
    assert result.shape == channel_shape(fmt, shape)
    np.testing.assert_allclose(result, expected, rtol=1e-14)


def test_reduce_without_a_channel_sums_everything_keeping_dims():
    x = np.ones((2, 3))
    assert reduce_to_channels(x, "BU").tolist() == [[6.0]]


def test_reduce_runs_on_a_strict_array_library():
    x = xps.reshape(xps.arange(6, dtype=xps.float64), (2, 3))
    result = reduce_to_channels(x, "BC")
    assert isinstance(result, type(x))
    assert [float(result[0, i]) for i in range(3)] == [3.0, 5.0, 7.0]


def test_channel_parameters_are_checked():
    X = np.zeros((4, 3))
    check_channel_parameter(np.zeros((1, 3)), X, "BC", "alpha")
    with pytest.raises(DataFormatError, match=wrapped(r"'alpha' has shape \(3, 1\).*\(1, 3\)")):
        check_channel_parameter(np.zeros((3, 1)), X, "BC", "alpha")
    with pytest.raises(DataFormatError, match=wrapped("dtype float32 but the data has float64")):
        check_channel_parameter(np.zeros((1, 3), np.float32), X, "BC", "alpha")
    with pytest.raises(DataFormatError, match=wrapped("array_api_strict")):
        check_channel_parameter(xps.zeros((1, 3)), X, "BC", "alpha")
