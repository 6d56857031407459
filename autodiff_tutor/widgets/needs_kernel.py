"""A view whose controls update through Python says so where no kernel runs.

In JupyterLab a slider's move reaches the kernel, which draws the view again. A page
saved with its widgets (the book) has no kernel: the slider still moves, and nothing
else does. A view that answers only through Python therefore carries a note, and
the class :data:`NEEDS_KERNEL`: the note is hidden where the view runs with a kernel
(an inline ``display: none``), and the book's stylesheet
(``book/_static/needs_kernel.css``) shows it and greys out the controls, so a
reader is never left moving a slider that updates nothing. Views that answer in the
browser (the code view, the stepper's drawn-ahead steps) carry neither.

>>> import ipywidgets as widgets
>>> view = widgets.VBox([widgets.IntSlider()])
>>> needs_kernel(view, "the slider moves the point")
>>> NEEDS_KERNEL in view._dom_classes, NOTE in view.children[0]._dom_classes
(True, True)
>>> "running Python kernel" in view.children[0].value
True
"""

from __future__ import annotations

import html

import ipywidgets as widgets

__all__ = ["NEEDS_KERNEL", "NOTE", "needs_kernel"]

#: The class of a view that updates only through Python.
NEEDS_KERNEL = "autodiff-needs-kernel"
#: The class of its note (shown by the book's stylesheet only).
NOTE = "autodiff-kernel-note"


def needs_kernel(view: widgets.Box, what: str) -> None:
    """Mark ``view`` (a box) as answering only through Python, with a note first among
    its children saying so; ``what`` names what its controls do."""
    note = widgets.HTML(
        '<div style="display:none">'
        f"<b>Needs a running Python kernel:</b> {html.escape(what)} only where Python "
        "runs (open this page as a notebook in JupyterLab). Here the view shows the state "
        "it was saved in, and its controls are switched off.</div>"
    )
    note.add_class(NOTE)
    view.add_class(NEEDS_KERNEL)
    view.children = (note, *view.children)
