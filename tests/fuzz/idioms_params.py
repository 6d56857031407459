"""Generator blocks that write, in place, into a parameter of ``f`` (``x`` or ``w``) or
into a view of one (part of the generator, after :mod:`fuzz.idioms_more`).

Every form Python allows: augmented assignments (``+= -= *= /= **=``), element and
slice writes (``x[0, 0] = v``, ``x[:, 1:] *= v``, ``x[[0, 2]] += v``, ``x[...] = v``),
ufuncs with ``out=`` (``np.add(x, v, out=x)``); directly in ``f``, through a view of
the parameter (``x.reshape(-1, 1)``, ``x.T``, ``x[1:]``, ``x.ravel()``, a view of a
view) then reading the parameter or the view, or inside a helper given the parameter
or a view of it (called half the time in an ``if`` test). The parameter is often read
before the write, and later blocks read it as written. Some blocks copy the parameter
first (``x = x.copy()``, the hint of the refusal), after which the writes are into a
local array and must be followed.

The compiler refuses writes into a parameter; tracing refuses them too (see
:mod:`autodiff_tutor.tracing.parameters`). Nothing may differ silently from numpy.

>>> import random
>>> from fuzz.generator import _State
>>> state = _State(random.Random(4), frozenset(), {"x": (3, 4), "w": (4,)})
>>> param_inplace(state)
True
>>> any(line.split()[0] in ("x", "w") or "x[" in line or "w[" in line or "out=" in line
...     for line in state.blocks[0].splitlines())
True
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from fuzz.idioms import _fits_into

PARAMETERS = ("x", "w")
#: index texts by the number of dimensions of the array written
INDEXES = {
    2: ["0", "-1", "1:", "::2", ":, 0", ":, 1:", "0, 0", "[0, 2]", "...", "1, ::2"],
    1: ["0", "-1", "1:", "::2", "[0, 2]", "..."],
}
#: view makers by the number of dimensions of the parameter (``{p}``: its name)
VIEWS = {
    2: [
        "{p}.reshape(-1, 1)",
        "{p}.T",
        "{p}[1:]",
        "{p}.ravel()",
        "{p}.reshape(-1)",
        "np.transpose({p})",
        "{p}[:, ::2]",
        "{p}[0]",
        "np.reshape({p}, (4, 3))",
        "{p}.reshape(2, 6)[1]",  # a view of a view
        "{p}.T[1:]",
    ],
    1: ["{p}.reshape(-1, 1)", "{p}[1:]", "{p}[::2]", "{p}.reshape(2, 2)", "{p}.ravel()"],
}
UFUNCS = {"+=": "np.add", "-=": "np.subtract", "*=": "np.multiply"}


def _shape_of(expression: str, shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The shape numpy gives ``expression`` over arrays of these shapes."""
    arrays = {name: np.zeros(shape) for name, shape in shapes.items()}
    return tuple(np.shape(eval(expression, {"np": np}, arrays)))  # noqa: S307 - our own text


def _operand(s: Any, shape: tuple[int, ...]) -> str:
    """An expression whose shape fits into ``shape`` (a parameter, a local, a number)."""
    fits = [n for n, sh in s.shapes.items() if _fits_into(sh, shape)]
    if not fits or s.rng.random() < 0.15:
        b = s.rng.choice(list(s.shapes))
        return s.rng.choice(["0.5", f"0.1 * np.sum(np.sin({b}))"])
    b = s.rng.choice(fits)
    return s.rng.choice([f"np.sin({b})", f"0.5 * {b}", f"np.tanh({b}) * {b}", f"{b} + 0.25"])


def _write(s: Any, target: str, shape: tuple[int, ...], element: bool) -> str:
    """One in-place write into ``target`` (a name, or a subscript with ``element``)."""
    rhs = _operand(s, shape)
    forms = ["+=", "-=", "*=", "/=", "**="] + (["="] if element else ["out="])
    form = s.rng.choice(forms)
    if form == "/=":
        return f"{target} /= 1.5 + ({rhs}) ** 2"
    if form == "**=":
        return f"{target} **= 2"
    if form == "out=":
        op = s.rng.choice(list(UFUNCS))
        return f"{UFUNCS[op]}({target}, {rhs}, out={target})"
    return f"{target} {form} {rhs}"


def _write_into(s: Any, name: str, shape: tuple[int, ...]) -> str:
    """A write into all of ``name`` or into an element or slice of it."""
    if not shape or s.rng.random() < 0.45:
        return _write(s, name, shape, element=False)
    fitting = [i for i in INDEXES[len(shape)] if _selects(shape, i)]
    target = f"{name}[{s.rng.choice(fitting)}]"
    return _write(s, target, _shape_of(target, {name: shape}), element=True)


