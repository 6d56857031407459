"""What a front door is handed, made ready to differentiate: the call's arguments
bound to the parameters and checked, a bound method, callable object or partial seen
through to its def, and structures flattened into one parameter per leaf.

Errors about how the API was called (a wrong ``wrt``, seed or tangent, a value that
cannot be differentiated, something that is not a Python function) are located at
the user's call: the first frame outside autodiff_tutor. Gradients handed back are
the caller's own: fresh, writable arrays that share no memory with each other, the
seeds or the inputs (copied only where that is not already so).

``grad(model.loss)`` compiles the method's function; the object (``self``) is passed
as its first argument and seen as the structure of its attributes, so ``self.W``
reads a parameter of its own. ``wrt`` counts the visible parameters, and can name
attributes: ``wrt="self.W"`` gives the gradient of ``W``, ``wrt="self"`` a dict of
the gradients of every floating-point attribute. Objects with ``__call__`` work the
same way, and a ``functools.partial`` passes its stored arguments (:func:`unwrap`).

A function whose parameters are lists, tuples or dicts of arrays is compiled once
per structure as a function of one parameter per leaf (:func:`flatten_call`), and
gradients come back in the argument's structure (the structures themselves are in
:mod:`autodiff_tutor.pytree`). An output that is a list takes a seed that is a list
of the same length, one array per element shaped like it.

>>> import numpy as np
>>> seed = np.ones(2)
>>> a, b = owned([seed, seed], [seed])
>>> a is seed or b is seed or np.shares_memory(a, b)
False
>>> from autodiff_tutor import differentiable
>>> def f(p):
...     return np.sum(p["w"] * p["b"])
>>> p = {"w": np.ones(2), "b": np.arange(2.0)}
>>> flat = flatten_call(differentiable(f), ["p"], [p], {})
>>> flat.wrt
('p_w', 'p_b')
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import math
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.compiler.front.desugar.attributes import MUTATING
from autodiff_tutor.compiler.front.desugar.callees import assigned_names
from autodiff_tutor.compiler.front.source import ParsedFunction, parse_function
from autodiff_tutor.errors import (
    ArgumentError,
    AutodiffError,
    ForeignLibraryError,
    NonDifferentiableInputError,
    NonScalarOutputError,
    SourceUnavailableError,
    TracingError,
)
from autodiff_tutor.foreign_libraries import advice, conversion, describe, first_foreign, library_of
from autodiff_tutor.locations import location
from autodiff_tutor.pickling import MadeFunction
from autodiff_tutor.pytree import (
    Cycle,
    ObjectView,
    Treedef,
    entry_keys,
    flatten,
    holds_user_object,
    is_static,
    is_structure,
    is_user_object,
    unflatten,
)
from autodiff_tutor.runtime.backend import (
    array_module,
    dtype_kind,
    is_float_value,
    ones_like,
    shape_of,
)
from autodiff_tutor.syntax import copy_tree

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


#: Where :func:`flatten_call` keeps, on a compiled function, what it made for each
#: structure of arguments.
_FLATTENED = "_structured"


def located(kind: type[AutodiffError], message: str, hint: str = "") -> AutodiffError:
    """An error about how the API was called, located at the user's call."""

    return kind(message, location(), hint=hint)


def check_function(fn: Any) -> None:
    """Only Python functions (with source the compiler can read) are differentiable;
    the front door unwraps bound methods, callable objects and partials of them before.

    >>> check_function(len)
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.SourceUnavailableError: cannot differentiate <built-in function len>: ...
    """
    function = inspect.unwrap(fn)
    if inspect.isfunction(function) and type(function.__globals__) is not dict:
        # tracing runs the user's functions with its own numpy (tracing/user_code.py)
        raise located(
            TracingError,
            f"cannot compile {function.__name__!r} inside a traced computation: there your "
            "functions run against tracing's numpy, which the compiler does not read",
            hint="inside evaluate or value_and_gradient, take the derivative with tracing "
            "(gradient(..., higher_derivatives=True)), or call grad outside the traced "
            "function",
        )
    if inspect.isfunction(function) or getattr(fn, "_gradient_of", None) is not None:
        return
    if isinstance(fn, functools.partial):
        what, hint = (
            f"a functools.partial of {fn.func!r}",
            "differentiate a def (or a method) that calls it; a partial of one is "
            "differentiated with its stored arguments",
        )
    elif isinstance(fn, type):
        what, hint = f"the class {fn.__name__}", "differentiate a function, not a class"
    elif callable(fn):
        what, hint = (
            f"a {type(fn).__name__} object" if not inspect.isbuiltin(fn) else f"{fn!r}",
            "write a def whose body does the computation (a method, or an object whose "
            "__call__ is written in Python, is differentiated too)",
        )
    else:
        raise located(
            ArgumentError,
            f"cannot differentiate a {type(fn).__name__}: it is not callable",
            hint="pass the function itself",
        )
    raise located(
        SourceUnavailableError,
        f"cannot differentiate {what}: it is not written in Python, so it has no source "
        "to read (the compiler differentiates functions, methods and __call__ written "
        "with def or lambda)",
        hint=hint,
    )


def wrt_entries(wrt: Any) -> list[Any] | None:
    """``wrt`` as a list of entries (positions, names, ``"self.W"``); None for None
    (every parameter without a default).

    >>> wrt_entries("x"), wrt_entries(("x", 1)), wrt_entries(None)
    (['x'], ['x', 1], None)
    """
    return [wrt] if isinstance(wrt, (int, str)) else list(wrt) if wrt is not None else None


def one_or_all(values: Sequence[Any], wrt: Any) -> Any:
    """The one value where ``wrt`` names one input (or is ``None`` and there is one
    value), else all of them.

    >>> one_or_all((1.0,), "x"), one_or_all((1.0,), None), one_or_all((1.0,), ["x"])
    (1.0, 1.0, (1.0,))
    """
    return values[0] if gives_one(wrt, len(values)) else values


def gives_one(wrt: Any, count: int) -> bool:
    """Whether a derivative with respect to ``wrt`` (``count`` inputs) is one value,
    not a tuple: ``wrt`` names one input, or is ``None`` and there is one.

    >>> gives_one(0, 1), gives_one(None, 1), gives_one(None, 2), gives_one([0], 1)
    (True, True, False, False)
    """
    return isinstance(wrt, (int, str)) or (wrt is None and count == 1)


def check_wrt(wrt: Any) -> None:
    """``wrt`` is None, a position, a name, or a non-empty list or tuple of them."""
    items = [wrt] if wrt is None or isinstance(wrt, (int, str)) else wrt
    if wrt is None:
        return
    if (
        not isinstance(items, (list, tuple))
        or not items
        or not all(isinstance(i, (int, str)) and not isinstance(i, bool) for i in items)
    ):
        raise located(
            ArgumentError,
            f"wrt must be a parameter position, a name, or a non-empty list of them, not {wrt!r}",
            hint="for example wrt=0, wrt='x' or wrt=['x', 'y']",
        )


def is_number_like(value: Any) -> bool:
    """A number, or an array of numbers (any array library): what a loss can be.

    >>> is_number_like(2.0), is_number_like(np.ones(2)), is_number_like("loss")
    (True, True, False)
    """
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "shape"):
        return False
    try:
        return np.dtype(dtype).kind in "fciu"
    except TypeError:  # an array-API dtype numpy does not know
        return any(word in str(dtype) for word in ("float", "int", "complex"))


