"""The traced array (like MATLAB's ``dlarray``): an array that records what is done
to it while ``evaluate`` runs. ``traced(x)`` makes one from a copy of data (like
``dlarray(x)``); ``extract_data`` and ``stop_gradient`` take the plain data out (like
``extractdata``), which the trace then no longer follows.

Operators, numpy ufuncs and functions, indexing and the usual methods all work and
are recorded; comparisons give plain boolean arrays. Element writes (``y[0] = v``) and
in-place operators (``y += v``) follow numpy (:mod:`~autodiff_tutor.tracing.operators`).
Turning a traced array into a Python number or a plain array while it is being traced
is an error that says why (it would silently lose the gradient).

numpy hands traced arrays to tracing through its dispatch protocols
(``__array_ufunc__``, ``__array_function__``), so ``np.tanh(x)`` works on a traced
``x``. Array-API libraries (``array_api_strict``) and cupy have no such protocol for
foreign types; for them, a traced array's ``__array_namespace__`` (which
``array_module`` reads, for the ``xp = array_module(x); xp.tanh(x)`` style) is a
:class:`TracedNamespace`: the library's own functions, routed through tracing whenever
an argument is traced.

>>> import numpy as np
>>> from autodiff_tutor.tracing import traced
>>> x = traced([-1.0, 2.0])
>>> x
traced(array([-1.,  2.]), not on a trace)
>>> (x * 2).shape, x.ndim, float(x[0]), extract_data(x * 2)
((2,), 1, -1.0, array([-2.,  4.]))
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator
from typing import Any

import numpy as np

from autodiff_tutor.errors import NonDifferentiableInputError, front_door
from autodiff_tutor.foreign_libraries import first_foreign
from autodiff_tutor.locations import here, inside_numpy_check, location, storing_item, user_frame
from autodiff_tutor.ops.formats import FormattedArray, formatted, is_formatted
from autodiff_tutor.rules.names import is_array_module, op_of_method
from autodiff_tutor.rules.registry import lookup
from autodiff_tutor.runtime.backend import array_module, copy_array, dtype_kind, shape_of
from autodiff_tutor.tracing import dispatch, messages, traced_values
from autodiff_tutor.tracing.dispatch import bind
from autodiff_tutor.tracing.messages import foreign_call, foreign_input
from autodiff_tutor.tracing.operators import (
    fill_diagonal,
    operator_methods,
    register_variable,
    set_item,
)
from autodiff_tutor.tracing.tape import Extraction, Origin, active_tape
from autodiff_tutor.tracing.traced_values import (
    TracedValue,
    input_info,
    is_live,
    is_traced,
    note_view,
)

IN_PLACE_METHODS = {"fill", "sort", "put", "resize", "itemset", "partition", "setfield"}
PLAIN_ATTRIBUTES = {"nbytes", "itemsize", "flags", "device", "strides"}
#: the methods recorded like numpy's function of the same name on any array library
#: (computed by :func:`method_fallback` where the library's arrays lack them)
ARRAY_METHODS = frozenset(
    "sum mean max min prod reshape transpose squeeze dot clip astype copy".split()
)


class Traced(TracedValue):
    """An array whose operations are recorded on the running trace (see the module).

    Make one with :func:`traced`; ``evaluate`` traces
    the ones passed to it.

    >>> from autodiff_tutor.tracing import evaluate, traced
    >>> evaluate(lambda x: x * 2, traced([1.0]))
    traced(array([2.]), trace ... (evaluate(<lambda>)) has ended)
    """

    __slots__ = ()

    # -- what it is ------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the data."""
        return shape_of(self._data)

    @shape.setter
    def shape(self, value: Any) -> None:
        raise messages.attribute_set("x.shape = ...", "x = x.reshape(new_shape)")

    @property
    def flat(self) -> Any:
        """Refused: numpy's flat iterator reads and writes elements one by one."""
        raise messages.no_rule("x.flat")

    @flat.setter
    def flat(self, value: Any) -> None:
        raise messages.attribute_set("x.flat = ...", "x = np.reshape(values, x.shape)")

    ndim = property(lambda self: len(shape_of(self._data)), doc="The number of axes.")
    dtype = property(lambda self: self._data.dtype, doc="The dtype of the data.")

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def T(self) -> Any:
        """The transpose, recorded as ``transpose``."""
        result = dispatch.apply("transpose", "x.T", lambda: self._data.T, [self], {"axes": None})
        return note_view(result, self, lambda base: base.T)

    def _state(self) -> str:
        if traced_values.is_live(self):
            return f"{self._tape.nodes[self._node].label} on {self._tape.describe()}"
        if self._tape is not None:
            return f"{self._tape.describe()} has ended"
        return "not on a trace"

    def __repr__(self) -> str:
        return f"traced({self._data!r}, {self._state()})"

    def __str__(self) -> str:
        return str(self._data)

    def __format__(self, spec: str) -> str:
        return format(self._data, spec)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        return bool(self._data)

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        return numpy_like(array_module(self._data))

    # -- conversions that would drop the trace ---------------------------------

    def _escapes(self) -> bool:
        live = traced_values.is_live(self) and self._tape.released_at is None
        return live and not inside_numpy_check()

    def _number(self, convert: Any, what: str) -> Any:
        if self._escapes():
            if storing_item():
                # out[i] = t on a plain array: numpy would replace any error raised
                # here by its own; the trace raises this one at its next step instead
                self._tape.defer(messages.element_into_plain())
            else:
                raise messages.escape(what)
        return convert(self._data)

    def __float__(self) -> float:
        return self._number(float, "float()")

    def __int__(self) -> int:
        return self._number(int, "int()")

    def __round__(self, ndigits: int | None = None) -> Any:
        if self.ndim:  # as numpy: only its scalars define round()
            raise TypeError(f"type {type(self._data).__name__} doesn't define __round__ method")
        if ndigits is None:  # round(t): a Python int, as for a numpy scalar
            return self._number(round, "round()")
        return np.round(self, ndigits)  # a numpy scalar's round: np.round

    def __complex__(self) -> complex:
        return self._number(complex, "complex()")

    def __index__(self) -> int:
        if self._escapes():
            raise messages.escape("Using a traced value as an integer (an index, range())")
        return operator.index(self._data)

    def item(self, *args: Any) -> Any:
        """The single element as a Python number (not while it is being traced)."""
        if self._escapes():
            raise messages.escape(".item()")
        return self._data.item(*args) if hasattr(self._data, "item") else float(self._data)

    def tolist(self) -> Any:
        """The data as nested Python lists (not while it is being traced)."""
        if self._escapes():
            raise messages.escape(".tolist()")
        return self._data.tolist()

    def get(self) -> Any:
        """cupy's copy to the host (not while it is being traced)."""
        if self._escapes():
            raise messages.escape(".get()")
        return self._data.get() if hasattr(self._data, "get") else np.asarray(self._data)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if self._escapes():
            if storing_item():
                raise messages.element_into_plain()
            raise messages.conversion()
        return np.asarray(self._data, dtype=dtype)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        """The data, exported to another array library (``torch.tensor(x)``,
        ``np.from_dlpack(x)``): refused while it is being traced, like ``__array__``."""
        if self._escapes():
            raise messages.escape("np.from_dlpack() (or another DLPack exchange)")
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _unpickle, (self._data,)

    def __copy__(self) -> Traced:
        return self._method("copy", (), {})  # recorded: in-place updates can follow

    def __deepcopy__(self, memo: dict[int, Any]) -> Traced:
        return self._method("copy", (), {})

    # -- writes ----------------------------------------------------------------

    def __setitem__(self, index: Any, value: Any) -> None:
        """``y[index] = value``: records ``y`` with the write (the ``assign_at`` rule)."""
        set_item(self, index, value)

    def __delitem__(self, index: Any) -> None:
        raise messages.in_place("del y[...]")

    # -- numpy's dispatch protocols --------------------------------------------

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if any(is_formatted(v) for v in inputs):
            return NotImplemented  # the formatted array labels the result, then calls back
        out = kwargs.get("out")
        if (
            method == "__call__"
            and out is not None
            and len(out) == 1
            and isinstance(out[0], Traced)
        ):
            # np.add(a, b, out=y) into a traced y: the result written into y, as y[...] = ...
            rest = {k: v for k, v in kwargs.items() if k != "out"}
            set_item(out[0], Ellipsis, dispatch.call_ufunc(ufunc, method, inputs, rest))
            return out[0]
        return dispatch.call_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if FormattedArray in types:
            return NotImplemented
        if func is np.fill_diagonal:  # a write in place, as y[k, k] = v
            return fill_diagonal(*args, **kwargs)
        return dispatch.call_function(func, args, kwargs)

    # -- other autodiff libraries ask first -------------------------------------

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        """PyTorch's functions and tensor operators ask their arguments' types first:
        a traced value is refused at the user's line (PyTorch cannot follow a trace)."""
        raise foreign_call("PyTorch", getattr(func, "__name__", None))

    @property
    def __jax_array__(self) -> Any:
        """JAX looks this up on every value it does not know: a traced value is refused
        at the user's line (JAX cannot follow a trace)."""
        raise foreign_call("JAX")

    # -- indexing and methods --------------------------------------------------

    def __getitem__(self, index: Any) -> Any:
        if any(traced_values.is_live(t) for t in traced_values.traced_leaves([index])):
            raise messages.escape("Using a traced value as an index")
        raw_index = traced_values.unwrap(index)
        result = dispatch.apply(
            "getitem", "x[...]", lambda: self._data[raw_index], [self], {"index": raw_index}
        )
        return note_view(result, self, lambda base: base[raw_index])

    def _method(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        op = op_of_method(name)
        if name in ("reshape", "transpose") and len(args) > 1:
            args = (tuple(args),)
        raw = self._data

        if hasattr(raw, name):

            def forward() -> Any:
                return getattr(raw, name)(
                    *traced_values.unwrap(args), **traced_values.unwrap(kwargs)
                )

        else:

            def forward() -> Any:
                raw_inputs = traced_values.unwrap(bound.inputs)
                return method_fallback(array_module(raw), op, raw_inputs, bound.options)

        rule = lookup(op)
        bound = bind(getattr(np, name, None), rule, (self, *args), kwargs)
        if bound is None:
            forward()  # a wrong call raises the library's own error
            raise messages.unsupported_call(
                f"x.{name}(...) with these arguments",
                f"call np.{name}(x, ...) with the arguments its rule takes: "
                f"{', '.join(rule.signature_parameters())}",
            )
        if bound.unsupported and traced_values.is_live(self):
            raise messages.unsupported_arguments(f"x.{name}", bound.unsupported, rule.options)
        dispatch.check_untraced_options(f"x.{name}", bound.options)  # x.take(t): t is no index
        result = dispatch.apply(op, f"x.{name}()", forward, bound.inputs, bound.options)
        return note_view(result, self, lambda base: base._method(name, args, kwargs))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raw = self._data
        if not hasattr(raw, name):
            raise AttributeError(f"traced array has no attribute {name!r}")
        if name in IN_PLACE_METHODS:
            raise messages.in_place(f"x.{name}()")
        if op_of_method(name) is not None:
            return lambda *args, **kwargs: self._method(name, args, kwargs)
        if name in PLAIN_ATTRIBUTES or not traced_values.is_live(self):
            return getattr(raw, name)
        raise messages.no_rule(f"x.{name}")

    __hash__ = None  # type: ignore[assignment]


def _array_method(name: str) -> Any:
    def method(self: Traced, *args: Any, **kwargs: Any) -> Any:
        return self._method(name, args, kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``x.{name}(...)``, recorded like ``np.{name}(x, ...)``."
    return method


# class attributes, not __getattr__'s: dir() and tab completion list them, help() reads them
for _name, _method in operator_methods().items():  # __add__, __radd__, __iadd__, __neg__...
    setattr(Traced, _name, _method)
for _name in ARRAY_METHODS:
    setattr(Traced, _name, _array_method(_name))


def _unpickle(data: Any) -> Traced:
    return Traced(data, None, None, frozenset({Origin("pickled", "")}))


class TracedNamespace:
    """The functions of array module ``xp``, tracing-aware (see the module docstring).

    >>> import numpy as np
    >>> numpy_like(np).tanh(0.0)  # plain values pass straight through
    np.float64(0.0)
    """

    def __init__(self, xp: Any):
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._xp, name)
        if is_array_module(value):
            return numpy_like(value)
        if callable(value) and not isinstance(value, type):
            return traced_function(value, f"{self._xp.__name__}.{name}")
        return value

    def __repr__(self) -> str:
        return f"<traced namespace of {self._xp.__name__}>"


@functools.lru_cache(maxsize=16)
def numpy_like(xp: Any) -> TracedNamespace:
    """The traced-aware namespace of array module ``xp`` (cached per module).

    >>> import numpy as np
    >>> numpy_like(np) is numpy_like(np)
    True
    """
    return TracedNamespace(xp)


@functools.lru_cache(maxsize=1024)
def traced_function(fn: Any, name: str) -> Any:
    """``fn`` routed through tracing (its derivative rule, or a located refusal)
    whenever an argument is traced; ``fn`` itself otherwise. ``name`` is how the
    user calls it, for messages.

    >>> import numpy as np
    >>> traced_function(np.sum, "np.sum")([1.0, 2.0])
    np.float64(3.0)
    """

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not traced_values.traced_leaves([args, kwargs]):
            return fn(*args, **kwargs)
        return dispatch.call_function(fn, args, kwargs, name)

    return call


def method_fallback(xp: Any, op: str, inputs: list[Any], options: dict[str, Any]) -> Any:
    """Compute method ``op`` (``x.sum(axis=0)``) with the functions of an array-API
    namespace, for arrays that have no such method.

    >>> import array_api_strict as xs
    >>> method_fallback(xs, "sum", [xs.ones((2, 3))], {"axis": 0})
    Array([2., 2., 2.], dtype=array_api_strict.float64)
    """
    x = inputs[0]
    if op in ("sum", "mean", "max", "min", "prod"):
        axis, keepdims = options.get("axis"), bool(options.get("keepdims", False))
        return getattr(xp, op)(x, axis=axis, keepdims=keepdims)
    if op == "reshape":
        return xp.reshape(x, tuple(options["shape"]))
    if op == "transpose":
        axes = options.get("axes")
        return xp.permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None else tuple(axes))
    if op == "squeeze":
        axis = options.get("axis")
        if axis is None:
            axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
        return xp.squeeze(x, axis=axis)
    if op == "clip":
        return xp.clip(x, min=inputs[1], max=inputs[2])
    if op == "astype":
        return xp.astype(x, options["dtype"])
    if op == "copy":
        return xp.asarray(x, copy=True)
    if op == "dot" and x.ndim <= 2 and inputs[1].ndim <= 2:
        return xp.matmul(x, inputs[1])
    raise AttributeError(f"{op}: no array-API equivalent of this method")


