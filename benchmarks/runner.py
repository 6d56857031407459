"""Run the suite: check every system against the hand-written gradient, then time it.

For each workload and size, the inputs are drawn once (seeded), the hand-written
value-and-gradient is the reference, and each system is, in turn: prepared, called
once (the *first call*, timed) and a second time, both checked (value and every
gradient), timed (median of repeats), and measured for peak memory. A wrong gradient
is a *mismatch*: it is not timed, and it makes the run fail. A library that is not
installed is *missing*.

For ``autodiff_tutor`` the compile cost is measured with fresh ``Differentiable``
objects (empty caches): the transformation and compile alone, and a first
``value_and_grad`` call (compile and run).

>>> results = run(workloads=["rosenbrock"], sizes=["tiny"], systems=["hand-written"],
...               repeat=1, min_time=0.0, progress=None)
>>> results["rows"][0]["systems"]["hand-written"]["status"]
'ok'
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import tempfile
import time
import timeit
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import autodiff_tutor
from autodiff_tutor.api import Differentiable, value_and_grad
from autodiff_tutor.compiler.fused import with_backend
from benchmarks import THREAD_VARIABLES, blas
from benchmarks.bandwidth import floor_seconds
from benchmarks.bandwidth import measure as measure_bandwidth
from benchmarks.handwritten import HANDWRITTEN
from benchmarks.measure import Timing, loop_count, median_of, peak_memory, time_once
from benchmarks.systems import SYSTEMS, Prepared, Skipped
from benchmarks.workloads import SIZES, WORKLOADS, Workload

TIMERS = {"wall": time.perf_counter, "cpu": time.process_time}

#: A gradient agrees with the hand-written one when its largest difference is below
#: this fraction of the largest hand-written entry (float64 everywhere).
TOLERANCE = 1e-7


def max_error(got: Any, expected: Any) -> float:
    """Largest difference, relative to the largest entry of ``expected``.

    >>> max_error(np.array([1.0, 2.0]), np.array([1.0, 4.0]))
    0.5
    """
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        return float("inf")
    scale = max(float(np.max(np.abs(expected), initial=0.0)), 1e-300)
    return float(np.max(np.abs(got - expected), initial=0.0)) / scale


def compare(value: Any, gradients: Any, reference: tuple[Any, tuple[Any, ...]]) -> list[str]:
    """What disagrees with the reference ``(value, gradients)``; empty when all agree.

    >>> compare(1.0, (np.ones(2),), (1.0, (np.ones(2),)))
    []
    >>> compare(1.0, (np.zeros(2),), (1.0, (np.ones(2),)))
    ['gradient 0: max error 1 (relative to its largest entry)']
    """
    ref_value, ref_gradients = reference
    problems = []
    if max_error(value, ref_value) > TOLERANCE:
        problems.append(f"value {float(np.asarray(value)):.17g}, expected {float(ref_value):.17g}")
    if gradients is None:
        return problems
    if len(gradients) != len(ref_gradients):
        return [*problems, f"{len(gradients)} gradients, expected {len(ref_gradients)}"]
    for i, (got, expected) in enumerate(zip(gradients, ref_gradients, strict=True)):
        if got is None:
            problems.append(f"gradient {i}: None")
            continue
        error = max_error(got, expected)
        if error > TOLERANCE:
            shapes = f" (shape {np.shape(got)}, expected {np.shape(expected)})"
            detail = shapes if error == float("inf") else " (relative to its largest entry)"
            problems.append(f"gradient {i}: max error {error:.3g}{detail}")
    return problems


def _gradient_error(gradients: Any, reference: tuple[Any, tuple[Any, ...]]) -> float | None:
    if gradients is None:
        return None
    return max((max_error(g, r) for g, r in zip(gradients, reference[1], strict=True)), default=0)


def check_system(
    name: str, workload: Workload, args: tuple[Any, ...], reference: tuple[Any, tuple[Any, ...]]
) -> tuple[dict[str, Any], Prepared | None]:
    """Prepare one system, call it once (timed: the first call) and check its result.

    Returns the report cell and, when the result agrees with the reference, the
    prepared call to time.
    """
    system = SYSTEMS[name]
    version = system.version()
    if version is None:
        return {"status": "missing", "detail": f"{system.module} is not installed"}, None
    try:
        prepared: Prepared = system.prepare(workload, args)
        first, out = time_once(prepared.call)
        value, gradients = prepared.unpack(out)
        # the call that is timed may run other code than the first (autodiff_tutor
        # specializes on the argument shapes at the second call): it is checked too
        warm_value, warm_gradients = prepared.unpack(prepared.call())
    except Skipped as reason:
        return {"status": "skipped", "detail": str(reason)}, None
    except Exception as exc:  # a failure of one system must not stop the suite
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return {"status": "error", "detail": f"{type(exc).__name__}: {message}"}, None
    problems = compare(value, gradients, reference)
    problems += [f"{p} (second call)" for p in compare(warm_value, warm_gradients, reference)]
    cell: dict[str, Any] = {
        "mode": prepared.mode,
        "first_call_s": first,
        "max_error": _gradient_error(gradients, reference),
    }
    if problems:
        return {**cell, "status": "mismatch", "detail": "; ".join(problems)}, None
    return {**cell, "status": "ok"}, prepared


def time_systems(
    prepared: dict[str, Prepared],
    repeat: int,
    min_time: float,
    warmup: int,
    timer: Callable[[], float] = time.perf_counter,
) -> dict[str, Timing]:
    """Median time per call of each prepared system, the repeats interleaved.

    Each system gets its own loop count; then every repeat times each system in turn
    (starting one further each round), so that a change of machine load during the
    run hits all systems alike and the ratios stay fair.
    """
    numbers: dict[str, int] = {}
    if not prepared:
        return {}
    for name, p in prepared.items():
        for _ in range(warmup):
            p.call()
        numbers[name] = loop_count(p.call, min_time, timer) if min_time > 0 else 1
    times: dict[str, list[float]] = {name: [] for name in prepared}
    names = list(prepared)
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            number = numbers[name]
            total = timeit.Timer(prepared[name].call, timer=timer).timeit(number)
            times[name].append(total / number)
    return {name: Timing(median_of(ts), min(ts), ts, numbers[name]) for name, ts in times.items()}


def compile_cost(workload: Workload, args: tuple[Any, ...], repeat: int) -> dict[str, float]:
    """Seconds to compile (fresh caches) and of a first ``value_and_grad`` call."""
    wrt = list(workload.wrt)
    compiles = [
        time_once(lambda: Differentiable(workload.fn).derivative(wrt))[0] for _ in range(repeat)
    ]
    both = value_and_grad(Differentiable(workload.fn), wrt=wrt)
    first_call, _ = time_once(lambda: both(*args))
    specialize, _ = time_once(lambda: both(*args))  # the second call specializes
    cost = {"compile_s": median_of(compiles), "first_call_s": first_call}
    cost["specialize_s"] = specialize
    if SYSTEMS["fused"].version() is not None:  # the second call also lowers and compiles
        fused = value_and_grad(with_backend(Differentiable(workload.fn), "numba"), wrt=wrt)
        time_once(lambda: fused(*args))
        with _fresh_kernel_cache():  # a cold compile, not numba's cache of an earlier run
            cost["fused_specialize_s"] = time_once(lambda: fused(*args))[0]
    return cost


@contextlib.contextmanager
def _fresh_kernel_cache() -> Any:
    """An empty folder for the fused backend's kernels while it lasts."""
    before = os.environ.get("AUTODIFF_TUTOR_CACHE")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["AUTODIFF_TUTOR_CACHE"] = folder
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("AUTODIFF_TUTOR_CACHE", None)
            else:
                os.environ["AUTODIFF_TUTOR_CACHE"] = before


