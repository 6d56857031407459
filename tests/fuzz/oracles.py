"""References that no code of autodiff_tutor controls: differences in float64 and autograd.

A finite difference is trusted only element by element, where it is stable: two
central differences with different steps agree, and the forward and backward
one-sided differences agree (so the point is not on a kink or a branch switch).

>>> import numpy as np
>>> f = lambda x, w: float(np.sum(x ** 3) + np.sum(w))
>>> estimate, trusted = trusted_gradient(f, (np.array([1.0, 2.0]), np.zeros(1)), 0)
>>> np.round(estimate, 5).tolist(), trusted.tolist()
([3.0, 12.0], [True, True])
>>> estimate, trusted = trusted_gradient(lambda x: float(np.abs(x[0])), (np.zeros(1),), 0)
>>> trusted.tolist()  # abs at 0: the one-sided slopes differ
[False]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np

STEPS = (1e-4, 1e-5)  # two central steps that must agree
AGREE = 1e-6  # |d(h1) - d(h2)| <= AGREE * (1 + |d|)
ONE_SIDED = 2e-3  # |forward - backward| <= ONE_SIDED * (1 + |d|)
TOLERANCE = 1e-5  # what the AD result must meet against a trusted difference
JUMP = TOLERANCE / 4  # a larger jump of the slope is a kink (AD may take either side)


def trusted_difference(fn: Callable[[float], float], at: float = 0.0) -> tuple[float, bool]:
    """The derivative of scalar ``t -> fn(t)`` at ``at``, and whether it is trustworthy.

    Trusted: the values are finite, the central differences of both steps agree, and
    no kink is seen. At a kink both central steps give the same average of the two
    one-sided slopes, so their agreement proves nothing there; the one-sided slopes
    show it: their gap is ``jump + h * f''``, so the gaps at two steps give the jump
    itself, and a jump that AD could land on either side of (``JUMP``) is a kink. Nor
    where the value is so large that its rounding error, divided by the step, exceeds
    the agreement asked of the steps: both steps may then see the same rounded values
    and agree on a wrong slope (at a value of 7e14, a slope of 1 reads as 0).

    >>> trusted_difference(lambda t: 0.3 * t + 1e-4 * t * np.floor(t))[1]  # a small kink
    False
    >>> estimate, trusted = trusted_difference(lambda t: np.exp(10 * t))  # smooth, curved
    >>> round(float(estimate), 6), trusted
    (10.0, True)
    >>> trusted_difference(lambda t: 1e15 + t)  # the steps see the same rounded values
    (0.0, False)
    """
    h1, h2 = STEPS
    f0, p1, m1, p2, m2 = fn(at), fn(at + h1), fn(at - h1), fn(at + h2), fn(at - h2)
    d1, d2 = (p1 - m1) / (2 * h1), (p2 - m2) / (2 * h2)
    forward, backward = (p2 - f0) / h2, (f0 - m2) / h2
    gap1, gap2 = (p1 - 2 * f0 + m1) / h1, (p2 - 2 * f0 + m2) / h2
    jump = (h1 * gap2 - h2 * gap1) / (h1 - h2)
    values = (f0, p1, m1, p2, m2)
    rounding = np.finfo(np.float64).eps * max(abs(v) for v in values) / h2
    trusted = (
        all(np.isfinite(v) for v in values)
        and rounding <= AGREE * (1 + abs(d2))  # a large value hides small slopes
        and abs(d1 - d2) <= AGREE * (1 + abs(d2))
        and abs(forward - backward) <= ONE_SIDED * (1 + abs(d2))
        and abs(jump) <= JUMP * (1 + abs(d2))
    )
    return d2, bool(trusted)


def trusted_gradient(
    fn: Callable[..., float], args: Sequence[np.ndarray], index: int
) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of scalar ``fn`` w.r.t. ``args[index]``, and a trust mask."""

    def value_at(moved: np.ndarray) -> float:
        call = list(args)
        call[index] = moved
        return float(fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in call]))

    return trusted_leaf_gradient(value_at, np.asarray(args[index], dtype=np.float64))


