"""Finite differences in float64 that notice kinks.

The gradient of ``L = sum_k sum(d_k * y_k)`` (``y_k`` the op's outputs, ``d_k`` fixed
output gradients) with respect to one input element is estimated by the 5-point
central difference ``(f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h`` (exact for cubics,
error ``O(h^4)``). To tell a *kink* (a point where the derivative jumps, such as
``x == tl`` in SReLU) from a wrong gradient, each probe also computes

- the second-order one-sided slopes from the left and from the right, which differ
  when the point sits on a kink;
- the central difference at half the step, which differs from the full-step one
  when a kink lies inside the stencil.

Such an element is reported as a kink instead of being compared.

>>> import numpy as np
>>> from autodiff_tutor.ops import PReLUFunction
>>> X, alpha = np.array([[-1.0, 0.0, 2.0]]), np.full((1, 3), 0.5)
>>> d_Y = np.ones((1, 3))
>>> probes = probe_input(PReLUFunction("BC"), (X, alpha), (d_Y,), 0, range(3))
>>> [(round(p.central, 6), p.kink) for p in probes]
[(0.5, False), (0.75, True), (1.0, False)]
>>> round(probes[1].left, 6), round(probes[1].right, 6)      # the slopes either side
(0.5, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import front_door
from autodiff_tutor.runtime.backend import array_module, ones_like, shape_of, size

__all__ = ["Probe", "element", "numerical_gradient", "objective", "perturb", "probe_input"]

#: Default relative step of the finite differences.
STEP = 1e-4


@dataclass(frozen=True)
class Probe:
    """Finite-difference estimates of ``dL/d inputs[input][index]``.

    ``central`` is the 5-point estimate, ``central_half`` the same at half the step,
    ``left`` and ``right`` the one-sided slopes; ``kink`` says they disagree.

    >>> Probe(0, (1,), 2.0, 2.0, 2.0, 2.0, False).kink
    False
    """

    input: int
    index: tuple[int, ...]
    central: float
    central_half: float
    left: float
    right: float
    kink: bool


def element(x: Any, flat_index: int) -> float:
    """Element ``flat_index`` (C order) of an array of any array module, as a float.

    >>> element(np.arange(6.0).reshape(2, 3), 4)
    4.0
    """
    xp = array_module(x)
    return float(xp.reshape(x, (-1,))[int(flat_index)])


def perturb(x: Any, flat_index: int, delta: float) -> Any:
    """``x`` with ``delta`` added to one element (a new array, any array module).

    >>> perturb(np.zeros((2, 2)), 3, 0.5).tolist()
    [[0.0, 0.0], [0.0, 0.5]]
    """
    xp = array_module(x)
    hit = xp.reshape(xp.arange(size(x)) == int(flat_index), shape_of(x))
    return x + delta * xp.astype(hit, x.dtype)


def objective(op: Any, d_outputs: tuple[Any, ...]) -> Callable[[tuple[Any, ...]], float]:
    """``inputs -> sum_k sum(d_k * y_k)`` as a Python float, for any protocol op.

    >>> from autodiff_tutor.ops import PReLUFunction
    >>> L = objective(PReLUFunction("BC"), (np.array([[1.0, 2.0]]),))
    >>> L((np.array([[-2.0, 3.0]]), np.array([[0.5, 0.5]])))
    5.0
    """

    def value(inputs: tuple[Any, ...]) -> float:
        outputs, _ = op.op_forward(*inputs)
        total = 0.0
        for d, y in zip(d_outputs, outputs, strict=True):
            xp = array_module(y, d)
            total += float(xp.sum(d * y))
        return total

    return value


def probe_input(
    op: Any,
    inputs: tuple[Any, ...],
    d_outputs: tuple[Any, ...],
    which: int,
    elements: Iterable[int],
    step: float = STEP,
) -> list[Probe]:
    """Probe ``elements`` (flat indices) of ``inputs[which]``, float64 (see the module)."""
    L = objective(op, d_outputs)
    f0 = L(inputs)
    x = inputs[which]
    shape = shape_of(x)
    probes = []
    for j in elements:
        h = step * max(1.0, abs(element(x, j)))

        def f(k: float, j: int = j, h: float = h) -> float:
            moved = list(inputs)
            moved[which] = perturb(x, j, k * h)
            return L(tuple(moved))

        fm2, fm1, fmh, fph, fp1, fp2 = (f(k) for k in (-2, -1, -0.5, 0.5, 1, 2))
        central = (fm2 - 8 * fm1 + 8 * fp1 - fp2) / (12 * h)
        central_half = (fm1 - 8 * fmh + 8 * fph - fp1) / (6 * h)
        right = (-3 * f0 + 4 * fp1 - fp2) / (2 * h)
        left = (3 * f0 - 4 * fm1 + fm2) / (2 * h)
        scale = max(1.0, abs(f0))
        jump = abs(right - left) > 1e-3 * (abs(right) + abs(left)) + 1e-6 * scale
        inside = abs(central - central_half) > 1e-7 * abs(central) + 1e-9 * scale / step
        index = tuple(int(i) for i in np.unravel_index(j, shape)) if shape else ()
        probes.append(Probe(which, index, central, central_half, left, right, jump or inside))
    return probes


@front_door
def numerical_gradient(
    fn: Callable[..., Any], *inputs: Any, d_output: Any = None, step: float = STEP
) -> tuple[np.ndarray, ...]:
    """5-point finite-difference gradient of ``sum(d_output * fn(*inputs))``.

    Returns one numpy float64 array per input (the estimates are Python floats, so
    they are gathered on the host); ``d_output`` defaults to ones.

    >>> g, = numerical_gradient(lambda x: x * x * x, np.array([1.0, 2.0]))
    >>> np.round(g, 8).tolist()
    [3.0, 12.0]
    """

    class _Fn:
        def op_forward(self, *xs: Any) -> tuple[tuple[Any], None]:
            return (fn(*xs),), None

    op = _Fn()
    y = fn(*inputs)
    d = ones_like(y) if d_output is None else d_output
    grads = []
    for i, x in enumerate(inputs):
        probes = probe_input(op, inputs, (d,), i, range(size(x)), step)
        grads.append(np.array([p.central for p in probes]).reshape(shape_of(x)))
    return tuple(grads)
