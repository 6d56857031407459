"""Array-module helpers that generated code calls.

Nothing here imports numpy for the user's data: the module comes from the values, so
the same generated code runs on numpy, cupy or any array-API library.

>>> import numpy as np
>>> array_module(np.ones(3)) is np
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from autodiff_tutor.errors import NoDerivativeRuleError, UnsupportedSyntaxError


def array_module(*values: Any) -> Any:
    """The array module (numpy, cupy, ...) of the first array among ``values``.

    Python and numpy scalars count as numpy; a cupy array gives cupy, a value with
    ``__array_namespace__`` (array-API libraries) its namespace.

    >>> import numpy as np
    >>> array_module(2.0, np.float32(1)) is np
    True
    """
    for value in values:
        if isinstance(value, (np.ndarray, np.generic, type)):  # (np.float64: a class)
            continue
        if _is_cupy(value):  # cupy's ndarray (cupy 14 has no __array_namespace__ on it)
            import cupy

            return cupy
        namespace = getattr(value, "__array_namespace__", None)
        if namespace is not None:
            return namespace()
    return np


def _is_cupy(value: Any) -> bool:
    return type(value).__module__.split(".", 1)[0] == "cupy"


def has_array_namespace(value: Any) -> bool:
    """Whether ``value`` is an array of an array library: one with
    ``__array_namespace__`` (numpy's, array-API libraries'), or a cupy array (cupy 14's
    ndarray has no ``__array_namespace__``). numpy scalars have one too; numbers do not.

    >>> has_array_namespace(np.ones(2)), has_array_namespace(2.0)
    (True, False)
    """
    return hasattr(value, "__array_namespace__") or _is_cupy(value)


def add_gradients(a: Any, b: Any) -> Any:
    """``a + b`` of two gradients; of two lists (the gradient of a list, of a list of
    lists) or tuples, item by item, where ``+`` would join them.

    >>> add_gradients([[1.0, 2.0], 3.0], [[10.0, 20.0], 30.0])
    [[11.0, 22.0], 33.0]
    """
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return [add_gradients(x, y) for x, y in zip(a, b, strict=True)]
    return a + b


def zeros_like(x: Any) -> Any:
    """A zero gradient with the shape and (floating) dtype of ``x``.

    >>> zeros_like(np.ones(2, np.float32)).dtype
    dtype('float32')
    >>> zeros_like([np.ones(2), np.ones(1)])[1].tolist()
    [0.0]
    """
    if type(x) is np.ndarray and x.dtype.kind == "f":  # the common case, at a third the cost
        return np.zeros(x.shape, x.dtype)
    if isinstance(x, (list, tuple)):  # the gradient of a list (or tuple) is a list
        return [zeros_like(item) for item in x]
    if isinstance(x, Unbound):  # never assigned on this path: no gradient either
        return 0.0
    if isinstance(x, (float, int)) and not isinstance(x, (bool, np.generic)):
        return 0.0  # sum(...) starts from the integer 0: its gradient is still a float
    xp = array_module(x)
    if getattr(getattr(x, "dtype", None), "kind", "f") in "iub":
        return xp.zeros_like(x, dtype=float)
    return xp.zeros_like(x)


def ones_like(x: Any) -> Any:
    """An array of ones with the shape and dtype of ``x``: the seed of a scalar output.

    >>> ones_like(np.float64(3.0))
    np.float64(1.0)
    """
    if isinstance(x, np.generic):
        return x.dtype.type(1)
    return array_module(x).ones_like(x)


def size(x: Any) -> int:
    """Number of elements of an array or scalar.

    >>> size(np.zeros((2, 3)))
    6
    """
    return math.prod(shape_of(x))


def shape_of(value: Any) -> tuple[int, ...]:
    """The shape of an array, ``()`` for a Python or numpy scalar.

    >>> shape_of(3.0), shape_of(np.zeros((2, 1)))
    ((), (2, 1))
    """
    return tuple(getattr(value, "shape", ()))


def dtype_kind(value: Any) -> str | None:
    """numpy's one-letter kind (``"f"``, ``"c"``, ``"i"``, ``"u"``, ``"b"``) of any array's dtype.

    Works for array libraries whose dtypes numpy cannot read; ``None`` for
    values without a dtype (Python numbers) or of another kind.

    >>> dtype_kind(np.zeros(2)), dtype_kind(np.arange(2)), dtype_kind(1.5)
    ('f', 'i', None)
    """
    dtype = getattr(value, "dtype", None)
    if dtype is None or isinstance(value, type):  # np.float64 itself: a class, no values
        return None
    if isinstance(dtype, np.dtype):
        return dtype.kind
    kinds = (
        ("real floating", "f"),
        ("complex floating", "c"),
        ("signed integer", "i"),
        ("unsigned integer", "u"),
        ("bool", "b"),
    )
    isdtype = array_module(value).isdtype
    return next((kind for name, kind in kinds if isdtype(dtype, name)), None)


def is_float_value(value: Any) -> bool:
    """Whether ``value`` is a floating-point (real or complex) array or scalar, or a
    Python float: what can have a gradient. The one test of "floating", for numpy,
    cupy and any array API library (through :func:`dtype_kind`).

    >>> is_float_value(np.ones(2)), is_float_value(np.arange(2)), is_float_value(1.5)
    (True, False, True)
    """
    return isinstance(value, float) or dtype_kind(value) in ("f", "c")


def has_float_dtype(value: Any) -> bool:
    """:func:`is_float_value`, where a value without a dtype counts as floating unless
    it is a bool or an int (a Python number, or a symbol of the symbolic checker): the
    test of the rules that run on both.

    >>> has_float_dtype(np.zeros(2)), has_float_dtype(np.zeros(2, int)), has_float_dtype(1.5)
    (True, False, True)
    """
    if getattr(value, "dtype", None) is None:
        return not isinstance(value, (bool, int))
    return is_float_value(value)


def copy_array(x: Any) -> Any:
    """A copy of the array ``x``, in its own array module (an array-API array has no
    ``.copy()``), laid out in memory as ``x`` is (``np.copy``'s order): a Fortran-ordered
    array stays so, and numpy's later choices of a view or a copy (``ravel``) with it.

    >>> a = np.zeros((2, 3)).T
    >>> b = copy_array(a)
    >>> b is a, b.tolist(), b.flags.f_contiguous
    (False, [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], True)
    """
    if hasattr(x, "flags"):  # numpy, cupy
        return x.copy(order="K")
    if hasattr(x, "copy"):
        return x.copy()
    return array_module(x).asarray(x, copy=True)


def copy_with_layout(x: Any) -> Any:
    """A copy of the array ``x`` with ``x``'s own strides, where numpy can make one: the
    array a write into ``x`` in place leaves (a slice with gaps keeps its gaps, a
    reversed axis its negative stride), so that numpy's later choice of a view or a
    copy (``ravel``, ``reshape``) is the same as for ``x``. Elsewhere ``np.copy``'s
    layout (:func:`copy_array`).

    >>> x = np.arange(12.0).reshape(3, 4)[:, ::2]
    >>> copy = copy_with_layout(x)
    >>> copy.strides == x.strides, copy.tolist() == x.tolist(), np.shares_memory(copy, x)
    (True, True, False)
    """
    return laid_out_as(copy_array(x), x)


def laid_out_as(new: Any, old: Any) -> Any:
    """``new`` (the values ``old`` takes after a write in place) in ``old``'s memory
    layout, as numpy's write into ``old`` leaves them; ``new`` itself where the layouts
    already agree or numpy cannot reproduce ``old``'s.

    >>> old = np.zeros((2, 3)).T
    >>> laid_out_as(np.ones((3, 2)), old).flags.f_contiguous
    True
    """
    if not isinstance(new, np.ndarray) or not isinstance(old, np.ndarray):
        return new
    if new.strides == old.strides or new.shape != old.shape:
        return new
    relaid = _strided_like(old)
    if relaid is None:
        return new
    relaid[...] = new
    return relaid


def _strided_like(x: np.ndarray) -> np.ndarray | None:
    """An uninitialised array with ``x``'s shape, dtype and strides, over new memory as
    long as the span of ``x``'s; ``None`` where elements overlap (a broadcast view)."""
    if any(stride == 0 and n > 1 for stride, n in zip(x.strides, x.shape, strict=True)):
        return None
    if x.size == 0:
        return np.empty_like(x)
    low, high = np.lib.array_utils.byte_bounds(x)
    if high - low < x.size * x.itemsize:  # elements overlap (np.lib.stride_tricks)
        return None
    memory = np.empty(high - low, dtype=np.uint8)
    start = x.__array_interface__["data"][0] - low
    return np.ndarray(x.shape, x.dtype, buffer=memory, offset=start, strides=x.strides)


def cast_like(g: Any, x: Any) -> Any:
    """``g`` in the dtype of ``x`` (a gradient always has its input's dtype).

    >>> cast_like(np.ones(2), np.zeros(2, np.float32)).dtype
    dtype('float32')
    """
    dtype = getattr(x, "dtype", None)
    g_dtype = getattr(g, "dtype", None)
    if dtype is None or (type(g_dtype) is type(dtype) and g_dtype == dtype):
        return g
    if (dtype_kind(g) == "c" or isinstance(g, complex)) and dtype_kind(x) != "c":
        refuse_complex_gradient()
    if not isinstance(dtype, np.dtype):  # another library's input: its array, its dtype
        return (getattr(x, "namespace", None) or array_module(x)).asarray(g, dtype=dtype)
    if g_dtype is None:  # a Python number: float64 as it is, else a numpy scalar
        return g if dtype == np.float64 else dtype.type(g)
    if isinstance(g, (np.ndarray, np.generic)):
        return g.astype(dtype)
    return array_module(g).astype(g, dtype)


#: What to write instead of a computation through complex numbers (every mode's refusal).
COMPLEX_HINT = (
    "keep the differentiated computation real: for |z| with z = a + ib, write "
    "np.sqrt(a**2 + b**2) with real a and b; for cos and sin, np.cos(x) and np.sin(x) "
    "instead of np.exp(1j * x)"
)


def refuse_complex_gradient() -> None:
    """Raise the error of a complex gradient meeting a real value.

    Complex values carried the gradient on its way (``np.abs(x * 1j)``,
    ``np.exp(1j * x)``): the rules are written for real numbers, so the result
    would be wrong; it is refused instead.

    >>> refuse_complex_gradient()
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.NoDerivativeRuleError: a gradient passed through complex values...
    """
    raise NoDerivativeRuleError(
        "a gradient passed through complex values on its way to a real one: "
        "differentiating through complex numbers is not supported",
        hint=COMPLEX_HINT,
    )


class Unbound:
    """The value of a variable on a path where the user's code never assigned it.

    Python would raise when such a variable is read; the generated code keeps one
    version per variable across branches, so it holds this placeholder instead,
    which raises the same way as soon as it is used.

    >>> unbound + 1
    Traceback (most recent call last):
    ...
    NameError: a variable is read on a path where it was never assigned
    """

    def __repr__(self) -> str:
        return "unbound"

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise NameError("a variable is read on a path where it was never assigned")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _fail
    __neg__ = __getitem__ = __float__ = __bool__ = __len__ = __iter__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __array__ = _fail

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._fail()


unbound = Unbound()


class Like:
    """The shape and dtype of an array, saved for the backward in place of the array
    when only those are read (``unbroadcast(g, t)``): the array itself can be freed.

    >>> saved = like(np.zeros((200, 300), np.float32))
    >>> saved.shape, saved.dtype, saved.ndim
    ((200, 300), dtype('float32'), 2)
    """

    __slots__ = ("shape", "dtype", "namespace")

    def __init__(self, shape: tuple[int, ...], dtype: Any, namespace: Any = None):
        self.shape = shape
        self.dtype = dtype
        self.namespace = namespace  # the array library, where it is not numpy

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"like(shape={self.shape}, dtype={self.dtype})"


def like(x: Any) -> Any:
    """``Like(shape, dtype)`` of an array or numpy scalar; anything else as it is.

    >>> like(3.0)
    3.0
    """
    if type(x) is np.ndarray:
        # a small array costs little to keep, and keeps the helpers' fast paths
        return Like(x.shape, x.dtype) if x.size > _KEEP_BELOW else x
    dtype = getattr(x, "dtype", None)
    if dtype is None or isinstance(x, np.generic):
        return x  # Python numbers and numpy scalars are small: keep them
    return Like(tuple(x.shape), dtype, array_module(x))


_KEEP_BELOW = 4096  # elements


def shares_memory(view: Any, base: Any) -> bool:
    """Whether the array ``view`` sees the memory of ``base`` (an alias or a view of it).

    Compiled code asks this where numpy's answer depends on the values' memory layout:
    ``y.reshape(-1)`` is a view of a contiguous ``y`` and a copy of a transposed one,
    ``y[0]`` is a view of a 2-D ``y`` and a scalar copy of a 1-D one. Numbers and
    numpy scalars share nothing (``+=`` on them makes a new object).

    >>> y = np.zeros((2, 3))
    >>> shares_memory(y.reshape(-1), y), shares_memory(y.T.reshape(-1), y)
    (True, False)
    >>> shares_memory(y[0], y), shares_memory(y[0, 0], y), shares_memory(y, y)
    (True, False, True)
    """
    if not hasattr(view, "shape") or isinstance(view, np.generic):
        return False
    if view is base:
        return True
    overlap = getattr(array_module(view, base), "may_share_memory", None)
    if overlap is None:
        raise UnsupportedSyntaxError(
            "a write into an array that a view shares needs to know whether the view is "
            f"a copy, and {type(view).__name__} arrays cannot tell (no may_share_memory)",
            hint="copy the view before writing into it (np.copy(v); in the array API "
            "xp.asarray(v, copy=True)), or write into the array itself",
        )
    return bool(overlap(view, base))
