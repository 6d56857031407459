"""The tape: what tracing recorded while ``evaluate`` ran, kept as plain data.

Every operation on a traced value appends a :class:`Record` (operation, inputs,
output, the user's line). The backward pass reads the records in reverse; the
inspector shows them as rows of data (:meth:`Tape.rows`), a text table or HTML, each record
with its options as they were written (:func:`detail`: ``x[:, 0]``, ``axis=0``). When
the evaluation ends, or a gradient releases the trace, the arrays kept for the backward
pass are dropped; the records themselves stay, so a notebook can still show them.

>>> tape = Tape("demo")
>>> leaf = tape.new_leaf((2,), "float64", "x")
>>> tape.nodes[leaf].label, tape.ended
('x', False)
"""

from __future__ import annotations

import html
import itertools
import weakref
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from autodiff_tutor.runtime.backend import array_module

_ACTIVE: ContextVar[Tape | None] = ContextVar("autodiff_tutor_tracing_tape", default=None)
_LAST: list[Tape] = []
_COUNTER = itertools.count(1)


def active_tape() -> Tape | None:
    """The tape being recorded by the running ``evaluate`` call, or ``None``.

    >>> active_tape() is None
    True
    """
    return _ACTIVE.get()


def last_tape() -> Tape | None:
    """The tape of the most recent ``evaluate`` call (records kept, arrays released).

    >>> from autodiff_tutor.tracing import evaluate, traced
    >>> _ = evaluate(lambda x: x * 2, traced(1.0))
    >>> [r.op for r in last_tape().records]
    ['multiply']
    """
    return _LAST[-1] if _LAST else None


def tape_of(value: Any) -> Tape | None:
    """The trace a traced value was recorded on (``None`` if it never was).

    >>> from autodiff_tutor.tracing import evaluate, traced
    >>> y = evaluate(lambda x: x + 1, traced(1.0))
    >>> tape_of(y).ended
    True
    """
    return value._tape


@dataclass(frozen=True)
class Origin:
    """Why a traced value is *not* followed by the running trace (used in messages).

    ``kind`` is ``"inside"`` (made by ``traced()`` inside the evaluated function),
    ``"outside"`` (made outside ``evaluate`` and not passed to it), ``"ended"`` (left
    over from an evaluation that returned), ``"pickled"``, or ``"buffer"`` (a new
    plain array the evaluated function made, ``np.zeros(...)``: a traced constant,
    see :mod:`~autodiff_tutor.tracing.user_code`).

    >>> print(Origin("inside", "model.py:3").describe())
    made by traced() inside the function that evaluate() runs (model.py:3)
    """

    kind: str
    where: str

    def describe(self) -> str:
        """A phrase that completes "it was ..."."""
        return {
            "inside": f"made by traced() inside the function that evaluate() runs ({self.where})",
            "outside": f"made outside evaluate() ({self.where}) and not passed to it "
            "as an argument (a global or a closure variable)",
            "ended": f"left over from {self.where}, which has ended",
            "pickled": "pickled (sent to another process, or saved and loaded), "
            "which keeps the data but not the trace",
            "buffer": f"a new array made inside the function ({self.where}), a constant "
            "until a traced value is written into it",
        }[self.kind]


@dataclass(frozen=True)
class InputInfo:
    """One input of a record as the inspector shows it: a traced node or a constant.

    ``shape`` is ``None`` for Python numbers; ``origins`` says why a traced value
    that is not on the trace was not followed.

    >>> InputInfo(None, None, "2.0").origins
    frozenset()
    """

    node: int | None
    shape: tuple[int, ...] | None
    label: str
    origins: frozenset[Origin] = frozenset()
    #: a plain array: how many extractions the trace had made when it first met it
    #: (one met earlier cannot be computed from a later extraction's data) ...
    met_after: int | None = None
    #: ... and the extraction whose data it is, or a view of, if any
    data_of: int | None = None


