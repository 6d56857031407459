"""Normalization of calls to a function with a derivative rule: the call's arguments
bound to the rule's inputs and options, by position or keyword, with numpy's defaults
(``np.mean(x, 1, None, None, True)`` is ``np.mean(x, axis=1, keepdims=True)``); options
the rule restricts are checked where they are written, and a method's trailing
arguments keep their form (``x.reshape(2, 3)``). Each call is one primitive step.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.rule_calls``.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(x):
...     return np.sum(np.mean(x, 1, None, None, True) * x.reshape(2, 3))
>>> print(front_end(f).program.source())
def f(x):
    t1 = np.mean(x, axis=1, keepdims=True)
    t2 = x.reshape(2, 3)
    t3 = t1 * t2
    out = np.sum(t3)
    return out
>>> [(s.op, sorted(s.inputs), sorted(s.options)) for s in front_end(f).program.steps[:2]]
[('mean', ['x'], ['axis', 'keepdims']), ('reshape', ['x'], ['shape'])]
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.front.normalize.resolve import Callee
from autodiff_tutor.compiler.ir import ValueRefusal
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.rules.record import HELPER
from autodiff_tutor.rules.registry import Rule


class RuleCalls(Part):
    """Calls bound to their derivative rule's inputs and options."""

    def rule_call(self, node: ast.Call, target: str | None, callee: Callee, rule: Rule) -> ast.Name:
        params = rule.signature_parameters()
        positional: list[ast.expr] = list(node.args)
        receiver = callee.receiver
        if rule.op == "einsum" and len(positional) > 3 and not node.keywords:
            return self.normalizer.einsum.einsum_in_pairs(node, target, callee)
        if rule.op == "einsum" and len(positional) == 2 and not node.keywords:
            return self.normalizer.einsum.einsum_of_one(node, target, callee)
        if receiver is not None:
            positional.insert(0, receiver)
        if len(positional) > len(params) or len(positional) < len(rule.inputs):
            self.check_leading(node, rule, positional)  # np.einsum of three operands
        bound: dict[str, ast.expr] = {}
        names = _positional_names(callee.obj) if receiver is None else None
        if names is not None and len(positional) > len(rule.inputs):
            node = self._options_by_keyword(node, callee, rule, names)
            positional = list(node.args)
        for param, arg in zip(params, positional, strict=False):
            bound[param] = arg
        extra = positional[len(params) :]
        if extra:
            if receiver is None or not params or params[-1] in rule.inputs:
                self.normalizer.expressions.refuse(
                    extra[0], f"too many arguments for {callee.description}", ""
                )
            last = params[-1]  # x.reshape(2, 3): the last option takes the rest
            bound[last] = ast.Tuple(elts=[bound[last], *extra], ctx=ast.Load())
        for keyword in node.keywords:
            if keyword.arg not in params:
                self.normalizer.expressions.refuse(
                    keyword.value,
                    f"the keyword '{keyword.arg}=' of {callee.description} is not supported",
                    f"supported arguments: {', '.join(params)}",
                )
            bound[keyword.arg] = keyword.value
        for param, default in rule.defaults.items():  # norm.cdf(x): loc=0.0, scale=1.0
            bound.setdefault(param, ast.Constant(default))
        missing = [p for p in rule.inputs if p not in bound]
        if missing:
            self.normalizer.expressions.refuse(
                node,
                f"{callee.description} is missing {', '.join(missing)}",
                f"write them in the call, by position: {callee.description}"
                f"({', '.join(rule.inputs)})",
            )
        self._check_options(node, rule, bound)
        for p in rule.inputs if not (rule.sequence or rule.shape == HELPER) else ():
            listed = self.normalizer.calls.is_list_value(bound[p])
            if listed and self.normalizer.carries_gradient(bound[p]):  # numpy would stack it
                bound[p] = self.normalizer.conversions.stacked(bound[p], node, callee)
        inputs = {p: self._input_operand(bound[p], rule) for p in rule.inputs}
        kept = len(self.normalizer.static_operands)
        options = {
            p: self.normalizer.calls.static_operand(bound[p], f"'{p}'")
            for p in rule.options
            if p in bound
        }
        if isinstance(receiver, ast.Name) and len(self.normalizer.static_operands) > kept:
            self._read_as_method(receiver, node.func.attr)
        lowered = {**inputs, **options}
        value = self._rebuild_call(node, callee, lowered, params, receiver is not None)
        return self.normalizer.calls.primitive(
            target, value, rule.op, list(inputs.values()), options, node, inputs
        )

    def _options_by_keyword(
        self, node: ast.Call, callee: Callee, rule: Rule, names: list[tuple[str, Any]]
    ) -> ast.Call:
        """The call with its options passed by keyword, named as the function names its
        positions (``np.mean(x, 1, None, None, True)``: ``axis=1, keepdims=True``; dtype
        and out at their defaults are dropped)."""
        keywords = list(node.keywords)
        params = rule.signature_parameters()
        kept = len(rule.inputs)  # np.astype(x, dtype, /): a positional-only option stays
        while kept < min(len(node.args), len(names), len(params)) and (
            names[kept][2] is inspect.Parameter.POSITIONAL_ONLY and names[kept][0] == params[kept]
        ):
            kept += 1
        for index, arg in enumerate(node.args[kept:], start=kept):
            if index >= len(names):
                self.normalizer.expressions.refuse(
                    arg, f"too many arguments for {callee.description}", ""
                )
            name, default, _ = names[index]
            if name in rule.options:
                keywords.append(ast.keyword(name, arg))
            elif not (isinstance(arg, ast.Constant) and arg.value is default):
                self.normalizer.expressions.refuse(
                    arg,
                    f"the argument {name!r} of {callee.description} is not supported here",
                    f"supported arguments: {', '.join(rule.signature_parameters())}",
                )
        call = ast.Call(node.func, list(node.args[:kept]), keywords)
        return ast.copy_location(call, node)

    def check_leading(self, node: ast.Call, rule: Rule, positional: list[ast.expr]) -> None:
        """A call with more or fewer arrays than its rule takes: the rule's check of its
        leading inputs says what the rule covers (einsum's subscripts), when it can."""
        leading = dict(zip(rule.inputs, positional, strict=False))
        if rule.check is not None and set(rule.checked_parameters()) <= set(leading):
            self._check_options(node, rule, leading)

    def _check_options(self, node: ast.Call, rule: Rule, bound: dict[str, ast.expr]) -> None:
        """Options a rule restricts (svd's ``full_matrices``) must be literals the rule
        covers; an input it checks (einsum's ``subscripts``) is checked when literal."""
        if rule.check is None:
            return
        values = dict(rule.options)
        for name in rule.checked_parameters():
            if name in bound:
                try:
                    values[name] = ast.literal_eval(bound[name])
                except ValueError:
                    if name in rule.inputs:
                        return  # a computed input: the rule checks it when it runs
                    self.normalizer.expressions.refuse(
                        bound[name],
                        f"the option '{name}' must be a literal here, so the compiler can "
                        "check that its derivative rule covers it",
                        f"write the value of '{name}' directly in the call",
                    )
        try:
            rule.check_options(values)
        except AutodiffError as error:
            located = type(error)(error.message, self.normalizer.parsed.location(node), error.hint)
            raise ValueRefusal(located) from None

    def _rebuild_call(
        self,
        node: ast.Call,
        callee: Callee,
        lowered: dict[str, ast.expr],
        params: list[str],
        method: bool,
    ) -> ast.Call:
        """The user's call with its operands replaced by the lowered atoms."""
        positional_params = params[: len(node.args) + int(method)]
        values = [lowered[p] for p in positional_params if p in lowered]
        func = node.func if callee.receiver is not None else self.normalizer.rename(node.func)
        if method:
            receiver, values = values[0], values[1:]
            func = ast.Attribute(value=receiver, attr=node.func.attr, ctx=ast.Load())
            if isinstance(lowered.get(params[-1]), ast.Tuple) and len(node.args) > 1:
                values = list(lowered[params[-1]].elts)  # x.reshape(2, 3) keeps its form
        keywords = [ast.keyword(k.arg, lowered[k.arg]) for k in node.keywords]
        return ast.Call(func=func, args=values, keywords=keywords)

    def _input_operand(self, node: ast.expr, rule: Rule) -> ast.expr:
        if not rule.sequence:
            return self.normalizer.atom(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return type(node)(elts=[self.normalizer.atom(e) for e in node.elts], ctx=ast.Load())
        version = self.normalizer.current.get(node.id) if isinstance(node, ast.Name) else None
        if version in self.normalizer.list_names:
            return ast.Name(version, ast.Load())
        self.normalizer.expressions.refuse(
            node, f"{rule.op} needs a list here", "write [a, b, ...] or build a list with append"
        )

    def _read_as_method(self, receiver: ast.Name, method: str) -> None:
        """The refused option of ``r.method(...)`` just kept: ``r`` was read as an array,
        and may be a module the compiler could not see."""
        operand = self.normalizer.static_operands[-1]
        operand.what += f" of {receiver.id}.{method}(...), read as an array method,"
        operand.hint = (
            f"if {receiver.id!r} is a module, give the parameter a default ({receiver.id}=np) "
            f"or call np.{method}(...); else compute it from values you do not differentiate"
        )


def _positional_names(function: Any) -> list[tuple[str, Any, Any]] | None:
    """The (name, default, kind) of each parameter ``function`` takes by position, when its
    signature can be read (numpy's functions), else None; None too when named
    parameters are followed by ``*varargs`` (``np.gradient(f, *varargs)``): its rule's
    options then take the positions, and its check refuses what they do not cover."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = []
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL and names:
            return None
        if parameter.kind not in positional:
            break
        names.append((parameter.name, parameter.default, parameter.kind))
    return names
