"""The report: markdown tables (printed and saved) and the raw results as JSON.

Tables, one row per workload and size:

- median time per call of every system (value and gradient; the plain forward alone);
- ratio of each system to the hand-written value-and-gradient (the target is 1.2);
- gradient/forward cost: each system's time over the plain forward's;
- peak memory of one value-and-gradient call (tracemalloc; numpy-based systems only);
- compile cost of ``autodiff_tutor`` (fresh caches) against its cached call, and the
  first call of jax (trace and XLA compile) where jax runs.

>>> format_seconds(0.00123), format_seconds(2.5e-6), format_seconds(1.5)
('1.23 ms', '2.50 µs', '1.50 s')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.blas import describe as describe_blas

_TIMER_NAMES = {"wall": "time.perf_counter (wall)", "cpu": "time.process_time (CPU)"}
TARGET = 1.2  # autodiff_tutor within 1.2x of the hand-written value-and-gradient
GRADIENT_SYSTEMS = (
    "hand-written",
    "autodiff_tutor",
    "fused",
    "tracing",
    "tangent-ad",
    "autograd",
    "jax",
    "torch",
)


def format_seconds(seconds: float) -> str:
    """Three significant digits in s, ms or µs."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            value = seconds / scale
            digits = 2 if value < 10 else 1 if value < 100 else 0
            return f"{value:.{digits}f} {unit}"
    raise AssertionError("unreachable")


def median_of(cell: dict[str, Any] | None) -> float | None:
    if cell and cell.get("status") == "ok":
        return cell["timing"]["median"]
    return None


