"""The shapes of the values a function held when it returned, from one run.

A picture of a compiled function shows the shape of each value; the generated forward
and backward are run once on the arguments given, with ``sys.settrace`` switched on
for their own frames only (the helpers they call run untraced), and each local
variable's shape is read when the frame returns. The previous trace function (a
debugger, a coverage tool) is put back afterwards.

>>> import numpy as np
>>> def f(x):
...     y = x * 2
...     return y.sum()
>>> with watching(f.__code__) as seen:
...     _ = f(np.ones((2, 3)))
>>> seen["x"], seen["y"]
((2, 3), (2, 3))
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType
from typing import Any


def shape_of(value: Any) -> tuple[int, ...] | None:
    """An array's shape, ``()`` for a Python number, ``None`` for anything else (the
    placeholder of a variable a branch did not assign, which raises when it is used,
    included).

    >>> from autodiff_tutor.runtime.backend import unbound
    >>> shape_of(2.0), shape_of("a"), shape_of(unbound)
    ((), None, None)
    """
    try:
        shape = getattr(value, "shape", None)
        if shape is not None:
            return tuple(int(n) for n in shape)
    except Exception:  # a placeholder, or an object whose shape is not a tuple of ints
        return None
    return () if isinstance(value, (int, float, complex)) and not isinstance(value, bool) else None


@contextmanager
def watching(*codes: CodeType) -> Iterator[dict[str, tuple[int, ...]]]:
    """Inside the block, every frame running one of ``codes`` leaves the shapes of its
    local variables, by name, in the dictionary given (the last run's, for a name
    several frames share)."""
    seen: dict[str, tuple[int, ...]] = {}
    watched = set(codes)

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "return":
            for name, value in frame.f_locals.items():
                shape = shape_of(value)
                if shape is not None:
                    seen[name] = shape
        return local

    def start(frame: Any, event: str, arg: Any) -> Any:
        return local if event == "call" and frame.f_code in watched else None

    previous = sys.gettrace()
    sys.settrace(start)
    try:
        yield seen
    finally:
        sys.settrace(previous)
