"""Second order on the corpora with control flow: how many Hessian-vector products
the compiler gives right, refuses, or gets wrong, in both compositions.

For each program of ``corpus_flow*`` (at every seed: each takes its path),
``corpus_python`` and ``corpus_models`` whose first derivative compiles, and whose
first differentiated argument is an array or a number, the Hessian-vector product
``H v`` is computed as ``jvp(grad f)`` (forward over reverse) and as the ``vjp`` of
``grad f`` (reverse over reverse), and judged against autograd's ``H v`` (where
autograd runs the program) and central differences of the compiled gradient (trusted
where two step sizes agree). Run from ``tests/``::

    PYTHONPATH=.. python second_order_survey.py [--verbose]

It prints one line per corpus (checks, right, refused, wrong, crash, unchecked,
refusal rate) and, with ``--verbose``, what each refusal and failure said.
"""

from __future__ import annotations

import argparse
import types
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np

from autodiff_tutor import grad, jvp, vjp
from autodiff_tutor.errors import AutodiffError, InternalError

COMPOSITIONS = ("jvp(grad)", "vjp(grad)")
STEPS = (1e-4, 1e-6)


@dataclass
class Entry:
    """One program at one point: the function, its arguments, the position to
    differentiate, and the function autograd runs (None where it cannot)."""

    corpus: str
    name: str
    fn: Any
    args: tuple[Any, ...]
    index: int
    reference: Any


def _autograd_version(fn: Any, names: dict[str, Any]) -> Any:
    namespace = {**fn.__globals__, "np": anp, **names}
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def _flow_entries() -> list[Entry]:
    from corpus_flow import load_all

    entries = []
    for program in load_all():
        if program.bug:
            continue
        reference = _autograd_version(program.reference or program.fn, {})
        seeds = program.seeds if isinstance(program.seeds, tuple) else tuple(program.seeds)
        for seed in seeds:
            args = program.args(seed)
            name = f"{program.name}@{seed}"
            entries.append(Entry("flow", name, program.fn, args, program.wrt[0], reference))
    return entries


def _python_entries() -> list[Entry]:
    from corpus_python import PROGRAMS

    entries = []
    for program in PROGRAMS:
        if program.refused:
            continue
        args = program.sample(np.random.default_rng(0))
        reference = _autograd_version(program.fn, {}) if program.autograd else None
        entries.append(Entry("python", program.name, program.fn, args, program.wrt[0], reference))
    return entries


def _model_entries() -> list[Entry]:
    from corpus_models import load_all
    from test_corpus_models import AUTOGRAD_CANNOT, AUTOGRAD_NAMES, _inputs

    entries = []
    for model in load_all():
        if model.compiler:
            continue
        reference = None
        if model.name not in AUTOGRAD_CANNOT:
            reference = _autograd_version(model.fn, AUTOGRAD_NAMES)
        entry = Entry("models", model.name, model.fn, _inputs(model), model.wrt[0], reference)
        entries.append(entry)
    return entries


def _differentiable_point(entry: Entry) -> bool:
    x = entry.args[entry.index]
    return isinstance(x, (float, np.floating)) or (
        isinstance(x, np.ndarray) and x.dtype.kind == "f"
    )


def _direction(x: Any) -> Any:
    rng = np.random.default_rng(7)
    return rng.normal(size=np.shape(x)) if np.ndim(x) else float(rng.normal())


def _with(args: tuple[Any, ...], index: int, value: Any) -> list[Any]:
    changed = list(args)
    changed[index] = value
    return changed


def _compiled_hvp(entry: Entry, composition: str, v: Any) -> Any:
    gradient = grad(entry.fn, wrt=entry.index)
    if composition == "jvp(grad)":
        tangents = [None] * len(entry.args)
        tangents[entry.index] = v
        return jvp(gradient, tuple(entry.args), tuple(tangents))[1]
    _, pullback = vjp(gradient, *entry.args, wrt=[entry.index])
    return pullback(v)[0]


