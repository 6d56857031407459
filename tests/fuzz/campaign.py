"""A fuzz campaign: many seeds, a summary table, minimized reproducers of failures.

>>> summary = Summary()
>>> summary.add(frozenset({"if"}), [Outcome("compiler", "right")])
>>> summary.counts[("compiler", "if", "right")]
1
>>> summary.add(frozenset(), [Outcome("compiler", "right"), Outcome("hvp", "refused", "no")])
>>> summary.after_first_order["refused"]
1
"""

from __future__ import annotations

import collections
import functools
import json
import multiprocessing
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autodiff_tutor.compiler import specialized
from fuzz.check import MODES, OPTIONAL_MODES, Outcome, check_program
from fuzz.check_forms import driver
from fuzz.generator import CONSTRUCTS, Program, generate
from fuzz.minimize import minimize, signature, simplify_result, still_fails

KINDS = ("right", "refused", "wrong", "crash", "unchecked")
FAILURES = ("wrong", "crash")
PROGRAMS_PER_WORKER = 1000  # a worker process is replaced after this many programs
CHUNK = 25  # programs handed to a worker at a time
EXAMPLES = 8  # failing programs kept per (mode, kind, first word), to minimize at the end


@dataclass
class Summary:
    """Counts per (mode, construct, kind), per (mode, kind), and distinct failures."""

    programs: int = 0
    invalid: int = 0
    counts: collections.Counter = field(default_factory=collections.Counter)
    totals: collections.Counter = field(default_factory=collections.Counter)
    refusals: collections.Counter = field(default_factory=collections.Counter)
    examples: dict[tuple[str, str, str], list[tuple[Program, Outcome]]] = field(
        default_factory=dict
    )
    failure_counts: collections.Counter = field(default_factory=collections.Counter)
    # second order where the compiled gradient is right (the rate the refusal bar is about)
    after_first_order: collections.Counter = field(default_factory=collections.Counter)
    after_first_order_refusals: collections.Counter = field(default_factory=collections.Counter)

    def add(self, constructs: Iterable[str], outcomes: list[Outcome], program=None) -> None:
        """Count one program's outcomes (no outcome: the program was invalid)."""
        self.programs += 1
        if not outcomes:
            self.invalid += 1
        first_right = any(o.mode == "compiler" and o.kind == "right" for o in outcomes)
        for outcome in outcomes:
            if first_right and outcome.mode == "hvp":
                self.after_first_order[outcome.kind] += 1
                if outcome.kind == "refused":
                    reason = outcome.detail.splitlines()[0][:90]
                    self.after_first_order_refusals[reason] += 1
            self.totals[(outcome.mode, outcome.kind)] += 1
            for construct in constructs:
                self.counts[(outcome.mode, construct, outcome.kind)] += 1
            if outcome.kind == "refused":
                self.refusals[(outcome.mode, outcome.detail.splitlines()[0][:90])] += 1
            if outcome.kind in FAILURES:
                key = signature(outcome)
                self.failure_counts[key] += 1
                kept = self.examples.setdefault(key, [])
                if program is not None and len(kept) < EXAMPLES and _new_kind(program, kept):
                    kept.append((program, outcome))

    def _after_first_order_lines(self) -> list[str]:
        """The hvp row counted only where the compiled gradient is right (needs the
        modes compiler and hvp), and its refusals."""
        row = [self.after_first_order[k] for k in KINDS]
        if not sum(row):
            return []
        rate = f"{100 * row[1] / sum(row):.1f}"
        lines = [f"{'hvp|1st':<10}" + "".join(f"{n:>10}" for n in row) + f"{rate:>10}"]
        lines.append("  (hvp|1st: second order where the compiled gradient is right)")
        for error, n in self.after_first_order_refusals.most_common(12):
            lines.append(f"  {n:>7}  hvp|1st   {error[:100]}")
        return lines

    def bad(self) -> int:
        """How many outcomes were wrong or crashed."""
        return sum(n for (_, kind), n in self.totals.items() if kind in FAILURES)

    def table(self) -> str:
        """The summary as text: per mode, per construct, refusal rates, failures."""
        lines = [f"programs: {self.programs} (invalid, skipped: {self.invalid})", ""]
        lines.append(f"{'mode':<10}" + "".join(f"{k:>10}" for k in KINDS) + f"{'refused%':>10}")
        ran = [m for m in OPTIONAL_MODES if any(self.totals[(m, k)] for k in KINDS)]
        for mode in (*MODES, *ran):
            row = [self.totals[(mode, k)] for k in KINDS]
            total = sum(row)
            rate = f"{100 * row[1] / total:.1f}" if total else "-"
            lines.append(f"{mode:<10}" + "".join(f"{n:>10}" for n in row) + f"{rate:>10}")
        lines += self._after_first_order_lines()
        for mode in (*MODES, *ran):
            lines += ["", f"[{mode}] per construct: " + " / ".join(KINDS)]
            for construct in CONSTRUCTS:
                row = [self.counts[(mode, construct, k)] for k in KINDS]
                if sum(row):
                    lines.append(f"  {construct:<16}" + "".join(f"{n:>8}" for n in row))
        lines += ["", "top refusals (mode, error):"]
        for (mode, error), n in self.refusals.most_common(12):
            lines.append(f"  {n:>7}  {mode:<9} {error[:100]}")
        lines += ["", "distinct failures (mode, kind, first word): count"]
        for key, n in self.failure_counts.most_common():
            lines.append(f"  {n:>7}  {key}")
        return "\n".join(lines)


