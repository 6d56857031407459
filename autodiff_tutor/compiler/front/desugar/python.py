"""Desugaring of everyday Python into loops and calls the compiler knows.

- ``f = lambda v: ...`` becomes a nested ``def`` (then inlined like any helper);
- ``with cm: body`` becomes ``cm.__enter__()``, the body, ``cm.__exit__(None, None, None)``;
- list comprehensions become a loop appending to a fresh list; a generator or list
  comprehension inside ``sum`` becomes a loop adding to a total, inside ``max``/``min``
  a loop keeping the best so far (ties split the gradient, as ``np.maximum`` does);
- ``sum(xs)``, ``max(xs)``, ``min(xs)`` of a sequence become the same loops, and
  ``max(a, b, c)`` becomes ``max(max(a, b), c)`` (two values: the ``maximum`` rule).
- such a loop in a side Python may skip (``x if c else y``, after ``and``/``or``) goes
  inside an ``if`` that runs it only on that side (:mod:`.front.desugar.lazy`).

Comprehension variables get fresh names, so they never overwrite the function's own
(as in Python 3). Statements kept for their effect (``print``, ``assert``) are left
whole: Python runs them in the forward.

>>> import ast
>>> tree = ast.parse('''
... def f(ws):
...     return sum(np.sum(w ** 2) for w in ws if w.ndim == 2)
... ''').body[0]
>>> names = Names(tree)
>>> print(ast.unparse(ast.Module(LowerPython(names).run(tree.body), [])))
total_1 = 0
for w_2 in ws:
    if w_2.ndim == 2:
        total_1 = total_1 + np.sum(w_2 ** 2)
return total_1
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.code import Names
from autodiff_tutor.compiler.front.desugar import lazy as lazy
from autodiff_tutor.compiler.front.desugar.base import (
    StatementPass,
    assign_like,
    name_node,
    reject,
    rewrite_bodies,
)
from autodiff_tutor.compiler.front.desugar.callees import listed, spread_call, spread_count
from autodiff_tutor.compiler.front.fence import is_fill_diagonal, is_list_append
from autodiff_tutor.compiler.front.lambdas import def_of_lambda
from autodiff_tutor.syntax import copy_tree

COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)
# functions that consume a generator expression at once (so a list gives the same result)
CONSUMERS = {"sum", "max", "min", "any", "all", "list", "tuple", "sorted", "len"}
EFFECTS = (ast.Expr, ast.Assert, ast.Raise)


def lambdas_to_defs(body: list[ast.stmt]) -> list[ast.stmt]:
    """``name = lambda args: expr`` -> ``def name(args): return expr`` (at any depth)."""
    out: list[ast.stmt] = []
    for node in body:
        rewrite_bodies(node, lambdas_to_defs)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Lambda)
        ):
            out.append(def_of_lambda(node.targets[0].id, node.value, node))
            continue
        out.append(node)
    return out


def _diagonal_write(node: ast.Expr) -> ast.Assign:
    """``np.fill_diagonal(a, v)`` -> ``a[np.diag_indices(min(a.shape), a.ndim)] = v``:
    numpy's diagonal (``k < min(a.shape)``, without ``wrap``), as a write."""
    call = node.value
    array, value = call.args
    module = call.func.value
    shape = ast.Attribute(copy_tree(array), "shape", ast.Load())
    size = ast.Call(name_node("min"), [shape], [])
    ndim = ast.Attribute(copy_tree(array), "ndim", ast.Load())
    index = ast.Call(ast.Attribute(copy_tree(module), "diag_indices", ast.Load()), [size, ndim], [])
    target = ast.Subscript(copy_tree(array), index, ast.Store())
    target.described_as = f"{ast.unparse(call.func)}({array.id}, ...)"  # in messages
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([target], value), node))


