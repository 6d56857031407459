"""The result of ``check_op`` / ``check_layer``: one entry per category, text and HTML.

>>> report = CheckReport("double", [
...     CheckEntry("forward", "passed", "runs; 1 output"),
...     CheckEntry("GPU", "skipped", "no GPU: cupy is not installed"),
... ])
>>> report.passed
True
>>> print(report)
check of 'double': passed
  category  result   details
  --------  -------  -----------------------------
  forward   passed   runs; 1 output
  GPU       skipped  no GPU: cupy is not installed
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass, field

__all__ = ["COLOURS", "STATUSES", "CheckEntry", "CheckReport"]

#: ``warning`` does not fail a report (an input on a kink is not the op's fault).
STATUSES = ("passed", "failed", "skipped", "warning")

#: The colour each status is shown in.
COLOURS = {"passed": "#1a7f37", "failed": "#cf222e", "skipped": "#6e7781", "warning": "#9a6700"}


@dataclass(frozen=True)
class CheckEntry:
    """One category's outcome: its name, a status from ``STATUSES``, and why.

    >>> CheckEntry("kinks", "warning", "X[0] sits on a kink").status
    'warning'
    """

    category: str
    status: str
    message: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


@dataclass
class CheckReport:
    """All categories of one check; ``passed`` when none failed.

    >>> r = CheckReport("f", [CheckEntry("backward", "failed", "returned 1 value for 2 inputs")])
    >>> r.passed, [e.category for e in r.failures()]
    (False, ['backward'])
    >>> r["backward"].status
    'failed'
    """

    subject: str
    entries: list[CheckEntry] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no category failed (skipped and warning entries do not fail)."""
        return not self.failures()

    def failures(self) -> list[CheckEntry]:
        """The failed entries."""
        return [e for e in self.entries if e.status == "failed"]

    def __getitem__(self, category: str) -> CheckEntry:
        for entry in self.entries:
            if entry.category == category:
                return entry
        known = ", ".join(e.category for e in self.entries)
        raise KeyError(f"no category {category!r} in this report (it has: {known})")

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self, width: int = 80) -> str:
        """The report as a text table; ``details`` lines are wrapped at ``width``."""
        head = f"check of {self.subject!r}: {'passed' if self.passed else 'FAILED'}"
        rows = [("category", "result", "details")]
        for e in self.entries:
            lines = [
                wrapped for line in e.message.splitlines() or [""] for wrapped in _wrap(line, width)
            ]
            rows.append((e.category, e.status, lines[0]))
            rows.extend(("", "", line) for line in lines[1:])
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        rows.insert(1, tuple("-" * w for w in widths))
        body = [
            "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in rows
        ]
        return "\n".join([head, *body])

    def _repr_html_(self) -> str:
        verdict = "passed" if self.passed else "failed"
        rows = []
        for e in self.entries:
            colour = COLOURS[e.status]
            message = html.escape(e.message).replace("\n", "<br>")
            rows.append(
                f"<tr><td>{html.escape(e.category)}</td>"
                f'<td style="color:{colour};font-weight:bold">{e.status}</td>'
                f'<td style="text-align:left">{message}</td></tr>'
            )
        return (
            f"<div><b>check of {html.escape(self.subject)}</b>: "
            f'<span style="color:{COLOURS[verdict]}">{verdict}</span>'
            "<table><tr><th>category</th><th>result</th><th>details</th></tr>"
            + "".join(rows)
            + "</table></div>"
        )


def _wrap(line: str, width: int) -> list[str]:
    """Wrap one details line, keeping its indentation on the continuation lines."""
    indent = " " * (len(line) - len(line.lstrip()))
    return textwrap.wrap(line, width, subsequent_indent=indent + "  ") or [""]