@front_door
def traced(x: Any, fmt: str | None = None) -> Any:
    """A traced array holding a copy of ``x`` (like MATLAB's ``dlarray(x)``, and with a
    data format ``fmt`` such as ``"SSCB"``, like ``dlarray(x, fmt)``: a formatted array,
    see :mod:`autodiff_tutor.ops.formats`; a formatted ``x`` keeps its labels). The copy
    is laid out in memory as ``x`` is: numpy's choice of a view or a copy (``ravel`` of a
    Fortran-ordered array copies) rests on it.

    ``x`` is a numpy, cupy or array-API array of floating point, or Python numbers
    (integers become float64). Pass it to ``evaluate`` to trace it; made inside the
    evaluated function, it is *not* on the trace (the pitfall of the course), except
    from data that ``extract_data`` took out of the running trace:
    ``traced(extract_data(y))`` starts a new independent variable on it.

    >>> traced(3)
    traced(array(3.), not on a trace)
    >>> traced(np.ones((1, 2)), "CB").format
    'CB'
    """
    if is_formatted(x):
        if fmt is not None:
            formatted(x, fmt)  # a located error unless the labels agree
        return FormattedArray(_unlabelled(x.data), x.format)
    if fmt is not None:
        return formatted(_unlabelled(x), fmt)
    return _unlabelled(x)


