"""Stage 9, failures: derivative code that failed because the user's function mixes
array libraries.

A numpy function given another library's array (``np.cos(x)`` of an
``array_api_strict`` or cupy array) computes a numpy array, and Python may carry on:
the function itself runs. Its derivative then adds numpy gradients into the other
library's (the gradient of ``x`` is made with ``x``'s own library), which that library
refuses. Without a look at the values this reads as a bug of the toolkit; the values
of the failed derivative frame show the true cause: the forward's values (the user's
operations, as written) come from two array libraries. The error is located at the
user's call that crossed libraries where the frame shows it, else at the failed line.

>>> import numpy as np
>>> array_library(np.ones(2)), array_library(2.0), array_library(np.float32(1))
('numpy', None, None)
"""

from __future__ import annotations

import ast
import sys
from typing import Any

import numpy as np

from autodiff_tutor.compiler.origins import Origin
from autodiff_tutor.errors import UserCodeError
from autodiff_tutor.runtime.backend import Like, has_array_namespace


def array_library(value: Any) -> str | None:
    """The top-level module name of an array's library (``numpy``, ``cupy``,
    ``array_api_strict``); ``None`` for numbers (numpy scalars mix with every library,
    as Python numbers do) and what is not an array."""
    if isinstance(value, np.ndarray):
        return "numpy"
    if isinstance(value, Like):  # an array saved by its shape and dtype
        return "numpy" if value.namespace is None else _top(value.namespace.__name__)
    if isinstance(value, np.generic) or not has_array_namespace(value):
        return None
    return _top(type(value).__module__)


def mixed_arrays_error(values: dict[str, Any], user: Origin, failure: str) -> UserCodeError | None:
    """The error to raise when the derivative code of ``user`` failed (``failure``:
    the exception's type and text) in a frame whose forward ``values`` (by name) are
    arrays of two libraries, else ``None`` (a failure of another kind).

    >>> import array_api_strict as xs
    >>> from autodiff_tutor.compiler.front.source import parse_function
    >>> def f(x):
    ...     return np.sum(np.cos(x))
    >>> parsed = parse_function(f)
    >>> call = parsed.tree.body[0].value.args[0]
    >>> values = {"x": xs.asarray([1.0]), "t1": np.ones(1)}  # t1 = np.cos(x)
    >>> error = mixed_arrays_error(values, Origin("", parsed, call), "TypeError: no")
    >>> print(error.message)
    f mixes array libraries (array_api_strict and numpy arrays): its derivative raised
    TypeError: no
    >>> print(error.hint)
    np.cos was given an array_api_strict array (x) and returns a numpy array: use the
    array's own namespace (xp = x.__array_namespace__(), then xp.cos) or numpy arrays
    throughout

    Gradients (``d_...``) are the toolkit's: they alone mixing is not the user's doing.

    >>> mixed = {"x": np.ones(1), "d_x": xs.asarray([1.0])}
    >>> mixed_arrays_error(mixed, Origin("", parsed, call), "TypeError: no") is None
    True
    """
    found = _libraries(values)
    if len(found) < 2:
        return None
    name = user.parsed.name
    kinds = " and ".join(sorted(found))
    message = f"{name} mixes array libraries ({kinds} arrays): its derivative raised {failure}"
    crossing = _crossing(user, values)
    if crossing is not None:
        function, library, operand = crossing
        hint = (
            f"{function} was given an {library} array ({operand}) and returns a numpy "
            f"array: use the array's own namespace (xp = {operand}.__array_namespace__(), "
            f"then xp.{function.split('.', 1)[-1]}) or numpy arrays throughout"
        )
    else:
        hint = (
            "a numpy function given another library's array returns a numpy array: use "
            "the arrays' own namespace (xp = x.__array_namespace__()) or numpy arrays "
            "throughout"
        )
    return UserCodeError(message, user.location(), hint=hint)


def _libraries(values: dict[str, Any]) -> set[str]:
    """The array libraries of the forward's values (not the gradients, ``d_...``)."""
    found = set()
    for name, value in values.items():
        if name.startswith("d_"):
            continue
        for item in value if isinstance(value, (tuple, list)) else [value]:
            library = array_library(item)
            if library is not None:
                found.add(library)
    return found


def _crossing(user: Origin, values: dict[str, Any]) -> tuple[str, str, str] | None:
    """(function, library, operand) when ``user`` is a call of a module's function
    (``np.cos(x)``) given an array of another library, by an operand's value."""
    call = user.node
    if not isinstance(call, ast.Call):
        return None
    module = _module_of(call.func, user.parsed.namespace())
    if module is None:
        return None
    for argument in call.args:
        if isinstance(argument, ast.Name) and argument.id in values:
            library = array_library(values[argument.id])
            if library is not None and library != module:
                return ast.unparse(call.func), library, argument.id
    return None


def _module_of(func: ast.expr, namespace: dict[str, Any]) -> str | None:
    """The top-level library of ``np.cos`` or ``np.linalg.norm`` (a module's function)."""
    while isinstance(func, ast.Attribute):
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    module = namespace.get(func.id)
    name = getattr(module, "__name__", None) if type(module) is type(sys) else None
    return _top(name) if name else None


def _top(module_name: str) -> str:
    return module_name.split(".")[0]
