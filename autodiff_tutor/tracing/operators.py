"""The operators of traced arrays: binary and unary operators, in-place updates and
element writes, each computed on the raw data and recorded by
:func:`~autodiff_tutor.tracing.dispatch.apply`.

In-place updates follow numpy: every name of the updated array sees the new value, and
so do the views tracing made of it (they are rebuilt from the new value). An update
*through* such a view (``v = t.T; v[0] = 1``, ``v += 1``, and ``rows[k] += 1`` where a
list or dict holds the view: Python only stores the same array back there) is recorded
on ``v``, then put back into ``t``: which element of ``t`` each element of ``v`` is, is
read from memory (:func:`positions`), and ``t = assign_at(t, positions, v)`` is
recorded, so the gradient flows through it. An update of memory another traced array
shares in a way tracing did not make is refused with a located error, and so is a write
through a view of an array whose library cannot write at positions
(``array_api_strict``: :func:`puts_back`).

A write into a *variable* of the trace is refused too, one rule for ``evaluate`` +
``gradient`` and ``value_and_gradient``. A variable is what a gradient can be taken
with respect to: an argument of ``evaluate`` (or an argument ``value_and_gradient``
traces), an array of ``new_variables``, a new variable started by
``traced(extract_data(...))``. While its trace runs, a write into it in place is
refused with a located :class:`~autodiff_tutor.errors.TracingError`: ``x[0, 0] = 0.0``,
``x[idx] += v``, ``x *= 2`` (every augmented operator), ``np.add(x, v, out=x)``,
``np.fill_diagonal(x, 0)``, and the same through a view of it (``v = x.T; v[0] = 1``,
``x.reshape(-1, 1) -= t``, a helper that writes into the argument it was given).

Why refuse rather than follow the write (tracing follows writes into arrays the
function made): after ``x[0, 0] = 0.0``, ``gradient(y, x)`` has two readings, the
derivative with respect to the value passed in or with respect to the written ``x``,
and they differ. The compiler refuses writes into a parameter for the same reason, and
PyTorch refuses in-place updates of a leaf that requires grad. The hint keeps the
program's meaning: ``x = x.copy()`` where the function starts makes the writes change
the function's own array, which tracing follows; the gradient is then with respect to
the value passed in, in both entry points. Arrays the function computes (``y = x * 2``,
``x.copy()``, fancy-indexed copies ``x[[0, 2]]``) share no memory with a variable:
writes into them are followed.

>>> import numpy as np
>>> from autodiff_tutor.tracing import traced
>>> y = traced(np.zeros(3))
>>> alias = y
>>> y += 1.0
>>> alias
traced(array([1., 1., 1.]), not on a trace)
>>> from autodiff_tutor.errors import TracingError
>>> from autodiff_tutor.tracing import evaluate
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
import operator
from typing import Any

import numpy as np

from autodiff_tutor.errors import AutodiffError, TracingError
from autodiff_tutor.locations import UNKNOWN, call_source, location, stored_into, stores_back
from autodiff_tutor.ops.formats import is_formatted
from autodiff_tutor.runtime.backend import array_module, laid_out_as, shape_of
from autodiff_tutor.runtime.helpers import assign_at, check_in_place
from autodiff_tutor.tracing import dispatch, messages, traced_values
from autodiff_tutor.tracing.traced_values import (
    TracedValue,
    base_of,
    may_share_memory,
    sharing_memory,
    views_of,
)

#: op -> (the operator's function, its symbol, its other forms: "r" reflected
#: (``__radd__``), "i" in place (``__iadd__``); Python reflects comparisons itself)
BINARY = {
    "add": (operator.add, "+", "ri"),
    "subtract": (operator.sub, "-", "ri"),
    "multiply": (operator.mul, "*", "ri"),
    "divide": (operator.truediv, "/", "ri"),
    "power": (operator.pow, "**", "ri"),
    "matmul": (operator.matmul, "@", "ri"),
    "floor_divide": (operator.floordiv, "//", "r"),
    "remainder": (operator.mod, "%", "r"),
    "less": (operator.lt, "<", ""),
    "less_equal": (operator.le, "<=", ""),
    "greater": (operator.gt, ">", ""),
    "greater_equal": (operator.ge, ">=", ""),
    "equal": (operator.eq, "==", ""),
    "not_equal": (operator.ne, "!=", ""),
}
#: op -> the unary operator's function (``-x``, ``+x``, ``abs(x)``, ``~x``)
UNARY = {
    "negative": operator.neg,
    "positive": operator.pos,
    "abs": operator.abs,
    "invert": operator.invert,
}


def binary(op: str, function: Any, reflected: bool = False) -> Any:
    """The method for a binary operator (``reflected``: the ``__radd__`` form)."""

    def method(self: TracedValue, other: Any) -> Any:
        if is_formatted(other):
            return NotImplemented  # the formatted array's operator labels the result
        a, b = (other, self) if reflected else (self, other)
        name = f"the {BINARY[op][1]} operator"

        def forward() -> Any:
            return function(traced_values.unwrap(a), traced_values.unwrap(b))

        return dispatch.apply(op, name, forward, [a, b], {})

    method.__name__ = f"__{'r' if reflected else ''}{function.__name__.strip('_')}__"
    return method


def unary(op: str, function: Any) -> Any:
    """The method for a unary operator (``-x``, ``abs(x)``)."""

    def method(self: TracedValue) -> Any:
        return dispatch.apply(
            op, f"{function.__name__}()", lambda: function(self._data), [self], {}
        )

    return method


def in_place(op: str, function: Any) -> Any:
    """The method for an augmented operator (``y += v``): see the module docstring."""
    compute = binary(op, function)
    symbol = BINARY[op][1] + "="

    def method(self: TracedValue, other: Any) -> Any:
        if not isinstance(self._data, np.generic):  # numpy scalars are rebound, not written
            refuse_write(self, f"y {symbol} ...")
        shared = _unknown_sharers(self)
        # v += 1 on a view: written back into its array here, unless Python's store after
        # it writes the result there (y[i] += 1 on an array y; into a list or dict,
        # rows[i] += 1, the store only puts the same array back)
        through = bool(shared) and not _stored_into_array()
        if through and not follows(self, shared):
            raise messages.in_place_shared(f"y {symbol} ...")
        result = compute(self, other)
        if not traced_values.is_traced(result) or result.shape != self.shape:
            raise messages.in_place_shape(f"y {symbol} ...", self.shape, shape_of(result))
        if result.dtype != self.dtype and not isinstance(self._data, np.generic):
            try:  # numpy casts the result into the array, or refuses (a float into integers)
                check_in_place(self._data, symbol, traced_values.unwrap(other))
            except AutodiffError as error:
                raise error.located_at(location()) from None
            result = result.astype(self.dtype)
        if through:
            if not put_back(self, result, update):
                raise _not_put_back(self, f"y {symbol} ...")
            return self
        if shared or isinstance(self._data, np.generic):
            # y[i] += v: the store that follows writes the new y[i] into y; and numpy
            # scalars are immutable: numpy rebinds the name to a new scalar
            return result
        update(self, result)
        return self

    method.__name__ = f"__i{function.__name__.strip('_')}__"
    return method


def _stored_into_array() -> bool:
    """Whether the user's current augmented operator is ``y[i] op= v`` on an array ``y``
    (then the store after it writes ``y[i]``'s new value into ``y``); not for an entry of
    a list or dict (``rows[i] op= v``: the store puts the same object back), nor where
    the container cannot be told (the update is then made here, which is right either
    way)."""
    if not stores_back():
        return False
    container = stored_into()
    return container is not UNKNOWN and hasattr(container, "shape")


def operator_methods() -> dict[str, Any]:
    """The operator methods of a traced array, by name (``__add__``, ``__radd__``,
    ``__iadd__``, ``__neg__``...), from :data:`BINARY` and :data:`UNARY`.

    >>> sorted(operator_methods())[:4]
    ['__abs__', '__add__', '__eq__', '__floordiv__']
    """
    methods = {f"__{f.__name__}__": unary(op, f) for op, f in UNARY.items()}
    for op, (function, _, forms) in BINARY.items():
        name = function.__name__
        methods[f"__{name}__"] = binary(op, function)
        if "r" in forms:
            methods[f"__r{name}__"] = binary(op, function, reflected=True)
        if "i" in forms:
            methods[f"__i{name}__"] = in_place(op, function)
    return methods


def set_item(y: Any, index: Any, value: Any) -> None:
    """``y[index] = value`` on traced ``y``: ``y`` becomes a recorded copy with the write."""
    raw_index, raw_value = traced_values.unwrap(index), traced_values.unwrap(value)
    if isinstance(y._data, np.generic):
        raise TracingError(
            f"y[...] = ... on a numpy scalar ({y._data.dtype}): numpy scalars cannot "
            "be changed (numpy raises TypeError)",
            location(),
            hint="write y = new_value, or make y an array (np.asarray is fine before tracing)",
        )
    refuse_write(y, "y[...] = ...")
    shared = _unknown_sharers(y, raw_index)
    if shared and not follows(y, shared):
        raise messages.in_place_shared("y[...] = ...")

    def forward() -> Any:
        return assign_at(y._data, raw_index, raw_value)

    try:
        result = dispatch.apply("assign_at", "y[...] = ...", forward, [y, raw_index, value], {})
    except AutodiffError as error:
        raise error.located_at(location()) from None
    if not shared:
        update(y, result)
    elif not put_back(y, result, update):  # a write through a view: its array sees it
        raise _not_put_back(y, "y[...] = ...")


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """``np.fill_diagonal(a, val)`` with traced values: the write ``a[k, k] = val`` for
    ``k < min(a.shape)`` (numpy's, without ``wrap``), recorded as ``y[...] = ...`` is.

    >>> from autodiff_tutor.tracing import evaluate, traced
    >>> def zero_diagonal(x):
    ...     a = x * 1.0  # an array of its own: a write into x itself is refused
    ...     fill_diagonal(a, 0.0)
    ...     return a
    >>> evaluate(zero_diagonal, traced(np.ones((2, 2))))
    traced(array([[0., 1.],
           [1., 0.]]), trace ... (evaluate(zero_diagonal)) has ended)
    """
    if wrap:
        raise messages.unsupported_arguments("np.fill_diagonal", ["wrap"], ())
    if not isinstance(a, TracedValue):
        raise messages.element_into_plain()
    shape = shape_of(a._data)
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) > 1):
        np.fill_diagonal(np.empty(shape), 0.0)  # numpy's own error for this shape
    set_item(a, np.diag_indices(min(shape), len(shape)), val)


def _unknown_sharers(y: TracedValue, index: Any = None) -> list[TracedValue]:
    """Traced values sharing ``y``'s memory (at ``index``) that are not views tracing
    made of ``y``: an update of ``y`` would change them in numpy, invisibly to tracing."""
    known = [view for _, view in views_of(y)]
    return [o for o in sharing_memory(y, index) if all(o is not k for k in known)]


def _not_put_back(view: TracedValue, what: str) -> TracingError:
    """The refusal of a write through ``view`` that could not be put back."""
    if puts_back(view._data):  # an integer array, memory it cannot number...
        return messages.in_place_shared(what)
    return messages.through_view_not_followed(what, array_module(view._data).__name__)


def update(y: TracedValue, result: TracedValue) -> None:
    """``y`` takes ``result``'s value in place, laid out in memory as ``y`` was (numpy
    writes into ``y``'s memory; a later ``ravel`` is a view or a copy by it); its views
    are rebuilt from it, so that they see the update, as numpy's views do."""
    views = views_of(y)
    old = y._data
    y._become(result)
    y._data = laid_out_as(y._data, old)  # numpy writes into y's memory: its layout stays
    for parent, view in views:
        view._become(view._rebuild(parent))


def follows(view: TracedValue, sharers: list[TracedValue]) -> bool:
    """Whether a write through ``view`` can be put back: ``view`` is a view tracing
    made, and every traced array sharing its memory is its root or a view of it.

    >>> from autodiff_tutor.tracing.traced_values import note_view
    >>> base = TracedValue(np.zeros((2, 3)))
    >>> view = note_view(TracedValue(base._data.T), base, lambda b: b)
    >>> stranger = TracedValue(base._data[0])  # shares memory, not made by tracing
    >>> follows(view, [base]), follows(view, [base, stranger])
    (True, False)
    """
    if base_of(view) is None:
        return False
    root = view
    while base_of(root) is not None:
        root = base_of(root)
    family = [root, *(v for _, v in views_of(root))]
    return all(any(s is f for f in family) for s in sharers)


def put_back(view: TracedValue, result: TracedValue, update: Any) -> bool:
    """``view`` takes ``result``'s value, written into the array it is a view of (and so
    on up to the root, whose views are then rebuilt by ``update``). Returns ``False``
    when the positions cannot be read (the caller refuses the write)."""
    parent = base_of(view)
    where = positions(view._data, parent._data)
    if where is None:
        return False
    # each element of view, as an index into parent: assign_at then keeps parent's
    # memory layout, as numpy's write does (a later reshape is a view or a copy by it)
    index = tuple(array_module(where).unravel_index(where, parent.shape))
    raw_parent, raw_value = parent._data, result._data

    def forward() -> Any:
        return assign_at(raw_parent, index, raw_value)

    new_parent = dispatch.apply("assign_at", "y[...] = ...", forward, [parent, index, result], {})
    if base_of(parent) is not None:
        return put_back(parent, new_parent, update)
    update(parent, new_parent)
    return True


def puts_back(data: Any) -> bool:
    """Whether a write through a view of ``data`` can be put back: its library tells
    which memory arrays share and writes by integer index arrays (numpy, cupy; not
    ``array_api_strict``, whose views tracing still sees, through DLPack).

    >>> import array_api_strict as xs
    >>> puts_back(np.zeros(2)), puts_back(xs.zeros(2))
    (True, False)
    """
    try:
        return getattr(array_module(data), "may_share_memory", None) is not None
    except TypeError:
        return False


def positions(view: Any, base: Any) -> Any:
    """For each element of ``view``, its position in ``base`` flattened (C order), read
    from memory; ``None`` unless ``view`` lies inside ``base`` and both are writable
    real floating arrays with exact positions.

    >>> positions(np.zeros((2, 3)).T[1], np.zeros((2, 3)))  # unrelated arrays
    >>> base = np.zeros((2, 3))
    >>> positions(base.T[1], base).tolist()
    [1, 4]
    """
    if not puts_back(base):
        return None
    xp = array_module(view, base)
    kind = getattr(getattr(base, "dtype", None), "kind", "")
    if kind != "f" or not hasattr(view, "shape") or not xp.may_share_memory(view, base):
        return None
    if base.size >= 2 ** (np.finfo(base.dtype).nmant + 1):
        return None  # positions would not be exact in this precision
    if not getattr(base.flags, "writeable", True):  # read-only memory (cupy has no flag)
        return None
    saved = base.copy()
    try:
        base[...] = xp.reshape(xp.arange(base.size, dtype=base.dtype), base.shape)
        found = xp.asarray(view).astype(np.int64)
    finally:
        base[...] = saved
    return found


def register_variable(tape: Any, value: TracedValue, label: str, argument: bool) -> None:
    """``value`` (just put on ``tape`` as a leaf) is a variable of the trace, shown to
    the user as ``label``; ``argument``: an argument of the traced function (the
    others are made while it runs: ``new_variables``, ``traced(extract_data(y))``).

    >>> import numpy as np
    >>> from autodiff_tutor.tracing.tape import Tape
    >>> tape = Tape("f")
    >>> x = TracedValue(np.zeros(3), tape, tape.new_leaf((3,), "float64", "x"))
    >>> register_variable(tape, x, "x", argument=True)
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
    >>> register_variable(tape, x, "x", argument=True)
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
    >>> register_variable(tape, x, "x", argument=True)
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
