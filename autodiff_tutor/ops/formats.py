"""Data-format labels: which axis of an array is the channel, the batch, space or time.

A format is a string with one letter per axis, as in MATLAB's ``"SSCB"``:

====== ==============================================
letter meaning
====== ==============================================
``S``  spatial (height, width, depth...)
``C``  channel (at most one)
``B``  batch: one observation per index (at most one)
``T``  time (at most one)
``U``  unspecified
====== ==============================================

Channel-wise parameters (PReLU's alpha, SReLU's thresholds and slopes) have one value
per channel and size 1 on every other axis, so they broadcast against the data. Their
gradient is the data-shaped gradient summed over every axis but the channel axis:
:func:`reduce_to_channels`.

>>> import numpy as np
>>> x = np.ones((4, 4, 3, 2))          # height, width, channel, batch
>>> channel_axis("SSCB")
2
>>> reduce_to_channels(x, "SSCB").shape
(1, 1, 3, 1)
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from autodiff_tutor.errors import DataFormatError
from autodiff_tutor.runtime.backend import array_module, shape_of

__all__ = [
    "LABELS",
    "batch_axis",
    "channel_axis",
    "channel_shape",
    "check_channel_parameter",
    "check_channel_parameters",
    "check_format",
    "find_dims",
    "reduce_to_channels",
]

LABELS = {
    "S": "spatial",
    "C": "channel",
    "B": "batch",
    "T": "time",
    "U": "unspecified",
}

_AT_MOST_ONCE = "CBT"


def check_format(fmt: str, ndim: int | None = None) -> str:
    """Validate a format string (and, given ``ndim``, that it labels every axis).

    Returns the format unchanged, so it can be used inline.

    >>> check_format("SSCB", 4)
    'SSCB'
    >>> check_format("SCC")
    Traceback (most recent call last):
        ...
    autodiff_tutor.errors.DataFormatError: data format 'SCC' has 2 'C' (channel) labels...
    """
    if isinstance(fmt, str) and (fmt, ndim) in _VALID:
        return fmt  # ops check their format on every call: remember the valid ones
    _check_format(fmt, ndim)
    _VALID.add((fmt, ndim))
    return fmt


_VALID: set[tuple[str, int | None]] = set()


def _check_format(fmt: str, ndim: int | None) -> None:
    if not isinstance(fmt, str):
        raise DataFormatError(
            f"a data format must be a string such as 'SSCB', got {type(fmt).__name__}",
            hint="one letter per axis: S spatial, C channel, B batch, T time, U unspecified",
        )
    bad = sorted({letter for letter in fmt if letter not in LABELS})
    if bad:
        raise DataFormatError(
            f"data format {fmt!r} has unknown label(s) {', '.join(map(repr, bad))}",
            hint="use only S (spatial), C (channel), B (batch), T (time), U (unspecified)",
        )
    for letter in _AT_MOST_ONCE:
        count = fmt.count(letter)
        if count > 1:
            raise DataFormatError(
                f"data format {fmt!r} has {count} {letter!r} ({LABELS[letter]}) labels, "
                "at most one is allowed",
                hint="label the other axes 'S' or 'U'",
            )
    if ndim is not None and len(fmt) != ndim:
        raise DataFormatError(
            f"data format {fmt!r} labels {len(fmt)} axes but the array has {ndim}",
            hint="give exactly one label per axis of the data",
        )


def find_dims(fmt: Any, label: str) -> tuple[int, ...]:
    """The axes that carry ``label`` (like MATLAB's ``finddim``), in a format string or
    a formatted array (an unformatted array has none).

    >>> find_dims("SSCB", "S")
    (0, 1)
    """
    if not isinstance(fmt, str):
        fmt = getattr(fmt, "format", "")  # a formatted array's labels
    check_format(fmt)
    if label not in LABELS:
        raise DataFormatError(
            f"find_dims: unknown label {label!r}",
            hint="use S (spatial), C (channel), B (batch), T (time) or U (unspecified)",
        )
    return _dims(fmt, label)


@functools.lru_cache(maxsize=256)
def _dims(fmt: str, label: str) -> tuple[int, ...]:
    # formats are few and ops ask on every call: each answer is computed once
    return tuple(i for i, letter in enumerate(fmt) if letter == label)


def channel_axis(fmt: str) -> int | None:
    """The channel axis of ``fmt``, or ``None`` when it has no ``C``.

    >>> channel_axis("BC"), channel_axis("SSB")
    (1, None)
    """
    axes = find_dims(fmt, "C")
    return axes[0] if axes else None


def batch_axis(fmt: str) -> int | None:
    """The batch (observation) axis of ``fmt``, or ``None`` when it has no ``B``.

    >>> batch_axis("SSCB")
    3
    """
    axes = find_dims(fmt, "B")
    return axes[0] if axes else None


def channel_shape(fmt: str, data_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a channel-wise parameter for data of ``data_shape`` in ``fmt``.

    Size 1 on every axis but the channel axis, which keeps the data's channel count.
    Without a ``C`` label, one value is shared by all elements (all sizes 1).

    >>> channel_shape("SSCB", (28, 28, 3, 16))
    (1, 1, 3, 1)
    """
    check_format(fmt, len(data_shape))
    return _channel_shape(fmt, tuple(data_shape))


@functools.lru_cache(maxsize=256)
def _channel_shape(fmt: str, data_shape: tuple[int, ...]) -> tuple[int, ...]:
    c = channel_axis(fmt)
    return tuple(n if i == c else 1 for i, n in enumerate(data_shape))


def reduce_to_channels(x: Any, fmt: str) -> Any:
    """Sum ``x`` over every axis but the channel axis, keeping dimensions.

    The result has the shape :func:`channel_shape` gives, so it broadcasts against
    the data and matches a channel-wise parameter: this is how a channel-wise
    parameter's gradient collects the contributions of every pixel and observation.

    >>> import numpy as np
    >>> reduce_to_channels(np.ones((2, 3)), "BC").tolist()
    [[2.0, 2.0, 2.0]]
    """
    if type(x) is np.ndarray and type(fmt) is str:  # the common case, at half the cost
        axes = _REDUCE_AXES.get((fmt, x.ndim))
        if axes:
            return x.sum(axis=axes, keepdims=True)
    ndim = len(shape_of(x))
    check_format(fmt, ndim)
    axes = _other_axes(fmt, ndim)
    _REDUCE_AXES[fmt, ndim] = axes  # a checked format and its axes, for the next call
    if not axes:
        return x
    return array_module(x).sum(x, axis=axes, keepdims=True)


#: ``(fmt, ndim) -> axes`` for formats that passed :func:`check_format` with ``ndim``.
_REDUCE_AXES: dict[tuple[str, int], tuple[int, ...]] = {}


@functools.lru_cache(maxsize=256)
def _other_axes(fmt: str, ndim: int) -> tuple[int, ...]:
    """Every axis of ``ndim`` but the channel axis of ``fmt``."""
    c = channel_axis(fmt)
    return tuple(i for i in range(ndim) if i != c)


def check_channel_parameter(param: Any, data: Any, fmt: str, name: str, op: str = "") -> None:
    """Raise a clear error unless ``param`` is a channel-wise parameter for ``data``.

    It must be an array of the data's array module and dtype, with exactly the shape
    :func:`channel_shape` gives.

    >>> import numpy as np
    >>> check_channel_parameter(np.ones((1, 3)), np.ones((5, 3)), "BC", "alpha")
    >>> check_channel_parameter(np.ones(3), np.ones((5, 3)), "BC", "alpha", "prelu")
    Traceback (most recent call last):
        ...
    autodiff_tutor.errors.DataFormatError: prelu: parameter 'alpha' has shape (3,), ...
    """
    where = f"{op}: " if op else ""
    expected = channel_shape(fmt, shape_of(data))
    got = shape_of(param)
    if got != expected:
        raise DataFormatError(
            f"{where}parameter {name!r} has shape {got}, but data of shape {shape_of(data)} "
            f"in format {fmt!r} needs a channel-wise shape {expected}",
            hint=f"reshape it, e.g. xp.reshape({name}, {expected}), or use "
            "channel_shape(fmt, X.shape) when you create it",
        )
    if array_module(param) is not array_module(data):
        raise DataFormatError(
            f"{where}parameter {name!r} is a {type(param).__module__} array but the data "
            f"is a {type(data).__module__} array",
            hint="create the parameters with the data's array module (array_module(X))",
        )
    if getattr(param, "dtype", None) != getattr(data, "dtype", None):
        raise DataFormatError(
            f"{where}parameter {name!r} has dtype {param.dtype} but the data has {data.dtype}",
            hint="cast the parameters to the data's dtype (xp.astype(p, X.dtype))",
        )


def check_channel_parameters(fmt: str, data: Any, op: str, **params: Any) -> None:
    """:func:`check_channel_parameter` for each of ``params`` (name=value), and that
    ``fmt`` labels every axis of ``data``: what an op checks on every call.

    Once ``fmt`` passed for numpy data of a shape, numpy parameters of exactly the
    right shape and dtype pass after a few attribute comparisons; anything else gets
    the full check (and its error).

    >>> import numpy as np
    >>> X = np.ones((5, 3))
    >>> check_channel_parameters("BC", X, "srelu", tl=np.ones((1, 3)), al=np.ones((1, 3)))
    >>> check_channel_parameters("BC", X, "srelu", tl=np.ones((1, 3)), al=np.ones((3, 1)))
    Traceback (most recent call last):
        ...
    autodiff_tutor.errors.DataFormatError: srelu: parameter 'al' has shape (3, 1), ...
    """
    numpy_data = type(data) is np.ndarray and type(fmt) is str
    if numpy_data:  # the common case: a few comparisons per parameter
        expected = _CHANNEL_SHAPES.get((fmt, data.shape))
        if expected is not None:
            dtype = data.dtype
            if all(
                type(p) is np.ndarray and p.shape == expected and p.dtype == dtype
                for p in params.values()
            ):
                return
    expected = channel_shape(fmt, shape_of(data))
    for name, param in params.items():
        check_channel_parameter(param, data, fmt, name, op)
    if numpy_data:  # a checked format and shape, for the next call
        if len(_CHANNEL_SHAPES) >= 256:
            _CHANNEL_SHAPES.clear()
        _CHANNEL_SHAPES[fmt, data.shape] = expected


#: ``(fmt, data shape) -> channel shape`` for formats checked against numpy data.
_CHANNEL_SHAPES: dict[tuple[str, tuple[int, ...]], tuple[int, ...]] = {}
