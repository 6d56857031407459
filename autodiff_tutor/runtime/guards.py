"""Facts and guards: what a specialized pair assumes of a value, checked where it runs.

A pair specialized on the argument shapes and dtypes (see
``autodiff_tutor.compiler.specialized``) knows the *fact* of every value
(:func:`fact_of`) from one probe run. Where a value's fact may depend on values, not
only on the argument shapes (the outputs of a custom operation, the gradients it
returns), the specialized code checks it right after the call that made it:
``expect_array(a, (16, 16), 'float64')``. A mismatch raises :class:`GuardFailed`,
which the caller (``value_and_grad``) catches: it drops that specialization and runs
the general pair for the call.

>>> import numpy as np
>>> expect_array(np.zeros((2, 3)), (2, 3), "float64")
>>> expect_array(np.zeros(4), (2, 3), "float64")
Traceback (most recent call last):
...
autodiff_tutor.runtime.guards.GuardFailed: float64[4], made for float64[2, 3]
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from autodiff_tutor.runtime.backend import Like


class GuardFailed(Exception):
    """A value's fact is not the one a specialized pair was made for (internal: the
    caller runs the general pair instead; users never see it)."""


def fact_of(value: Any) -> Any:
    """The fact recorded for ``value``: ``("array", shape, dtype)`` for a numpy array,
    ``("scalar", (), dtype)`` for a numpy scalar, the type's name for anything else.

    >>> fact_of(np.zeros((2, 3))), fact_of(np.float32(1.0)), fact_of([1])
    (('array', (2, 3), 'float64'), ('scalar', (), 'float32'), 'list')
    """
    if type(value) is np.ndarray or type(value) is Like:  # Like: what memory keeps of one
        return ("array", tuple(value.shape), np.dtype(value.dtype).name)
    if isinstance(value, np.generic):
        return ("scalar", (), value.dtype.name)
    return type(value).__name__


def expect_array(value: Any, shape: tuple[int, ...], dtype: str) -> None:
    """Raise :class:`GuardFailed` unless ``value`` is a numpy array of ``shape`` and
    ``dtype`` (the cheap check of the common fact)."""
    if type(value) is not np.ndarray or value.shape != shape or value.dtype != _dtype(dtype):
        made_for = _described(("array", shape, dtype))
        raise GuardFailed(f"{_described(fact_of(value))}, made for {made_for}")


def expect_arrays(values: tuple[Any, ...], shapes: tuple[Any, ...], dtype: str) -> None:
    """:func:`expect_array` for each of ``values`` with its shape in ``shapes`` and one
    ``dtype`` (the gradients a custom op's backward returns, checked in one line).

    >>> expect_arrays((np.ones(2), np.ones((1, 3))), ((2,), (1, 3)), "float64")
    """
    if len(values) != len(shapes):
        raise GuardFailed(f"{len(values)} values, made for {len(shapes)}")
    expected = _dtype(dtype)
    for value, shape in zip(values, shapes, strict=False):  # lengths checked above
        if type(value) is not np.ndarray or value.shape != shape or value.dtype != expected:
            expect_array(value, shape, dtype)


def expect_fact(value: Any, fact: Any) -> None:
    """Raise :class:`GuardFailed` unless ``value`` has the fact ``fact`` (any kind).

    >>> expect_fact(np.float64(2.0), ("scalar", (), "float64"))
    >>> expect_fact(2.0, ("scalar", (), "float64"))
    Traceback (most recent call last):
    ...
    autodiff_tutor.runtime.guards.GuardFailed: float, made for float64
    """
    if fact_of(value) != fact:
        raise GuardFailed(f"{_described(fact_of(value))}, made for {_described(fact)}")


def expect_path(test: Any, taken: bool) -> None:
    """Raise :class:`GuardFailed` unless the branch test ``test`` goes the way ``taken``
    (the path the specialized code was made for).

    >>> expect_path(np.sum(np.ones(2)) > 0, True)
    """
    if bool(test) is not taken:
        raise GuardFailed(f"a branch test is {not taken}, made for {taken}")


@functools.cache
def _dtype(name: str) -> np.dtype:
    """The dtype named ``name``, made once: comparing with a dtype costs half of
    comparing with its name (which numpy parses on each comparison)."""
    return np.dtype(name)


def _described(fact: Any) -> str:
    if isinstance(fact, tuple):
        kind, shape, dtype = fact
        return f"{dtype}[{', '.join(map(str, shape))}]" if kind == "array" else dtype
    return str(fact)