def _differences(entry: Entry, v: Any) -> tuple[Any, bool]:
    """Central differences of the compiled gradient along ``v``; trusted where two
    step sizes agree."""
    gradient = grad(entry.fn, wrt=entry.index)
    x = entry.args[entry.index]
    estimates = [
        (
            np.asarray(gradient(*_with(entry.args, entry.index, x + h * v)))
            - np.asarray(gradient(*_with(entry.args, entry.index, x - h * v)))
        )
        / (2 * h)
        for h in STEPS
    ]
    return estimates[1], bool(np.allclose(estimates[0], estimates[1], rtol=1e-3, atol=1e-5))


def _autograd_hvp(entry: Entry, v: Any) -> Any | None:
    if entry.reference is None:
        return None
    first = autograd.grad(entry.reference, entry.index)

    def along(x: Any) -> Any:
        return anp.sum(first(*_with(entry.args, entry.index, x)) * v)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(autograd.grad(along)(entry.args[entry.index]))
    except Exception:  # noqa: BLE001 - autograd cannot run it: no oracle here
        return None


def judge(entry: Entry, composition: str) -> tuple[str, str]:
    """(kind, detail) of one check: right, refused, wrong, crash or unchecked."""
    v = _direction(entry.args[entry.index])
    try:
        got = np.asarray(_compiled_hvp(entry, composition, v), dtype=np.float64)
    except InternalError as error:  # the generated code failed: not a refusal
        return "crash", str(error).splitlines()[0]
    except AutodiffError as error:
        return "refused", str(error).splitlines()[0]
    except Exception as error:  # noqa: BLE001 - anything else is a crash
        return "crash", f"{type(error).__name__}: {error}"
    expected, trusted = _differences(entry, v)
    oracle = _autograd_hvp(entry, v)
    if oracle is not None and np.allclose(got, oracle, rtol=1e-6, atol=1e-8):
        return "right", ""
    if np.allclose(got, expected, rtol=1e-4, atol=1e-6) and (trusted or oracle is None):
        return "right", ""
    if trusted or oracle is not None:
        return "wrong", f"got {got}, autograd {oracle}, differences {expected}"
    return "unchecked", "no oracle agrees with itself here"


def survey(verbose: bool = False, only: str = "") -> dict[str, Counter]:
    """Every check of every corpus, counted by kind; printed as a table. ``only``: the
    programs whose name contains it."""
    corpora = {"flow": _flow_entries, "python": _python_entries, "models": _model_entries}
    results: dict[str, Counter] = {}
    for corpus, entries_of in corpora.items():
        counts: Counter = Counter()
        for entry in entries_of():
            if only not in entry.name:
                continue
            if not _differentiable_point(entry):
                counts["skipped"] += 1
                continue
            for composition in COMPOSITIONS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    kind, detail = judge(entry, composition)
                counts[kind] += 1
                if verbose and kind != "right":
                    print(f"  {corpus:7} {entry.name:40} {composition:10} {kind}: {detail}")
        results[corpus] = counts
    print(
        f"{'corpus':8} {'checks':>6} {'right':>6} {'refused':>8} {'wrong':>6} {'crash':>6} "
        f"{'unchecked':>9} {'refused%':>9} {'skipped':>8}"
    )
    for corpus, counts in results.items():
        checks = sum(counts[k] for k in ("right", "refused", "wrong", "crash", "unchecked"))
        rate = 100 * counts["refused"] / checks if checks else 0.0
        print(
            f"{corpus:8} {checks:6} {counts['right']:6} {counts['refused']:8} "
            f"{counts['wrong']:6} {counts['crash']:6} {counts['unchecked']:9} {rate:8.1f}% "
            f"{counts['skipped']:8}"
        )
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="say what each failure said")
    parser.add_argument("--only", default="", help="the programs whose name contains this")
    arguments = parser.parse_args()
    survey(arguments.verbose, arguments.only)
