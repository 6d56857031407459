"""Static shape classes: which values are known to have the same shape and dtype.

Shapes are not known when the compiler runs, but some equalities are: ``np.tanh(x)``
has the shape and dtype of ``x``; ``a * b`` has the shape of ``a`` when ``b`` is a
Python number or has ``a``'s shape itself. (Two scalars may differ in dtype, so
reductions start classes of their own.) Where the
operands of a broadcasting operation are in one class, its gradient needs no
``unbroadcast``: the generated code is shorter and faster.

>>> import ast
>>> from autodiff_tutor.compiler.ir import Step, Program
>>> def name(n):
...     return ast.Name(n, ast.Load())
>>> steps = [
...     Step("t1", ast.parse("np.exp(x)").body[0].value, "primitive", "exp", {"x": name("x")}),
...     Step("t2", ast.parse("t1 * x").body[0].value, "primitive", "multiply",
...          {"x": name("t1"), "y": name("x")}),
... ]
>>> classes = ShapeClasses(Program("f", ["x", "y"], {}, steps, ["t2"], False))
>>> classes.same(name("t2"), name("x")), classes.same(name("t2"), name("y"))
(True, False)
"""

from __future__ import annotations

import ast
from collections import Counter

from autodiff_tutor.compiler.ir import Program

# Elementwise operations of one input: the output has the input's shape and dtype.
ELEMENTWISE_UNARY = {
    "exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan", "arcsin", "arccos",
    "arctan", "sinh", "cosh", "tanh", "abs", "negative", "positive", "square",
}  # fmt: skip
# Broadcasting operations: the output has the operands' shape when they all share it.
ELEMENTWISE_BINARY = {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum"}


class ShapeClasses:
    """Names grouped by provably equal shape and dtype (names assigned once only)."""

    def __init__(self, program: Program):
        steps = program.all_steps()
        counts = Counter(name for step in steps for name in step.defined())
        self.classes: dict[str, str] = {p: p for p in program.params}
        for step in steps:
            if len(step.defined()) != 1 or counts[step.target] != 1:
                continue  # assigned on several paths: no single shape to rely on
            self.classes[step.target] = self._class_of(step) or step.target

    def _class_of(self, step) -> str | None:
        operands = [a for a in step.inputs.values() if isinstance(a, ast.Name)]
        constants = [a for a in step.inputs.values() if isinstance(a, ast.Constant)]
        if step.kind == "copy" and isinstance(step.value, ast.Name):
            return self.classes.get(step.value.id)
        if step.kind != "primitive":
            return None
        if step.op in ELEMENTWISE_UNARY and len(operands) == 1:
            return self.classes.get(operands[0].id)
        if step.op in ELEMENTWISE_BINARY and operands:
            if not all(_is_number(c) for c in constants):
                return None
            found = {self.classes.get(a.id) for a in operands}
            return found.pop() if len(found) == 1 and None not in found else None
        return None

    def same(self, a: ast.expr, b: ast.expr) -> bool:
        """Whether ``a`` and ``b`` provably have the same shape and dtype."""
        if not (isinstance(a, ast.Name) and isinstance(b, ast.Name)):
            return False
        first, second = self.classes.get(a.id), self.classes.get(b.id)
        return first is not None and first == second


def _is_number(node: ast.Constant) -> bool:
    return type(node.value) in (int, float)
