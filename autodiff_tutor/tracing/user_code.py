"""The user's code as a running trace calls it: a copy of each function whose globals
give numpy, scipy and math as tracing sees them in place of the modules.

numpy converts foreign values in C and makes its arrays in C, so neither ``out =
np.zeros(n); out[i] = t`` nor ``np.array([a, b])`` nor scipy's ``logsumexp(t)`` can
be taught to keep a trace through numpy itself; and changing numpy (monkeypatching)
would change it for all other code and threads. Instead ``evaluate`` runs a copy of
the function (same code, defaults and closure) whose globals are a view of its
module's globals: every name reads the module's current value, except that numpy,
scipy and math (however imported: ``import numpy as np``, ``from scipy.special
import logsumexp``) read as tracing sees them, and the user's other functions read as
such copies too, so the helpers the function calls see the same (and the functions
given as arguments or defaults are the same copies: ``activation is relu`` keeps its
meaning). Nothing else sees these globals, and nothing in the user's module changes.

What this does not reach: functions that assign globals (``global n``, or through
``globals()``: they run as they are, since their writes must reach the module), and
functions reached other than by a global name or a closure: methods called on objects
(``self.forward(x)``: a bound method given to ``evaluate`` itself is reached),
functions kept in lists, dicts or attributes, and code in other libraries; there numpy
is numpy, and an escape is refused as before.

What differs from the modules, in the namespaces the copies see:

- numpy's array-making functions (``np.zeros``, ``ones``, ``empty``, ``full``,
  ``eye``, ``identity``) give *buffers*: traced arrays off the trace, as a numeric
  array that a ``dlarray`` is assigned into becomes a ``dlarray`` in MATLAB. A buffer
  is a constant, which behaves as the plain array would (``float(out[0])`` is fine),
  until a traced value is written or added into it (``out[i] = t``, ``out[:, j] +=
  t``, ``np.add(a, t, out=out)``); from then on it is on the trace. A buffer that
  never got a traced value leaves ``evaluate`` as a plain array;
- its conversions (``np.array([a, b])``, ``np.asarray(t)``), ``np.r_``/``np.c_`` and
  scalar casts (``np.float64(t)``), which numpy makes in C (through ``__array__``,
  which must return a plain array), keep traced values traced: numpy's own answer on
  the raw data says which, the traced value itself where numpy returns the array
  itself (``asarray``, ``array(t, copy=None)``, ``np.float64`` of a float64 array), so
  that a write through either is seen by the other, else a recorded copy or cast laid
  out as numpy's (``array``, ``ascontiguousarray`` of a transpose); a list of traced
  values is stacked (``np.stack``, recorded). Its functions with a rule
  stack a list of traced values given as an array (``np.mean([a, b])``);
- scipy's functions written in Python (``scipy.special.logsumexp``,
  ``scipy.stats.norm.logpdf``, ``multivariate_normal.logpdf``, frozen distributions
  such as ``norm(mu, sigma).logpdf``) go to their derivative rules when given a traced
  value, where scipy itself would convert it with ``np.asarray``; one without a rule is
  refused at the call, as any function without a rule is;
- ``math.exp(t)`` (and ``log``, ``sqrt``, ``sin``...) of a traced value is numpy's.

Everything else is the module's own object, and every function gives numpy's or
scipy's own result when no traced value is passed.

The plain arrays passed to ``evaluate`` reach the copy as :class:`PlainArgument` views
(:func:`marked`), for ``X.dot(W)`` with a traced ``W``: ``ndarray.dot`` converts its
argument in C (through ``__array__``) and would drop the trace, although ``X @ W`` and
``np.dot(X, W)`` keep it. A view shares the caller's memory (writes reach the caller's
array, as in numpy; it is an ``ndarray`` for ``isinstance`` and for C code), and its
``dot`` hands a traced argument to ``np.dot``. Its views keep the class (``X[i].dot(W)``,
``X.T.dot(W)``); computed results are plain arrays, and what the function returns is
made plain again (:func:`unmarked`).

>>> import numpy as np
>>> def f(x):
...     return np.zeros(2)
>>> copy = rewired(f)
>>> copy is f, copy(1.0)  # no trace running: numpy's own result
(False, array([0., 0.]))
>>> import scipy.special
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> special = seen_by_trace(scipy.special)
>>> def f(x):
...     return gradient(special.logsumexp(x), x)
>>> evaluate(f, traced([0.0, 0.0]))
array([0.5, 0.5])
>>> def squares(x):
...     out = np.zeros(2)  # a buffer
...     for i in range(2):
...         out[i] = x[i] ** 2
...     return gradient(np.sum(out), x)
>>> evaluate(squares, traced([1.0, 3.0]))
array([2., 6.])
"""

