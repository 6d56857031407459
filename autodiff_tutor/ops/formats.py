"""Data formats: which axis of an array is the channel, the batch, space or time; and
formatted arrays, whose axes carry these labels (MATLAB's formatted ``dlarray``), so
that ops can find the channel axis themselves.

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
>>> channel_axis("SSCB")
2
>>> reduce_to_channels(np.ones((4, 4, 3, 2)), "SSCB").shape    # height, width, channel, batch
(1, 1, 3, 1)

``formatted(x, "SSCB")`` labels the axes of ``x``. As in MATLAB, the labels are put in
the canonical order S, C, B, T, U, and the data is permuted with them:
``formatted(x, "BC")`` of a ``(batch, channel)`` array holds its ``(channel, batch)``
transpose, labelled ``"CB"``. ``traced(x, "SSCB")`` is the same over a traced array.

The labels follow the data through

- **elementwise** operations (operators, ufuncs, ``np.where``, ``np.clip``...): the
  formatted inputs must have the same format (else a located
  :class:`~autodiff_tutor.errors.DataFormatError`); unformatted inputs broadcast as
  in numpy (a scalar, or a channel-wise parameter with the data's number of axes);
- **reductions** (``sum``, ``mean``, ``max``, ``min``, ``prod``...): the labels of the
  reduced axes are dropped (kept with ``keepdims=True``); reducing every axis gives
  an unformatted result;
- **permutes** (``np.transpose``, ``.T``, ``np.swapaxes``, ``np.moveaxis``): the labels
  move with their axes.

Everything else (reshape, indexing, matmul...) returns the unformatted result, as
:func:`strip_dims` would. :func:`dims` reads the format, :func:`find_dims` finds an
axis by its label, :func:`strip_dims` takes the labels off (a traced array stays
traced; ``extract_data`` also takes the data out).

>>> x = formatted(np.ones((4, 4, 3, 2)), "SSCB")
>>> dims(x), find_dims(x, "C")
('SSCB', (2,))
>>> dims(np.sum(x * 2.0, axis=(0, 1))), dims(np.sum(x))
('CB', '')
>>> formatted(np.zeros((2, 3)), "BC")                    # sorted into "CB"
formatted(array([[0., 0.],
       [0., 0.],
       [0., 0.]]), 'CB')
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from autodiff_tutor.errors import DataFormatError
from autodiff_tutor.locations import location
from autodiff_tutor.runtime.backend import array_module, shape_of

__all__ = [
    "CANONICAL_ORDER",
    "FormattedArray",
    "LABELS",
    "batch_axis",
    "channel_axis",
    "channel_shape",
    "check_channel_parameter",
    "check_channel_parameters",
    "check_format",
    "data_format",
    "dims",
    "find_dims",
    "formatted",
    "is_formatted",
    "labelled_like",
    "op_format",
    "reduce_to_channels",
    "strip_dims",
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
    c = channel_axis(fmt)
    axes = tuple(i for i in range(ndim) if i != c)
    _REDUCE_AXES[fmt, ndim] = axes  # a checked format and its axes, for the next call
    if not axes:
        return x
    return array_module(x).sum(x, axis=axes, keepdims=True)


#: ``(fmt, ndim) -> axes`` for formats that passed :func:`check_format` with ``ndim``.
_REDUCE_AXES: dict[tuple[str, int], tuple[int, ...]] = {}


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


#: The order MATLAB keeps the labels of a formatted array in.
CANONICAL_ORDER = "SCBTU"

_REDUCTIONS = {"sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "all", "any"}
_ELEMENTWISE = {"where", "clip", "copy", "zeros_like", "ones_like", "full_like", "empty_like"}


def _located_error(message: str, hint: str) -> DataFormatError:
    return DataFormatError(message, location(), hint=hint)


def _reduction(name: str) -> Any:
    def method(self: FormattedArray, axis: Any = None, keepdims: bool = False) -> Any:
        return getattr(np, name)(self, axis=axis, keepdims=keepdims)

    method.__name__ = name
    method.__doc__ = f"``np.{name}(x, axis, keepdims)``: the reduced axes lose their labels."
    return method


class FormattedArray(np.lib.mixins.NDArrayOperatorsMixin):
    """An array (numpy, cupy, array-API or traced) with one label per axis.

    Make one with :func:`formatted` (or ``traced(x, fmt)``); ``data`` is the array,
    ``format`` the labels. Operators and numpy functions work on it and carry the
    labels as the module docstring says.

    >>> import numpy as np
    >>> x = formatted(np.array([[1.0, -2.0]]), "CB")
    >>> x * 2 - 1
    formatted(array([[ 1., -5.]]), 'CB')
    >>> print(x)
    1(C) x 2(B) formatted array
    [[ 1. -2.]]
    """

    __slots__ = ("data", "format")

    def __init__(self, data: Any, fmt: str) -> None:
        self.data = data
        self.format = fmt

    shape = property(lambda self: shape_of(self.data), doc="The shape of the data.")
    ndim = property(lambda self: len(shape_of(self.data)), doc="The number of axes.")
    dtype = property(lambda self: self.data.dtype, doc="The dtype of the data.")

    def __repr__(self) -> str:
        return f"formatted({self.data!r}, {self.format!r})"

    def __str__(self) -> str:
        sizes = " x ".join(
            f"{n}({label})" for n, label in zip(self.shape, self.format, strict=True)
        )
        return f"{sizes} formatted array\n{self.data}"

    def __len__(self) -> int:
        return len(self.data)

    def __bool__(self) -> bool:
        return bool(self.data)  # the data's truth (an error for several elements)

    def __float__(self) -> float:
        return float(self.data)

    def __int__(self) -> int:
        return int(self.data)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self.data, dtype=dtype)

    def __getitem__(self, index: Any) -> Any:
        """``x[...]``: the unformatted result (indexing may drop or add axes)."""
        return self.data[index]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in self.__slots__:
            raise AttributeError(name)
        return getattr(self.data, name)  # other methods: the unformatted result

    @property
    def T(self) -> FormattedArray:
        """The transpose; the labels are reversed with the axes."""
        return np.transpose(self)

    def transpose(self, *axes: Any) -> Any:
        """Permute the axes (and their labels), like ``np.transpose``."""
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        return np.transpose(self, axes or None)

    sum = _reduction("sum")
    mean = _reduction("mean")
    max = _reduction("max")
    min = _reduction("min")
    prod = _reduction("prod")

    def astype(self, dtype: Any) -> FormattedArray:
        """The data cast to ``dtype``, with the same labels."""
        return FormattedArray(self.data.astype(dtype), self.format)

    def copy(self) -> FormattedArray:
        """A copy, with the same labels."""
        return np.copy(self)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = f"np.{ufunc.__name__}"
        if any(is_formatted(o) for o in kwargs.get("out", None) or ()):
            raise _located_error(
                f"{name}(..., out=...) into a formatted array",
                "write x = ... instead; a formatted array is not written in place",
            )
        result = getattr(ufunc, method)(*strip_dims(list(inputs)), **strip_dims(kwargs))
        if method != "__call__":  # reduce, accumulate, outer...: no labels to follow
            return result
        fmt = _common_format(name, inputs)
        if isinstance(result, tuple):
            return tuple(_labelled(r, fmt, name) for r in result)
        return _labelled(result, fmt, name)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        name = f"np.{func.__name__}"
        result = func(*strip_dims(list(args)), **strip_dims(kwargs))
        fmt = op_format(func.__name__, _bound(func, args, kwargs), result)
        return _labelled(result, fmt, name)


def _bound(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a numpy function call by parameter name (positional ones too)."""
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {"args": args, **kwargs}
    return {"args": args, **bound.arguments}


