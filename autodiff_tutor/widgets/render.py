"""HTML pieces the views share: code with highlighted lines, values, small tables.

Code is highlighted with pygments (inline styles, so the HTML survives being saved
in a notebook's widget state); chosen lines get a coloured block behind them.
:func:`highlighted_lines` reads them back, which is how the tests (and a curious
student) can ask a view which lines it is showing.

>>> page = code_html("a = 1\\nb = a * 2\\nc = b", highlight=[2])
>>> highlighted_lines(page)
['b = a * 2']
>>> format_value(0.5), format_value(None)
('0.5', '—')
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

__all__ = [
    "CURRENT",
    "RELATED",
    "code_html",
    "format_value",
    "highlighted_lines",
    "origin_line",
    "table_html",
]

#: Background of the line a view points at (the current step, the chosen line).
CURRENT = "#ffe680"
#: Background of the lines that correspond to it.
RELATED = "#cfe8ff"

_MARK = "data-autodiff-line"
_END = "<!--/line-->"
_LINENO = re.compile(
    r'<span style="color: inherit; background-color: transparent;[^"]*">[^<]*</span>'
)
_ORIGIN = re.compile(r"^line (\d+)\b")


def code_html(
    source: str,
    highlight: Iterable[int] = (),
    *,
    colour: str = CURRENT,
    first_line: int | None = None,
    title: str = "",
) -> str:
    """``source`` as highlighted HTML; the 1-based lines in ``highlight`` are marked.

    With ``first_line``, lines are numbered from it (the user's file lines, so that
    the generated comments "line 7: ..." can be found by eye).

    >>> "background-color: #ffe680" in code_html("x = 1", highlight=[1])
    True
    """
    options: dict[str, Any] = {"noclasses": True, "nobackground": True}
    if first_line is not None:
        options.update(linenos="inline", linenostart=first_line)
    body = pygments_highlight(source, PythonLexer(), HtmlFormatter(**options))
    wanted = set(highlight)
    head, _, rest = body.partition("<pre")
    attributes, _, inner = rest.partition(">")
    inner, _, tail = inner.rpartition("</pre>")
    lines = inner.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    marked = []
    for number, line in enumerate(lines, start=1):
        if number in wanted:
            line = (
                f'<span {_MARK}="{number}" style="display:block;background-color: {colour}">'
                f"{line}</span>{_END}"
            )
            marked.append(line)
        else:
            marked.append(line + "\n")
    text = "".join(marked)
    heading = f'<div style="font-weight:bold;margin:0.2em 0">{html.escape(title)}</div>'
    return (
        f'<div style="min-width:16em">{heading if title else ""}{head}'
        f'<pre style="margin:0;line-height:125%;white-space:pre;overflow-x:auto">{text}</pre>'
        f"{tail}</div>"
    )


def highlighted_lines(page: str) -> list[str]:
    """The plain text of the lines marked in HTML made by :func:`code_html`.

    Line numbers added with ``first_line`` are left out.

    >>> highlighted_lines(code_html("x = 1\\ny = 2", highlight=[1], first_line=10))
    ['x = 1']
    """
    texts = []
    for piece in re.findall(rf'<span {_MARK}="\d+"[^>]*>(.*?)</span>{_END}', page, re.S):
        piece = _LINENO.sub("", piece)
        texts.append(html.unescape(re.sub(r"<[^>]+>", "", piece)))
    return texts


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
        text = f"[{inner}]" if isinstance(value, list) else f"({inner})"
        return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
    shape = getattr(value, "shape", None)
    if shape is None or shape == ():
        try:
            return f"{float(value):.{precision}g}"
        except (TypeError, ValueError):
            text = repr(value)
            return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
    size = 1
    for n in shape:
        size *= n
    if size > 64:
        return f"array {tuple(shape)}, {getattr(value, 'dtype', '')}"
    import numpy as np

    data = value.get() if hasattr(value, "get") else value  # cupy -> host for display
    text = np.array2string(np.asarray(data), precision=precision, max_line_width=72)
    return text if len(text) <= max_chars else f"array {tuple(shape)}"


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
