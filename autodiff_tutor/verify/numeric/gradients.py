"""The "finite differences" and "kinks" categories of ``check_op``.

The op's gradients (float64, random output gradients) are compared element by
element with 5-point central differences (:mod:`autodiff_tutor.verify.numeric.differences`).
A gradient that is not a number (nan or inf) never matches. Where the forward itself
is not finite (at the inputs, or at every step next to them) there is nothing to
compare with: those elements could not be checked, and the category fails, asking
for inputs inside the forward's domain.

Elements on or next to a kink are not compared: they are reported, with the slopes
on either side and the one the backward picks, and the whole comparison is re-run at
inputs nudged by about 1% (up to three times), where the kink is out of the way. On
a kink at the point, the backward's value must lie between the one-sided slopes (one
of them, or a mix: the convention ``verify_symbolic`` judges kinks by); a value
outside them, or one that is not a number, fails the "kinks" category.

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

import math
from typing import Any

import numpy as np

from autodiff_tutor.runtime.backend import array_module, shape_of, size
from autodiff_tutor.verify.numeric.common import backward_raw, random_like
from autodiff_tutor.verify.numeric.differences import FLOOR, STEP, Probe, element, probe_input
from autodiff_tutor.verify.numeric.report import CheckEntry

__all__ = ["finite_difference_entries", "valid_at_kink"]

#: the step, as the messages say it
STEPS = f"h={STEP:g}·max(|x|, {FLOOR:g})"
NUDGES = 3


def _label(names: tuple[str, ...], p: Probe) -> str:
    index = f"[{', '.join(map(str, p.index))}]" if p.index else ""
    return f"{names[p.input]}{index}"


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-4 * (abs(a) + abs(b)) + 1e-6


def valid_at_kink(p: Probe, analytic: float) -> bool:
    """Whether a backward's value at a kink is one the function's slopes allow: a
    number, and (where the one-sided slopes are settled) between them.

    >>> p = Probe(0, (), 0.5, 0.5, 0.0, 1.0, True, True)
    >>> valid_at_kink(p, 0.0), valid_at_kink(p, 0.3), valid_at_kink(p, 7.0)
    (True, True, False)
    >>> valid_at_kink(p, float("nan"))
    False
    """
    if not math.isfinite(analytic):
        return False
    if not p.settled:
        return True  # the slopes either side are not resolved: nothing to judge by
    low, high = sorted((p.left, p.right))
    slack = 1e-4 * (abs(low) + abs(high)) + 1e-6
    return low - slack <= analytic <= high + slack


def _which(p: Probe, analytic: float) -> str:
    if not math.isfinite(analytic):
        return "not a number"
    if _close(p.left, p.right):
        return "next to a kink"
    if _close(analytic, p.left):
        return "the left slope"
    if _close(analytic, p.right):
        return "the right slope"
    if _close(analytic, (p.left + p.right) / 2):
        return "their average"
    if valid_at_kink(p, analytic) and p.settled:
        return "between them"
    if not p.settled:
        return "neither one-sided slope"
    return "outside both one-sided slopes: no side gives it"


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

    def probed(point: tuple[Any, ...]) -> list[Probe]:
        return [p for i, js in chosen.items() for p in probe_input(op, point, d_outputs, i, js)]

    grads = _gradients(op, inputs, d_outputs, flags)
    if isinstance(grads, str):
        return _skipped(grads)
    given = probed(inputs)
    first_kinks = [(p, element(grads[p.input], _flat(p, inputs))) for p in given if p.kink]
    unchecked = [p for p in given if p.unchecked]
    point, probes, point_grads = inputs, given, grads
    for _ in range(NUDGES if first_kinks else 0):
        nudged = _nudged(inputs, flags, rng)
        nudged_grads = _gradients(op, nudged, d_outputs, flags)
        if isinstance(nudged_grads, str):
            return _skipped(nudged_grads)
        nudged_probes = probed(nudged)
        if any(p.unchecked for p in nudged_probes):
            continue  # the nudge left the forward's domain: not the op's fault
        point, probes, point_grads = nudged, nudged_probes, nudged_grads
        if not any(p.kink for p in probes):
            break
    mismatches = []
    for p in probes:
        if p.kink or p.unchecked:
            continue
        a = element(point_grads[p.input], _flat(p, point))
        if not abs(a - p.central) <= atol + rtol * abs(p.central):  # a nan never matches
            gap = abs(a - p.central) if math.isfinite(a) else math.inf
            mismatches.append((gap, p, a))
    compared = sum(not (p.kink or p.unchecked) for p in probes)
    total = sum(size(inputs[i]) for i in chosen)
    sampled = (
        f" (a sample of {total}, at most {max_elements} per input)" if total > len(probes) else ""
    )
    where = " at inputs nudged off a kink" if point is not inputs else ""
    lines = []
    if mismatches:
        mismatches.sort(key=lambda m: -m[0])
        lines.append(
            f"{len(mismatches)} of {compared} elements differ{where} (rtol={rtol}, atol={atol}):"
        )
        lines += [
            f"  d/d {_label(names, p)}: backward {a:.6g}, finite differences {p.central:.6g}"
            for _, p, a in mismatches[:5]
        ]
    if unchecked:
        lines.append(
            f"{len(unchecked)} element(s) could not be checked: the forward is not finite at "
            "(or next to) the given inputs, so finite differences give no value there; "
            "check at inputs inside the forward's domain:"
        )
        lines += [f"  {_label(names, p)}: {p.unchecked}" for p in unchecked[:5]]
    if lines:
        fd = CheckEntry("finite differences", "failed", "\n".join(lines))
    else:
        fd = CheckEntry(
            "finite differences",
            "passed",
            f"{compared} elements{sampled} match 5-point differences ({STEPS}, float64){where}",
        )
    return [fd, _kinks_entry(first_kinks, probes, names)]


def _skipped(reason: str) -> list[CheckEntry]:
    why = f"{reason} (see above)"
    return [CheckEntry("finite differences", "skipped", why), CheckEntry("kinks", "skipped", why)]


def _flat(p: Probe, inputs: tuple[Any, ...]) -> int:
    shape = shape_of(inputs[p.input])
    return int(np.ravel_multi_index(p.index, shape)) if shape else 0


def _kinks_entry(
    first: list[tuple[Probe, float]], final: list[Probe], names: tuple[str, ...]
) -> CheckEntry:
    if not first:
        return CheckEntry("kinks", "passed", f"no input element within 2 steps ({STEPS}) of a kink")
    invalid = [(p, a) for p, a in first if not valid_at_kink(p, a)]
    if invalid:
        lines = [
            f"{len(invalid)} of {len(first)} element(s) on or next to a kink get a value from "
            "the backward that no side of the kink gives (a gradient there is one of the "
            "one-sided slopes, or a mix of them):"
        ]
    else:
        lines = [f"{len(first)} element(s) on or next to a kink at the given inputs:"]
    shown = invalid + [(p, a) for p, a in first if valid_at_kink(p, a)]
    for p, a in shown[:5]:
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
    return CheckEntry("kinks", "failed" if invalid else "warning", "\n".join(lines))
