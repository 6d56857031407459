"""Lowering a specialized pair of matrices into loops over rows between matrix products.

Where a pair's values have two dimensions (a layer's ``X @ W1 + b1``, a softmax along
``axis=1``), the kernel keeps each matrix product numpy's own (``X @ W1``: its BLAS, the one a
hand-written program calls) and writes the work between products as loops over rows,
functions numba compiles: every value of one statement is an
element ``[i, j]`` (a row vector ``b1`` is ``b1[j]``, a ``keepdims`` column ``m`` is
``m[i, 0]``), a row's reduction (``.sum(axis=1, keepdims=True)``, ``.max(...)``) an
accumulator in the loop over the row's elements, a column's reduction (``axis=0``) a
vector every row adds into, a whole sum one number. Consecutive statements over the
rows of one value share one ``for i in range(rows)`` loop as long as each reads the
others at its own row; a value read once is an expression inside its reader, never an
array; a number per row is computed once per row, outside the loop over its elements.

What it cannot read so (an index, a helper it does not know, a value of three
dimensions) raises :class:`NotLowered` with the reason: the numpy pair runs.

>>> import ast
>>> import numpy as np
>>> forward = ast.parse("h = np.tanh(X @ W)\\nout = h.sum()").body
>>> backward = ast.parse("d_W = X.T @ (1 - h * h)").body
>>> shapes = {"X": (4, 3), "W": (3, 2)}
>>> names = ["W", "X"], "out", "d_out", ["d_W"]
>>> kernel = lower_matrices(forward, backward, *names, shapes, {"np": np})
>>> print(kernel.body_text())
t_2 = np.empty((4, 2))
t = X @ W
h = t
out = rows_1(h, t, t_2)
d_W = X.T @ t_2
>>> [(name, params, returned, lines)] = kernel.loops  # what numba compiles
>>> print("\\n".join("    " * depth + code for depth, code, _ in lines))
out = 0.0
for i in range(4):
    for j in range(2):
        h[i, j] = np.tanh(t[i, j])
        out += h[i, j]
        t_2[i, j] = 1 - h[i, j] * h[i, j]
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff_tutor.compiler.code import origin_of
from autodiff_tutor.compiler.fused.scalarize import (
    BINARY,
    COMPARE,
    ELEMENTWISE,
    PRECEDENCE,
    WORD,
    Kernel,
    Lowering,
    NotLowered,
)

_ELEMENTWISE = {**ELEMENTWISE, np.sign: "np.sign"}
#: functions numpy computes with SIMD instructions (its own, or SVML's) several times
#: faster than the scalar call a loop compiled by numba makes: on arrays of
#: ``VECTORIZED_FROM`` elements or more, numpy computes them (``np.tanh(t, out=t)``),
#: and the loops the arithmetic around them
_VECTORIZED = {np.exp, np.log, np.tanh, np.sin, np.cos, np.tan, np.expm1, np.log1p}
_VECTORIZED |= {np.sinh, np.cosh, np.arctan}
VECTORIZED_FROM = 1024
_REDUCTIONS = {np.sum: "sum", np.max: "max", np.amax: "max", np.min: "min", np.amin: "min"}
#: the kinds of node that compute (not read) an element
_COMPUTED = ("op", "neg", "call", "cmp", "where", "fill")
#: the kinds of node that read an element of an array: as it is, transposed, or a
#: vector read as a column (``[:, None]``)
_READS = ("def", "tdef", "cdef")
#: what a reduction starts from, and how it takes an element in
_START = {"sum": "0.0", "max": "-np.inf", "min": "np.inf"}

# A node is a tuple: ("def", d) an element of the value ``d`` (a :class:`Def`);
# ("tdef", d) an element of its transpose; ("cdef", d) of a vector read as a column;
# ("num", text) one number; ("fill", shape, a) a number ``a`` broadcast to ``shape``;
# ("op", op, a, b), ("neg", a), ("call", function, args...), ("cmp", op, a, b),
# ("where", c, a, b).


@dataclass(eq=False)
class Def:
    """A value of the program: an argument, a matrix product, a reduction or an
    elementwise expression, with its shape and the statement it comes from."""

    name: str
    kind: str  # "arg", "matmul", "reduce", "elementwise"
    shape: tuple[int, ...]
    expr: Any = None
    origin: str = ""
    readers: list[tuple[Def, bool]] = field(default_factory=list)  # (reader, transposed)
    returned: bool = False
    stored: bool = True


@dataclass
class _Region:
    """One loop over rows: lines before it, its body (depth 0 is inside the loop),
    lines after it; the values it makes row by row and those complete only after it."""

    rows: int
    before: list[tuple[int, str, str]] = field(default_factory=list)
    inits: list[tuple[int, str, str]] = field(default_factory=list)
    body: list[tuple[int, str, str]] = field(default_factory=list)
    after: list[tuple[int, str, str]] = field(default_factory=list)
    by_row: set[int] = field(default_factory=set)
    unfinished: set[int] = field(default_factory=set)
    columns: _Columns | None = None

    def end_columns(self) -> None:
        """Close the open loop over a row's elements: what follows it comes now."""
        if self.columns is not None:
            self.body.extend(self.columns.after)
            self.columns = None


