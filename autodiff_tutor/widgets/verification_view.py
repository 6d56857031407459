"""The report views: a symbolic report's region and kink tables, with LaTeX, and a
``check_op`` / ``check_layer`` report's categories (:func:`check_report_view`).

``verify_symbolic`` proves a backward right region by region and judges the value
it takes on each boundary (kink). Its view shows both tables with the formulas
typeset (``HTMLMath``), and lets a student narrow them: one input, one region, only
what failed, and the smooth boundaries (where nothing can go wrong) on request.

>>> import sympy as sp
>>> from autodiff_tutor.verify.symbolic.report import RegionCheck, SymbolicReport
>>> x, g = sp.symbols("x g", real=True)
>>> report = SymbolicReport("relu", ("x",), ("g",), regions=[
...     RegionCheck("x", "x < 0", (x < 0,), sp.Integer(0), sp.Integer(0), "proved"),
...     RegionCheck("x", "x > 0", (x > 0,), g, 2 * g, "differs", {"x": 1.0, "g": 1.0}, 1.0, 2.0),
... ])
>>> view = verification_view(report)
>>> [c.region for c in view.shown_regions]
['x < 0', 'x > 0']
>>> view.failures_only.value = True
>>> [c.region for c in view.shown_regions]
['x > 0']
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.verify.numeric.report import COLOURS, CheckReport
from autodiff_tutor.verify.symbolic.report import latex
from autodiff_tutor.widgets.needs_kernel import needs_kernel
from autodiff_tutor.widgets.render import table_html

__all__ = ["CheckReportView", "VerificationView", "check_report_view", "verification_view"]

_ALL = "all"


def _tex(expr: Any) -> str:
    return "$\\text{None}$" if expr is None else f"${html.escape(latex(expr))}$"


def _region_tex(check: Any) -> str:
    if not check.conditions:
        return html.escape(check.region)
    return "$" + html.escape(", ".join(latex(c) for c in check.conditions)) + "$"


def _point(point: dict[str, float] | None) -> str:
    return ", ".join(f"{k} = {v:.6g}" for k, v in (point or {}).items())


def _verdict(text: str, passed: bool) -> str:
    colour = COLOURS["passed" if passed else "failed"]
    return f'<span style="color:{colour};font-weight:bold">{html.escape(text)}</span>'


class CheckReportView(widgets.VBox):
    """A :class:`~autodiff_tutor.verify.CheckReport` as a filtered table (see
    :func:`check_report_view`). ``status_picker`` is ``"all"`` or one status;
    ``shown_entries`` are the entries on screen."""

    def __init__(self, report: Any):
        self.report = report
        counts = {s: sum(1 for e in report.entries if e.status == s) for s in COLOURS}
        status = "passed" if report.passed else "FAILED"
        colour = COLOURS["passed" if report.passed else "failed"]
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        self.header = widgets.HTML(
            f"<b>check of {html.escape(report.subject)}</b>: "
            f'<span style="color:{colour};font-weight:bold">{status}</span> ({summary})'
        )
        options = [(f"all ({len(report.entries)})", _ALL)] + [
            (f"{s} ({n})", s) for s, n in counts.items() if n
        ]
        self.status_picker = widgets.ToggleButtons(options=options, value=_ALL, description="show")
        self.table_html = widgets.HTML()
        super().__init__([self.header, self.status_picker, self.table_html])
        needs_kernel(self, "the buttons filter the table")
        self.status_picker.observe(self._update, names="value")
        self._update()

    def __repr__(self) -> str:
        status = "passed" if self.report.passed else "FAILED"
        return f"<check report view of {self.report.subject}: {status}>"

    @property
    def shown_entries(self) -> list[Any]:
        """The entries the table shows now."""
        chosen = self.status_picker.value
        return [e for e in self.report.entries if chosen == _ALL or e.status == chosen]

    def _update(self, change: Any = None) -> None:
        rows = [
            [
                html.escape(e.category),
                f'<span style="color:{COLOURS[e.status]};font-weight:bold">{e.status}</span>',
                f'<span style="white-space:pre-wrap">{html.escape(e.message)}</span>',
            ]
            for e in self.shown_entries
        ]
        self.table_html.value = table_html(["category", "result", "details"], rows, escape=False)


def check_report_view(report: Any) -> CheckReportView:
    """A view of the report of ``check_op`` or ``check_layer``: a coloured table of the
    categories (forward, backward, gradients, kinks, dtypes, GPU...), with buttons to
    show only the failed ones, the warnings, and so on.

    >>> from autodiff_tutor.verify import CheckEntry, CheckReport
    >>> report = CheckReport("double", [
    ...     CheckEntry("forward", "passed", "runs; 1 output"),
    ...     CheckEntry("gradients", "failed", "dX differs from finite differences"),
    ...     CheckEntry("GPU", "skipped", "no GPU: cupy is not installed"),
    ... ])
    >>> view = check_report_view(report)
    >>> view.status_picker.value = "failed"
    >>> [entry.category for entry in view.shown_entries]
    ['gradients']
    """
    if not hasattr(report, "entries") or not hasattr(report, "subject"):
        raise ArgumentError(
            f"check_report_view needs the report of check_op or check_layer, "
            f"got {type(report).__name__}",
            hint="report = check_op(op, *inputs); check_report_view(report)",
        )
    return CheckReportView(report)


class VerificationView(widgets.VBox):
    """A :class:`~autodiff_tutor.verify.symbolic.report.SymbolicReport` as filtered
    tables; see the module docstring.

    ``input_picker`` (``"all"`` or one input), ``region_picker`` (``"all"`` or one
    region), ``failures_only`` and ``show_smooth`` filter; ``shown_regions`` and
    ``shown_kinks`` are the checks on screen.
    """

    def __init__(self, report: Any):
        self.report = report
        status = "passed" if report.passed else "FAILED"
        head = [
            f"<b>symbolic check of {html.escape(report.name)}</b>: "
            f"{_verdict(status, report.passed)} ({len(report.regions)} region checks, "
            f"{len(report.kinks)} kink checks, {len(report.failures())} failed)"
        ]
        head += [f"<br>forward: {_tex(out)}" for out in report.outputs]
        if report.assumptions:
            head.append(f"<br>assuming {html.escape(', '.join(report.assumptions))}")
        self.header = widgets.HTMLMath("".join(head))
        self.input_picker = widgets.ToggleButtons(
            options=[_ALL, *report.inputs], value=_ALL, description="input"
        )
        self.region_picker = widgets.Dropdown(
            options=[_ALL, *report.region_names()], value=_ALL, description="region"
        )
        self.failures_only = widgets.Checkbox(value=False, description="only what failed")
        self.show_smooth = widgets.Checkbox(value=False, description="smooth boundaries too")
        self.regions_html = widgets.HTMLMath()
        self.kinks_html = widgets.HTMLMath()
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in report.notes)
        self.notes_html = widgets.HTML(
            f"<details><summary>notes</summary><ul>{notes}</ul></details>" if notes else ""
        )
        controls = widgets.HBox([self.region_picker, self.failures_only, self.show_smooth])
        super().__init__(
            [
                self.header,
                self.input_picker,
                controls,
                self.regions_html,
                self.kinks_html,
                self.notes_html,
            ]
        )
        needs_kernel(self, "the choices redraw the tables")
        for control in (
            self.input_picker,
            self.region_picker,
            self.failures_only,
            self.show_smooth,
        ):
            control.observe(self._update, names="value")
        self._update()

    def __repr__(self) -> str:
        status = "passed" if self.report.passed else "FAILED"
        return f"<verification view of {self.report.name}: {status}>"

    @property
    def shown_regions(self) -> list[Any]:
        """The region checks the table shows now."""
        return [c for c in self.report.regions if self._keep(c, [c.region])]

    @property
    def shown_kinks(self) -> list[Any]:
        """The kink checks the table shows now."""
        return [
            k
            for k in self.report.kinks
            if self._keep(k, [k.side_a, k.side_b])
            and (self.show_smooth.value or k.verdict != "smooth" or k.detail)
        ]

    def _keep(self, check: Any, regions: list[str]) -> bool:
        chosen_input, chosen_region = self.input_picker.value, self.region_picker.value
        return (
            (chosen_input == _ALL or check.input == chosen_input)
            and (chosen_region == _ALL or chosen_region in regions)
            and (not self.failures_only.value or not check.passed)
        )

    def _update(self, change: Any = None) -> None:
        rows = []
        for c in self.shown_regions:
            example = ""
            if c.counterexample is not None:
                example = (
                    f"{html.escape(_point(c.counterexample))}: the forward's derivative is "
                    f"{c.expected_value:.6g}, the backward gives {c.got_value:.6g}"
                )
            rows.append(
                [
                    html.escape(c.input),
                    _region_tex(c),
                    _tex(c.expected),
                    _tex(c.got),
                    _verdict(c.verdict, c.passed),
                    example,
                ]
            )
        header = [
            "input",
            "region",
            "derivative of the forward",
            "backward",
            "verdict",
            "counterexample",
        ]
        self.regions_html.value = (
            table_html(header, rows, escape=False) if rows else "<i>no region check to show</i>"
        )
        kinks = []
        for k in self.shown_kinks:
            detail = f" ({html.escape(k.detail)})" if k.detail else ""
            kinks.append(
                [
                    html.escape(k.boundary),
                    html.escape(k.input),
                    _tex(k.value),
                    f"{html.escape(k.side_a)}: {_tex(k.derivative_a)}",
                    f"{html.escape(k.side_b)}: {_tex(k.derivative_b)}",
                    _verdict(k.verdict, k.passed) + detail,
                ]
            )
        header = [
            "boundary",
            "input",
            "backward there",
            "from one side",
            "from the other",
            "verdict",
        ]
        hidden = len(self.report.kinks) - len(self.shown_kinks)
        more = f"<br><i>{hidden} boundary check(s) hidden by the filters</i>" if hidden else ""
        self.kinks_html.value = (
            "<b>kinks</b>: the backward's value on each boundary between two regions"
            + (table_html(header, kinks, escape=False) if kinks else "<br><i>none to show</i>")
            + more
        )


def verification_view(report: Any) -> widgets.VBox:
    """A view of a check report: a symbolic report (``verify_symbolic``) as region and
    kink tables with LaTeX, or a ``check_op`` / ``check_layer`` report (then the same
    as :func:`~autodiff_tutor.widgets.check_report_view`). See the module docstring.
    """
    if isinstance(report, CheckReport):
        return check_report_view(report)
    if not all(hasattr(report, name) for name in ("regions", "kinks", "region_names")):
        raise ArgumentError(
            f"verification_view needs the report of verify_symbolic, got {type(report).__name__}",
            hint="report = verify_symbolic(op); verification_view(report)",
        )
    return VerificationView(report)
