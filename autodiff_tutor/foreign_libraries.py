"""Other autodiff libraries (autograd, JAX, PyTorch, TensorFlow): telling their values
and their code from this toolkit's, and what to tell a user who mixes them.

Two autodiff systems on one computation cannot follow each other's derivatives: an
autograd ``ArrayBox`` or a JAX tracer passed into the compiled code or a trace, or a
traced array handed to ``autograd.grad`` or ``torch.sin``, would end in the other
library's raw error, or in a silently wrong gradient. The front doors and tracing ask
this module whether a value or a frame belongs to one of those libraries, and refuse
with a located error that names both libraries and says what to do.

Recognition is by the module that defines a value's type (or a frame's code), so
none of these libraries is ever imported here: a library that is not installed has
no values to meet.

>>> import numpy as np
>>> library_of(np.ones(2)) is None
True
>>> Box = type("ArrayBox", (), {"__module__": "autograd.numpy.numpy_boxes"})
>>> library_of(Box()), describe(Box())
('autograd', 'an autograd ArrayBox')
"""

from __future__ import annotations

from types import FrameType
from typing import Any

#: The top-level package of another autodiff library, and the library's name.
LIBRARIES = {
    "autograd": "autograd",
    "jax": "JAX",
    "jaxlib": "JAX",
    "torch": "PyTorch",
    "tensorflow": "TensorFlow",
}

#: How a value of each library becomes plain data (cutting that library's gradient).
_CONVERSIONS = {
    "autograd": "an autograd ArrayBox exists only inside autograd.grad, which follows "
    "plain numpy code: call the plain function there, without autodiff_tutor",
    "JAX": "a concrete JAX array converts to a numpy array with np.asarray(a); inside "
    "jax.grad or jax.jit, call a function written with jax.numpy",
    "PyTorch": "a tensor converts to a numpy array with t.detach().cpu().numpy()",
    "TensorFlow": "a tensor converts to a numpy array with t.numpy()",
}

_PLAIN = (int, float, bool, str, type(None))


def _library_of_module(module: str | None) -> str | None:
    return LIBRARIES.get((module or "").partition(".")[0])


def library_of(value: Any) -> str | None:
    """The autodiff library whose type ``value`` is (or derives from), or ``None``.

    >>> library_of(2.0) is None
    True
    """
    kind = type(value)
    try:
        return _BY_TYPE[kind]  # asked of operands and arguments: one lookup
    except KeyError:
        pass
    found = (_library_of_module(base.__module__) for base in kind.__mro__[:-1])
    library = next((name for name in found if name is not None), None)  # a subclass too
    if len(_BY_TYPE) > 4096:  # classes made on the fly: keep the cache bounded
        _BY_TYPE.clear()
    _BY_TYPE[kind] = library
    return library


_BY_TYPE: dict[type, str | None] = {}


def first_foreign(values: Any, depth: int = 4) -> tuple[str, Any] | None:
    """``(library, value)`` for the first value of another autodiff library in
    ``values`` (a value, or lists, tuples and dicts of them, nested up to ``depth``),
    or ``None``.

    >>> import numpy as np
    >>> first_foreign([np.ones(2), {"w": 1.0}]) is None
    True
    """
    if isinstance(values, _PLAIN):
        return None
    library = library_of(values)
    if library is not None:
        return library, values
    if depth == 0:
        return None
    if isinstance(values, dict):
        values = values.values()
    elif not isinstance(values, (list, tuple)):
        return None
    for value in values:
        found = first_foreign(value, depth - 1)
        if found is not None:
            return found
    return None


def library_of_code(frame: FrameType) -> str | None:
    """The autodiff library whose code ``frame`` runs (by its module's name), or ``None``.

    >>> import sys
    >>> library_of_code(sys._getframe()) is None
    True
    """
    return _library_of_module(frame.f_globals.get("__name__"))


def describe(value: Any) -> str:
    """``value`` as a message names it: its library and its type.

    >>> describe(type("Tensor", (), {"__module__": "torch"})())
    'a PyTorch Tensor'
    """
    library = library_of(value)
    article = "an" if library and library[0] in "aeiouAEIOU" else "a"
    return f"{article} {library} {type(value).__name__}"


def advice(library: str) -> str:
    """What to do when ``library``'s values or code meet this toolkit's: take the
    gradient with one of them.

    >>> advice("PyTorch")
    "take the gradient with one library: autodiff_tutor's on numpy arrays, or PyTorch's"
    """
    return f"take the gradient with one library: autodiff_tutor's on numpy arrays, or {library}'s"


def conversion(library: str) -> str:
    """How a value of ``library`` becomes plain data (which cuts ``library``'s gradient).

    >>> conversion("TensorFlow")
    'a tensor converts to a numpy array with t.numpy()'
    """
    return _CONVERSIONS[library]


__all__ = [
    "LIBRARIES",
    "advice",
    "conversion",
    "describe",
    "first_foreign",
    "library_of",
    "library_of_code",
]
