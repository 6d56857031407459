"""The check report view: what ``check_op`` / ``check_layer`` found, category by category.

A coloured table of the categories (forward, backward, gradients, kinks, dtypes,
GPU...), with buttons to show only the failed ones, the warnings, and so on.

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

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.verify.numeric.report import COLOURS
from autodiff_tutor.widgets.needs_kernel import needs_kernel
from autodiff_tutor.widgets.render import table_html

__all__ = ["CheckReportView", "check_report_view"]

_ALL = "all"


class CheckReportView(widgets.VBox):
    """A :class:`~autodiff_tutor.verify.CheckReport` as a filtered table; see the module
    docstring. ``status_picker`` is ``"all"`` or one status; ``shown_entries`` are the
    entries on screen."""

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
    """A view of the report of ``check_op`` or ``check_layer`` (see the module)."""
    if not hasattr(report, "entries") or not hasattr(report, "subject"):
        raise ArgumentError(
            f"check_report_view needs the report of check_op or check_layer, "
            f"got {type(report).__name__}",
            hint="report = check_op(op, *inputs); check_report_view(report)",
        )
    return CheckReportView(report)
