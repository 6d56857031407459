"""Lowering a specialized pair into fused loops: every array value one element at a time.

The specialized forward and backward (:mod:`..specialized`) are read together, as one
program, statement by statement. An array value of length ``n`` becomes an expression
for its element ``i``: ``x[1:]`` is ``x[i + 1]``, ``a = t1 - t2 ** 2`` is
``t1 - t2 * t2`` of those elements. A sum over an array becomes an accumulator in the
loop over its elements; a gradient written into a slice of a zero array becomes
``d_x[i + 1] += ...``. Work over arrays of one length, at one *phase* (a value that
needs a finished sum comes after that sum's loop), shares one ``for i in range(n)``
loop, in which a value read once is a scalar temporary, never an array. A Python loop
over elementwise work (Horner's scheme) runs inside the loop over elements, the values
its backward pops kept in a small buffer per element.

What it cannot read exactly so (a matrix product, an axis reduction, a value of
another shape, a write it cannot order) raises :class:`NotLowered`, with the reason:
the pair then runs as numpy code.

>>> import ast
>>> forward = ast.parse("a = x[1:] - x[:-1]\\nout = (a * a).sum()").body
>>> backward = ast.parse("d_x = zeros_like(x)\\nd_x[1:] += 2 * a\\nd_x[:-1] -= 2 * a").body
>>> kernel = scalarize(forward, backward, ["x"], "out", "d_out", ["d_x"], {"x": (4,)}, {})
>>> print(kernel.body_text())
n = x.shape[0]
d_x = np.empty(n)
total = 0.0
d_x_next = 0.0
for i in range(n - 1):
    a = x[i + 1] - x[i]
    total += a * a
    d_x_1 = 2 * a
    d_x_0 = 2 * a
    d_x[i] = d_x_next - d_x_0
    d_x_next = d_x_1
d_x[n - 1] = d_x_next
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff_tutor.compiler.code import origin_of
from autodiff_tutor.compiler.emit import RUNTIME


class NotLowered(Exception):
    """The pair has something the fused loops do not express; the message says what."""


#: numpy functions of one or two numbers that a fused loop calls on elements, by the
#: name it calls them by there.
ELEMENTWISE = {
    np.exp: "np.exp",
    np.log: "np.log",
    np.tanh: "np.tanh",
    np.sin: "np.sin",
    np.cos: "np.cos",
    np.tan: "np.tan",
    np.sqrt: "np.sqrt",
    np.log1p: "np.log1p",
    np.expm1: "np.expm1",
    np.sinh: "np.sinh",
    np.cosh: "np.cosh",
    np.arctan: "np.arctan",
    np.abs: "np.abs",
    np.negative: "np.negative",
    np.square: "np.square",
    np.maximum: "max",
    np.minimum: "min",
}
SUMS = {np.sum}
BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
COMPARE = {ast.Gt: ">", ast.Lt: "<", ast.GtE: ">=", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 4}
WORD = re.compile(r"\b[A-Za-z_]\w*\b")


class Lowering:
    """What every lowering shares: how it is called, the kernel's names, each made
    once, and what a name the pair does not bind refers to.

    >>> class Plain(Lowering):
    ...     def __init__(self, params, shapes, scope):
    ...         self.taken, self.scope = set(params), scope
    >>> Plain(["t"], {}, {}).fresh("t"), Plain([], {}, {"np": np}).outside("np")[0]
    ('t_2', 'object')
    """

    taken: set[str]
    scope: dict[str, Any]

    @classmethod
    def lower(
        cls,
        forward: list[ast.stmt],
        backward: list[ast.stmt],
        params: list[str],
        output: str,
        seed: str,
        gradients: list[str],
        shapes: dict[str, tuple[int, ...] | None],
        scope: dict[str, Any],
    ) -> Kernel:
        """The forward and backward of a pair (its memory the forward's names) as one
        kernel computing ``output`` and ``gradients``; ``shapes`` gives each
        parameter's shape (``None``: a Python number). :class:`NotLowered` where it
        cannot."""
        return cls(params, shapes, scope).run(forward, backward, output, seed, gradients)

    def fresh(self, base: str) -> str:
        name, k = base, 2
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name

    def outside(self, name: str) -> Any:
        """A runtime helper, a name of the user's scope, or a builtin."""
        if name in RUNTIME:
            return ("helper", name)
        if name in self.scope:
            return ("object", self.scope[name])
        if hasattr(builtins, name):
            return ("object", getattr(builtins, name))
        raise NotLowered(f"the name {name!r}")


# -- values --------------------------------------------------------------------------------
# A node is a tuple: ("load", array, offset) an element of an argument; ("ref", name,
# offset) an element of an array value defined by the program; ("local", name) a number
# the loop computed; ("num", text) a number known before the loop; ("op", op, a, b)
# and ("neg", a); ("call", function, args...).


@dataclass(frozen=True)
class Scalar:
    """A number (one per call, not per element): its node and its phase."""

    node: tuple
    phase: int = 0


@dataclass(frozen=True)
class Elements:
    """An array value of ``length`` elements, as the node of its element ``i``."""

    node: tuple
    length: int
    phase: int = 0


@dataclass(frozen=True)
class Argument:
    """A one-dimensional float64 argument."""

    name: str
    length: int


@dataclass
class GradientArray:
    """A zero array the backward accumulates a gradient into."""

    name: str
    length: int
    writes: int = 0
    assigned: bool = False
    #: the phase from which its elements are all written (its loops' next)
    ready: int = 0
    read: bool = False


@dataclass(frozen=True)
class Counted:
    """``range(count)``: the iterations of a Python loop."""

    count: int


@dataclass(frozen=True)
class Partial:
    """``e.sum()`` inside a Python loop: a sum over elements that only a write into a
    gradient array may take (each element adds its share)."""

    node: tuple
    length: int


@dataclass
class Pushed:
    """The stack of a Python loop's forward: one buffer per pushed value."""

    buffers: list[str] = field(default_factory=list)
    loop: Counted | None = None
    group: Any = None
    varying: list[bool] = field(default_factory=list)


@dataclass
class Group:
    """One loop over ``length`` elements at one phase: its lines, in program order."""

    length: int
    phase: int
    before: list[tuple[str, str]] = field(default_factory=list)
    lines: list[tuple[int, Any, str]] = field(default_factory=list)  # depth, code, origin
    after: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Write:
    """``array[i + offset] += text`` (``-=`` for the sign ``-``), written out once every
    write is known (:meth:`_Vectors.writes`)."""

    array: GradientArray
    offset: int
    sign: str
    text: str


@dataclass
class Kernel:
    """The lowered pair: its parameters and the lines of its body."""

    params: list[str]
    output: str
    gradients: list[str]
    lines: list[tuple[int, str, str]]
    #: functions numba compiles, which the body (then plain Python) calls: name,
    #: parameters, the names returned, lines
    loops: list[tuple[str, list[str], list[str], list[tuple[int, str, str]]]] = field(
        default_factory=list
    )

    def body_text(self) -> str:
        """The body's lines (no ``def`` or ``return``), indented by depth."""
        return "\n".join("    " * depth + code for depth, code, _ in self.lines)


class _Vectors(Lowering):
    def __init__(self, params: list[str], shapes: dict[str, Any], scope: dict[str, Any]):
        self.scope = scope
        self.env: dict[str, Any] = {}
        self.taken: set[str] = {"i", "n", "np", "math", "i0", "j", "m", *params}
        self.buffers: dict[str, str] = {}  # a push's buffer: its count
        self.local_groups: dict[str, Group] = {}  # a loop's local: the loop over elements
        #: push buffers popped in a later loop over elements: one row per element
        self.whole_buffers: set[str] = set()
        self.params = params
        self.top: list[tuple[int, str, str]] = []  # (phase, code, origin)
        self.allocations: list[str] = []
        self.groups: list[Group] = []
        self.defs: dict[str, tuple[tuple, str]] = {}
        self.lengths: dict[int, str] = {}
        self.loop: _LoopContext | None = None
        self.origin = ""
        for p in params:
            shape = shapes[p]
            if shape is None or len(shape) == 0:
                self.env[p] = Scalar(("num", p))
            elif len(shape) == 1:
                self.env[p] = Argument(p, shape[0])
                self.lengths.setdefault(shape[0], f"{p}.shape[0]")
            else:
                raise NotLowered(f"{p} has {len(shape)} dimensions; fused loops take vectors")

    # -- the program ---------------------------------------------------------------

    def run(self, forward, backward, output, seed, gradients) -> Kernel:
        self.env[seed] = Scalar(("num", "1.0"))
        self.statements(forward)
        result = self.env.get(output)
        if not isinstance(result, Scalar):
            raise NotLowered("the output is not one number made by the loops")
        out_name = self.bind_scalar(output, result)
        self.statements(backward)
        names = []
        for g in gradients:
            value = self.env.get(g)
            if isinstance(value, _Copy):
                value = value.value
            if isinstance(value, GradientArray):  # each gradient an array of its own
                names.append(value.name if value.name not in names else f"{value.name}.copy()")
            elif isinstance(value, Elements):
                names.append(self.materialize(g, value))
            else:
                raise NotLowered(f"the gradient {g} is not an array the loops write")
        return Kernel(self.params, out_name, names, self.layout())

    def statements(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.origin = origin_of(statement) or self.origin_inside(statement)
            self.statement(statement)

    @staticmethod
    def origin_inside(statement: ast.stmt) -> str:
        for node in ast.walk(statement):
            if getattr(node, "origin", ""):
                return str(node.origin)
        return ""

    def statement(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, ast.Name):
                self.assign(target.id, self.value(s.value))
                return
            if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
                self.unpack([e.id for e in target.elts], s.value)
                return
            if isinstance(target, ast.Subscript):
                self.write(target, self.value(s.value), accumulate=False, sign="+")
                return
        if isinstance(s, ast.AugAssign) and type(s.op) in (ast.Add, ast.Sub):
            sign = "+" if isinstance(s.op, ast.Add) else "-"
            if isinstance(s.target, ast.Subscript) or (
                isinstance(s.target, ast.Name)
                and isinstance(self.env.get(s.target.id), GradientArray)
            ):
                self.write(s.target, self.value(s.value), accumulate=True, sign=sign)
                return
            if isinstance(s.target, ast.Name):
                now = self.read(s.target.id)
                self.assign(s.target.id, self.combine(sign, now, self.value(s.value)))
                return
        if isinstance(s, ast.Expr) and self.push(s.value):
            return
        if isinstance(s, ast.For):
            self.python_loop(s)
            return
        if isinstance(s, ast.Delete):
            return
        raise NotLowered(f"the statement {ast.unparse(s)!r}")

    # -- names ----------------------------------------------------------------------

    def read(self, name: str) -> Any:
        if self.env.get(name) is _POISONED:
            raise NotLowered(f"{name} is read where its shape changed in a loop")
        return self.env[name] if name in self.env else self.outside(name)

    def assign(self, name: str, value: Any) -> None:
        if self.loop is not None:
            self.env[name] = self.loop.assign(self, name, value)
            return
        if isinstance(value, Elements) and value.node[0] not in ("load", "ref", "local"):
            kernel_name = self.fresh(name)
            self.defs[kernel_name] = (value.node, self.origin)
            value = Elements(("ref", kernel_name, 0), value.length, value.phase)
        elif isinstance(value, Scalar) and value.node[0] not in ("num",):
            value = Scalar(("num", self.bind_scalar(name, value)), value.phase)
        self.env[name] = value

    def bind_scalar(self, name: str, value: Scalar) -> str:
        if value.node[0] == "num" and value.node[1].isidentifier():
            return value.node[1]
        kernel_name = self.fresh(name)
        self.top.append((value.phase, f"{kernel_name} = {self.text(value.node)}", self.origin))
        return kernel_name

    def unpack(self, names: list[str], value: ast.expr) -> None:
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "pop"
            and self.loop is not None
        ):
            self.loop.pop(self, names, value.func.value)
            return
        raise NotLowered(f"the unpacking into {', '.join(names)}")

    # -- expressions ---------------------------------------------------------------

    def value(self, e: ast.expr) -> Any:
        if isinstance(e, ast.Constant) and isinstance(e.value, (int, float)):
            if isinstance(e.value, bool):
                raise NotLowered("a boolean constant")
            return Scalar(("num", repr(e.value)))
        if isinstance(e, ast.Name):
            return self.read(e.id)
        if isinstance(e, ast.BinOp) and type(e.op) in BINARY:
            return self.combine(BINARY[type(e.op)], self.value(e.left), self.value(e.right))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return self.map_(lambda a: ("neg", a), self.value(e.operand))
        if isinstance(e, ast.Subscript):
            return self.subscript(self.value(e.value), e.slice)
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Attribute):
            base = self.value(e.value)
            if isinstance(base, tuple) and base[0] == "object":
                return ("object", getattr(base[1], e.attr))
            if e.attr == "shape" and isinstance(base, (Argument, Elements, GradientArray)):
                return ("shape", (base.length,))
            return ("method", base, e.attr)
        raise NotLowered(f"the expression {ast.unparse(e)!r}")

    def map_(self, fn, *values: Any) -> Any:
        """An elementwise operation of values (numbers and arrays of one length)."""
        values = tuple(v.inner if isinstance(v, _Varying) else v for v in values)
        values = tuple(v.value if isinstance(v, _Copy) else v for v in values)
        if any(isinstance(v, _Varied) for v in values):  # what it makes is varied too
            unwrapped = [v.value if isinstance(v, _Varied) else v for v in values]
            return _Varied(self.map_(fn, *unwrapped))
        lengths = {v.length for v in values if isinstance(v, (Elements, Argument, GradientArray))}
        if len(lengths) > 1:
            raise NotLowered(f"arrays of lengths {sorted(lengths)} in one operation")
        nodes = [self.node_of(v) for v in values]
        phase = max((self.phase_of(v) for v in values), default=0)
        if lengths:
            return Elements(fn(*nodes), lengths.pop(), phase)
        return Scalar(fn(*nodes), phase)

    def combine(self, op: str, a: Any, b: Any) -> Any:
        if op == "**" and isinstance(b, Scalar) and b.node == ("num", "2"):
            return self.map_(lambda x: ("op", "*", x, x), a)
        return self.map_(lambda x, y: ("op", op, x, y), a, b)

    def node_of(self, v: Any) -> tuple:
        if isinstance(v, (Scalar, Elements)):
            return v.node
        if isinstance(v, GradientArray):
            return self.finished(v).node
        if isinstance(v, Argument):
            return ("load", v.name, 0)
        raise NotLowered(f"a value of kind {type(v).__name__} in arithmetic")

    def finished(self, array: GradientArray) -> Elements:
        """The elements of a gradient array read after every write into it: from
        the phase after its loops."""
        if self.loop is not None:
            raise NotLowered(f"{array.name} is read in a loop")
        array.read = True
        return Elements(("load", array.name, 0), array.length, array.ready)

    def phase_of(self, v: Any) -> int:
        if isinstance(v, GradientArray):
            return v.ready
        return getattr(v, "phase", 0)

    def subscript(self, base: Any, index: ast.expr) -> Any:
        if isinstance(base, GradientArray):
            base = self.finished(base)
        if isinstance(base, tuple) and base[0] == "shape":  # x.shape[0]: a number known here
            try:
                return Scalar(("num", str(base[1][ast.literal_eval(index)])))
            except (ValueError, IndexError, TypeError):
                raise NotLowered(f"the index {ast.unparse(index)!r} of a shape") from None
        if isinstance(base, Elements) and _reads_local(base.node) and self.loop is None:
            base = self.stored(base)  # a loop's result read at other elements: an array
        if isinstance(base, (Argument, Elements)) and isinstance(index, ast.Slice):
            start, stop = _constant_slice(index, base.length)
            node = self.node_of(base)
            return Elements(_shift(node, start), stop - start, self.phase_of(base))
        if isinstance(base, Argument) and self.loop is not None:
            k = self.loop.index_of(index)
            if k is not None:
                return Scalar(("num", f"{base.name}[{k}]"))
        raise NotLowered(f"the index {ast.unparse(index)!r}")

    def call(self, e: ast.Call) -> Any:
        if e.keywords:
            raise NotLowered(f"the keyword arguments of {ast.unparse(e.func)}")
        fn = self.value(e.func)
        if isinstance(fn, tuple) and fn[0] == "method":
            _, base, attr = fn
            if attr == "sum" and not e.args:
                return self.total(base)
            if attr == "copy" and not e.args and isinstance(base, (Scalar, _Varied)):
                return base
            if attr == "sum" and not e.args and isinstance(base, _Varied):
                return self.total(base.value)  # the elements' shares, summed
            if attr == "copy" and not e.args and isinstance(base, (Elements, Argument)):
                return _Copy(base)  # an array only where it is written into (see write)
            raise NotLowered(f"the method {attr!r}")
        args = [self.value(a) for a in e.args]
        if fn[0] == "helper":
            return self.helper(fn[1], args, e)
        obj = fn[1]
        if obj in SUMS and len(args) == 1:
            return self.total(args[0])
        numbers = (Scalar, Elements, Argument, GradientArray, _Varying, _Varied)
        if obj in ELEMENTWISE and all(isinstance(a, numbers) for a in args):
            name = ELEMENTWISE[obj]
            return self.map_(lambda *xs: ("call", name, *xs), *args)
        if obj is range and len(args) == 1 and isinstance(args[0], Counted):
            return args[0]
        if obj is range and len(args) == 1 and isinstance(args[0], Scalar):
            count = args[0].node
            if count[0] == "num" and count[1].isdigit():
                return Counted(int(count[1]))
        if obj is reversed and len(args) == 1 and isinstance(args[0], Counted):
            return ("reversed", args[0])
        raise NotLowered(f"the call of {ast.unparse(e.func)}")

    def helper(self, name: str, args: list[Any], e: ast.Call) -> Any:
        if name == "zeros_like" and len(args) == 1 and isinstance(args[0], (Argument, Elements)):
            like = args[0].name if isinstance(args[0], Argument) else _base_name(e.args[0])
            array = GradientArray(self.fresh("d_" + like.removeprefix("d_")), args[0].length)
            array.name = self._allocate(array.name, args[0].length)
            return array
        if name == "unreduce" and len(args) == 2 and isinstance(args[0], Scalar):
            like = args[1]
            if isinstance(like, (Elements, Argument)):
                return Elements(args[0].node, like.length, args[0].phase)
            if isinstance(like, Scalar):
                return args[0]
        if name == "unbroadcast" and len(args) == 2:
            value, like = args
            if isinstance(like, (Elements, Argument)) or (
                isinstance(like, Scalar) and isinstance(value, Scalar)
            ):
                return value
            if isinstance(like, _Varying):  # a number in numpy's first iteration
                return value if isinstance(value, _Varied) else _Varied(value)
            if isinstance(value, _Varied) and isinstance(like, Scalar):
                value = value.value  # each element's share, summed: numpy's sum
            if isinstance(like, Scalar) and isinstance(value, (Elements, Argument)):
                return self.total(value)  # summed to one number (in a loop: each element's share)
        if name == "array_module" and len(args) == 1:
            return ("object", np)  # the kernel's arrays are numpy's
        if name == "like" and len(args) == 1:
            return args[0]  # what memory keeps of a value whose shape alone is read
        if name == "indexed_len" and len(args) == 1 and isinstance(args[0], Argument):
            return Counted(args[0].length)
        if name == "Stack" and not args:
            return Pushed()
        raise NotLowered(f"the helper call {ast.unparse(e)!r}")

    def _allocate(self, name: str, length: int) -> str:
        self.allocations.append(f"{name} = np.zeros({self.length_text(length)})")
        return name

    def reallocate(self, name: str, value: str) -> None:
        """``name`` allocated as ``value`` instead."""
        made = f"{name} = "
        self.allocations = [made + value if a.startswith(made) else a for a in self.allocations]

    def total(self, value: Any) -> Any:
        if isinstance(value, Argument):
            value = Elements(("load", value.name, 0), value.length)
        if isinstance(value, Scalar):
            return value
        if not isinstance(value, Elements):
            raise NotLowered("a sum of something other than an array")
        if self.loop is not None:
            return Partial(value.node, value.length)
        name = self.fresh("total")
        group = self.group(value.length, value.phase)
        group.before.append((f"{name} = 0.0", self.origin))
        self.line(group, 1, f"{name} += {self.text(value.node, group)}")
        return Scalar(("num", name), value.phase + 1)

    # -- writes into gradient arrays ---------------------------------------------------

    def write(self, target: ast.expr, value: Any, accumulate: bool, sign: str) -> None:
        name = target.id if isinstance(target, ast.Name) else _name_of(target.value)
        array, index = self.read(name), None if isinstance(target, ast.Name) else target.slice
        if isinstance(array, _Copy) and self.loop is None:  # a copy written into: an array
            copied = array.value
            array = GradientArray(self._allocate(self.fresh(name), copied.length), copied.length)
            self.env[name] = array
            self.write(ast.Name(name), copied, accumulate=True, sign="+")
        if not isinstance(array, GradientArray):
            raise NotLowered(f"a write into {ast.unparse(target)!r}, not a gradient array")
        if array.read:
            raise NotLowered(f"a write into {ast.unparse(target)!r} after it was read")
        if not accumulate:
            if array.writes:
                raise NotLowered(f"{ast.unparse(target)!r} overwrites what was written before")
            array.assigned = True
        array.writes += 1
        if self.loop is not None:
            self.loop.write(self, array, index, value, sign)
            return
        start, stop = (0, array.length) if index is None else _constant_slice(index, array.length)
        if isinstance(value, GradientArray):
            value = self.finished(value)
        if isinstance(value, Argument):
            value = Elements(("load", value.name, 0), value.length)
        if isinstance(value, Scalar):
            value = Elements(value.node, stop - start, value.phase)
        if not isinstance(value, Elements) or value.length != stop - start:
            raise NotLowered(f"the write into {ast.unparse(target)!r}")
        group = self.group(value.length, value.phase)
        array.ready = max(array.ready, value.phase + 1)
        text = self.text(value.node, group)
        group.lines.append((1, _Write(array, start, sign, text), self.origin))  # see writes()

    def stored(self, value: Elements) -> Elements:
        """A value a Python loop left in its locals, stored into an array by the loop
        over elements that ran it, and read from the next phase on."""
        local = value.node[1] if value.node[0] == "local" else None
        group = self.local_groups.get(local)
        if group is None:
            raise NotLowered("a loop's value read at another element")
        array = self.materialize(f"{local}_all", value, group)
        return Elements(("load", array, 0), value.length, group.phase + 1)

    def materialize(self, name: str, value: Elements, group: Group | None = None) -> str:
        """``value`` stored into a new array by ``group``'s loop (else its own)."""
        array = self.fresh(name)
        self.allocations.append(f"{array} = np.empty({self.length_text(value.length)})")
        group = group or self.group(value.length, value.phase)
        self.line(group, 1, f"{array}[i] = {self.text(value.node, group)}")
        return array

    # -- Python loops ----------------------------------------------------------------

    def push(self, e: ast.expr) -> bool:
        if not (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and e.func.attr == "push"
            and self.loop is not None
        ):
            return False
        self.loop.push(self, e.func.value, e.args)
        return True

    def python_loop(self, s: ast.For) -> None:
        if self.loop is not None or s.orelse or not isinstance(s.target, ast.Name):
            raise NotLowered("a nested loop, or a loop with an else")
        over = self.value(s.iter)
        backwards = isinstance(over, tuple) and over[0] == "reversed"
        counted = over[1] if backwards else over
        if not isinstance(counted, Counted):
            raise NotLowered(f"the loop over {ast.unparse(s.iter)!r}")
        self.loop = _LoopContext(self, s, counted, backwards)
        try:
            self.statements(s.body)
            self.loop.close(self)
        finally:
            self.loop = None

    # -- groups and text -----------------------------------------------------------------

    def group(self, length: int, phase: int) -> Group:
        for g in self.groups:
            if g.length == length and g.phase == phase:
                return g
        g = Group(length, phase)
        self.groups.append(g)
        return g

    def line(self, group: Group, depth: int, code: str, origin: str | None = None) -> None:
        group.lines.append((depth, code, self.origin if origin is None else origin))

    def text(self, node: tuple, group: Group | None = None, depth: int = 1) -> str:
        """The element ``i`` of ``node`` as text, each array value it reads defined
        before, as a scalar temporary of ``group``'s loop (once per offset)."""
        return ast.unparse(self.tree(node, group, depth))

    def tree(self, node: tuple, group: Group | None, depth: int) -> ast.expr:
        kind = node[0]
        if kind == "num":
            return ast.parse(node[1], mode="eval").body
        if kind == "local":
            return ast.Name(node[1])
        if kind == "load":
            return ast.parse(f"{node[1]}[i{_offset_text(node[2])}]", mode="eval").body
        if kind == "ref":
            if group is None:
                raise NotLowered("an array value read outside a loop")
            return ast.Name(self.temporary(node[1], node[2], group, depth))
        if kind == "neg":
            return ast.UnaryOp(ast.USub(), self.tree(node[1], group, depth))
        if kind == "op":
            op = {v: k for k, v in BINARY.items()}[node[1]]()
            left, right = self.tree(node[2], group, depth), self.tree(node[3], group, depth)
            return ast.BinOp(left, op, right)
        if kind == "call":
            func = ast.parse(node[1], mode="eval").body
            return ast.Call(func, [self.tree(a, group, depth) for a in node[2:]], [])
        raise NotLowered(f"the node {kind}")

    def temporary(self, name: str, offset: int, group: Group, depth: int) -> str:
        memo = group.__dict__.setdefault("memo", [{}])
        for scope in reversed(memo):
            if (name, offset) in scope:
                return scope[(name, offset)]
        node, origin = self.defs[name]
        text = self.text(_shift(node, offset), group, depth)
        # u at i + 2 is u_p2, at i - 1 u_m1
        temp = (
            name if offset == 0 else self.fresh(f"{name}_{'p' if offset > 0 else 'm'}{abs(offset)}")
        )
        group.lines.append((depth, f"{temp} = {text}", origin))
        memo[-1][(name, offset)] = temp
        return temp

    def length_text(self, length: int) -> str:
        for known, text in self.lengths.items():
            if known == length:
                return "n" if text == self.lengths_main() else text
            difference = known - length
            if 0 < difference < 8 and text == self.lengths_main():
                return f"n - {difference}"
        return str(length)

    def lengths_main(self) -> str:
        """The length the loops are written against (``n``): the longest argument's."""
        return self.lengths[max(self.lengths)] if self.lengths else ""

    def writes(self) -> None:
        """The writes into each gradient array, written out. An array that one loop
        alone writes, at constant offsets, is stored once per element: the element
        ``i + lowest offset`` is complete in iteration ``i``, and what the further
        offsets add is carried to the next iterations in scalars (``d_x_next``), so
        the loop stores each element once and reads none back; the others are
        accumulated in place (``d_x[i + 1] += ...``)."""
        places: dict[str, list[tuple[Group, int]]] = {}
        for g in self.groups:
            for index, (_, code, _) in enumerate(g.lines):
                if isinstance(code, _Write):
                    places.setdefault(code.array.name, []).append((g, index))
        for found in places.values():
            groups = {id(g) for g, _ in found}
            array = found[0][0].lines[found[0][1]][1].array
            if len(groups) == 1 and array.writes == len(found):
                self.carried_writes(found[0][0], [i for _, i in found], array)
                continue
            for g, index in found:
                depth, write, origin = g.lines[index]
                code = (
                    f"{write.array.name}[i{_offset_text(write.offset)}] {write.sign}= {write.text}"
                )
                g.lines[index] = (depth, code, origin)

    def carried_writes(self, group: Group, indexes: list[int], array: GradientArray) -> None:
        writes = [group.lines[i][1] for i in indexes]
        low = min(w.offset for w in writes)
        reach = max(w.offset for w in writes) - low
        carries = [
            self.fresh(f"{array.name}_next{'' if reach == 1 else d + 1}") for d in range(reach)
        ]
        parts: list[list[str]] = [[] for _ in range(reach + 1)]
        single = len(writes) == 1
        for index, write in zip(indexes, writes, strict=True):
            depth, _, origin = group.lines[index]
            if single:
                value = write.text
            else:
                value = self.fresh(f"{array.name}_{write.offset}")
                group.lines[index] = (depth, f"{value} = {write.text}", origin)
            parts[write.offset - low].append(("- " if write.sign == "-" else "+ ") + value)
        last = indexes[-1]
        at = _offset_text(low)
        stored = " ".join(([carries[0]] if reach else []) + parts[0]).removeprefix("+ ")
        new = [(1, f"{array.name}[i{at}] = {stored}", "")]
        for d in range(reach):
            more = carries[d + 1] if d + 1 < reach else ""
            carried = " ".join(([more] if more else []) + parts[d + 1]).removeprefix("+ ")
            new.append((1, f"{carries[d]} = {carried or '0.0'}", ""))
        if single:
            group.lines[last] = (group.lines[last][0], new[0][1], group.lines[last][2])
            group.lines[last + 1 : last + 1] = new[1:]
        else:
            group.lines[last + 1 : last + 1] = new
        group.before += [(f"{c} = 0.0", "") for c in carries]
        for d, c in enumerate(carries):  # the last elements: what was carried past the end
            group.after.append(
                (f"{array.name}[{self.length_text(group.length + low + d)}] = {c}", "")
            )
        if low == 0 and group.length + reach == array.length:  # every element stored
            self.reallocate(array.name, f"np.empty({self.length_text(array.length)})")

    def strip_mined(self, group: Group) -> list[tuple[int, str, str]] | None:
        """A loop over elements that holds Python loops, written over blocks of
        :data:`BLOCK` elements: each part of its body (the work between the Python
        loops, and each Python loop) runs over the block's elements innermost, so
        that the elements' independent work vectorizes where one element's loop is a
        chain of dependent steps. What one part leaves to another is kept per element
        of the block (``value_block[j]``), and a push's buffer per element too.
        ``None``: the loop holds no Python loop, or carries a number between parts."""
        lines = group.lines
        if not any(depth >= 2 for depth, _, _ in lines):
            return None
        parts: list[tuple[tuple[int, str, str] | None, list[tuple[int, str, str]]]] = []
        k = 0
        while k < len(lines):
            end = k + 1
            if _is_header(lines[k]):
                while end < len(lines) and lines[end][0] >= 2:
                    end += 1
                parts.append((lines[k], lines[k + 1 : end]))
            else:
                while end < len(lines) and not _is_header(lines[end]):
                    end += 1
                parts.append((None, lines[k:end]))
            k = end
        defined = [{_assigned_name(code) for _, code, _ in body} - {None} for _, body in parts]
        used = [
            {w for _, code, _ in ([h] if h else []) + body for w in WORD.findall(code)}
            for h, body in parts
        ]
        before = {code.split(" = ")[0] for code, _ in group.before}
        crossing = set()
        for a, names in enumerate(defined):
            for name in names:
                if any(name in used[b] or name in defined[b] for b in range(len(parts)) if b != a):
                    crossing.add(name)
        if crossing & before:
            return None  # a carry between parts: the per-element loop keeps it
        n = self.length_text(group.length)
        for name in sorted(crossing):
            self.allocations.append(f"{name}_block = np.empty({BLOCK})")

        pieces: dict[tuple[str, int], str] = {}  # (array, offset) -> its block's slice

        def piece(found: re.Match) -> str:
            array, sign, offset = found.group(1), found.group(2), found.group(3)
            at = int(offset) * (-1 if sign == "-" else 1) if offset else 0
            if (array, at) not in pieces:
                side = "" if at == 0 else f"_{'p' if at > 0 else 'm'}{abs(at)}"
                pieces[(array, at)] = self.fresh(f"{array}_part{side}")
            return f"{pieces[(array, at)]}[j]"

        def blocked(code: str) -> str:
            for name in crossing:
                code = re.sub(rf"\b{name}\b", f"{name}_block[j]", code)
            for buffer in self.buffers:
                code = re.sub(rf"\b{buffer}\[(\w+)\]", rf"{buffer}[\1, j]", code)
            # the elements of the block through slices of it: indexes the vectorizer reads
            return re.sub(r"\b(\w+)\[i(?: ([+-]) (\d+))?\]", piece, code)

        for buffer, count in self.buffers.items():
            self.reallocate(buffer, f"np.empty(({count}, {BLOCK}))")
        out = [
            (0, f"for i0 in range(0, {n}, {BLOCK}):", ""),
            (1, f"m = min({BLOCK}, {n} - i0)", ""),
        ]
        slices_at = len(out)
        for header, body in parts:
            depth, sums = 1, []
            if header is not None:
                out.append((1, header[1], header[2]))
                depth = 2
                body, sums = self.block_sums(header[1], body)
                out += [(2, f"{total} = 0.0", "") for total, _ in sums]
            out += [(depth, "for j in range(m):", ""), (depth + 1, "i = i0 + j", "")]
            shift = depth + 1 - (2 if header is not None else 1)
            lines = [(d + shift, blocked(code), origin) for d, code, origin in body]
            if not any(re.search(r"\bi\b", code) for _, code, _ in lines):
                out.pop()  # i = i0 + j: read by no line now
            out += lines
            out += [(2, f"{target} += {total}", "") for total, target in sums]
        out[slices_at:slices_at] = [
            (1, f"{name} = {array}[i0{_offset_text(at)} : i0{_offset_text(at)} + m]", "")
            for (array, at), name in pieces.items()
        ]
        return out

    def block_sums(
        self, header: str, body: list[tuple[int, str, str]]
    ) -> tuple[list[tuple[int, str, str]], list[tuple[str, str]]]:
        """A Python loop's writes at its own index (``d_c[k] += e``, each element's
        share of a sum) added up over the block in a scalar first, then written once:
        no store into one element per element of the block."""
        var = header.split()[1]
        sums, out = [], []
        for depth, code, origin in body:
            found = re.fullmatch(rf"(\w+)\[{var}\] ([+-])= (.*)", code)
            if found is None or depth != 2:
                out.append((depth, code, origin))
                continue
            array, sign, value = found.groups()
            total = self.fresh(f"{array}_sum")
            out.append((depth, f"{total} {sign}= {value}", origin))
            sums.append((total, f"{array}[{var}]"))
        return out, sums

    def whole(self) -> None:
        """Push buffers popped in another loop over elements hold every element's
        values (``pushed[k, i]``), written in one loop and read in the other."""
        for buffer in self.whole_buffers:
            count = self.buffers.pop(buffer)
            for g in self.groups:
                g.lines = [
                    (d, re.sub(rf"\b{buffer}\[(\w+)\]", rf"{buffer}[\1, i]", code), o)
                    for d, code, o in g.lines
                ]
            length = next(g.length for g in self.groups for _, c, _ in g.lines if buffer in str(c))
            self.reallocate(buffer, f"np.empty(({count}, {self.length_text(length)}))")

    def layout(self) -> list[tuple[int, str, str]]:
        self.writes()
        self.whole()
        blocked = {id(g): self.strip_mined(g) for g in self.groups}  # before the allocations
        lines: list[tuple[int, str, str]] = []
        if self.lengths:
            lines.append((0, f"n = {self.lengths_main()}", ""))
        lines += [(0, a, "") for a in self.allocations]
        phases = sorted({p for p, _, _ in self.top} | {g.phase for g in self.groups})
        for phase in phases:
            lines += [(0, code, origin) for p, code, origin in self.top if p == phase]
            for g in self.groups:
                if g.phase != phase:
                    continue
                lines += [(0, code, origin) for code, origin in g.before]
                if blocked[id(g)] is not None:
                    lines += blocked[id(g)]
                else:
                    lines.append((0, f"for i in range({self.length_text(g.length)}):", ""))
                    lines += g.lines
                lines += [(0, code, origin) for code, origin in g.after]
        return lines


