"""Normalization of control flow: branches, loops and conditional expressions.

Inside a branch or a loop body the usual versions apply; at the end of each body
*copy-backs* assign one canonical version per changed name, so that after the join
(or at the next iteration) every path agrees on the name. A loop is normalized
again when it turns out a carried value carries gradient.

Part of :mod:`autodiff_tutor.compiler.normalize` (a mixin of its normalizer).
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.fence import is_list_append
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Step


class FlowMixin:
    """Lowering of ``if``, ``for``, ``while`` and ``a if c else b``."""

    def _block(self, statements: list[ast.stmt]) -> list[Node]:
        outer, computed = self.steps, dict(self.computed)
        self.steps = []
        for statement in statements:
            self._statement(statement)
        block, self.steps = self.steps, outer
        self.computed = computed  # values computed in the block are not there after it
        return block

    def _restore(self, versions: dict[str, str]) -> None:
        self.current.clear()  # in place: the resolver holds this dict
        self.current.update(versions)

    def _if(self, node: ast.If) -> None:
        test = self._condition(node.test)
        entry = dict(self.current)
        body = self._block(node.body)
        after_body = dict(self.current)
        self._restore(entry)
        orelse = self._block(node.orelse)
        after_else = dict(self.current)
        self._restore(entry)
        canonical = self._merge(node, [(body, after_body), (orelse, after_else)], entry)
        self.steps.append(Branch(test, body, orelse, canonical, node))

    def _merge(self, node: ast.AST, paths: list, entry: dict[str, str]) -> list[str]:
        """Give each name a path changed one version after the join (copy-backs)."""
        names = [
            n
            for n in dict.fromkeys(k for _, v in paths for k in v)
            if any(v.get(n) != entry.get(n) for _, v in paths)
        ]
        canonical = []
        for name in names:
            version = self._version_name(name)
            for block, versions in paths:
                if name in versions:
                    self._copy_back(block, version, versions[name], node)
                else:  # never assigned on this path: reading it would fail, as in Python
                    self._unbound(block, version, node)
            self.current[name] = version
            canonical.append(version)
        return canonical

    def _unbound(self, block: list[Node], target: str, node: ast.AST) -> None:
        step = Step(target, ast.Name("unbound", ast.Load()), "static", copy_back=True, origin=node)
        step.synthetic = True
        block.append(step)
        self.emitted.append(step)

    def _copy_back(self, block: list[Node], target: str, source: str, node: ast.AST) -> None:
        kind = "copy" if source in self.varied else "static"
        step = Step(target, ast.Name(source, ast.Load()), kind, copy_back=True, origin=node)
        step.synthetic = True
        if source in self.list_names:
            self.list_names.add(target)
        block.append(step)
        self.emitted.append(step)
        if kind == "copy":
            self.varied.add(target)

    def _condition(self, test: ast.expr) -> str:
        return self._emit(Step(None, self._rename(test), "static"), test).id

    def _if_expression(self, node: ast.IfExp, target: str | None) -> ast.Name:
        """``a if c else b``: a branch whose two paths assign one name."""
        test = self._condition(node.test)
        target = target or self._fresh()
        paths = []
        for value in (node.body, node.orelse):
            outer, computed, self.steps = self.steps, dict(self.computed), []
            atom = self._atom(value)
            block, self.steps, self.computed = self.steps, outer, computed
            paths.append((block, atom))
        for block, atom in paths:
            if isinstance(atom, ast.Constant):
                step = Step(target, atom, "static", copy_back=True, origin=self.origin)
                step.synthetic = True
                block.append(step)
                self.emitted.append(step)
            else:
                self._copy_back(block, target, atom.id, node)
        self.taken.add(target)
        self.steps.append(Branch(test, paths[0][0], paths[1][0], [target], node))
        return ast.Name(target, ast.Load())

    def _loop(self, node: ast.For | ast.While) -> None:
        """A loop; retried until the names that carry gradient across iterations are known."""
        for _ in range(4):
            snapshot = self._snapshot()
            carried_varied = self._loop_once(node)
            if carried_varied <= snapshot["varied"]:
                return
            self._rollback(snapshot)
            self.varied |= carried_varied
        self._reject(node, "the gradient flow of this loop could not be resolved", "")

    def _loop_once(self, node: ast.For | ast.While) -> set[str]:
        assigned = _assigned_names(node.body)
        if isinstance(node, ast.For):
            assigned.discard(node.target.id)
        entry = dict(self.current)
        carried: dict[str, str] = {}
        for name in sorted(assigned):  # copy-in: the version a body iteration starts from
            version = self._version_name(name)
            if name in entry:
                self._lower(ast.Name(entry[name], ast.Load()), target=version)
                self.emitted[-1].synthetic = True
                if entry[name] in self.list_names:
                    self.list_names.add(version)
            else:  # first assigned in the body: unbound before the first iteration
                step = Step(version, ast.Name("unbound", ast.Load()), "static", origin=node)
                step.synthetic = True
                self._emit(step)
            carried[name] = version
            self.current[name] = version
        loop = Loop(node.__class__.__name__.lower(), [], [], origin=node)
        if isinstance(node, ast.For):
            if not isinstance(node.target, ast.Name):
                self._reject(node.target, "the loop variable must be a name", "")
            loop.iterations = self._emit(
                Step(None, self._rename(node.iter), "static"), node.iter
            ).id
            loop.index = self._version_name(node.target.id)
            self.current[node.target.id] = loop.index
        else:
            loop.test = self._rename(node.test)
            loop.counter = self._fresh("count")
        self.loop_stack.append(id(node))
        body = self._block(node.body)
        self.loop_stack.pop()
        after = dict(self.current)
        for name in sorted(assigned):
            if name in after and after[name] != carried[name]:
                self._copy_back(body, carried[name], after[name], node)
        loop.body = body
        loop.canonical = [carried[n] for n in sorted(carried)]
        self._restore({**entry, **carried})
        if loop.index is not None:
            self.current[node.target.id] = loop.index
        self.steps.append(loop)
        return {c for c in loop.canonical if c in self.varied}

    def _snapshot(self) -> dict:
        return {
            "steps": list(self.steps),
            "emitted": list(self.emitted),
            "current": dict(self.current),
            "varied": set(self.varied),
            "taken": set(self.taken),
            "temp_count": self.temp_count,
            "lists": set(self.list_names),
            "writes": list(self.pending_writes),
            "computed": dict(self.computed),
        }

    def _rollback(self, snapshot: dict) -> None:
        self.steps[:] = snapshot["steps"]
        self.emitted[:] = snapshot["emitted"]
        self._restore(snapshot["current"])
        self.varied = snapshot["varied"]
        self.taken = snapshot["taken"]
        self.temp_count = snapshot["temp_count"]
        self.list_names = snapshot["lists"]
        self.pending_writes = snapshot["writes"]
        self.computed = snapshot["computed"]


def _assigned_names(statements: list[ast.stmt]) -> set[str]:
    """User names a block assigns (including by append and y[i] = ...)."""
    names = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name):
                    names.add(node.value.id)
            elif is_list_append(node) if isinstance(node, ast.expr) else False:
                names.add(node.func.value.id)
    return names