@dataclass
class Node:
    """A traced value on the tape: an argument of ``evaluate`` or a record's output.

    >>> Node(0, (2,), "float64", "x").record is None  # an argument
    True
    """

    id: int
    shape: tuple[int, ...]
    dtype: str
    label: str
    record: int | None = None
    where: str = "argument"  # or the line where traced() started a new variable


@dataclass
class Record:
    """One operation tracing saw.

    ``kind`` is ``"rule"`` (a registry primitive), ``"custom"`` (an object of the op
    protocol) or ``"cut"`` (no gradient flows: comparisons, ``extract_data``...).
    ``payload`` holds what the backward pass needs; it is dropped on release.

    >>> Record(0, "less", "cut", [], (), "f.py:2").needs_gradient
    False
    """

    index: int
    op: str
    kind: str
    inputs: list[InputInfo]
    outputs: tuple[int, ...]
    where: str
    detail: str = ""
    payload: Any = None

    @property
    def needs_gradient(self) -> bool:
        """Whether gradient flows back through this operation."""
        return self.kind != "cut"


@dataclass
class Extraction:
    """An ``extract_data`` (or ``stop_gradient``) call on a traced value.

    ``intentional`` is true for ``stop_gradient``; ``new_variable`` when ``traced()``
    started a new variable from the extracted data.

    >>> Extraction(node=0, where="f.py:3", after=2, intentional=False).where
    'f.py:3'
    """

    node: int
    where: str
    after: int  # number of records on the tape when it happened
    intentional: bool
    new_variable: bool = False


