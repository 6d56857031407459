"""More generator blocks for idioms people write (part of the generator, after
:mod:`fuzz.idioms`).

Custom ops inside programs (SReLU/PReLU from :mod:`autodiff_tutor.ops`, and
``DifferentiableFunction`` subclasses written in the program with a hand-written
backward: one input or two, inputs, outputs or memory values saved, or none and
``dy`` itself returned for both inputs), ``np.linalg.norm``
with an axis, ``np.cumsum``/``np.cumprod``, ``u.reshape(-1, k)`` then a reduction,
matrices from ``np.outer``, ``np.einsum`` with two operands, ``while`` loops with
``break`` and ``continue`` in the middle, helpers with default arguments (called with
keywords, nested in ``f`` reading its names), dicts of parameters, and writes into
arrays whose memory layout decides whether a reshape is a view.

Each maker takes the generator's state and returns ``False`` where it does not fit.

>>> import random
>>> from fuzz.generator import _State
>>> state = _State(random.Random(1), frozenset(), {"x": (3, 4), "w": (4,)})
>>> reshape_reduce(state)
True
>>> ".reshape(" in state.blocks[0] or "np.reshape(" in state.blocks[0]
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fuzz.idioms import _fits_into

#: The module text that defines each custom op the programs call (an import, or a
#: ``DifferentiableFunction`` subclass with a hand-written backward), by its name.
OP_DEFINITIONS = {
    "PRELU": 'from autodiff_tutor.ops import PReLUFunction\n\nPRELU = PReLUFunction("BC")',
    "SRELU": 'from autodiff_tutor.ops import SReLUFunction\n\nSRELU = SReLUFunction("BC")',
    "SOFTSIGN": """import autodiff_tutor as ad


