"""Generator blocks for numpy's index tricks (part of the generator, after
:mod:`fuzz.idioms_more`): the family ``index_tricks``.

``np.r_[...]`` joining values that carry gradient (vectors, rows of matrices, numbers
between them), ``np.c_[...]`` making columns of them (a bias column of ones too),
index arrays made by ``np.r_`` (``u[np.r_[0, 2]]``, ``u[np.r_[0:2, 3]]``), slices made
by ``np.s_`` (inline or kept in a variable), ``np.ix_`` picking a block of rows and
columns, read or written into a copy, and ``np.r_[a:b:nj]`` (a constant grid) times a
value. Each maker takes the generator's state and returns ``False`` where it does not
fit. The family ``multi_index_write``, drawn only when asked for: writes whose index
names positions with several integer arrays or negative integers, a position sometimes
named twice (refused in every mode: numpy keeps only the last value written there).

>>> import random
>>> from fuzz.generator import _State
>>> state = _State(random.Random(2), frozenset(), {"x": (3, 4), "w": (4,)})
>>> index_tricks(state)
True
>>> any(t in state.blocks[0] for t in ("np.r_[", "np.c_[", "np.s_[", "np.ix_("))
True
"""

from __future__ import annotations

from typing import Any


def index_tricks(s: Any) -> bool:
    """One use of ``np.r_``, ``np.c_``, ``np.s_`` or ``np.ix_`` on values of the program."""
    name = s.fresh()
    options = _joins(s) + _indexes(s, name)
    lines, shape, *tags = s.rng.choice(options)
    s.emit([line.replace("{name}", name) for line in lines], name, shape, "index_tricks", *tags)
    return True


def _joins(s: Any) -> list[tuple]:
    """``np.r_`` and ``np.c_`` joining values that carry gradient."""
    vectors = [n for n, sh in s.shapes.items() if len(sh) == 1]
    matrices = [n for n, sh in s.shapes.items() if len(sh) == 2]
    options: list[tuple] = []
    if vectors:
        a, b = s.rng.choice(vectors), s.rng.choice(vectors)
        na, nb = s.shapes[a][0], s.shapes[b][0]
        options += [
            ([f"{{name}} = np.r_[{a}, {b}]"], (na + nb,)),
            ([f"{{name}} = np.r_[{a}, 0.5, np.tanh({b})] * 1.5"], (na + 1 + nb,)),
            ([f"{{name}} = np.r_[np.sum({a} * {a}), {b}]"], (1 + nb,)),
        ]
        same = [n for n in vectors if s.shapes[n] == s.shapes[a]]
        options += [
            ([f"{{name}} = np.c_[{a}, np.sin({s.rng.choice(same)})]"], (na, 2)),
            ([f"{{name}} = np.c_[{a}, np.ones({na})] * 2.0"], (na, 2)),
        ]
    if matrices:
        m = s.rng.choice(matrices)
        r, c = s.shapes[m]
        rows = [n for n in matrices if s.shapes[n][1] == c]
        cols = [n for n in matrices if s.shapes[n][0] == r]
        other_rows, other_cols = s.rng.choice(rows), s.rng.choice(cols)
        options += [
            ([f"{{name}} = np.r_[{m}, np.cos({other_rows})]"], (r + s.shapes[other_rows][0], c)),
            ([f"{{name}} = np.r_[{m}[:1], {m}] * 0.5"], (r + 1, c)),
            ([f"{{name}} = np.c_[{m}, {other_cols} * 0.5]"], (r, c + s.shapes[other_cols][1])),
            ([f"{{name}} = np.c_[{m}, np.ones({r})]"], (r, c + 1)),
        ]
        column = [n for n in vectors if s.shapes[n] == (r,)]
        if column:
            options.append(([f"{{name}} = np.c_[np.tanh({m}), {column[0]}]"], (r, c + 1)))
    return options


