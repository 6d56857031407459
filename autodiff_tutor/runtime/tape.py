"""The tape: a stack that branches and loops push to in the forward pass and the
backward pass pops from, in reverse order.

>>> tape = Tape()
>>> tape.push((1.0, 2.0))
>>> tape.push((3.0,))
>>> tape.pop(), tape.pop(), len(tape)
((3.0,), (1.0, 2.0), 0)
"""

from __future__ import annotations

from typing import Any


class Tape:
    """A last-in, first-out store of the values each loop iteration or branch needs."""

    def __init__(self) -> None:
        self._items: list[Any] = []

    def push(self, values: Any) -> None:
        """Save ``values`` (a tuple) for the backward pass."""
        self._items.append(values)

    def pop(self) -> Any:
        """The most recently pushed values (the backward walks the forward in reverse)."""
        if not self._items:
            raise RuntimeError("the tape is empty: a backward pass ran twice on one forward")
        return self._items.pop()

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Tape({len(self._items)} entries)"