def trusted_leaf_gradient(
    value_at: Callable[[np.ndarray], float], leaf: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of ``value_at`` (a program's value with one array of it,
    ``leaf``, replaced) w.r.t. that array, and a trust mask.

    >>> estimate, trusted = trusted_leaf_gradient(lambda a: float(np.sum(a * a)), np.ones(2))
    >>> np.round(estimate, 6).tolist(), trusted.tolist()
    ([2.0, 2.0], [True, True])
    """
    estimate = np.zeros(leaf.shape)
    trusted = np.zeros(leaf.shape, dtype=bool)
    for i in np.ndindex(leaf.shape):

        def along(t: float, i: tuple[int, ...] = i) -> float:
            moved = leaf.copy()
            moved[i] += t
            return float(value_at(moved))

        estimate[i], trusted[i] = trusted_difference(along)
    return estimate, trusted


def directional(
    fn: Callable[..., float], args: Sequence[np.ndarray], directions: Sequence[np.ndarray]
) -> tuple[float, bool]:
    """The directional derivative of ``fn`` along ``directions`` (one per argument)."""

    def along(t: float) -> float:
        return float(fn(*[a + t * d for a, d in zip(args, directions, strict=True)]))

    return trusted_difference(along)


HESSIAN_STEPS = (1e-3, 5e-4)  # second differences: truncation h**2, rounding eps / h**2


def hessian_vector(
    fn: Callable[[np.ndarray], float], x: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``H v`` of scalar ``fn`` at ``x`` by mixed second differences of its values alone
    (no gradient of anybody's), and a trust mask: two steps that agree.

    >>> hv, trusted = hessian_vector(lambda x: float(np.sum(x ** 3)), np.ones(2), np.ones(2))
    >>> np.round(hv, 4).tolist(), trusted.tolist()
    ([6.0, 6.0], [True, True])
    >>> hv, trusted = hessian_vector(lambda x: float(x[0] ** 2 + 1e12), np.ones(1), np.ones(1))
    >>> hv.tolist(), trusted.tolist()  # H v = 2: both steps read 0 from the rounded 1e12
    ([0.0], [False])
    """
    estimates, largest = [], np.zeros(x.shape)
    for h in HESSIAN_STEPS:
        estimate = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            e = np.zeros(x.shape)
            e[i] = h
            corners = [fn(x + e + h * v), fn(x + e - h * v), fn(x - e + h * v), fn(x - e - h * v)]
            estimate[i] = (corners[0] - corners[1] - corners[2] + corners[3]) / (4 * h * h)
            largest[i] = max(largest[i], max(abs(c) for c in corners))
        estimates.append(estimate)
    coarse, fine = estimates
    # as for a slope (trusted_difference): where the values' rounding error, divided by
    # h**2, exceeds the agreement asked, both steps may read the same rounded values
    rounding = np.finfo(np.float64).eps * largest / HESSIAN_STEPS[1] ** 2
    # the truncation error goes as h**2: extrapolated (the steps differ by 2), it is far
    # below the tolerance the result is judged at, which ``fine`` alone can miss (it can
    # read a right H v as wrong by 1e-4 of its value)
    extrapolated = fine + (fine - coarse) / 3
    stable = close(coarse, fine, 1e-4) & (rounding <= 1e-4 * (1 + np.abs(fine)))
    return extrapolated, stable & np.isfinite(fine)


class _AutogradNumpy:
    """``autograd.numpy``, with numpy's index helpers it lacks (``np.s_`` makes slices,
    never values, so autograd needs no rule for it)."""

    s_ = np.s_
    index_exp = np.index_exp

    def __getattr__(self, name: str) -> Any:
        return getattr(anp, name)


AUTOGRAD_NUMPY = _AutogradNumpy()


def autograd_gradients(namespace: dict[str, Any], args: Sequence[np.ndarray]) -> list[Any]:
    """Gradients of ``namespace["f"]`` w.r.t. every argument, by autograd.

    ``namespace`` is the program's module namespace; its ``np`` is swapped for
    ``autograd.numpy`` so that ``f`` and its helpers run on autograd's boxes.
    """
    ported = dict(namespace)
    ported["np"] = AUTOGRAD_NUMPY
    exec(compile(namespace["__source__"], namespace["__file__"], "exec"), ported)
    ported["np"] = AUTOGRAD_NUMPY
    return [autograd.grad(ported["f"], i)(*[a.copy() for a in args]) for i in range(len(args))]


def close(got: Any, expected: Any, tolerance: float = TOLERANCE) -> np.ndarray:
    """Elementwise: ``|got - expected| <= tolerance * (1 + |expected|)`` (nan never)."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    return np.abs(got - expected) <= tolerance * (1 + np.abs(expected))
