"""Normalization of control flow: branches, loops and conditional expressions.

Inside a branch or a loop body the usual versions apply; at the end of each body
*copy-backs* assign one canonical version per changed name, so that after the join
(or at the next iteration) every path agrees on the name. A loop is lowered once:
which of its carried names may carry gradient is found first, on the user's syntax.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.flow``.
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.front.desugar.base import augmented_value
from autodiff_tutor.compiler.front.fence import is_list_append
from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Step


class Flow(Part):
    """Lowering of ``if``, ``for``, ``while`` and ``a if c else b``."""

    def _block(self, statements: list[ast.stmt]) -> list[Node]:
        outer, computed = self.normalizer.steps, dict(self.normalizer.computed)
        if _writes_in_place(statements):  # r += v may change what an earlier rows[1] read:
            computed.clear()  # no value read before is reused in the block or after it
            self.normalizer.computed.clear()
        self.normalizer.steps = []
        for statement in statements:
            self.normalizer.statement(statement)
        block, self.normalizer.steps = self.normalizer.steps, outer
        self.normalizer.computed = computed  # values computed in the block are not there after it
        return block

    def _restore(self, versions: dict[str, str]) -> None:
        self.normalizer.current.clear()  # in place: the resolver holds this dict
        self.normalizer.current.update(versions)

    def if_statement(self, node: ast.If) -> None:
        test = self._condition(node.test)
        entry = dict(self.normalizer.current)
        body = self._block(node.body)
        after_body = dict(self.normalizer.current)
        self._restore(entry)
        orelse = self._block(node.orelse)
        after_else = dict(self.normalizer.current)
        self._restore(entry)
        canonical = self._merge(node, [(body, after_body), (orelse, after_else)], entry)
        self.normalizer.steps.append(Branch(test, body, orelse, canonical, node))

    def _merge(self, node: ast.AST, paths: list, entry: dict[str, str]) -> list[str]:
        """Give each name a path changed one version after the join (copy-backs)."""
        names = [
            n
            for n in dict.fromkeys(k for _, v in paths for k in v)
            if any(v.get(n) != entry.get(n) for _, v in paths)
        ]
        canonical = []
        for name in names:
            version = self.normalizer.version_name(name)
            for block, versions in paths:
                if name in versions:
                    self.copy_back(block, version, versions[name], node)
                else:  # never assigned on this path: reading it would fail, as in Python
                    unbound = Step(version, ast.Name("unbound", ast.Load()), "static", origin=node)
                    self._joined(block, unbound)
            self.normalizer.current[name] = version
            canonical.append(version)
        return canonical

    def _joined(self, block: list[Node], step: Step) -> None:
        """A copy the compiler makes at the end of a path, for the join after it."""
        step.synthetic = step.copy_back = True
        block.append(step)
        self.normalizer.emitted.append(step)

    def copy_back(self, block: list[Node], target: str, source: str, node: ast.AST) -> None:
        kind = "copy" if source in self.normalizer.may_carry else "static"
        step = Step(target, ast.Name(source, ast.Load()), kind, origin=node)
        if source in self.normalizer.list_names:
            self.normalizer.list_names.add(target)
        if source in self.normalizer.layout_unsure:
            self.normalizer.layout_unsure[target] = self.normalizer.layout_unsure[source]
        self._joined(block, step)
        if kind == "copy":
            self.normalizer.may_carry.add(target)

    def _condition(self, test: ast.expr) -> str:
        return self.normalizer.emit(Step(None, self.normalizer.rename(test), "static"), test).id

    def if_expression(self, node: ast.IfExp, target: str | None) -> ast.Name:
        """``a if c else b``: a branch whose two paths assign one name."""
        test = self._condition(node.test)
        target = target or self.normalizer.fresh()
        paths = []
        for value in (node.body, node.orelse):
            outer, computed = self.normalizer.steps, dict(self.normalizer.computed)
            self.normalizer.steps = []
            atom = self.normalizer.atom(value)
            paths.append((self.normalizer.steps, atom))
            self.normalizer.steps, self.normalizer.computed = outer, computed
        for block, atom in paths:
            if isinstance(atom, ast.Constant):
                origin = self.normalizer.origin
                self._joined(block, Step(target, atom, "static", origin=origin))
            else:
                self.copy_back(block, target, atom.id, node)
        self.normalizer.taken.add(target)
        self.normalizer.steps.append(Branch(test, paths[0][0], paths[1][0], [target], node))
        return ast.Name(target, ast.Load())

    def loop(self, node: ast.For | ast.While) -> None:
        """A loop, lowered once: the names it carries from one iteration to the next that
        may carry gradient are known before its body is normalized (:meth:`_carried`)."""
        assigned = _assigned_names(node.body) & _read_names(self.normalizer.tree)
        if isinstance(node, ast.For):
            assigned.discard(node.target.id)
        may_carry = self._carried(node.body, assigned)
        self._loop_once(node, assigned, may_carry)

    def _carried(self, body: list[ast.stmt], assigned: set[str]) -> frozenset[str]:
        """The user names assigned in ``body`` that may carry gradient in some iteration:
        a fixpoint over the body's assignments (a value computed late in one iteration
        is read early in the next)."""
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for value, targets in _assignments(body):
                new = (targets & assigned) - found
                if new and self.normalizer.carries_gradient(value, frozenset(found)):
                    found |= new
                    changed = True
        return frozenset(found)

    def _loop_once(
        self, node: ast.For | ast.While, assigned: set[str], may_carry: frozenset[str]
    ) -> None:
        entry = dict(self.normalizer.current)
        carried: dict[str, str] = {}
        for name in sorted(assigned):  # copy-in: the version a body iteration starts from
            version = self.normalizer.version_name(name)
            if name in entry:
                self.normalizer.expressions.lower(ast.Name(entry[name], ast.Load()), target=version)
                self.normalizer.emitted[-1].synthetic = True
                if entry[name] in self.normalizer.list_names:
                    self.normalizer.list_names.add(version)
            else:  # first assigned in the body: unbound before the first iteration
                step = Step(version, ast.Name("unbound", ast.Load()), "static", origin=node)
                step.synthetic = True
                self.normalizer.emit(step)
            carried[name] = version
            self.normalizer.current[name] = version
            if name in may_carry:
                self.normalizer.may_carry.add(version)
        loop = Loop(node.__class__.__name__.lower(), [], [], origin=node)
        if isinstance(node, ast.For):  # its target a name (see loop)
            loop.iterations = self.normalizer.emit(
                Step(None, self.normalizer.rename(node.iter), "static"), node.iter
            ).id
            loop.index = self.normalizer.version_name(node.target.id)
            self._index_kept_when_empty(node.target, loop.index)
            self.normalizer.current[node.target.id] = loop.index
        else:
            loop.test = self.normalizer.rename(node.test)
            loop.counter = self.normalizer.fresh("count")
        self.normalizer.loop_stack.append(id(node))
        body = self._block(node.body)
        self.normalizer.loop_stack.pop()
        after = dict(self.normalizer.current)
        for name in sorted(assigned):
            if name in after and after[name] != carried[name]:
                if after[name] in self.normalizer.may_carry and name not in may_carry:
                    self.normalizer.reject(
                        node, "the gradient flow of this loop could not be resolved", ""
                    )
                self.copy_back(body, carried[name], after[name], node)
        loop.body = body
        loop.canonical = [carried[n] for n in sorted(carried)]
        self._restore({**entry, **carried})
        if loop.index is not None:
            self.normalizer.current[node.target.id] = loop.index
        self.normalizer.steps.append(loop)

    def _index_kept_when_empty(self, target: ast.Name, index: str) -> None:
        """A nested ``for`` loop that runs no time leaves its variable as it was: its
        index's version starts as the name's value before the loop, since the enclosing
        loop copies the index out of each of its iterations (Python's rule; that copy
        would otherwise read a name never bound). A value that carries gradient is not
        copied (an index never carries gradient), and neither is one outside a loop
        (nothing copies it out there)."""
        before = self.normalizer.current.get(target.id)
        if (
            not self.normalizer.loop_stack
            or before is None
            or self.normalizer.carries_gradient(target)
        ):
            return
        self.normalizer.expressions.lower(ast.Name(before, ast.Load()), target=index)
        self.normalizer.emitted[-1].synthetic = True


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
            elif isinstance(node, ast.expr) and is_list_append(node):
                names.add(node.func.value.id)
    return names


def _read_names(tree: ast.AST) -> set[str]:
    """The names a function reads anywhere (``z += v`` reads ``z``): a name assigned in
    a loop but never read needs no copy from one iteration to the next (the index of a
    nested loop that may not run: its copy would read a name never bound).

    >>> sorted(_read_names(ast.parse("for j in r: s += x")))
    ['r', 's', 'x']
    """
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    } | {
        node.target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
    }


def _assignments(statements: list[ast.stmt]) -> list[tuple[ast.expr, set[str]]]:
    """(value, user names it is stored in) for every assignment in a block, nested ones
    included: ``x = v``, ``x += v``, ``y[i] = v``, ``ys.append(v)``, ``a, b = v``."""
    found = []
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {
                    n.id
                    for t in targets
                    for n in ast.walk(t)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                }
                names |= {t.value.id for t in targets if _is_element(t)}
                # h += v reads h too: h = h + v
                value = augmented_value(node) if isinstance(node, ast.AugAssign) else node.value
                found.append((value, names))
            elif isinstance(node, ast.expr) and is_list_append(node):
                found.append((node.args[0], {node.func.value.id}))
    return found


def _writes_in_place(statements: list[ast.stmt]) -> bool:
    """Whether a block may change an array or a list in place: ``z += v``,
    ``y[i] = v``, ``ys.append(v)``.

    >>> _writes_in_place(ast.parse("r += 1.0").body), _writes_in_place(ast.parse("r = r + 1").body)
    (True, False)
    """
    return any(
        isinstance(node, ast.AugAssign)
        or (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store))
        or (isinstance(node, ast.expr) and is_list_append(node))
        for statement in statements
        for node in ast.walk(statement)
    )


def _is_element(target: ast.expr) -> bool:
    return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
