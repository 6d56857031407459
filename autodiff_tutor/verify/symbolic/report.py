"""The result of a symbolic check: data for tests and autograders, text, and HTML.

A :class:`SymbolicReport` holds one :class:`RegionCheck` per input and region (the
derivative sympy computes from the forward, what the backward computes, the verdict,
and a counterexample point when they differ) and one :class:`KinkCheck` per input and
boundary between two regions (the value the backward takes on the boundary, the
one-sided derivatives, and whether that value is a valid choice).

>>> import sympy as sp
>>> x, g = sp.symbols("x g", real=True)
>>> check = RegionCheck("x", "x > 0", (x > 0,), g, g, "proved")
>>> report = SymbolicReport("relu", ("x",), ("g",), regions=[check])
>>> report.passed, report.entry("x", "x > 0").verdict
(True, 'proved')
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, fields
from typing import Any

import sympy as sp

__all__ = ["KinkCheck", "RegionCheck", "SymbolicReport"]


def _s(expr: Any) -> str:
    return "None" if expr is None else sp.sstr(expr)


#: names Python code gives Greek letters it cannot spell (``lambda`` is a keyword)
GREEK_SPELLINGS = {"lam": r"\lambda", "lmbda": r"\lambda", "lambd": r"\lambda"}


def latex(expr: Any) -> str:
    """``expr`` in LaTeX, with ``lam`` (and the other spellings of lambda) typeset as
    the letter rather than as the product of l, a and m.

    >>> x, lam = sp.symbols("x lam")
    >>> latex(x > lam)
    'x > \\\\lambda'
    """
    names = {s: GREEK_SPELLINGS[s.name] for s in expr.free_symbols if s.name in GREEK_SPELLINGS}
    return sp.latex(expr, symbol_names=names)


def _tex(expr: Any) -> str:
    return r"\text{None}" if expr is None else latex(expr)


def _point(point: dict[str, float] | None) -> str:
    if not point:
        return ""
    return ", ".join(f"{k}={v:.6g}" for k, v in point.items())


def _plain(check: RegionCheck | KinkCheck, formulas: tuple[str, ...]) -> dict[str, Any]:
    """A check's fields in order (its ``formulas`` as text, ``passed`` before the
    counterexample, no sympy ``conditions``)."""
    data: dict[str, Any] = {}
    for name in (f.name for f in fields(check)):
        if name == "counterexample":
            data["passed"] = check.passed
        if name != "conditions":
            value = getattr(check, name)
            data[name] = _s(value) if name in formulas else value
    return data


@dataclass
class RegionCheck:
    """One input in one region: expected derivative vs the backward's formula.

    ``verdict``: ``proved`` (sympy simplified the difference to 0), ``numeric`` (not
    proved, but equal at every sampled point: a fallback, reported as such), ``differs``
    (a counterexample exists), ``not finite`` (run with numpy, the backward is nan or
    inf at a point where the forward is finite), ``undecided`` (nothing could be
    evaluated). ``detail`` says more where the verdict came from running the code.
    """

    input: str
    region: str
    conditions: tuple[Any, ...]
    expected: Any
    got: Any
    verdict: str
    counterexample: dict[str, float] | None = None
    expected_value: float | None = None
    got_value: float | None = None
    detail: str = ""

    @property
    def passed(self) -> bool:
        """Proved equal, or equal at every sampled point (the numeric fallback)."""
        return self.verdict in ("proved", "numeric")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (strings and floats), for autograders and JSON."""
        return _plain(self, ("expected", "got"))


