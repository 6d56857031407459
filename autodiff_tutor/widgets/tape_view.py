"""The tape view: what the tracing mode recorded, one row per operation.

Pick an operation: its row is highlighted, with the rows that made its inputs
(blue) and the rows that use its outputs (green), and a sentence says what it
computed, where in your code, and whether gradient flows back through it.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, gradient, last_tape, traced
>>> def model(x):
...     h = np.tanh(x * 2.0)
...     y = np.sum(h * h)
...     return gradient(y, x)
>>> _ = evaluate(model, traced(np.ones(3)))
>>> view = tape_view(last_tape())
>>> view.record_picker.value = 1                    # the tanh
>>> view.highlighted
{'current': ['1 tanh'], 'inputs': ['0 multiply'], 'users': ['2 multiply']}
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.tracing.tape import COLUMNS, row_cells
from autodiff_tutor.widgets.needs_kernel import needs_kernel
from autodiff_tutor.widgets.render import CURRENT, RELATED, table_html

__all__ = ["TapeView", "tape_view"]

#: Background of the rows that use the chosen operation's outputs.
USERS = "#d5f5d5"


class TapeView(widgets.VBox):
    """A tape as a table with a record picker; see the module docstring.

    ``rows`` is ``tape.rows()``; ``highlighted`` names (``"index op"``) the rows
    marked now, by role: ``current``, ``inputs`` (made its inputs), ``users``.
    """

    def __init__(self, tape: Any):
        self.tape = tape
        self.rows = tape.rows()
        self._producer: dict[int, int] = {}  # node id -> position in rows
        for position, row in enumerate(self.rows):
            for node in row["output_ids"]:
                self._producer[node] = position
        options = [("(none)", None)] + [
            (f"#{row['index']} {row['op']} → {', '.join(row['outputs'])}", row["index"])
            for row in self.rows
            if row["index"] is not None
        ]
        self.record_picker = widgets.Dropdown(
            options=options,
            value=options[1][1] if len(options) > 1 else None,
            description="operation",
            layout=widgets.Layout(width="28em"),
        )
        self.title = widgets.HTML(f"<b>{html.escape(tape.describe())}</b>: {self._summary()}")
        self.detail_html = widgets.HTML()
        self.table_html = widgets.HTML()
        super().__init__([self.title, self.record_picker, self.detail_html, self.table_html])
        needs_kernel(self, "choosing an operation marks its rows")
        self.record_picker.observe(self._update, names="value")
        self._update()

    def __repr__(self) -> str:
        return f"<tape view: {self.tape.describe()}, {len(self.tape.records)} operations>"

    def _summary(self) -> str:
        arguments = sum(1 for row in self.rows if row["index"] is None)
        cut = sum(1 for row in self.rows if not row["needs_gradient"])
        text = f"{arguments} traced argument(s), {len(self.tape.records)} operation(s)"
        if cut:
            text += f", {cut} with no gradient flowing back (shown in grey)"
        for extraction in self.tape.extractions:
            label = self.tape.nodes[extraction.node].label
            how = "stop_gradient" if extraction.intentional else "extract_data"
            where = html.escape(extraction.where)  # "cell In[3], line 2" in a notebook
            text += f"; {how} took {html.escape(label)} out at {where}"
        return text

    def _position(self, index: int | None) -> int | None:
        rows = enumerate(self.rows)
        return next((p for p, row in rows if index is not None and row["index"] == index), None)

    def _roles(self) -> dict[str, list[int]]:
        chosen = self._position(self.record_picker.value)
        if chosen is None:
            return {"current": [], "inputs": [], "users": []}
        row = self.rows[chosen]
        inputs = sorted({self._producer[n] for n in row["input_ids"] if n in self._producer})
        outputs = set(row["output_ids"])
        users = [
            p for p, other in enumerate(self.rows) if outputs & {n for n in other["input_ids"]}
        ]
        return {"current": [chosen], "inputs": inputs, "users": users}

    def _label(self, position: int) -> str:
        row = self.rows[position]
        index = "-" if row["index"] is None else str(row["index"])
        return f"{index} {row['op']}"

    @property
    def highlighted(self) -> dict[str, list[str]]:
        """The rows marked now, as ``"index op"`` (``"- input"`` for arguments)."""
        return {role: [self._label(p) for p in found] for role, found in self._roles().items()}

    def _update(self, change: Any = None) -> None:
        roles = self._roles()
        colour = {p: CURRENT for p in roles["current"]}
        colour.update({p: RELATED for p in roles["inputs"]})
        colour.update({p: USERS for p in roles["users"]})
        body, styles = [], []
        for position, row in enumerate(self.rows):
            body.append(row_cells(row))  # the same cells as the tape's own text table
            style = f"background:{colour[position]}" if position in colour else ""
            if not row["needs_gradient"]:
                style += ";color:#888"
            styles.append(style)
        self.table_html.value = table_html(COLUMNS, body, styles=styles)
        self.detail_html.value = self._detail(roles)

    def _detail(self, roles: dict[str, list[int]]) -> str:
        if not roles["current"]:
            return ""
        row = self.rows[roles["current"][0]]
        made = ", ".join(self._label(p) for p in roles["inputs"]) or "constants only"
        used = ", ".join(self._label(p) for p in roles["users"]) or "nothing later on the tape"
        flows = (
            "gradient flows back through it"
            if row["needs_gradient"]
            else "no gradient flows back through it"
        )
        return (
            f"<b>{html.escape(', '.join(row['outputs']))} = {html.escape(row['op'])}"
            f"({html.escape(', '.join(row['inputs']))})</b> at {html.escape(row['where'])}; "
            f'<span style="background:{RELATED}">inputs from: {html.escape(made)}</span>; '
            f'<span style="background:{USERS}">used by: {html.escape(used)}</span>; {flows}.'
        )


def tape_view(tape: Any = None) -> TapeView:
    """A view of a tracing tape (default: ``tracing.last_tape()``; see the module)."""
    if tape is None:
        from autodiff_tutor.tracing import last_tape

        tape = last_tape()
        if tape is None:
            raise ArgumentError(
                "there is no tape to show yet",
                hint="run tracing.evaluate(fn, traced(x), ...) first, or pass a tape",
            )
    if not hasattr(tape, "rows") or not hasattr(tape, "records"):
        raise ArgumentError(
            f"tape_view needs a tracing tape, got {type(tape).__name__}",
            hint="use tracing.last_tape() after tracing.evaluate(...)",
        )
    return TapeView(tape)
