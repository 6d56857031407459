"""The code view: your function next to the forward and backward the compiler wrote.

Pick one of your lines in the drop-down: it is highlighted, and so are the generated
forward statements that compute it and the backward statements whose comment names
it (the comments say "line 7: h * h"). Every choice is drawn ahead as one page that
the drop-down picks in the browser, so the view answers where no kernel runs (the
book, a notebook saved with its widgets).

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> @differentiable
... def loss(w, x):
...     h = np.tanh(x * w)
...     return np.sum(h * h)
>>> view = code_view(loss, wrt="w")
>>> view.line_picker.value = view.correspondence.first_line + 2   # h = np.tanh(x * w)
>>> view.highlighted["user"]
['    h = np.tanh(x * w)']
>>> [line.split("#")[0].strip() for line in view.highlighted["backward"]]
['d_t1 = d_h * (1 - h * h)', 'd_w = unbroadcast(d_t1 * x, w)']
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from autodiff_tutor.widgets.correspondence import Correspondence, correspondence
from autodiff_tutor.widgets.render import CURRENT, RELATED, code_html, highlighted_lines, panel_row

__all__ = ["CodeView", "code_view"]


class CodeView(widgets.VBox):
    """Three highlighted panels (yours, forward, backward) and a line picker.

    ``code_view(f, wrt)``: ``f`` is a function or a ``@differentiable``, ``wrt`` the
    inputs of the gradients (as in ``grad``: positions or names; ``None`` means every
    parameter without a default). ``line_picker`` is a ``Dropdown`` over your file
    lines that have generated code; ``highlighted`` says which lines each panel marks
    now; ``summary``, ``user_html``, ``forward_html`` and ``backward_html`` are the
    parts of the page shown for the chosen line. See the module docstring.
    """

    def __init__(self, f: Callable[..., Any], wrt: Any = None):
        from autodiff_tutor.api import differentiable

        compiled = differentiable(f)
        self.compiled = compiled
        self.correspondence: Correspondence = correspondence(compiled.derivative(wrt))
        lines = self.correspondence
        options = [("(none)", 0), *[(self._label(n), n) for n in lines.mapped_lines()]]
        self.line_picker = widgets.Dropdown(
            options=options,
            value=options[1][1] if len(options) > 1 else 0,
            description="your line",
            layout=widgets.Layout(width="32em"),
        )
        # one page per choice, in the drop-down's order: the browser switches pages
        self.pages = [widgets.HTML(self._page(value)) for _, value in options]
        self.view = widgets.Stack(self.pages, selected_index=self.line_picker.index)
        widgets.jslink((self.line_picker, "index"), (self.view, "selected_index"))
        super().__init__([self.line_picker, self.view])
        self.line_picker.observe(self._update, names="index")

    def _label(self, file_line: int) -> str:
        text = self.correspondence.user_text(file_line)
        text = text if len(text) <= 48 else text[:47] + "…"
        return f"line {file_line}: {text}"

    def _update(self, change: Any = None) -> None:
        self.view.selected_index = self.line_picker.index

    def _page(self, chosen: int) -> str:
        """The HTML shown when line ``chosen`` (0: none) is picked."""
        summary, user, forward, backward = self._parts(chosen)
        return f"<div>{summary}</div>" + panel_row([user, forward, backward])

    def _parts(self, chosen: int) -> tuple[str, str, str, str]:
        lines = self.correspondence
        user = [chosen - lines.first_line + 1] if chosen else []
        forward = lines.forward.get(chosen, [])
        backward = lines.backward.get(chosen, [])
        summary = ""
        if chosen:
            summary = (
                f'<span style="background:{CURRENT}">&nbsp;line {chosen}&nbsp;</span> '
                f"→ {len(forward)} forward, "
                f'<span style="background:{RELATED}">&nbsp;{len(backward)} backward&nbsp;</span>'
                f" statement{'s' if len(backward) != 1 else ''}: "
                f"<code>{html.escape(lines.user_text(chosen))}</code>"
            )
        return (
            summary,
            code_html(lines.user_source, user, first_line=lines.first_line, title="your function"),
            code_html(
                lines.forward_source,
                forward,
                colour=RELATED,
                first_line=1,
                title="generated forward",
            ),
            code_html(
                lines.backward_source,
                backward,
                colour=RELATED,
                first_line=1,
                title="generated backward",
            ),
        )

    def __repr__(self) -> str:
        return f"<code view of {self.compiled.name}: line {self.line_picker.value or '-'}>"

    @property
    def summary(self) -> str:
        """The line chosen and how many forward and backward statements it became."""
        return self._parts(self.line_picker.value)[0]

    @property
    def user_html(self) -> str:
        """Your function, the chosen line highlighted."""
        return self._parts(self.line_picker.value)[1]

    @property
    def forward_html(self) -> str:
        """The generated forward, the statements of the chosen line highlighted."""
        return self._parts(self.line_picker.value)[2]

    @property
    def backward_html(self) -> str:
        """The generated backward, the statements of the chosen line highlighted."""
        return self._parts(self.line_picker.value)[3]

    @property
    def highlighted(self) -> dict[str, list[str]]:
        """The text of the lines each panel highlights: keys user, forward, backward."""
        _, user, forward, backward = self._parts(self.line_picker.value)
        return {
            "user": highlighted_lines(user),
            "forward": highlighted_lines(forward),
            "backward": highlighted_lines(backward),
        }


code_view = CodeView
