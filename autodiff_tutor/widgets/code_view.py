"""The code view: your function next to the forward and backward the compiler wrote.

Pick one of your lines in the drop-down: it is highlighted, and so are the generated
forward statements that compute it and the backward statements whose comment names
it (the comments say "line 7: h * h").

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
from autodiff_tutor.widgets.render import CURRENT, RELATED, code_html, highlighted_lines

__all__ = ["CodeView", "code_view"]


def _panel() -> widgets.HTML:
    return widgets.HTML(layout=widgets.Layout(flex="1 1 22em", overflow="auto", margin="0 1em 0 0"))


class CodeView(widgets.VBox):
    """Three highlighted panels (yours, forward, backward) and a line picker.

    ``line_picker`` is a ``Dropdown`` over your file lines that have generated code;
    ``highlighted`` says which lines each panel marks now. See the module docstring.
    """

    def __init__(self, f: Callable[..., Any], wrt: Any = None):
        from autodiff_tutor.api import differentiable

        compiled = differentiable(f)
        self.compiled = compiled
        self.correspondence: Correspondence = correspondence(compiled.derivative(wrt))
        lines = self.correspondence
        options = [(self._label(n), n) for n in lines.mapped_lines()]
        self.line_picker = widgets.Dropdown(
            options=[("(none)", 0), *options],
            value=options[0][1] if options else 0,
            description="your line",
            layout=widgets.Layout(width="32em"),
        )
        self.summary = widgets.HTML()
        self.user_html = _panel()
        self.forward_html = _panel()
        self.backward_html = _panel()
        panels = widgets.HBox(
            [self.user_html, self.forward_html, self.backward_html],
            layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"),
        )
        super().__init__([widgets.HBox([self.line_picker, self.summary]), panels])
        self.line_picker.observe(self._update, names="value")
        self._update()

    def _label(self, file_line: int) -> str:
        text = self.correspondence.user_text(file_line)
        text = text if len(text) <= 48 else text[:47] + "…"
        return f"line {file_line}: {text}"

    def _update(self, change: Any = None) -> None:
        lines = self.correspondence
        chosen = self.line_picker.value
        user = [chosen - lines.first_line + 1] if chosen else []
        forward = lines.forward.get(chosen, [])
        backward = lines.backward.get(chosen, [])
        self.user_html.value = code_html(
            lines.user_source, user, first_line=lines.first_line, title="your function"
        )
        self.forward_html.value = code_html(
            lines.forward_source, forward, colour=RELATED, first_line=1, title="generated forward"
        )
        self.backward_html.value = code_html(
            lines.backward_source,
            backward,
            colour=RELATED,
            first_line=1,
            title="generated backward",
        )
        if chosen:
            self.summary.value = (
                f'<span style="background:{CURRENT}">&nbsp;line {chosen}&nbsp;</span> '
                f"→ {len(forward)} forward, "
                f'<span style="background:{RELATED}">&nbsp;{len(backward)} backward&nbsp;</span>'
                f" statement{'s' if len(backward) != 1 else ''}: "
                f"<code>{html.escape(lines.user_text(chosen))}</code>"
            )
        else:
            self.summary.value = ""

    def __repr__(self) -> str:
        return f"<code view of {self.compiled.name}: line {self.line_picker.value or '-'}>"

    @property
    def highlighted(self) -> dict[str, list[str]]:
        """The text of the lines each panel highlights: keys user, forward, backward."""
        return {
            "user": highlighted_lines(self.user_html.value),
            "forward": highlighted_lines(self.forward_html.value),
            "backward": highlighted_lines(self.backward_html.value),
        }


def code_view(f: Callable[..., Any], wrt: Any = None) -> CodeView:
    """The code view of ``f`` (a function or a ``@differentiable``) for gradients w.r.t.
    ``wrt`` (as in ``grad``: positions or names; ``None`` means every parameter without
    a default). See the module docstring for an example.
    """
    return CodeView(f, wrt)
