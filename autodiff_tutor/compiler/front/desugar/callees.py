"""What calls of functions known while compiling (the function's globals) mean for
desugaring: ``*p`` in a call of a function with a fixed number of parameters, as
``scipy.optimize`` code writes it: ``model(t, *p)``, ``beale(*p)``, ``np.hypot(*v)``
become ``model(t, p[0], p[1], p[2])``..., after a check that ``p`` has as many items
as the function takes (Python's ``TypeError`` otherwise, as calling it would raise);
and a loop over an iterator (``itertools.combinations(...)``, ``map(...)``, a
generator function), whose items the indexed loop holds in a list
(:func:`gives_iterator`).

Only for a global function of the user's whose positional parameters have no
defaults (and no ``*args``), or a numpy ufunc: there, how many items ``*p`` passes is
known while compiling. The fence (:mod:`.front.fence`) refuses the other ``*``, located.

>>> import numpy as np
>>> def model(t, a, b):
...     return a * t + b
>>> call = ast.parse("model(t, *p)").body[0].value
>>> spread_count(call, {"model": model, "np": np}, set())
2
>>> spread_count(ast.parse("np.hypot(*v)").body[0].value, {"np": np}, set())
2
>>> before = []
>>> print(ast.unparse(spread_call(call, 2, before, call, lambda stem: stem + "_1")))
model(t, p[0], p[1])
>>> print(ast.unparse(before[0]))  # doctest: +ELLIPSIS
if len(p) != 2:
    raise TypeError('model(t, *p): p must have 2 items, as many as the parameters it ...')
"""

from __future__ import annotations

import ast
import builtins
import inspect
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from autodiff_tutor.syntax import copy_tree

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def spread_count(call: ast.Call, namespace: dict | None, local: set[str]) -> int | None:
    """How many values the one ``*p`` of ``call`` passes, when the function called is
    known while compiling and takes a fixed number of positional parameters; else
    ``None``. (``local``: the names the function assigns, which hide its globals.)"""
    starred = [a for a in call.args if isinstance(a, ast.Starred)]
    if len(starred) != 1 or call.keywords or namespace is None:
        return None
    if isinstance(starred[0].value, ast.Attribute) and starred[0].value.attr == "shape":
        return None  # np.random.rand(*x.shape): the fence's own case
    callee = _global(call.func, namespace, local)
    if isinstance(callee, np.ufunc):
        total = callee.nin
    elif inspect.isfunction(callee):
        parameters = list(inspect.signature(callee).parameters.values())
        positional = [p for p in parameters if p.kind in _POSITIONAL]
        empty = inspect.Parameter.empty  # *p must fill a fixed count, and no keyword
        if any(
            p.kind is inspect.Parameter.VAR_POSITIONAL
            or (p.kind in _POSITIONAL and p.default is not empty)
            or (p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is empty)
            for p in parameters
        ):
            return None
        total = len(positional)
    else:
        return None
    count = total - (len(call.args) - 1)
    return count if count >= 0 else None


def spread_call(
    call: ast.Call, count: int, before: list[ast.stmt], at: ast.AST, fresh: Callable[[str], str]
) -> ast.Call:
    """``call`` with its ``*p`` written as ``p[0], ..., p[count - 1]``; ``before``
    gets the check of ``len(p)`` (and ``p`` held in a name, computed once).

    >>> before = []
    >>> call = ast.parse("f(*np.exp(q))").body[0].value
    >>> print(ast.unparse(spread_call(call, 2, before, call, lambda stem: stem + "_1")))
    f(spread_1[0], spread_1[1])
    >>> print(ast.unparse(before[0]))
    spread_1 = np.exp(q)
    """
    index = next(i for i, a in enumerate(call.args) if isinstance(a, ast.Starred))
    value = call.args[index].value
    said = ast.unparse(call)
    if not isinstance(value, ast.Name):
        held = fresh("spread")
        before.append(_located(ast.Assign([ast.Name(held, ast.Store())], value), at))
        value = ast.Name(held, ast.Load())
    length = ast.Call(ast.Name("len", ast.Load()), [copy_tree(value)], [])
    differs = ast.Compare(length, [ast.NotEq()], [ast.Constant(count)])
    message = (
        f"{said}: {ast.unparse(call.args[index].value)} must have {count} items, as many as "
        "the parameters it fills when this function was compiled"
    )
    error = ast.Call(ast.Name("TypeError", ast.Load()), [ast.Constant(message)], [])
    before.append(_located(ast.If(differs, [_located(ast.Raise(error, None), at)], []), at))
    items = [ast.Subscript(copy_tree(value), ast.Constant(k), ast.Load()) for k in range(count)]
    args = [*call.args[:index], *items, *call.args[index + 1 :]]
    return ast.copy_location(ast.Call(call.func, args, []), call)