from __future__ import annotations

import builtins
import dis
import functools
import types
import weakref
from typing import Any

import numpy as np

from autodiff_tutor.locations import here, is_user_file
from autodiff_tutor.rules import registry
from autodiff_tutor.rules.names import op_of_callable
from autodiff_tutor.tracing import dispatch, messages
from autodiff_tutor.tracing.array import Traced, traced_function
from autodiff_tutor.tracing.tape import Origin, active_tape
from autodiff_tutor.tracing.traced_values import (
    is_live,
    is_traced,
    note_view,
    traced_leaves,
    unwrap,
)

__all__ = [
    "BUFFER_FUNCTIONS",
    "CONVERSIONS",
    "Distribution",
    "JoinIndex",
    "LibraryNamespace",
    "PlainArgument",
    "SCALAR_TYPES",
    "ScalarCast",
    "TracingGlobals",
    "array_function",
    "buffer",
    "buffer_function",
    "is_buffer",
    "list_arguments",
    "marked",
    "plain_buffers",
    "rewired",
    "seen_by_trace",
    "seen_in_trace",
    "stacked",
    "unmarked",
]

#: module globals copied into the view: the interpreter reads them directly
_COPIED = ("__builtins__", "__name__", "__package__", "__spec__", "__file__", "__loader__")
_GLOBAL_WRITES = {"STORE_GLOBAL", "DELETE_GLOBAL"}
_COPIES: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_VIEWS: dict[int, tuple[dict[str, Any], TracingGlobals]] = {}


class TracingGlobals(dict):
    """A module's globals as the copies of its functions see them (see the module).

    >>> names = TracingGlobals({"n": 3, "__name__": "m"})
    >>> names["n"], "n" in names, names.get("missing", 0)
    (3, True, 0)
    """

    def __init__(self, module_globals: dict[str, Any]) -> None:
        super().__init__({k: module_globals[k] for k in _COPIED if k in module_globals})
        self.setdefault("__builtins__", builtins)
        self._module = module_globals

    def __missing__(self, name: str) -> Any:
        return seen_in_trace(self._module[name])  # a KeyError: the builtins are next

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in self._module

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


def _globals_view(module_globals: dict[str, Any]) -> TracingGlobals:
    known = _VIEWS.get(id(module_globals))
    if known is None or known[0] is not module_globals:
        if len(_VIEWS) >= 512:  # namespaces made by exec() come and go
            _VIEWS.clear()
        known = (module_globals, TracingGlobals(module_globals))
        _VIEWS[id(module_globals)] = known
    return known[1]


@functools.lru_cache(maxsize=4096)
def _writes_globals(code: types.CodeType) -> bool:
    """Whether ``code`` (or a function or class defined in it) assigns a global, or
    may through ``globals()``."""
    if "globals" in code.co_names:
        return True
    if any(i.opname in _GLOBAL_WRITES for i in dis.get_instructions(code)):
        return True
    return any(isinstance(c, types.CodeType) and _writes_globals(c) for c in code.co_consts)


def rewired(fn: Any) -> Any:
    """``fn`` as the running trace calls it (see the module): a copy of a user's
    function, a bound method of one, or a ``functools.partial`` of one; anything else
    as it is.

    >>> rewired(len) is len
    True
    """
    if isinstance(fn, types.MethodType):
        function = rewired(fn.__func__)
        return fn if function is fn.__func__ else types.MethodType(function, fn.__self__)
    if isinstance(fn, functools.partial):
        function = rewired(fn.func)
        return fn if function is fn.func else functools.partial(function, *fn.args, **fn.keywords)
    if not isinstance(fn, types.FunctionType) or isinstance(fn.__globals__, TracingGlobals):
        return fn
    if not is_user_file(fn.__code__.co_filename) or _writes_globals(fn.__code__):
        return fn
    made_from = (fn.__code__, fn.__closure__, fn.__defaults__, fn.__kwdefaults__)
    known, known_from = _COPIES.get(fn, (None, ()))
    if known is not None and all(a is b for a, b in zip(known_from, made_from, strict=True)):
        return known  # (a default rebound, f.__defaults__ = ..., makes a new copy)
    closure = _closure(fn)
    copy = types.FunctionType(
        fn.__code__, _globals_view(fn.__globals__), fn.__name__, None, closure
    )
    functools.update_wrapper(copy, fn)
    del copy.__wrapped__  # the copy must not keep fn alive (fn keys the cache weakly)
    if closure == fn.__closure__:
        _COPIES[fn] = (copy, made_from)
    # default functions as copies too, so that `activation is relu` means what it meant
    copy.__defaults__ = tuple(map(seen_in_trace, fn.__defaults__ or ())) or None
    copy.__kwdefaults__ = (
        {k: seen_in_trace(v) for k, v in fn.__kwdefaults__.items()} if fn.__kwdefaults__ else None
    )
    return copy