def _status(cell: dict[str, Any] | None) -> str:
    if not cell:
        return ""
    status = cell["status"]
    labels = {"missing": "missing", "skipped": "skipped", "mismatch": "**MISMATCH**"}
    return labels.get(status, "**ERROR**" if status == "error" else "")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _columns(results: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    present = {name for row in results["rows"] for name in row["systems"]}
    return [name for name in names if name in present]


def _row_head(row: dict[str, Any]) -> list[str]:
    return [row["workload"], f"{row['size']} ({row['label']})"]


def time_table(results: dict[str, Any]) -> list[str]:
    """Median seconds per call."""
    columns = _columns(results, ("forward", *GRADIENT_SYSTEMS))
    rows = []
    for row in results["rows"]:
        cells = []
        for name in columns:
            cell = row["systems"].get(name)
            median = median_of(cell)
            text = format_seconds(median) if median is not None else _status(cell)
            if median is not None and cell.get("mode") == "eager" and name == "jax":
                text += " (eager)"
            if median is not None and cell.get("single_call"):
                text += " (1 call)"
            cells.append(text)
        rows.append(_row_head(row) + cells)
    return _table(["workload", "size", *columns], rows)


def ratio_table(results: dict[str, Any], baseline: str, names: tuple[str, ...]) -> list[str]:
    """Each system's median over ``baseline``'s median (bold where autodiff_tutor misses)."""
    columns = _columns(results, names)
    rows = []
    for row in results["rows"]:
        base = median_of(row["systems"].get(baseline))
        cells = []
        for name in columns:
            cell = row["systems"].get(name)
            median = median_of(cell)
            if median is None or base is None:
                cells.append(_status(cell) or "n/a")
                continue
            ratio = median / base
            text = f"{ratio:.2f}"
            if name == "autodiff_tutor" and baseline == "hand-written" and ratio > TARGET:
                text = f"**{text}**"
            cells.append(text)
        if baseline == "hand-written":  # the reference: the bandwidth floor
            floor = row.get("bandwidth_floor_s")
            cells.append(f"{floor / base:.3f}" if floor and base else "n/a")
        rows.append(_row_head(row) + cells)
    floor = ["bandwidth floor"] if baseline == "hand-written" else []
    return _table(["workload", "size", *columns, *floor], rows)


def memory_table(results: dict[str, Any]) -> list[str]:
    """Peak MiB of one call, and autodiff_tutor over hand-written."""
    columns = [
        name
        for name in _columns(results, ("forward", *GRADIENT_SYSTEMS))
        if any(
            row["systems"].get(name, {}).get("peak_bytes") is not None for row in results["rows"]
        )
    ]
    rows = []
    for row in results["rows"]:
        peaks = {name: row["systems"].get(name, {}).get("peak_bytes") for name in columns}
        cells = [
            f"{peaks[n] / 2**20:.3f}" if peaks[n] is not None else _status(row["systems"].get(n))
            for n in columns
        ]
        ours, hand = peaks.get("autodiff_tutor"), peaks.get("hand-written")
        cells.append(f"{ours / hand:.2f}" if ours and hand else "n/a")
        rows.append(_row_head(row) + cells)
    return _table(["workload", "size", *columns, "autodiff_tutor / hand-written"], rows)


def compile_table(results: dict[str, Any]) -> list[str]:
    """Compile and first-call cost of autodiff_tutor, and jax's first call where it ran."""
    rows = []
    for row in results["rows"]:
        cost = row.get("compile")
        ours = median_of(row["systems"].get("autodiff_tutor"))
        if cost is None or ours is None:
            continue
        jax = row["systems"].get("jax") or {}
        jax_first = jax.get("first_call_s") if jax.get("status") == "ok" else None
        jax_text = (
            f"{format_seconds(jax_first)} ({jax.get('mode')})" if jax_first else _status(jax)
        ) or "n/a"
        rows.append(
            _row_head(row)
            + [
                format_seconds(cost["compile_s"]),
                format_seconds(cost["first_call_s"]),
                _seconds_or_na(cost.get("specialize_s")),
                _seconds_or_na(cost.get("fused_specialize_s")),
                format_seconds(ours),
                f"{cost['first_call_s'] / ours:.0f}",
                jax_text,
            ]
        )
    header = ["workload", "size", "compile", "first call", "second call (specializes)"]
    header += ["second call, fused (and numba compiles)", "cached call", "first / cached"]
    return _table([*header, "jax first call"], rows)


def markdown(results: dict[str, Any]) -> str:
    """The whole report as markdown."""
    meta = results["meta"]
    versions = ", ".join(
        f"{name} {version}" if version else f"{name} missing"
        for name, version in meta["versions"].items()
        if name not in ("forward", "hand-written", "autodiff_tutor", "tracing")
    )
    lines = [
        "# autodiff_tutor benchmarks",
        "",
        f"{meta['date']}: Python {meta['python']}, numpy {meta['numpy']}, "
        f"{meta['platform']}, {meta['cpus']} CPUs. Other libraries: {versions or 'none'}.",
        f"Timer: {_TIMER_NAMES[meta['timer']]}. Median of {meta['repeat']} repeats "
        f"(each at least {meta['min_time']} s of calls, "
        f"after {meta['warmup']} warm-up call), garbage collection off while timing; "
        f"suite wall time {meta['wall_s']:.1f} s. BLAS threads: {_threads(meta)}. "
        f"(1 call): two calls over {meta['slow_call_s']} s each; the second one is the time.",
        "",
        describe_blas(meta.get("blas", {})),
        "",
    ]
    if results["problems"]:
        lines += ["## PROBLEMS", ""] + [f"- {p}" for p in results["problems"]] + [""]
    else:
        lines += [
            "Every gradient agrees with the hand-written one "
            f"(largest relative difference {_worst_error(results):.1e}).",
            "",
        ]
    lines += ["## Median time per call (value and gradient; forward: value only)", ""]
    lines += time_table(results)
    lines += ["", f"## Ratio to the hand-written value-and-gradient (target {TARGET})", ""]
    lines += [_bandwidth_line(meta), ""]
    lines += ratio_table(results, "hand-written", GRADIENT_SYSTEMS[1:])
    lines += ["", "## Gradient / forward cost", ""]
    lines += ratio_table(results, "forward", GRADIENT_SYSTEMS)
    lines += ["", "## Peak memory of one call, MiB (tracemalloc)", ""]
    lines += memory_table(results)
    lines += [
        "",
        "## Compile cost of autodiff_tutor (fresh caches) and first calls, wall clock",
        "",
    ]
    lines += compile_table(results)
    return "\n".join(lines) + "\n"


def _seconds_or_na(seconds: float | None) -> str:
    return "n/a" if seconds is None else format_seconds(seconds)


def _bandwidth_line(meta: dict[str, Any]) -> str:
    measured = meta.get("bandwidth") or {}
    if not measured:
        return "Bandwidth not measured."
    rates = ", ".join(
        f"{name.removesuffix('_bytes_per_s')} {rate / 1e9:.1f} GB/s"
        for name, rate in measured.items()
    )
    return (
        f"Measured bandwidth, one core: {rates}. The bandwidth floor is the time to read "
        "every argument and write each gradient once at the best of these."
    )


def _threads(meta: dict[str, Any]) -> str:
    settings = {f"{k}={v}" for k, v in meta.get("threads", {}).items() if v}
    return ", ".join(sorted(settings)) or "library default"


def _worst_error(results: dict[str, Any]) -> float:
    errors = [
        cell.get("max_error") or 0.0
        for row in results["rows"]
        for cell in row["systems"].values()
        if cell.get("status") == "ok"
    ]
    return max(errors, default=0.0)


def write(results: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    """Write ``latest.md`` / ``latest.json`` and time-stamped copies; returns the latest."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = results["meta"]["date"].replace(" ", "_").replace(":", "")
    text, data = markdown(results), json.dumps(results, indent=2, default=float)
    for name in (f"bench_{stamp}", "latest"):
        (directory / f"{name}.md").write_text(text)
        (directory / f"{name}.json").write_text(data)
    return directory / "latest.md", directory / "latest.json"
