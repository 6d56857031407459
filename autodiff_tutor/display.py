"""Rich display of generated code for notebooks: numbered, highlighted code panels.

A panel numbers its lines (the user's function by its file lines, so that the
generated comments ``# line 7: ...`` and the stepper's "backward line 5" can be found
by eye), never wraps code in the middle of an expression, and can mark chosen lines
with a coloured block. Panels side by side (:func:`panel_row`) each take the width
their code needs, and go to the next row where they do not fit; only a line wider
than the whole output scrolls sideways, and then a shadow at the edge shows that
there is more code (a scrollbar alone is hidden on many systems until one scrolls,
which looks like code cut off). Code is
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

__all__ = [
    "CURRENT",
    "RELATED",
    "code_html",
    "generated_code_html",
    "highlighted_lines",
    "panel_row",
]

#: Background of the line a view points at (the current step, the chosen line).
CURRENT = "#ffe680"
#: Background of the lines that correspond to it.
RELATED = "#cfe8ff"

_MARK = "data-autodiff-line"
_END = "<!--/line-->"
_LINENO = re.compile(r'<span style="[^"]*" data-lineno>[^<]*</span>')
_NUMBER = "color:#888;user-select:none;padding-right:0.8em"
_PANEL_BACKGROUND = "#f7f7f7"
#: Shadows at the edges where a panel has code scrolled out of sight: the covers move
#: with the code (``local``) and hide the shadows (``scroll``) at the code's own ends.
_SCROLL_SHADOWS = (
    f"background:linear-gradient(to right,{_PANEL_BACKGROUND} 30%,rgba(247,247,247,0)) "
    "left center/28px 100% no-repeat local,"
    f"linear-gradient(to left,{_PANEL_BACKGROUND} 30%,rgba(247,247,247,0)) "
    "right center/28px 100% no-repeat local,"
    "radial-gradient(farthest-side at 0 50%,rgba(0,0,0,0.28),rgba(0,0,0,0)) "
    "left center/12px 100% no-repeat scroll,"
    "radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,0.28),rgba(0,0,0,0)) "
    f"right center/12px 100% no-repeat scroll,{_PANEL_BACKGROUND}"
)


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
    sideways rather than wrap a line, with a shadow at an edge that has more code.

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
        '<pre style="margin:0;padding:0.5em 0.6em;line-height:125%;white-space:pre;'
        f'overflow-x:auto;overflow-wrap:normal;{_SCROLL_SHADOWS}">{"".join(marked)}</pre></div>'
    )


def panel_row(panels: list[str], grow: list[int] | None = None) -> str:
    """Code panels side by side: each as wide as its code, on the next row where it
    does not fit, and scrolling only where one line is wider than the whole row.
    ``grow`` shares the room left over (one number per panel; default all 1).

    >>> row = panel_row([code_html("x = 1"), code_html("y = 2")])
    >>> row.count("max-width:100%")
    2
    """
    shares = grow or [1] * len(panels)
    box = '<div style="flex:{} 1 auto;max-width:100%;min-width:0">{}</div>'
    return (
        '<div style="display:flex;flex-flow:row wrap;gap:1em;align-items:flex-start">'
        + "".join(box.format(share, panel) for share, panel in zip(shares, panels, strict=True))
        + "</div>"
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
    backward (numbered from 1), side by side (:func:`panel_row`); none wraps code."""
    derivative = compiled.derivative(wrt)
    parsed = derivative.parsed
    head = compiled.heading()  # a bound method's: what it was specialized on
    panels = [
        code_html("\n".join(parsed.lines), first_line=parsed.first_line, title="your function"),
        code_html(head + derivative.forward_source, first_line=1, title="generated forward"),
        code_html(derivative.backward_source, first_line=1, title="generated backward"),
    ]
    return panel_row(panels)