@dataclass
class _Columns:
    """The open loop over a row's ``count`` elements: where its ``for j`` line is, the
    lines that come after it (a row's reduction stored), the reductions it finishes."""

    count: int
    at: int
    after: list[tuple[int, str, str]] = field(default_factory=list)
    finishes: set[int] = field(default_factory=set)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    try:
        shape = np.broadcast_shapes(a, b)
    except ValueError:
        raise NotLowered(f"shapes {a} and {b} do not broadcast") from None
    if len(shape) > 2:
        raise NotLowered(f"a value of shape {shape}")
    return shape


def shape_of(node: tuple) -> tuple[int, ...]:
    """The shape of the value a node stands for.

    >>> shape_of(("op", "+", ("def", Def("a", "arg", (3, 2))), ("num", "1.0")))
    (3, 2)
    """
    kind = node[0]
    if kind == "num":
        return ()
    if kind == "def":
        return node[1].shape
    if kind == "tdef":
        return node[1].shape[::-1]
    if kind == "cdef":
        return (node[1].shape[0], 1)
    if kind == "fill":
        return node[1]
    if kind in ("neg",):
        return shape_of(node[1])
    if kind in ("op", "cmp"):
        return _broadcast(shape_of(node[2]), shape_of(node[3]))
    if kind == "call":
        shape: tuple[int, ...] = ()
        for a in node[2:]:
            shape = _broadcast(shape, shape_of(a))
        return shape
    if kind == "where":
        return _broadcast(_broadcast(shape_of(node[1]), shape_of(node[2])), shape_of(node[3]))
    raise NotLowered(f"the node {kind}")


def _reads(node: tuple):
    """The stored values ``node`` reads, through the values written inside it."""
    for leaf in _leaves(node):
        if leaf[1].stored:
            yield leaf
        else:
            yield from _reads(leaf[1].expr)


def _leaves(node: tuple):
    if node[0] in _READS:
        yield node
    elif node[0] == "fill":
        yield from _leaves(node[2])
    elif node[0] != "num":
        for part in node[1:]:
            if isinstance(part, tuple):
                yield from _leaves(part)


