"""The specialized pair without and with in-place updates, timed in one process.

``python -m benchmarks.in_place [WORKLOAD:SIZE ...]`` (default ``mlp:large rnn:large
mlp:issue-large``) compiles a workload's specialized pair twice, once with the in-place
rewrite off (:mod:`autodiff_tutor.compiler.specialize.inplace`) and once as ``value_and_grad``
runs it, checks that both give the same numbers bit for bit, and times them
interleaved with the hand-written code (and torch eager where it is installed): on a
shared machine, only an interleaved comparison in one process is steady enough for a
few percent. Ratios are to the hand-written code.

>>> row = compare("mlp", "tiny", repeat=1)  # tiny: no statement large enough to rewrite
>>> {"before", "after", "hand-written"} <= set(row.seconds)
True
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks import THREAD_VARIABLES

DEFAULT = ("mlp:large", "rnn:large", "mlp:issue-large")


@dataclass
class Row:
    """Median CPU seconds per call of each variant of one workload and size."""

    name: str
    seconds: dict[str, float]


def _specialized_call(workload: Any, args: tuple[Any, ...], smallest: int) -> Callable[[], Any]:
    """The specialized pair of ``workload`` compiled with in-place updates from
    ``smallest`` elements, as a call of forward then backward."""
    from autodiff_tutor import differentiable
    from autodiff_tutor.compiler import specialized

    saved = specialized.IN_PLACE_FROM
    specialized.IN_PLACE_FROM = smallest
    try:
        derivative = differentiable(workload.fn).derivative(list(workload.wrt))
        derivative.specializations.clear()
        pair = specialized.specialized_pair(derivative, args)
    finally:
        specialized.IN_PLACE_FROM = saved

    def call() -> Any:
        out, memory = pair.forward(*args)
        return out, pair.backward(pair.seed, memory)

    return call


def compare(name: str, size: str, repeat: int = 30, smallest: int | None = None) -> Row:
    """Median seconds of the pair without (``before``) and with (``after``) in-place
    updates (from ``smallest`` elements; ``None``: as ``value_and_grad`` has it), the
    hand-written code and torch (where installed), interleaved."""
    import numpy as np

    from autodiff_tutor.compiler.specialize.inplace import IN_PLACE_FROM
    from benchmarks.systems import SYSTEMS
    from benchmarks.workloads import WORKLOADS

    workload = WORKLOADS[name]
    args = workload.make_args(np.random.default_rng(0), size)
    calls = {
        "before": _specialized_call(workload, args, sys.maxsize),
        "after": _specialized_call(workload, args, smallest or IN_PLACE_FROM),
    }
    (value, gradients), (value_after, gradients_after) = calls["before"](), calls["after"]()
    same = value == value_after and all(
        np.array_equal(a, b) for a, b in zip(gradients, gradients_after, strict=True)
    )
    if not same:
        raise AssertionError(f"{name} {size}: the in-place pair gives other numbers")
    for system in ("hand-written", "torch"):
        if SYSTEMS[system].version() is not None:  # torch: an optional extra
            calls[system] = SYSTEMS[system].prepare(workload, args).call
    times: dict[str, list[float]] = {k: [] for k in calls}
    for call in calls.values():
        call()
    for _ in range(repeat):
        for key, call in calls.items():
            start = time.process_time()
            call()
            times[key].append(time.process_time() - start)
    return Row(f"{name} {size}", {k: statistics.median(t) for k, t in times.items()})


def main(argv: list[str] | None = None) -> None:
    """Print the table (one BLAS thread unless the environment says otherwise)."""
    for variable in THREAD_VARIABLES:
        os.environ.setdefault(variable, "1")
    specs = (sys.argv[1:] if argv is None else argv) or DEFAULT
    print("Ratio to the hand-written value-and-gradient, median CPU time:\n")
    print("| row | before | after | torch |")
    print("|---|---|---|---|")
    for spec in specs:
        name, size = spec.split(":")
        row = compare(name, size)
        hand = row.seconds["hand-written"]
        ratio = {k: f"{v / hand:.3f}" for k, v in row.seconds.items()}
        torch = ratio.get("torch", "not installed")
        print(f"| {row.name} | {ratio['before']} | {ratio['after']} | {torch} |")


if __name__ == "__main__":
    main()