def op_format(name: str, arguments: dict[str, Any], result: Any) -> str | None:
    """The format of ``result`` of numpy function ``name``, or ``None`` (unformatted).

    ``arguments`` maps parameter names to values, with ``"args"`` the positional ones.

    >>> import numpy as np
    >>> x = formatted(np.ones((2, 3, 4)), "SCB")
    >>> op_format("sum", {"args": (x,), "a": x, "axis": 1}, np.ones((2, 4)))
    'SB'
    >>> op_format("transpose", {"args": (x,), "a": x, "axes": (2, 0, 1)}, np.ones((4, 2, 3)))
    'BSC'
    """
    inputs = arguments["args"]
    first = arguments.get("a", inputs[0] if inputs else None)
    if name in _REDUCTIONS and is_formatted(first):
        return _reduced_format(first.format, arguments.get("axis"), arguments.get("keepdims"))
    if name in ("transpose", "permute_dims") and is_formatted(first):
        axes = arguments.get("axes")
        axes = range(first.ndim - 1, -1, -1) if axes is None else axes
        return "".join(first.format[i] for i in axes)
    if name == "swapaxes" and is_formatted(first):
        order = list(range(first.ndim))
        i, j = arguments["axis1"] % first.ndim, arguments["axis2"] % first.ndim
        order[i], order[j] = order[j], order[i]
        return "".join(first.format[k] for k in order)
    if name == "moveaxis" and is_formatted(first):
        sources, targets = (
            [a % first.ndim for a in (v if isinstance(v, (tuple, list)) else (v,))]
            for v in (arguments["source"], arguments["destination"])
        )
        order = [i for i in range(first.ndim) if i not in sources]
        for target, source in sorted(zip(targets, sources, strict=True)):
            order.insert(target, source)
        return "".join(first.format[k] for k in order)
    if name in _ELEMENTWISE:
        return _common_format(f"np.{name}", list(inputs) + list(arguments.values())[1:])
    return None