def _selects(shape: tuple[int, ...], index: str) -> bool:
    """Whether ``index`` selects at least one element of an array of ``shape``."""
    try:
        return 0 not in _shape_of(f"a[{index}]", {"a": shape})
    except IndexError:
        return False


def _read_before(s: Any, p: str, lines: list[str]) -> str:
    """Half the time, read the parameter before the write: `` + pre`` for the result."""
    if s.rng.random() < 0.5:
        return ""
    pre = s.fresh()
    lines.append(f"{pre} = " + s.rng.choice([f"np.sum({p} * {p})", f"np.cos({p})"]))
    return f" + 0.5 * np.sum({pre})"


def _copy_first(s: Any, p: str, lines: list[str]) -> None:
    """Now and then the parameter is copied first: the writes are into a local array."""
    if s.rng.random() < 0.1:
        lines.append(f"{p} = {p}.copy()")


def param_inplace(s: Any) -> bool:
    """A write into the parameter itself (once or twice), then the parameter is read."""
    p = s.rng.choice(PARAMETERS)
    shape = s.shapes[p]
    name, lines = s.fresh(), []
    _copy_first(s, p, lines)
    pre = _read_before(s, p, lines)
    lines.append(_write_into(s, p, shape))
    if s.rng.random() < 0.3:
        lines.append(_write_into(s, p, shape))
    lines.append(f"{name} = {p} * np.tanh({p}){pre}")
    s.emit(lines, name, shape, "param_inplace")
    return True


def param_view_write(s: Any) -> bool:
    """A write through a view of a parameter; then the parameter or the view is read."""
    p = s.rng.choice(PARAMETERS)
    shape = s.shapes[p]
    name, view, lines = s.fresh(), s.fresh(), []
    _copy_first(s, p, lines)
    pre = _read_before(s, p, lines)
    maker = s.rng.choice(VIEWS[len(shape)]).format(p=p)
    view_shape = _shape_of(maker, {p: shape})
    lines += [f"{view} = {maker}", _write_into(s, view, view_shape)]
    if s.rng.random() < 0.5:  # the base, which sees the write in numpy
        lines.append(f"{name} = np.sin({p}) * {p}{pre}")
        s.emit(lines, name, shape, "param_view_write")
    else:
        lines.append(f"{name} = {view} * {view}{pre}")
        s.emit(lines, name, view_shape, "param_view_write")
    return True


def param_helper_write(s: Any) -> bool:
    """A helper that writes into its own argument (directly, through a view of it, or
    with ``out=``), given a parameter or a view of one; the helper returns the argument
    itself or a new array. The call is in an ``if`` test half the time."""
    p = s.rng.choice(PARAMETERS)
    shape = s.shapes[p]
    given = p
    if s.rng.random() < 0.35:
        given = s.rng.choice(VIEWS[len(shape)]).format(p=p)
    given_shape = _shape_of(given, {p: shape})
    index = len(s.helpers) + 1
    body = s.rng.choice(
        [
            "a {op} b",
            "a /= 1.5 + b * b",
            "a **= 2",
            "a[...] = np.tanh(a) * b",
            "np.multiply(a, b, out=a)",
            "r = a.reshape(-1)\n    r[0] = 0.5",
            "r = a.reshape(-1)\n    r {op} b.reshape(-1)[0]",
        ]
    ).format(op=s.rng.choice(["+=", "-=", "*="]))
    result = s.rng.choice(["a", "a * 2.0", "np.sin(a) + a"])
    s.helpers.append(f"def pw{index}(a, b):\n    {body}\n    return {result}")
    name, lines = s.fresh(), []
    pre = _read_before(s, p, lines)
    operand = _operand(s, given_shape)
    if "b.reshape" in body and _shape_of(operand, s.shapes) == ():
        operand = f"np.ones({given_shape}) * {operand}"  # b.reshape needs an array
    call = f"pw{index}({given}, {operand})"
    # half the calls are in an if test, where the compiled code runs the helper as the
    # plain function (drawn from the text, so that the seeded stream stays what it was)
    if zlib.crc32(call.encode()) % 2:
        lines += [
            f"if np.sum({call}) > -1e30:",
            f"    {name} = np.sin({given}){pre}",
            "else:",
            f"    {name} = {given} * 0.5",
        ]
    else:
        lines.append(f"{name} = {call}{pre}")
    s.emit(lines, name, given_shape, "param_helper_write")
    return True


#: construct -> its maker, in a fixed order (the seeded stream depends on it)
PARAM_IDIOMS = {
    "param_inplace": param_inplace,
    "param_view_write": param_view_write,
    "param_helper_write": param_helper_write,
}
