"""What compiled code assumed of the names it reads, and the check that it still holds.

The compiler resolves a function's free names while compiling: ``act(x)`` with the
global ``act = np.tanh`` becomes the rule of ``tanh``, a helper's source is read, a
global array's shape is baked into a specialized pair. The generated code reads the
*values* again at every call, but these decisions would go stale if the user rebinds
the name (``act = np.sin``, a helper redefined in a later notebook cell, a global
array of another shape). :func:`assumed` records, for every global and closure name
the function and the helpers it reaches read, what the compiled code depends on:

- the object itself for modules, classes and anything callable (identity);
- the type, shape and dtype for arrays;
- the type for every other value (a float rebound to another float is read anew at
  the call, nothing about it was compiled in);
- the defaults of every function it reads (a default is written into the compiled
  code where a call leaves it out).

:meth:`Assumptions.hold` checks them in a few dictionary reads; where one fails, the
compiled function drops what it compiled and compiles again, so nothing is stale.

>>> import numpy as np
>>> act = np.tanh
>>> def f(x):
...     return np.sum(act(x))
>>> assumptions = assumed(f)
>>> assumptions.hold()
True
>>> act = np.sin
>>> assumptions.hold()
False
"""

from __future__ import annotations

import builtins
import dis
import inspect
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.runtime.backend import Unbound

#: Where a name is read: a namespace dict (globals, then builtins) or a closure cell.
_MISSING = object()

#: Modules whose functions are the library's, not the user's: their own names are
#: not followed (numpy does not rebind ``np.sum`` under the user).
_LIBRARIES = ("numpy", "scipy", "autodiff_tutor", "cupy", "builtins", "math", "functools")


def token(value: Any) -> Any:
    """What compiled code depends on in ``value`` (compared with ``==``; objects
    compared by identity are wrapped in :class:`_Same`).

    >>> token(2.0), token(np.zeros((2, 3)))
    (<class 'float'>, (<class 'numpy.ndarray'>, (2, 3), dtype('float64')))
    """
    kind = type(value)
    if kind is np.ndarray:
        return (kind, value.shape, value.dtype)
    if kind in (float, int, bool, str, type(None), dict, list, tuple, np.float64):
        return kind
    if isinstance(value, (types.ModuleType, type, Unbound)) or callable(value):
        return _Same(value)  # the placeholder 'unbound' too: it has no shape to read
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:  # a cupy array, a numpy scalar
        return (kind, tuple(shape), dtype)
    return kind


