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

from autodiff_tutor.compiler.code import Names, root_name
from autodiff_tutor.compiler.front.desugar import lazy as lazy
from autodiff_tutor.compiler.front.desugar.base import (
    assign_like,
    name_node,
    only_called,
    reject,
    rewrite_bodies,
)
from autodiff_tutor.compiler.front.desugar.returns import rewrite_returns
from autodiff_tutor.syntax import copy_tree

_COMPREHENSIONS = {
    ast.DictComp: "dict comprehension",
    ast.SetComp: "set comprehension",
    ast.ListComp: "list comprehension",
    ast.GeneratorExp: "generator expression",
}


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
                out.extend(self._defaults_now(node))
                self.helpers[node.name] = node
                continue
            out.extend(self._statement(node))
        return out

    def _defaults_now(self, node: ast.FunctionDef) -> list[ast.stmt]:
        """Python evaluates a helper's defaults where the ``def`` runs (``def g(v, k=k)``
        keeps the ``k`` of that moment): each default that is not a constant is read
        into a name of its own there, and the inlined calls read that name."""
        taken = []
        for param, default in _defaults(node).items():
            if isinstance(default, ast.Constant):
                continue
            held = self.names.fresh(f"{node.name}_{param}_default")
            taken.append(assign_like(held, default, node))
            node.held_defaults = {**getattr(node, "held_defaults", {}), param: name_node(held)}
        return taken

    def _check_helper(self, node: ast.FunctionDef) -> None:
        if node.decorator_list or node.args.vararg or node.args.kwarg:
            reject(
                node,
                "nested helpers take named parameters only (no decorators, *args or **kwargs)",
                "pass the values one by one, or define the helper at module level",
            )
        inner = next(
            (n for n in ast.walk(node) if isinstance(n, ast.FunctionDef) and n is not node), None
        )
        if inner is not None:
            reject(
                inner,
                f"a helper defined inside the nested helper {node.name!r} is not supported",
                f"define {inner.name!r} next to {node.name!r} (in the function), or at module "
                "level",
            )
        returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
        if not returns or any(r.value is None for r in returns):
            _refuse_a_setter(node)
            reject(
                next((r for r in returns if r.value is None), node),
                f"the nested helper {node.name!r} must return a value: the compiler inlines "
                "its result where it is called",
                "return what it computes (return v), or write its statements in place of the call",
            )
        if len(returns) != 1 or node.body[-1] is not returns[0]:  # early returns
            node.body = rewrite_returns(node.body, self.names)

    def _statement(self, node: ast.stmt) -> list[ast.stmt]:
        rewrite_bodies(node, self.run)
        if not self.helpers:
            return [node]
        replace = _Replace(self, node)
        if isinstance(node, (ast.If, ast.While)):
            node.test = replace.visit(node.test)
        elif isinstance(node, ast.For):  # the iterable is computed once, before the loop
            node.iter = replace.visit(node.iter)
        elif isinstance(node, ast.Assert) and node.msg is not None:
            node.test = replace.visit(node.test)
            message = replace.side(node.msg)  # evaluated only when the assertion fails
            return [*replace.before, *lazy.assertion(node.test, message, node)]
        else:
            replace.visit(node)
        return [*replace.before, node]

    def _inline(self, helper: ast.FunctionDef, call: ast.Call) -> tuple[str, list[ast.stmt]]:
        params = [a.arg for a in helper.args.args + helper.args.kwonlyargs]
        defaults = {**_defaults(helper), **getattr(helper, "held_defaults", {})}
        values = _nested_arguments(helper, params, call)
        assigned = {
            n.id
            for n in ast.walk(helper)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        local = {
            name: self.names.fresh(f"{helper.name}_{name}")
            for name in sorted(set(params) | assigned)
        }
        self.names.written_as.update({made: name for name, made in local.items()})
        statements: list[ast.stmt] = []
        passed: dict[str, ast.expr] = {}
        for param in params:
            given = values.get(param)
            dotted = root_name(given) is not None  # a name, or a dotted name (np.tanh)
            if dotted and param not in assigned and only_called(helper, param):
                passed[param] = given  # a function passed by name: called by that name
                continue
            value = values.get(param, defaults.get(param))
            if value is None:
                reject(call, f"missing argument {param!r} for {helper.name}")
            statements.append(assign_like(local[param], copy_tree(value), call))

        class Rename(ast.NodeTransformer):
            def visit_Name(self, name: ast.Name) -> ast.expr:
                if name.id in passed:
                    return ast.copy_location(copy_tree(passed[name.id]), name)
                if name.id in local:
                    return ast.copy_location(ast.Name(local[name.id], name.ctx), name)
                return name

        body = [Rename().visit(copy_tree(s)) for s in helper.body]
        result = self.names.fresh(f"{helper.name}_out")
        body[-1] = assign_like(result, body[-1].value, call)
        for statement in body:  # errors point at the call: the helper's lines are inlined
            for child in ast.walk(statement):
                if hasattr(child, "lineno"):
                    ast.copy_location(child, call)
        if helper.name in self.inlining:
            reject(
                call,
                f"{getattr(helper, 'said_as', helper.name)!r} calls itself: recursion is not "
                "supported",
                "write the recursion as a loop (the compiler inlines the functions it "
                "calls, and unrolls no recursion)",
            )
        self.inlining.append(helper.name)
        for statement in body:  # helpers may call other nested helpers
            statements.extend(self._statement(statement))
        self.inlining.pop()
        return result, statements


def _defaults(helper: ast.FunctionDef) -> dict[str, ast.expr]:
    """The default of each parameter that has one, keyword-only ones included."""
    params = [a.arg for a in helper.args.args]
    positional = params[len(params) - len(helper.args.defaults) :]
    keywords = [a.arg for a in helper.args.kwonlyargs]
    return {
        **dict(zip(positional, helper.args.defaults, strict=True)),
        **{k: d for k, d in zip(keywords, helper.args.kw_defaults, strict=True) if d is not None},
    }


def _nested_arguments(helper: ast.FunctionDef, params: list[str], call: ast.Call) -> dict:
    """The call's arguments by parameter name; anything Python would bind otherwise
    (``**opts``, an unknown or repeated keyword, too many arguments) is refused, never
    dropped (the helper's defaults would then stand in for it, silently)."""
    name = helper.name  # (a '*' argument is refused before, by LowerPython)
    positional = len(helper.args.args)  # then the keyword-only ones (def g(v, *, k=1.0))
    if len(call.args) > positional:
        reject(call.args[positional], f"too many arguments for {name} ({positional} positional)")
    values = dict(zip(params, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg is None:
            reject(
                keyword.value,
                f"'**' unpacking into the nested helper {name!r} is not supported",
                f"pass the entries by name: {name}(..., key=opts['key'])",
            )
        if keyword.arg not in params:
            reject(keyword.value, f"{name} has no parameter {keyword.arg!r}")
        if keyword.arg in values:
            reject(keyword.value, f"{name} got two values for its parameter {keyword.arg!r}")
        values[keyword.arg] = keyword.value
    return values


class _Replace(lazy.LazySides):
    """Each call of a nested helper in one statement becomes the name of its result;
    the helper's body is collected in ``before``, to run before the statement. A side
    Python may skip (of ``a if c else b``, ``and``, ``or``) keeps its helpers' bodies:
    they run only when Python evaluates that side (:mod:`.front.desugar.lazy`)."""

    def __init__(self, inliner: InlineNested, statement: ast.stmt):
        super().__init__([], lambda: inliner.names.fresh("choice"))
        self.inliner = inliner
        self.statement = statement

    def side(self, expr: ast.expr) -> lazy.Side:
        inner = _Replace(self.inliner, self.statement)
        value = inner.visit(expr)
        return inner.before, value

    def visit_DictComp(self, comprehension: ast.expr) -> ast.expr:
        """Not lowered to a loop yet (a dict comprehension): the helper's body
        cannot go before the statement, where the loop variables are unbound."""
        for call in ast.walk(comprehension):
            name = getattr(call.func, "id", "") if isinstance(call, ast.Call) else ""
            if name in self.inliner.helpers:
                reject(
                    call,
                    f"the nested helper {name!r} is called inside a "
                    f"{_COMPREHENSIONS[type(comprehension)]}, which the compiler "
                    "cannot inline it into",
                    "build it with a for loop, or call the helper on the values first",
                )
        return comprehension

    visit_SetComp = visit_ListComp = visit_GeneratorExp = visit_DictComp

    def visit_Call(self, call: ast.Call) -> ast.expr:
        self.generic_visit(call)
        if isinstance(call.func, ast.Name) and call.func.id in self.inliner.helpers:
            if isinstance(self.statement, ast.While):
                reject(call, "call nested helpers before the loop, not in its condition")
            helper = self.inliner.helpers[call.func.id]
            out_name, statements = self.inliner._inline(helper, call)
            self.before.extend(statements)
            return ast.copy_location(name_node(out_name), call)
        return call


def _refuse_a_setter(helper: ast.FunctionDef) -> None:
    """A method that returns nothing and sets attributes of its object
    (``def eval_mode(self): self.training = False``), called for that effect: refused
    with what happens and what works."""
    arguments = helper.args.posonlyargs + helper.args.args
    if not arguments:
        return
    receiver = arguments[0].arg
    written = next(
        (
            n
            for n in ast.walk(helper)
            if isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Name)
            and n.value.id == receiver
        ),
        None,
    )
    if written is None:
        return
    said = getattr(helper, "said_as", helper.name)
    reject(
        helper,
        f"the method {said!r} is called for what it sets on its object "
        f"({receiver}.{written.attr} = ...) and returns nothing: the compiler inlines a "
        "called method's result, and keeps writes into an object's attributes only in "
        "the differentiated method itself",
        f"write the assignment in the differentiated method ({receiver}.{written.attr} = "
        f"...), or call {said}() before taking the gradient",
    )
