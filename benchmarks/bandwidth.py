"""The memory bandwidth of this machine, measured: the floor under a large row's time.

A value-and-gradient must read its arguments and write its gradients at least once;
at the measured bandwidth that takes ``floor_seconds`` (:func:`floor_seconds`), the
reference line of the report and its plot. Bandwidth is measured as a copy
(``np.copyto``: one read and one write per element) and, where numba is installed, a
triad ``a[i] = b[i] + s * c[i]`` in one compiled loop (two reads, one write), each
on arrays much larger than the caches, best of several runs.

>>> measured = measure(elements=1 << 16, repeat=2)
>>> measured["copy_bytes_per_s"] > 0
True
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: Elements per array (64 MiB of float64): far beyond the caches of this machine.
ELEMENTS = 1 << 23


def _best(call: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def _triad() -> Callable[..., Any] | None:
    try:
        numba = importlib.import_module("numba")
    except ImportError:
        return None

    def triad(a: Any, b: Any, c: Any, s: float) -> None:
        for i in range(a.shape[0]):
            a[i] = b[i] + s * c[i]

    return numba.njit(triad)


def measure(elements: int = ELEMENTS, repeat: int = 7) -> dict[str, float]:
    """Bytes per second of a copy, and of a triad where numba is installed (one core:
    run the suite under ``taskset``)."""
    b = np.random.default_rng(0).random(elements)
    c, a = b.copy(), np.empty_like(b)
    a[:] = 0.0  # touched: no page faults in the timed runs
    result = {"copy_bytes_per_s": 2 * b.nbytes / _best(lambda: np.copyto(a, b), repeat)}
    triad = _triad()
    if triad is not None:
        triad(a, b, c, 3.0)  # compiled
        seconds = _best(lambda: triad(a, b, c, 3.0), repeat)
        result["triad_bytes_per_s"] = 3 * b.nbytes / seconds
    return result


def floor_seconds(
    args: Sequence[Any], wrt: Sequence[int], measured: dict[str, float]
) -> float | None:
    """Seconds to read every argument and write each gradient once at the best
    measured bandwidth (``None`` where nothing was measured)."""
    rate = max(measured.values(), default=0.0)
    if rate <= 0:
        return None
    moved = sum(getattr(a, "nbytes", 8) for a in args)
    moved += sum(getattr(args[i], "nbytes", 8) for i in wrt)
    return moved / rate
