"""Desugaring of helpers defined inside the differentiated function: each call is
replaced by the helper's body, its names made fresh (they may call each other;
recursion is refused).

>>> import ast
>>> tree = ast.parse('''
... def f(x):
...     def square(v):
...         return v * v
...     return square(x) + 1
... ''').body[0]
>>> print(ast.unparse(InlineNested(Names(tree)).run(tree.body)))
square_v_1 = x
square_out_2 = square_v_1 * square_v_1
return square_out_2 + 1
"""

from __future__ import annotations

import ast
import copy

from autodiff_tutor.compiler.s2_desugar_base import Names, assign_like, name_node, reject


class InlineNested:
    """Inline calls to functions defined inside the differentiated function."""

    def __init__(self, names: Names):
        self.names = names
        self.helpers: dict[str, ast.FunctionDef] = {}
        self.inlining: list[str] = []

    def run(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for node in body:
            if isinstance(node, ast.FunctionDef):
                self._check_helper(node)
                self.helpers[node.name] = node
                continue
            out.extend(self._statement(node))
        return out

    def _check_helper(self, node: ast.FunctionDef) -> None:
        if node.decorator_list or node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            reject(node, "nested helpers must be plain functions with positional parameters")
        returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
        if len(returns) != 1 or node.body[-1] is not returns[0]:
            reject(node, "a nested helper must end with its only return statement")

    def _statement(self, node: ast.stmt) -> list[ast.stmt]:
        for field in ("body", "orelse"):
            if isinstance(getattr(node, field, None), list):
                setattr(node, field, self.run(getattr(node, field)))
        if not self.helpers:
            return [node]
        before: list[ast.stmt] = []
        helpers = self

        class Replace(ast.NodeTransformer):
            def visit_Call(self, call: ast.Call) -> ast.expr:
                self.generic_visit(call)
                if isinstance(call.func, ast.Name) and call.func.id in helpers.helpers:
                    if isinstance(node, ast.While):
                        reject(call, "call nested helpers before the loop, not in its condition")
                    out_name, statements = helpers._inline(helpers.helpers[call.func.id], call)
                    before.extend(statements)
                    return ast.copy_location(name_node(out_name), call)
                return call

        targets = [node.test] if isinstance(node, (ast.If, ast.While)) else [node]
        if isinstance(node, (ast.If, ast.While)):
            node.test = Replace().visit(node.test)
        elif not isinstance(node, (ast.For,)):
            Replace().visit(node)
        _ = targets
        return [*before, node]

    def _inline(self, helper: ast.FunctionDef, call: ast.Call) -> tuple[str, list[ast.stmt]]:
        params = [a.arg for a in helper.args.args]
        defaults = dict(
            zip(
                params[len(params) - len(helper.args.defaults) :], helper.args.defaults, strict=True
            )
        )
        values = dict(zip(params, call.args, strict=False))
        for keyword in call.keywords:
            values[keyword.arg] = keyword.value
        assigned = {
            n.id
            for n in ast.walk(helper)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        local = {
            name: self.names.fresh(f"{helper.name}_{name}")
            for name in sorted(set(params) | assigned)
        }
        statements: list[ast.stmt] = []
        for param in params:
            value = values.get(param, defaults.get(param))
            if value is None:
                reject(call, f"missing argument {param!r} for {helper.name}")
            statements.append(assign_like(local[param], copy.deepcopy(value), call))

        class Rename(ast.NodeTransformer):
            def visit_Name(self, name: ast.Name) -> ast.Name:
                if name.id in local:
                    return ast.copy_location(ast.Name(local[name.id], name.ctx), name)
                return name

        body = [Rename().visit(copy.deepcopy(s)) for s in helper.body]
        result = self.names.fresh(f"{helper.name}_out")
        body[-1] = assign_like(result, body[-1].value, call)
        for statement in body:  # errors point at the call: the helper's lines are inlined
            for child in ast.walk(statement):
                if hasattr(child, "lineno"):
                    ast.copy_location(child, call)
        if helper.name in self.inlining:
            reject(call, f"{helper.name!r} calls itself: recursion is not supported")
        self.inlining.append(helper.name)
        for statement in body:  # helpers may call other nested helpers
            statements.extend(self._statement(statement))
        self.inlining.pop()
        return result, statements
