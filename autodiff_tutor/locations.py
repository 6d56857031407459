"""Where in the user's code something happened: the frame that called the toolkit.

Errors point at the user's line, not at the toolkit's internals: the first frame
outside ``autodiff_tutor``, the array libraries and other autodiff libraries (autograd
calling the user's function calls it from its own code) is the user's, and Python's
instruction positions give the exact column of the call that went wrong. Generated
code registers the origin of its lines here (:data:`ORIGINS`), so an error raised in
it can be told apart from the user's own ``raise``. Tracing, the compiler, custom ops
and the front door all locate their errors with this module.

>>> def where_am_i():
...     return here()
>>> where_am_i().startswith("<doctest")
True
"""

from __future__ import annotations

import ast
import dis
import functools
import linecache
import os
import sys
import sysconfig
import warnings
import weakref
from types import FrameType, TracebackType
from typing import Any

import numpy as np

from autodiff_tutor.errors import (
    Location,
    TracingWarning,
    cell_name,
    locate_calls_with,
    place,
    wrap,
)
from autodiff_tutor.foreign_libraries import library_of_code

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIPPED = [_PACKAGE_DIR + os.sep, os.path.dirname(np.__file__) + os.sep]
for _name in ("cupy", "cupyx", "array_api_strict", "array_api_compat"):
    _module = sys.modules.get(_name)
    if _module is not None and getattr(_module, "__file__", None):
        _SKIPPED.append(os.path.dirname(_module.__file__) + os.sep)


#: Each generated file's table of origins (its lines that come from the user's code, by
#: line number), while a function compiled from it lives: the functions hold the table
#: (its origins refer to the user's function, which owns them: a table held here would
#: keep them all alive).
ORIGINS: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()