def seen_in_trace(value: Any) -> Any:
    """What the traced code sees for ``value`` (an argument, a default, a global): a
    user's function as its copy, numpy's, scipy's and math's as tracing sees them, so
    that ``reduce is np.sum`` means inside what it means outside.

    >>> seen_in_trace(3)
    3
    """
    copy = rewired(value)
    return copy if copy is not value else seen_by_trace(value)


def _closure(fn: types.FunctionType) -> tuple[types.CellType, ...] | None:
    """``fn``'s closure, with the user's functions in it as copies (new cells: the
    copy only reads them, unless its code assigns them, when the cells stay shared)."""
    cells = fn.__closure__
    if not cells:
        return cells
    assigned = {i.argval for i in dis.get_instructions(fn.__code__) if i.opname == "STORE_DEREF"}
    result = []
    for name, cell in zip(fn.__code__.co_freevars, cells, strict=True):
        try:
            value = cell.cell_contents
        except ValueError:  # a cell not filled yet
            result.append(cell)
            continue
        if isinstance(value, types.FunctionType) and name not in assigned:
            copy = rewired(value)
            result.append(cell if copy is value else types.CellType(copy))
        else:
            result.append(cell)
    return tuple(result)


class PlainArgument(np.ndarray):
    """A plain array argument of the traced function (see the module docstring).

    >>> X = np.ones(2).view(PlainArgument)
    >>> X, type(X * 2).__name__, isinstance(X, np.ndarray)
    (array([1., 1.]), 'ndarray', True)
    """

    __array_priority__ = -1000.0  # np.dot(a, X) of a plain a gives a plain array

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        if return_scalar:
            return array[()]
        return array.view(np.ndarray) if type(array) is not np.ndarray else array

    def dot(self, b: Any, out: Any = None) -> Any:  # type: ignore[override]
        """``X.dot(b)``; a traced ``b`` goes to ``np.dot``, which tracing follows."""
        if out is None and traced_leaves([b]):
            return np.dot(self.view(np.ndarray), b)
        if out is None:
            return np.ndarray.dot(self, b)
        return np.ndarray.dot(self, b, out)

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))


def marked(value: Any) -> Any:
    """``value`` as the traced function sees it: a plain numeric ndarray as a
    :class:`PlainArgument` view (lists and dicts stay the caller's own objects).

    >>> type(marked(np.ones(1))).__name__, marked([np.ones(1)])[0].__class__.__name__
    ('PlainArgument', 'ndarray')
    """
    if type(value) is np.ndarray and value.dtype.kind in "biuf":
        return value.view(PlainArgument)
    return value


def unmarked(value: Any) -> Any:
    """``value`` with every :class:`PlainArgument` (also inside lists, tuples and
    dicts) a plain ndarray again.

    >>> type(unmarked(np.ones(1).view(PlainArgument))).__name__
    'ndarray'
    """
    if isinstance(value, PlainArgument):
        return value.view(np.ndarray)
    if type(value) in (list, tuple):
        return type(value)(unmarked(v) for v in value)
    if type(value) is dict:
        return {k: unmarked(v) for k, v in value.items()}
    return value


#: math functions of one number, and the numpy function a traced value goes to
MATH_FUNCTIONS = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "log1p": np.log1p,
    "expm1": np.expm1, "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos,
    "fabs": np.abs, "log10": np.log10, "log2": np.log2, "pow": np.power,
}  # fmt: skip


class LibraryNamespace:
    """A module (numpy, scipy, math, or one of their submodules) as the user's traced
    code sees it (see the module docstring).

    >>> seen_by_trace(np).pi == np.pi, seen_by_trace(np).ndarray is np.ndarray
    (True, True)
    """

    def __init__(self, module: types.ModuleType) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return seen_by_trace(getattr(self._module, name))

    def __dir__(self) -> list[str]:
        return dir(self._module)

    def __repr__(self) -> str:
        return f"<{self._module.__name__}, as traced code sees it>"


