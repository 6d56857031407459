"""The user's code as a running trace calls it: a copy of each function whose globals
give the tracing-aware numpy, scipy and math
(:mod:`~autodiff_tutor.tracing.library_namespaces`) in place of the modules.

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

>>> import numpy as np
>>> def f(x):
...     return np.zeros(2)
>>> copy = rewired(f)
>>> copy is f, copy(1.0)  # no trace running: numpy's own result
(False, array([0., 0.]))
"""

from __future__ import annotations

import builtins
import dis
import functools
import types
import weakref
from typing import Any

from autodiff_tutor.locations import is_user_file
from autodiff_tutor.tracing.library_namespaces import seen_by_trace

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
    known = _COPIES.get(fn)
    if known is not None and known.__closure__ == fn.__closure__:
        return known
    closure = _closure(fn)
    copy = types.FunctionType(
        fn.__code__, _globals_view(fn.__globals__), fn.__name__, None, closure
    )
    functools.update_wrapper(copy, fn)
    del copy.__wrapped__  # the copy must not keep fn alive (fn keys the cache weakly)
    if closure == fn.__closure__:
        _COPIES[fn] = copy
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


__all__ = ["TracingGlobals", "rewired", "seen_in_trace"]
