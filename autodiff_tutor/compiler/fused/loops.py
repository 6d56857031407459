"""Lowering a pair with a loop over the leading axis of arrays, and two-dimensional work inside.

A recurrent step (``for t in range(xs.shape[0]): h = np.tanh(h @ Wh + xs[t] @ Wx + b)``)
is specialized into a forward that pushes each step's values on a stack and a backward
that walks the loop back, popping them, and writes some values into iteration slots
that products after the loop read at once. This lowering writes that pair again as one
kernel, statement by statement, with the stack made static: the values a loop body
pushes go into arrays of one row per step (``h_3_steps[t] = h_3``), and the loop that
walks it back reads them at its own step (``h_3 = h_3_steps[t]``). Every shape is
known at lowering time, so the kernel chooses how to multiply by size:

- where every matrix product has at most :data:`SMALL_PRODUCT` multiply-adds, the whole
  kernel is compiled by numba, and every array value is written as loops over its
  elements: a product as three loops (a BLAS call costs more than a small product), an
  elementwise value, a sum or a write into a step's row as one loop nest each (numba
  compiles those in a fraction of the time its array expressions and slice writes take);
- else the kernel is plain Python, its products numpy's own ``@`` (its BLAS) and its
  functions over arrays numpy's (SIMD), the arithmetic of a statement between them one
  function numba compiles (one pass, no temporaries), and the values pushed kept in
  lists, as the numpy pair keeps them.

What it cannot read so (a loop inside a loop, a branch, a helper it does not know, an
index other than the loop's step or a number, a shape that changes from one step to
the next) raises :class:`NotLowered` with the reason: the numpy pair runs.

>>> import ast
>>> import numpy as np
>>> forward = ast.parse('''
... stack = Stack()
... total = 0.0
... steps = range(xs.shape[0])
... for t in steps:
...     y = np.tanh(xs[t] @ W)
...     stack.push((y,))
...     total = total + y.sum()
... ''').body
>>> backward = ast.parse('''
... d_W = zeros_like(W)
... for t in reversed(steps):
...     (y,) = stack.pop()
...     d_W += xs[t].T @ (1 - y * y)
... ''').body
>>> shapes = {"W": (2, 2), "xs": (3, 1, 2)}
>>> kernel = lower_loops(forward, backward, ["W", "xs"], "total", "d_total", ["d_W"],
...                      shapes, {"np": np})
>>> print(kernel.body_text())
y_steps = np.empty((3, 1, 2))
total = 0.0
for t in range(3):
    t_2 = np.zeros((1, 2))
    for i in range(1):
        for k in range(2):
            a_ik = xs[t, i, k]
            for j in range(2):
                t_2[i, j] += a_ik * W[k, j]
    y = np.empty((1, 2))
    for i in range(1):
        for k in range(2):
            y[i, k] = np.tanh(t_2[0, k])
    for i in range(1):
        for k in range(2):
            y_steps[t, i, k] = y[0, k]
    total_2 = 0.0
    for i in range(1):
        for k in range(2):
            total_2 += y[i, k]
    total = total + total_2
d_total = 1.0
d_W = np.zeros((2, 2))
for t in range(2, -1, -1):
    y = y_steps[t]
    b = np.empty((1, 2))
    for i in range(1):
        for k in range(2):
            b[i, k] = 1 - y[0, k] * y[0, k]
    t_3 = np.zeros((2, 2))
    for i in range(2):
        for k in range(1):
            a_ik = xs[t, k, i]
            for j in range(2):
                t_3[i, j] += a_ik * b[k, j]
    for i in range(2):
        for k in range(2):
            d_W[i, k] += t_3[i, k]
"""

from __future__ import annotations

import ast
import builtins
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff_tutor.compiler.code import names, origin_of, resolve
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

#: the most multiply-adds of a product written as loops in a kernel numba compiles
#: whole; a larger one leaves the kernel Python, calling numpy's ``@`` (BLAS)
SMALL_PRODUCT = 4096
#: functions of arrays, by the name the kernel calls them (numpy's, or numba's own)
_FUNCTIONS = {**ELEMENTWISE, np.maximum: "np.maximum", np.minimum: "np.minimum"}
_KERNEL_NAMES = ("np", "math")


