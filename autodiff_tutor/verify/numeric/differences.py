"""Finite differences in float64 that notice kinks and the edges of a forward's domain.

The gradient of ``L = sum_k sum(d_k * y_k)`` (``y_k`` the op's outputs, ``d_k`` fixed
output gradients) with respect to one input element is estimated by the 5-point
central difference ``(f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h`` (exact for cubics,
error ``O(h^4)``). The change of ``L`` is summed from the outputs' own changes
(``sum(d * (y' - y))``), so the rounding of the elements the step leaves alone adds
nothing. The step is relative: ``h = STEP * max(|x|, FLOOR)``, so ``sqrt`` at ``1e-4``
and ``log`` at ``1e-3`` are stepped at their own scale. Where the forward is not
finite within the stencil (the stencil leaves its domain), the step is quartered
until it is; where it is not finite at the point itself, there is no estimate
(``central`` is nan, and ``unchecked`` says why).

Each probe also computes

- the second-order one-sided slopes from the left and from the right, which differ
  when the point sits on a kink;
- the central difference at half the step, which differs from the full-step one
  when a kink lies inside the stencil (or the step is too coarse for the function).

While either disagrees, the step is quartered (up to ``REFINES`` times): a smooth
function that varies fast (``sin(1000 x)``) is resolved, and its estimate is the
Richardson extrapolation of the two last central differences. An element whose
disagreement stays is reported as a *kink* instead of being compared; ``settled``
says that its one-sided slopes no longer change with the step (the slopes either
side of a kink at the point, which a backward's value there must lie between).

>>> import numpy as np
>>> from autodiff_tutor.ops import PReLUFunction
>>> X, alpha = np.array([[-1.0, 0.0, 2.0]]), np.full((1, 3), 0.5)
>>> d_Y = np.ones((1, 3))
>>> probes = probe_input(PReLUFunction("BC"), (X, alpha), (d_Y,), 0, range(3))
>>> [(round(p.central, 6), p.kink) for p in probes]
[(0.5, False), (0.75, True), (1.0, False)]
>>> round(probes[1].left, 6), round(probes[1].right, 6), probes[1].settled  # either side
(0.5, 1.0, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import front_door
from autodiff_tutor.runtime.backend import array_module, ones_like, shape_of, size

__all__ = ["Probe", "element", "numerical_gradient", "objective", "perturb", "probe_input"]

#: Default relative step of the finite differences.
STEP = 1e-4
#: Elements smaller than this in magnitude are stepped as if they were this large.
FLOOR = 1e-3
#: How often the step is quartered while the estimates at two steps disagree.
REFINES = 3
#: How often the step is quartered while the forward is not finite within the stencil.
SHRINKS = 12
#: The stencil's offsets, in steps.
OFFSETS = (-2.0, -1.0, -0.5, 0.5, 1.0, 2.0)

NOT_FINITE_AT = "the forward is not finite at this point"
NOT_FINITE_NEAR = "the forward is not finite next to this point"


@dataclass(frozen=True)
class Probe:
    """Finite-difference estimates of ``dL/d inputs[input][index]``.

    ``central`` is the estimate (nan when there is none: ``unchecked`` says why),
    ``central_half`` the 5-point estimate at half the step, ``left`` and ``right`` the
    one-sided slopes; ``kink`` says they disagree at every step tried, ``settled``
    that the one-sided slopes stayed the same at the two last steps, ``step`` is the
    last step ``h``.

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
    settled: bool = False
    step: float = STEP
    unchecked: str = ""


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


def _finite(values: tuple[Any, ...]) -> bool:
    return all(bool(array_module(y).all(array_module(y).isfinite(y))) for y in values)


def probe_input(
    op: Any,
    inputs: tuple[Any, ...],
    d_outputs: tuple[Any, ...],
    which: int,
    elements: Iterable[int],
    step: float = STEP,
) -> list[Probe]:
    """Probe ``elements`` (flat indices) of ``inputs[which]``, float64 (see the module)."""
    # stepping to a domain's edge is part of the method: numpy's warnings there are noise
    with np.errstate(all="ignore"):
        return _probe_input(op, inputs, d_outputs, which, elements, step)


