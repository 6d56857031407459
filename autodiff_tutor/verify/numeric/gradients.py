"""The "finite differences" and "kinks" categories of ``check_op``.

The op's gradients (float64, random output gradients) are compared element by
element with 5-point central differences (:mod:`autodiff_tutor.verify.numeric.differences`).
Elements on or next to a kink are not compared: they are reported, with the slopes
on either side and the one the backward picks, and the whole comparison is re-run at
inputs nudged by about 1% (up to three times), where the kink is out of the way.

>>> import numpy as np
>>> from autodiff_tutor.ops import PReLUFunction
>>> X, alpha = np.array([[-1.0, 0.0, 2.0]]), np.full((1, 3), 0.5)
>>> fd, kinks = finite_difference_entries(
...     PReLUFunction("BC"), "prelu", (X, alpha), (True, True), ("X", "alpha"),
...     rng=np.random.default_rng(0))
>>> fd.status, kinks.status
('passed', 'warning')
>>> print(kinks.message.splitlines()[1])
  X[0, 1]: slope ... from the left, ... from the right; backward gives ... (the left slope)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.runtime.backend import array_module, shape_of, size
from autodiff_tutor.verify.numeric.common import backward_raw, random_like
from autodiff_tutor.verify.numeric.differences import STEP, Probe, element, probe_input
from autodiff_tutor.verify.numeric.report import CheckEntry

__all__ = ["finite_difference_entries"]

NUDGES = 3


def _label(names: tuple[str, ...], p: Probe) -> str:
    index = f"[{', '.join(map(str, p.index))}]" if p.index else ""
    return f"{names[p.input]}{index}"


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-4 * (abs(a) + abs(b)) + 1e-6


def _which(p: Probe, analytic: float) -> str:
    if _close(p.left, p.right):
        return "next to a kink"
    if _close(analytic, p.left):
        return "the left slope"
    if _close(analytic, p.right):
        return "the right slope"
    if _close(analytic, (p.left + p.right) / 2):
        return "their average"
    return "neither one-sided slope"


def _nudged(
    inputs: tuple[Any, ...], flags: tuple[bool, ...], rng: np.random.Generator
) -> tuple[Any, ...]:
    out = []
    for x, f in zip(inputs, flags, strict=True):
        if f:
            xp = array_module(x)
            # 0.5% to 1% of (|x| + 1), either way: far beyond the stencil's 2 steps
            shift = rng.choice([-1.0, 1.0], shape_of(x)) * rng.uniform(0.5e-2, 1e-2, shape_of(x))
            x = x + (xp.abs(x) + 1.0) * xp.asarray(shift, dtype=x.dtype)
        out.append(x)
    return tuple(out)


def _gradients(
    op: Any, inputs: tuple[Any, ...], d_outputs: tuple[Any, ...], flags: tuple[bool, ...]
) -> Any:
    """The backward's gradients, or a string saying why they cannot be compared."""
    try:
        outputs, saved = op.op_forward(*inputs)
        result = backward_raw(op, d_outputs, flags, saved)
    except Exception as exc:  # reported by the backward category
        return f"backward raised {type(exc).__name__}"
    grads = result if isinstance(result, (tuple, list)) else (result,)
    if len(grads) != len(inputs):
        return "backward returns the wrong number of gradients"
    for g, x, f in zip(grads, inputs, flags, strict=True):
        if f and (g is None or shape_of(g) != shape_of(x)):
            return "a gradient is missing or has the wrong shape"
    return tuple(grads)


def finite_difference_entries(
    op: Any,
    name: str,
    inputs: tuple[Any, ...],
    flags: tuple[bool, ...],
    names: tuple[str, ...],
    *,
    rtol: float = 1e-6,
    atol: float = 1e-7,
    max_elements: int = 64,
    rng: np.random.Generator,
) -> list[CheckEntry]:
    """The "finite differences" and "kinks" entries for float64 ``inputs`` (see the module)."""
    outputs, _ = op.op_forward(*inputs)
    d_outputs = tuple(random_like(y, rng) for y in outputs)
    chosen = {}
    for i, (x, f) in enumerate(zip(inputs, flags, strict=True)):
        if f:
            n = size(x)
            chosen[i] = (
                range(n)
                if n <= max_elements
                else sorted(rng.choice(n, max_elements, replace=False))
            )
    point, first_kinks, probes, grads = inputs, None, [], None
    for attempt in range(NUDGES + 1):
        grads = _gradients(op, point, d_outputs, flags)
        if isinstance(grads, str):
            reason = f"{grads} (see above)"
            return [
                CheckEntry("finite differences", "skipped", reason),
                CheckEntry("kinks", "skipped", reason),
            ]
        probes = [p for i, js in chosen.items() for p in probe_input(op, point, d_outputs, i, js)]
        kinks = [(p, element(grads[p.input], _flat(p, point))) for p in probes if p.kink]
        if first_kinks is None:
            first_kinks = kinks
        if not kinks or attempt == NUDGES:
            break
        point = _nudged(inputs, flags, rng)
    mismatches = []
    for p in probes:
        if p.kink:
            continue
        a = element(grads[p.input], _flat(p, point))
        if abs(a - p.central) > atol + rtol * abs(p.central):
            mismatches.append((abs(a - p.central), p, a))
    compared = sum(not p.kink for p in probes)
    total = sum(size(inputs[i]) for i in chosen)
    sampled = (
        f" (a sample of {total}, at most {max_elements} per input)" if total > len(probes) else ""
    )
    where = " at inputs nudged off a kink" if point is not inputs else ""
    if mismatches:
        mismatches.sort(key=lambda m: -m[0])
        lines = [
            f"{len(mismatches)} of {compared} elements differ{where} (rtol={rtol}, atol={atol}):"
        ]
        lines += [
            f"  d/d {_label(names, p)}: backward {a:.6g}, finite differences {p.central:.6g}"
            for _, p, a in mismatches[:5]
        ]
        fd = CheckEntry("finite differences", "failed", "\n".join(lines))
    else:
        fd = CheckEntry(
            "finite differences",
            "passed",
            f"{compared} elements{sampled} match 5-point differences (h={STEP:g}, float64){where}",
        )
    return [fd, _kinks_entry(first_kinks or [], probes, names)]


def _flat(p: Probe, inputs: tuple[Any, ...]) -> int:
    shape = shape_of(inputs[p.input])
    return int(np.ravel_multi_index(p.index, shape)) if shape else 0


def _kinks_entry(
    first: list[tuple[Probe, float]], final: list[Probe], names: tuple[str, ...]
) -> CheckEntry:
    if not first:
        return CheckEntry(
            "kinks", "passed", f"no input element within 2 steps (h={STEP:g}) of a kink"
        )
    lines = [f"{len(first)} element(s) on or next to a kink at the given inputs:"]
    for p, a in first[:5]:
        lines.append(
            f"  {_label(names, p)}: slope {p.left:.6g} from the left, "
            f"{p.right:.6g} from the right; backward gives {a:.6g} ({_which(p, a)})"
        )
    left = [p for p in final if p.kink]
    if left:
        lines.append(
            f"{len(left)} stayed next to a kink after {NUDGES} nudges and were not compared"
        )
    else:
        lines.append("finite differences were compared at inputs nudged by about 1% instead")
    return CheckEntry("kinks", "warning", "\n".join(lines))
