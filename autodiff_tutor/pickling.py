"""How compiled functions and the functions the front doors make go to other processes.

A compiled function is a recipe: the user's function, compiled again where it is
needed. So a :class:`~autodiff_tutor.api.compiled.Differentiable` pickles **by reference**
where it lives in an importable module under its name (``mod.loss``: the other process
imports ``mod``), and **by value** otherwise: its plain function (which ``cloudpickle``
ships with what it closes over, as it ships a notebook's functions) and the source
lines the compiler reads, for a process that has no such file (a notebook cell, a
script run as ``__main__``). The functions ``grad`` and ``value_and_grad`` return are
:class:`MadeFunction` objects that pickle as the call that made them (``grad``, the
function, ``wrt``). Either way the other process compiles again and computes the same
numbers.

>>> import pickle
>>> import cloudpickle
>>> import numpy as np
>>> from autodiff_tutor import grad
>>> def loss(w, x):
...     return np.sum((x * w) ** 2)
>>> shipped = cloudpickle.dumps(grad(loss))   # loss is local here: shipped by value
>>> pickle.loads(shipped)(np.array([1.0, 3.0]), np.array([2.0, 1.0])).tolist()
[8.0, 6.0]
"""

from __future__ import annotations

import functools
import importlib
import inspect
import linecache
import sys
import types
from collections.abc import Callable
from typing import Any

from autodiff_tutor.errors import front_door

__all__ = [
    "MadeFunction",
    "by_reference",
    "importable",
    "rebuild",
    "resolve",
    "source_lines",
    "with_sources",
]


class MadeFunction:
    """A function made by a front door (``grad(f)``, ``value_and_grad(f, wrt)``):
    it calls ``function``, and pickles as ``made_by(*recipe)``.

    It wears the made function's name and signature (``functools.update_wrapper``),
    so ``inspect.unwrap`` finds the plain function under it.

    >>> import pickle
    >>> double = MadeFunction(lambda x: 2 * x, int, ("21",))
    >>> double(4), pickle.loads(pickle.dumps(double))
    (8, 21)
    """

    def __init__(
        self, function: Callable[..., Any], made_by: Callable[..., Any], recipe: tuple[Any, ...]
    ) -> None:
        functools.update_wrapper(self, function)
        self._function = function
        self._made_by = made_by
        self._recipe = recipe

    @front_door
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        """Bound as a function is, when kept as a class attribute."""
        return self if obj is None else types.MethodType(self, obj)

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return with_sources(self._made_by, self._recipe)

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"


def importable(obj: Any) -> bool:
    """Whether ``obj`` is what its module's name for it says, in a module another
    process can import (not ``__main__``, not a function's local).

    >>> import json
    >>> importable(json.dumps), importable(lambda x: x)
    (True, False)
    """
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module_name, str) or not isinstance(qualname, str):
        return False
    if module_name == "__main__" or "<locals>" in qualname:
        return False
    found: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found is obj


def source_lines(fn: Callable[..., Any]) -> list[tuple[Any, str, list[str]]]:
    """The source the compiler reads to compile ``fn`` again, for each function shipped
    by value: its own, and those of the functions it names (helpers defined beside it
    in a notebook): ``(function, file name, the file's lines)``.

    ``cloudpickle`` ships a function's code with the file name ``<dynamic-code>``;
    :func:`rebuild` gives it its file name back, and the file's lines.

    >>> import json
    >>> def f(x):
    ...     return x
    >>> source_lines(json.dumps), [entry[1][:8] for entry in source_lines(f)]
    ([], ['<doctest'])
    """
    found: list[tuple[Any, str, list[str]]] = []
    seen: set[int] = set()
    pending = [fn]
    while pending:
        value = pending.pop()
        shipped_otherwise = isinstance(value, MadeFunction) or importable(value)
        function = None if shipped_otherwise else _plain(value)
        if id(function) in seen or not inspect.isfunction(function) or importable(function):
            continue
        seen.add(id(function))
        filename = function.__code__.co_filename
        lines = linecache.getlines(filename, function.__globals__)
        if lines:
            found.append((function, filename, lines))
        cells = [c.cell_contents for c in function.__closure__ or () if _filled(c)]
        named = [function.__globals__.get(n) for n in _names(function.__code__)]
        pending.extend((*cells, *named))
    return found


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:  # a cell not assigned yet
        return False
    return True


def _names(code: types.CodeType) -> set[str]:
    """The global names a function's code reads, with those of the code nested in it."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _plain(value: Any) -> Any:
    """The plain function under a compiled one, a bound method or a partial (a
    compiled gradient function is sent as the ``grad`` it compiles: none)."""
    if getattr(value, "made_from", None) is not None:
        return None
    if isinstance(value, functools.partial):
        return _plain(value.func)
    if inspect.ismethod(value):
        return _plain(value.__func__)
    try:
        return inspect.unwrap(value)
    except ValueError:  # a cycle of __wrapped__
        return value


def by_reference(obj: Any) -> tuple[Callable[..., Any], tuple[str, str]]:
    """How to pickle an :func:`importable` object: its module and name.

    >>> import json
    >>> by_reference(json.dumps)[1]
    ('json', 'dumps')
    """
    return resolve, (obj.__module__, obj.__qualname__)


def resolve(module_name: str, qualname: str) -> Any:
    """The object ``qualname`` names in the module ``module_name`` (imported).

    >>> resolve("autodiff_tutor.pickling", "MadeFunction.__call__").__name__
    '__call__'
    """
    return functools.reduce(getattr, qualname.split("."), importlib.import_module(module_name))


def with_sources(
    make: Callable[..., Any], args: tuple[Any, ...]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """How to pickle ``make(*args)``: with the source the compiler will read for the
    functions among ``args`` that are shipped by value (see :func:`source_lines`).

    >>> with_sources(len, ("abc",))
    (<built-in function len>, ('abc',))
    """
    sources = [entry for arg in args for entry in source_lines(arg)]
    if not sources:
        return make, args
    return rebuild, (make, args, sources)


def rebuild(
    make: Callable[..., Any], args: tuple[Any, ...], sources: list[tuple[Any, str, list[str]]]
) -> Any:
    """``make(*args)`` in a process that may not have the functions' source files: each
    function gets its file name back, and the file's lines are put where ``inspect``
    reads source (``linecache``), as the sending process read them.

    >>> rebuild(len, ("abc",), [])
    3
    """
    for function, filename, lines in sources:
        if function.__code__.co_filename != filename:
            function.__code__ = _renamed(function.__code__, filename)
        if linecache.getlines(filename, function.__globals__) != lines:
            # mtime None: checkcache() keeps the entry (as it keeps a module loader's)
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    return make(*args)


def _renamed(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` and the code nested in it, with the file name ``filename``."""
    consts = tuple(
        _renamed(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return code.replace(co_filename=filename, co_consts=consts)