def _unlabelled(x: Any) -> Traced:
    tape = active_tape()
    if is_traced(x):
        if is_live(x, tape):
            return x
        x = x._data
    foreign = first_foreign(x)  # an autograd ArrayBox, a JAX tracer, a torch tensor
    if foreign is not None:
        raise foreign_input(foreign[1])
    if isinstance(x, (bool, int, float, complex, list, tuple)):
        try:
            raw = np.asarray(x)
        except (TypeError, ValueError):  # ragged lists
            raw = np.asarray(None)
        if raw.dtype.kind in "biu":
            raw = raw.astype(np.float64)
        if raw.dtype.kind != "f":
            raise NonDifferentiableInputError(
                f"traced() takes numbers, not {x!r}"[:200],
                location(),
                hint="pass a numpy array of floating point, or (nested, rectangular) lists "
                "of numbers",
            )
    elif hasattr(x, "shape") and hasattr(x, "dtype"):
        if dtype_kind(x) != "f":  # complex too: the rules are written for real numbers
            why, hint = (
                ("gradients through complex numbers are not supported", "trace the real "
                 "and imaginary parts as two arrays")
                if "complex" in str(x.dtype)
                else ("integers and booleans have no gradient", "convert first, e.g. "
                      "traced(x.astype(np.float64))")
            )  # fmt: skip
            raise NonDifferentiableInputError(
                f"traced() needs real floating-point data; got dtype {x.dtype}: {why}.",
                location(),
                hint=hint,
            )
        raw = copy_array(x)
    else:
        raise NonDifferentiableInputError(
            f"traced() takes an array or Python numbers, not {type(x).__name__}",
            location(),
            hint="pass a numpy (or cupy, or array-API) array of floating point",
        )
    if tape is not None and tape.extracted.get(id(x), (None,))[0] is x:
        return _new_variable(raw, tape, tape.extracted[id(x)][1])
    origin = Origin("inside" if tape is not None else "outside", here())
    return Traced(raw, None, None, frozenset({origin}))