class Softsign(ad.DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x / (1.0 + np.abs(x))

    def backward(self, dy, compute_gradients, x):
        return dy / (1.0 + np.abs(x)) ** 2


SOFTSIGN = Softsign()""",
    "BUMP": """import autodiff_tutor as ad


class Bump(ad.DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True, save_outputs_for_backward=True)

    def forward(self, x):
        return np.exp(-x * x)

    def backward(self, dy, compute_gradients, x, y):
        return -2.0 * x * y * dy


BUMP = Bump()""",
    "GATE": """import autodiff_tutor as ad


class Gate(ad.DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True, num_memory_values=1)

    def forward(self, a, c):
        t = np.tanh(c)
        return a * t, t

    def backward(self, dy, compute_gradients, a, c, t):
        da = dy * t if compute_gradients[0] else None
        dc = dy * a * (1.0 - t * t) if compute_gradients[1] else None
        return da, dc


GATE = Gate()""",
    "PLUS": """import autodiff_tutor as ad


class Plus(ad.DifferentiableFunction):
    def forward(self, a, b):
        return a + b

    def backward(self, dy, compute_gradients):
        return dy, dy


PLUS = Plus()""",
}


def custom_op(s: Any) -> bool:
    """A custom op called on operands of the program: PReLU/SReLU on a matrix with
    channel parameters made from a vector (or constants), ops written in the program
    (one input, or two of one shape; a backward that returns ``dy`` itself for both
    inputs), once or in a loop."""
    u = s.pick()
    shape = s.shapes[u]
    name = s.fresh()
    ops = ["SOFTSIGN", "BUMP", "GATE", "PLUS"] + (["PRELU", "SRELU"] if len(shape) == 2 else [])
    op = s.rng.choice(ops)
    if OP_DEFINITIONS[op] not in s.helpers:
        s.helpers.append(OP_DEFINITIONS[op])
    channel = _channel_parameter(s, shape[-1]) if len(shape) == 2 else ""
    if op == "PRELU":
        call = f"PRELU({{z}}, np.abs({channel}) * 0.3)"
    elif op == "SRELU":
        low, slope = f"-np.abs({channel}) - 0.2", s.rng.choice(["0.1", f"0.2 * {channel}"])
        high = s.rng.choice([f"np.abs({channel}) + 0.3", f"np.full((1, {shape[-1]}), 0.4)"])
        call = f"SRELU({{z}}, {low}, {{slope}} + 0.0 * {channel}, {high}, 0.5 + 0.0 * {channel})"
        call = call.replace("{slope}", slope)
    elif op in ("GATE", "PLUS"):
        partners = [n for n, sh in s.shapes.items() if sh == shape]
        call = f"{op}({{z}}, {s.rng.choice(partners)} * 0.7)"
    else:
        call = f"{op}({{z}})"
    if s.rng.random() < 0.3:  # in a loop, the op's output fed back
        lines = [f"{name} = {u} * 1.0", "for i in range(2):", "    " + _set(name, call, name)]
        s.emit(lines, name, shape, "custom_op", "for")
    else:
        s.emit([_set(name, call, u)], name, shape, "custom_op")
    return True


def _set(name: str, call: str, operand: str) -> str:
    return f"{name} = " + call.replace("{z}", operand)


def _channel_parameter(s: Any, channels: int) -> str:
    """A ``(1, channels)`` parameter: a vector of the program reshaped, or a constant."""
    vectors = [n for n, sh in s.shapes.items() if sh == (channels,)]
    if vectors and s.rng.random() < 0.7:
        return f"{s.rng.choice(vectors)}.reshape(1, -1)"
    return f"np.full((1, {channels}), 0.6)"


def norm_cumulative(s: Any) -> bool:
    """``np.linalg.norm`` (all, an axis or both, ``keepdims``, ``ord=1``/``np.inf``/
    ``'fro'``), ``np.cumsum`` and ``np.cumprod`` (an axis, negative too, or flattened;
    function, method, or ``np.add``/``np.multiply.accumulate``)."""
    u = s.pick()
    shape = s.shapes[u]
    if not shape:
        return False
    k = s.rng.randrange(len(shape))
    reduced = tuple(n for i, n in enumerate(shape) if i != k)
    kept = tuple(1 if i == k else n for i, n in enumerate(shape))
    size = int(np.prod(shape))
    options = [
        (f"np.linalg.norm({u})", ()),
        (f"np.linalg.norm({u}, axis={k})", reduced),
        (f"np.linalg.norm({u}, axis={k}, keepdims=True)", kept),
        (f"np.cumsum({u}, axis={k})", shape),
        (f"{u}.cumsum(axis={k})", shape),
        (f"np.cumsum({u})", (size,)),
        (f"np.cumprod({u}, axis={k})", shape),
        (f"np.cumprod(np.tanh({u}) + 1.0, axis={k})", shape),
        (f"{u}.cumprod()", (size,)),
    ]
    options += [
        (f"np.multiply.accumulate({u}, axis={k})", shape),
        (f"np.add.accumulate({u}, axis={k - len(shape)})", shape),
        (f"np.cumsum({u}, axis={k - len(shape)})", shape),
    ]
    if len(shape) == 1:
        options += [(f"np.linalg.norm({u}, ord=1)", ()), (f"np.linalg.norm({u}, ord=np.inf)", ())]
    if len(shape) == 2:
        options += [(f"np.linalg.norm({u}, axis=(0, 1))", ()), (f"np.linalg.norm({u}, 'fro')", ())]
    text, new = s.rng.choice(options)
    name = s.fresh()
    s.emit([f"{name} = {text}"], name, new, "norm_cumulative")
    return True


def reshape_reduce(s: Any) -> bool:
    """``u.reshape(-1, k)`` (or ``(k, -1)``) then a reduction over one of the axes."""
    u = s.pick()
    size = int(np.prod(s.shapes[u]))
    ks = [k for k in (2, 3, 4, 6) if size % k == 0 and k < size]
    if not ks:
        return False
    k = s.rng.choice(ks)
    rows = size // k
    first = s.rng.random() < 0.7
    made = f"{u}.reshape(-1, {k})" if first else f"np.reshape({u}, ({k}, -1))"
    shape = (rows, k) if first else (k, rows)
    fn = s.rng.choice(["sum", "mean", "max", "min", "std", "var"])
    axis = s.rng.choice([0, 1, -1])
    new = tuple(n for i, n in enumerate(shape) if i != axis % 2)
    call = s.rng.choice([f"{made}.{fn}(axis={axis})", f"np.{fn}({made}, axis={axis})"])
    name = s.fresh()
    s.emit([f"{name} = {call}"], name, new, "reshape_reduce")
    return True


def outer_matrix(s: Any) -> bool:
    """A matrix from ``np.outer`` of two vectors, then used: reduced, multiplied with
    a vector, its diagonal or trace (square: the outer of a vector with itself)."""
    vectors = [n for n, sh in s.shapes.items() if len(sh) == 1]
    matrices = [n for n, sh in s.shapes.items() if len(sh) == 2]
    if not vectors:
        return False
    a = s.rng.choice(vectors)
    b = s.rng.choice(vectors + [f"{m}[0]" for m in matrices])
    n = s.shapes[a][0]
    m = s.shapes[b.split("[")[0]][-1]
    name, outer = s.fresh(), s.fresh()
    uses = [
        (f"{name} = np.sum({outer}, axis=1) + np.tanh({outer}).mean(axis=0).sum()", (n,)),
        (f"{name} = np.tanh({outer})", (n, m)),
    ]
    if n == m:
        uses += [
            (f"{name} = {outer} @ {b} + np.trace({outer})", (n,)),
            (f"{name} = np.diag({outer}) * {a}", (n,)),
            (f"{name} = {outer} - np.diag({a} * {b})", (n, n)),
        ]
    text, new = s.rng.choice(uses)
    s.emit([f"{outer} = np.outer({a}, {b})", text], name, new, "outer_matrix")
    return True


def einsum_two(s: Any) -> bool:
    """``np.einsum`` with two operands: traces of products, contractions, outers."""
    options = []
    for u, su in s.shapes.items():
        for v, sv in s.shapes.items():
            if len(su) == 2 and su == sv:
                options += [(f"'ij,ij->i', {u}, {v}", su[:1]), (f"'ij,ij->', {u}, {v}", ())]
                options += [(f"'ij,kj->ik', {u}, {v}", (su[0], su[0]))]
                options += [(f"'ij,ik->jk', {u}, {v}", (su[1], su[1]))]
            if len(su) == 2 and sv == su[:1]:
                options.append((f"'ij,i->j', {u}, {v}", su[1:]))
            if len(su) == 1 and su == sv:
                options += [(f"'i,i->', {u}, {v}", ()), (f"'i,i->i', {u}, {v}", su)]
            if len(su) == 1 and len(sv) == 1:
                options.append((f"'i,j->ij', {u}, {v}", (*su, *sv)))
    if not options:
        return False
    text, new = s.rng.choice(options)
    name = s.fresh()
    s.emit([f"{name} = np.einsum({text})"], name, new, "einsum_two")
    return True


def while_continue(s: Any) -> bool:
    """A bounded ``while`` loop whose body counts first, then leaves by ``break`` on a
    value, skips an update by ``continue``, and updates after both."""
    u = s.pick()
    name, k = s.fresh(), s.fresh()
    limit, skip = round(s.rng.uniform(-1.0, 6.0), 2), s.rng.randrange(1, 4)
    lines = [
        f"{name} = {u} * 1.0",
        f"{k} = 0",
        f"while {k} < 5:",
        f"    {k} += 1",
        f"    if np.max({name}) > {limit}:",
        "        break",
        f"    if {k} == {skip}:",
        "        continue",
        f"    {name} = {name} * 0.8 + np.sin({name})",
    ]
    s.emit(lines, name, s.shapes[u], "while_continue")
    return True


def helper_defaults(s: Any) -> bool:
    """Helpers with default arguments, called with and without keywords: one of the
    module (a ``None`` default filled in the body), or one nested in ``f`` that reads
    a name of ``f``."""
    u = s.pick()
    shape = s.shapes[u]
    partners = [n for n, sh in s.shapes.items() if sh == shape]
    v = s.rng.choice(partners)
    name = s.fresh()
    if s.rng.random() < 0.5:
        index = len(s.helpers) + 1
        s.helpers.append(
            f"def g{index}(a, scale=0.5, shift=None):\n"
            "    if shift is None:\n"
            "        shift = 0.1\n"
            "    return np.tanh(a * scale) + shift"
        )
        call = s.rng.choice(
            [f"g{index}({u})", f"g{index}({u}, 2.0)", f"g{index}({u}, shift={v})"]
            + [f"g{index}({u}, scale=1.5, shift={v} * 0.5)", f"g{index}(shift={v}, a={u})"]
        )
        s.emit([f"{name} = {call} + g{index}({v}, scale=-1.0)"], name, shape, "helper_defaults")
        return True
    inner = f"inner{s.count}"
    power = s.rng.choice([2, 3])
    lines = [
        f"def {inner}(a, k={power}, c=0.5):",
        f"    return c * a ** k + np.sin({v})",
        f"{name} = {inner}({u}) + {inner}({u}, k=1) + {inner}({u}, c={v})",
    ]
    s.emit(lines, name, shape, "helper_defaults")
    return True


def param_dict(s: Any) -> bool:
    """A dict of parameters: read by key, by a helper taking the dict (or one passing
    it on to another), summed over its keys or items, or updated by key; or a list of
    pairs, to a helper that loops over it."""
    u = s.pick()
    shape = s.shapes[u]
    fits = [n for n, sh in s.shapes.items() if _fits_into(sh, shape)]
    b = s.rng.choice(fits)
    name, p = s.fresh(), s.fresh()
    lines = [f'{p} = {{"scale": {u} * 0.5, "bias": {b}}}']
    tags = ["param_dict"]
    variant = s.rng.randrange(7)
    if variant == 0:
        lines.append(f'{name} = np.tanh({u} * {p}["scale"] + {p}["bias"])')
    elif variant == 1:
        index = len(s.helpers) + 1
        s.helpers.append(
            f"def layer{index}(params, z):\n"
            '    return np.tanh(z * params["scale"] + params["bias"])'
        )
        lines.append(f"{name} = layer{index}({p}, {u}) + layer{index}({p}, 0.5 * {u})")
    elif variant == 2:
        lines += [f"{name} = {u} * 0.0", f"for key in {p}:", f"    {name} = {name} + {p}[key]"]
        tags.append("for")
    elif variant == 3:
        lines += [
            f"{name} = {u} + 0.0",
            f"for key, value in {p}.items():",
            f"    {name} = {name} * np.cos(value)",
        ]
        tags.append("for")
    elif variant == 4:
        lines += [f'{p}["bias"] = {p}["bias"] * 2.0 + {p}.get("shift", 0.5)']
        lines.append(f'{name} = {p}["scale"] * np.sin({p}["bias"])')
    elif variant == 5:  # a list of pairs, to a helper that loops over it
        index = len(s.helpers) + 1
        s.helpers.append(
            f"def stack{index}(pairs, z):\n"
            "    for a, c in pairs:\n"
            "        z = np.tanh(z * a + c)\n"
            "    return z"
        )
        lines = [f"{p} = [({u} * 0.5, {b}), (np.cos({u}), 0.1 * {b})]"]
        lines.append(f"{name} = stack{index}({p}, {u})")
        tags.append("for")
    else:  # the dict through two helpers
        index = len(s.helpers) + 1
        s.helpers.append(
            f"def layer{index}(params, z):\n"
            '    return np.tanh(z * params["scale"] + params["bias"])\n\n\n'
            f"def model{index}(params, z):\n"
            f'    return layer{index}(params, z) * 2.0 + params["bias"]'
        )
        lines.append(f"{name} = model{index}({p}, {u})")
    s.emit(lines, name, shape, *tags)
    return True


def layout_write(s: Any) -> bool:
    """An array in Fortran's memory layout (made from a transpose: numpy keeps its
    layout; or C's, by ``.copy()``), written into (directly or through a view), then
    reshaped (a copy of the first, a view of the second) and written into again; then
    the reshaped array is read: a write through a view must keep the layout, which
    decides whether the reshape is a view or, as numpy's of the first, a copy."""
    u = s.pick(2)
    shape = s.shapes[u]
    if len(shape) != 2:
        return False
    name, t, flat = s.fresh(), s.fresh(), s.fresh()
    make = s.rng.choice([f"{u}.T + 0.0", f"np.sin({u}.T)", f"{u}.T.copy()", f"np.copy({u}.T)"])
    first = s.rng.choice([f"{t}[1:] *= 0.5", f"{t} += 1.0"])
    if s.rng.random() < 0.6:  # through a view of the array
        first = s.rng.choice([f"{t}_rows = {t}[1:]", f"{t}_rows = {t}.T"]) + f"\n{t}_rows *= 0.5"
    write = s.rng.choice([f"{t}[0] = 1.5", f"{t} *= 2.0", f"{t}[-1] *= 0.5"])
    lines = [f"{t} = {make}", *first.split("\n"), f"{flat} = {t}.reshape(-1)", write]
    lines.append(f"{name} = {flat} * np.sum({t})")
    s.emit(lines, name, (shape[0] * shape[1],), "layout_write")
    return True


#: construct -> its maker, in a fixed order (the seeded stream depends on it)
MORE_IDIOMS = {
    "custom_op": custom_op,
    "norm_cumulative": norm_cumulative,
    "reshape_reduce": reshape_reduce,
    "outer_matrix": outer_matrix,
    "einsum_two": einsum_two,
    "while_continue": while_continue,
    "helper_defaults": helper_defaults,
    "param_dict": param_dict,
    "layout_write": layout_write,
}