class LowerPython(StatementPass):
    """Lower ``with``, comprehensions and sequence builtins, statement by statement."""

    def __init__(self, names: Names, builtin=lambda name: True, namespace=None, local=()):
        self.names = names
        self.builtin = builtin  # whether a name means the Python builtin here
        self.namespace = namespace  # the function's globals (model(t, *p): model's arity)
        self.local = set(local)  # the names the function assigns (they hide globals)

    def _statement(self, node: ast.stmt) -> list[ast.stmt]:
        if isinstance(node, ast.With):
            return self._with(node)
        if isinstance(node, ast.Expr) and is_fill_diagonal(node.value):
            return self._statement(_diagonal_write(node))
        if isinstance(node, EFFECTS) and not (
            isinstance(node, ast.Expr) and is_list_append(node.value)
        ):
            return [node]  # Python itself runs it in the forward
        rewrite_bodies(node, self.run)
        before: list[ast.stmt] = []
        if isinstance(node, ast.For):  # map(...), a global dict or set: its items, in a list
            node.iter = listed(node.iter, self.namespace, self.local)
        if isinstance(node, ast.While):
            self._refuse_inside(node.test, "the condition of a while loop")
            return [node]
        if isinstance(node, ast.Expr):  # items.append(element)
            node.value.args[0] = self._expression(node.value.args[0], before, node)
            return [*before, node]
        for field in ("value", "test", "iter"):
            expr = getattr(node, field, None)
            if isinstance(expr, ast.expr):
                setattr(node, field, self._expression(expr, before, node))
        return [*before, node]

    def _with(self, node: ast.With) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        exits: list[ast.stmt] = []
        for item in node.items:
            manager = self.names.fresh("context")
            out.append(assign_like(manager, item.context_expr, node))
            enter = ast.Call(ast.Attribute(name_node(manager), "__enter__", ast.Load()), [], [])
            if item.optional_vars is not None:
                out.append(ast.copy_location(ast.Assign([item.optional_vars], enter), node))
            else:
                out.append(ast.copy_location(ast.Expr(enter), node))
            nones = [ast.Constant(None)] * 3
            leave = ast.Call(ast.Attribute(name_node(manager), "__exit__", ast.Load()), nones, [])
            exits.insert(0, ast.copy_location(ast.Expr(leave), node))
        return [*out, *self.run(node.body), *exits]

    # -- expressions -----------------------------------------------------------------

    def _expression(self, expr: ast.expr, before: list[ast.stmt], at: ast.stmt) -> ast.expr:
        lower = self

        class Lower(lazy.LazySides):
            def side(self, expr: ast.expr) -> lazy.Side:
                statements: list[ast.stmt] = []
                return statements, lower._expression(expr, statements, at)

            def visit_Lambda(self, node: ast.Lambda) -> ast.expr:
                reject(
                    node,
                    "a lambda is supported only assigned to a name and called by that name",
                    "write f = lambda v: ... and call f(...); one passed on (sorted(key=...)) "
                    "or kept in a list of functions is not compiled: call each function by "
                    "its name, or make what varies a parameter",
                )

            def visit_Call(self, node: ast.Call) -> ast.expr:
                count = spread_count(node, lower.namespace, lower.local)
                if count is not None:  # model(t, *p): model(t, p[0], p[1]), p's length checked
                    node = spread_call(node, count, before, at, lower.names.fresh)
                name = node.func.id if isinstance(node.func, ast.Name) else None
                if name is not None and not lower.builtin(name):
                    name = None
                if name in CONSUMERS and len(node.args) == 1:  # sum(map(f, xs)): f(a) each
                    mapped = lower._mapped(node.args[0])
                    if name == "list" and mapped is not node.args[0] and not node.keywords:
                        return self.visit(mapped)  # list(map(f, xs)): the list made here
                    node.args[0] = mapped
                if name in ("sum", "max", "min") and len(node.args) == 1:
                    return lower._reduce(name, node, before, at)
                if name == "sum" and len(node.args) == 2 and not node.keywords:  # a start
                    start = ast.keyword("start", node.args[1])
                    call = ast.Call(node.func, node.args[:1], [start])
                    return lower._reduce(name, ast.copy_location(call, node), before, at)
                if name in ("max", "min") and len(node.args) > 2 and not node.keywords:
                    pair = ast.Call(node.func, node.args[:2], [])
                    for arg in node.args[2:]:
                        pair = ast.Call(copy_tree(node.func), [pair, arg], [])
                    return self.visit(ast.copy_location(pair, node))
                if name in CONSUMERS and node.args and isinstance(node.args[0], ast.GeneratorExp):
                    node.args[0] = lower._list(node.args[0], before, at)
                self.generic_visit(node)
                return node

            def visit_ListComp(self, node: ast.ListComp) -> ast.expr:
                return lower._list(node, before, at)

            def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.expr:
                reject(
                    node,
                    "generator expressions are supported inside sum, max, min, any, all, "
                    "list, tuple and sorted",
                    "write a list comprehension [...] instead",
                )

            def visit_SetComp(self, node: ast.SetComp) -> ast.expr:
                reject(node, "set comprehensions are not supported", "use a list or an array")

        return Lower(before, lambda: self.names.fresh("choice")).visit(expr)

    def _mapped(self, expr: ast.expr) -> ast.expr:
        """``map(f, xs, ys)`` (the builtin, ``f`` a name or a module's function) as the
        comprehension ``[f(a, b) for a, b in zip(xs, ys)]``, where a consumer reads it at
        once (``sum``, ``list``, a loop over ``list(map(...))``), so that each call of
        ``f`` is compiled; ``expr`` itself otherwise."""
        if not (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "map"
            and self.builtin("map")
            and "map" not in self.local
            and len(expr.args) >= 2
            and not expr.keywords
            and isinstance(expr.args[0], (ast.Name, ast.Attribute))
            and not any(isinstance(a, ast.Starred) for a in expr.args)
        ):
            return expr
        function, iterables = expr.args[0], expr.args[1:]
        items = [self.names.fresh("mapped") for _ in iterables]
        call = ast.Call(function, [name_node(i) for i in items], [])
        if len(iterables) == 1:
            target, iterable = name_node(items[0], store=True), iterables[0]
        else:
            target = ast.Tuple([name_node(i, store=True) for i in items], ast.Store())
            iterable = ast.Call(name_node("zip"), list(iterables), [])
        loop = ast.comprehension(target, iterable, [], 0)
        return ast.fix_missing_locations(ast.copy_location(ast.ListComp(call, [loop]), expr))

    def _refuse_inside(self, expr: ast.expr, where: str) -> None:
        for node in ast.walk(expr):
            if isinstance(node, COMPREHENSIONS) or (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("sum", "max", "min")
                and len(node.args) == 1
            ):
                reject(
                    node,
                    f"a comprehension or sum/max/min of a sequence is not supported in {where}",
                    "compute it on its own line first",
                )

    def _loops(
        self, generators: list[ast.comprehension], inner: list[ast.stmt], at: ast.AST
    ) -> tuple[list[ast.stmt], list[ast.stmt]]:
        """Nested loops for ``generators`` around ``inner``; (statements before, loops).

        Each target is renamed fresh in the conditions, the later iterables and ``inner``.
        """
        renames: dict[str, str] = {}
        before: list[ast.stmt] = []
        levels = []
        for generator in generators:
            if generator.is_async:
                reject(generator.iter, "async comprehensions are not supported")
            iterable = _renamed(self._mapped(generator.iter), renames)  # v in map(f, xs)
            for target in ast.walk(generator.target):
                if isinstance(target, ast.Name):
                    renames[target.id] = self.names.fresh(target.id)
            target = _renamed(generator.target, renames)
            conditions = [_renamed(c, renames) for c in generator.ifs]
            levels.append((target, iterable, conditions))
        body = [_renamed(s, renames) for s in inner]
        for target, iterable, conditions in reversed(levels):
            for condition in reversed(conditions):
                body = [ast.copy_location(ast.If(condition, body, []), at)]
            body = [ast.copy_location(ast.For(target, iterable, body, []), at)]
        # the first iterable is read outside the loops; inner ones may use outer targets
        loop = body[0]
        loop.iter = self._expression(loop.iter, before, at)
        return before, body

    def _list(self, node: ast.ListComp | ast.GeneratorExp, before: list, at) -> ast.Name:
        items = self.names.fresh("items")
        append = ast.Call(ast.Attribute(name_node(items), "append", ast.Load()), [node.elt], [])
        inner = [ast.copy_location(ast.Expr(append), at)]
        first, loops = self._loops(node.generators, inner, at)
        loops = self._lower_bodies(loops)
        before += [*first, assign_like(items, ast.List([], ast.Load()), at), *loops]
        return ast.copy_location(name_node(items), node)

    def _reduce(self, name: str, node: ast.Call, before: list, at) -> ast.expr:
        """``sum(...)``, ``max(...)``, ``min(...)`` of one sequence, as a loop."""
        allowed = {"start"} if name == "sum" else set()
        if any(k.arg not in allowed for k in node.keywords):
            reject(node, f"{name}(..., {node.keywords[0].arg}=...) is not supported here")
        argument = node.args[0]
        if name == "sum":
            total = self.names.fresh("total")
            start = node.keywords[0].value if node.keywords else ast.Constant(0)
            before.append(assign_like(total, start, at))
            if isinstance(argument, (ast.ListComp, ast.GeneratorExp)):
                add = ast.BinOp(name_node(total), ast.Add(), argument.elt)
                inner = [assign_like(total, add, at)]
                first, loops = self._loops(argument.generators, inner, at)
                before += [*first, *self._lower_bodies(loops)]
                return ast.copy_location(name_node(total), node)
            sequence = self._sequence(argument, before, at)
            item = self.names.fresh("item")
            add = ast.BinOp(name_node(total), ast.Add(), name_node(item))
            loop = ast.For(name_node(item, True), sequence, [assign_like(total, add, at)], [])
            before.append(ast.copy_location(loop, at))
            return ast.copy_location(name_node(total), node)
        if isinstance(argument, (ast.ListComp, ast.GeneratorExp)):
            sequence: ast.expr = self._list(argument, before, at)
        else:
            sequence = self._sequence(argument, before, at)
        best, k = self.names.fresh(f"{name}imum"), self.names.fresh("k")
        before.append(assign_like(best, ast.Subscript(sequence, ast.Constant(0), ast.Load()), at))
        length = ast.Call(name_node("len"), [copy_tree(sequence)], [])
        bound = ast.Call(name_node("range"), [ast.Constant(1), length], [])
        item = ast.Subscript(copy_tree(sequence), name_node(k), ast.Load())
        pair = ast.Call(name_node(name), [name_node(best), item], [])
        loop = ast.For(name_node(k, True), bound, [assign_like(best, pair, at)], [])
        before.append(ast.copy_location(loop, at))
        return ast.copy_location(name_node(best), node)

    def _sequence(self, argument: ast.expr, before: list, at) -> ast.expr:
        """A name or subscript holding ``argument`` (computed once, before the loop)."""
        argument = self._expression(argument, before, at)
        if isinstance(argument, (ast.Name, ast.Subscript, ast.Attribute)):
            return argument
        held = self.names.fresh("sequence")
        before.append(assign_like(held, argument, at))
        return name_node(held)

    def _lower_bodies(self, loops: list[ast.stmt]) -> list[ast.stmt]:
        """Comprehensions nested in the element are lowered inside the loops."""
        for loop in loops:
            loop.body = self.run(loop.body)
        return loops


def _renamed(node: ast.AST, renames: dict[str, str]) -> ast.AST:
    node = copy_tree(node)
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in renames:
            child.id = renames[child.id]
    return node