def owned(
    gradients: Sequence[Any], others: Sequence[Any], unsure: Sequence[int] | None = None
) -> tuple[Any, ...]:
    """Every gradient as an array the caller owns: fresh and writable.

    Copies only where needed: a read-only array (a broadcast view from a rule), or one
    sharing memory with an earlier gradient or with ``others`` (the seeds, the inputs).
    ``unsure``: the positions of the gradients that may not be new arrays (a
    specialized backward knows the others are); ``None``, every one.

    >>> owned([np.broadcast_to(1.0, (2,))], [])[0].flags.writeable
    True
    """
    checked = gradients if unsure is None else [gradients[i] for i in unsure]
    if all(type(g) is np.ndarray and g.base is None and g.flags.writeable for g in checked):
        ids = set(map(id, checked))  # new numpy arrays: only themselves can alias them
        if len(ids) == len(checked) and ids.isdisjoint(map(id, others)):
            return tuple(gradients)
    copies: list[Any] = []
    for g in gradients:
        if g is not None and _needs_copy(g, [*copies, *others]):
            g = g.copy()
        copies.append(g)
    return tuple(copies)


def shaped_like(tangent: Any, primal: Any) -> Any:
    """``tangent`` with the tuples of ``primal`` where it has lists: the tangent of a
    tuple is a list in compiled code, as its gradient is.

    >>> shaped_like([1.0, [2.0, 3.0]], (0.0, (0.0, 0.0)))
    (1.0, (2.0, 3.0))
    """
    if isinstance(primal, (list, tuple)) and isinstance(tangent, list):
        if len(tangent) == len(primal):
            items = [shaped_like(t, p) for t, p in zip(tangent, primal, strict=True)]
            return tuple(items) if isinstance(primal, tuple) else items
    return tangent


def _needs_copy(g: Any, others: Sequence[Any]) -> bool:
    if isinstance(g, np.generic) or not hasattr(g, "shape"):
        return False  # numpy scalars and numbers are immutable
    flags = getattr(g, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True):  # cupy's: no such flag
        return True
    if type(g) is np.ndarray and flags.owndata:  # a new array: only itself can alias it
        return any(other is g for other in others)
    overlap = getattr(array_module(g), "may_share_memory", None)
    if overlap is None:
        return False
    for other in others:
        if other is g:
            return True
        if hasattr(other, "shape") and not isinstance(other, np.generic):
            try:
                if overlap(g, other):
                    return True
            except (TypeError, ValueError):
                continue
    return False


def refuse_foreign(what: str, value: Any) -> None:
    """A located :class:`ForeignLibraryError` if ``value`` (or a value in it: lists,
    tuples, dicts) belongs to another autodiff library (an autograd ``ArrayBox``
    inside ``autograd.grad``, a JAX tracer, a torch tensor): the compiled code cannot
    follow that library's gradient, nor that library the compiled derivative.

    >>> refuse_foreign("the argument 'x' of f", np.ones(2))
    >>> Tensor = type("Tensor", (), {"__module__": "torch"})
    >>> refuse_foreign("the argument 'x' of f", Tensor())
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ForeignLibraryError: the argument 'x' of f is a PyTorch Tensor: ...
    """
    found = first_foreign(value)
    if found is None:
        return
    library, foreign = found
    raise located(
        ForeignLibraryError,
        f"{what} is {describe(foreign)}: autodiff_tutor's compiled code and {library} "
        "cannot follow each other's gradients, so the result would be an error deep "
        "inside or a silently wrong gradient.",
        hint=f"{advice(library)}; {conversion(library)}",
    )


def numeric_array(value: Any, like: Any, what: str) -> Any:
    """``value`` (a seed or a tangent) as an array of ``like``'s floating dtype."""
    refuse_foreign(what, value)
    xp = array_module(like)
    dtype = getattr(like, "dtype", None) if dtype_kind(like) in ("f", "c") else xp.float64
    if isinstance(value, (int, float, list, tuple)) and not isinstance(value, bool):
        try:
            value = xp.asarray(value, dtype=dtype)
        except (TypeError, ValueError):
            pass
    kind = dtype_kind(value)
    if not hasattr(value, "shape") or kind not in tuple("iufc"):
        raise located(
            ArgumentError,
            f"{what} must be a numeric array, not {type(value).__name__}"
            + (f" of dtype {value.dtype}" if kind else ""),
            hint="give a float array shaped like the value it goes with",
        )
    if kind in "iu":
        value = xp.asarray(value, dtype=dtype)
    return value


def bind_in_order(f: Any, inputs: Sequence[Any]) -> list[Any]:
    """The values of every parameter from ``inputs`` given in the order of ``f.params``,
    keyword-only parameters included (the compiler calls a helper
    ``def pen(w, *, lam=0.1)`` as ``op_forward(w, lam)``); missing ones take defaults.

    >>> import inspect
    >>> class F:
    ...     name, signature = "pen", inspect.signature(lambda w, *, lam=0.1, p=2: None)
    ...     params = list(signature.parameters)
    >>> bind_in_order(F(), (1.0, 0.5))
    [1.0, 0.5, 2]
    """
    n = sum(p.kind in _POSITIONAL for p in f.signature.parameters.values())
    return bind_arguments(f, inputs[:n], dict(zip(f.params[n:], inputs[n:], strict=False)))


