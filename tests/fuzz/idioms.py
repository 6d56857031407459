"""Generator blocks for idioms people write in numpy programs (part of the generator).

Shape unpacking (``n, m = u.shape``), loops over pairs (``for i, (a, b) in
enumerate(pairs)``, ``zip``), ``sum()`` of a comprehension, ``np.var``/``np.std``,
slices with steps (``u[::-1]``, ``u[1::2, ::-2]``), element writes in loops (a
recurrence ``y[i] = y[i - 1] * c + y[i]``, the ``y = y.copy()`` habit) and
``while True`` loops left by ``break``, products (``u @ v``, ``np.dot``, ``np.einsum``),
augmented assignments in loops (``acc += ...``, ``p -= 0.1 * g``), writes into an
array without gradient through an alias or a view, writes through items of a list of views.

Each maker takes the generator's state (``rng``, ``shapes``, ``pick``, ``fresh``,
``emit``) and returns ``False`` when the state has no operand it fits (the generator
then writes another block).

>>> import random
>>> from fuzz.generator import _State
>>> state = _State(random.Random(3), frozenset(), {"x": (3, 4), "w": (4,)})
>>> shape_unpack(state)
True
>>> state.blocks[0].split()[:4]
['n,', 'm', '=', 'x.shape']
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np


def shape_unpack(s: Any) -> bool:
    """``n, m = u.shape`` (or ``len(u)``, ``u.size``), and the sizes used as numbers."""
    u, shape = _matrix(s)
    if not u:
        return False
    name = s.fresh()
    unpack = s.rng.choice(["n, m = {u}.shape", "n, m = np.shape({u})"]).format(u=u)
    uses = [
        (f"{name} = np.sum(np.sin({u}), axis=0) / n + m * 0.1", shape[1:]),
        (f"{name} = {u} * (1.0 / (n * m)) + np.mean({u}, axis=1, keepdims=True) / m", shape),
        (f"{name} = np.sum({u} * {u}, axis=1) / (len({u}) + 0.5 * {u}.size)", shape[:1]),
    ]
    text, new = s.rng.choice(uses)
    s.emit([unpack, text], name, new, "shape_unpack")
    return True


def enumerate_pairs(s: Any) -> bool:
    """``for i, (a, b) in enumerate(pairs)`` or ``for a, b in zip(us, cs)``: pairs of
    arrays (a layer's weights and bias) or of an array and a number."""
    u = s.pick()
    shape = s.shapes[u]
    fits = [n for n, sh in s.shapes.items() if _fits_into(sh, shape)]
    b = s.rng.choice(fits)
    name, pairs = s.fresh(), s.fresh()
    if s.rng.random() < 0.5:
        lines = [
            f"{pairs} = [({u}, {b}), ({u} * 0.5, 0.3 * {b})]",
            f"{name} = {u} * 0.0",
            f"for i, (a, c) in enumerate({pairs}):",
            f"    {name} = np.tanh({name} * a + c) * (i + 1.0)",
        ]
    else:
        lines = [
            f"{name} = {u} + 0.0",
            f"for a, c in zip([{u}, np.sin({u}), {b} + 0.0 * {u}], [0.5, -0.3, 1.2]):",
            f"    {name} = {name} * c + np.cos(a)",
        ]
    s.emit(lines, name, shape, "enumerate_pairs")
    return True


def sum_comprehension(s: Any) -> bool:
    """``sum(...)`` of a generator or a list comprehension over rows, indices or a zip."""
    u, shape = _matrix(s)
    if not u:
        return False
    name = s.fresh()
    partners = [n for n, sh in s.shapes.items() if sh == shape]
    v = s.rng.choice(partners)
    options = [
        (f"{name} = sum(np.sum(np.sin(r) * r) for r in {u})", ()),
        (f"{name} = sum([np.tanh({u}[i]) * (i + 1) for i in range({shape[0]})])", shape[1:]),
        (f"{name} = sum(np.sum(a * np.cos(b)) for a, b in zip({u}, {v}))", ()),
        (f"{name} = sum(r * r for r in {u}) / len({u})", shape[1:]),
    ]
    text, new = s.rng.choice(options)
    s.emit([text], name, new, "sum_comprehension")
    return True


def var_std(s: Any) -> bool:
    """``np.var``/``np.std`` (function or method), over an axis (negative too), both axes
    or all, ``ddof`` (1 or 2)."""
    u = s.pick()
    shape = s.shapes[u]
    fn = s.rng.choice(["var", "std"])
    axis = s.rng.choice([None, *range(len(shape))] + ([(0, 1), -1] if len(shape) == 2 else []))
    axes = range(len(shape)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    axes = {a % len(shape) for a in axes}
    keepdims = axis is not None and s.rng.random() < 0.3
    count = int(np.prod([shape[a] for a in axes]))
    ddof = s.rng.choice([1, 1, 2]) if count > 2 and s.rng.random() < 0.3 else 0
    args = ([] if axis is None else [f"axis={axis}"]) + ([f"ddof={ddof}"] if ddof else [])
    args += ["keepdims=True"] if keepdims else []
    text = ", ".join(args)
    call = s.rng.choice([f"np.{fn}({u}{', ' + text if text else ''})", f"{u}.{fn}({text})"])
    name = s.fresh()
    if keepdims:
        new = tuple(1 if i in axes else n for i, n in enumerate(shape))
    else:
        new = tuple(n for i, n in enumerate(shape) if i not in axes)
    s.emit([f"{name} = {call}"], name, new, "var_std")
    return True


def step_slice(s: Any) -> bool:
    """Slices with steps (negative too), read, or written into a copy."""
    u = s.pick(2) if s.rng.random() < 0.7 else s.pick(1)
    shape = s.shapes[u]
    if not shape:
        return False
    n = shape[0]
    options = [(f"{u}[::-1]", shape), (f"{u}[1::2]", (n // 2, *shape[1:]))]
    options.append((f"{u}[-1::-2]", ((n + 1) // 2, *shape[1:])))
    if len(shape) == 2:
        m = shape[1]
        options += [(f"{u}[:, ::-1]", shape), (f"{u}[::-1, 1::2]", (n, m // 2))]
        options.append((f"{u}[::2, ::-2]", ((n + 1) // 2, (m + 1) // 2)))
    text, new = s.rng.choice(options)
    name = s.fresh()
    if 0 in new:
        return False
    if s.rng.random() < 0.4:  # a write through a stepped slice of a copy
        lines = [f"{name} = {u} * 1.0", f"{name}[::-2] = np.tanh({name}[::-2]) + 0.5"]
        if s.rng.random() < 0.5:
            lines[1] = f"{name}[::2] *= np.cos({u}[::2])"
        s.emit(lines, name, shape, "step_slice", "index_write")
        return True
    s.emit([f"{name} = {text} * 1.0"], name, new, "step_slice")
    return True


def loop_write(s: Any) -> bool:
    """Element writes in a loop: a recurrence over rows (reading what the previous
    iteration wrote), with or without the ``y = y.copy()`` habit in the body."""
    u = s.pick()
    shape = s.shapes[u]
    if not shape or shape[0] < 2:
        return False
    name = s.fresh()
    start = s.rng.choice([f"{u}.copy()", f"{u} * 1.0", f"np.zeros_like({u})"])
    step = s.rng.choice(
        [
            f"{name}[i] = {name}[i - 1] * 0.5 + np.sin({u}[i])",
            f"{name}[i] += np.tanh({name}[i - 1])",
            f"{name}[i] = np.maximum({name}[i - 1], {u}[i]) * 0.7",
        ]
    )
    body = [f"    {step}"]
    if s.rng.random() < 0.4:
        body.insert(0, f"    {name} = {name}.copy()")
    lines = [f"{name} = {start}", f"for i in range(1, {shape[0]}):", *body]
    s.emit(lines, name, shape, "loop_write", "index_write")
    return True


def while_break(s: Any) -> bool:
    """``while True:`` (or a bounded ``while``) left by ``break`` on a count or a value."""
    u = s.pick()
    name, k = s.fresh(), s.fresh()
    limit = round(s.rng.uniform(-1.0, 4.0), 2)
    head = s.rng.choice(["while True:", f"while {k} < 6:"])
    lines = [
        f"{name} = {u} * 1.0",
        f"{k} = 0",
        head,
        f"    {name} = np.tanh({name}) * 1.3 + 0.2 * {u}",
        f"    {k} += 1",
        f"    if {k} >= 4 or np.sum({name} * {name}) > {limit}:",
        "        break",
    ]
    s.emit(lines, name, s.shapes[u], "while_break")
    return True


def loop_inplace(s: Any) -> bool:
    """Augmented assignments in loops: an accumulator (``acc += ...``, a number or an
    array), or descent steps (``p -= 0.1 * g``) reading the updated array."""
    u = s.pick()
    shape = s.shapes[u]
    name, g = s.fresh(), s.fresh()
    start = s.rng.choice([f"{u} * 0.0", f"np.zeros_like({u})", f"{u} + 0.0"])
    variants = [
        [f"{name} = {start}", "for i in range(3):", f"    {name} += np.tanh({u}) * (i + 1)"],
        [
            f"{name} = {u} + 0.0",
            "for _ in range(3):",
            f"    {g} = 2.0 * {name} - np.sin({u})",
            f"    {name} -= 0.1 * {g}",
        ],
        [
            f"{name} = {start}",
            "for i in range(2):",
            f"    {name} *= np.cos({u})",
            f"    {name} += 0.5",
        ],
    ]
    new = shape
    if shape:
        variants.append(
            [f"{name} = 0.0", f"for r in {u}:", f"    {name} += np.sum(r * r) + np.sum(np.sin(r))"]
        )
    lines = s.rng.choice(variants)
    if lines[0] == f"{name} = 0.0":
        new = ()
    s.emit(lines, name, new, "loop_inplace", "inplace")
    return True


def constant_write(s: Any) -> bool:
    """An array without gradient (``np.ones_like(u)``) written through an alias or a
    view made by a method or a module function (or a view of a view, a flip, a
    rotation); then it or the view is read, times u."""
    u, shape = _matrix(s)
    if not u:
        return False
    name, c, v = s.fresh(), s.fresh(), s.fresh()
    maker = s.rng.choice(
        ["{c}", "{c}.T", "np.transpose({c})", "np.reshape({c}, (-1,))", "{c}[1:]", "{c}[0]"]
        + ["{c}.T[1:]", "np.reshape({c}, (-1,))[:3]"]  # a view of a view
    )
    write = s.rng.choice([" *= 2.0", " += 0.5", "[0] = 3.0"])
    # some programs take a flip or a rotation instead (drawn from the generator's state,
    # not from its stream, so that the seeded stream stays what it was)
    turned = unstreamed_draw(s, 3 * len(FLIPS))
    if turned < len(FLIPS):
        maker = FLIPS[turned]
    lines = [
        f"{c} = np.ones_like({u}) * 0.5",
        f"{v} = " + maker.format(c=c),
        f"{v}{write}",
    ]
    read = f"{u} * {c}" if s.rng.random() < 0.5 else f"np.sum({v}) * {u}"  # array or view
    s.emit([*lines, f"{name} = {read}"], name, shape, "constant_write")
    return True


#: flips and rotations of a matrix: views, put back by the same flip or the other turn
FLIPS = ("np.flip({c}, 1)", "np.flipud({c})", "np.rot90({c}, 2)", "np.rot90({c})")


def list_item_write(s: Any) -> bool:
    """A list (or dict) of views of an array (``[b[0], b[-1]]``, ``list(b)``), written
    through an item read from it (``for r in rows: r *= ...``, ``r = rows[0]``) or by
    an augmented assignment to its entry (``rows[-1] *= ...``, ``parts["a"] += ...``:
    numpy writes into the array the entry holds); then the array or the item is read."""
    u, shape = _matrix(s)
    if not u:
        return False
    name, b, rows = s.fresh(), s.fresh(), s.fresh()
    start = s.rng.choice([f"{u} * 1.0", f"np.ones_like({u}) * 0.5"])
    lines = [f"{b} = {start}", f"{rows} = [{b}[0], {b}[-1]]"]
    form = s.rng.random()
    if form < 0.3:  # refused (rows is read after a write through an item)
        lines += [f"for r in {rows}:", "    r *= 2.0"]
    elif form < 0.65:
        lines += [f"r = {rows}[0]", f"r += np.sin({u}[0])"]
    else:  # the entry written in place; r reads it afterwards
        # its details read from the same draw: the other blocks' draws stay as they were
        pick = int(form * 10**6)
        made = [
            lines[1],
            f"{rows} = list({b})",
            f"{rows} = [v for v in {b}]",
            f"{rows} = np.split({b}, {shape[0]})",
            f"{rows} = {{'a': {b}[0], 'z': {b}[-1]}}",
        ][pick % 5]
        key = "'a'" if "{" in made else ["0", "-1"][pick // 5 % 2]
        write = ["*= 2.0", f"+= np.sin({u}[0])", f"-= {b}[-1] * 0.5"][pick // 10 % 3]
        lines[1:] = [made, f"{rows}[{key}] {write}", f"r = {rows}[{key}]"]
    read = f"{b} * {u}" if s.rng.random() < 0.3 else f"np.sum(r) * {u}"  # b: refused
    s.emit([*lines, f"{name} = {read}"], name, shape, "list_item_write")
    return True


def matmul(s: Any) -> bool:
    """Products of matrices and vectors: ``@``, ``np.dot``, ``np.outer``, ``np.einsum``."""
    u, shape = _matrix(s)
    if not u:
        return False
    a, b = shape
    options = [(f"{u}.T @ {u}", (b, b)), (f"np.dot({u}, {u}.T)", (a, a))]
    for v, other in s.shapes.items():
        if other == (b,):
            options += [(f"{u} @ {v}", (a,)), (f"np.einsum('ij,j->i', {u}, {v})", (a,))]
        if other == (a,):
            options += [(f"{v} @ {u}", (b,)), (f"np.outer({v}, {u}[0])", (a, b))]
        if len(other) == 2 and other[0] == b:
            options.append((f"np.tanh({u} @ {v})", (a, other[1])))
    text, new = s.rng.choice(options)
    name = s.fresh()
    s.emit([f"{name} = {text}"], name, new, "matmul")
    return True


def unstreamed_draw(s: Any, n: int) -> int:
    """A number below ``n`` drawn from the state of ``s.rng`` without advancing it: a new
    choice in an old block leaves the seeds' other draws as they were."""
    return zlib.crc32(repr(s.rng.getstate()).encode()) % n


def _matrix(s: Any) -> tuple[str, tuple[int, ...]]:
    """A 2-D operand and its shape, or ``("", ())`` where there is none."""
    u = s.pick(2)
    return (u, s.shapes[u]) if len(s.shapes[u]) == 2 else ("", ())


def _fits_into(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(small, big) == big
    except ValueError:
        return False


#: construct -> its maker, in a fixed order (the seeded stream depends on it)
IDIOMS = {
    "shape_unpack": shape_unpack,
    "enumerate_pairs": enumerate_pairs,
    "sum_comprehension": sum_comprehension,
    "var_std": var_std,
    "step_slice": step_slice,
    "loop_write": loop_write,
    "while_break": while_break,
    "matmul": matmul,
    "loop_inplace": loop_inplace,
    "constant_write": constant_write,
    "list_item_write": list_item_write,
}