def _indexes(s: Any, name: str) -> list[tuple]:
    """Indexes made by ``np.r_``, ``np.s_`` and ``np.ix_``: read, or written into a copy."""
    u = s.pick()
    shape = s.shapes[u]
    if not shape:
        return []
    n, rest = shape[0], shape[1:]
    sl = f"{name}_at"
    options: list[tuple] = [
        ([f"{{name}} = {u}[np.r_[0, {n - 1}]] * 1.0"], (2, *rest)),
        ([f"{{name}} = np.sin({u}[np.s_[::2]])"], ((n + 1) // 2, *rest)),
        ([f"{sl} = np.s_[::-1]", f"{{name}} = {u}[{sl}] * {u}"], shape),
        ([f"{{name}} = {u} * np.r_[0.5:1.5:{shape[-1]}j]"], shape),
    ]
    if n >= 3:
        options.append(([f"{{name}} = {u}[np.r_[0:2, {n - 1}]] * 2.0"], (3, *rest)))
    if n >= 2:
        options.append(
            (
                [f"{{name}} = {u} * 1.0", f"{{name}}[np.s_[1:]] += np.sin({u}[np.s_[:-1]])"],
                shape,
                "index_write",
            )
        )
    if len(shape) == 2:
        r, c = shape
        block = f"np.ix_({_ends(r)}, {_ends(c)})"  # no index twice: a write is then defined
        options += [
            ([f"{{name}} = np.tanh({u}[{block}])"], (min(r, 2), min(c, 2))),
            ([f"{{name}} = {u}[np.ix_(np.r_[0, {r - 1}], np.arange({c}))] * {u}[0]"], (2, c)),
            (
                [f"{{name}} = {u} * 1.0", f"{{name}}[{block}] = np.tanh({u}[{block}]) + 0.5"],
                shape,
                "index_write",
            ),
            ([f"{{name}} = {u} * 1.0", f"{{name}}[{block}] *= 2.0"], shape, "index_write"),
        ]
        if c >= 2:
            options.append(([f"{sl} = np.s_[:, 1:{c}]", f"{{name}} = {u}[{sl}] * 1.0"], (r, c - 1)))
    return options


def multi_index_write(s: Any) -> bool:
    """A write whose index names positions with several integer arrays (pairs, an
    ``np.ix_`` block, a mask beside an array) or with negative integers, into a copy
    of a value of the program: drawn so that a position is sometimes named twice
    (``[0, -n]`` on an axis of length ``n``), which keeps only the last value written
    and is refused in every mode."""
    u = s.pick()
    shape = s.shapes[u]
    options = _multi_index_writes(s, u, shape) if shape else []
    if not options:
        return False
    name = s.fresh()
    lines, shape, *tags = s.rng.choice(options)
    s.emit(
        [line.replace("{name}", name) for line in lines], name, shape, "multi_index_write", *tags
    )
    return True


def _multi_index_writes(s: Any, u: str, shape: tuple[int, ...]) -> list[tuple]:
    """The writes :func:`multi_index_write` draws from, for a value ``u`` of ``shape``."""
    n = shape[0]
    first = s.rng.randrange(n)
    twice = s.rng.random() < 0.3  # the same position again, spelled another way
    other = first if twice else (first + 1) % n
    spelled = other - n if s.rng.random() < 0.5 else other  # x[-n] is x[0]
    rows = f"[{first}, {spelled}]"
    options: list[tuple] = []
    if len(shape) == 1:
        value = f"np.tanh({u}[[{n - 1}, 0]])" if n > 1 else f"np.tanh({u})"
        if n > 1 or twice:
            options.append(([f"{{name}} = {u} * 1.0", f"{{name}}[{rows}] = {value}"], shape))
        return [(*o, "index_write") for o in options]
    r, c = shape
    col = s.rng.randrange(c)
    cols = f"[{col}, {col if twice or c == 1 else (col + 1) % c}]"
    pair = f"np.sin({u}[[0, {r - 1}], [0, {c - 1}]])"
    same = "[" + ", ".join([str(col)] * r) + "]"  # beside a mask: (row, col) pairs differ
    options += [
        ([f"{{name}} = {u} * 1.0", f"{{name}}[{rows}, {cols}] = {pair}"], shape),
        ([f"{{name}} = {u} * 1.0", f"{{name}}[{rows}, {cols}] += {pair}"], shape),
        (
            [f"{{name}} = {u} * 1.0", f"{{name}}[np.ix_({rows}, [{col}])] = {u}[:2, :1] * 2.0"],
            shape,
        )
        if r >= 2
        else None,
        (
            [f"{{name}} = {u} * 0.5", f"{{name}}[np.arange({r}) >= 0, {same}] = np.cos({u}[:, 0])"],
            shape,
        ),
    ]
    return [(*o, "index_write") for o in options if o is not None]


def _ends(n: int) -> str:
    """The first and last index of an axis of length ``n``, as a list's text."""
    return f"[0, {n - 1}]" if n > 1 else "[0]"


#: construct -> its maker (after the others: the seeded stream depends on the order)
INDEX_IDIOMS = {"index_tricks": index_tricks}
#: construct -> its maker, drawn only when asked for (``--only multi_index_write``), so
#: that the other families' seeds keep their programs
ASKED_INDEX_IDIOMS = {"multi_index_write": multi_index_write}
