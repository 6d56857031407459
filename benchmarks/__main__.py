"""``python -m benchmarks`` (``make bench``): run the suite, print and save the report.

Options: ``--quick`` (tiny sizes, one repeat: a smoke run in seconds), ``--workloads``,
``--systems``, ``--sizes``, ``--repeat``, ``--min-time``, ``--timer wall|cpu``, ``--out``
(default ``benchmarks/results/``, git-ignored; the report, the JSON and a plot of the
ratios to hand-written, :mod:`benchmarks.plot`). Exits with status 1 when a system's gradient
disagrees with the hand-written one or a system fails.

Run as a program, the suite asks the BLAS library (and torch) for one thread unless
``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` say otherwise:
every system does the same matrix products, and one thread keeps the ratios steady
on a small, shared machine.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from benchmarks import THREAD_VARIABLES
from benchmarks.workloads import ISSUE_SIZES

RESULTS = Path(__file__).resolve().parent / "results"


def _names(text: str | None) -> list[str] | None:
    return [n.strip() for n in text.split(",") if n.strip()] if text else None


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 repeat (smoke run)")
    parser.add_argument("--workloads", help="comma-separated workload names (default: all)")
    parser.add_argument("--systems", help="comma-separated systems (default: all)")
    parser.add_argument("--sizes", help="comma-separated sizes: tiny, small, large")
    parser.add_argument(
        "--issue",
        action="store_true",
        help="the six workloads of the performance issue (18): rosenbrock, mlp and horner "
        "at sizes issue-small and issue-large",
    )
    parser.add_argument("--repeat", type=int, help="repeats per measurement (default 7)")
    parser.add_argument("--warmup", type=int, help="warm-up calls before timing (default 1)")
    parser.add_argument(
        "--cpu",
        type=int,
        help="run every system on this one core (as taskset -c CPU; jax and numba included)",
    )
    parser.add_argument("--min-time", type=float, help="seconds per repeat (default 0.05)")
    parser.add_argument(
        "--timer",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: time.perf_counter (default); cpu: time.process_time, steadier on a "
        "machine shared with other work",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for the report")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run, print the markdown report, write it and the JSON; 1 when a check failed."""
    from benchmarks.plot import plot
    from benchmarks.report import markdown, write
    from benchmarks.runner import report_problems, run

    args = parse(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    quick = args.quick
    sizes = _names(args.sizes) or (["tiny"] if quick else ["small", "large"])
    workloads = _names(args.workloads)
    if args.issue:
        sizes = _names(args.sizes) or list(ISSUE_SIZES)
        workloads = workloads or ["rosenbrock", "mlp", "horner"]
    results = run(
        workloads=workloads,
        sizes=sizes,
        systems=_names(args.systems),
        repeat=args.repeat or (1 if quick else 7),
        min_time=args.min_time if args.min_time is not None else (0.0 if quick else 0.05),
        warmup=args.warmup if args.warmup is not None else (0 if quick else 1),
        compile_repeat=1 if quick else 3,
        timer=args.timer,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(markdown(results))
    md, js = write(results, args.out)
    print(f"written: {md} and {js}", file=sys.stderr)
    drawn = plot(results, args.out)
    print(f"ratio plot: {drawn or 'not drawn (matplotlib missing)'}", file=sys.stderr)
    report_problems(results)
    return 1 if results["problems"] else 0


if __name__ == "__main__":
    for variable in THREAD_VARIABLES:  # before numpy is imported (by main)
        os.environ.setdefault(variable, "1")
    sys.exit(main())