def _probe_input(
    op: Any,
    inputs: tuple[Any, ...],
    d_outputs: tuple[Any, ...],
    which: int,
    elements: Iterable[int],
    step: float,
) -> list[Probe]:
    base, _ = op.op_forward(*inputs)
    x = inputs[which]
    shape = shape_of(x)
    finite = _finite(tuple(base))
    scale = max(1.0, abs(objective(op, d_outputs)(inputs))) if finite else 1.0

    def change(j: int, delta: float) -> float:
        moved = list(inputs)
        moved[which] = perturb(x, j, delta)
        outputs, _ = op.op_forward(*moved)
        total = 0.0
        for d, y, y0 in zip(d_outputs, outputs, base, strict=True):
            xp = array_module(y, d)
            total += float(xp.sum(d * (y - y0)))
        return total

    probes = []
    for j in elements:
        index = tuple(int(i) for i in np.unravel_index(j, shape)) if shape else ()
        if not finite:
            probes.append(_unchecked(which, index, step, NOT_FINITE_AT))
            continue
        relative = max(abs(element(x, j)), FLOOR)
        probes.append(
            _probe_element(lambda delta, j=j: change(j, delta), which, index, relative, step, scale)
        )
    return probes


def _unchecked(which: int, index: tuple[int, ...], h: float, why: str) -> Probe:
    nan = math.nan
    return Probe(which, index, nan, nan, nan, nan, False, False, h, why)


def _probe_element(
    change: Callable[[float], float],
    which: int,
    index: tuple[int, ...],
    relative: float,
    step: float,
    scale: float,
) -> Probe:
    """One element: the step shrunk into the forward's domain, then refined while the
    estimates at two steps (or the one-sided slopes) disagree."""
    h = step * relative
    previous: tuple[float, float] | None = None
    for refine in range(REFINES + 1):
        for _ in range(SHRINKS):
            f = dict(zip(OFFSETS, (change(k * h) for k in OFFSETS), strict=True))
            if all(math.isfinite(v) for v in f.values()):
                break
            h /= 4
        else:
            return _unchecked(which, index, h, NOT_FINITE_NEAR)
        central = (f[-2] - 8 * f[-1] + 8 * f[1] - f[2]) / (12 * h)
        central_half = (f[-1] - 8 * f[-0.5] + 8 * f[0.5] - f[1]) / (6 * h)
        right = (4 * f[1] - f[2]) / (2 * h)
        left = (f[-2] - 4 * f[-1]) / (2 * h)
        jump = abs(right - left) > 1e-3 * (abs(right) + abs(left)) + 1e-6 * scale
        # rounding grows as the step shrinks: its allowance too
        rounding = 1e-9 * scale * relative / h
        inside = abs(central - central_half) > 1e-7 * abs(central) + rounding
        if not (jump or inside):
            extrapolated = central_half + (central_half - central) / 15
            return Probe(which, index, extrapolated, central_half, left, right, False, True, h)
        settled = previous is not None and all(
            abs(now - before) <= 1e-3 * (abs(now) + abs(before)) + 1e-6 * scale
            for now, before in zip((left, right), previous, strict=True)
        )
        previous = (left, right)
        if refine == REFINES:
            return Probe(which, index, central, central_half, left, right, True, settled, h)
        h /= 4
    raise AssertionError("unreachable")  # pragma: no cover


@front_door
def numerical_gradient(
    fn: Callable[..., Any], *inputs: Any, d_output: Any = None, step: float = STEP
) -> tuple[np.ndarray, ...]:
    """5-point finite-difference gradient of ``sum(d_output * fn(*inputs))``.

    Returns one numpy float64 array per input (the estimates are Python floats, so
    they are gathered on the host); ``d_output`` defaults to ones. An element has no
    estimate (nan) where ``fn`` is not finite at the inputs, or next to them at every
    step tried.

    >>> g, = numerical_gradient(lambda x: x * x * x, np.array([1.0, 2.0]))
    >>> np.round(g, 8).tolist()
    [3.0, 12.0]
    >>> numerical_gradient(np.log, np.array([-1.0]))[0].tolist()
    [nan]
    """

    class _Fn:
        def op_forward(self, *xs: Any) -> tuple[tuple[Any], None]:
            return (fn(*xs),), None

    op = _Fn()
    with np.errstate(all="ignore"):
        y = fn(*inputs)
    d = ones_like(y) if d_output is None else d_output
    grads = []
    for i, x in enumerate(inputs):
        probes = probe_input(op, inputs, (d,), i, range(size(x)), step)
        grads.append(np.array([p.central for p in probes]).reshape(shape_of(x)))
    return tuple(grads)
