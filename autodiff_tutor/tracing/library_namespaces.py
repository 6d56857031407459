"""numpy, scipy and math as the user's traced code sees them.

``evaluate`` runs the user's function with globals that give these namespaces in
place of the modules (:mod:`~autodiff_tutor.tracing.user_code`); nothing else sees
them, and numpy itself is never changed. What differs from the modules:

- numpy's array-making functions give buffers (:mod:`~autodiff_tutor.tracing.buffers`);
- its conversions, ``np.r_``/``np.c_`` and scalar casts keep traced values traced,
  and its functions with a rule stack a list of traced values given as an array
  (``np.mean([a, b])``) (:mod:`~autodiff_tutor.tracing.conversions`);
- scipy's functions written in Python (``scipy.special.logsumexp``,
  ``scipy.stats.norm.logpdf``, ``multivariate_normal.logpdf``, frozen distributions
  such as ``norm(mu, sigma).logpdf``) go to their derivative rules when given a traced
  value, where scipy itself would convert it with ``np.asarray``; one without a rule is
  refused at the call, as any function without a rule is;
- ``math.exp(t)`` (and ``log``, ``sqrt``, ``sin``...) of a traced value is numpy's.

Everything else is the module's own object, and every function gives numpy's or
scipy's own result when no traced value is passed.

>>> import scipy.special
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> special = seen_by_trace(scipy.special)
>>> def f(x):
...     return gradient(special.logsumexp(x), x)
>>> evaluate(f, traced([0.0, 0.0]))
array([0.5, 0.5])
"""

from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np

from autodiff_tutor.rules import registry
from autodiff_tutor.rules.names import op_of_callable
from autodiff_tutor.tracing import buffers, conversions
from autodiff_tutor.tracing.namespace import traced_function
from autodiff_tutor.tracing.traced_values import is_live, traced_leaves

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
        return conversions.JoinIndex(value, columns=value is np.c_)
    if isinstance(value, type):
        return conversions.ScalarCast(value) if value in conversions.SCALAR_TYPES else value
    if isinstance(value, np.ufunc):
        return value  # numpy hands traced values to tracing itself
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", "")
    if module == "math" and name in MATH_FUNCTIONS:
        return _math_function(name, value)
    if getattr(np, name, None) is value and name in buffers.BUFFER_FUNCTIONS:
        return buffers.buffer_function(value)
    if getattr(np, name, None) is value and name in conversions.CONVERSIONS:
        return conversions.array_function(value)
    if module.startswith("numpy"):
        rule = registry.lookup(op_of_callable(value) or "")
        if rule is not None and not rule.sequence and rule.op != "einsum":
            return conversions.list_arguments(value, len(rule.inputs))
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


__all__ = ["Distribution", "LibraryNamespace", "seen_by_trace"]