def _slow_systems(
    prepared: dict[str, Prepared], cells: dict[str, dict[str, Any]], slow_call_s: float
) -> dict[str, float]:
    """Systems too slow to repeat, with the seconds of one warm call.

    A first call over ``slow_call_s`` may be slow because it compiles (jax.jit), so a
    second call decides: if it is slow too, its time is the system's time.
    """
    slow = {}
    for name, ready in prepared.items():
        if cells[name]["first_call_s"] > slow_call_s:
            seconds, _ = time_once(ready.call)
            if seconds > slow_call_s:
                slow[name] = seconds
    return slow


def _seed(workload: str, size: str) -> int:
    return zlib.crc32(f"{workload}/{size}".encode())


def _meta(options: dict[str, Any], systems: Sequence[str]) -> dict[str, Any]:
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "autodiff_tutor": autodiff_tutor.__version__,
        "threads": {v: os.environ.get(v, "") for v in THREAD_VARIABLES},
        "blas": blas.kernel(),
        "versions": {name: SYSTEMS[name].version() for name in systems},
        **options,
    }


def run(
    workloads: Sequence[str] | None = None,
    sizes: Sequence[str] = ("small", "large"),
    systems: Sequence[str] | None = None,
    repeat: int = 7,
    min_time: float = 0.05,
    warmup: int = 1,
    compile_repeat: int = 3,
    slow_call_s: float = 2.0,
    timer: str = "wall",
    progress: Callable[[str], None] | None = print,
) -> dict[str, Any]:
    """Run the suite; returns ``{"meta": ..., "rows": [...], "problems": [...]}``.

    A system whose first and second calls each take longer than ``slow_call_s``
    seconds (the tracing mode on a long Python loop) is not repeated: its time is the
    second call's.
    ``timer`` is ``"wall"`` (``time.perf_counter``) or ``"cpu"`` (``time.process_time``:
    on a machine shared with other work, with one BLAS thread, the same quantity
    without the time spent waiting for a CPU).
    """
    if timer not in TIMERS:
        raise SystemExit(f"unknown timer {timer!r}; choose from {sorted(TIMERS)}")
    names = list(workloads or WORKLOADS)
    chosen = list(systems or SYSTEMS)
    for name in names:
        if name not in WORKLOADS:
            raise SystemExit(f"unknown workload {name!r}; choose from {sorted(WORKLOADS)}")
    for name in chosen:
        if name not in SYSTEMS:
            raise SystemExit(f"unknown system {name!r}; choose from {list(SYSTEMS)}")
    for size in sizes:
        if size not in SIZES:
            raise SystemExit(f"unknown size {size!r}; choose from {SIZES}")
    options = {
        "repeat": repeat,
        "min_time": min_time,
        "warmup": warmup,
        "sizes": list(sizes),
        "slow_call_s": slow_call_s,
        "timer": timer,
    }
    start = time.perf_counter()
    # the floor of every row: its arguments read and gradients written once
    bandwidth = measure_bandwidth(repeat=3) if min_time > 0 else {}
    rows, problems = [], []
    for name in names:
        workload = WORKLOADS[name]
        for size in sizes:
            if size not in workload.sizes:  # the sizes: only some workloads
                continue
            args = workload.make_args(np.random.default_rng(_seed(name, size)), size)
            reference = HANDWRITTEN[name](*args)
            row: dict[str, Any] = {
                "workload": name,
                "size": size,
                "label": workload.size_label(size),
                "description": workload.description,
                "systems": {},
            }
            prepared = {}
            for system in chosen:
                cell, ready = check_system(system, workload, args, reference)
                row["systems"][system] = cell
                if ready is not None:
                    prepared[system] = ready
                elif cell["status"] not in ("missing", "skipped"):
                    problems.append(
                        f"{name} ({size}), {system}: {cell['status']}: {cell['detail']}"
                    )
            slow = _slow_systems(prepared, row["systems"], slow_call_s)
            for system, seconds in slow.items():  # timed once (a warm call), not repeated
                row["systems"][system].update(
                    timing=Timing(seconds, seconds, [seconds], 1).to_json(),
                    single_call=True,
                    peak_bytes=None,
                )
            fast = {s: p for s, p in prepared.items() if s not in slow}
            timings = time_systems(fast, repeat, min_time, warmup, TIMERS[timer])
            for system, timing in timings.items():
                cell = row["systems"][system]
                cell["timing"] = timing.to_json()
                ready = prepared[system]
                cell["peak_bytes"] = peak_memory(ready.call) if ready.tracks_memory else None
            if progress:
                for system in chosen:
                    progress(_progress_line(name, size, system, row["systems"][system]))
            row["bandwidth_floor_s"] = floor_seconds(args, workload.wrt, bandwidth)
            if "autodiff_tutor" in chosen and row["systems"]["autodiff_tutor"]["status"] == "ok":
                row["compile"] = compile_cost(workload, args, compile_repeat)
            rows.append(row)
    meta = _meta(options, chosen)
    meta["bandwidth"] = bandwidth
    meta["wall_s"] = time.perf_counter() - start
    return {"meta": meta, "rows": rows, "problems": problems}


def _progress_line(name: str, size: str, system: str, cell: dict[str, Any]) -> str:
    status = cell["status"]
    if status == "ok":
        timing = cell["timing"]
        detail = f"{timing['median'] * 1e3:.4g} ms (x{timing['number']} x{len(timing['times'])})"
    else:
        detail = f"{status.upper()}: {cell['detail']}"
    return f"  {name:<13} {size:<6} {system:<15} {detail}"


def report_problems(results: dict[str, Any], stream: Any = None) -> None:
    """Print every mismatch and error loudly to ``stream`` (standard error by default)."""
    if not results["problems"]:
        return
    stream = stream or sys.stderr
    bar = "!" * 78
    print(bar, file=stream)
    print(
        "BENCHMARK CHECK FAILED: these systems failed, or disagree with the hand-written "
        "value and gradient",
        file=stream,
    )
    for problem in results["problems"]:
        print(f"  - {problem}", file=stream)
    print(bar, file=stream)
