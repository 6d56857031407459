"""Timing and memory helpers: ``timeit``-style loop counts, medians, tracemalloc peaks.

The runner warms each call up, picks a loop count so that one repeat lasts at least
``min_time`` seconds (like ``timeit.Timer.autorange``), then times ``repeat`` repeats
with :class:`timeit.Timer` (garbage collection off while timing) and keeps the
median time per call.

>>> n = loop_count(lambda: sum(range(100)), 0.001)
>>> n >= 1
True
"""

from __future__ import annotations

import statistics
import time
import timeit
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Timing:
    """Seconds per call: the median, the fastest, every repeat, and the loop count."""

    median: float
    best: float
    times: list[float]
    number: int

    def to_json(self) -> dict[str, Any]:
        """A plain dict for the JSON report."""
        return asdict(self)


def loop_count(
    call: Callable[[], Any], min_time: float, timer: Callable[[], float] = time.perf_counter
) -> int:
    """How many calls in a row take at least ``min_time`` seconds (1, 2, 5, 10, 20, ...).

    >>> loop_count(lambda: None, 0.0)
    1
    """
    clock = timeit.Timer(call, timer=timer)
    number = 1
    while True:
        for factor in (1, 2, 5):
            n = number * factor
            if clock.timeit(n) >= min_time:
                return n
        number *= 10


def time_once(call: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by one call of ``call``, and its result.

    >>> seconds, result = time_once(lambda: 42)
    >>> result, seconds >= 0
    (42, True)
    """
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def peak_memory(call: Callable[[], Any]) -> int:
    """Peak bytes allocated (and tracked by tracemalloc) during one call of ``call``.

    numpy registers its array buffers with tracemalloc, so this counts arrays made by
    the call, including those it returns; memory that existed before does not count.
    Allocations of libraries with their own allocators (XLA, torch) are not seen.

    >>> import numpy as np
    >>> peak_memory(lambda: np.ones(1_000_000)) >= 8_000_000
    True
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - baseline
        del result
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(peak, 0)


def median_of(values: list[float]) -> float:
    """The median of ``values``.

    >>> median_of([3.0, 1.0, 2.0])
    2.0
    """
    return statistics.median(values)
