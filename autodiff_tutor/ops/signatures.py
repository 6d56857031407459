"""Binding an op's arguments to the user's ``forward`` / ``backward``, once per signature.

An op calls the user's methods on every call; a call that cannot bind must fail with a
clear :class:`~autodiff_tutor.errors.ArgumentError` (not a ``TypeError`` from inside),
and a call that bound once binds again (positional arguments bind by their count), so
the signature work is done once per function and count.

>>> class Op:
...     name = "op"
...     def backward(self, d_y, flags, x):
...         return d_y
>>> bind_arguments(Op().backward, (1.0, (True,), 2.0), "backward", Op(), lambda: "...")
>>> positional_names(Op().backward)
('d_y', 'flags', 'x')
"""

from __future__ import annotations

import inspect
from typing import Any

from autodiff_tutor.errors import ArgumentError

__all__ = ["bind_arguments", "gradient_flags", "positional_names", "signature_of"]

_SIGNATURES: dict[Any, inspect.Signature] = {}


def signature_of(fn: Any) -> inspect.Signature:
    """``inspect.signature(fn)``, computed once per function (ops call it every time).

    >>> class F:
    ...     def forward(self, X, alpha):
    ...         return X * alpha
    >>> list(signature_of(F().forward).parameters)
    ['X', 'alpha']
    """
    function = getattr(fn, "__func__", fn)
    key = (function, hasattr(fn, "__self__"))
    if key not in _SIGNATURES:
        _SIGNATURES[key] = inspect.signature(fn)
    return _SIGNATURES[key]


_BINDS: set[Any] = set()


def bind_arguments(fn: Any, args: tuple[Any, ...], method: str, op: Any, layout: Any) -> None:
    """Fail clearly when ``fn`` cannot take ``args`` (instead of a TypeError inside).

    Binding positional arguments depends on their count only, so a count that bound
    once is remembered and not bound again. ``layout()`` (the expected parameters, for
    the hint) is only built on an error.

    >>> class Op:
    ...     name = "square"
    ...     def forward(self, x):
    ...         return x * x
    >>> bind_arguments(Op().forward, (1.0, 2.0), "forward", Op(), lambda: "x")
    Traceback (most recent call last):
        ...
    autodiff_tutor.errors.ArgumentError: forward of 'square' cannot take the 2 argument(s)...
    """
    key = (getattr(fn, "__func__", fn), hasattr(fn, "__self__"), len(args))
    try:
        if key in _BINDS:
            return
        signature = signature_of(fn)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*args)
    except TypeError as exc:
        raise ArgumentError(
            f"{method} of {op.name!r} cannot take the {len(args)} argument(s) it is given: {exc}",
            hint=f"its parameters after self must be: {layout()}",
        ) from None
    _BINDS.add(key)


_NAMES: dict[Any, tuple[str, ...]] = {}


def positional_names(fn: Any) -> tuple[str, ...]:
    """The names of ``fn``'s positional parameters (none when it has no signature).

    >>> def forward(X, alpha, *rest, scale=1.0):
    ...     return X
    >>> positional_names(forward)
    ('X', 'alpha')
    """
    key = (getattr(fn, "__func__", fn), hasattr(fn, "__self__"))
    try:
        return _NAMES[key]
    except (KeyError, TypeError):
        pass
    try:
        parameters = signature_of(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    names = tuple(
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )
    _NAMES[key] = names
    return names


def gradient_flags(compute_gradients: Any, num_inputs: int, op: Any) -> tuple[bool, ...]:
    """``compute_gradients`` as a tuple of one bool per input of ``op`` (a clear error
    for another count).

    >>> class Op:
    ...     name = "op"
    >>> gradient_flags((True, 0), 2, Op()), gradient_flags(True, 1, Op())
    ((True, False), (True,))
    """
    if type(compute_gradients) is tuple and len(compute_gradients) == num_inputs:
        if all(type(f) is bool for f in compute_gradients):
            return compute_gradients  # the generated code's literal tuple: nothing to convert
    if isinstance(compute_gradients, bool):
        compute_gradients = (compute_gradients,)
    flags = tuple(bool(f) for f in compute_gradients)
    if len(flags) != num_inputs:
        raise ArgumentError(
            f"compute_gradients for {op.name!r} has {len(flags)} flag(s) for {num_inputs} input(s)",
            hint="pass one bool per input",
        )
    return flags
