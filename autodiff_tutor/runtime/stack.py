"""The memory stack of generated code: each loop iteration or branch path of the
forward pushes the memory its backward needs; the backward pops it, in reverse order.

A pair specialized on argument shapes and dtypes keeps the numbers of known dtype
that a counted loop saves in arrays instead, one slot per iteration
(:func:`iteration_slots`): 8 bytes for a float, where a tuple on the stack holds
objects.

(Not to be confused with the tracing mode's *tape*, the record of operations.)

>>> stack = Stack()
>>> stack.push((1.0, 2.0))
>>> stack.push((3.0,))
>>> stack.pop(), stack.pop(), len(stack)
((3.0,), (1.0, 2.0), 0)
"""

from __future__ import annotations

from collections.abc import Sized
from typing import Any

import numpy as np


class Stack:
    """A last-in, first-out store of the values each loop iteration or branch needs."""

    def __init__(self) -> None:
        self._items: list[Any] = []

    def push(self, values: Any) -> None:
        """Save ``values`` (a tuple) for the backward pass."""
        self._items.append(values)

    def pop(self) -> Any:
        """The most recently pushed values (the backward walks the forward in reverse)."""
        if not self._items:
            raise RuntimeError(
                "the memory stack is empty: a backward pass ran twice on one forward"
            )
        return self._items.pop()

    def __len__(self) -> int:
        return len(self._items)

    def copy(self) -> Stack:
        """A stack holding the same entries, popped on its own."""
        copy = type(self)()
        copy._items = list(self._items)
        return copy

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self._items)} entries)"


class PathStack(Stack):
    """The stack of what decides the path a forward took: branch tests, iteration
    counts, indices, constants. A gradient function that is differentiated again keeps
    these apart from the values (:class:`Stack`): the values carry gradient, the path
    never does, so the second derivative replays it as it is.

    >>> path = PathStack()
    >>> path.push((True, 3))
    >>> path.pop(), path
    ((True, 3), PathStack(0 entries))
    """


def replayable(memory: Any) -> Any:
    """``memory`` with each stack in it copied, so that a backward run on it leaves
    ``memory`` as it was: a pullback called once per row of a Jacobian, or an
    operation's backward run twice on one forward.

    >>> stack = Stack()
    >>> stack.push((1.0,))
    >>> copied = replayable((2.0, stack))
    >>> copied[1].pop(), len(stack)
    ((1.0,), 1)
    """
    if isinstance(memory, Stack):
        return memory.copy()
    if type(memory) in (tuple, list):
        return type(memory)(replayable(entry) for entry in memory)
    return memory


def iteration_slots(iterations: Sized, dtype: str, shape: tuple[int, ...] = ()) -> np.ndarray:
    """An empty array with one slot per iteration of a loop over ``iterations``: the
    forward writes a number of ``dtype`` at the loop's index, the backward reads it (or
    an array of ``shape``: the steps of a loop stacked, see ``compiler/specialize.stacked``).

    >>> slots = iteration_slots(range(3), "float64")
    >>> slots[2] = 1.5
    >>> slots.shape, slots[2]
    ((3,), np.float64(1.5))
    >>> iteration_slots(range(3), "float32", (4, 2)).shape
    (3, 4, 2)
    """
    return np.empty((len(iterations), *shape), dtype)
