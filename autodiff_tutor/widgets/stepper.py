"""The backward step-through: a slider over the lines a generated backward executed.

The forward runs once on your arguments; the backward then runs under
:func:`~autodiff_tutor.widgets.recorder.record_backward`, so every executed line
is a step (a loop's body appears once per iteration, a branch only on the side
taken). Moving the slider highlights the current backward line and the line of
your function it comes from, and shows the gradients computed so far (the ones
the current line changed are marked).

Each step is drawn ahead as one page (up to :data:`PRERENDERED_STEPS` steps) and
the slider picks the page in the browser, so the slider and Play work where no
kernel runs (the book, a notebook saved with its widgets); a longer run draws the
current step when the slider moves.

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> @differentiable
... def f(x):
...     y = np.sin(x)
...     return y * y
>>> stepper = backward_stepper(f, 0.5)
>>> stepper.slider.value = stepper.slider.max        # the return line
>>> stepper.current_line
'    return (d_x,)'
>>> bool(np.isclose(stepper.values["d_x"], np.sin(1.0)))   # 2 sin(x) cos(x)
True
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from autodiff_tutor.api.arguments import check_seed, float_params, scalar_seed
from autodiff_tutor.errors import ArgumentError, NonScalarOutputError
from autodiff_tutor.widgets.correspondence import correspondence
from autodiff_tutor.widgets.needs_kernel import needs_kernel
from autodiff_tutor.widgets.recorder import BackwardRecording, record_backward
from autodiff_tutor.widgets.render import (
    CURRENT,
    RELATED,
    code_html,
    format_value,
    highlighted_lines,
    panel_row,
    table_html,
)

__all__ = ["BackwardStepper", "backward_stepper"]


def _seeds(compiled: Any, derivative: Any, out: Any, seed: Any) -> tuple[Any, ...]:
    outputs = out if derivative.returns_tuple else (out,)
    if seed is None:
        try:
            return (scalar_seed(compiled, out),)
        except NonScalarOutputError as exc:
            raise NonScalarOutputError(
                exc.message, hint="give the output gradient(s) to start from with seed=..."
            ) from None
    seeds = seed if derivative.returns_tuple else (seed,)
    if not isinstance(seeds, tuple) or len(seeds) != len(outputs):
        raise ArgumentError(
            f"{compiled.name} has {len(outputs)} outputs; seed needs one gradient per output",
            hint="pass seed=(g1, g2, ...) shaped like the outputs",
        )
    return tuple(
        check_seed(compiled, i, s, o) for i, (s, o) in enumerate(zip(seeds, outputs, strict=True))
    )


#: Steps drawn ahead of time (one HTML page each); longer runs are drawn on demand.
PRERENDERED_STEPS = 300


class BackwardStepper(widgets.VBox):
    """Step through one run of a generated backward; see the module docstring.

    ``backward_stepper(f, *args)`` runs the backward of ``f`` at ``args``; ``wrt``
    picks the inputs (default: every floating-point argument), ``seed`` is the output
    gradient to start from (default 1 for a scalar output). ``slider`` (1 .. number of
    executed lines) picks the step; ``current_line`` is the highlighted backward line,
    ``values`` the gradient variables after it ran, ``recording`` every step, and
    ``gradients`` what the backward returned. ``backward_html``, ``user_html``,
    ``values_html`` and ``caption`` are the parts of the page shown for the current
    step.
    """

    def __init__(
        self,
        f: Callable[..., Any],
        *args: Any,
        wrt: Any = None,
        seed: Any = None,
        max_steps: int = 2000,
    ):
        from autodiff_tutor.api import differentiable

        compiled = differentiable(f)
        if wrt is None:
            wrt = float_params(compiled, args, {})
        derivative, out, memory, _ = compiled.forward_run(wrt, args)
        seeds = _seeds(compiled, derivative, out, seed)
        self.output = out
        self.derivative = derivative
        self.correspondence = correspondence(derivative)
        self.recording: BackwardRecording = record_backward(
            derivative.backward, *seeds, memory, max_steps=max_steps
        )
        self.gradients = self.recording.result
        steps = len(self.recording.steps)
        self.slider = widgets.IntSlider(
            value=1, min=1, max=max(steps, 1), description="step", continuous_update=True
        )
        self.play = widgets.Play(value=1, min=1, max=max(steps, 1), interval=700)
        # the slider leads: a saved page opens on the slider's step, not Play's
        widgets.jslink((self.slider, "value"), (self.play, "value"))
        self.prerendered = 0 < steps <= PRERENDERED_STEPS
        count = steps if self.prerendered else 1
        self.pages = [widgets.HTML(self._page(k + 1)) for k in range(count)]
        # page 0 is never shown: the slider starts at 1, and picks page = step
        self.view = widgets.Stack([widgets.HTML(), *self.pages], selected_index=1)
        if self.prerendered:
            widgets.jslink((self.slider, "value"), (self.view, "selected_index"))
        note = ""
        if self.recording.truncated:
            note = (
                f"<i>only the first {max_steps} executed lines are shown "
                "(pass max_steps=... for more)</i>"
            )
        super().__init__([widgets.HBox([self.play, self.slider]), self.view, widgets.HTML(note)])
        if not self.prerendered:  # the slider draws its step through Python
            needs_kernel(self, "the slider shows the step it picks")
        self.slider.observe(self._update, names="value")

    def __repr__(self) -> str:
        total = len(self.recording.steps)
        return f"<backward stepper of {self.derivative.name}: step {self.slider.value} of {total}>"

    @property
    def step(self) -> Any:
        """The current :class:`~autodiff_tutor.widgets.recorder.ExecutedLine`."""
        return self.recording.steps[self.slider.value - 1]

    @property
    def current_line(self) -> str:
        """The text of the highlighted backward line."""
        found = highlighted_lines(self.backward_html)
        return found[0] if found else ""

    @property
    def values(self) -> dict[str, Any]:
        """The gradient variables (``d_*``) after the current line ran."""
        return dict(self.step.gradients)

    @property
    def caption(self) -> str:
        """The current step's caption (step k of n, backward line, your line)."""
        return self._parts(self.slider.value)[0]

    @property
    def backward_html(self) -> str:
        """The generated backward, numbered, the current line highlighted."""
        return self._parts(self.slider.value)[1]

    @property
    def user_html(self) -> str:
        """Your function, the line the current backward line comes from highlighted."""
        return self._parts(self.slider.value)[2]

    @property
    def values_html(self) -> str:
        """The table of gradients so far, those the current line changed marked."""
        return self._parts(self.slider.value)[3]

    def _update(self, change: Any = None) -> None:
        self.play.value = self.slider.value
        if self.prerendered:
            self.view.selected_index = self.slider.value
        else:
            self.pages[0].value = self._page(self.slider.value)

    def _page(self, number: int) -> str:
        """The HTML shown at step ``number``: caption, both codes, the gradients."""
        caption, backward, user, values = self._parts(number)
        return f"<div>{caption}</div>" + panel_row([backward, user], grow=[2, 1]) + values

    def _parts(self, number: int) -> tuple[str, str, str, str]:
        lines = self.correspondence
        if not self.recording.steps:
            return "the backward executed no line", "", "", ""
        step = self.recording.steps[number - 1]
        origin = lines.backward_origin.get(step.number)
        backward = code_html(
            lines.backward_source, [step.number], first_line=1, title="generated backward"
        )
        user = code_html(
            lines.user_source,
            [origin - lines.first_line + 1] if origin else [],
            colour=RELATED,
            first_line=lines.first_line,
            title="your function",
        )
        where = f", from your line {origin}" if origin else ""
        caption = (
            f"step {number} of {len(self.recording.steps)}: "
            f'<span style="background:{CURRENT}">&nbsp;backward line {step.number}&nbsp;</span>'
            f"{html.escape(where)}"
        )
        rows, styles = [], []
        for name, value in step.gradients.items():
            shape = getattr(value, "shape", None)
            rows.append([name, format_value(value), "" if shape is None else str(tuple(shape))])
            styles.append(f"background:{CURRENT};font-weight:bold" if name in step.changed else "")
        values = (
            "<b>gradients so far</b> (changed by this line: "
            f"{html.escape(', '.join(step.changed) or 'none')})"
            + table_html(
                ["variable", "value", "shape"], rows, styles=styles, widths=["8em", "", "7em"]
            )
        )
        return caption, backward, user, values


backward_stepper = BackwardStepper