#: Where Python's own and installed libraries live (not the user's code).
_LIBRARIES = tuple(
    {
        sysconfig.get_paths()[kind] + os.sep
        for kind in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)


@functools.lru_cache(maxsize=4096)
def is_internal(filename: str) -> bool:
    """Whether code in ``filename`` is not the user's: this toolkit's (the code it
    generates included), Python's own modules (``ast``, whose visitors the compiler
    runs), installed libraries', the array libraries'.

    >>> is_internal(np.__file__), is_internal(ast.__file__), is_internal("/home/me/model.py")
    (True, True, False)
    """
    if filename.startswith(("<frozen", "<autodiff_tutor generated")):
        return True  # Python's own frames, and the code the compiler generated
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    return any(path.startswith(prefix) for prefix in _SKIPPED) or (
        path.startswith(_LIBRARIES)
        or "array_api_strict" in path
        or f"{os.sep}cupy{os.sep}" in path
        or f"{os.sep}scipy{os.sep}" in path  # an error inside scipy points at the user's call
    )


def is_users(frame: FrameType) -> bool:
    """Whether ``frame`` runs the user's code: not this toolkit's or an array library's
    (:func:`is_internal`), nor another autodiff library's (autograd's ``grad`` calling
    the user's function).

    >>> import sys
    >>> is_users(sys._getframe())
    True
    """
    return not is_internal(frame.f_code.co_filename) and library_of_code(frame) is None


def user_frame() -> FrameType | None:
    """The innermost frame that belongs to the user's code (:func:`is_users`).

    >>> user_frame().f_code.co_filename.startswith("<doctest")
    True
    """
    frame = sys._getframe(1)
    while frame is not None and (  # is_users, inlined: every traced operation asks
        is_internal(frame.f_code.co_filename) or library_of_code(frame) is not None
    ):
        frame = frame.f_back
    return frame


def in_scipy() -> bool:
    """Whether the innermost call the user's frame made is running scipy's code (scipy
    converts its arguments with ``np.asarray``, which tracing cannot follow).

    >>> in_scipy()
    False
    """
    frame, user, inside = sys._getframe(1), user_frame(), False
    while frame is not None and frame is not user:
        inside = inside or f"{os.sep}scipy{os.sep}" in frame.f_code.co_filename
        frame = frame.f_back
    return inside


_RAISE = dis.opmap["RAISE_VARARGS"]


def at_raise(tb: TracebackType) -> bool:
    """Whether a traceback entry stopped at a ``raise`` or ``assert`` statement (an
    exception raised on purpose), not at an operation that failed.

    >>> try:
    ...     raise ValueError("on purpose")
    ... except ValueError as error:
    ...     at_raise(error.__traceback__)
    True
    """
    return _opcode(tb.tb_frame.f_code, tb.tb_lasti) == _RAISE


def _opcode(code: Any, offset: int) -> int | None:
    return code.co_code[offset] if 0 <= offset < len(code.co_code) else None


def here() -> str:
    """``"file.py:12"`` for the user's current line (``"cell In[3], line 2"`` in a
    notebook cell; ``"?"`` when it is unknown).

    >>> here().split(":")[-1].isdigit()
    True
    """
    frame = user_frame()
    if frame is None:
        return "?"
    return place(frame.f_code.co_filename, frame.f_lineno)


_STORES = {dis.opmap[name] for name in ("STORE_SUBSCR", "STORE_SLICE") if name in dis.opmap}


def storing_item(frame: FrameType | None = None) -> bool:
    """Whether the user's current instruction stores into a subscript (``out[i] = v``).

    >>> storing_item()
    False
    """
    frame = frame if frame is not None else user_frame()
    return frame is not None and _opcode(frame.f_code, frame.f_lasti) in _STORES


def inside_numpy_check() -> bool:
    """Whether numpy's testing assertions (``np.testing.assert_allclose``...) are
    reading the value: they only compare numbers and return ``None`` or raise, so
    nothing computed from what they read can reach a gradient.

    >>> inside_numpy_check()
    False
    """
    frame = sys._getframe(1)
    while frame is not None and is_internal(frame.f_code.co_filename):
        if frame.f_globals.get("__name__", "").startswith("numpy.testing"):
            return True
        frame = frame.f_back
    return False


_STACK_SHUFFLES = {"SWAP", "COPY", "ROT_TWO", "ROT_THREE", "ROT_FOUR", "DUP_TOP_TWO", "CACHE"}


def stores_back(frame: FrameType | None = None) -> bool:
    """Whether the user's current instruction (an augmented operator) is followed by a
    store into a subscript: ``y[i] += v`` updates ``y[i]`` and then writes it into ``y``.

    >>> stores_back()
    False
    """
    frame = frame if frame is not None else user_frame()
    return frame is not None and _stored_after(frame.f_code, frame.f_lasti)


@functools.lru_cache(maxsize=1024)
def _stored_after(code: Any, offset: int) -> bool:
    instructions = iter(dis.get_instructions(code))
    for instruction in instructions:
        if instruction.offset == offset:
            break
    for instruction in instructions:
        if instruction.opname not in _STACK_SHUFFLES:
            return instruction.opcode in _STORES
    return False


#: What :func:`stored_into` gives where the container cannot be told without running code.
UNKNOWN = object()


def stored_into(frame: FrameType | None = None) -> Any:
    """The container ``c`` of the user's current ``c[k] op= v`` (into which Python
    stores the result after the in-place operator), read from the statement's source
    and the frame's names without running the user's code: a name, an entry of a list
    or dict by a key written out or held in a name (``rows[-1][0] += v``), an
    attribute an object holds (``self.cache["h"] += v``). Where ``c`` is part of an
    array (``y[0][1] += v``), that array; :data:`UNKNOWN` where it cannot be told (a
    call, a computed key or attribute).

    >>> def f(rows):
    ...     return stored_into(sys._getframe())
    >>> f([1.0]) is UNKNOWN  # the current instruction is no augmented assignment
    True
    """
    frame = frame if frame is not None else user_frame()
    source = call_source(frame) if frame is not None else None
    container = _stored_container(source.strip()) if source else None
    return UNKNOWN if container is None else _named_value(container, frame)


@functools.lru_cache(maxsize=1024)
def _stored_container(statement: str) -> ast.expr | None:
    """``c`` of the statement ``c[k] op= v``, else ``None``."""
    try:
        node = ast.parse(statement).body[0]
    except (SyntaxError, IndexError):
        return None
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
        return node.target.value
    return None


def _named_value(node: ast.expr, frame: FrameType) -> Any:
    """The value of ``node`` in ``frame``, where reading it runs no code (see
    :func:`stored_into`); an array reached on the way stands for its parts."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _named_value(node.operand, frame)
        return -value if type(value) is int else UNKNOWN
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in scope:
                return scope[node.id]
        return UNKNOWN
    if isinstance(node, (ast.Attribute, ast.Subscript)):
        base = _named_value(node.value, frame)
        if base is UNKNOWN or hasattr(base, "shape"):
            return base  # an array's part (y.T, y[0]) is that array's memory
        if isinstance(node, ast.Attribute):  # an attribute the object holds, not computed
            held = getattr(base, "__dict__", {})
            return held.get(node.attr, UNKNOWN) if isinstance(held, dict) else UNKNOWN
        key = _named_value(node.slice, frame)
        if key is UNKNOWN or not isinstance(base, (list, tuple, dict)):
            return UNKNOWN
        try:
            return base[key]
        except (LookupError, TypeError):
            return UNKNOWN
    return UNKNOWN


def _positions(frame: FrameType) -> tuple[int, int, int, int] | None:
    try:
        positions = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    except (AttributeError, IndexError):  # Python < 3.11 has no co_positions
        return None
    if None in positions:
        return None
    return positions  # type: ignore[return-value]


def location(frame: FrameType | None = None) -> Location | None:
    """The user's current call as a :class:`~autodiff_tutor.errors.Location` (with caret).

    >>> def f():
    ...     return location()
    >>> f().text.strip()
    'return location()'
    """
    frame = frame if frame is not None else user_frame()
    if frame is None:
        return None
    filename = frame.f_code.co_filename
    positions = _positions(frame)
    if positions is None:
        text = linecache.getline(filename, frame.f_lineno)
        return Location(filename, frame.f_lineno, 0, text, max(1, len(text.rstrip())))
    line, end_line, column, end_column = positions
    text = linecache.getline(filename, line)
    length = end_column - column if end_line == line else len(text.rstrip()) - column
    return Location(filename, line, column, text, max(1, length))


locate_calls_with(location)  # a front door's error without a place: the user's call


def call_source(frame: FrameType | None = None) -> str | None:
    """The source text of the call the user's frame is executing, when it can be read.

    >>> def f(*args):
    ...     return call_source()
    >>> f(1, 2)
    'call_source()'
    """
    frame = frame if frame is not None else user_frame()
    positions = _positions(frame) if frame is not None else None
    if positions is None:
        return None
    line, end_line, column, end_column = positions
    lines = [linecache.getline(frame.f_code.co_filename, n) for n in range(line, end_line + 1)]
    if not lines or not lines[0]:
        return None
    if len(lines) == 1:
        return lines[0][column:end_column]
    return lines[0][column:] + "".join(lines[1:-1]) + lines[-1][:end_column]


def argument_texts(frame: FrameType | None = None) -> list[str] | None:
    """The source text of each positional argument of the user's current call.

    ``gradient(loss, w)`` gives ``["loss", "w"]``, so that messages can use the
    names the user wrote.

    >>> def f(*args):
    ...     return argument_texts()
    >>> f(1, 2)
    []
    """
    source = call_source(frame)
    if source is None:
        return None
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, ast.Call) or any(isinstance(a, ast.Starred) for a in tree.args):
        return None
    return [ast.unparse(argument) for argument in tree.args]


def warn(message: str, category: type[Warning] = TracingWarning) -> None:
    """Issue a warning attributed to the user's line (not to the toolkit's), its text
    wrapped at word boundaries (:func:`~autodiff_tutor.errors.wrap`). From a notebook
    cell, the warning names the cell as IPython's tracebacks do (``Cell In[3]:2``), not
    the kernel's temporary file.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn("careful")
    >>> caught[0].filename.startswith("<doctest"), str(caught[0].message)
    (True, 'careful')
    """
    target, frame, level = user_frame(), sys._getframe(1), 2
    while frame is not None and frame is not target:
        frame, level = frame.f_back, level + 1
    if target is None or frame is None:
        warnings.warn(wrap(message, after=f"{category.__name__}: "), category, stacklevel=2)
        return
    filename, line = target.f_code.co_filename, target.f_lineno
    cell = cell_name(filename)
    label = filename if cell is None else f"Cell {cell}"
    text = wrap(message, after=f"{label}:{line}: {category.__name__}: ")  # as it is shown
    if cell is None:
        warnings.warn(text, category, stacklevel=level)
        return
    lines = linecache.getlines(filename)  # cached under the cell's name, for the source line
    linecache.cache[label] = (sum(map(len, lines)), None, lines, label)
    warnings.warn_explicit(
        text,
        category,
        label,
        line,
        module=target.f_globals.get("__name__"),
        registry=target.f_globals.setdefault("__warningregistry__", {}),
    )


def is_user_file(filename: str) -> bool:
    """Code the user wrote: not the toolkit's (nor generated), not a library's.

    >>> is_user_file(np.__file__), is_user_file("/home/me/train.py")
    (False, True)
    """
    return not is_internal(filename)


def raised_on_purpose(error: BaseException) -> bool:
    """Whether a ``raise`` or ``assert`` statement of the user's raised ``error``: in
    their function (which the generated code keeps) or in their code it calls.

    >>> try:
    ...     np.sum(np.ones(2) + np.ones(3))
    ... except ValueError as error:
    ...     raised_on_purpose(error)
    False
    """
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    filename = tb.tb_frame.f_code.co_filename
    return at_raise(tb) and (filename in ORIGINS or is_user_file(filename))