def _new_variable(raw: Any, tape: Any, extraction: Any) -> Traced:
    """A new variable on the running trace, from data ``extract_data`` handed out
    (nothing flows back through the extraction: the error for a cut path says so)."""
    extraction.new_variable = True
    label = f"extract_data({tape.nodes[extraction.node].label})"
    node = tape.new_leaf(shape_of(raw), str(raw.dtype), label, here())
    variable = Traced(raw, tape, node, frozenset())
    register_variable(tape, variable, label, argument=False)
    return variable


def _take_out(x: Any, op: str, intentional: bool) -> Any:
    """The data of ``x`` (element by element in a structure), recorded on the running
    trace as an extraction (``intentional``: by ``stop_gradient``)."""
    if is_formatted(x):  # extract_data gives plain data; stop_gradient keeps the labels
        data = _take_out(x.data, op, intentional)
        return FormattedArray(data, x.format) if intentional else data
    if isinstance(x, (list, tuple)):
        return type(x)(_take_out(v, op, intentional) for v in x)
    if isinstance(x, dict):
        return {k: _take_out(v, op, intentional) for k, v in x.items()}
    if not is_traced(x):
        return x
    tape = active_tape()
    if not is_live(x, tape):
        return x._data
    where = here()
    _meet_locals(tape)
    record = tape.add_record(op, "cut", [input_info(x, tape)], [], where)
    extraction = Extraction(x._node, where, record.index, intentional)
    tape.extractions.append(extraction)
    data = copy_array(x._data)
    tape.extracted[id(data)] = (data, extraction)
    return data


