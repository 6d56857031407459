"""Writes into a traced variable are refused: one rule for ``evaluate`` + ``gradient``
and ``value_and_gradient``.

A *variable* of a trace is what a gradient can be taken with respect to: an argument
of ``evaluate`` (or an argument ``value_and_gradient`` traces), an array of
``new_variables``, a new variable started by ``traced(extract_data(...))``. While its
trace runs, a write into it in place is refused with a located
:class:`~autodiff_tutor.errors.TracingError`: ``x[0, 0] = 0.0``, ``x[idx] += v``,
``x *= 2`` (every augmented operator), ``np.add(x, v, out=x)``,
``np.fill_diagonal(x, 0)``, and the same through a view of it (``v = x.T; v[0] = 1``,
``x.reshape(-1, 1) -= t``, a helper that writes into the argument it was given).

Why refuse rather than follow the write (tracing follows writes into arrays the
function made): after ``x[0, 0] = 0.0``, ``gradient(y, x)`` has two readings, the
derivative with respect to the value passed in or with respect to the written ``x``,
and they differ. The compiler refuses writes into a parameter for the same reason, and
PyTorch refuses in-place updates of a leaf that requires grad. The hint keeps the
program's meaning: ``x = x.copy()`` where the function starts makes the writes change
the function's own array, which tracing follows; the gradient is then with respect to
the value passed in, in both entry points.

Arrays the function computes (``y = x * 2``, ``x.copy()``, fancy-indexed copies
``x[[0, 2]]``) share no memory with a variable: writes into them are followed as before
(:mod:`~autodiff_tutor.tracing.operators`).

>>> import numpy as np
>>> from autodiff_tutor.errors import TracingError
>>> from autodiff_tutor.tracing import evaluate, traced
>>> def zero_corner(x):
...     x[0, 0] = 0.0
...     return x
>>> try:
...     evaluate(zero_corner, traced(np.ones((2, 2))))
... except TracingError as error:
...     print(error.hint.split(", before")[0])
make a copy first (x = x.copy(), where zero_corner starts
"""

from __future__ import annotations

import ast
from typing import Any

from autodiff_tutor.locations import call_source
from autodiff_tutor.tracing import messages
from autodiff_tutor.tracing.value import TracedValue, base_of, may_share_memory


def register(tape: Any, value: TracedValue, label: str, argument: bool) -> None:
    """``value`` (just put on ``tape`` as a leaf) is a variable of the trace, shown to
    the user as ``label``; ``argument``: an argument of the traced function (the
    others are made while it runs: ``new_variables``, ``traced(extract_data(y))``).

    >>> import numpy as np
    >>> from autodiff_tutor.tracing.tape import Tape
    >>> tape = Tape("f")
    >>> x = TracedValue(np.zeros(3), tape, tape.new_leaf((3,), "float64", "x"))
    >>> register(tape, x, "x", argument=True)
    >>> [label for _, _, label, _ in tape.variables]
    ['x']
    """
    tape.variables.append((value, value._data, label, argument))


def refuse_write(target: TracedValue, what: str) -> None:
    """Raise the located refusal if writing into ``target`` would change a variable of
    its running trace (``target`` is one, or a view of one); ``what`` describes the
    write (``"y += ..."``) where its source cannot be read.

    >>> import numpy as np
    >>> from autodiff_tutor.tracing.tape import Tape
    >>> tape = Tape("f")
    >>> x = TracedValue(np.zeros(3), tape, tape.new_leaf((3,), "float64", "x"))
    >>> register(tape, x, "x", argument=True)
    >>> refuse_write(TracedValue(np.zeros(3), tape), "y[...] = ...")  # its own array
    >>> refuse_write(TracedValue(x._data[1:], tape), "y[...] = ...")  # a view of x
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.TracingError: ...
    """
    found = written_variable(target)
    if found is None:
        return
    tape, label, argument = found
    statement, name = _written_here()
    through = "" if name in (None, label) else name
    if argument:
        hint = messages.copy_hint(label, tape.name)
    else:  # traced(extract_data(y)) is labelled by where it came from: name the array
        hint = messages.copy_aside_hint(label if label.isidentifier() else name or label)
    raise messages.write_into_variable(statement or what, label, through, hint)


def written_variable(target: TracedValue) -> tuple[Any, str, bool] | None:
    """``(tape, label, argument)`` of the variable whose memory ``target`` shares while
    its trace runs (``target`` itself, a view tracing made of it, or a view numpy
    made), else ``None``.

    >>> import numpy as np
    >>> from autodiff_tutor.tracing.tape import Tape
    >>> tape = Tape("f")
    >>> x = TracedValue(np.zeros(3), tape, tape.new_leaf((3,), "float64", "x"))
    >>> register(tape, x, "x", argument=True)
    >>> written_variable(TracedValue(x._data[::2], tape))[1:]
    ('x', True)
    >>> written_variable(TracedValue(np.zeros(3), tape)) is None
    True
    """
    tape = target._tape
    if tape is None or tape.ended or not tape.variables:
        return None
    root = target
    while base_of(root) is not None:
        root = base_of(root)
    for variable, data, label, argument in tape.variables:
        if root is variable or target is variable or may_share_memory(target._data, data):
            return tape, label, argument
    return None


def _written_here() -> tuple[str | None, str | None]:
    """The write the user's line is running (``x[0, 0] = ...``, ``v -= t``,
    ``np.add(x, v, out=x)``) and the name written into (``x``, ``v``), where the source
    can be read."""
    source = call_source()
    if source is None:
        return None, None
    text = source.strip()
    try:
        node = ast.parse(text).body[0]
    except (SyntaxError, IndexError):
        return None, None
    if isinstance(node, ast.AugAssign):
        return text, _root_name(node.target)
    if not isinstance(node, ast.Expr):
        return text, None
    value = node.value
    if isinstance(value, ast.Subscript):  # the target of y[...] = v
        return f"{text} = ...", _root_name(value)
    if isinstance(value, ast.Call):
        written = [k.value for k in value.keywords if k.arg == "out"] or value.args[:1]
        return text, _root_name(written[0]) if written else None
    return text, None


def _root_name(node: ast.expr) -> str | None:
    """``x`` for ``x``, ``x[0]``, ``x.T[1:]``; ``None`` for other expressions."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
