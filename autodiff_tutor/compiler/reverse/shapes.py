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

from autodiff_tutor.compiler.ir import Program
from autodiff_tutor.rules.record import ELEMENTWISE
from autodiff_tutor.rules.registry import lookup


def is_elementwise(op: str | None) -> bool:
    """Whether ``op``'s record has the shape class ``ELEMENTWISE``: its output has the
    shape and dtype its array operands share.

    >>> is_elementwise("tanh"), is_elementwise("clip"), is_elementwise("sum")
    (True, False, False)
    """
    rule = lookup(op) if op is not None else None
    return rule is not None and rule.shape == ELEMENTWISE


class ShapeClasses:
    """Names grouped by provably equal shape and dtype (names assigned once only)."""

    def __init__(self, program: Program):
        steps, counts = program.all_steps(), program.bindings()
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
        if not (is_elementwise(step.op) and operands):
            return None
        if not all(_is_number(c) for c in constants):
            return None
        found = {self.classes.get(a.id) for a in operands}
        return found.pop() if len(found) == 1 and None not in found else None

    def same(self, a: ast.expr, b: ast.expr) -> bool:
        """Whether ``a`` and ``b`` provably have the same shape and dtype."""
        if not (isinstance(a, ast.Name) and isinstance(b, ast.Name)):
            return False
        first, second = self.classes.get(a.id), self.classes.get(b.id)
        return first is not None and first == second


def _is_number(node: ast.Constant) -> bool:
    return type(node.value) in (int, float)