def assigned_names(tree: ast.AST) -> set[str]:
    """The names a function assigns or takes as parameters (they hide its globals).

    >>> sorted(assigned_names(ast.parse("def f(x):\\n    y = x").body[0]))
    ['x', 'y']
    """
    stored = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    return stored | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}


def is_function_value(value: Any) -> bool:
    """Whether ``value`` is a function a call can be resolved to while compiling (not a
    class, a module or an array).

    >>> is_function_value(np.tanh), is_function_value(np), is_function_value(np.ones(2))
    (True, False, False)
    """
    return (
        callable(value)
        and not isinstance(value, (type, types.ModuleType))
        and not hasattr(value, "shape")
    )


def function_defaults(function: Any, given: set[str]) -> list[str]:
    """The parameters of ``function`` that a call giving ``given`` leaves to a default
    that is a function (``def h(x, act=np.tanh)`` called as ``h(x)``): the compiled code
    is specialized on it, as on a function passed.

    >>> function_defaults(lambda x, act=np.tanh, c=2.0: act(x) * c, {"x"})
    ['act']
    """
    return [
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if name not in given
        and parameter.default is not parameter.empty
        and is_function_value(parameter.default)
    ]


def gives_iterator(call: ast.expr, namespace: dict | None, local: set[str]) -> bool:
    """Whether ``call`` (a loop's iterable) calls a function known while compiling that
    gives an iterator, which has no ``len`` and no indexing (the indexed loop needs
    both): ``map``, ``filter``, ``iter``, ``itertools``' functions, a generator function.

    >>> import itertools
    >>> calls = ("itertools.combinations(r, 2)", "map(f, xs)", "sorted(xs)")
    >>> [gives_iterator(ast.parse(c).body[0].value, {"itertools": itertools}, set()) for c in calls]
    [True, True, False]
    """
    if not isinstance(call, ast.Call) or namespace is None:
        return False
    callee = _global(call.func, namespace, local)
    if callee is None and isinstance(call.func, ast.Name) and call.func.id not in local:
        callee = getattr(builtins, call.func.id, None)
    return (
        callee in (map, filter, iter)
        or getattr(callee, "__module__", None) == "itertools"
        or inspect.isgeneratorfunction(callee)
    )


def listed(iterable: ast.expr, namespace: dict | None, local: set[str]) -> ast.expr:
    """A loop's ``iterable`` with what the indexed loop cannot read by position held
    in ``list(...)``: an iterator of a known function, or a global dict or set, alone
    or inside ``zip``/``enumerate``/``reversed``.

    >>> print(ast.unparse(listed(ast.parse("enumerate(S)").body[0].value, {"S": {2, 3}}, set())))
    enumerate(list(S))
    """
    if gives_iterator(iterable, namespace, local) or unordered_global(iterable, namespace, local):
        return ast.copy_location(ast.Call(ast.Name("list", ast.Load()), [iterable], []), iterable)
    if (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id in ("zip", "enumerate", "reversed")
        and iterable.func.id not in local
    ):
        iterable.args = [listed(a, namespace, local) for a in iterable.args]
    return iterable


def unordered_global(iterable: ast.expr, namespace: dict | None, local: set[str]) -> bool:
    """Whether a loop's ``iterable`` is a global (``SCALES``, ``config.SCALES``) that
    is not read by position: a dict (a loop gives its keys), a set, an iterator.

    >>> unordered_global(ast.parse("SCALES").body[0].value, {"SCALES": {1: 0.5}}, set())
    True
    >>> unordered_global(ast.parse("WS").body[0].value, {"WS": [0.5, 2.0]}, set())
    False
    """
    if namespace is None or not isinstance(iterable, (ast.Name, ast.Attribute)):
        return False
    value = _global(iterable, namespace, local, modules_only=False)
    if value is None or isinstance(value, (list, tuple, range, str)) or hasattr(value, "shape"):
        return False
    return hasattr(value, "keys") or not hasattr(value, "__getitem__")


def _global(func: ast.expr, namespace: dict, local: set[str], modules_only: bool = True) -> Any:
    """The object that ``f`` or ``module.f`` (``obj.attr`` too, unless ``modules_only``)
    names among the function's globals, now."""
    path = []
    while isinstance(func, ast.Attribute):
        path.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id in local:
        return None
    value = namespace.get(func.id)
    for attr in reversed(path):
        if modules_only and not inspect.ismodule(value):
            return None
        value = getattr(value, attr, None)
    return value


def _located(node: ast.stmt, at: ast.AST) -> ast.stmt:
    return ast.fix_missing_locations(ast.copy_location(node, at))
