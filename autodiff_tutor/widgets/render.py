"""HTML pieces the views share: code with highlighted lines, values, small tables.

Code panels are :func:`autodiff_tutor.display.code_html` (numbered, scrolling, the
chosen lines marked), shared with a compiled function's own display;
:func:`highlighted_lines` reads the marked lines back, which is how the tests (and a
curious student) can ask a view which lines it is showing.

>>> page = code_html("a = 1\\nb = a * 2\\nc = b", highlight=[2])
>>> highlighted_lines(page)
['b = a * 2']
>>> format_value(0.5), format_value(None)
('0.5', '—')
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from autodiff_tutor.display import CURRENT, RELATED, code_html, highlighted_lines, panel_row

__all__ = [
    "CURRENT",
    "RELATED",
    "code_html",
    "format_value",
    "highlighted_lines",
    "origin_line",
    "panel_row",
    "table_html",
]

_ORIGIN = re.compile(r"^line (\d+)\b")


def origin_line(origin: str) -> int | None:
    """The user's file line named by a generated comment such as ``"line 7: h * h"``.

    >>> origin_line("line 7: h * h"), origin_line("values that loops overwrite")
    (7, None)
    """
    match = _ORIGIN.match(origin)
    return int(match.group(1)) if match else None


def format_value(value: Any, *, precision: int = 6, max_chars: int = 200) -> str:
    """A short text for a value: numbers with ``precision`` digits, arrays summarised.

    >>> import numpy as np
    >>> format_value(np.array([1.0, 2.5]))
    '[1.  2.5]'
    >>> format_value(np.zeros((100, 100)))[:12]
    'array (100, '
    """
    if value is None:
        return "—"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(format_value(v, precision=precision, max_chars=max_chars) for v in value)
        return _clipped(f"[{inner}]" if isinstance(value, list) else f"({inner})", max_chars)
    shape = getattr(value, "shape", None)
    if shape is None or shape == ():
        try:
            return f"{float(value):.{precision}g}"
        except (TypeError, ValueError):
            return _clipped(repr(value), max_chars)
    if math.prod(shape) > 64:
        return f"array {tuple(shape)}, {getattr(value, 'dtype', '')}"
    data = value.get() if hasattr(value, "get") else value  # cupy -> host for display
    text = np.array2string(np.asarray(data), precision=precision, max_line_width=72)
    return text if len(text) <= max_chars else f"array {tuple(shape)}"


def _clipped(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def table_html(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    styles: Sequence[str] | None = None,
    escape: bool = True,
    widths: Sequence[str] | None = None,
) -> str:
    """A small HTML table; ``styles`` gives one CSS string per row.

    With ``widths`` (one CSS width per column, ``""`` for the rest of the line) the
    table takes the whole width and keeps its columns whatever the rows hold, so it
    does not change width as rows come and go.

    >>> table_html(["a"], [["1"]], styles=["color: red"])
    '<table ...><tr><th ...>a</th></tr><tr style="color: red"><td ...>1</td></tr></table>'
    """
    cell = "padding:0.15em 0.6em;text-align:left;vertical-align:top"
    layout = "border-collapse:collapse;font-size:90%"
    if widths is None:
        out = [f'<table style="{layout}"><tr>']
    else:
        cols = "".join(f'<col style="width:{w}">' if w else "<col>" for w in widths)
        out = [f'<table style="{layout};width:100%;table-layout:fixed">{cols}<tr>']
    out += [
        f'<th style="{cell};border-bottom:1px solid #999">{html.escape(h)}</th>' for h in header
    ]
    out.append("</tr>")
    for k, row in enumerate(rows):
        style = styles[k] if styles else ""
        out.append(f'<tr style="{style}">' if style else "<tr>")
        out += [f'<td style="{cell}">{html.escape(c) if escape else c}</td>' for c in row]
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)
