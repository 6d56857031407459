"""Normalization of expressions that may carry gradient: operators, attributes,
subscripts, calls and displays, each lowered to one step with its operands as atoms.
An attribute names its primitive (``a.T`` is ``transpose``) or a field of a tuple
result (``.eigenvalues`` of ``np.linalg.eigh(a)`` reads item 0). What cannot be
differentiated is kept as the user wrote it, with a refusal that activity raises only
when a value it reads carries gradient for the ``wrt`` asked.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.expressions``.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(a, i):
...     w = np.linalg.eigh(a).eigenvalues
...     return np.sum(-w[i] * a.T)
>>> print(front_end(f).program.source())
def f(a, i):
    t1 = np.linalg.eigh(a)
    w = t1[0]
    t2 = w[i]
    t3 = -t2
    t4 = a.T
    t5 = t3 * t4
    out = np.sum(t5)
    return out
>>> [s.op for s in front_end(f).program.steps]
['eigh', 'getitem', 'getitem', 'negative', 'transpose', 'multiply', 'sum']
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.front.names import as_written
from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.ir import Step, ValueRefusal
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.rules import names as opnames
from autodiff_tutor.rules.registry import lookup


class Expressions(Part):
    """Expressions lowered to steps, one operation each."""

    def _result_field(self, base: ast.expr, attr: str) -> ast.Constant | None:
        """The index of a named field of a primitive's tuple result (``.eigenvalues`` of
        ``np.linalg.eigh(a)``: 0), when ``base`` was made by that primitive here."""
        made = [
            s for s in self.normalizer.emitted if isinstance(base, ast.Name) and s.target == base.id
        ]
        rule = lookup(made[-1].op) if made and made[-1].kind == "primitive" else None
        fields = rule.fields if rule is not None else ()
        return ast.Constant(fields.index(attr)) if attr in fields else None

    def lower(self, node: ast.expr, target: str | None) -> ast.Name:
        """Emit the steps computing ``node`` into the name ``target``."""
        if isinstance(node, (ast.Name, ast.Constant)):
            value = self.normalizer.rename(node)
            kind = "copy" if self.normalizer.is_varied(value) else "static"
            return self.normalizer.emit(Step(target, value, kind))
        popped_from = self.normalizer.stack_steps.stack_of(node, "pop")
        if popped_from:  # a gradient function's memory
            return self.normalizer.stack_steps.stack_pop(node, popped_from, target)
        if not self.normalizer.carries_gradient(node):
            return self.normalizer.emit(Step(target, self.normalizer.rename(node), "static"))
        try:
            return self._lower_carrying(node, target)
        except ValueRefusal as refusal:  # an error only if this wrt makes it carry gradient
            return self._refused(node, target, refusal)

    def _refused(self, node: ast.expr, target: str | None, refusal: ValueRefusal) -> ast.Name:
        """The user's expression computed as it is, with the refusal activity raises when
        a value it reads carries gradient for the ``wrt`` asked."""
        value = self.normalizer.rename(node)
        reads = sorted(
            {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & self.normalizer.may_carry
        )
        inputs = {f"arg{i}": ast.Name(name, ast.Load()) for i, name in enumerate(reads)}
        step = Step(target, value, "opaque", inputs=inputs, refusal=refusal.error)
        step.description = ast.unparse(node)
        return self.normalizer.emit(step, node)

    def _as_written(self, node: ast.expr) -> str:
        """``node`` as the user wrote it (a name the compiler reads through a stand-in,
        such as ``xp__user``, gets its own name back)."""
        return as_written(ast.unparse(node), self.normalizer.parsed.aliases)

    def refuse(self, node: ast.AST, message: str, hint: str) -> None:
        """Refuse a value the compiler cannot differentiate (deferred to activity)."""
        raise ValueRefusal(
            UnsupportedSyntaxError(message, self.normalizer.parsed.location(node), hint=hint)
        )

    def _is_list_append(self, node: ast.expr) -> bool:
        """``ys + [v]`` of a list ``ys`` built here (how a generated gradient function,
        compiled again, writes ``ys.append(v)``)."""
        return (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and isinstance(node.left, ast.Name)
            and self.normalizer.current.get(node.left.id) in self.normalizer.list_names
            and isinstance(node.right, ast.List)
            and len(node.right.elts) == 1
            and not isinstance(node.right.elts[0], ast.Starred)
        )

    def _lower_carrying(self, node: ast.expr, target: str | None) -> ast.Name:
        """The steps of an expression that may carry gradient."""
        if self._is_list_append(node):  # ys + [v]: ys.append(v) as a new list
            base, item = self.normalizer.atom(node.left), self.normalizer.atom(node.right.elts[0])
            value = ast.BinOp(base, ast.Add(), ast.List([item], ast.Load()))
            appended = self.normalizer.calls.primitive(
                target, value, "list_append", [], {}, node, {"xs": base, "x": item}
            )
            self.normalizer.list_names.add(appended.id)
            return appended
        if isinstance(node, ast.BinOp):
            left, right = self.normalizer.atom(node.left), self.normalizer.atom(node.right)
            op = opnames.BINARY_OPERATORS.get(type(node.op), type(node.op).__name__)
            value = ast.BinOp(left=left, op=node.op, right=right)
            return self.normalizer.calls.primitive(target, value, op, [left, right], {}, node)
        if isinstance(node, ast.UnaryOp):
            operand = self.normalizer.atom(node.operand)
            op = opnames.UNARY_OPERATORS[type(node.op)]
            value = ast.UnaryOp(op=node.op, operand=operand)
            return self.normalizer.calls.primitive(target, value, op, [operand], {}, node)
        if isinstance(node, ast.Attribute):
            base = self.normalizer.atom(node.value)
            op = opnames.op_of_attribute(node.attr)
            value = ast.Attribute(value=base, attr=node.attr, ctx=ast.Load())
            if op is None:
                index = self._result_field(base, node.attr)
                if index is None:
                    what = f"the attribute '.{node.attr}' is not differentiable"
                    self.refuse(node, what, opnames.attribute_hint())
                item = ast.Subscript(base, index, ast.Load())  # res.eigenvalues is res[0]
                return self.normalizer.calls.primitive(
                    target, item, "getitem", [base], {"index": index}, node
                )
            return self.normalizer.calls.primitive(target, value, op, [base], {}, node)
        if isinstance(node, ast.Subscript):
            if self.normalizer.resolver.computes_from_index(node.value):  # np.r_[x, c]: a call
                obj = self.normalizer.resolver.subscripted(node.value)[1]
                what = f"{self._as_written(node.value)}[...]"
                self.refuse(
                    node,
                    f"{what} computes a value from its index, which carries gradient here; "
                    "the compiler does not differentiate it",
                    opnames.index_object_hint(obj, node.slice, getattr(node.value, "attr", "")),
                )
            base = self.normalizer.atom(node.value)
            # helper(x)["loss"]: a position
            index = self.normalizer.calls.returned_key(base, node.slice)
            index = index or self.normalizer.calls.static_operand(node.slice, "an index")
            value = ast.Subscript(value=base, slice=index, ctx=ast.Load())
            name = self.normalizer.calls.primitive(
                target, value, "getitem", [base], {"index": index}, node
            )
            if self.normalizer.calls.holds_lists(base):  # rows[i] of rows.append(cols): a list
                self.normalizer.list_names.add(name.id)
            return name
        if isinstance(node, ast.Call):
            return self.normalizer.calls.call(node, target)
        if isinstance(node, ast.IfExp):
            return self.normalizer.flow.if_expression(node, target)
        if isinstance(node, ast.BoolOp):
            word = "or" if isinstance(node.op, ast.Or) else "and"
            self.refuse(
                node,
                f"'{word}' used as a value picks one of its operands: its gradient is not "
                "differentiated here",
                "write the choice explicitly, e.g. 'x if x else y' for 'x or y'",
            )
        if isinstance(node, (ast.List, ast.Tuple)):
            items = ast.List([self.normalizer.atom(e) for e in node.elts], ast.Load())
            # a tuple stays a tuple (isinstance and type say so); its gradient is a list
            value = ast.Tuple(items.elts, ast.Load()) if isinstance(node, ast.Tuple) else items
            name = self.normalizer.calls.primitive(
                target, value, "make_list", [], {}, node, {"xs": items}
            )
            self.normalizer.list_names.add(name.id)
            return name
        self.refuse(node, f"{type(node).__name__} cannot be differentiated here", "")
