"""``python -m fuzz`` (run from ``tests/``; ``make fuzz N=...``): a long fuzz campaign.

Checks the programs of seeds ``start .. start+N-1`` in every mode, shows a progress
bar, prints the summary (counts per mode and construct, refusal rates, distinct
failures) and writes minimized reproducers and the summary to ``--out``. Exits 1
when anything was wrong or crashed. ``--exclude`` leaves constructs out (the families
``object_method``, ``state_across_calls``, ``index_tricks`` and those of
:mod:`fuzz.forms_calls` too); ``--only`` makes
every program use one of the constructs named (``--only state_across_calls``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from fuzz.campaign import run, write_reproducers
from fuzz.check import MODES, OPTIONAL_MODES
from fuzz.forms import FAMILIES
from fuzz.forms_calls import CALL_FAMILIES, NESTED_FAMILIES
from fuzz.generator import CONSTRUCTS, MAKERS


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the campaign, report; the exit status says if it failed."""
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    parser.add_argument("-n", type=int, default=1000, help="number of programs")
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"))
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help=f"comma-separated modes, of {', '.join(MODES + OPTIONAL_MODES)}",
    )
    parser.add_argument(
        "--exclude", default="", help=f"comma-separated constructs to leave out: {CONSTRUCTS}"
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated constructs (those with a maker, or the families "
        f"{', '.join(FAMILIES + CALL_FAMILIES + NESTED_FAMILIES)}): every program uses one of them",
    )
    parser.add_argument(
        "-j", "--workers", type=int, default=1, help="worker processes (0: this process)"
    )
    parser.add_argument(
        "--in-place-from",
        type=int,
        default=None,
        help="arrays of this many elements and more are updated in place by specialized "
        "pairs (1: every array, to fuzz that rewrite on small programs)",
    )
    parser.add_argument(
        "--hvp-exclude", default="", help="comma-separated constructs whose programs skip hvp"
    )
    args = parser.parse_args(argv)
    exclude = frozenset(c for c in args.exclude.split(",") if c)
    hvp_exclude = frozenset(c for c in args.hvp_exclude.split(",") if c)
    require = frozenset(c for c in args.only.split(",") if c)
    unknown = (exclude | hvp_exclude) - set(CONSTRUCTS)
    if unknown:
        parser.error(f"unknown constructs: {sorted(unknown)}")
    families = set(FAMILIES) | set(CALL_FAMILIES) | set(NESTED_FAMILIES)
    if require - set(MAKERS) - families or require & exclude:
        parser.error(f"--only takes constructs with a maker, or families, not excluded: {require}")
    modes = tuple(m for m in args.modes.split(",") if m)
    began = time.perf_counter()
    seeds = range(args.start, args.start + args.n)
    summary = run(
        seeds,
        exclude,
        modes,
        progress=True,
        hvp_exclude=hvp_exclude,
        workers=args.workers,
        in_place_from=args.in_place_from,
        require=require,
    )
    elapsed = time.perf_counter() - began
    print(summary.table())
    print(f"\nrun time: {elapsed:.1f} s for {args.n} programs (seeds {args.start}..)")
    written = write_reproducers(summary, args.out)
    print(f"wrote {len(written)} minimized reproducer(s) and summary.txt to {args.out}/")
    return 1 if summary.bad() else 0


if __name__ == "__main__":
    sys.exit(main())