@dataclass
class KinkCheck:
    """One input on one boundary: the backward's value against the one-sided derivatives.

    ``verdict``: ``smooth`` (both sides agree and so does the backward), ``one-sided``
    (the backward takes one side's derivative), ``subgradient`` (a value strictly
    between the two), ``invalid`` (outside them, or, run with numpy, not a number),
    ``not analysed``. ``weight`` is the share of side *a* when the value is a convex
    combination ``weight * derivative_a + (1 - weight) * derivative_b``. A joint check
    of inputs that take different shares of one kink's sides is named by all of them
    (``input`` is ``"x, t"``; ``value`` and the derivatives are tuples).
    """

    input: str
    boundary: str
    side_a: str
    side_b: str
    value: Any
    derivative_a: Any
    derivative_b: Any
    verdict: str
    detail: str = ""
    weight: Any = None
    counterexample: dict[str, float] | None = None

    @property
    def passed(self) -> bool:
        """Every verdict but ``invalid`` is an acceptable choice at a kink."""
        return self.verdict != "invalid"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (strings and floats), for autograders and JSON."""
        return _plain(self, ("value", "derivative_a", "derivative_b", "weight"))


@dataclass
class SymbolicReport:
    """Everything :func:`~autodiff_tutor.verify.symbolic.functions.verify_symbolic` found."""

    name: str
    inputs: tuple[str, ...]
    seeds: tuple[str, ...]
    outputs: tuple[Any, ...] = ()
    assumptions: tuple[str, ...] = ()
    regions: list[RegionCheck] = field(default_factory=list)
    kinks: list[KinkCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every region check and every kink check passed (and there was one)."""
        checks = [*self.regions, *self.kinks]
        return bool(self.regions) and all(c.passed for c in checks)

    def failures(self) -> list[RegionCheck | KinkCheck]:
        """The checks that did not pass, regions first."""
        return [c for c in [*self.regions, *self.kinks] if not c.passed]

    def entry(self, input: str, region: str) -> RegionCheck:
        """The region check of ``input`` in the region described as ``region``."""
        for check in self.regions:
            if check.input == input and check.region == region:
                return check
        known = sorted({c.region for c in self.regions})
        raise KeyError(f"no check of {input!r} in region {region!r}; regions: {known}")

    def region_names(self) -> list[str]:
        """The regions, in the order they were checked."""
        return list(dict.fromkeys(c.region for c in self.regions))

    def to_dict(self) -> dict[str, Any]:
        """Plain data: name, passed, regions, kinks, notes."""
        return {
            "name": self.name,
            "passed": self.passed,
            "inputs": list(self.inputs),
            "assumptions": list(self.assumptions),
            "regions": [c.to_dict() for c in self.regions],
            "kinks": [k.to_dict() for k in self.kinks],
            "notes": list(self.notes),
        }

    # --- text ------------------------------------------------------------------------

    def text(self) -> str:
        """The report as plain text (what ``print(report)`` shows)."""
        status = "PASSED" if self.passed else "FAILED"
        lines = [f"symbolic check of {self.name}: {status}"]
        lines.append(f"  inputs {', '.join(self.inputs)}; output gradient {', '.join(self.seeds)}")
        if self.assumptions:
            lines.append(f"  assuming {', '.join(self.assumptions)}")
        lines += [f"  forward: {_s(out)}" for out in self.outputs]
        lines.append(f"  regions: {' | '.join(self.region_names())}")
        rows = [("input", "region", "derivative of the forward", "backward", "verdict")]
        rows += [(c.input, c.region, _s(c.expected), _s(c.got), c.verdict) for c in self.regions]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        for k, row in enumerate(rows):
            cells = [row[i].ljust(widths[i]) for i in range(4)] + [row[4]]
            lines.append("  " + "  ".join(cells).rstrip())
            if k == 0:
                continue
            check = self.regions[k - 1]
            if check.counterexample is not None:
                lines.append(
                    f"      counterexample: {_point(check.counterexample)}: the forward's "
                    f"derivative is {check.expected_value:.6g}, the backward gives "
                    f"{check.got_value:.6g}"
                )
            if check.detail:
                lines.append(f"      {check.detail}")
        if self.kinks:
            lines.append("  kinks (the backward's value on each boundary between two regions):")
            lines += self._kink_lines()
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def _kink_lines(self) -> list[str]:
        groups: dict[tuple[str, str, str], list[KinkCheck]] = {}
        for kink in self.kinks:
            groups.setdefault((kink.boundary, kink.side_a, kink.side_b), []).append(kink)
        lines = []
        for (boundary, side_a, side_b), kinks in groups.items():
            lines.append(f"    {boundary} (between {side_a} and {side_b})")
            smooth = [k.input for k in kinks if k.verdict == "smooth" and not k.detail]
            for kink in kinks:
                if kink.input in smooth:
                    continue
                detail = f" ({kink.detail})" if kink.detail else ""
                lines.append(
                    f"      d{kink.input}: backward {_s(kink.value)}; from {side_a}: "
                    f"{_s(kink.derivative_a)}; from {side_b}: {_s(kink.derivative_b)} "
                    f"-> {kink.verdict}{detail}"
                )
                if kink.counterexample is not None:
                    lines.append(f"        at {_point(kink.counterexample)}")
            if smooth:
                lines.append(
                    f"      smooth for {', '.join(smooth)}: the same derivative on both "
                    "sides, and the backward agrees"
                )
        return lines

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        failed = len(self.failures())
        return (
            f"<SymbolicReport {self.name}: {'passed' if self.passed else 'FAILED'}, "
            f"{len(self.regions)} region checks, {len(self.kinks)} kink checks, "
            f"{failed} failed>"
        )

    # --- notebook --------------------------------------------------------------------

    def _repr_html_(self) -> str:
        """A table with LaTeX formulas (rendered by Jupyter's MathJax)."""
        esc = html.escape
        status = "passed" if self.passed else "FAILED"
        colour = "#1a7f37" if self.passed else "#cf222e"
        out = [
            f"<div><b>symbolic check of {esc(self.name)}</b>: "
            f"<span style='color:{colour}'><b>{status}</b></span>"
        ]
        if self.assumptions:
            out.append(f"<br>assuming {esc(', '.join(self.assumptions))}")
        out.append("<table><tr><th>input</th><th>region</th><th>derivative of the forward</th>")
        out.append("<th>backward</th><th>verdict</th><th>counterexample</th></tr>")
        for c in self.regions:
            colour = "#1a7f37" if c.passed else "#cf222e"
            example = ""
            if c.counterexample is not None:
                example = (
                    f"{esc(_point(c.counterexample))}: expected {c.expected_value:.6g}, "
                    f"got {c.got_value:.6g}"
                )
                if c.detail:
                    example += f" ({esc(c.detail)})"
            out.append(
                f"<tr><td>{esc(c.input)}</td><td>{esc(c.region)}</td>"
                f"<td>${_tex(c.expected)}$</td><td>${_tex(c.got)}$</td>"
                f"<td style='color:{colour}'>{esc(c.verdict)}</td><td>{example}</td></tr>"
            )
        out.append("</table>")
        if self.kinks:
            out.append("<table><tr><th>boundary</th><th>input</th><th>backward there</th>")
            out.append("<th>side a</th><th>side b</th><th>verdict</th></tr>")
            for k in self.kinks:
                colour = "#1a7f37" if k.passed else "#cf222e"
                detail = f" ({esc(k.detail)})" if k.detail else ""
                out.append(
                    f"<tr><td>{esc(k.boundary)}</td><td>{esc(k.input)}</td>"
                    f"<td>${_tex(k.value)}$</td>"
                    f"<td>{esc(k.side_a)}: ${_tex(k.derivative_a)}$</td>"
                    f"<td>{esc(k.side_b)}: ${_tex(k.derivative_b)}$</td>"
                    f"<td style='color:{colour}'>{esc(k.verdict)}{detail}</td></tr>"
                )
            out.append("</table>")
        out += [f"<br><i>note: {esc(n)}</i>" for n in self.notes]
        out.append("</div>")
        return "".join(out)