def _meet_locals(tape: Any) -> None:
    """The plain arrays the user's function holds when it extracts: they exist before
    the extracted data, so they cannot be computed from it (see ``gradient``'s
    "extracted and continued" warning)."""
    frame = user_frame()
    for value in list(frame.f_locals.values()) if frame is not None else ():
        if hasattr(value, "shape") and not is_traced(value) and not is_formatted(value):
            tape.meet_plain(value)


@front_door
def extract_data(x: Any) -> Any:
    """The plain array inside a traced value (like ``extractdata``); stops the trace.

    On a value being traced, the result is a copy that the trace does not follow:
    anything computed from it gets no gradient (``gradient`` warns when that
    happens). Lists, tuples and dicts are handled element by element.

    ``traced(extract_data(y))`` inside the evaluated function starts a **new
    independent variable** on the running trace, with the value of ``y``: gradients
    with respect to it are those of what is computed from it (and, as with any
    extraction, nothing flows back through it to what ``y`` was computed from).

    >>> import numpy as np
    >>> from autodiff_tutor.tracing import evaluate, gradient, traced
    >>> extract_data(traced([1.0, 2.0]))
    array([1., 2.])
    >>> def f(x):
    ...     z = traced(extract_data(x * x))  # a new variable, z = x**2
    ...     return gradient(np.sum(z * z * z), z)
    >>> evaluate(f, traced([1.0, 2.0]))  # 3 z**2
    array([ 3., 48.])
    """
    return _take_out(x, "extract_data", intentional=False)


@front_door
def stop_gradient(x: Any) -> Any:
    """The data of ``x`` as a constant, on purpose: ``extract_data`` without a warning.

    >>> from autodiff_tutor.tracing import evaluate, gradient, traced
    >>> def f(x):
    ...     y = x * stop_gradient(x)  # d/dx treats the second factor as a constant
    ...     return gradient(y, x)
    >>> evaluate(f, traced(3.0))
    np.float64(3.0)
    """
    return _take_out(x, "stop_gradient", intentional=True)