class _Matrices(Lowering):
    def __init__(self, params: list[str], shapes: dict[str, Any], scope: dict[str, Any]):
        self.scope = scope
        self.params = params
        self.env: dict[str, Any] = {}
        self.taken: set[str] = {"i", "j", "np", "math", *params}
        self.defs: list[Def] = []
        self.origin = ""
        for p in params:
            if p in ("i", "j", "np", "math"):
                raise NotLowered(f"a parameter named {p}, a name of the kernel's own")
            shape = shapes[p]
            if shape is None or len(shape) == 0:
                self.env[p] = ("num", p)
            elif len(shape) <= 2:
                self.env[p] = ("def", Def(p, "arg", tuple(shape)))
            else:
                raise NotLowered(f"{p} has {len(shape)} dimensions")

    # -- reading the program ---------------------------------------------------------

    def run(self, forward, backward, output, seed, gradients) -> Kernel:
        self.env[seed] = ("num", "1.0")
        for statement in [*forward, *backward]:
            self.origin = origin_of(statement) or self.origin
            self.statement(statement)
        out = self.env.get(output)
        if out is None or out[0] != "def" or out[1].shape != ():
            raise NotLowered("the output is not one number the kernel computes")
        out[1].returned = True
        grads = []
        for g in gradients:
            value = self.env.get(g)
            if value is not None and value[0] in _COMPUTED:
                value = ("def", self.define(g, "elementwise", shape_of(value), value))
            if value is None or value[0] not in ("def", "tdef") or value[1].shape == ():
                raise NotLowered(f"the gradient {g} is not an array")
            value[1].returned = True
            grads.append(value)
        for d in self.defs:
            self.count_reads(d)
        for d in self.defs:
            d.stored = self.is_stored(d)
        lines = self.emit()
        names: list[str] = []
        for kind, d in grads:
            text = d.name if kind == "def" else f"{d.name}.T.copy()"
            if d.kind == "arg" or text in names:
                text = f"{text}.copy()"
            names.append(text)
        return Kernel(self.params, out[1].name, names, lines, self.loops)

    def statement(self, s: ast.stmt) -> None:
        self.statement_start = len(self.defs)
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            self.bind(s.targets[0].id, self.value(s.value))
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            combined = ast.BinOp(ast.Name(s.target.id, ast.Load()), s.op, s.value)
            self.bind(s.target.id, self.value(combined))
        elif not isinstance(s, ast.Delete):
            raise NotLowered(f"the statement {ast.unparse(s)!r}")

    def bind(self, name: str, value: Any) -> None:
        if isinstance(value, tuple) and value[0] in _COMPUTED:
            value = ("def", self.define(name, "elementwise", shape_of(value), value))
        elif value[0] == "def" and value[1] in self.defs[self.statement_start :]:
            value[1].name = self.fresh(name)  # the product or sum this line makes: its name
        self.env[name] = value

    def define(self, name: str, kind: str, shape: tuple[int, ...], expr: Any) -> Def:
        d = Def(self.fresh(name), kind, shape, expr, self.origin)
        self.defs.append(d)
        return d

    def read(self, name: str) -> Any:
        return self.env[name] if name in self.env else self.outside(name)

    def value(self, e: ast.expr) -> Any:
        if isinstance(e, ast.Constant) and type(e.value) in (int, float):
            return ("num", repr(e.value))
        if isinstance(e, ast.Name):
            return self.read(e.id)
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult):
            return self.matmul(self.value(e.left), self.value(e.right))
        if isinstance(e, ast.BinOp) and type(e.op) in BINARY:
            return ("op", BINARY[type(e.op)], self.number(e.left), self.number(e.right))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return ("neg", self.number(e.operand))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.UAdd):
            return self.number(e.operand)
        if isinstance(e, ast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in COMPARE:
            op = COMPARE[type(e.ops[0])]
            return ("cmp", op, self.number(e.left), self.number(e.comparators[0]))
        if isinstance(e, ast.Attribute):
            base = self.value(e.value)
            if base[0] in ("object", "module"):
                return ("object", getattr(base[1], e.attr))
            if e.attr == "T" and (base[0] in _COMPUTED or base[0] == "cdef"):
                if len(shape_of(base)) < 2:
                    return base
                return ("tdef", self.define("t", "elementwise", shape_of(base), base))
            if e.attr == "T" and base[0] in ("def", "tdef"):
                if len(base[1].shape) < 2:
                    return base
                return ("tdef" if base[0] == "def" else "def", base[1])
            if e.attr == "shape" and base[0] in ("def", "tdef"):
                return ("shape", shape_of(base))
            return ("method", base, e.attr)
        if isinstance(e, ast.Subscript):
            base = self.value(e.value)
            if base[0] == "shape":
                try:
                    return ("num", str(base[1][ast.literal_eval(e.slice)]))
                except (ValueError, IndexError, TypeError):
                    pass
            raise NotLowered(f"the index {ast.unparse(e)!r}")
        if isinstance(e, ast.Call):
            return self.call(e)
        raise NotLowered(f"the expression {ast.unparse(e)!r}")

    def number(self, e: ast.expr) -> tuple:
        """``e`` as a node of arithmetic: a number or an array's elements."""
        value = self.value(e)
        if value[0] not in ("num", *_READS, *_COMPUTED):
            raise NotLowered(f"{ast.unparse(e)!r} in arithmetic")
        shape_of(value)
        return value

    def call(self, e: ast.Call) -> Any:
        fn = self.value(e.func)
        keywords = {k.arg: k.value for k in e.keywords}
        if fn[0] == "method":
            _, base, attr = fn
            if attr in ("sum", "max", "min") and not e.args:
                return self.reduce(attr, base, keywords)
            if attr == "mean" and not e.args:
                return self.mean(base, keywords)
            if attr == "copy" and not e.args and not keywords:
                return base
            raise NotLowered(f"the method {attr!r}")
        if fn[0] == "helper":
            return self.helper(fn[1], e)
        if fn[0] != "object":
            raise NotLowered(f"the call of {ast.unparse(e.func)}")
        obj = fn[1]
        if obj in _REDUCTIONS and len(e.args) == 1:
            return self.reduce(_REDUCTIONS[obj], self.number(e.args[0]), keywords)
        if obj is np.mean and len(e.args) == 1:
            return self.mean(self.number(e.args[0]), keywords)
        if keywords:
            raise NotLowered(f"the keyword arguments of {ast.unparse(e.func)}")
        if obj in (np.dot, np.matmul) and len(e.args) == 2:
            return self.matmul(self.value(e.args[0]), self.value(e.args[1]))
        if obj is np.where and len(e.args) == 3:
            return ("where", *(self.number(a) for a in e.args))
        if obj in _ELEMENTWISE and 1 <= len(e.args) <= 2:
            args = [self.number(a) for a in e.args]
            shape = shape_of(args[0])
            if obj in _VECTORIZED and len(args) == 1 and int(np.prod(shape)) >= VECTORIZED_FROM:
                argument = args[0]
                if argument[0] != "def":
                    argument = ("def", self.define("t", "elementwise", shape, argument))
                call = (_ELEMENTWISE[obj], argument)
                return ("def", self.define("t", "ufunc", shape, call))
            node = ("call", _ELEMENTWISE[obj], *args)
            shape_of(node)
            return node
        raise NotLowered(f"the call of {ast.unparse(e.func)}")

    def helper(self, name: str, e: ast.Call) -> Any:
        if name == "unreduce" and len(e.args) == 2:
            keywords = {k.arg: k.value for k in e.keywords}
            return self.unreduce(self.number(e.args[0]), self.number(e.args[1]), keywords)
        if e.keywords:
            raise NotLowered(f"the keyword arguments of {name}")
        if name == "zeros_like" and len(e.args) == 1:
            return ("fill", shape_of(self.number(e.args[0])), ("num", "0.0"))
        if name == "array_module" and len(e.args) == 1:
            return ("module", np)  # the kernel's arrays are numpy's
        if name == "like" and len(e.args) == 1:
            return self.value(e.args[0])  # what memory keeps of a value whose shape is read
        if name == "unbroadcast" and len(e.args) == 2:
            value, like = self.number(e.args[0]), self.number(e.args[1])
            return self.unbroadcast(value, shape_of(like))
        raise NotLowered(f"the helper call {ast.unparse(e)!r}")

    def unreduce(self, g: tuple, like: tuple, keywords: dict[str, ast.expr]) -> Any:
        """A reduction's gradient ``g`` broadcast back over the shape of its input."""
        axis, keepdims = self.axis_of(keywords)
        shape = shape_of(like)
        if axis is None or len(shape) == 1:
            if shape_of(g) != ():
                raise NotLowered("a whole reduction's gradient that is not a number")
            return ("fill", shape, g)
        if keepdims:
            return ("fill", shape, g)
        if g[0] in _COMPUTED:
            g = ("def", self.define("t", "elementwise", shape_of(g), g))
        if g[0] != "def" or len(g[1].shape) != 1:
            raise NotLowered("a reduction's gradient of another shape")
        return ("fill", shape, ("cdef", g[1]) if axis == 1 else g)

    def axis_of(self, keywords: dict[str, ast.expr]) -> tuple[Any, bool]:
        try:
            axis = ast.literal_eval(keywords.pop("axis", ast.Constant(None)))
            keepdims = ast.literal_eval(keywords.pop("keepdims", ast.Constant(False)))
        except ValueError:
            raise NotLowered("a reduction's axis not known while compiling") from None
        if keywords:
            raise NotLowered(f"a reduction's arguments {', '.join(keywords)}")
        if not (axis is None or type(axis) is int) or type(keepdims) is not bool:
            raise NotLowered(f"the reduction axis {axis!r}")
        return axis, keepdims

    def mean(self, operand: tuple, keywords: dict[str, ast.expr]) -> Any:
        """A mean: the sum, divided by the number of elements summed."""
        axis = keywords.get("axis")
        shape = shape_of(operand)
        total = self.reduce("sum", operand, dict(keywords))
        count = int(np.prod(shape)) if axis is None else shape[ast.literal_eval(axis)]
        return ("op", "/", total, ("num", f"{count}.0"))

    def unbroadcast(self, value: tuple, shape: tuple[int, ...]) -> Any:
        """``value`` summed over the axes along which it was broadcast to its shape."""
        have = shape_of(value)
        if have == shape:
            return value
        if shape == ():
            return self.reduce("sum", value, {})
        if int(np.prod(shape)) == 1:  # a number kept in an array of one element
            return ("fill", shape, self.reduce("sum", value, {}))
        if len(have) == 2 and shape in ((have[1],), (1, have[1])):
            keep = ast.Constant(len(shape) == 2)
            return self.reduce("sum", value, {"axis": ast.Constant(0), "keepdims": keep})
        if len(have) == 2 and shape == (have[0], 1):
            keep = ast.Constant(True)
            return self.reduce("sum", value, {"axis": ast.Constant(1), "keepdims": keep})
        raise NotLowered(f"a gradient of shape {have} summed to {shape}")

    def matmul(self, a: Any, b: Any) -> tuple:
        operands = []
        for operand in (a, b):
            if operand[0] not in ("def", "tdef"):
                if operand[0] not in _COMPUTED and operand[0] != "cdef":
                    raise NotLowered("a matrix product of something other than arrays")
                operand = ("def", self.define("t", "elementwise", shape_of(operand), operand))
            operands.append(operand)
        sa, sb = (shape_of(o) for o in operands)
        if not sa or not sb or sa[-1] != sb[0 if len(sb) == 1 else -2]:
            raise NotLowered(f"a matrix product of shapes {sa} and {sb}")
        shape = sa[:-1] + sb[1:] if len(sb) == 2 else sa[:-1]
        return ("def", self.define("t", "matmul", shape, tuple(operands)))

    def reduce(self, op: str, operand: tuple, keywords: dict[str, ast.expr]) -> Any:
        if isinstance(keywords.get("axis"), ast.Tuple):
            raise NotLowered("a reduction over several axes")
        axis, keepdims = self.axis_of(keywords)
        shape = shape_of(operand)
        if shape == ():
            return operand
        rank = len(shape)
        if axis is not None and not -rank <= axis < rank:
            raise NotLowered(f"the reduction axis {axis!r}")
        axis = None if axis is None or rank == 1 else axis % rank
        if axis is None:
            if keepdims:
                raise NotLowered("a whole reduction that keeps its dimensions")
            result: tuple[int, ...] = ()
        else:
            result = tuple(
                1 if k == axis else n for k, n in enumerate(shape) if keepdims or k != axis
            )
        return ("def", self.define("total", "reduce", result, (op, axis, operand)))

    # -- which values are arrays ---------------------------------------------------------

    def count_reads(self, d: Def) -> None:
        if d.kind in ("matmul", "ufunc"):
            nodes = list(d.expr[1:] if d.kind == "ufunc" else d.expr)
        elif d.kind == "reduce":
            nodes = [d.expr[2]]
        else:
            nodes = [d.expr]
        for node in nodes:
            for leaf in _leaves(node):
                leaf[1].readers.append((d, leaf[0] != "def"))

    def loop_shape(self, d: Def) -> tuple[int, ...]:
        return shape_of(d.expr[2]) if d.kind == "reduce" else d.shape

    def is_stored(self, d: Def) -> bool:
        """Whether ``d`` is an array (or a named number) of its own; else its
        expression is written inside the one value that reads it."""
        if d.kind != "elementwise" or d.returned or d.shape == () or len(d.readers) != 1:
            return True
        reader, transposed = d.readers[0]
        if transposed or reader.kind in ("matmul", "ufunc"):
            return True
        loop = self.loop_shape(reader)
        # a number per row read in a loop over the row's elements: computed once per row
        per_row = len(loop) == 2 and d.shape == (loop[0], 1)
        return loop != d.shape and not per_row

    # -- writing the kernel ---------------------------------------------------------------

    def emit(self) -> list[tuple[int, str, str]]:
        self.allocations: list[tuple[int, str, str]] = []
        self.loops: list[tuple[str, list[str], list[str], list[tuple[int, str, str]]]] = []
        self.known = {*self.params, *(d.name for d in self.defs)}
        self.lines: list[tuple[int, str, str]] = []
        self.region: _Region | None = None
        for d in self.defs:
            if d.stored:
                self.emit_def(d)
        self.close()
        return self.allocations + self.lines

    def top(self, code: str, origin: str) -> None:
        (self.region.before if self.region else self.lines).append((0, code, origin))

    def close(self) -> None:
        region, self.region = self.region, None
        if region is None:
            return
        region.end_columns()
        self.lines.extend(region.before)
        lines = [*region.inits, (0, f"for i in range({region.rows}):", "")]
        lines.extend((depth + 1, code, origin) for depth, code, origin in region.body)
        sums = [code.partition(" = ")[0] for _, code, _ in region.inits]
        words = dict.fromkeys(w for _, code, _ in lines for w in WORD.findall(code))
        params = [w for w in words if w in self.known and w not in sums]
        name = f"rows_{len(self.loops) + 1}"
        self.loops.append((name, params, sums, lines))
        call = f"{name}({', '.join(params)})"
        origin = next((o for _, _, o in region.body if o), "")
        self.lines.append((0, f"{', '.join(sums)} = {call}" if sums else call, origin))
        self.lines.extend(region.after)

    def unfinished(self, node: tuple) -> bool:
        """Whether ``node`` reads a value the open loop over rows finishes only after it."""
        return self.region is not None and any(
            id(leaf[1]) in self.region.unfinished for leaf in _reads(node)
        )

    def emit_def(self, d: Def) -> None:
        if d.kind == "ufunc":  # numpy's loop over the whole array (SIMD)
            (kind, a) = d.expr[1]
            if self.region and id(a) in self.region.by_row:
                self.close()
            spare = a.kind in ("elementwise", "matmul", "ufunc") and not a.returned
            out = f", out={a.name}" if spare and len(a.readers) == 1 else ""
            self.top(f"{d.name} = {d.expr[0]}({a.name}{out})", d.origin)
            return
        if d.kind == "matmul":
            if any(
                self.region and id(o[1]) in self.region.by_row | self.region.unfinished
                for o in d.expr
            ):
                self.close()
            a, b = (o[1].name + (".T" if o[0] == "tdef" else "") for o in d.expr)
            self.top(f"{d.name} = {a} @ {b}", d.origin)  # numpy's own BLAS
            return
        if d.shape == () and d.kind == "elementwise":
            code = f"{d.name} = {self.text(d.expr, ())}"
            if self.unfinished(d.expr):
                self.region.after.append((0, code, d.origin))
                self.region.unfinished.add(id(d))
            else:
                self.top(code, d.origin)
            return
        self.nest(d)

    def nest(self, d: Def) -> None:
        """``d`` computed in the loop over the rows of its loop's shape."""
        shape = self.loop_shape(d)
        node = d.expr[2] if d.kind == "reduce" else d.expr
        if not self.joins(node, shape):
            self.close()
        if self.region is None:
            self.region = _Region(shape[0])
        region = self.region
        if d.kind == "elementwise":
            spare = self.spare(d, node)
            if spare is None:
                self.allocations.append((0, f"{d.name} = np.empty({d.shape})", d.origin))
            else:  # written over the array it reads, which nothing reads after
                region.before.append((0, f"{d.name} = {spare.name}", d.origin))
        inner = 1 if len(shape) == 2 and shape[1] != 1 else 0
        per_row: list[tuple[int, str, str]] = []
        text = self.text(node, shape, per_row if inner else None)
        before, after = list(per_row), []
        if d.kind == "elementwise":
            index = ", ".join(self.index(("def", d), shape))
            statement = f"{d.name}[{index}] = {text}"
            region.by_row.add(id(d))
        else:
            op, axis, _ = d.expr
            if axis == 1:  # a row's reduction: an accumulator per row
                acc = self.fresh("acc")
                before.append((0, f"{acc} = {_START[op]}", d.origin))
                statement = _accumulate(op, acc, text)
                self.allocations.append((0, f"{d.name} = np.empty({d.shape})", d.origin))
                index = ", ".join(self.index(("def", d), shape[:1]))
                after.append((0, f"{d.name}[{index}] = {acc}", d.origin))
                region.by_row.add(id(d))
            elif axis == 0:  # a column's: a vector every row adds into
                alloc = (
                    f"np.zeros({d.shape})" if op == "sum" else f"np.full({d.shape}, {_START[op]})"
                )
                self.allocations.append((0, f"{d.name} = {alloc}", d.origin))
                column = ", ".join(self.index(("def", d), shape))
                statement = _accumulate(op, f"{d.name}[{column}]", text)
                region.unfinished.add(id(d))
            else:  # the whole array's: one number
                region.inits.append((0, f"{d.name} = {_START[op]}", d.origin))
                statement = _accumulate(op, d.name, text)
                region.unfinished.add(id(d))
        if not inner:
            region.end_columns()
            region.body.extend([*before, (0, statement, d.origin), *after])
            return
        columns = region.columns
        if columns is None or columns.count != shape[1] or self.reads(node, columns.finishes):
            region.end_columns()  # a new loop over the row's elements
            region.body.extend(before)
            columns = region.columns = _Columns(shape[1], len(region.body))
            region.body.append((0, f"for j in range({shape[1]}):", d.origin))
        else:  # one more line of the open loop over the row's elements
            region.body[columns.at : columns.at] = before
            columns.at += len(before)
        region.body.append((1, statement, d.origin))
        columns.after.extend(after)
        if after:
            columns.finishes.add(id(d))

    @staticmethod
    def reads(node: tuple, ids: set[int]) -> bool:
        """Whether ``node`` reads one of the values ``ids``."""
        return any(id(leaf[1]) in ids for leaf in _reads(node))

    @staticmethod
    def spare(d: Def, node: tuple) -> Def | None:
        """An array of ``d``'s shape that ``d`` reads at its own element and that
        nothing else reads: ``d`` can be written over it."""
        for leaf in _leaves(node):
            t = leaf[1]
            if (
                leaf[0] == "def"
                and t.stored
                and t.shape == d.shape
                and t.kind in ("elementwise", "matmul", "ufunc")
                and not t.returned
                and [reader for reader, _ in t.readers] == [d]
            ):
                return t
        return None

    def joins(self, node: tuple, shape: tuple[int, ...]) -> bool:
        """Whether a nest over ``shape`` reading ``node`` can run in the open loop over
        rows: the same rows, and what the loop makes read only at its own row."""
        region = self.region
        if region is None or region.rows != shape[0]:
            return False
        for leaf in _reads(node):
            d = leaf[1]
            if id(d) in region.unfinished:
                return False
            if id(d) in region.by_row and self.index(leaf, shape)[0] != "i":
                return False
        return True

    def index(self, leaf: tuple, shape: tuple[int, ...]) -> list[str]:
        """The index of each of the leaf's array's dimensions in a loop over ``shape``."""
        own = shape_of(leaf)
        loop_vars = ("i", "j")[: len(shape)]
        offset = len(shape) - len(own)
        index = [
            "0" if n == 1 and shape[offset + k] != 1 else loop_vars[offset + k]
            for k, n in enumerate(own)
        ]
        index = ["0" if n == 1 else v for v, n in zip(index, own, strict=True)]
        if leaf[0] == "cdef":
            return index[:1]  # the column's one index: its row
        return index[::-1] if leaf[0] == "tdef" else index

    def text(self, node: tuple, shape: tuple[int, ...], per_row: list | None = None) -> str:
        """``node``'s element as code in a loop over ``shape``; a part that is one
        number per row goes into ``per_row`` (computed once per row) where given."""
        return self._text(node, shape, per_row)[0]

    def _text(self, node: tuple, shape: tuple[int, ...], per_row: list | None) -> tuple[str, int]:
        kind = node[0]
        if kind == "num":
            return node[1], 9
        if kind == "fill":
            return self._text(node[2], shape, per_row)
        if kind in _READS:
            d = node[1]
            if not d.stored:
                return self._text(d.expr, shape, per_row)
            if d.shape == ():
                return d.name, 9
            return f"{d.name}[{', '.join(self.index(node, shape))}]", 9
        if per_row is not None and self._once_per_row(node):
            local = self.fresh("row")
            per_row.append((0, f"{local} = {self.text(node, shape)}", ""))
            return local, 9
        if kind == "neg":
            inner, p = self._text(node[1], shape, per_row)
            return f"-{inner if p >= 3 else f'({inner})'}", 3
        if kind == "op":
            op, p = node[1], PRECEDENCE[node[1]]
            left, lp = self._text(node[2], shape, per_row)
            right, rp = self._text(node[3], shape, per_row)
            left = left if lp > p or (lp == p and op != "**") else f"({left})"
            right = right if rp > p else f"({right})"
            return f"{left} {op} {right}", p
        if kind == "call":
            args = ", ".join(self._text(a, shape, per_row)[0] for a in node[2:])
            return f"{node[1]}({args})", 9
        if kind == "cmp":
            left, lp = self._text(node[2], shape, per_row)
            right, rp = self._text(node[3], shape, per_row)
            return (
                f"{left if lp > 0 else f'({left})'} {node[1]} {right if rp > 0 else f'({right})'}",
                0,
            )
        if kind == "where":
            c, a, b = (self._text(part, shape, per_row) for part in node[1:])
            return f"{_paren(a)} if {_paren(c)} else {_paren(b)}", -1
        raise NotLowered(f"the node {kind}")

    def _once_per_row(self, node: tuple) -> bool:
        """A computed part (not one element read) that is the same along a row."""
        if node[0] in ("num", "def", "tdef"):
            return False
        own = shape_of(node)
        return len(own) == 2 and own[1] == 1 or own == () and any(True for _ in _leaves(node))


#: A pair whose values have at most two dimensions (see the module).
lower_matrices = _Matrices.lower


def _paren(part: tuple[str, int]) -> str:
    return part[0] if part[1] > 0 else f"({part[0]})"


def _accumulate(op: str, target: str, text: str) -> str:
    if op == "sum":
        return f"{target} += {text}"
    # np.maximum and np.minimum keep a NaN, as numpy's max and min do
    return f"{target} = np.{'maximum' if op == 'max' else 'minimum'}({target}, {text})"