class Distribution:
    """A scipy distribution (``scipy.stats.norm``) whose methods go to their rules when
    given a traced value; called with parameters (``norm(mu, sigma)``), a frozen one,
    whose methods are the distribution's with those parameters.

    >>> import scipy.stats
    >>> bool(Distribution(scipy.stats.norm).logpdf(0.0) == scipy.stats.norm.logpdf(0.0))
    True
    """

    def __init__(self, distribution: Any, args: tuple[Any, ...] = (), kwargs: Any = None):
        self._distribution = distribution
        self._args = args
        self._kwargs = kwargs or {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # frozen with its parameters, so that norm(0, 1).logpdf(t) sees a traced t too
        return Distribution(self._distribution, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._distribution, name)
        if not callable(value) or name.startswith("_"):
            return value
        name = f"scipy.stats.{getattr(self._distribution, 'name', '')}.{name}"
        function = traced_function(value, name)
        if not (self._args or self._kwargs):
            return function
        return functools.partial(_frozen, function, self._args, self._kwargs)

    def __repr__(self) -> str:
        return repr(self._distribution)


def _frozen(function: Any, args: tuple, kwargs: dict, *given: Any, **more: Any) -> Any:
    """A frozen distribution's method: the parameters it was frozen with after what the
    method is given (``x`` for ``logpdf``, nothing for ``mean``, ``size=`` for ``rvs``)."""
    return function(*given, *args, **kwargs, **more)


def _math_function(name: str, fn: Any) -> Any:
    """``math.<name>`` giving numpy's ``np.<...>`` of a traced value."""
    numpy_function = MATH_FUNCTIONS[name]

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        if not any(is_live(t) for t in traced_leaves(list(args))):
            return fn(*args)
        if name == "log" and len(args) == 2:
            return np.log(args[0]) / np.log(args[1])
        return numpy_function(*args)

    return call


#: id of a library object -> (the object, what traced code sees); kept for the process
_SEEN: dict[int, tuple[Any, Any]] = {}


def _seen(value: Any) -> Any:
    if isinstance(value, types.ModuleType):
        name = value.__name__
        if name == "math" or name.split(".")[0] in ("numpy", "scipy"):
            return LibraryNamespace(value)
        return value
    if value is np.r_ or value is np.c_:
        return JoinIndex(value, columns=value is np.c_)
    if isinstance(value, type):
        return ScalarCast(value) if value in SCALAR_TYPES else value
    if isinstance(value, np.ufunc):
        return value  # numpy hands traced values to tracing itself
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", "")
    if module == "math" and name in MATH_FUNCTIONS:
        return _math_function(name, value)
    if getattr(np, name, None) is value and name in BUFFER_FUNCTIONS:
        return buffer_function(value)
    if getattr(np, name, None) is value and name in CONVERSIONS:
        return array_function(value)
    if module.startswith("numpy"):
        rule = registry.lookup(op_of_callable(value) or "")
        if rule is not None and not rule.sequence and rule.op != "einsum":
            return list_arguments(value, len(rule.inputs))
        return value
    if type(value).__module__.startswith("scipy.stats") and hasattr(value, "logpdf"):
        return Distribution(value)
    if module.startswith("scipy") and callable(value):
        return traced_function(value, f"{module.split('._')[0]}.{name}")
    return value


def seen_by_trace(value: Any) -> Any:
    """What the user's traced code sees for ``value``, a global or an attribute of a
    module (see the module docstring): ``value`` itself unless it is one of numpy's,
    scipy's or math's that tracing sees differently.

    >>> seen_by_trace(len) is len
    True
    """
    if not (callable(value) or isinstance(value, types.ModuleType)):
        if value is not np.r_ and value is not np.c_:
            return value  # data: numbers, arrays, strings, objects
    known = _SEEN.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    seen = _seen(value)
    if seen is not value or isinstance(value, (types.ModuleType, types.BuiltinFunctionType)):
        _SEEN[id(value)] = (value, seen)
    return seen


#: the array-making functions whose results become buffers
BUFFER_FUNCTIONS = frozenset({"zeros", "ones", "empty", "full", "eye", "identity"})


def buffer(raw: Any) -> Traced:
    """``raw`` as a traced constant made by the user's code (off the trace).

    >>> import numpy as np
    >>> buffer(np.zeros(2))
    traced(array([0., 0.]), not on a trace)
    """
    return Traced(raw, None, None, frozenset({Origin("buffer", here())}))


def is_buffer(value: Any) -> bool:
    """Whether ``value`` is a buffer that no traced value was written into.

    >>> import numpy as np
    >>> is_buffer(buffer(np.ones(1))), is_buffer(np.ones(1))
    (True, False)
    """
    return (
        is_traced(value)
        and value._tape is None
        and any(origin.kind == "buffer" for origin in value._origins)
    )


def plain_buffers(value: Any) -> Any:
    """``value`` with its buffers (also inside lists, tuples and dicts) as plain arrays:
    what the function returns of them is what numpy would have returned.

    >>> import numpy as np
    >>> plain_buffers((buffer(np.ones(1)), 2.0))
    (array([1.]), 2.0)
    """
    if is_buffer(value):
        return value._data
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(plain_buffers(v) for v in value)
    if isinstance(value, dict) and type(value) is dict:
        return {k: plain_buffers(v) for k, v in value.items()}
    return value


def buffer_function(fn: Any) -> Any:
    """``fn`` (``np.zeros``...) making buffers while a trace runs.

    >>> import numpy as np
    >>> buffer_function(np.zeros)(2)  # no trace running: numpy's own result
    array([0., 0.])
    """

    @functools.wraps(fn)
    def make(*args: Any, **kwargs: Any) -> Any:
        if active_tape() is None:
            return fn(*unwrap(args), **unwrap(kwargs))
        if fn.__name__ == "full":
            return _full(fn, *args, **kwargs)
        return buffer(fn(*unwrap(args), **unwrap(kwargs)))

    return make


def _full(fn: Any, shape: Any, fill_value: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``np.full(shape, t)`` of a traced fill value: the buffer plus ``t``, on the trace."""
    if not any(is_live(t) for t in traced_leaves([fill_value])):
        return buffer(fn(unwrap(shape), unwrap(fill_value), dtype, **kwargs))
    zeros = buffer(fn(unwrap(shape), 0, dtype or unwrap(fill_value).dtype, **kwargs))
    return zeros + fill_value


#: numpy's conversions, and whether each copies a traced value
CONVERSIONS = {"array": True, "asarray": False, "asanyarray": False, "ascontiguousarray": False}
#: the numpy scalar types a traced value may be cast with (float32 rounds: not here)
SCALAR_TYPES = (np.float64, np.int64, np.int32)


def stacked(value: Any) -> Any:
    """A traced array from a traced value or a (nested) list or tuple holding some.

    >>> from autodiff_tutor.tracing import traced
    >>> stacked([traced(1.0), 2.0])
    traced(array([1., 2.]), not on a trace)
    """
    if is_traced(value) or not isinstance(value, (list, tuple)):
        return value
    items = [stacked(v) if traced_leaves([v]) else v for v in value]
    return dispatch.call_function(np.stack, (items,), {}, "np.array")


def array_function(fn: Any) -> Any:
    """``np.array`` (or ``asarray``...) that keeps traced values traced (see the module).

    >>> array_function(np.asarray)([1, 2])
    array([1, 2])
    """
    copies = CONVERSIONS[fn.__name__]
    name = f"np.{fn.__name__}"

    @functools.wraps(fn)
    def convert(obj: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not traced_leaves([obj]):  # plain data stays plain: other libraries take it
            return fn(obj, dtype, *args, **kwargs)
        extra = [k for k in kwargs if k not in ("copy", "order")] + (["order"] if args else [])
        if extra:
            raise messages.unsupported_arguments(name, extra, ("dtype", "copy"))
        value = stacked(obj)
        if isinstance(value._data, (np.ndarray, np.generic)):  # numpy says what it returns
            made = fn(value._data, dtype, *args, **kwargs)
            again = lambda base: convert(base, dtype, *args, **kwargs)  # noqa: E731
            return as_numpy_made(value, made, value is not obj, name, again)
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        copy = kwargs.get("copy", copies)  # np.array copies unless copy=None or False
        return value.copy() if value is obj and copy else value

    return convert


def as_numpy_made(value: Any, made: Any, fresh: bool, name: str, again: Any) -> Any:
    """The traced result of a conversion of the traced ``value`` whose numpy result, on
    the raw data, is ``made``: ``value`` itself where numpy returns the array itself
    (``np.asarray(t)``, ``np.array(t, copy=None)``, ``np.float64(t)`` of a float64
    ``t``), so that a write through either is seen by the other as in numpy; else a
    recorded copy or cast with numpy's dtype and memory layout (``np.array(t)``,
    ``np.ascontiguousarray`` of a transposed ``t``). ``fresh``: ``value`` is an array
    no other name holds (a list stacked), which a copy like it stands for; ``again``
    makes the conversion again from a new value of ``value`` (a view numpy returned).

    >>> from autodiff_tutor.tracing import traced
    >>> t = traced(np.ones(2))
    >>> as_numpy_made(t, t._data, False, "np.asarray", None) is t
    True
    >>> as_numpy_made(t, t._data.astype(np.float32), False, "np.asarray", None).dtype
    dtype('float32')
    """
    raw = value._data
    if made is raw:
        return value
    if fresh and made.dtype == raw.dtype and made.strides == raw.strides:
        return value
    op, options = ("copy", {}) if made.dtype == raw.dtype else ("astype", {"dtype": made.dtype})
    result = dispatch.apply(op, name, lambda: made, [value], options)
    return note_view(result, value, again)


def list_arguments(fn: Any, inputs: int) -> Any:
    """``fn`` (``np.mean``...) with its first ``inputs`` positional arguments, when
    lists or tuples holding traced values (``np.mean([a, b])``), stacked first: numpy
    looks for traced values in the arguments themselves, not inside lists.

    >>> from autodiff_tutor.tracing import traced
    >>> list_arguments(np.mean, 1)([traced(1.0), traced(3.0)])
    traced(np.float64(2.0), not on a trace)
    """

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, (list, tuple)) and traced_leaves([a]) for a in args[:inputs]):
            args = tuple(stacked(a) if k < inputs else a for k, a in enumerate(args))
        return fn(*args, **kwargs)

    return call


class ScalarCast:
    """A numpy scalar type (``np.float64``) that casts a traced value with ``astype``;
    it is still the type for ``isinstance`` and as a ``dtype``.

    >>> f64 = ScalarCast(np.float64)
    >>> f64(2), isinstance(np.float64(1.0), f64), np.zeros(1, dtype=f64).dtype
    (np.float64(2.0), True, dtype('float64'))
    """

    def __init__(self, kind: type) -> None:
        self._kind = kind
        self.dtype = np.dtype(kind)

    def __call__(self, *args: Any) -> Any:
        if not (args and traced_leaves([args[0]])):
            return self._kind(*args)
        value = stacked(args[0])
        if not isinstance(value._data, (np.ndarray, np.generic)):
            return value.astype(self._kind)
        name = f"np.{self._kind.__name__}"
        fresh = value is not args[0]
        return as_numpy_made(value, self._kind(value._data), fresh, name, self)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self._kind)

    def __subclasscheck__(self, cls: type) -> bool:
        return issubclass(cls, self._kind)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # not an array, nor a module: the type's own fields only
            raise AttributeError(name)
        return getattr(self._kind, name)

    def __repr__(self) -> str:
        return repr(self._kind)


class JoinIndex:
    """``np.r_[...]`` (``axis=0``) or ``np.c_[...]`` (``axis=-1``, 1-d pieces as
    columns) that joins traced pieces with ``np.concatenate`` (recorded); pieces given
    as slices or strings (``np.r_[0:3]``, ``np.r_['0,2', ...]``) only without traced
    values.

    >>> JoinIndex(np.c_, columns=True)[np.ones(2), np.zeros(2)]
    array([[1., 0.],
           [1., 0.]])
    """

    def __init__(self, real: Any, columns: bool) -> None:
        self._real = real
        self._columns = columns

    def __getitem__(self, key: Any) -> Any:
        pieces = key if isinstance(key, tuple) else (key,)
        if not traced_leaves(list(pieces)):
            return self._real[key]
        name = "np.c_" if self._columns else "np.r_"
        if any(isinstance(p, (slice, str)) for p in pieces):
            raise messages.unsupported_call(
                f"{name}[...] with a slice or a string and a traced value",
                "join the pieces with np.concatenate([...]) (or np.stack)",
            )
        shaped = [self._piece(stacked(p)) for p in pieces]
        axis = -1 if self._columns else 0
        return dispatch.call_function(np.concatenate, (shaped,), {"axis": axis}, name)

    def _piece(self, piece: Any) -> Any:
        ndim = len(piece.shape) if hasattr(piece, "shape") else np.ndim(piece)
        if self._columns and ndim <= 1:
            return np.reshape(piece, (-1, 1))
        return np.reshape(piece, (1,)) if ndim == 0 else piece

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)
