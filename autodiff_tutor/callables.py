"""Callable objects, bound methods and ``functools.partial`` as things to differentiate.

``grad(model.loss)`` compiles the method's function; the object (``self``) is passed
as its first argument and seen as the structure of its attributes, so ``self.W`` reads
a parameter of its own. ``wrt`` counts the visible parameters (``grad(model.loss)``
differentiates w.r.t. the first argument after ``self``), and can name attributes:
``wrt="self.W"`` gives the gradient of ``W``, ``wrt="self"`` a dict of the gradients
of every floating-point attribute. Objects with ``__call__`` work the same way, and a
``functools.partial`` passes its stored arguments.

>>> import numpy as np
>>> from autodiff_tutor import grad
>>> class Model:
...     def __init__(self):
...         self.W = np.eye(2)
...     def loss(self, X):
...         return np.sum((X @ self.W) ** 2)
>>> model = Model()
>>> grad(model.loss, wrt="self.W")(np.ones((1, 2))).tolist()
[[2.0, 2.0], [2.0, 2.0]]
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autodiff_tutor.api_checks import located, wrt_entries
from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.pickling import MadeFunction
from autodiff_tutor.pytree import ObjectView
from autodiff_tutor.runtime.backend import is_float_value
from autodiff_tutor.structured_vjp import has_float_leaf

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


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

        parameters = inspect.signature(self.takes or self.fn).parameters
        names = list(parameters)
        positional = [n for n in names if parameters[n].kind in _POSITIONAL]
        given_count = len(self.prefix) + len(args)
        varargs = _has_varargs(self.takes or self.fn)
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
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
    except TypeError:
        return unwrap(f, None)  # the call's own check says what is wrong
    parameters = inspect.signature(f).parameters
    floats = [  # (*args held fixed unless named in wrt)
        name
        for name, value in bound.arguments.items()
        if parameters[name].kind is not inspect.Parameter.VAR_POSITIONAL
        and (is_float_value(value) or isinstance(value, list) or has_float_leaf(value))
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
    visible = list(inspect.signature(f).parameters)
    hidden = list(inspect.signature(fn).parameters)[: len(prefix)]
    entries = wrt_entries(wrt)
    if entries is None:
        parameters = inspect.signature(f).parameters
        entries = [p for p in visible if is_required(parameters[p])]
    names = []
    for entry in entries:
        if isinstance(entry, int):
            entry = visible[entry]
        elif entry.split(".")[0] == "self" and hidden:
            entry = hidden[0] + entry[len("self") :]  # 'self' names the object, whatever
        names.append(entry)
    name = getattr(fn, "__name__", "function")
    return Unwrapped(fn, prefix, keywords, names, name, isinstance(wrt, (int, str)))


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


def _has_varargs(fn: Callable[..., Any]) -> bool:
    return any(
        p.kind is inspect.Parameter.VAR_POSITIONAL
        for p in inspect.signature(fn).parameters.values()
    )