#: Every array value one element at a time (see the module).
scalarize = _Vectors.lower
_POISONED = object()


@dataclass(frozen=True)
class _Copy:
    """``value.copy()``: the value itself, until something is written into it."""

    value: Any


@dataclass(frozen=True)
class _Varying:
    """A value a loop pops that was one number for all elements in numpy, at least in
    the loop's first iteration (made from a number the loop starts from)."""

    inner: Any


@dataclass(frozen=True)
class _Varied:
    """A gradient numpy sums to one number where the loop keeps each element's share:
    ``unbroadcast`` to a :class:`_Varying`, and what is computed from it. Shares are
    right wherever they are summed again (a sum, a write into a gradient at the loop's
    index) or passed on linearly within the loop; they are never written into a
    whole array, and not read after the loop (where the shares were not summed)."""

    value: Any


class _LoopContext:
    """A Python loop inside the loop over elements: its lines go to one group, in the
    order they run; its names are scalar locals."""

    def __init__(self, lowering: _Vectors, s: ast.For, counted: Counted, backwards: bool):
        self.counted, self.backwards = counted, backwards
        self.var = s.target.id
        self.kernel_var = lowering.fresh(self.var)
        self.group: Group | None = None
        self.header_at: int | None = None
        self.origin = origin_of(s)
        self.pending: list[tuple[int, str, str]] = []
        self.locals: dict[str, str] = {}
        self.pushed: list[tuple[Pushed, int, str]] = []
        # names the body assigns that hold a value before it: carried from one
        # iteration to the next, as locals set before the loop
        self.carried: dict[str, Any] = {}
        for name in _assigned(s.body):
            if not _read_first(s.body, name):
                continue  # written before it is read in every iteration: not carried
            before = lowering.env.get(name)
            if isinstance(before, GradientArray):
                if name in _accumulated(s.body):
                    continue  # written into in the loop (d_x += ...): stays the array
                before = lowering.finished(before)  # complete before the loop: its elements
            if isinstance(before, (Scalar, Elements, Argument)):
                self.carried[name] = before
                local = ("local", self.local_name(lowering, name))
                lowering.env[name] = (
                    Scalar(local, before.phase)
                    if isinstance(before, Scalar)
                    else Elements(local, before.length, before.phase)
                )

    def index_of(self, index: ast.expr) -> str | None:
        return self.kernel_var if isinstance(index, ast.Name) and index.id == self.var else None

    def ensure_group(self, lowering: _Vectors, length: int, phase: int) -> Group:
        if self.group is None:
            self.group = lowering.group(length, phase)
            count = lowering.length_text(self.counted.count)
            header = (
                f"for {self.kernel_var} in range({count} - 1, -1, -1):"
                if self.backwards
                else f"for {self.kernel_var} in range({count}):"
            )
            for name, before in self.carried.items():
                if lowering.phase_of(before) > phase:
                    raise NotLowered(f"{name} needs a sum made in the same loop over elements")
                node = lowering.node_of(before)
                text = lowering.text(node, self.group, 1)
                self.group.lines.append((1, f"{self.locals[name]} = {text}", self.origin))
            lowering.line(self.group, 1, header, self.origin)
            self.group.__dict__.setdefault("memo", [{}]).append({})
            for line in self.pending:
                self.group.lines.append(line)
        elif self.group.length != length:
            raise NotLowered("arrays of two lengths in one loop")
        if phase > self.group.phase:  # the loop runs before the sum it would need
            raise NotLowered("a loop that needs a sum made in its own loop over elements")
        return self.group

    def assign(self, lowering: _Vectors, name: str, value: Any) -> Any:
        varied = isinstance(value, _Varied)
        if varied:
            value = value.value
        if isinstance(value, (Elements, Argument, Scalar)):
            if isinstance(value, Argument):
                value = Elements(("load", value.name, 0), value.length)
            local = self.local_name(lowering, name)
            if isinstance(value, Scalar) and self.group is None:
                self.pending.append((2, f"{local} = {lowering.text(value.node)}", lowering.origin))
                return Scalar(("local", local), value.phase)
            length = value.length if isinstance(value, Elements) else self.group.length
            group = self.ensure_group(lowering, length, value.phase)
            lowering.line(group, 2, f"{local} = {lowering.text(value.node, group, 2)}")
            lowering.local_groups[local] = group
            if varied:
                return _Varied(Elements(("local", local), length, value.phase))
            if isinstance(value, Scalar):  # one number in numpy: a sum is taken to it
                return Scalar(("local", local), value.phase)
            return Elements(("local", local), length, value.phase)
        if isinstance(value, Partial):
            return value
        raise NotLowered(f"{name} in a loop is not a number or an array")

    def local_name(self, lowering: _Vectors, name: str) -> str:
        """Every version of a user's name in the loop is one local: ``value_2``,
        ``value_3`` of the user's ``value`` are that name's values."""
        if name not in self.locals:
            self.locals[name] = lowering.fresh(name)
        return self.locals[name]

    def push(self, lowering: _Vectors, stack: ast.expr, args: list[ast.expr]) -> None:
        pushed = lowering.read(_name_of(stack))
        if not isinstance(pushed, Pushed) or self.backwards or len(args) != 1:
            raise NotLowered("a push other than a forward loop's")
        values = args[0].elts if isinstance(args[0], ast.Tuple) else None
        if values is None or pushed.buffers:
            raise NotLowered("a second push onto one stack")
        pushed.loop = self.counted
        pushed.group = self.group
        for v in values:
            value = lowering.value(v)
            buffer = lowering.fresh(f"pushed_{_pushed_name(v) or 'value'}")
            count = lowering.length_text(self.counted.count)
            lowering.allocations.append(f"{buffer} = np.empty({count})")
            lowering.buffers[buffer] = count
            if isinstance(value, Argument):
                value = Elements(("load", value.name, 0), value.length)
            if not isinstance(value, (Elements, Scalar)):
                raise NotLowered("a pushed value that is not a number per element")
            if isinstance(value, Scalar) and self.group is None:
                raise NotLowered("a push before the loop's elementwise work")
            group = self.group
            kernel = f"{buffer}[{self.kernel_var}] = {lowering.text(value.node, group, 2)}"
            lowering.line(group, 2, kernel)
            pushed.buffers.append(buffer)
            # a carried name that starts as a number is one number for all elements in
            # the first iteration (typed as it enters the loop): numpy sums its gradient
            pushed.varying.append(isinstance(value, Scalar))

    def pop(self, lowering: _Vectors, names: list[str], stack: ast.expr) -> None:
        pushed = lowering.read(_name_of(stack))
        if (
            not isinstance(pushed, Pushed)
            or not self.backwards
            or pushed.loop != self.counted
            or len(names) != len(pushed.buffers)
        ):
            raise NotLowered("a pop that does not undo a forward loop's push")
        if pushed.group is None:
            raise NotLowered("a pop of a stack no loop over elements pushed onto")
        # the phase the backward's loop needs: that of the values it carries in
        needed = max([pushed.group.phase, *map(lowering.phase_of, self.carried.values())])
        group = self.ensure_group(lowering, pushed.group.length, needed)
        if group is not pushed.group:  # popped in a later loop: keep every element's values
            for buffer in pushed.buffers:
                lowering.whole_buffers.add(buffer)
        for name, buffer, varying in zip(names, pushed.buffers, pushed.varying, strict=True):
            local = self.local_name(lowering, name)
            lowering.line(group, 2, f"{local} = {buffer}[{self.kernel_var}]")
            value = Elements(("local", local), group.length)
            lowering.local_groups[local] = group
            # the backward's last iteration pops the number the forward started from
            lowering.env[name] = _Varying(value) if varying else value

    def write(self, lowering, array: GradientArray, index, value, sign: str) -> None:
        if isinstance(value, _Varied):  # each element's share: summed at the loop's index
            if self.group is None or index is None or self.index_of(index) is None:
                raise NotLowered(f"a gradient numpy sums, written into all of {array.name}")
            value = Partial(lowering.node_of(value.value), self.group.length)
        if isinstance(value, Partial):
            if index is None or self.index_of(index) is None:
                raise NotLowered("a sum in a loop written other than at the loop's index")
            group = self.ensure_group(lowering, value.length, 0)
            array.ready = max(array.ready, group.phase + 1)
            text = lowering.text(value.node, group, 2)
            lowering.line(group, 2, f"{array.name}[{self.kernel_var}] {sign}= {text}")
            return
        if isinstance(value, Argument):
            value = Elements(("load", value.name, 0), value.length)
        if isinstance(value, Scalar):  # the same number (or a local) for every element
            value = Elements(value.node, array.length, value.phase)
        if index is not None or not isinstance(value, Elements) or value.length != array.length:
            raise NotLowered("a write in a loop other than a whole array's elements")
        if array.assigned:
            raise NotLowered("an assignment of a whole array in a loop")
        group = self.ensure_group(lowering, value.length, value.phase)
        array.ready = max(array.ready, group.phase + 1)
        text = lowering.text(value.node, group, 2)
        lowering.line(group, 2, f"{array.name}[i] {sign}= {text}")

    def close(self, lowering: _Vectors) -> None:
        if self.group is None:
            raise NotLowered("a loop with no elementwise work")
        self.group.__dict__["memo"].pop()
        for name, value in list(lowering.env.items()):
            if isinstance(value, (_Varying, _Varied)) or (
                isinstance(value, Scalar) and _reads_local(value.node)
            ):
                lowering.env[name] = _POISONED  # a number per iteration, not after the loop


