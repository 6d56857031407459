"""The tape inspector: what tracing saw, as rows of data, a text table or HTML.

>>> from autodiff_tutor.tracing import evaluate, last_tape, traced
>>> _ = evaluate(lambda x: (x * x).sum(), traced([1.0, 2.0]))
>>> print(last_tape().table())
trace ... (evaluate(<lambda>)), ended: 1 argument, 2 operations
#  operation  inputs          output   grad  line
-  input      -               x (2,)   yes   argument
0  multiply   x (2,), x (2,)  v1 (2,)  yes   <doctest ...>:1
1  sum        v1 (2,)         v2 ()    yes   <doctest ...>:1
"""

from __future__ import annotations

import html
from typing import Any

COLUMNS = ("#", "operation", "inputs", "output", "grad", "line")


def rows(tape: Any) -> list[dict[str, Any]]:
    """One dict per traced argument, then one per recorded operation.

    Keys: ``index`` (``None`` for arguments), ``op``, ``detail`` (options such as
    ``axis=0``), ``inputs`` (labels), ``input_ids`` (node ids, ``None`` for
    constants), ``input_shapes``, ``outputs`` (labels), ``output_ids``,
    ``output_shapes``, ``needs_gradient`` and ``where`` (the user's line).

    >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
    >>> _ = evaluate(lambda x: x.sum(axis=0), traced([1.0, 2.0]))
    >>> row = rows(last_tape())[1]
    >>> row["op"], row["detail"], row["input_ids"], row["output_shapes"]
    ('sum', 'axis=0', [0], [()])
    """
    result = []
    for node in tape.nodes:
        if node.record is None:
            result.append(
                {
                    "index": None,
                    "op": "input",
                    "detail": "",
                    "inputs": [],
                    "input_ids": [],
                    "input_shapes": [],
                    "outputs": [node.label],
                    "output_ids": [node.id],
                    "output_shapes": [node.shape],
                    "needs_gradient": True,
                    "where": node.where,
                }
            )
    for record in tape.records:
        result.append(
            {
                "index": record.index,
                "op": record.op,
                "detail": record.detail,
                "inputs": [i.label for i in record.inputs],
                "input_ids": [i.node for i in record.inputs],
                "input_shapes": [i.shape for i in record.inputs],
                "outputs": [tape.nodes[n].label for n in record.outputs],
                "output_ids": list(record.outputs),
                "output_shapes": [tape.nodes[n].shape for n in record.outputs],
                "needs_gradient": record.needs_gradient,
                "where": record.where,
            }
        )
    return result


def row_cells(row: dict[str, Any]) -> list[str]:
    """The cells of one of :func:`rows`, as the text and HTML tables show them.

    >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
    >>> _ = evaluate(lambda x: x.sum(axis=0), traced([1.0, 2.0]))
    >>> row_cells(rows(last_tape())[1])[:5]
    ['0', 'sum axis=0', 'x (2,)', 'v1 ()', 'yes']
    """
    inputs = ", ".join(
        label if shape is None else f"{label} {tuple(shape)}"
        for label, shape in zip(row["inputs"], row["input_shapes"], strict=True)
    )
    outputs = ", ".join(
        f"{label} {tuple(shape)}"
        for label, shape in zip(row["outputs"], row["output_shapes"], strict=True)
    )
    op = row["op"] + (f" {row['detail']}" if row["detail"] else "")
    index = "-" if row["index"] is None else str(row["index"])
    grad = "yes" if row["needs_gradient"] else "no"
    return [index, op, inputs or "-", outputs or "-", grad, row["where"]]


def _title(tape: Any) -> str:
    state = "ended" if tape.ended else "recording"
    if tape.released_at and not tape.ended:
        state = f"released by gradient() at {tape.released_at}"
    arguments = sum(1 for node in tape.nodes if node.record is None)
    plural = "" if arguments == 1 else "s"
    return f"{tape.describe()}, {state}: {arguments} argument{plural}, {len(tape)} operations"


def text_table(tape: Any) -> str:
    """The tape as an aligned text table (columns: #, operation, inputs, output,
    grad, line); the module docstring shows one.

    >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
    >>> _ = evaluate(lambda x: -x, traced(1.0))
    >>> text_table(last_tape()).splitlines()[-1].split()[:4]
    ['0', 'negative', 'x', '()']
    """
    body = [row_cells(row) for row in rows(tape)]
    widths = [max(len(c) for c in column) for column in zip(COLUMNS, *body, strict=False)]
    widths = [min(w, 40) for w in widths]
    lines = [_title(tape)]
    for cells in [list(COLUMNS), *body]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    return "\n".join(lines)


def html_table(tape: Any) -> str:
    """The tape as an HTML table, for notebooks (``_repr_html_``).

    >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
    >>> _ = evaluate(lambda x: x * 2, traced(1.0))
    >>> "<td>multiply</td>" in last_tape()._repr_html_()
    True
    """
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for row in rows(tape):
        style = "" if row["needs_gradient"] else ' style="color: #888"'
        cells = "".join(f"<td>{html.escape(c)}</td>" for c in row_cells(row))
        body.append(f"<tr{style}>{cells}</tr>")
    caption = html.escape(_title(tape))
    return (
        f"<table><caption>{caption}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )
