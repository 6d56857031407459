"""The user's forward and backward run with numpy, one point at a time.

The translation reads the code with sympy's meaning, which is not always numpy's:
sympy simplifies ``sqrt(x)**2`` and ``exp(log(x))`` to ``x`` (true over the complex
numbers; numpy gives nan for ``x < 0``), and cancels ``x / x`` to 1 before anything
is substituted (numpy gives nan at ``x = 0``: the ``x / |x|`` of abs). So the checks
also run the code as it is, with numpy, at points of each region and of each
boundary: a gradient that is not finite where the forward is, or that is not what
sympy read, fails there.

A :class:`Run` calls the code on arrays of one element each (shaped for the op's
data format), so the per-element reading holds: a sum over the elements that share
a parameter is that one element's contribution.

>>> import numpy as np
>>> def square(x):
...     return x * x
>>> def square_backward(d_y, x):
...     return d_y * 2 * np.sqrt(x) ** 2
>>> run = Run(lambda x: ((square(x),), (x,)), lambda seeds, saved: square_backward(*seeds, *saved),
...           parameters=("x",), inputs=("x",), seeds=("d_y",))
>>> forward_finite, gradients = run.at(["x", "d_y"], np.array([[-4.0, 1.0], [4.0, 1.0]]))
>>> forward_finite.tolist(), gradients[:, 0].tolist()
([True, True], [nan, 8.0])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Run", "RunFailed"]


class RunFailed(Exception):
    """The code could not be run with numpy at a sample point (the message says why)."""


@dataclass
class Run:
    """How to run a forward and a backward with numpy at one point.

    ``forward(*arguments)`` returns ``(outputs, saved)``: the outputs (a tuple) and what
    the backward needs; ``backward(seeds, saved)`` returns one gradient per name of
    ``inputs`` (``None`` for zero). ``parameters`` name the forward's arguments, in
    order, ``seeds`` the output gradients; every array has ``shape`` (one element).
    """

    forward: Callable[..., tuple[tuple[Any, ...], Any]]
    backward: Callable[[tuple[Any, ...], Any], Any]
    parameters: tuple[str, ...]
    inputs: tuple[str, ...]
    seeds: tuple[str, ...]
    shape: tuple[int, ...] = (1,)

    def at(self, names: Sequence[str], points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """At each point (a row, one column per name in ``names``): whether every
        output of the forward is finite, and the gradients (a column per input; 0 for
        ``None``). Raises :class:`RunFailed` when the code cannot run there."""
        column = {name: k for k, name in enumerate(names)}
        missing = [n for n in (*self.parameters, *self.seeds) if n not in column]
        if missing:
            raise RunFailed(f"no value for {', '.join(missing)}")
        finite = np.zeros(len(points), dtype=bool)
        gradients = np.full((len(points), len(self.inputs)), np.nan)
        for row, point in enumerate(points):
            finite[row], gradients[row] = self._one(point, column)
        return finite, gradients

    def _array(self, value: float) -> np.ndarray:
        return np.full(self.shape, value, dtype=np.float64)

    def _one(self, point: np.ndarray, column: dict[str, int]) -> tuple[bool, np.ndarray]:
        arguments = tuple(self._array(point[column[n]]) for n in self.parameters)
        seeds = tuple(self._array(point[column[n]]) for n in self.seeds)
        try:
            with np.errstate(all="ignore"):
                outputs, saved = self.forward(*arguments)
                grads = self.backward(seeds, saved)
        except Exception as exc:  # the user's code: say what it raised
            raise RunFailed(f"{type(exc).__name__}: {exc}") from None
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        if len(grads) != len(self.inputs):
            raise RunFailed(f"the backward returned {len(grads)} gradient(s)")
        values = np.array([_element(g) for g in grads])
        return all(np.isfinite(_element(y)) for y in outputs), values


def _element(value: Any) -> float:
    """The one element of an array (0 for ``None``: no gradient)."""
    if value is None:
        return 0.0
    try:
        array = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise RunFailed(f"{type(exc).__name__}: {exc}") from None
    if array.size != 1:
        raise RunFailed(f"an array of {array.size} elements where one was expected")
    return float(array[0])