#: Elements per block of a loop over elements that holds Python loops.
BLOCK = 256


def _is_header(line: tuple[int, str, str]) -> bool:
    return line[0] == 1 and line[1].startswith("for ")


def _assigned_name(code: str) -> str | None:
    """The name a kernel line ``name = ...`` assigns (``None`` for other lines)."""
    head, _, rest = code.partition(" = ")
    return head if rest and head.isidentifier() else None


def _assigned(body: list[ast.stmt]) -> list[str]:
    """The names ``body`` assigns, in order."""
    names: list[str] = []
    for s in body:
        targets = s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", None)]
        for t in targets:
            for node in ast.walk(t) if t is not None else ():
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.append(node.id)
    return list(dict.fromkeys(names))


def _base_name(e: ast.expr) -> str:
    return e.id if isinstance(e, ast.Name) else "array"


def _accumulated(body: list[ast.stmt]) -> set[str]:
    """The names ``body`` adds into (``d_x += ...``)."""
    return {
        s.target.id for s in body if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name)
    }


def _pushed_name(e: ast.expr) -> str:
    """The name a push keeps, ``t`` or ``like(t)`` (its shape alone); '' for another."""
    if isinstance(e, ast.Call) and ast.unparse(e.func) == "like" and len(e.args) == 1:
        e = e.args[0]
    return e.id if isinstance(e, ast.Name) else ""


