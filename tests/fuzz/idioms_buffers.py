"""Generator blocks for arrays a program fills and values it converts (part of the
generator, after :mod:`fuzz.idioms_index`): the families ``buffer_fill`` and
``conversion``, drawn only when asked for (``--only buffer_fill,conversion``), so that
the other families' seeds keep their programs.

``buffer_fill``: ``np.zeros``/``np.empty``/``np.ones``/``np.full`` made by the program
and filled with values that carry gradient: row by row in a loop, a slice at once,
``+=`` into columns, ``np.add(..., out=buf)``; and integer or boolean buffers filled
with integers made from such values (a float written into one now and then, which
numpy truncates: refused in every mode). ``conversion``: ``np.array`` of a list
of such values (numbers and rows), ``np.asarray``, ``np.mean([...])`` of a list,
``np.float64(...)`` of a number, and conversions numpy answers with the array itself
(``np.float64(t)``, ``np.asarray(t)``, ``np.array(t, copy=None)``) written through.

>>> import random
>>> from fuzz.generator import _State
>>> state = _State(random.Random(4), frozenset(), {"x": (3, 4), "w": (4,)})
>>> buffer_fill(state) and any(m in state.blocks[0] for m in ("np.zeros", "np.empty",
...     "np.ones", "np.full"))
True
"""

from __future__ import annotations

from typing import Any


def buffer_fill(s: Any) -> bool:
    """A buffer the program makes, filled with values of the program."""
    u = s.pick()
    shape = s.shapes[u]
    if not shape:
        return False
    name = s.fresh()
    n = shape[0]
    make = s.rng.choice(["np.zeros({sh})", "np.empty({sh})", "np.ones({sh})", "np.full({sh}, 0.5)"])
    new = make.format(sh=shape)
    options = [
        [f"{name} = {new}", f"for i in range({n}):", f"    {name}[i] = np.tanh({u}[i]) * (i + 1)"],
        [f"{name} = {new}", f"{name}[...] = np.sin({u})"],
        [f"{name} = {new}", f"np.add({u}, np.cos({u}), out={name})"],
        [f"{name} = {new}", f"{name}[1:] = {u}[:-1] * 2.0"] if n > 1 else None,
    ]
    if len(shape) == 2:
        m = shape[1]
        options += [
            [f"{name} = {new}", f"for j in range({m}):", f"    {name}[:, j] += {u}[:, j] ** 2"],
            [f"{name} = {new}", f"for i in range({n}):", f"    {name}[i, :] = np.exp(-{u}[i])"],
        ]
    if make.startswith("np.empty"):  # its values are undefined: only writes of it all
        options = [
            o for o in options if o is not None and "[1:]" not in o[-1] and "+=" not in o[-1]
        ]
    if s.rng.random() < 0.25:
        return _integer_buffer(s, u, shape, name)
    lines = s.rng.choice([o for o in options if o is not None])
    s.emit(lines, name, shape, "buffer_fill")
    return True


def _integer_buffer(s: Any, u: str, shape: tuple[int, ...], name: str) -> bool:
    """An integer or boolean buffer (``dtype=int``, ``np.int32``, ``bool``, ``np.arange``,
    ``zeros_like(..., dtype=int)``) filled with integers made from values of the
    program (``.astype(int)``, comparisons) and used as a constant factor; now and then
    a float is written into it, which numpy truncates (the value loses its gradient):
    refused in every mode."""
    n = shape[0]
    counts = f"{name}_counts"
    make = s.rng.choice(
        [
            f"np.zeros({shape}, dtype=int)",
            f"np.zeros({shape}, np.int32)",
            f"np.zeros_like({u}, dtype=int)",
            f"np.ones({shape}, dtype=int)",
        ]
    )
    fills = [
        f"{counts}[...] = np.floor({u} * 3.0).astype(int)",
        f"{counts} += 2",
        f"{counts}[0] = 3",
        f"{counts}[{u} > 0] = 1",
    ]
    if len(shape) == 1 and s.rng.random() < 0.3:
        make, fills = f"np.arange({n})", [f"{counts} += 1", f"{counts}[::-1] = {counts} * 2"]
    if s.rng.random() < 0.3:
        make, fills = f"np.zeros({shape}, dtype=bool)", [f"{counts}[...] = {u} > 0.1"]
    lines = [f"{counts} = {make}", s.rng.choice(fills)]
    if s.rng.random() < 0.15:  # a float into the integers: truncated, refused
        lines.append(f"{counts}[{(0,) * len(shape)}] = np.tanh({u}[{(0,) * len(shape)}])")
    lines.append(f"{name} = {u} * ({counts} + 0.5)")
    s.emit(lines, name, shape, "buffer_fill")
    return True


def conversion(s: Any) -> bool:
    """A conversion of values of the program that keeps their gradient."""
    u = s.pick()
    shape = s.shapes[u]
    name = s.fresh()
    options: list[tuple[str, tuple[int, ...]]] = [
        (f"np.array([np.sum({u}), np.max({u}) * 0.5, 1.0])", (3,)),
        (f"np.asarray({u}) * 2.0", shape),
        (f"np.array([{u}, np.sin({u})])", (2, *shape)),
        (f"np.float64(np.sum({u})) * {u}", shape),
        (f"np.mean([np.sum({u}), np.min({u})]) + {u}", shape),
        (f"np.array([[np.sum({u}), 1.0], [0.0, np.mean({u})]])", (2, 2)),
    ]
    if shape:  # a conversion numpy answers with the array itself, written through
        same = s.rng.choice(["np.float64({t})", "np.asarray({t})", "np.array({t}, copy=None)"])
        write = s.rng.choice(["[0] = np.sum({u})", " *= 0.5", "[-1] += 1.0"])
        lines = [
            f"{name} = {u} * 1.0",
            f"{name}_as = {same.format(t=name)}",
            f"{name}_as{write.format(u=u)}",
        ]
        options.append(("\n".join(lines), shape))
    text, new = s.rng.choice(options)
    lines = text.split("\n") if "\n" in text else [f"{name} = {text}"]
    s.emit(lines, name, new, "conversion")
    return True


#: construct -> its maker (drawn only when asked for: see the module docstring)
BUFFER_IDIOMS = {"buffer_fill": buffer_fill, "conversion": conversion}