def _new_kind(program: Program, kept: list[tuple[Program, Outcome]]) -> bool:
    """Keep a failing program unless one with a subset of its constructs is kept already
    (it most likely fails for the same reason)."""
    return not any(other.constructs <= program.constructs for other, _ in kept)


def check_seed(
    seed: int,
    exclude: frozenset[str],
    modes: tuple[str, ...],
    hvp_exclude: frozenset[str],
    in_place_from: int | None = None,
    require: frozenset[str] = frozenset(),
) -> tuple[Program, list[Outcome]]:
    """The program of ``seed`` and its outcomes (what a worker process computes).
    ``in_place_from``: the size from which specialized pairs update arrays in place
    (``1``: every array, so that the fuzz's small programs exercise that rewrite);
    ``require``: constructs one of which every program uses."""
    if in_place_from is not None:
        specialized.IN_PLACE_FROM = in_place_from
    program = generate(seed, exclude, require)
    return program, check_program(program, modes, hvp_exclude)


def run(
    seeds: Iterable[int],
    exclude: frozenset[str] = frozenset(),
    modes: tuple[str, ...] = MODES,
    progress: bool = False,
    hvp_exclude: frozenset[str] = frozenset(),
    workers: int = 0,
    in_place_from: int | None = None,
    require: frozenset[str] = frozenset(),
) -> Summary:
    """Check the program of every seed; ``progress`` shows a tqdm bar; ``require``:
    every program uses one of these constructs (see :func:`fuzz.generator.generate`).

    ``workers=0`` checks in this process. ``workers=n`` uses ``n`` worker processes,
    each replaced after ``PROGRAMS_PER_WORKER`` programs, so that what a program leaves
    behind in its process cannot add up over a long run.
    """
    seeds = list(seeds)
    check = functools.partial(
        check_seed,
        exclude=exclude,
        modes=modes,
        hvp_exclude=hvp_exclude,
        in_place_from=in_place_from,
        require=require,
    )
    if workers:
        context = multiprocessing.get_context("spawn")
        pool = context.Pool(workers, maxtasksperchild=PROGRAMS_PER_WORKER // CHUNK)
        results = pool.imap(check, seeds, chunksize=CHUNK)
    else:
        pool, results = None, map(check, seeds)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(seeds), unit="prog", smoothing=0.05)
    summary = Summary()
    try:
        for program, outcomes in results:
            summary.add(program.constructs, outcomes, program)
            if bar is not None:
                bar.update()
                bar.set_postfix(bad=summary.bad(), refresh=False)
    finally:
        if bar is not None:
            bar.close()
        if pool is not None:
            pool.terminate()
    return summary


def write_reproducers(summary: Summary, folder: Path) -> list[Path]:
    """Minimize the kept failing programs; write one file per distinct failure.

    Distinct: the same mode, kind and first word of the detail, and the same set
    of constructs left in the minimized program.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("[0-9][0-9][0-9]_*.py"):
        stale.unlink()
    distinct: dict[tuple, tuple[Program, Program, Outcome]] = {}
    for key, examples in summary.examples.items():
        for program, outcome in examples:
            fails = still_fails(outcome)
            small = minimize(simplify_result(minimize(program, fails), fails), fails)
            distinct.setdefault((*key, small.constructs), (program, small, outcome))
    written, details = [], {}
    for n, (key, (program, small, outcome)) in enumerate(distinct.items()):
        mode, kind, _word, constructs = key
        # the minimized program fails the same way, not always for the same reason
        same = [o for o in check_program(small, (mode,)) if signature(o) == signature(outcome)]
        details[key] = same[0].detail if same else ""
        path = folder / f"{n:03d}_{mode}_{kind}_{_slug('_'.join(sorted(constructs)))}.py"
        path.write_text(_reproducer(mode, kind, program, small, outcome, details[key]))
        written.append(path)
    (folder / "summary.txt").write_text(summary.table() + "\n")
    rows = [
        {
            "mode": k[0],
            "kind": k[1],
            "what": k[2],
            "constructs": sorted(k[3]),
            "seed": p.seed,
            "detail": o.detail,
            "minimized_detail": details[k],
        }
        for k, (p, _, o) in distinct.items()
    ]
    (folder / "failures.json").write_text(json.dumps(rows, indent=2))
    return written


def _reproducer(
    mode: str, kind: str, program: Program, small: Program, outcome: Outcome, small_detail=""
) -> str:
    x, w = small.inputs()
    inputs = f"\n\nx = np.array({x.tolist()!r})\nw = np.array({w.tolist()!r})\n"
    return (
        f"# mode={mode} kind={kind} seed={program.seed} kink_inputs={program.kink_inputs}\n"
        f"# constructs: {sorted(small.constructs)}\n# detail: {outcome.detail}\n"
        + (f"# detail of the minimized program: {small_detail}\n" if small_detail else "")
        + small.source
        + (driver(small, mode, inputs) if small.form is not None else inputs)
    )


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)[:40]