def _reduced_format(fmt: str, axis: Any, keepdims: Any) -> str:
    if keepdims:
        return fmt
    if axis is None:
        return ""
    axes = {a % len(fmt) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    return "".join(label for i, label in enumerate(fmt) if i not in axes)


def _common_format(name: str, values: list[Any]) -> str | None:
    """The one format of the formatted ``values`` (``None`` if none is formatted)."""
    found = sorted({v.format for v in values if is_formatted(v)})
    if len(found) > 1:
        raise _located_error(
            f"{name}: the inputs have different data formats {' and '.join(map(repr, found))}",
            "permute one to match the other (np.transpose), or compute on plain arrays: "
            "strip_dims(x)",
        )
    return found[0] if found else None


def _labelled(result: Any, fmt: str | None, name: str) -> Any:
    if not fmt or not hasattr(result, "shape"):
        return result
    if len(shape_of(result)) != len(fmt):
        raise _located_error(
            f"{name}: the result has {len(shape_of(result))} axes, but the format "
            f"{fmt!r} of its formatted input labels {len(fmt)}: an unformatted input "
            "added axes by broadcasting",
            "give the unformatted input the same number of axes as the data (size 1 "
            "where it broadcasts, e.g. channel_shape(dims(X), X.shape))",
        )
    return FormattedArray(result, fmt)


def is_formatted(x: Any) -> bool:
    """Whether ``x`` is a formatted array.

    >>> import numpy as np
    >>> is_formatted(formatted(np.ones(2), "C")), is_formatted(np.ones(2))
    (True, False)
    """
    return isinstance(x, FormattedArray)


def formatted(x: Any, fmt: str) -> FormattedArray:
    """``x`` with data-format labels ``fmt``, sorted into the order S, C, B, T, U.

    The data is permuted with the labels (MATLAB's ``dlarray(x, fmt)``). ``x`` may be a
    numpy, cupy or array-API array, or a traced array; a formatted ``x`` must already
    have the format ``fmt`` (take the labels off first: :func:`strip_dims`).

    >>> import numpy as np
    >>> x = formatted(np.arange(6.0).reshape(2, 3), "BC")   # 2 observations, 3 channels
    >>> dims(x), x.shape
    ('CB', (3, 2))
    """
    if is_formatted(x):
        if sorted(x.format) != sorted(fmt) or len(x.format) != len(fmt):
            raise _located_error(
                f"formatted(x, {fmt!r}): x is already formatted {x.format!r}",
                "take the labels off first: formatted(strip_dims(x), fmt)",
            )
        return x
    try:
        check_format(fmt, len(shape_of(x)))
    except DataFormatError as error:
        raise _located_error(f"formatted(x, {fmt!r}): {error.message}", error.hint) from None
    order = sorted(range(len(fmt)), key=lambda i: CANONICAL_ORDER.index(fmt[i]))
    if order != sorted(order):
        x = _permute(x, tuple(order))
    return FormattedArray(x, "".join(fmt[i] for i in order))


def _permute(x: Any, order: tuple[int, ...]) -> Any:
    xp = array_module(x)
    permute = getattr(xp, "permute_dims", None) or xp.transpose  # array API, or numpy < 2
    return permute(x, order)


def dims(x: Any) -> str:
    """The data format of ``x``: its labels, or ``""`` when it is unformatted.

    >>> import numpy as np
    >>> dims(formatted(np.ones((2, 3)), "TS")), dims(np.ones(2))
    ('ST', '')
    """
    return x.format if is_formatted(x) else ""


def strip_dims(x: Any) -> Any:
    """``x`` without its labels (a traced array stays traced); lists, tuples and dicts
    element by element.

    >>> import numpy as np
    >>> strip_dims(formatted(np.ones(2), "C"))
    array([1., 1.])
    """
    if is_formatted(x):
        return x.data
    if isinstance(x, (list, tuple)):
        return type(x)(strip_dims(v) for v in x)
    if isinstance(x, dict):
        return {k: strip_dims(v) for k, v in x.items()}
    return x


def data_format(op: str, x: Any, fmt: str | None, *others: Any) -> str:
    """The data format an op's interface function runs in: ``fmt``, or the labels of a
    formatted ``x`` (given both, they must agree; formatted ``others``, such as
    channel-wise parameters, must have the same labels).

    >>> import numpy as np
    >>> data_format("prelu", formatted(np.ones((3, 2)), "CB"), None)
    'CB'
    >>> data_format("prelu", np.ones((3, 2)), None)
    Traceback (most recent call last):
        ...
    autodiff_tutor.errors.DataFormatError: prelu: X is not formatted, so fmt= must say ...
    """
    _common_format(op, [x, *others])
    if is_formatted(x):
        if fmt is not None and fmt != x.format:
            raise _located_error(
                f"{op}: fmt={fmt!r}, but X is formatted {x.format!r}",
                "leave out fmt= for a formatted X (its labels say it all), or pass strip_dims(X)",
            )
        return x.format
    if fmt is None:
        raise _located_error(
            f"{op}: X is not formatted, so fmt= must say its data format",
            f"{op}(X, ..., fmt='SSCB'), or label the data: {op}(formatted(X, 'SSCB'), ...)",
        )
    return fmt


def labelled_like(result: Any, like: Any) -> Any:
    """``result`` with the labels of ``like`` when ``like`` is formatted (an op's output
    of the input's shape, a gradient of a formatted variable); else ``result``.

    >>> import numpy as np
    >>> labelled_like(np.zeros(2), formatted(np.ones(2), "C"))
    formatted(array([0., 0.]), 'C')
    """
    if not is_formatted(like) or is_formatted(result):
        return result
    return _labelled(result, like.format, "a result")