@dataclass
class Tape:
    """The trace of one ``evaluate`` call.

    >>> tape = Tape("f")
    >>> tape.add_record("tanh", "rule", [], [((), "float64")], "f.py:1").outputs
    (0,)
    """

    name: str
    id: int = field(default_factory=lambda: next(_COUNTER))
    nodes: list[Node] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    extractions: list[Extraction] = field(default_factory=list)
    ended: bool = False
    released_at: str | None = None
    plain_gradients: list[str] = field(default_factory=list)  # where gradient() gave arrays
    # the traced values made on this trace (weakly: for in-place updates through views)
    values: weakref.WeakValueDictionary = field(
        default_factory=weakref.WeakValueDictionary, repr=False, compare=False
    )
    pending: Exception | None = None  # an error to raise at the trace's next step
    # id -> (array, its extraction): the data extract_data handed out on this trace, so
    # traced() of it starts a new variable (kept alive until the trace ends)
    extracted: dict[int, tuple[Any, Extraction]] = field(default_factory=dict, repr=False)
    # id -> (plain array, extractions made when the trace first met it), kept alive
    # until the trace ends: see InputInfo.met_after
    plain: dict[int, tuple[Any, int]] = field(default_factory=dict, repr=False)
    # (value, its data, label, whether an argument) of each variable: writes into them
    # are refused (tracing/operators.py); kept until the trace ends
    variables: list[tuple[Any, Any, str, bool]] = field(default_factory=list, repr=False)

    def meet_plain(self, value: Any) -> tuple[int, int | None]:
        """A plain array the trace meets (an argument, an operation's input): how many
        extractions came before its first meeting, and which extraction's data it is
        (or views), if any.

        >>> import numpy as np
        >>> tape = Tape("f")
        >>> c = np.ones(2)
        >>> tape.meet_plain(c)
        (0, None)
        >>> tape.extractions.append(Extraction(0, "f.py:2", 0, False))
        >>> tape.meet_plain(c), tape.meet_plain(np.zeros(2))
        ((0, None), (1, None))
        """
        known = self.plain.get(id(value))
        if known is None or known[0] is not value:
            known = (value, len(self.extractions))
            self.plain[id(value)] = known
        for data, extraction in self.extracted.values():
            if data is value or _may_share_memory(value, data):
                return known[1], next(k for k, e in enumerate(self.extractions) if e is extraction)
        return known[1], None

    def defer(self, error: Exception) -> None:
        """Keep ``error`` to raise at the next step (where it cannot be raised now).

        >>> tape = Tape("f")
        >>> tape.defer(ValueError("late")); tape.raise_pending()
        Traceback (most recent call last):
        ValueError: late
        """
        if self.pending is None:
            self.pending = error

    def raise_pending(self) -> None:
        """Raise the deferred error, if there is one (once)."""
        error, self.pending = self.pending, None
        if error is not None:
            raise error

    def __len__(self) -> int:
        return len(self.records)

    def describe(self) -> str:
        """``"trace 3 (evaluate(loss))"``, for messages.

        >>> Tape("loss", id=3).describe()
        'trace 3 (evaluate(loss))'
        """
        return f"trace {self.id} (evaluate({self.name}))"

    def new_leaf(
        self, shape: tuple[int, ...], dtype: str, label: str, where: str = "argument"
    ) -> int:
        """Add an argument of ``evaluate`` (or a new variable) as a traced node; return its id."""
        node = Node(len(self.nodes), tuple(shape), dtype, label, None, where)
        self.nodes.append(node)
        return node.id

    def add_record(
        self,
        op: str,
        kind: str,
        inputs: list[InputInfo],
        outputs: list[tuple[tuple[int, ...], str]],
        where: str,
        detail: str = "",
        payload: Any = None,
    ) -> Record:
        """Append a record whose outputs (shape, dtype) become new nodes."""
        index = len(self.records)
        ids = []
        for shape, dtype in outputs:
            node = Node(len(self.nodes), tuple(shape), dtype, f"v{len(self.nodes)}", index)
            self.nodes.append(node)
            ids.append(node.id)
        record = Record(index, op, kind, inputs, tuple(ids), where, detail, payload)
        self.records.append(record)
        return record

    def release(self, where: str) -> None:
        """Drop the arrays kept for the backward pass (after a non-retained gradient)."""
        self.released_at = where
        for record in self.records:
            record.payload = None

    def end(self) -> None:
        """Mark the evaluation finished and free its arrays; keep the records."""
        self.ended = True
        self.extracted.clear()
        self.plain.clear()
        self.variables.clear()
        for record in self.records:
            record.payload = None
        _LAST[:] = [self]

    # -- the inspector ---------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """One dict per traced argument, then one per recorded operation.

        Keys: ``index`` (``None`` for arguments), ``op``, ``detail`` (options such as
        ``axis=0``), ``inputs`` (labels), ``input_ids`` (node ids, ``None`` for
        constants), ``input_shapes``, ``outputs`` (labels), ``output_ids``,
        ``output_shapes``, ``needs_gradient`` and ``where`` (the user's line).

        >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
        >>> _ = evaluate(lambda x: x.sum(axis=0), traced([1.0, 2.0]))
        >>> row = last_tape().rows()[1]
        >>> row["op"], row["detail"], row["input_ids"], row["output_shapes"]
        ('sum', 'axis=0', [0], [()])
        """
        arguments = [
            Record(None, "input", "rule", [], (node.id,), node.where)  # type: ignore[arg-type]
            for node in self.nodes
            if node.record is None
        ]
        return [
            {
                "index": record.index,
                "op": record.op,
                "detail": record.detail,
                "inputs": [i.label for i in record.inputs],
                "input_ids": [i.node for i in record.inputs],
                "input_shapes": [i.shape for i in record.inputs],
                "outputs": [self.nodes[n].label for n in record.outputs],
                "output_ids": list(record.outputs),
                "output_shapes": [self.nodes[n].shape for n in record.outputs],
                "needs_gradient": record.needs_gradient,
                "where": record.where,
            }
            for record in [*arguments, *self.records]
        ]

    def table(self) -> str:
        """The records as a readable text table.

        >>> from autodiff_tutor.tracing import evaluate, traced
        >>> _ = evaluate(lambda x: (x * x).sum(), traced([1.0, 2.0]))
        >>> print(last_tape().table())
        trace ... (evaluate(<lambda>)), ended: 1 argument, 2 operations
        #  operation  inputs          output   grad  line
        -  input      -               x (2,)   yes   argument
        0  multiply   x (2,), x (2,)  v1 (2,)  yes   <doctest ...>:1
        1  sum        v1 (2,)         v2 ()    yes   <doctest ...>:1
        """
        body = [row_cells(row) for row in self.rows()]
        widths = [max(len(c) for c in column) for column in zip(COLUMNS, *body, strict=False)]
        widths = [min(w, 40) for w in widths]
        lines = [_title(self)]
        for cells in [list(COLUMNS), *body]:
            lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        """The records as an HTML table, for notebooks.

        >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
        >>> _ = evaluate(lambda x: x * 2, traced(1.0))
        >>> "<td>multiply</td>" in last_tape()._repr_html_()
        True
        """
        head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
        body = []
        for row in self.rows():
            style = "" if row["needs_gradient"] else ' style="color: #888"'
            cells = "".join(f"<td>{html.escape(c)}</td>" for c in row_cells(row))
            body.append(f"<tr{style}>{cells}</tr>")
        caption = html.escape(_title(self))
        return (
            f"<table><caption>{caption}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
        )


def _may_share_memory(a: Any, b: Any) -> bool:
    """Whether two arrays may overlap in memory (a view of extracted data)."""
    overlap = getattr(array_module(b), "may_share_memory", None)
    try:
        return bool(overlap(a, b)) if overlap is not None else False
    except (TypeError, ValueError):
        return False


def activate(tape: Tape) -> Any:
    """Make ``tape`` the active one; returns the token for :func:`deactivate`.

    >>> token = activate(Tape("f"))
    >>> active_tape().name
    'f'
    >>> deactivate(token)
    """
    return _ACTIVE.set(tape)


def deactivate(token: Any) -> None:
    """Restore the tape that was active before :func:`activate`.

    >>> deactivate(activate(Tape("f"))); active_tape() is None
    True
    """
    _ACTIVE.reset(token)


COLUMNS = ("#", "operation", "inputs", "output", "grad", "line")


def row_cells(row: dict[str, Any]) -> list[str]:
    """The cells of one of :meth:`Tape.rows`, as the text and HTML tables show them.

    >>> from autodiff_tutor.tracing import evaluate, last_tape, traced
    >>> _ = evaluate(lambda x: x.sum(axis=0), traced([1.0, 2.0]))
    >>> row_cells(last_tape().rows()[1])[:5]
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


def format_index(index: Any) -> str:
    """An index as the user wrote it, arrays shown by dtype and shape.

    >>> import numpy as np
    >>> format_index((slice(1, None), Ellipsis, np.array([0, 2])))
    '[1:, ..., <int64 (2,)>]'
    """
    parts = index if isinstance(index, tuple) else (index,)
    shown = []
    for part in parts:
        if isinstance(part, slice):
            ends = (
                (part.start, part.stop) if part.step is None else (part.start, part.stop, part.step)
            )
            shown.append(":".join("" if v is None else str(v) for v in ends))
        elif part is Ellipsis:
            shown.append("...")
        elif hasattr(part, "shape"):
            shown.append(f"<{part.dtype} {tuple(part.shape)}>")
        else:
            shown.append(repr(part))
    return "[" + ", ".join(shown) + "]"


def detail(op: str, options: dict[str, Any]) -> str:
    """What the tape shows of a record's options (the index of a read).

    >>> detail("sum", {"axis": 0, "keepdims": False})
    'axis=0'
    """
    if op == "getitem":
        return format_index(options.get("index"))
    shown = {k: v for k, v in options.items() if v is not None and v is not False}
    return ", ".join(f"{k}={v!r}" for k, v in shown.items())