def bind_arguments(f: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
    """The values of every parameter, in order, from a call's arguments."""
    try:
        bound = f.signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise located(ArgumentError, f"cannot call {f.name}{f.signature}: {exc}") from None
    bound.apply_defaults()
    return [bound.arguments[p] for p in f.params]


def specialized_on(value: Any) -> bool:
    """Whether the compiled code is specialized on what ``value`` is, so that a call
    with it is flattened whatever ``wrt`` asks: an object seen as the structure of its
    attributes, a function passed, or a structure holding an object of the user's.

    >>> specialized_on(np.tanh), specialized_on([np.ones(2)])
    (True, False)
    """
    return isinstance(value, ObjectView) or is_static(value) or holds_user_object(value)


def static_defaults(signature: inspect.Signature) -> bool:
    """Whether a parameter's default is a value the compiled code is specialized on
    (``def h(x, act=np.tanh)``): a call that leaves it out is flattened as one that
    passes it.

    >>> static_defaults(inspect.signature(lambda x, act=np.tanh: act(x)))
    True
    """
    return any(
        p.default is not p.empty and specialized_on(p.default)
        for p in signature.parameters.values()
    )


def needs_flattening(value: Any) -> bool:
    """Whether a call with ``value`` is flattened: a structure (a list, tuple or dict,
    an object seen as its attributes), or a function the compiled code is specialized
    on (``apply(np.tanh, x)``).

    >>> needs_flattening([np.ones(2)]), needs_flattening(np.tanh), needs_flattening(2.0)
    (True, True, False)
    """
    structure = isinstance(value, (dict, list, tuple, ObjectView))
    return structure or is_static(value) or is_user_object(value)


def is_float_array(value: Any) -> bool:
    """A floating-point numpy array: an input differentiated as it is given."""
    return type(value) is np.ndarray and value.dtype.kind == "f"


def checked_values(
    f: Any, positions: Sequence[int], args: Sequence[Any], kwargs: dict[str, Any]
) -> list[Any]:
    """The values of every parameter of ``f`` in a call, checked: none another
    library's, and the ones at ``positions`` (the inputs differentiated) floating-point
    (Python numbers and lists converted)."""
    if not kwargs and len(args) == len(f.params) and by_position(f.signature):
        values = list(args)  # the common call: every argument by position
    else:
        values = bind_arguments(f, args, kwargs)
    for name, value in zip(f.params, values, strict=True):
        if type(value) is not np.ndarray:  # an autograd ArrayBox, a torch tensor: refused
            refuse_foreign(f"the argument {name!r} of {f.name}", value)
    for i in positions:
        if not is_float_array(values[i]):
            values[i] = checked_input(f.name, f.params[i], values[i])
    return values


def by_position(signature: inspect.Signature) -> bool:
    """Whether every parameter can be given by position (none keyword-only, no
    ``*args`` or ``**kwargs``): a call with one argument per parameter binds them in
    order.

    >>> def f(x, y): ...
    >>> def g(x, *, s): ...
    >>> by_position(inspect.signature(f)), by_position(inspect.signature(g))
    (True, False)
    """
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return all(p.kind in positional for p in signature.parameters.values())


def plain_call(args: Sequence[Any], positions: Sequence[int]) -> bool:
    """Whether :func:`checked_values` hands the arguments of a call by position back as
    they are, and none is flattened: no structure, function or other library's value,
    float numpy arrays at ``positions``."""
    for value in args:
        if type(value) is not np.ndarray and (
            needs_flattening(value) or library_of(value) is not None
        ):
            return False
    return all(is_float_array(args[i]) for i in positions)


def checked_input(function: str, name: str, value: Any) -> Any:
    """Check (and for Python numbers and lists, convert) a value to differentiate."""
    refuse_structure(function, name, value)  # grad and value_and_grad flatten them first
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise located(
                NonDifferentiableInputError,
                f"cannot differentiate {function} with respect to {name!r}: its value is a "
                f"{type(value).__name__} that is not a rectangular array of numbers ({error})",
                hint="pass a float array; several arrays (weights and biases) go in as "
                "separate arguments",
            ) from None
    elif isinstance(value, float):
        value = np.float64(value)
    if is_float_value(value) and dtype_kind(value) != "c":
        return value
    kind = getattr(getattr(value, "dtype", None), "name", type(value).__name__)
    if dtype_kind(value) == "c":
        raise located(
            NonDifferentiableInputError,
            f"cannot differentiate {function} with respect to {name!r}: its value is complex "
            f"({kind}), and gradients through complex numbers are not supported",
            hint=f"pass the real and imaginary parts of {name!r} as two float arrays",
        )
    raise located(
        NonDifferentiableInputError,
        f"cannot differentiate {function} with respect to {name!r}: its value is of type "
        f"{kind}, and only floating-point values have gradients",
        hint=f"pass a float array (for example np.asarray({name}, dtype=float)) "
        f"or leave {name!r} out of wrt",
    )


def may_differentiate(value: Any) -> bool:
    """Whether ``vjp`` differentiates an argument by default: a floating-point value, a
    list, or a structure holding a floating-point leaf.

    >>> may_differentiate(np.ones(2)), may_differentiate(3), may_differentiate({"w": 1.0})
    (True, False, True)
    """
    return is_float_value(value) or isinstance(value, list) or has_float_leaf(value)


def float_params(f: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> list[str]:
    """The parameters given floating-point values (or lists) in this call: the default
    ``wrt`` of ``vjp``.

    >>> from autodiff_tutor import differentiable
    >>> def f(x, n):
    ...     return x * n
    >>> float_params(differentiable(f), (np.ones(2), 3), {})
    ['x']
    """
    values = bind_arguments(f, args, kwargs)
    held = varargs_name(f.signature)  # *args: held fixed unless named in wrt
    names = [p for p, v in zip(f.params, values, strict=True) if p != held and may_differentiate(v)]
    if not names:
        raise located(
            NonDifferentiableInputError,
            f"{f.name} has no floating-point argument to differentiate",
            hint="pass float arrays, or name the inputs with wrt=...",
        )
    return names


def scalar_seed(f: Any, out: Any) -> Any:
    """The seed 1 of a scalar output ``out`` of the compiled function ``f``, or a
    located error saying why ``out`` has no gradient.

    >>> scalar_seed(None, np.float64(2.5))
    np.float64(1.0)
    """
    if isinstance(out, np.generic) and out.dtype.kind == "f":  # the usual scalar loss
        return out.dtype.type(1)
    if not isinstance(out, tuple) and not is_number_like(out):
        raise located(
            NonScalarOutputError,
            f"{f.name} returns {type(out).__name__}"
            + (f" of dtype {out.dtype}" if hasattr(out, "dtype") else "")
            + "; grad needs a single scalar number (a float or a 0-d float array)",
            hint="return the loss as a number, e.g. np.sum(...)",
        )
    if isinstance(out, tuple):
        raise located(
            NonScalarOutputError,
            f"{f.name} returns {len(out)} values; grad needs a single scalar output",
            hint="use vjp(f, *args) and give one seed per output",
        )
    if math.prod(shape_of(out)) != 1:
        raise located(
            NonScalarOutputError,
            f"{f.name} returns an array of shape {shape_of(out)}; a gradient needs a scalar "
            "output (or a seed saying how to weigh each element)",
            hint="reduce it (np.sum, np.mean) or use vjp(f, *args) and call pullback(seed)",
        )
    return ones_like(out)


@dataclass
class Unwrapped:
    """A plain function, the arguments stored before the caller's, and ``wrt`` by name."""

    fn: Callable[..., Any]
    prefix: tuple[Any, ...]
    keywords: dict[str, Any]
    wrt: list[str]
    name: str
    single: bool
    #: the def whose parameters ``fn`` takes, where ``fn`` is a gradient of it
    takes: Callable[..., Any] | None = None

    def value_and_grad(self, value_and_grad: Callable) -> Callable[..., tuple[Any, Any]]:
        inner = value_and_grad(self.fn, self.wrt)

        def value_and_gradient(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
            out, gradients = inner(*self.prefix, *args, **{**self.keywords, **kwargs})
            return out, gradients[0] if self.single else gradients

        value_and_gradient.__name__ = f"value_and_grad_{self.name}"
        return value_and_gradient

    def vjp(self, vjp: Callable, args: Any, kwargs: dict[str, Any]) -> tuple[Any, Callable]:
        """``vjp`` of the underlying function, the object's attributes a structure."""
        return vjp(self.fn, *self.prefix, *args, wrt=self.wrt, **{**self.keywords, **kwargs})

    def jvp(self, jvp: Callable, args: Any, tangents: Any) -> tuple[Any, Any]:
        """``jvp`` of the underlying function (``jvp(f, args, tangents, keywords)``); the
        stored arguments held fixed (a partial's keywords are passed in their
        parameters' places, or by keyword to keyword-only parameters)."""

        signature = inspect.signature(self.takes or self.fn)
        parameters = signature.parameters
        names = list(parameters)
        positional = [n for n in names if parameters[n].kind in _POSITIONAL]
        given_count = len(self.prefix) + len(args)
        varargs = varargs_name(signature) is not None
        held = (None,) * len(self.prefix)
        if varargs and not self.keywords and given_count > len(positional):
            return jvp(self.fn, (*self.prefix, *args), (*held, *tangents), {})  # *args, in order
        if (
            self.takes is None
            and self.keywords
            and given_count >= len(positional)
            and all(
                k in parameters and parameters[k].kind is inspect.Parameter.KEYWORD_ONLY
                for k in self.keywords
            )
        ):  # partial(f, scale=0.7) of def f(x, w, *args, scale=1.0): passed by keyword
            return jvp(self.fn, (*self.prefix, *args), (*held, *tangents), self.keywords)
        given = dict(zip(names, self.prefix, strict=False))
        mine = dict(zip(names[len(self.prefix) :], zip(args, tangents, strict=False), strict=False))
        given.update({n: value for n, (value, _) in mine.items()})
        given.update(self.keywords)
        values, dots = [], []
        for name in names:
            if name not in given or parameters[name].kind not in _POSITIONAL:
                break
            values.append(given[name])
            dots.append(mine[name][1] if name in mine else None)
        if len(values) != len(given) or len(args) != len(tangents):
            raise located(
                ArgumentError,
                f"jvp of {self.name}: the stored and given arguments do not fill its "
                f"parameters {names} in order, or the tangents do not match the arguments",
                hint="give one tangent per argument, or call jvp on a def that takes "
                "every argument by position",
            )
        return jvp(self.fn, tuple(values), tuple(dots), {})


def runs_now(f: Any) -> tuple[Any, ...]:
    """What :func:`unwrap` reads of ``f`` that a call of ``f`` looks up anew each time:
    an object's class and its ``__call__``; a partial's function, arguments and
    keywords (its ``keywords`` dict may be changed in place), and what its function
    runs. A function made of ``f`` (``value_and_grad(obj)``) unwraps ``f`` again where
    one of them is no longer the same (:func:`runs_the_same`); a bound method's
    function and object never change.

    >>> import functools
    >>> def f(x, scale=1.0):
    ...     return scale * x
    >>> p = functools.partial(f, scale=2.0)
    >>> before = runs_now(p)
    >>> runs_the_same(before, runs_now(p))
    True
    >>> p.keywords["scale"] = -1.0
    >>> runs_the_same(before, runs_now(p))
    False
    """
    # (read before every call of the function made: dictionary reads, no inspect)
    if isinstance(f, functools.partial):
        keywords = [part for item in f.keywords.items() for part in item]
        return (f.func, f.args, *keywords, *runs_now(f.func))
    cls = type(f)
    if cls is types.FunctionType or cls is types.MethodType or cls is MadeFunction:
        return ()
    target = getattr(f, "bound_callable", None)  # differentiable(obj)
    if target is not None:
        return runs_now(target)
    for owner in cls.__mro__:  # the class attribute a call finds, as getattr_static
        if "__call__" in owner.__dict__:
            return (cls, owner.__dict__["__call__"])
    return (cls,)


def runs_the_same(before: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    """Whether two :func:`runs_now` of a callable hold the very same objects."""
    return len(before) == len(now) and all(a is b for a, b in zip(before, now, strict=True))


def unwrap_call(f: Any, wrt: Any, args: Any, kwargs: dict[str, Any]) -> Unwrapped | None:
    """:func:`unwrap` for ``vjp``, whose ``wrt=None`` means every argument given a
    floating-point value (or a structure holding one) in this call.

    >>> import numpy as np
    >>> class Scaled:
    ...     def __init__(self):
    ...         self.s = np.ones(2)
    ...     def apply(self, x, n):
    ...         return self.s * x * n
    >>> unwrap_call(Scaled().apply, None, (np.ones(2), 3), {}).wrt
    ['x']
    """

    if wrt is not None or unwrap(f, None) is None:
        return unwrap(f, wrt)
    signature = inspect.signature(f)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return unwrap(f, None)  # the call's own check says what is wrong
    parameters = signature.parameters
    floats = [  # (*args held fixed unless named in wrt)
        name
        for name, value in bound.arguments.items()
        if parameters[name].kind is not inspect.Parameter.VAR_POSITIONAL
        and may_differentiate(value)
    ]
    return unwrap(f, floats or None)


def unwrap(f: Any, wrt: Any) -> Unwrapped | None:
    """``None`` for a plain function; else how to call its underlying function
    (``differentiable(model.loss)`` is seen through to ``model.loss``).

    >>> import numpy as np
    >>> class Scaled:
    ...     def __init__(self):
    ...         self.s = np.ones(2)
    ...     def apply(self, x, *args):
    ...         return self.s * x
    >>> found = unwrap(Scaled().apply, None)
    >>> found.fn.__name__, type(found.prefix[0]).__name__, found.wrt
    ('apply', 'ObjectView', ['x'])
    """
    target = getattr(f, "bound_callable", None)  # differentiable(model.loss)
    if target is not None:
        return unwrap(target, wrt)
    if inspect.isfunction(f) or (hasattr(f, "op_forward") and not inspect.ismethod(f)):
        return None  # (a method of a @differentiable def has its op_forward too)
    if isinstance(f, MadeFunction):
        return _gradient_through(f, wrt)  # grad(model.loss): seen through; grad(f): None
    if isinstance(f, functools.partial):
        fn, prefix, keywords = f.func, tuple(f.args), dict(f.keywords)
        inner = unwrap(fn, None)
        if inner is not None:  # a partial of a bound method
            fn, prefix = inner.fn, inner.prefix + prefix
    elif inspect.ismethod(f):
        # (a method decorated with @differentiable wraps its def)
        fn, prefix, keywords = inspect.unwrap(f.__func__), (ObjectView(f.__self__),), {}
    elif inspect.isfunction(inspect.getattr_static(type(f), "__call__", None)):
        fn, prefix, keywords = inspect.getattr_static(type(f), "__call__"), (ObjectView(f),), {}
    else:
        return None
    if not inspect.isfunction(fn):
        return None
    parameters = inspect.signature(f).parameters
    visible = list(parameters)
    hidden = list(inspect.signature(fn).parameters)[: len(prefix)]
    entries = wrt_entries(wrt)
    if entries is None:
        entries = [p for p in visible if is_required(parameters[p])]
    names = []
    for entry in entries:
        if isinstance(entry, int):
            entry = visible[entry]
        elif entry.split(".")[0] == "self" and hidden:
            entry = hidden[0] + entry[len("self") :]  # 'self' names the object, whatever
        names.append(entry)
    name = getattr(fn, "__name__", "function")
    return Unwrapped(fn, prefix, keywords, names, name, gives_one(wrt, len(names)))


def _gradient_through(made: MadeFunction, wrt: Any) -> Unwrapped | None:
    """``grad(model.loss)`` seen as the gradient of the method's def, the object passed
    first: so ``jvp``, ``vjp`` and ``grad`` of it take the paths of a def's gradient
    (second derivatives). ``None`` for what a front door made of a def.

    >>> import numpy as np
    >>> from autodiff_tutor import grad
    >>> class Cubic:
    ...     a = 2.0
    ...     def f(self, x):
    ...         return self.a * x**3
    >>> through = unwrap(grad(Cubic().f), None)
    >>> through.fn.__name__, through.takes.__name__, through.wrt
    ('grad_f', 'f', ['x'])
    >>> float(grad(grad(Cubic().f))(1.0))
    12.0
    """
    through = getattr(made, "gradient_through", None)
    if through is None:
        return None
    target, gradient = through
    outer = unwrap(target, wrt)
    if outer is None:
        return None
    if gradient._recipe[0] is not outer.fn:  # Objective.__call__ replaced on the class
        given = unwrap(target, made._recipe[1])  # the wrt grad was made with
        gradient = gradient._made_by(outer.fn, given.wrt[0] if given.single else given.wrt)
        made.gradient_through = (target, gradient)
    return dataclasses.replace(outer, fn=gradient, takes=outer.takes or outer.fn)


def is_required(parameter: inspect.Parameter) -> bool:
    """Whether a parameter is in the default ``wrt``: it has no default, and it is not
    ``*args`` (whose values a call may leave out) nor ``**kwargs``.

    >>> [is_required(p) for p in inspect.signature(lambda x, *args, n=2: x).parameters.values()]
    [True, False, False]
    """
    return parameter.default is inspect.Parameter.empty and parameter.kind not in (
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.VAR_KEYWORD,
    )


@dataclasses.dataclass
class StructuredFunction(ParsedFunction):
    """A parsed function whose structured parameters are given as leaves."""

    structures: dict[str, ast.expr] = dataclasses.field(default_factory=dict)
    #: int arguments the function was specialized on (they index a structure or bound
    #: a range over one: ``range(n_layers)``); their values are in the cache key
    statics: dict[str, int] = dataclasses.field(default_factory=dict)


def leaf_names(name: str, tree: Treedef, taken: set[str], statics: bool = False) -> list[str]:
    """One parameter name per leaf: ``params_0_1``, ``p_W`` (``statics``: one name per
    static part instead, ``self_act``).

    >>> leaf_names("p", flatten({"W": 1, "b": [2, 3]})[1], set())
    ['p_W', 'p_b_0', 'p_b_1']
    """
    names: list[str] = []

    def walk(node: Treedef, path: str) -> None:
        if node[0] in ("leaf", "static", "cycle"):  # (a cycle's mark: a static part)
            if (node[0] != "leaf") != statics:
                return
            candidate, n = path, 2
            while candidate in taken:
                candidate, n = f"{path}_{n}", n + 1
            taken.add(candidate)
            names.append(candidate)
            return
        keys = entry_keys(node)
        for i, (key, child) in enumerate(zip(keys, node[2], strict=True)):
            part = str(key) if str(key).isidentifier() else str(i)
            walk(child, f"{path}_{part}")

    walk(tree, name)
    return names


def static_values(tree: Treedef) -> list[Any]:
    """The static parts of ``tree`` (functions, callable objects), in order.

    >>> import numpy as np
    >>> static_values(flatten({"W": 1.0, "act": np.tanh}, statics=True)[1])
    [<ufunc 'tanh'>]
    """
    if tree[0] == "static":
        return [tree[1]]
    if tree[0] == "cycle":  # read where the cycle is followed twice: refused
        return [Cycle(f"an object of {type(tree[2]).__name__}")]
    if tree[0] == "leaf":
        return []
    return [value for child in tree[2] for value in static_values(child)]


def literal(tree: Treedef, names: Sequence[str], statics: Sequence[str] = ()) -> ast.expr:
    """The structure as a Python literal of the leaf names (and of the names bound to
    its static parts); an object's dict display knows its class (``cls``).

    An object met again inside itself (``self.optimizer.model`` is ``self``) is the
    literal of that object once more, the same leaf names (``self.optimizer.model.W``
    reads ``self_W``); inside that copy, the cycle is the name bound to a
    :class:`~autodiff_tutor.pytree.Cycle`, which refuses to be read.

    >>> class Model:
    ...     pass
    >>> Model.__module__ = "course"  # as if written in the user's module
    >>> model = Model()
    >>> model.W, model.me = 1.0, model
    >>> tree = flatten(model, statics=True)[1]
    >>> ast.unparse(literal(tree, ["self_W"], ["self_me"]))
    "{'W': self_W, 'me': {'W': self_W, 'me': self_me}}"
    """
    items, static_items = iter(names), iter(statics)
    enclosing: list[ast.expr] = []  # the displays being built, the outermost first
    cycles: list[tuple[ast.expr, ast.expr]] = []  # (the cycle's name, the display it is)

    def build(node: Treedef) -> ast.expr:
        if node[0] == "leaf":
            return ast.Name(next(items), ast.Load())
        if node[0] in ("static", "cycle"):
            mark = ast.Name(next(static_items), ast.Load())
            if node[0] == "cycle":
                cycles.append((mark, enclosing[-node[1]]))
            return mark
        display: ast.expr
        if node[0] in ("dict", "object"):
            display = ast.Dict([ast.Constant(k) for k in node[1]], [])
            display.is_object = node[0] == "object"  # self.W reads entries["W"]
            display.cls = node[3] if node[0] == "object" else None  # self.f(): its method
        else:
            display = (ast.List if node[0] == "list" else ast.Tuple)([], ast.Load())
            display.fields = getattr(node[1], "_fields", None)  # a namedtuple's: p.W
        enclosing.append(display)
        children = [build(child) for child in node[2]]
        enclosing.pop()
        if isinstance(display, ast.Dict):
            display.values = children
        else:
            display.elts = children
        return display

    built = build(tree)
    copies = {id(mark): copy_tree(target) for mark, target in cycles}  # each with its marks
    for node in ast.walk(built):  # (a node's children are queued before it is given)
        entries = node.values if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if cycles and isinstance(entries, list):
            entries[:] = [copies.get(id(entry), entry) for entry in entries]
    return built


def specialization_key(tree: Treedef) -> Any:
    """What a compilation for ``tree`` depends on: its shape, its objects' classes and
    its static parts, those two by identity (a class redefined under the same name, or
    another function passed, gets its own compilation).

    >>> import numpy as np
    >>> key = specialization_key(flatten([np.tanh], statics=True)[1])
    >>> key == specialization_key(flatten([np.tanh], statics=True)[1])
    True
    >>> key == specialization_key(flatten([np.sin], statics=True)[1])
    False
    """
    if tree[0] == "leaf":
        return "leaf"
    if tree[0] == "static":  # a string read as a key: by its value
        return ("static", tree[1] if type(tree[1]) is str else id(tree[1]))
    if tree[0] == "cycle":  # the object met again: which of those holding it
        return ("cycle", tree[1])
    children = tuple(specialization_key(child) for child in tree[2])
    if tree[0] == "object":
        return ("object", tree[1], children, id(tree[3]))
    return (tree[0], repr(tree[1]), children)


@dataclasses.dataclass
class Flattened:
    """A call with its structured arguments flattened, and how to rebuild gradients."""

    function: Any  # a Differentiable of the flattened parameters
    wrt: tuple[str, ...]
    args: list[Any]
    rebuild: Callable[[tuple[Any, ...]], Any]
    #: the leaves of each parameter flattened (none for a function or a key passed)
    leaves: dict[str, list[Any]]


def flattened_functions(compiled: Any) -> list[Any]:
    """The functions :func:`flatten_call` made from ``compiled`` so far, one per
    structure of the arguments it met (kept on ``compiled``, dropped with its pairs).

    >>> import numpy as np
    >>> from autodiff_tutor import differentiable, grad
    >>> @differentiable
    ... def f(p):
    ...     return np.sum(p["a"] ** 2)
    >>> _ = grad(f)({"a": np.ones(2)})
    >>> [function.params for function in flattened_functions(f)]
    [['p_a']]
    """
    return [flat for flat, _ in compiled.__dict__.get(_FLATTENED, {}).values()]


def forget_flattened(compiled: Any) -> None:
    """Drop what :func:`flatten_call` made from ``compiled`` (a name it reads was
    rebound: made again at the next call).

    >>> import numpy as np
    >>> from autodiff_tutor import differentiable, grad
    >>> @differentiable
    ... def f(p):
    ...     return np.sum(p["a"] ** 2)
    >>> _ = grad(f)({"a": np.ones(2)})
    >>> forget_flattened(f)
    >>> flattened_functions(f)
    []
    """
    compiled.__dict__.pop(_FLATTENED, None)


def flatten_call(compiled: Any, wrt: Any, args: Sequence[Any], kwargs: dict) -> Flattened | None:
    """``None`` when no argument in ``wrt`` is a structure (nor an object seen through
    :class:`ObjectView`); else the flattened call. ``wrt`` may name an attribute of an
    object parameter: ``"self.W"``."""

    entries = wrt_entries(wrt)
    # "self.W", "self.encoder.W": the attribute paths asked for, by parameter
    picks: dict[str, list[tuple[str, ...]]] = {}
    for entry in entries or ():
        if isinstance(entry, str) and "." in entry:
            param, *path = entry.split(".")
            picks.setdefault(param, []).append(tuple(path))
    plain = [e.split(".")[0] if isinstance(e, str) else e for e in entries or ()]
    names = compiled.wrt_names(None if entries is None else list(dict.fromkeys(plain)))
    values = bind_arguments(compiled, args, kwargs)
    values = [
        with_class_values(v, picks[p]) if p in picks else v
        for p, v in zip(compiled.params, values, strict=True)
    ]
    varargs = varargs_name(compiled.signature)  # *args: a tuple as long as the call gives
    passed_whole = set(compiled.__dict__.get("holders", {}).values())  # self_object
    structured = {
        p: flatten(v, statics=True)
        for p, v in zip(compiled.params, values, strict=True)
        if p not in passed_whole
        and (
            (p in names and is_structure(v))
            or specialized_on(v)  # net.feedforward(x): its class and attributes known
            or p == varargs
            or (isinstance(v, (list, tuple)) and p in _zipped_parameters(compiled))
        )
    }
    indexed = _index_parameters(compiled) if reads_keys(compiled) else frozenset()
    for p, v in zip(compiled.params, values, strict=True):
        if type(v) is str and p in indexed and p not in names:  # activation="swish", a key:
            structured[p] = ([], ("static", v))  # the function is made for it
    if not structured:
        return None
    for param, paths in picks.items():
        for path in paths:
            check_attribute_path(param, structured.get(param), path)
    statics = {
        p: v
        for p, v in zip(compiled.params, values, strict=True)
        if type(v) is int and p not in names and p in indexed
    }
    trees_key = tuple((p, specialization_key(t)) for p, (_, t) in structured.items())
    key = (names, trees_key, tuple(statics.items()))
    cache = compiled.__dict__.setdefault(_FLATTENED, {})
    # (an entry holds its trees' classes and static parts: their ids in key stay theirs)
    if key not in cache:
        trees = {p: t for p, (_, t) in structured.items()}
        cache[key] = _specialize(compiled, trees, statics)
    flat, leaves_of = cache[key]
    flat_args: list[Any] = []
    flat_wrt: list[str] = []
    groups: list[tuple[str, list[int] | None]] = []
    for param, value in zip(compiled.params, values, strict=True):
        if param in structured:
            leaves, tree = structured[param]
            floats = []
            paths = _key_paths(tree)
            for leaf_name, leaf, path in zip(leaves_of[param], leaves, paths, strict=True):
                flat_args.append(leaf)
                wanted = param in names and (
                    param not in picks or any(path[: len(p)] == p for p in picks[param])
                )
                if wanted and is_float_value(leaf):
                    floats.append(len(flat_wrt))
                    flat_wrt.append(leaf_name)
                else:
                    floats.append(None)
            groups.append((param, floats))
            if param in flat.__dict__.get("holders", {}):  # its attributes are written
                flat_args.append(value.obj if isinstance(value, ObjectView) else value)
        else:
            flat_args.append(value)
            if param in names:
                groups.append((param, [len(flat_wrt)]))
                flat_wrt.append(param)
    if not flat_wrt:  # the structures asked for hold no floating-point array
        raise located(
            NonDifferentiableInputError,
            f"cannot differentiate {compiled.name} with respect to "
            f"{', '.join(map(repr, names))}: there is no floating-point array in it, and "
            "only those have gradients",
            hint="pass float arrays (np.asarray(v, dtype=float)), or leave it out of wrt",
        )
    ordered = entry_names(compiled, wrt)  # the gradients' order

    def rebuild(gradients: tuple[Any, ...]) -> Any:
        by_name = {}
        for param, positions in groups:
            picked = [gradients[i] if i is not None else None for i in positions]
            by_name[param] = (
                unflatten(structured[param][1], picked, statics=False)
                if param in structured
                else picked[0]
            )
        picked = []
        for entry in ordered:
            param, *path = entry.split(".")
            picked.append(_entry_by_path(by_name[param], path))
        return one_or_all(tuple(picked), wrt)

    leaves = {param: leaves for param, (leaves, _) in structured.items()}
    return Flattened(flat, tuple(flat_wrt), flat_args, rebuild, leaves)


def varargs_name(signature: inspect.Signature) -> str | None:
    """The name of the ``*args`` parameter, if there is one.

    >>> varargs_name(inspect.signature(lambda self, x, *args: x))
    'args'
    """
    kinds = {name: parameter.kind for name, parameter in signature.parameters.items()}
    return next((n for n, kind in kinds.items() if kind is inspect.Parameter.VAR_POSITIONAL), None)


def _key_paths(tree: Treedef) -> list[tuple[str, ...]]:
    """For each leaf, the keys of the entries it is in, outermost first, as ``wrt``
    writes them (``"self.encoder.W"``: ``("encoder", "W")``; an index as digits)."""
    if tree[0] in ("leaf", "static", "cycle"):
        return [()] * (tree[0] == "leaf")
    return [
        (str(key), *path)
        for key, child in zip(entry_keys(tree), tree[2], strict=True)
        for path in _key_paths(child)
    ]


def _entry_by_path(value: Any, path: Sequence[str]) -> Any:
    """The entry of a structure of gradients at ``path`` (keys as ``wrt`` writes them)."""
    for key in path:
        if isinstance(value, dict):
            value = next(v for k, v in value.items() if str(k) == key)
        else:
            value = value[int(key)]
    return value


def with_class_values(value: Any, paths: Sequence[tuple[str, ...]]) -> Any:
    """An object argument whose attribute named in ``wrt`` is a value of its class
    (``wrt="self.W"`` where ``W = np.array(...)`` is written in the class body, read
    through ``self``): seen with that attribute as one of its own, so that it is
    differentiated (its value read at each call, as any attribute).

    >>> class Model:
    ...     W = np.ones(2)
    >>> Model.__module__ = "course"
    >>> sorted(with_class_values(ObjectView(Model()), [("W",)]).attributes)
    ['W']
    """
    obj = value.obj if isinstance(value, ObjectView) else value
    if not (isinstance(value, ObjectView) or is_user_object(value)):
        return value
    own = ObjectView(obj).attributes
    wanted = [
        path[0]
        for path in paths
        if path[0] not in own and is_float_value(class_value(type(obj), path[0]))
    ]
    if not wanted:
        return value
    return ObjectView(obj, class_values=tuple(dict.fromkeys(wanted)))


def class_value(cls: type, name: str) -> Any:
    """The value a class holds under ``name`` (a number, an array written in its body
    or a base's), or ``None`` where it holds none or holds a method, a property or
    another descriptor.

    >>> class Model:
    ...     scale = 2.0
    ...     def loss(self): ...
    >>> class_value(Model, "scale"), class_value(Model, "loss"), class_value(Model, "W")
    (2.0, None, None)
    """
    raw = inspect.getattr_static(cls, name, None)
    if raw is None or callable(raw) or hasattr(raw, "__get__"):
        return None
    return raw


def check_attribute_path(param: str, flattened: tuple | None, path: tuple[str, ...]) -> None:
    """A located :class:`ArgumentError` unless ``wrt="param.a.b"`` names an entry of
    the structure ``param`` flattens to (``flattened``, or ``None`` where it is not a
    structure): an attribute of the object, of an object it holds, a key or index."""
    tree = flattened[1] if flattened is not None else ("leaf",)
    said = param
    for key in path:
        if tree[0] not in ("object", "dict", "list", "tuple"):
            raise located(
                ArgumentError,
                f"wrt names {param}.{'.'.join(path)}, but {said} is not an object nor a "
                f"structure whose entries can be named",
                hint=f"name {said} itself in wrt",
            )
        keys = [str(k) for k in entry_keys(tree)]
        if key not in keys:
            what = "attribute" if tree[0] == "object" else "entry"
            have = ", ".join(keys) or "none"
            raise located(
                ArgumentError,
                f"wrt names {said}.{key}, but {said} has no {what} {key!r} to differentiate "
                f"(its {what.replace('y', 'ie')}s: {have}; a method, a property or a "
                "class's value that is not a float is not one)",
                hint=f"name one of them (wrt='{said}.<name>'), or {said} itself",
            )
        tree = tree[2][keys.index(key)]
        said = f"{said}.{key}"


def reads_keys(compiled: Any) -> bool:
    """Whether a parameter of ``compiled`` is read in an index and never assigned (see
    :func:`_index_parameters`; ``False`` where its source cannot be read)."""
    return bool(_index_parameters(compiled))


def _index_parameters(compiled: Any) -> frozenset[str]:
    """The parameters that may hold an int the specialization resolves: read in an
    index or in a ``range(...)``, never assigned (``range(n_layers)``, ``params[k]``)."""
    return _parameter_uses(compiled)[0]


def _zipped_parameters(compiled: Any) -> frozenset[str]:
    """The parameters a loop zips or enumerates (``for W, act in zip(Ws, acts)``),
    never assigned: a list given for one is flattened, so that the loop is unrolled
    over its known length and each entry's call resolved."""
    return _parameter_uses(compiled)[1]


def _parameter_uses(compiled: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The parameters :func:`_index_parameters` and :func:`_zipped_parameters` name,
    from one reading of the source (none where it cannot be read), kept on
    ``compiled``."""
    found = compiled.__dict__.get("_parameter_uses")
    if found is not None:
        return found
    try:
        body = ast.Module(parse_function(compiled.fn).tree.body, [])
    except (AutodiffError, OSError, TypeError):
        body = ast.Module([], [])
    calls = [n for n in ast.walk(body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    places = [n.slice for n in ast.walk(body) if isinstance(n, ast.Subscript)]
    places += [call for call in calls if call.func.id == "range"]
    indexed = {n.id for p in places for n in ast.walk(p) if isinstance(n, ast.Name)}
    loops = [n for n in ast.walk(body) if isinstance(n, (ast.For, ast.comprehension))]
    zipped = {
        argument.id
        for loop in loops
        if isinstance(loop.iter, ast.Call)
        and isinstance(loop.iter.func, ast.Name)
        and loop.iter.func.id in ("zip", "enumerate")
        for argument in loop.iter.args
        if isinstance(argument, ast.Name)
    }
    own = set(compiled.params) - assigned_names(body)
    found = (frozenset(indexed & own), frozenset(zipped & own))
    compiled.__dict__["_parameter_uses"] = found
    return found


def _specialize(
    compiled: Any, trees: dict[str, Treedef], statics: dict[str, int]
) -> tuple[Any, dict[str, list[str]]]:
    """A Differentiable of ``compiled``'s function with structured parameters as leaves."""

    parsed = parse_function(compiled.fn)
    tree = copy_tree(parsed.tree)
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    taken |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    taken |= set(parsed.namespace())  # a static part's name hides none of the function's
    leaves_of: dict[str, list[str]] = {}
    structures: dict[str, ast.expr] = {}
    values: dict[str, Any] = {}  # the static parts, by the names the code reads them by
    arguments: list[ast.arg] = []
    holders: dict[str, str] = {}  # an object parameter -> the parameter passing it whole
    given = tree.args  # in the order of the parameters (compiled.params)
    vararg = [given.vararg] if given.vararg is not None else []
    for argument in [*given.posonlyargs, *given.args, *vararg, *given.kwonlyargs]:
        name, structure = argument.arg, trees.get(argument.arg)
        if structure is not None and structure[0] == "static":  # a function passed
            leaves_of[name] = []
            values[name] = structure[1]  # read as a name the function sees, as a global
        elif structure is not None:
            names = leaf_names(name, structure, taken)
            static_names = leaf_names(name, structure, taken, statics=True)
            values.update(zip(static_names, static_values(structure), strict=True))
            leaves_of[name] = names
            structures[name] = literal(structure, names, static_names)
            arguments += [ast.copy_location(ast.arg(n), argument) for n in names]
            if structure[0] == "object" and name in written_objects(tree):
                holder = leaf_names(f"{name}_object", ("leaf",), taken)[0]
                structures[name].holder = holder  # self.calls += 1 writes into it
                holders[name] = holder
                arguments.append(ast.copy_location(ast.arg(holder), argument))
        else:
            arguments.append(argument)
    # every value is given, by position, in that order (*args as its items)
    tree.args = ast.arguments(
        posonlyargs=[],
        args=arguments,
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=given.kwarg,
        defaults=[],
    )
    fields = {f.name: getattr(parsed, f.name) for f in dataclasses.fields(ParsedFunction)}
    fields.update(tree=tree, values={**parsed.values, **values})
    flat_parsed = StructuredFunction(**fields, structures=structures, statics=statics)
    flat = type(compiled)(compiled.fn)  # a Differentiable, as compiled is
    flat.params = [a.arg for a in arguments]
    flat.signature = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in flat.params]
    )
    flat.parsed = flat_parsed  # compiled, checked and guarded as any function
    flat.holders = holders
    return flat, leaves_of


def written_objects(tree: ast.FunctionDef) -> set[str]:
    """The parameters whose attributes the function writes (``self.nfev += 1``,
    ``self.history.append(v)``): the object itself is passed too, so that the compiled
    forward makes the write, as Python does (see :mod:`.front.desugar.attributes`).

    >>> tree = ast.parse("def fun(self, x):\\n    self.nfev += 1\\n    return x").body[0]
    >>> written_objects(tree)
    {'self'}
    """

    written = set()
    for node in ast.walk(tree):
        target = node
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATING
        ):
            target = node.func.value  # self.history.append(v)
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and (isinstance(target.ctx, ast.Store) or target is not node)
        ):
            written.add(target.value.id)
    return written


def entry_names(compiled: Any, wrt: Any) -> list[str]:
    """The entries of ``wrt`` by name, an attribute as it is written (``"self.W"``).

    >>> from autodiff_tutor import differentiable
    >>> entry_names(differentiable(lambda self, x: x), [1, "self.W"])
    ['x', 'self.W']
    """

    entries = wrt_entries(wrt)
    if entries is None:
        return list(compiled.wrt_names(None))
    return [compiled.params[e] if isinstance(e, int) else e for e in entries]


def refuse_structured_vjp(f: Any, args: Sequence[Any]) -> None:
    """``vjp(grad(g), ...)`` with a structure among the arguments: refused at the call
    (``jvp(grad(g), ...)`` takes structures).

    >>> import numpy as np
    >>> from autodiff_tutor import grad
    >>> refuse_structured_vjp(grad(lambda p: p), [{"w": np.ones(2)}])
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.NonDifferentiableInputError: vjp of a gradient takes arrays, ...
    """

    if getattr(f, "_gradient_of", None) is not None and any(is_structure(a) for a in args):
        raise located(
            NonDifferentiableInputError,
            "vjp of a gradient takes arrays, and an argument here is a structure (a list, "
            "tuple or dict of arrays)",
            hint="use jvp(grad(f), args, tangents) for a Hessian-vector product (it takes "
            "structures; the Hessian is symmetric), or pass the arrays as separate arguments",
        )


def refuse_structure(function: str, name: str, value: Any) -> None:
    """Where structures are not flattened (jvp with an array as a structure's
    tangent, vjp of a gradient), say so.

    >>> import numpy as np
    >>> refuse_structure("f", "params", {"W": np.ones(2)})
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.NonDifferentiableInputError: cannot differentiate f ...
    """

    if isinstance(value, dict) or (is_structure(value) and _ragged(value)):
        raise located(
            NonDifferentiableInputError,
            f"cannot differentiate {function} with respect to {name!r} here: it is a "
            "structure (a list, tuple or dict of arrays); grad, value_and_grad and vjp "
            "take structures, jvp takes them with a tangent of the same structure, and "
            "vjp of a gradient takes arrays",
            hint=f"give the tangent of {name!r} the structure of {name!r}, or pass its "
            "arrays as separate arguments",
        )


def _ragged(value: Any) -> bool:
    """Whether a list of arrays cannot be stacked into one array (np.asarray fails)."""
    try:
        return np.asarray(value).dtype == object
    except ValueError:
        return True


def has_float_leaf(value: Any) -> bool:
    """Whether a structure holds a floating-point array or number (its leaves are
    differentiated by default, as a float argument is).

    >>> import numpy as np
    >>> has_float_leaf({"W": np.ones(2), "n": 3}), has_float_leaf([np.arange(2)])
    (True, False)
    """

    return is_structure(value) and any(is_float_value(leaf) for leaf in flatten(value)[0])


def check_seed(f: Any, index: int, seed: Any, out: Any) -> Any:
    """The seed given for output ``index`` of ``f``, checked against that output
    ``out``: a numeric array of its shape (``None``: zeros), a list for a list.

    >>> from autodiff_tutor import differentiable
    >>> f = differentiable(lambda x: 2 * x)
    >>> check_seed(f, 0, [1.0, 2.0], np.ones(2)).tolist()
    [1.0, 2.0]
    >>> check_seed(f, 0, np.ones(3), np.ones(2))
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ArgumentError: the seed for output 0 of ... has shape (3,), ...
    """
    if isinstance(out, (list, tuple)):  # a list (or tuple) of arrays: a list of seeds
        where = f"the seed for output {index} of {f.name}"
        return check_list_seed(seed, out, where, lambda s, o: check_seed(f, index, s, o))
    xp = array_module(out)
    if seed is None:
        return xp.zeros_like(out) if shape_of(out) else ones_like(out) * 0
    seed = numeric_array(seed, out, f"the seed for output {index} of {f.name}")
    if shape_of(seed) != shape_of(out):
        raise located(
            ArgumentError,
            f"the seed for output {index} of {f.name} has shape {shape_of(seed)}, "
            f"but that output has shape {shape_of(out)}",
            hint="give a seed with the output's shape",
        )
    return seed


def check_seed_count(seeds: Sequence[Any], outputs: int, what: str) -> None:
    """A pullback takes one seed per output of ``what``.

    >>> check_seed_count((1.0,), 2, "f")
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ArgumentError: f has 2 output(s); pullback needs one seed each, ...
    """
    if len(seeds) != outputs:
        raise located(
            ArgumentError,
            f"{what} has {outputs} output(s); pullback needs one seed each, got {len(seeds)}",
        )


def check_list_seed(
    seed: Any, out: list[Any], where: str, check: Callable[[Any, Any], Any]
) -> list[Any]:
    """The seed of an output that is a list: a list or tuple of the same length,
    each element checked against the output's element by ``check`` (nested lists
    likewise); ``None`` sends no gradient through any element (a zero seed each, as
    PyTorch's backward takes ``None``), as for the cache of ``(out, cache)``.

    >>> import numpy as np
    >>> check_list_seed([1.0, 2.0], [np.ones(()), np.ones(())], "the seed", lambda s, o: s)
    [1.0, 2.0]
    >>> check_list_seed(None, [np.ones(()), [np.ones(())]], "the seed", lambda s, o: s)
    [None, [None]]
    >>> check_list_seed(np.ones(2), [np.ones(2)], "the seed", lambda s, o: s)
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ArgumentError: the seed is an array, but that output is a list ...
    """

    if seed is None:
        seed = [None] * len(out)
    if not isinstance(seed, (list, tuple)) or isinstance(seed, ObjectView):
        kind = "an array" if hasattr(seed, "shape") else f"a {type(seed).__name__}"
        raise located(
            ArgumentError,
            f"{where} is {kind}, but that output is a list of {len(out)} arrays",
            hint="give a list with one seed per element, each shaped like that element",
        )
    if len(seed) != len(out):
        raise located(
            ArgumentError,
            f"{where} has {len(seed)} elements, but that output is a list of {len(out)}",
            hint="give one seed per element of the list",
        )
    checked = []
    for i, (s, o) in enumerate(zip(seed, out, strict=True)):
        if isinstance(o, (list, tuple)):
            checked.append(check_list_seed(s, o, f"{where}, element {i},", check))
        else:
            checked.append(check(s, o))
    return checked


def leaves_of(value: Any) -> list[Any]:
    """The arrays of a value that may be a list (for checks on every element).

    >>> leaves_of([1.0, [2.0, 3.0]])
    [1.0, 2.0, 3.0]
    """
    return flatten(value)[0] if isinstance(value, (list, tuple)) else [value]


def values_by_key(keys: tuple[str, ...], seed: Any, where: str) -> Any:
    """The seed of a function returning a dict, as the list of its values in the
    order of ``keys`` (how the compiled function returns them). A seed that is not a
    dict is passed on as it is, for the list checks to judge.

    >>> values_by_key(("y", "loss"), {"loss": 1.0, "y": 2.0}, "the seed")
    [2.0, 1.0]
    """

    if not isinstance(seed, dict):
        return seed
    if set(seed) != set(keys):
        raise located(
            ArgumentError,
            f"{where} has the keys {sorted(seed)}, but the function returns the keys "
            f"{sorted(keys)}",
            hint="give a dict with one seed per returned key, shaped like its value",
        )
    return [seed[k] for k in keys]


def by_key(
    keys: tuple[str, ...] | None, out: Any, pullback: Callable[..., Any], name: str
) -> tuple[Any, Callable[..., Any]]:
    """``(out, pullback)`` of a function returning a dict (compiled as the list of its
    values, ``keys`` in order): the dict, and a pullback taking a dict seed. As given
    when ``keys`` is ``None``.

    >>> out, pullback = by_key(("a", "b"), [1.0, 2.0], lambda seed: seed, "f")
    >>> out, pullback({"b": 20.0, "a": 10.0})
    ({'a': 1.0, 'b': 2.0}, [10.0, 20.0])
    """
    if keys is None:
        return out, pullback

    def keyed_pullback(*seeds: Any) -> Any:
        if len(seeds) == 1:
            seeds = (values_by_key(keys, seeds[0], f"the seed of {name}"),)
        return pullback(*seeds)

    return dict(zip(keys, out, strict=True)), keyed_pullback


def refuse_structured_output(f: Any, out: list[Any]) -> None:
    """``grad`` of a function returning a list, or a dict (compiled as the list of
    its values): a located error naming what it returns.

    >>> from autodiff_tutor import differentiable
    >>> def f(a):
    ...     return {"u": a, "v": 2 * a}
    >>> refuse_structured_output(differentiable(f), [1.0, 2.0])
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.NonScalarOutputError: f returns a dict with the keys ['u', 'v']; ...
    """

    keys = f.front_end().program.output_keys
    what = f"a dict with the keys {list(keys)}" if keys else f"a list of {len(out)} values"
    raise located(
        NonScalarOutputError,
        f"{f.name} returns {what}; grad needs a single scalar output",
        hint="return the loss alone, or use vjp(f, *args) and give one seed of the same structure",
    )
