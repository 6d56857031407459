"""Rich display of generated code for notebooks: numbered, highlighted code panels.

A panel numbers its lines (the user's function by its file lines, so that the
generated comments ``# line 7: ...`` and the stepper's "backward line 5" can be found
by eye), never wraps code in the middle of an expression (a long line scrolls
sideways in its own panel), and can mark chosen lines with a coloured block. Code is
highlighted with pygments where it is installed (the ``lab`` extra), with inline
styles, so the HTML survives being saved in a notebook or a widget's state.

>>> import numpy as np
>>> from autodiff_tutor.api import differentiable
>>> @differentiable
... def f(x):
...     return np.sum(x * x)
>>> "f_backward" in generated_code_html(f)
True
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["CURRENT", "RELATED", "code_html", "generated_code_html", "highlighted_lines"]

#: Background of the line a view points at (the current step, the chosen line).
CURRENT = "#ffe680"
#: Background of the lines that correspond to it.
RELATED = "#cfe8ff"

_MARK = "data-autodiff-line"
_END = "<!--/line-->"
_LINENO = re.compile(r'<span style="[^"]*" data-lineno>[^<]*</span>')
_NUMBER = "color:#888;user-select:none;padding-right:0.8em"


def _highlighted_lines(source: str) -> list[str]:
    """The lines of ``source`` as HTML (pygments' inline styles when installed)."""
    try:
        from pygments import highlight as pygments_highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:  # pygments comes with the 'lab' extra
        return [html.escape(line) for line in source.split("\n")]
    body = pygments_highlight(
        source, PythonLexer(stripnl=False), HtmlFormatter(noclasses=True, nobackground=True)
    )
    inner = body.partition("<pre")[2].partition(">")[2].rpartition("</pre>")[0]
    inner = re.sub(r"^<span></span>", "", inner)
    return inner.split("\n")[: source.count("\n") + 1]  # pygments ends with a newline


def code_html(
    source: str,
    highlight: Iterable[int] = (),
    *,
    colour: str = CURRENT,
    first_line: int | None = None,
    title: str = "",
) -> str:
    """``source`` as a code panel; the 1-based lines in ``highlight`` are marked.

    With ``first_line``, lines are numbered from it (the user's file lines, so that
    the generated comments "line 7: ..." can be found by eye). The panel scrolls
    sideways rather than wrap a line.

    >>> "background-color: #ffe680" in code_html("x = 1", highlight=[1])
    True
    """
    lines = _highlighted_lines(source.rstrip("\n"))
    wanted = set(highlight)
    width = len(str((first_line or 1) + len(lines) - 1))
    marked = []
    for number, line in enumerate(lines, start=1):
        if first_line is not None:
            label = str(first_line + number - 1).rjust(width)
            line = f'<span style="{_NUMBER}" data-lineno>{label}</span>{line}'
        if number in wanted:
            line = (
                f'<span {_MARK}="{number}" style="display:block;background-color: {colour}">'
                f"{line}</span>{_END}"
            )
        else:
            line += "\n"
        marked.append(line)
    heading = f'<div style="font-weight:bold;margin:0.2em 0">{html.escape(title)}</div>'
    return (
        f'<div style="min-width:16em">{heading if title else ""}'
        '<pre style="margin:0;line-height:125%;white-space:pre;overflow-x:auto;'
        f'overflow-wrap:normal">{"".join(marked)}</pre></div>'
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


def generated_code_html(compiled: Any, wrt: Any = None) -> str:
    """The user's function (numbered by its file lines), its generated forward and
    backward (numbered from 1), side by side; each panel scrolls, none wraps code."""
    derivative = compiled.derivative(wrt)
    parsed = derivative.parsed
    specialized_on = getattr(compiled, "_specialized_on", None)  # a bound method's object
    head = specialized_on() + "\n" if specialized_on is not None else ""
    panels = [
        code_html("\n".join(parsed.lines), first_line=parsed.first_line, title="your function"),
        code_html(head + derivative.forward_source, first_line=1, title="generated forward"),
        code_html(derivative.backward_source, first_line=1, title="generated backward"),
    ]
    box = '<div style="flex:1 1 22em;min-width:0;overflow-x:auto">{}</div>'
    return (
        '<div style="display:flex;flex-flow:row wrap;gap:1em;align-items:flex-start">'
        + "".join(box.format(panel) for panel in panels)
        + "</div>"
    )
