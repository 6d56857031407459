"""The ratio plot: every system's time over the hand-written one, side by side.

One group of bars per workload and size, one bar per gradient system that ran
(log scale: jax's eager mode is hundreds of times slower on small Python loops),
lines at 1 (hand-written) and at the target (1.2). Saved next to the report, as
``latest_ratios.png`` and a time-stamped copy (``benchmarks/results/``, git-ignored).

>>> rows = [{"workload": "w", "size": "s", "label": "n=1", "systems": {
...     "hand-written": {"status": "ok", "timing": {"median": 2.0}},
...     "autodiff_tutor": {"status": "ok", "timing": {"median": 3.0}},
...     "torch": {"status": "missing"}}}]
>>> ratios({"rows": rows})
(['w\\ns'], {'autodiff_tutor': [1.5]})
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.report import GRADIENT_SYSTEMS, TARGET, median_of


def ratios(results: dict[str, Any]) -> tuple[list[str], dict[str, list[float | None]]]:
    """Row labels and, per system that ran somewhere, its ratio to hand-written per row
    (``None`` where it did not run)."""
    labels = [f"{row['workload']}\n{row['size']}" for row in results["rows"]]
    found: dict[str, list[float | None]] = {}
    for name in GRADIENT_SYSTEMS[1:]:
        values = []
        for row in results["rows"]:
            base = median_of(row["systems"].get("hand-written"))
            ours = median_of(row["systems"].get(name))
            values.append(ours / base if ours is not None and base else None)
        if any(v is not None for v in values):
            found[name] = values
    return labels, found


def _floor(row: dict[str, Any]) -> float | None:
    """The row's bandwidth floor over its hand-written time."""
    base = median_of(row["systems"].get("hand-written"))
    floor = row.get("bandwidth_floor_s")
    return floor / base if floor and base else None


def plot(results: dict[str, Any], directory: Path) -> Path | None:
    """Draw the ratios into ``directory`` (``latest_ratios.png`` and a time-stamped
    copy); ``None`` when matplotlib is not installed or nothing ran."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    labels, found = ratios(results)
    if not found:
        return None
    width = 0.8 / len(found)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(labels)), 4.0))
    for k, (name, values) in enumerate(found.items()):
        xs = [i + (k - (len(found) - 1) / 2) * width for i, v in enumerate(values) if v]
        axes.bar(xs, [v for v in values if v], width, label=name)
    floors = [_floor(row) for row in results["rows"]]
    if any(floors):  # the bandwidth floor of each row, a short line over its bars
        for i, floor in enumerate(floors):
            if floor:
                axes.hlines(floor, i - 0.45, i + 0.45, colors="grey", linestyles=":")
        axes.plot([], [], color="grey", linestyle=":", label="bandwidth floor")
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.axhline(TARGET, color="red", linestyle="--", linewidth=0.8, label=f"target {TARGET}")
    axes.set_yscale("log")
    axes.set_xticks(range(len(labels)), labels, fontsize=8)
    axes.set_ylabel("time / hand-written numpy")
    axes.set_title(f"value and gradient, {results['meta']['date']}")
    axes.legend(fontsize=8)
    figure.tight_layout()
    directory.mkdir(parents=True, exist_ok=True)
    stamp = results["meta"]["date"].replace(" ", "_").replace(":", "")
    for name in (f"bench_{stamp}_ratios.png", "latest_ratios.png"):
        figure.savefig(directory / name, dpi=120)
    plt.close(figure)
    return directory / "latest_ratios.png"