def _read_first(body: list[ast.stmt], name: str) -> bool:
    """Whether ``body`` reads ``name`` before it assigns it (a value carried from the
    previous iteration)."""
    for s in body:
        value = getattr(s, "value", None)
        reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} if value else set()
        if isinstance(s, ast.AugAssign) or not isinstance(s, ast.Assign):
            reads |= {n.id for n in ast.walk(s) if isinstance(n, ast.Name)}
        if name in reads:
            return True
        if name in _assigned([s]):
            return False
    return False


def _reads_local(node: tuple) -> bool:
    if node[0] == "local":
        return True
    return any(isinstance(part, tuple) and _reads_local(part) for part in node[1:])


def _name_of(e: ast.expr) -> str:
    if not isinstance(e, ast.Name):
        raise NotLowered(f"{ast.unparse(e)!r} is not a name")
    return e.id


def _constant_slice(index: ast.expr, length: int) -> tuple[int, int]:
    """``start, stop`` of a slice of constant bounds (step 1) of ``length`` elements."""
    if not isinstance(index, ast.Slice) or index.step is not None:
        raise NotLowered(f"the index {ast.unparse(index)!r}")
    bounds = []
    for bound, default in ((index.lower, 0), (index.upper, length)):
        if bound is None:
            bounds.append(default)
            continue
        try:
            value = ast.literal_eval(bound)
        except ValueError:
            raise NotLowered(f"the slice bound {ast.unparse(bound)!r}") from None
        if type(value) is not int:
            raise NotLowered(f"the slice bound {ast.unparse(bound)!r}")
        bounds.append(value)
    start, stop, _ = slice(*bounds).indices(length)
    return start, max(start, stop)


def _shift(node: tuple, by: int) -> tuple:
    """``node`` read ``by`` elements further on."""
    if by == 0:
        return node
    kind = node[0]
    if kind in ("load", "ref"):
        return (kind, node[1], node[2] + by)
    if kind == "local":
        raise NotLowered("a loop's value read at another element")
    if kind == "num":
        return node
    if kind == "neg":
        return ("neg", _shift(node[1], by))
    if kind == "op":
        return ("op", node[1], _shift(node[2], by), _shift(node[3], by))
    if kind == "call":
        return ("call", node[1], *(_shift(a, by) for a in node[2:]))
    raise NotLowered(f"the node {kind}")


def _offset_text(offset: int) -> str:
    return "" if offset == 0 else f" + {offset}" if offset > 0 else f" - {-offset}"