class _Same:
    """Equal only to a token of the very same object (held, so its id is not reused)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


@dataclass(frozen=True)
class Assumptions:
    """The names a compiled function reads, where each is read from, and its token
    when the function was compiled."""

    globals_read: tuple[tuple[dict[str, Any], str, Any], ...]
    cells_read: tuple[tuple[Any, Any], ...]
    #: what specializing on a call assumed beyond names (the method an attribute finds
    #: on an object's class): each check says whether it still holds
    checks: tuple[Callable[[], bool], ...] = ()
    #: each function read, with the objects its defaults were read from (a default
    #: written into the compiled code, ``def g(x, c=2.0)`` called as ``g(x)``)
    defaults_read: tuple[tuple[Any, Any, Any], ...] = ()

    def hold(self) -> bool:
        """Whether every name still has the token it had when compiled."""
        # plain loops, no generators: this runs before every cached call
        for namespace, name, expected in self.globals_read:
            value = namespace.get(name, _MISSING)
            if value is _MISSING:
                value = getattr(builtins, name, _MISSING)
            if type(expected) is _Same:  # the common case (np, a helper)
                if value is not expected.value:
                    return False
            elif not _matches(value, expected):
                return False
        for cell, expected in self.cells_read:
            if not _matches(_cell_value(cell), expected):
                return False
        for function, defaults, kwdefaults in self.defaults_read:
            if function.__defaults__ is not defaults or function.__kwdefaults__ is not kwdefaults:
                return False
        for check in self.checks:
            if not check():
                return False
        return True

    def extended(
        self, functions: Iterable[Callable[..., Any]], checks: Iterable[Callable[[], bool]]
    ) -> Assumptions:
        """These assumptions and those of a specialization: the free names of the
        ``functions`` it inlined (methods, lambdas: reached through objects, not names),
        and its ``checks``.

        >>> import numpy as np
        >>> scale = 2.0
        >>> def f(x):
        ...     return x
        >>> def method(self, x):
        ...     return scale * x
        >>> more = assumed(f).extended([method], [lambda: True])
        >>> [name for _, name, _ in more.globals_read], more.hold()
        (['scale'], True)
        """
        more = assumed(*functions) if functions else Assumptions((), ())
        return Assumptions(
            self.globals_read + more.globals_read,
            self.cells_read + more.cells_read,
            self.checks + tuple(checks),
            self.defaults_read + more.defaults_read,
        )

    def pinned(self, names: tuple[str, ...], fn: Callable[..., Any] | None = None) -> Assumptions:
        """These assumptions with the globals ``names`` (and ``fn``'s closure variables
        of those names) held to their values, not only their types: an int the compiled
        code was specialized on (``range(N_LAYERS)`` unrolled over a structure) compiles
        again when it is rebound to another int.

        >>> N = 2
        >>> def f(x):
        ...     return x * N
        >>> held = assumed(f).pinned(("N",))
        >>> N = 3
        >>> assumed(f).hold(), held.hold()
        (True, False)
        """
        if not names:
            return self
        globals_read = tuple(
            (namespace, name, _Equal(namespace[name]) if name in names else expected)
            for namespace, name, expected in self.globals_read
        )
        code = getattr(fn, "__code__", None)
        cells = zip(code.co_freevars, fn.__closure__ or (), strict=False) if code else ()
        pinned_cells = {id(cell) for name, cell in cells if name in names}
        cells_read = tuple(
            (cell, _Equal(_cell_value(cell)) if id(cell) in pinned_cells else expected)
            for cell, expected in self.cells_read
        )
        return Assumptions(globals_read, cells_read, self.checks, self.defaults_read)


class _Equal:
    """Matches a value of the same type that is equal (an int compiled in)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _matches(value: Any, expected: Any) -> bool:
    if type(expected) is _Same:  # the common case (np, a helper): no token made
        return value is expected.value
    if type(expected) is _Equal:
        return type(value) is type(expected.value) and value == expected.value
    return token(value) == expected


def assumed(*functions: Callable[..., Any]) -> Assumptions:
    """The :class:`Assumptions` of ``functions`` now: their free names and those of the
    user functions they reach through them (helpers, helpers of helpers)."""
    globals_read: dict[tuple[int, str], tuple[dict[str, Any], str, Any]] = {}
    cells_read: dict[int, tuple[Any, Any]] = {}
    defaults_read: list[tuple[Any, Any, Any]] = []
    seen: set[int] = set()
    pending = list(functions)
    while pending:
        function = pending.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        defaults_read.append((function, function.__defaults__, function.__kwdefaults__))
        namespace = function.__globals__
        for name in _global_names(function.__code__):
            value = namespace.get(name, _MISSING)
            if value is _MISSING and not hasattr(builtins, name):
                continue  # an attribute's name, or a global not yet defined
            if value is _MISSING:
                value = getattr(builtins, name)
            globals_read[(id(namespace), name)] = (namespace, name, token(value))
            pending += _user_functions(value)
        for cell in function.__closure__ or ():
            value = _cell_value(cell)
            cells_read[id(cell)] = (cell, token(value))
            pending += _user_functions(value)
    return Assumptions(
        tuple(globals_read.values()), tuple(cells_read.values()), (), tuple(defaults_read)
    )


def _global_names(code: types.CodeType) -> Iterator[str]:
    """Every name ``code`` and the code nested in it (comprehensions, lambdas, inner
    functions) reads from the globals."""
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            yield instruction.argval
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _global_names(constant)


def _user_functions(value: Any) -> list[Any]:
    """The Python functions behind ``value`` whose free names compiled code may depend
    on: a user's function, the function of a bound method or a partial, a function
    made differentiable (its ``fn``)."""
    if isinstance(value, Unbound):  # generated code's placeholder: any attribute raises
        return []
    value = getattr(value, "fn", value)  # a Differentiable: its function
    value = getattr(value, "func", value)  # a functools.partial
    value = getattr(value, "__func__", value)  # a bound method
    if not inspect.isfunction(value):
        return []
    module = getattr(value, "__module__", None) or ""
    return [] if module.split(".")[0] in _LIBRARIES else [value]


def _cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet set
        return _MISSING