@dataclass
class _Value:
    """What an expression is in the kernel: its code, its shape (``()`` a number),
    whether it is one name (so it can be indexed) and how tightly its code binds."""

    code: str
    shape: tuple[int, ...]
    precedence: int = 9
    arithmetic: bool = False  # code the kernel computes element by element
    #: the code of one element, given the index of each of the value's dimensions;
    #: ``None`` where only the whole array has code (a reshaped view)
    element: Callable[[list[str]], str] | None = None

    def at(self, index: list[str]) -> str:
        """The code of the element at ``index`` (one entry per dimension)."""
        if self.element is not None:
            return self.element(index)
        return f"{self.code}[{', '.join(index)}]" if index else self.code


@dataclass
class _Frame:
    """The values one loop body pushes per step (one list per push, in order), in
    arrays of one row per step, and the loop's count."""

    count: int
    pushes: list[list[str]] = field(default_factory=list)


class _Loops(Lowering):
    def __init__(
        self, params: list[str], shapes: dict[str, Any], scope: dict[str, Any], small: bool = True
    ):
        self.given = params, shapes, scope
        self.scope = scope
        self.small = small
        self.large_products = False
        self.params = params
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.ranges: dict[str, int] = {}
        self.stacks: set[str] = set()
        self.modules: set[str] = set()  # names of the array module (numpy)
        self.stack: list[Any] = []  # the static stack: frames and the names pushed once
        self.allocations: list[tuple[int, str, str]] = []
        self.lines: list[tuple[int, str, str]] = []
        self.helpers: list[tuple[str, list[str], list[str], list[tuple[int, str, str]]]] = []
        self.depth = 0
        self.step: str | None = None  # the loop variable of the loop being written
        self.frame: _Frame | None = None  # the frame the loop being written pushes or pops
        self.popped = 0
        self.origin = ""
        self.taken: set[str] = set(_KERNEL_NAMES) | set(params)
        for p in params:
            shape = shapes[p]
            self.shapes[p] = () if shape is None else tuple(shape)

    # -- the program --------------------------------------------------------------------

    def run(self, forward, backward, output, seed, gradients) -> Kernel:
        """The pair as one kernel, its products as loops where all are small."""
        try:
            kernel = self.kernel(forward, backward, output, seed, gradients)
            if self.small and self.large_products:
                large = _Loops(*self.given, small=False)
                return large.kernel(forward, backward, output, seed, gradients)
        except (ValueError, TypeError, KeyError, IndexError) as error:  # a form not read here
            raise NotLowered(f"a loop's code not read ({type(error).__name__}: {error})") from None
        return kernel

    def kernel(self, forward, backward, output, seed, gradients) -> Kernel:
        self.taken.update(names(*forward, *backward))
        self.loop_names = [self.fresh(n) for n in ("i", "k", "j", "a_ik")]
        self.block(forward)
        self.origin = ""
        self.emit(f"{seed} = 1.0")
        self.shapes[seed] = ()
        self.block(backward)
        if self.stack:
            raise NotLowered("the backward leaves values on the stack")
        if self.shapes.get(output) != ():
            raise NotLowered("the output is not one number")
        returned = []
        for g in gradients:
            if g not in self.shapes:
                raise NotLowered(f"the gradient {g} is not computed")
            returned.append(f"{g}.copy()" if g in self.params or g in returned else g)
        return Kernel(
            self.params,
            output,
            returned,
            self.allocations + self.lines,
            self.helpers,
        )

    def block(self, statements: list[ast.stmt]) -> None:
        for s in statements:
            self.origin = origin_of(s) or self.origin
            self.statement(s)

    def emit(self, code: str) -> None:
        self.lines.append((self.depth, code, self.origin))

    def statement(self, s: ast.stmt) -> None:
        if isinstance(s, ast.For):
            return self.loop(s)
        if isinstance(s, ast.Expr) and self.is_push(s.value):
            return self.push(s.value)
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, ast.Tuple) and self.is_pop(s.value):
                return self.pop(target)
            if isinstance(target, ast.Name):
                return self.assign(target.id, s.value)
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                return self.slot_write(target, s.value)
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Subscript):
            return self.slot_write(s.target, s.value, BINARY.get(type(s.op)))
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            name = s.target.id
            if self.shapes.get(name, ()) == ():
                combined = ast.BinOp(ast.Name(name, ast.Load()), s.op, s.value)
                return self.assign(name, combined)
            value = self.value(s.value)
            if (
                type(s.op) not in BINARY
                or _broadcast(self.shapes[name], value.shape) != (self.shapes[name])
            ):
                raise NotLowered(f"the statement {ast.unparse(s)!r}")
            return self.write(name, self.shapes[name], value, BINARY[type(s.op)])
        if isinstance(s, ast.Delete):
            return None
        raise NotLowered(f"the statement {ast.unparse(s)!r}")

    def assign(self, name: str, e: ast.expr) -> None:
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
            called = e.func.id
            if called == "Stack" and not e.args:
                self.stacks.add(name)
                return
            if called == "array_module":  # the kernel's arrays are numpy's
                self.modules.add(name)
                return
            if called == "unreduce" and len(e.args) == 2:
                value, like = (self.value(a) for a in e.args)
                if value.shape not in ((), like.shape):
                    raise NotLowered(f"the call {ast.unparse(e)!r}")
                code = value.code if value.shape else f"np.full({like.shape}, {value.code})"
                self.shapes[name] = like.shape
                self.emit(f"{name} = {code}")
                return
            if called == "range":
                self.ranges[name] = self.count_of(e)
                return
            if called == "iteration_slots" and len(e.args) == 3:
                count = self.count_of(e.args[0])
                shape = tuple(ast.literal_eval(e.args[2]))
                if ast.literal_eval(e.args[1]) != "float64":
                    raise NotLowered("iteration slots of another dtype than float64")
                self.shapes[name] = (count, *shape)
                self.allocations.append((0, f"{name} = np.empty({(count, *shape)})", self.origin))
                return
            if called == "zeros_like" and len(e.args) == 1:
                shape = self.value(e.args[0]).shape
                self.shapes[name] = shape
                self.emit(f"{name} = {f'np.zeros({shape})' if shape else '0.0'}")
                return
        self.bind(name, self.settled(self.value(e)))

    def bind(self, name: str, value: _Value) -> None:
        """``name = value``; in a kernel numba compiles, arithmetic over arrays as
        loops over the elements (numba's array expressions take long to compile)."""
        if self.small and value.arithmetic and value.shape:
            # its elements in loops: a fresh array (``name`` may be read, or shared)
            target = name if name not in WORD.findall(value.code) else self.fresh(name)
            self.emit(f"{target} = np.empty({value.shape})")
            self.shapes[target] = value.shape
            self.write(target, value.shape, value)
            if target != name:
                self.emit(f"{name} = {target}")
        else:
            self.emit(f"{name} = {value.code}")
        self.shapes[name] = value.shape

    def nest(self, shape: tuple[int, ...], line: Callable[[list[str]], str]) -> None:
        """Loops over the elements of ``shape``, ``line(index)`` innermost."""
        if len(shape) > 3:
            raise NotLowered(f"a value of {len(shape)} dimensions in loops")
        index = self.loop_names[: len(shape)]
        depth = self.depth
        for name, n in zip(index, shape, strict=True):
            self.emit(f"for {name} in range({n}):")
            self.depth += 1
        self.emit(line(index))
        self.depth = depth

    def settled(self, value: _Value) -> _Value:
        """In a Python kernel, arithmetic over arrays is one function numba compiles."""
        if self.small or not value.arithmetic or not value.shape:
            return value
        words = dict.fromkeys(w for w in WORD.findall(value.code) if w not in _KERNEL_NAMES)
        if not any(self.shapes.get(w) for w in words):
            return value
        params = [w for w in words if w in self.shapes]
        name = self.fresh(f"elementwise_{len(self.helpers) + 1}")  # a module function
        self.helpers.append((name, params, [value.code], []))
        return _Value(f"{name}({', '.join(params)})", value.shape)

    # -- loops and the static stack -------------------------------------------------------

    def count_of(self, e: ast.expr) -> int:
        if isinstance(e, ast.Name) and e.id in self.ranges:
            return self.ranges[e.id]
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "range":
            if len(e.args) == 1 and not e.keywords:
                return self.integer(e.args[0])
        raise NotLowered(f"the loop over {ast.unparse(e)!r}")

    def integer(self, e: ast.expr) -> int:
        value = self.value(e)
        try:
            return int(value.code)
        except ValueError:
            raise NotLowered(f"the count {ast.unparse(e)!r}, not known") from None

    def loop(self, s: ast.For) -> None:
        if self.step is not None:
            raise NotLowered("a loop inside a loop")
        if s.orelse or not isinstance(s.target, ast.Name):
            raise NotLowered(f"the loop {ast.unparse(s).splitlines()[0]!r}")
        walked_back = (
            isinstance(s.iter, ast.Call)
            and isinstance(s.iter.func, ast.Name)
            and s.iter.func.id == "reversed"
            and len(s.iter.args) == 1
        )
        count = self.count_of(s.iter.args[0] if walked_back else s.iter)
        if walked_back:
            if not self.stack or not isinstance(self.stack[-1], _Frame):
                frame = _Frame(count)  # a backward loop that pops nothing
            else:
                frame = self.stack.pop()
            if frame.count != count:
                raise NotLowered("a loop walked back over another count")
            self.popped = len(frame.pushes)
            header = f"for {s.target.id} in range({count - 1}, -1, -1):"
        else:
            frame = _Frame(count)
            header = f"for {s.target.id} in range({count}):"
        self.emit(header)
        self.shapes[s.target.id] = ()
        self.step, self.frame = s.target.id, frame
        before = dict(self.shapes)
        self.depth += 1
        self.block(s.body)
        self.depth -= 1
        for name, shape in before.items():  # the body's code was written for these
            if self.shapes[name] != shape:
                raise NotLowered(f"the shape of {name} changed in a loop")
        self.step, self.frame = None, None
        if walked_back and self.popped:
            raise NotLowered("a loop walked back pops fewer values than it pushed")
        if not walked_back and frame.pushes:
            self.stack.append(frame)

    def is_push(self, e: ast.expr) -> bool:
        return _method_of(e, self.stacks, "push") and len(e.args) == 1

    def is_pop(self, e: ast.expr) -> bool:
        return _method_of(e, self.stacks, "pop") and not e.args

    def push(self, e: ast.Call) -> None:
        values = e.args[0].elts if isinstance(e.args[0], ast.Tuple) else None
        if values is None or not all(
            isinstance(v, ast.Name) and v.id in self.shapes for v in values
        ):
            raise NotLowered(f"the push {ast.unparse(e)!r}")
        if self.frame is None:  # pushed once: the names themselves, as they are now
            kept = []
            for v in values:
                name = self.fresh(f"{v.id}_kept")
                self.shapes[name] = self.shapes[v.id]
                self.emit(f"{name} = {v.id}")
                kept.append(name)
            self.stack.append(kept)
            return
        rows = []
        for v in values:
            shape = self.shapes[v.id]
            name = self.fresh(f"{v.id}_steps")
            self.shapes[name] = (self.frame.count, *shape)
            # numba: an array of one row per step; Python: a list of the arrays pushed
            # (no copies: the values of generated code are never written into)
            empty = (
                f"np.empty({self.shapes[name]})" if self.small else f"[None] * {self.frame.count}"
            )
            self.allocations.append((0, f"{name} = {empty}", self.origin))
            if self.small:
                self.write(f"{name}[{self.step}]", shape, _Value(v.id, shape))
            else:
                self.emit(f"{name}[{self.step}] = {v.id}")
            rows.append(name)
        self.frame.pushes.append(rows)

    def pop(self, target: ast.Tuple) -> None:
        if self.frame is None:
            if not self.stack or isinstance(self.stack[-1], _Frame):
                raise NotLowered("a pop outside the loop that pushed it")
            sources = self.stack.pop()
            index = ""
        else:
            if self.popped == 0:
                raise NotLowered("a loop walked back pops more values than it pushed")
            self.popped -= 1
            sources = self.frame.pushes[self.popped]
            index = f"[{self.step}]"
        names = target.elts
        if len(names) != len(sources) or not all(isinstance(n, ast.Name) for n in names):
            raise NotLowered(f"the pop into {ast.unparse(target)!r}")
        for n, source in zip(names, sources, strict=True):
            shape = self.shapes[source]
            self.shapes[n.id] = shape[1:] if index else shape
            self.emit(f"{n.id} = {source}{index}")

    def slot_write(self, target: ast.Subscript, e: ast.expr, op: str | None = "") -> None:
        """``slots[t] = value`` (or ``+=``) at the loop's step or a row known here."""
        if op is None or not isinstance(target.value, ast.Name):
            raise NotLowered(f"the write into {ast.unparse(target)!r}")
        row = self.subscript(target)  # the row's code, checked as a read is
        if not row.code.startswith(f"{target.value.id}["):
            raise NotLowered(f"the write into {ast.unparse(target)!r}")
        value = self.value(e)
        if value.shape != row.shape:
            raise NotLowered(f"the write into {ast.unparse(target)!r} of shape {value.shape}")
        self.write(row.code, row.shape, value, op)

    def write(self, target: str, shape: tuple[int, ...], value: _Value, op: str = "") -> None:
        """``target op= value`` into an array of ``shape``: in a kernel numba compiles,
        as loops over the elements (numba takes seconds to compile a write of an array
        into a slice, or an in-place operator over arrays)."""
        if self.small and shape:
            reads_target = target.partition("[")[0] in WORD.findall(value.code)
            a_view = value.element is None and not re.fullmatch(r"\w+", value.code)
            if value.shape and (a_view or reads_target):
                # an array of its own first: the loops must not read what they write
                value = _Value(self.fresh_copy(value), value.shape)

            def line(index: list[str]) -> str:
                at = ", ".join(index)
                at = f"{target[:-1]}, {at}]" if target.endswith("]") else f"{target}[{at}]"
                return f"{at} {op}= {value.at(_aligned(index, shape, value.shape))}"

            return self.nest(shape, line)
        self.emit(f"{target} {op}= {self.settled(value).code}")

    # -- expressions ------------------------------------------------------------------------

    def value(self, e: ast.expr) -> _Value:
        if isinstance(e, ast.Constant) and type(e.value) in (int, float):
            return _Value(repr(e.value), (), element=_constant(repr(e.value)))
        if isinstance(e, ast.Name):
            if e.id in self.shapes:
                return _Value(e.id, self.shapes[e.id], element=_indexed(e.id))
            raise NotLowered(f"the name {e.id!r}")
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult):
            return self.matmul(self.value(e.left), self.value(e.right))
        if isinstance(e, ast.BinOp) and type(e.op) in BINARY:
            op = BINARY[type(e.op)]
            left, right = self.value(e.left), self.value(e.right)
            shape = _broadcast(left.shape, right.shape)
            p = PRECEDENCE[op]
            if not (left.precedence > p or (left.precedence == p and op != "**")):
                left = _parenthesized(left)
            if not right.precedence > p:
                right = _parenthesized(right)
            form = f"{{}} {op} {{}}"
            code = form.format(left.code, right.code)
            return _Value(code, shape, p, True, _combined(form, shape, left, right))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            inner = self.value(e.operand)
            if inner.precedence < 3:
                inner = _parenthesized(inner)
            return _Value(
                f"-{inner.code}", inner.shape, 3, True, _combined("-{}", inner.shape, inner)
            )
        if isinstance(e, ast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in COMPARE:
            left, right = self.value(e.left), self.value(e.comparators[0])
            shape = _broadcast(left.shape, right.shape)
            form = f"({{}}) {COMPARE[type(e.ops[0])]} ({{}})"
            code = form.format(left.code, right.code)
            return _Value(code, shape, 0, True, _combined(form, shape, left, right))
        if isinstance(e, ast.Attribute):
            return self.attribute(e)
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Call):
            return self.call(e)
        raise NotLowered(f"the expression {ast.unparse(e)!r}")

    def attribute(self, e: ast.Attribute) -> _Value:
        base = self.value(e.value)
        if e.attr == "T":
            code = base.code if base.precedence == 9 else f"({base.code})"
            return _Value(f"{code}.T", base.shape[::-1], element=lambda i: base.at(i[::-1]))
        raise NotLowered(f"the attribute {ast.unparse(e)!r}")

    def subscript(self, e: ast.Subscript) -> _Value:
        if (
            isinstance(e.value, ast.Attribute)
            and e.value.attr == "shape"
            and isinstance(e.slice, ast.Constant)
            and type(e.slice.value) is int
        ):
            shape = self.value(e.value.value).shape
            try:
                return _Value(str(shape[e.slice.value]), ())
            except IndexError:
                raise NotLowered(f"the index {ast.unparse(e)!r}") from None
        base = self.value(e.value)
        if not base.shape or base.precedence != 9:
            raise NotLowered(f"the index {ast.unparse(e)!r}")
        index, row = e.slice, None
        if isinstance(index, ast.Name) and index.id == self.step and index.id is not None:
            row = index.id
        elif isinstance(index, ast.Constant) and type(index.value) is int:
            if not -base.shape[0] <= index.value < base.shape[0]:
                raise NotLowered(f"the index {ast.unparse(e)!r}, out of bounds")
            row = str(index.value % base.shape[0])
        if row is not None:  # a step's row, or a row known here
            return _Value(
                f"{base.code}[{row}]", base.shape[1:], element=lambda i: base.at([row, *i])
            )
        if isinstance(index, ast.Slice) and index.lower is None and index.step is None:
            stop = base.shape[0] if index.upper is None else self.integer(index.upper)
            if stop < 0 or stop > base.shape[0]:
                raise NotLowered(f"the slice {ast.unparse(e)!r}")
            if stop == base.shape[0]:
                return base
            return _Value(f"{base.code}[:{stop}]", (stop, *base.shape[1:]), element=base.at)
        raise NotLowered(f"the index {ast.unparse(e)!r}")

    def call(self, e: ast.Call) -> _Value:
        if e.keywords and not (
            isinstance(e.func, ast.Attribute) and e.func.attr in ("sum", "mean", "reshape")
        ):
            raise NotLowered(f"the call {ast.unparse(e)!r}")
        if isinstance(e.func, ast.Name) and e.func.id == "len" and len(e.args) == 1:
            arg = e.args[0]
            if isinstance(arg, ast.Name) and arg.id in self.ranges:
                return _Value(str(self.ranges[arg.id]), ())
            shape = self.value(arg).shape
            if shape:
                return _Value(str(shape[0]), ())
        if isinstance(e.func, ast.Attribute) and e.func.attr in ("sum", "mean"):
            if isinstance(e.func.value, ast.Name) and e.func.value.id in ("np", "numpy"):
                raise NotLowered(f"the call {ast.unparse(e)!r}")
            operand = self.value(e.func.value)
            total = self.reduce(operand, e.args, e.keywords)
            if e.func.attr == "sum":
                return total
            count = repr(float(math.prod(operand.shape) // max(1, math.prod(total.shape))))
            form = f"{{}} / {count}"
            return _Value(
                form.format(total.code), total.shape, 2, True, _combined(form, total.shape, total)
            )
        if isinstance(e.func, ast.Attribute) and e.func.attr == "reshape":
            return self.reshape(self.value(e.func.value), e.args)
        known = {**vars(builtins), **self.scope, **dict.fromkeys(self.modules, np)}
        function = resolve(e.func, known)
        if function is np.where and len(e.args) == 3:
            parts = [self.value(a) for a in e.args]
            shape = _broadcast(_broadcast(parts[0].shape, parts[1].shape), parts[2].shape)
            if not self.small and shape:  # numpy's, its arguments computed first
                codes = ", ".join(self.settled(p).code for p in parts)
                return _Value(f"np.where({codes})", shape)
            element = _combined("({1} if {0} else {2})", shape, *parts)
            code = f"np.where({', '.join(p.code for p in parts)})" if shape else element([])
            return _Value(code, shape, 9, True, element)
        if function is np.sum and len(e.args) == 1:
            return self.reduce(self.value(e.args[0]), [], e.keywords)
        if function in _FUNCTIONS:
            args = [self.value(a) for a in e.args]
            shape: tuple[int, ...] = ()
            for a in args:
                shape = _broadcast(shape, a.shape)
            form = f"{_FUNCTIONS[function]}({', '.join('{}' for _ in args)})"
            code = form.format(*(a.code for a in args))
            if self.small or not shape:
                return _Value(code, shape, 9, True, _combined(form, shape, *args))
            # a Python kernel: numpy computes the function over the whole array (SIMD),
            # the arithmetic of its arguments first, in one pass
            settled = [self.settled(a) for a in args]
            codes = [a.code for a in settled]
            if len(args) == 1 and settled[0] is not args[0] and settled[0].shape == shape:
                name = self.fresh("u")  # the array the arithmetic made, written over
                self.shapes[name] = shape
                self.emit(f"{name} = {codes[0]}")
                codes = [name, f"out={name}"]
            return _Value(f"{_FUNCTIONS[function]}({', '.join(codes)})", shape)
        raise NotLowered(f"the call {ast.unparse(e)!r}")

    def reduce(self, operand: _Value, args: list[ast.expr], keywords: list[ast.keyword]) -> _Value:
        given = {k.arg: k.value for k in keywords}
        if args or set(given) - {"axis"}:
            raise NotLowered("a sum with other arguments than an axis")
        operand = self.settled(operand)
        code = operand.code if operand.precedence == 9 else f"({operand.code})"
        if not operand.shape:
            return operand
        axis = ast.literal_eval(given["axis"]) if "axis" in given else None
        rank = len(operand.shape)
        axes = range(rank) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        axes = sorted({a % rank for a in axes}, reverse=True)
        if self.small:  # an accumulator in loops over the operand's elements
            kept = [k for k in range(rank) if k not in axes]
            shape = tuple(operand.shape[k] for k in kept)
            total = self.fresh("total")
            self.shapes[total] = shape
            self.emit(f"{total} = np.zeros({shape})" if shape else f"{total} = 0.0")
            if operand.element is None:
                operand = _Value(self.operand(operand, "v"), operand.shape)

            def line(index: list[str]) -> str:
                at = f"[{', '.join(index[k] for k in kept)}]" if kept else ""
                return f"{total}{at} += {operand.at(index)}"

            self.nest(operand.shape, line)
            return _Value(total, shape)
        if len(axes) == rank:
            return _Value(f"{code}.sum()", ())
        shape = list(operand.shape)
        for a in axes:  # one axis at a time, the last first: numba sums along one
            code = f"{code}.sum(axis={a})"
            del shape[a]
        return _Value(code, tuple(shape))

    def reshape(self, base: _Value, args: list[ast.expr]) -> _Value:
        try:
            wanted = [ast.literal_eval(a) for a in args]
            shape = np.empty(base.shape, dtype=bool).reshape(*wanted).shape
        except (ValueError, TypeError):
            raise NotLowered("a reshape to a shape not known") from None
        code = base.code if base.precedence == 9 else f"({base.code})"
        # numba reshapes only contiguous arrays: an argument or a view is made one
        if not re.fullmatch(r"\w+", code) or code in self.params:
            code = f"np.ascontiguousarray({code})"
        reshaped = _Value(f"{code}.reshape({shape})", shape)
        if not self.small:
            return reshaped
        name = self.operand(reshaped, "v")  # a view, once: its elements are read by index
        return _Value(name, shape, element=_indexed(name))

    def matmul(self, a: _Value, b: _Value) -> _Value:
        if not a.shape or not b.shape or len(a.shape) > 2 or len(b.shape) > 2:
            raise NotLowered(f"a matrix product of shapes {a.shape} and {b.shape}")
        inner = a.shape[-1]
        if inner != b.shape[0]:
            raise NotLowered(f"a matrix product of shapes {a.shape} and {b.shape}")
        shape = a.shape[:-1] + b.shape[1:]
        if math.prod(shape) * inner > SMALL_PRODUCT:
            self.large_products = True
        out = self.fresh("t")
        self.shapes[out] = shape
        if not self.small:  # numpy's own (BLAS)
            left, right = (self.settled(o) for o in (a, b))
            codes = [o.code if o.precedence == 9 else f"({o.code})" for o in (left, right)]
            self.emit(f"{out} = {codes[0]} @ {codes[1]}")
            return _Value(out, shape)
        left, right = (
            _Value(self.operand(o, name), o.shape) if o.arithmetic or o.element is None else o
            for o, name in ((a, "a"), (b, "b"))
        )
        self.emit(f"{out} = np.zeros({shape})" if shape else f"{out} = 0.0")
        m = a.shape[0] if len(a.shape) == 2 else None
        n = b.shape[1] if len(b.shape) == 2 else None
        i, k, j, a_ik = self.loop_names  # the names of this loop nest only
        depth = self.depth
        if m is not None:
            self.emit(f"for {i} in range({m}):")
            self.depth += 1
        self.emit(f"for {k} in range({inner}):")
        self.depth += 1
        row = left.at([i, k] if m is not None else [k])
        if n is not None:
            self.emit(f"{a_ik} = {row}")
            self.emit(f"for {j} in range({n}):")
            self.depth += 1
            at = f"{i}, {j}" if m is not None else j
            self.emit(f"{out}[{at}] += {a_ik} * {right.at([k, j])}")
        else:
            at = f"[{i}]" if m is not None else ""
            self.emit(f"{out}{at} += {row} * {right.at([k])}")
        self.depth = depth
        return _Value(out, shape)

    def fresh_copy(self, value: _Value) -> str:
        """``value`` written into a new array, element by element."""
        if value.element is None and not re.fullmatch(r"\w+", value.code):  # a view
            view = self.operand(value, "v")
            value = _Value(view, value.shape, element=_indexed(view))
        name = self.fresh("v")
        self.shapes[name] = value.shape
        self.emit(f"{name} = np.empty({value.shape})")
        self.write(name, value.shape, value)
        return name

    def operand(self, value: _Value, base: str) -> str:
        """A product's operand as a name the loops index."""
        if re.fullmatch(r"\w+", value.code):
            return value.code
        name = self.fresh(base)
        self.bind(name, value)
        return name


#: A pair that loops over the leading axis of arrays (see the module).
lower_loops = _Loops.lower


def _method_of(e: ast.expr, owners: set[str], method: str) -> bool:
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == method
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id in owners
        and not e.keywords
    )


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise NotLowered(f"shapes {a} and {b} do not broadcast") from None


def _indexed(name: str) -> Callable[[list[str]], str]:
    return lambda index: f"{name}[{', '.join(index)}]" if index else name


def _constant(code: str) -> Callable[[list[str]], str]:
    return lambda index: code


def _parenthesized(value: _Value) -> _Value:
    return _Value(
        f"({value.code})",
        value.shape,
        9,
        value.arithmetic,
        lambda index: f"({value.at(index)})",
    )


def _combined(form: str, shape: tuple[int, ...], *parts: _Value) -> Callable[[list[str]], str]:
    """The element of ``form`` over ``parts`` broadcast to ``shape``: each part at
    its own index (its dimensions of one at 0)."""

    def element(index: list[str]) -> str:
        return form.format(*(part.at(_aligned(index, shape, part.shape)) for part in parts))

    return element


def _aligned(index: list[str], shape: tuple[int, ...], own: tuple[int, ...]) -> list[str]:
    """The index into an array of shape ``own`` broadcast to ``shape`` at ``index``."""
    offset = len(shape) - len(own)
    return ["0" if n == 1 else index[offset + k] for k, n in enumerate(own)]
