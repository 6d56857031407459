"""Normalization of the memory stack, so that a generated gradient function can be
differentiated again (second derivatives through branches and loops).

A gradient function's forward pushes what its backward needs on a
:class:`~autodiff_tutor.runtime.stack.Stack` (``stack.push([t3, x_2])``) and the
backward pops it (``t3, x_2 = stack.pop()``). Read again, these become steps of their
own: a *push* passes gradient from the values pushed to the stack, a *pop* from the
stack to the values popped, so the stack is one more value that carries gradient.
Its adjoint is a stack of gradients, its tangent a stack of tangents (see
:mod:`.reverse.adjoint` and :mod:`.forward_mode.tangent`). A
:class:`~autodiff_tutor.runtime.stack.PathStack` holds what decides the path (branch
tests, counts): its pushes and pops are kept in the forward, never differentiated.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.stack_steps``.

>>> import numpy as np
>>> from autodiff_tutor.runtime.stack import Stack
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(x):
...     stack = Stack()
...     stack.push([np.sin(x)])
...     (s,) = stack.pop()
...     return np.sum(s * x)
>>> print(front_end(f).program.source())
def f(x):
    stack__user = Stack()
    t1 = np.sin(x)
    t2 = [t1]
    stack__user.push(t2)
    t3 = stack__user.pop()
    s = t3[0]
    t4 = s * x
    out = np.sum(t4)
    return out
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.ir import Step
from autodiff_tutor.runtime.stack import PathStack, Stack

STACK_CLASSES = {Stack: "values", PathStack: "path"}


class StackSteps(Part):
    """Lowering of ``Stack()``, ``stack.push(...)`` and ``stack.pop()``."""

    def stack_kind_made(self, value: ast.expr) -> str | None:
        """``"values"`` or ``"path"`` when ``value`` makes a new stack."""
        if not (isinstance(value, ast.Call) and not value.args and not value.keywords):
            return None
        made = self.normalizer.effects.global_callee(value.func)
        return STACK_CLASSES.get(made) if isinstance(made, type) else None

    def stack_of(self, call: ast.expr, method: str) -> str | None:
        """The version of the stack ``call`` pushes on or pops from (``stack.push(v)``)."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            return None
        receiver = call.func.value
        if call.func.attr != method or not isinstance(receiver, ast.Name):
            return None
        version = self.normalizer.current.get(receiver.id)
        return version if version in self.normalizer.stacks else None

    def new_stack(self, version: str, value: ast.expr, kind: str) -> None:
        self.normalizer.stacks[version] = kind
        self.normalizer.emit(
            Step(version, self.normalizer.rename(value), "static", op=kind, stack=version)
        )

    def stack_push(self, call: ast.Call, stack: str) -> None:
        """``stack.push(values)``: the values computed into one name, then pushed."""
        if len(call.args) != 1 or call.keywords:
            self.normalizer.reject(call, "a stack's push takes one value", "")
        pushed = self.normalizer.atom(call.args[0])
        value = ast.Call(
            ast.Attribute(ast.Name(stack, ast.Load()), "push", ast.Load()), [pushed], []
        )
        kind = self.normalizer.stacks[stack]
        step = Step(self.normalizer.fresh("push"), value, "push", op=kind, stack=stack)
        step.inputs = {"values": pushed}
        self.normalizer.emit(step, call)

    def stack_pop(self, call: ast.Call, stack: str, target: str | None) -> ast.Name:
        """``stack.pop()``: what was pushed last (a list of values, for a value stack)."""
        if call.args or call.keywords:
            self.normalizer.reject(call, "a stack's pop takes no arguments", "")
        value = ast.Call(ast.Attribute(ast.Name(stack, ast.Load()), "pop", ast.Load()), [], [])
        popped = self.normalizer.emit(
            Step(target, value, "pop", op=self.normalizer.stacks[stack], stack=stack), call
        )
        if self.normalizer.stacks[stack] == "values":  # may carry gradient, as a list of items
            self.normalizer.may_carry.add(popped.id)
            self.normalizer.list_names.add(popped.id)
        return popped
