"""Normalization of ``np.einsum`` calls the two-operand rule does not bind directly:
three or more operands become two-operand einsums in turn, one operand the sum,
transpose, trace or diagonal it is. Each is one primitive step at the user's line;
the plans come from the einsum record's module, so tracing makes the same steps.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.einsum``.
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.front.normalize.resolve import Callee
from autodiff_tutor.rules.einsum_plans import einsum_in_pairs, einsum_of_one
from autodiff_tutor.rules.registry import lookup


def _literal(node: ast.expr) -> str | None:
    """The subscripts when written as a literal string."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


class Einsum(Part):
    """``np.einsum`` of one operand, or of three or more, as the steps it is."""

    def einsum_in_pairs(self, node: ast.Call, target: str | None, callee: Callee) -> ast.Name:
        """``np.einsum('ij,jk,kl->il', a, b, c)``: two-operand einsums in turn (one
        primitive step each, at the user's line); refused by the rule's check when the
        subscripts are not literal letters."""
        subscripts = _literal(node.args[0])
        pairs = einsum_in_pairs(subscripts) if subscripts is not None else None
        if pairs is None or len(pairs) != len(node.args) - 2:
            self.normalizer.rule_calls.check_leading(node, lookup("einsum"), list(node.args))
            self.normalizer.expressions.refuse(
                node, f"too many arguments for {callee.description}", ""
            )
        left = self.normalizer.atom(node.args[1])
        for k, (spec, operand) in enumerate(zip(pairs, node.args[2:], strict=True)):
            right = self.normalizer.atom(operand)
            value = ast.Call(
                self.normalizer.rename(node.func), [ast.Constant(spec), left, right], []
            )
            inputs = {"subscripts": ast.Constant(spec), "x": left, "y": right}
            name = target if k == len(pairs) - 1 else None
            left = self.normalizer.calls.primitive(
                name, value, "einsum", [left, right], {}, node, inputs
            )
        return left

    def einsum_of_one(self, node: ast.Call, target: str | None, callee: Callee) -> ast.Name:
        """``np.einsum('ij->j', a)``: the sum, transpose, trace or diagonal it is (one
        primitive step each, at the user's line)."""
        subscripts = _literal(node.args[0])
        steps = einsum_of_one(subscripts) if subscripts is not None else None
        if steps is None or not isinstance(node.func, ast.Attribute):
            self.normalizer.rule_calls.check_leading(node, lookup("einsum"), list(node.args))
            self.normalizer.expressions.refuse(node, f"{callee.description} is missing y", "")
        module = self.normalizer.rename(node.func.value)
        current = self.normalizer.atom(node.args[1])
        for k, (op, options) in enumerate(steps):
            keywords = [ast.keyword(name, ast.Constant(v)) for name, v in options.items()]
            value = ast.Call(ast.Attribute(module, op, ast.Load()), [current], keywords)
            given = {name: ast.Constant(v) for name, v in options.items()}
            name = target if k == len(steps) - 1 else None
            current = self.normalizer.calls.primitive(
                name, value, op, [current], given, node, {"x": current}
            )
        return current
