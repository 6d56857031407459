"""Seeded random numpy programs, as source text, tagged with the constructs they use.

Every program is ``def f(x, w): ...`` over ``x`` of shape (3, 4) and ``w`` of shape
(4,), returning a scalar. The body is a list of *blocks* (one or more statements
that define one new local), so that a failing program can be shrunk block by block.
The generator tracks each local's shape, so every program runs under plain numpy.

>>> program = generate(7)
>>> program.source.startswith("import numpy as np")
True
>>> generate(7).source == program.source  # seeded: the same seed, the same program
True
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fuzz.forms import FAMILIES, Form, draw_form
from fuzz.forms_calls import (
    CALL_FAMILIES,
    NESTED_FAMILIES,
    NESTED_SEEDS,
    CallForm,
    draw_call_form,
    draw_nested_form,
)
from fuzz.idioms import IDIOMS, unstreamed_draw
from fuzz.idioms_buffers import BUFFER_IDIOMS
from fuzz.idioms_index import ASKED_INDEX_IDIOMS, INDEX_IDIOMS
from fuzz.idioms_more import MORE_IDIOMS
from fuzz.idioms_params import PARAM_IDIOMS

#: Every construct the generator can use (the keys of the summary tables).
CONSTRUCTS = (
    "broadcast",
    "elementwise",
    "kink",
    "power",
    "reduction",
    "view",
    "index_read",
    "index_write",
    "inplace",
    "alias_inplace",
    "view_inplace",
    "if",
    "for",
    "while",
    "zero_trip",
    "break_continue",
    "helper",
    "list_stack",
    "cast",
    "cast_int",
    "power_zero",
    "prod_axes",
    "global_name",
    "nested_comprehension",
    *IDIOMS,
    *MORE_IDIOMS,
    *PARAM_IDIOMS,
    *INDEX_IDIOMS,
    *BUFFER_IDIOMS,
    *ASKED_INDEX_IDIOMS,
    *FAMILIES,
    *CALL_FAMILIES,
    *NESTED_FAMILIES,
)
#: Constructs autograd cannot follow (writes, aliasing) or gets wrong (casts): for
#: programs using them, only finite differences judge the gradient.
NOT_FOR_AUTOGRAD = {"index_write", "inplace", "alias_inplace", "view_inplace", "cast", "cast_int"}
NOT_FOR_AUTOGRAD |= {"constant_write", "list_item_write", "custom_op", "layout_write"}
NOT_FOR_AUTOGRAD |= set(PARAM_IDIOMS) | {"buffer_fill", "conversion", "multi_index_write"}
LOOPS = {"for", "while", "zero_trip", "break_continue", "list_stack", "nested_comprehension"}
LOOPS |= {"enumerate_pairs", "sum_comprehension", "loop_write", "while_break", "loop_inplace"}
LOOPS |= {"while_continue"}

SHAPES_2D = [(3, 4), (4, 3), (3, 1), (1, 4)]
UNARY = [
    ("np.tanh({u})", "elementwise"),
    ("np.sin({u})", "elementwise"),
    ("np.cos({u})", "elementwise"),
    ("np.exp(np.tanh({u}))", "elementwise"),
    ("{u} * {u}", "elementwise"),
    ("np.sqrt({u} * {u} + 1.0)", "elementwise"),
    ("np.log({u} * {u} + 1.0)", "elementwise"),
    ("{u} / (1.0 + {u} * {u})", "elementwise"),
    ("-{u} + 0.5", "elementwise"),
    ("np.abs({u})", "kink"),
    ("np.maximum({u}, 0.0)", "kink"),
    ("np.where({u} > 0, {u}, 0.1 * {u})", "kink"),
    ("np.clip({u}, -0.5, 0.5)", "kink"),
    ("{u} ** {k}", "power"),
    ("np.maximum({u}, 0.0) ** {k}", "power"),  # an exact zero base where u < 0
]


@dataclass
class Program:
    """One generated program and what it is made of."""

    seed: int
    helpers: list[str]
    blocks: list[str]
    tags: list[frozenset[str]]  # the constructs of each block
    result: str
    kink_inputs: bool
    form: Form | CallForm | None = None  # None: ``def f(x, w)``; else an object, a method
    # calling others, functions as values, state changed between calls, ...

    @property
    def constructs(self) -> frozenset[str]:
        """Every construct the program uses."""
        return frozenset().union(*self.tags, self.form.tags if self.form else ())

    @property
    def source(self) -> str:
        """The module text: imports, helper functions, then ``f`` (or the form's text)."""
        if self.form is not None:
            return self.form.render(self.helpers, self.blocks, self.result)
        return render(self.helpers, self.blocks, self.result)

    @property
    def autograd_ok(self) -> bool:
        """Whether autograd can be trusted as a gradient oracle for this program."""
        return not (self.constructs & NOT_FOR_AUTOGRAD)

    @property
    def loop_free(self) -> bool:
        """No loops: the program gets a second-order check."""
        return not (self.constructs & LOOPS)

    def inputs(self) -> tuple[np.ndarray, np.ndarray]:
        """The seeded inputs; with ``kink_inputs``, exact zeros and ties are planted."""
        rng = np.random.default_rng(self.seed)
        x = rng.uniform(-1.5, 1.5, size=(3, 4))
        w = rng.uniform(-1.5, 1.5, size=4)
        if self.kink_inputs:
            x[0, 0] = x[1, 2] = 0.0
            x[2, 1] = x[2, 3]  # a tie for max/min
            w[1] = 0.0
        return x, w


def render(helpers: list[str], blocks: list[str], result: str) -> str:
    """Source text of a program with these helper functions, body blocks and result."""
    body = "".join(block for block in blocks) + f"    return {result}\n"
    head = "import numpy as np\n\n\n" + "".join(h + "\n\n" for h in helpers)
    return head + "def f(x, w):\n" + body


@dataclass
class _State:
    rng: random.Random
    exclude: frozenset[str]
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    blocks: list[str] = field(default_factory=list)
    tags: list[frozenset[str]] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    count: int = 0

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def pick(self, ndim: int | None = None) -> str:
        names = [n for n, s in self.shapes.items() if ndim is None or len(s) == ndim]
        return self.rng.choice(names or ["x"])

    def emit(self, lines: list[str], name: str, shape: tuple[int, ...], *tags: str) -> None:
        self.blocks.append("".join("    " + line + "\n" for line in lines))
        self.tags.append(frozenset(tags))
        self.shapes[name] = shape
        self.used.update(tags)


def _unary(s: _State) -> None:
    u = s.pick()
    template, tag = s.rng.choice([t for t in UNARY if t[1] not in s.exclude])
    k = s.rng.choice([1, 2, 3] if "power_zero" in s.exclude else [0, 1, 2, 3])
    tags = [tag, "power_zero"] if tag == "power" and k == 0 else [tag]
    name = s.fresh()
    s.emit([f"{name} = " + template.format(u=u, k=k)], name, s.shapes[u], *tags)


def _broadcast(s: _State) -> None:
    a = s.pick()
    partners = [n for n, sh in s.shapes.items() if _broadcastable(s.shapes[a], sh)]
    b = s.rng.choice(partners)
    op = s.rng.choice(["+", "-", "*"])
    name = s.fresh()
    shape = np.broadcast_shapes(s.shapes[a], s.shapes[b])
    s.emit([f"{name} = {a} {op} 0.5 * {b}"], name, shape, "broadcast")


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _fits_into(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    return _broadcastable(small, big) and np.broadcast_shapes(small, big) == big


def _reduction(s: _State) -> None:
    u = s.pick()
    shape = s.shapes[u]
    fn = s.rng.choice(["sum", "mean", "max", "min", "prod"])
    tuple_axes = len(shape) == 2 and not (fn == "prod" and "prod_axes" in s.exclude)
    axis = s.rng.choice([None, *range(len(shape))] + ([(0, 1)] if tuple_axes else []))
    keepdims = s.rng.random() < 0.3
    args = [] if axis is None else [f"axis={axis}"]
    if keepdims:
        args.append("keepdims=True")
    text = ", ".join(args)
    call = f"np.{fn}({u}{', ' + text if text else ''})"
    if s.rng.random() < 0.3 and fn != "prod":
        call = f"{u}.{fn}({text})"
    name = s.fresh()
    tags = ["reduction", "prod_axes"] if fn == "prod" and isinstance(axis, tuple) else ["reduction"]
    s.emit([f"{name} = {call}"], name, _reduced(shape, axis, keepdims), *tags)


def _reduced(shape: tuple[int, ...], axis, keepdims: bool) -> tuple[int, ...]:
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _view(s: _State) -> None:
    u = s.pick(2) if s.rng.random() < 0.8 else s.pick()
    shape = s.shapes[u]
    size = int(np.prod(shape))
    options = [(f"{u}.reshape(-1)", (size,)), (f"np.reshape({u}, (1, {size}))", (1, size))]
    if len(shape) == 2:
        options += [(f"{u}.T", shape[::-1]), (f"np.transpose({u})", shape[::-1])]
        options.append((f"np.expand_dims({u}, 0)[0]", shape))
        if 1 in shape:
            options.append((f"np.squeeze({u})", tuple(n for n in shape if n != 1)))
    if size == 12:
        options.append((f"np.reshape({u}, (4, 3))", (4, 3)))
    text, new = s.rng.choice(options)
    name = s.fresh()
    s.emit([f"{name} = {text}"], name, new, "view")


def _index_read(s: _State) -> None:
    u = s.pick(2) if s.rng.random() < 0.7 else s.pick(1)
    shape = s.shapes[u]
    if not shape:
        return _unary(s)
    n = shape[0]
    options = [(f"{u}[{n - 1}]", shape[1:]), (f"{u}[::2]", ((n + 1) // 2, *shape[1:]))]
    options.append((f"{u}[[0, {n - 1}, 0]]", (3, *shape[1:])))
    if n >= 2:
        options.append((f"{u}[1:]", (n - 1, *shape[1:])))
    if len(shape) == 2:
        options.append((f"{u}[:, {shape[1] - 1}]", (n,)))
    text, new = s.rng.choice(options)
    name = s.fresh()
    s.emit([f"{name} = {text}"], name, new, "index_read")


def _index_write(s: _State) -> None:
    u = s.pick(2)
    shape = s.shapes[u]
    if len(shape) != 2:
        return _unary(s)
    name, src = s.fresh(), s.pick()
    start = s.rng.choice([f"np.zeros({shape})", f"{u}.copy()", f"{u} * 1.0"])
    row = f"np.tanh({src}).reshape(-1)[:{shape[1]}]" if s.shapes[src] else f"np.tanh({src})"
    lines = [f"{name} = {start}"]
    if int(np.prod(s.shapes[src])) < shape[1] and s.shapes[src]:
        row = f"np.sum({src}) * 0.5"
    lines.append(f"{name}[{s.rng.randrange(shape[0])}] = {row}")
    if s.rng.random() < 0.5:
        lines.append(f"{name}[:, {s.rng.randrange(shape[1])}] *= 0.5 + {u}[:, 0]")
    s.emit(lines, name, shape, "index_write")


def _inplace(s: _State) -> None:
    a = s.pick()
    partners = [n for n in s.shapes if _fits_into(s.shapes[n], s.shapes[a])]
    b = s.rng.choice(partners)
    name = s.fresh()
    op = s.rng.choice(["+=", "-=", "*="])
    s.emit([f"{name} = {a} + 0.0", f"{name} {op} np.sin({b})"], name, s.shapes[a], "inplace")


def _alias_inplace(s: _State) -> None:
    a = s.pick()
    name, alias = s.fresh(), s.fresh()
    lines = [f"{name} = {a} * 1.0", f"{alias} = {name}", f"{alias} += 1.0"]
    s.emit(lines, name, s.shapes[a], "alias_inplace")


#: views of a matrix with its elements moved, and conversions that are the array itself
SAME_SHAPE_VIEWS = (
    "np.flip({b})",
    "np.flip({b}, 1)",
    "np.fliplr({b})",
    "np.flipud({b})",
    "np.rot90({b})",
    "np.rot90({b}, 2)",
    "np.rot90({b}, k=-1, axes=(0, 1))",
    "np.asarray({b})",
    "np.array({b}, copy=None)",
)
#: those of them with the matrix's axes swapped
TURNED_VIEWS = ("np.rot90({b})", "np.rot90({b}, k=-1, axes=(0, 1))")


def _view_inplace(s: _State) -> None:
    a = s.pick(2)
    if len(s.shapes[a]) != 2:
        return _alias_inplace(s)
    base, view = s.fresh(), s.fresh()
    maker = s.rng.choice(["np.transpose({b})", "np.reshape({b}, (-1,))", "{b}.reshape(-1)"])
    shape = s.shapes[a]
    # some programs take a flip, a rotation or a conversion numpy answers with the array
    # itself instead (drawn from the generator's state, not from its stream, so that the
    # seeded stream stays what it was)
    other = unstreamed_draw(s, 2 * len(SAME_SHAPE_VIEWS))
    if other < len(SAME_SHAPE_VIEWS):
        maker = SAME_SHAPE_VIEWS[other]
    if maker in SAME_SHAPE_VIEWS:
        new = shape[::-1] if maker in TURNED_VIEWS else shape
    else:
        new = shape[::-1] if "transpose" in maker else (int(np.prod(shape)),)
    op = s.rng.choice([" *= 2.0", " /= 2.0", " += 1.0", "[-1] *= 0.5", "[:, 0] = 1.5"])
    lines = [f"{base} = {a} + 0.0", f"{view} = " + maker.format(b=base)]
    # half the programs write through the view instead, and read the base later (drawn
    # from the text, so that the seeded stream stays what it was)
    if zlib.crc32("".join(lines + [op]).encode()) % 2:
        s.emit([*lines, f"{base}{op}"], view, new, "view_inplace")
    else:
        op = "[0] = 1.5" if len(new) == 1 and op.startswith("[:") else op
        s.emit([*lines, f"{view}{op}"], base, shape, "view_inplace")


def _if(s: _State) -> None:
    u, name = s.pick(), s.fresh()
    cond = s.rng.choice([f"np.sum({u}) > 0.0", f"np.max({u}) > 0.5", f"{s.pick()}.mean() < 0.0"])
    lines = [f"if {cond}:", f"    {name} = np.sin({u}) * 2.0", "else:", f"    {name} = {u} * {u}"]
    s.emit(lines, name, s.shapes[u], "if")


def _for(s: _State) -> None:
    u, name = s.pick(), s.fresh()
    n = s.rng.choice([0, 1, 3])
    lines = [
        f"{name} = {u} * 1.0",
        f"for i in range({n}):",
        f"    {name} = {name} * 0.5 + np.sin({name})",
    ]
    s.emit(lines, name, s.shapes[u], "for", *(["zero_trip"] if n == 0 else []))


def _while(s: _State) -> None:
    u, name, i = s.pick(), s.fresh(), s.fresh()
    n = s.rng.choice([0, 2])
    lines = [
        f"{name} = {u} + 0.0",
        f"{i} = 0",
        f"while {i} < {n}:",
        f"    {name} = np.tanh({name}) + 0.5 * {u}",
        f"    {i} += 1",
    ]
    chosen = zlib.crc32("".join(lines).encode())  # not the rng: other draws stay the same
    if n and chosen % 3:  # the values decide how many iterations run (1 to 4): a value
        limit = (1.0, 1.6, 2.5, 4.0)[chosen % 4]  # growing until it passes a limit
        lines[2] = f"while {i} < 1 or {i} < 4 and np.mean({name} * {name}) < {limit}:"
        lines[3] = f"    {name} = {name} * 1.4 + 0.1 * np.sin({u})"
    s.emit(lines, name, s.shapes[u], "while", *(["zero_trip"] if n == 0 else []))


def _break_continue(s: _State) -> None:
    u, name = s.pick(), s.fresh()
    skip, limit = s.rng.randrange(4), round(s.rng.uniform(-1.0, 3.0), 2)
    lines = [
        f"{name} = {u} * 1.0",
        "for j in range(4):",
        f"    if j == {skip}:",
        "        continue",
        f"    if np.sum({name}) > {limit}:",
        "        break",
        f"    {name} = {name} + 0.3 * np.sin({name})",
    ]
    s.emit(lines, name, s.shapes[u], "break_continue")


def _helper(s: _State) -> None:
    index = len(s.helpers) + 1
    body = s.rng.choice(["np.tanh(a) * b", "a * a + np.sin(b)", "np.maximum(a, b) * 0.5"])
    s.helpers.append(f"def h{index}(a, b):\n    c = {body}\n    return c")
    a = s.pick()
    b = s.rng.choice([n for n in s.shapes if s.shapes[n] == s.shapes[a]] + ["0.5"])
    name = s.fresh()
    s.emit([f"{name} = h{index}({a}, {b})"], name, s.shapes[a], "helper")


#: Module constants named like names the generated code uses itself (its helpers,
#: its ``memory`` parameter): the compiled code must read the user's value; and
#: variables of ``f`` with such names.
GLOBAL_NAMES = ("size", "like", "scatter", "negated", "memory", "stack")


#: Variables of ``f`` named like the generated code's own names (never module
#: constants too: a function that assigns a name reads it as its own).
LOCAL_NAMES = ("at", "overwritten", "unstack", "xp")


def _global_name(s: _State) -> None:
    u, name = s.pick(), s.fresh()
    if s.rng.random() < 0.5:
        local = s.rng.choice(LOCAL_NAMES)
        lines = [f"{local} = np.cos({u}) * {u}", f"{name} = {local} + {local} * {u}"]
        s.emit(lines, name, s.shapes[u], "global_name")
        return
    constant = s.rng.choice(GLOBAL_NAMES)
    definition = f"{constant} = {s.rng.choice(['0.7', '1.5', '-0.4'])}"
    if not any(h.startswith(f"{constant} = ") for h in s.helpers):
        s.helpers.append(definition)
    s.emit([f"{name} = {u} * {constant}"], name, s.shapes[u], "global_name")


def _list_stack(s: _State) -> None:
    u = s.pick(2)
    shape = s.shapes[u]
    if len(shape) != 2:
        return _unary(s)
    name, parts = s.fresh(), s.fresh()
    lines = [
        f"{parts} = []",
        f"for k in range({shape[0]}):",
        f"    {parts}.append(np.sin({u}[k]) * {u}[k])",
        f"{name} = np.stack({parts})",
    ]
    s.emit(lines, name, shape, "list_stack")


def _nested_comprehension(s: _State) -> None:
    """A helper defined in ``f`` (a lambda or a def) called in a comprehension over the
    rows, whose variable shadows a name of ``f`` read afterwards (Python 3 scoping: the
    comprehension's variable is its own)."""
    u = s.pick(2)
    shape = s.shapes[u]
    if len(shape) != 2:
        return _unary(s)
    name, row, act = s.fresh(), s.fresh(), f"act{s.count}"
    definition = s.rng.choice(
        [[f"{act} = lambda r: np.tanh(r) * r"], [f"def {act}(r):", "    return np.sin(r) + r * r"]]
    )
    call = s.rng.choice(
        [f"np.stack([{act}({row}) for {row} in {u}])", f"sum({act}({row}) for {row} in {u})"]
    )
    lines = [f"{row} = {u}[0] * 2.0", *definition, f"{name} = {call} + 0.5 * {row}"]
    s.emit(lines, name, shape if call.startswith("np.stack") else shape[1:], "nested_comprehension")


def _cast(s: _State) -> None:
    u, name = s.pick(), s.fresh()
    casts = ["np.floor({u})", "({u} > 0).astype(float)"]
    if "cast_int" not in s.exclude:
        casts.append("{u}.astype(int)")
    cast = s.rng.choice(casts)
    tags = ["cast", "cast_int"] if "astype(int)" in cast else ["cast"]
    s.emit([f"{name} = {u} * " + cast.format(u=u)], name, s.shapes[u], *tags)


def _or_unary(maker: Callable[[_State], bool]) -> Callable[[_State], None]:
    """An idiom's maker, writing an elementwise block where the idiom does not fit."""

    def make(s: _State) -> None:
        if not maker(s):
            _unary(s)

    return make


MAKERS = {
    "broadcast": _broadcast,
    "elementwise": _unary,
    "reduction": _reduction,
    "view": _view,
    "index_read": _index_read,
    "index_write": _index_write,
    "inplace": _inplace,
    "alias_inplace": _alias_inplace,
    "view_inplace": _view_inplace,
    "if": _if,
    "for": _for,
    "while": _while,
    "break_continue": _break_continue,
    "helper": _helper,
    "list_stack": _list_stack,
    "cast": _cast,
    "global_name": _global_name,
    "nested_comprehension": _nested_comprehension,
    **{construct: _or_unary(maker) for construct, maker in IDIOMS.items()},
    **{construct: _or_unary(maker) for construct, maker in MORE_IDIOMS.items()},
    **{construct: _or_unary(maker) for construct, maker in PARAM_IDIOMS.items()},
    **{construct: _or_unary(maker) for construct, maker in INDEX_IDIOMS.items()},
    **{construct: _or_unary(maker) for construct, maker in BUFFER_IDIOMS.items()},
    **{construct: _or_unary(maker) for construct, maker in ASKED_INDEX_IDIOMS.items()},
}
#: constructs drawn only when a campaign asks for them (--only): the others' seeds stay
ASKED_ONLY = frozenset(BUFFER_IDIOMS) | frozenset(ASKED_INDEX_IDIOMS)


def generate(
    seed: int, exclude: frozenset[str] = frozenset(), require: frozenset[str] = frozenset()
) -> Program:
    """The program of ``seed``: 2 to 6 blocks, constructs in ``exclude`` left out.

    Excluding ``kink`` also turns off the planted exact zeros and ties; excluding
    ``zero_trip`` makes every loop run at least once. The program's form (a plain
    ``def f(x, w)``, an object, state changed between calls: :mod:`fuzz.forms`;
    methods, functions as values, static structure, ``*args``: :mod:`fuzz.forms_calls`) is
    drawn from a generator of its own, so that the blocks stay those of the seed.
    ``require``: the program uses one of these constructs (its first block is written
    by one of their makers, or its form is one of these families).

    >>> "object_method" in generate(3, require=frozenset({"object_method"})).constructs
    True
    """
    rng = random.Random(seed)
    state = _State(rng, exclude, {"x": (3, 4), "w": (4,)})
    makers = [
        m for c, m in MAKERS.items() if c not in exclude and (c not in ASKED_ONLY or c in require)
    ]
    form_rng = random.Random(f"form {seed}")
    first = sorted(require & MAKERS.keys() - exclude)
    form = draw_form(form_rng, exclude, require)
    if form is None:  # a generator of its own: the older families' seeds stay as they were
        form = draw_call_form(random.Random(f"calls {seed}"), exclude, require)
    if form is None and (seed in NESTED_SEEDS or "nested_grad" in require):
        # and one of its own for derivatives inside the code, in the seeds it came with:
        # the other seeds keep their programs (the fixes and notes that cite them)
        form = draw_nested_form(random.Random(f"nested {seed}"), exclude, require)
    for i in range(rng.randint(2, 6)):
        maker = MAKERS[form_rng.choice(first)] if i == 0 and first and not form else None
        (maker or rng.choice(makers))(state)
    result = _result(state)
    if "zero_trip" in exclude and "zero_trip" in state.used:
        return generate(seed + 10**9, exclude, require)  # a different, honest draw
    if state.used & exclude:
        return generate(seed + 10**9, exclude, require)
    kink = "kink" not in exclude and rng.random() < 0.3
    program = Program(seed, state.helpers, state.blocks, state.tags, result, kink, form)
    if require and not program.constructs & require:
        return generate(seed + 10**9, exclude, require)
    return program


def _result(s: _State) -> str:
    names = [n for n in s.shapes if n not in ("x", "w")]
    chosen = s.rng.sample(names, min(2, len(names)))
    terms = [f"np.sum({n} * {n})" if s.rng.random() < 0.5 else f"np.sum({n})" for n in chosen]
    return " + ".join(terms + ["0.1 * np.sum(x * x) + np.sum(w)"])
