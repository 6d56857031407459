"""Stage 3, normalize: one operation per statement, with readable names.

``h = np.tanh(X @ W + b)`` becomes ``t1 = X @ W``, ``t2 = t1 + b``,
``h = np.tanh(t2)``. Each step records which primitive it is (resolved through the
function's globals, so ``np.tanh``, ``xp.tanh`` and ``cupy.tanh`` are all ``tanh``),
which operands are its rule's inputs and which are options (``axis=1``).

Names the user assigns twice get a fresh version (``x``, then ``x_2``), so every
value the backward pass needs still has a name. Expressions that never carry
gradient (``x.shape[0]``, ``x > 0``) stay whole; the others are lowered step by step
(:mod:`.front.normalize.expressions`, calls in :mod:`.front.normalize.calls`).

The normalizer holds the state of one function's normalization and one part per kind
of construct (expressions, calls, rule calls, conversions, einsum, flow, writes,
aliases, effects, stack steps), each an object of its own module that reaches the
state and the other parts through ``self.normalizer``: what a part calls says where
it lives (``self.normalizer.calls.call(...)``).

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(X, W, b):
...     h = np.tanh(X @ W + b)
...     return np.sum(h * h)
>>> print(front_end(f).program.source())
def f(X, W, b):
    t1 = X @ W
    t2 = t1 + b
    h = np.tanh(t2)
    t3 = h * h
    out = np.sum(t3)
    return out
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from autodiff_tutor.compiler.front.fence import is_list_append
from autodiff_tutor.compiler.front.normalize.aliases import Aliases
from autodiff_tutor.compiler.front.normalize.calls import Calls
from autodiff_tutor.compiler.front.normalize.conversions import Conversions
from autodiff_tutor.compiler.front.normalize.effects import Effects
from autodiff_tutor.compiler.front.normalize.einsum import Einsum
from autodiff_tutor.compiler.front.normalize.expressions import Expressions
from autodiff_tutor.compiler.front.normalize.flow import Flow
from autodiff_tutor.compiler.front.normalize.resolve import Resolver
from autodiff_tutor.compiler.front.normalize.rule_calls import RuleCalls
from autodiff_tutor.compiler.front.normalize.stacks import StackSteps
from autodiff_tutor.compiler.front.normalize.updates import drop_needless_checks
from autodiff_tutor.compiler.front.normalize.writes import Writes
from autodiff_tutor.compiler.front.source import ParsedFunction, as_load
from autodiff_tutor.compiler.ir import Node, Program, StaticOperand, Step
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.runtime.helpers_indexing import check_in_place
from autodiff_tutor.syntax import copy_tree

NO_GRADIENT_ATTRIBUTES = {"shape", "ndim", "dtype", "size"}


def normalize(parsed: ParsedFunction, tree: ast.FunctionDef) -> Program:
    """Normalize the desugared ``tree`` of ``parsed``, for any choice of ``wrt``.

    Which values *may* carry gradient is decided from the parameters alone (any of
    them might be differentiated); activity analysis later picks the ones that do.
    """
    return _Normalizer(parsed, tree).run()


class _Normalizer:
    """The normalization of one function: the state its parts share (the versions of
    the user's names, the steps so far, what may carry gradient, ...), the steps of
    statements and names, and one object per kind of construct, each in its module
    (``self.expressions``, ``self.calls``, ...), which reads and fills that state."""

    def __init__(self, parsed: ParsedFunction, tree: ast.FunctionDef):
        self.parsed = parsed
        self.tree = tree
        self.params = [a.arg for a in self.tree.args.posonlyargs + self.tree.args.args]
        self.params += [a.arg for a in self.tree.args.kwonlyargs]
        self.current: dict[str, str] = {p: p for p in self.params}  # user name -> version
        # names that may carry gradient for some wrt: every parameter, and what they reach
        self.may_carry: set[str] = set(self.params)
        self.static_operands: list[StaticOperand] = []  # checked by activity, per wrt
        self.steps: list[Node] = []  # the block being filled (a body of a branch or loop)
        self.emitted: list[Step] = []  # every step so far, in order
        self.list_names: set[str] = set()
        self.stacks: dict[str, str] = {}  # version of a memory stack -> "values" | "path"
        self.pending_writes: list[tuple] = []  # in-place writes to check at the end
        # a gradient function read again: the array its check_in_place(y, ...) names,
        # updated by the assignment that follows (y_2 = y + v, augmented again)
        self.checked_update: str | None = None
        self.view_of: dict[str, tuple[str, Step]] = {}  # version -> (its base, the view step)
        # ys[k] op= v: the entry read -> (the list, the item it is where known, or None)
        self.list_entries: dict[str, tuple[str, str | None]] = {}
        self.shares_tests: dict[tuple, str] = {}  # (view, base, block) -> shares_memory test
        self.spread_versions: set[str] = set()  # versions a write gave its views and aliases
        # version -> the update (z += v) after which it may be laid out unlike the user's
        self.layout_unsure: dict[str, ast.AugAssign] = {}
        self.layout_blocked: dict[str, ast.AugAssign] = {}  # write -> update that kept it
        self.computed: dict[tuple, str] = {}  # (op, value) -> the temporary holding it
        self.variable_of: dict[str, str] = {p: p for p in self.params}  # version -> user name
        self.loop_stack: list[int] = []  # the loops enclosing the step being emitted
        self.taken = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)}
        self.taken |= set(self.params)
        # a name the desugaring made -> the name it was made from (f_2 -> f)
        self.made_from: dict[str, str] = getattr(tree, "made_from", {})
        self.resolver = Resolver(parsed, self.current, self.user_name)
        self.origin: ast.AST = self.tree
        self.temp_count = 0
        self.expressions = Expressions(self)
        self.calls = Calls(self)
        self.rule_calls = RuleCalls(self)
        self.conversions = Conversions(self)
        self.einsum = Einsum(self)
        self.flow = Flow(self)
        self.writes = Writes(self)
        self.aliases = Aliases(self)
        self.effects = Effects(self)
        self.stack_steps = StackSteps(self)

    def run(self) -> Program:
        outputs: list[str] | None = None
        returns_tuple, return_node = False, None
        body = self.tree.body
        for statement in body:
            self.origin = statement
            if isinstance(statement, ast.Return):
                outputs, returns_tuple = self._return(statement)
                return_node = statement
                break
            self.statement(statement)
        if outputs is None:
            raise UnsupportedSyntaxError(
                f"{self.tree.name!r} has no return statement",
                self.parsed.location(self.tree),
                hint="return the value to differentiate",
            )
        self.writes.check_writes()
        drop_needless_checks(self.emitted, self.resolver.evaluate)
        return Program(
            name=self.tree.name,
            params=self.params,
            defaults=_defaults(self.parsed),
            steps=self.steps,
            outputs=outputs,
            returns_tuple=returns_tuple,
            origin_of_return=return_node,
            namespace=self.resolver.namespace,
            list_names=self.list_names,
            static_operands=self.static_operands,
            output_keys=getattr(self.tree, "output_keys", None),
            static_globals=getattr(self.tree, "static_globals", ()),
            user_names={n: self.user_name(n) for n in self.variable_of | self.made_from},
        )

    def statement(self, node: ast.stmt) -> None:
        self.origin = node
        if isinstance(node, ast.If):
            self.flow.if_statement(node)
        elif isinstance(node, (ast.For, ast.While)):
            self.flow.loop(node)
        elif isinstance(node, ast.Expr) and self.stack_steps.stack_of(node.value, "push"):
            self.stack_steps.stack_push(node.value, self.stack_steps.stack_of(node.value, "push"))
        elif isinstance(node, ast.Expr) and is_list_append(node.value):
            self.writes.append(node.value)
        elif isinstance(node, ast.Expr) and self._runtime_in_place_check(node):
            self.checked_update = node.value.args[0].id  # see _runtime_in_place_check
        elif isinstance(node, ast.Pass) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ):
            return  # a docstring or 'pass'
        elif isinstance(node, ast.Expr) and getattr(node, "written", None):
            self.writes.kept_write(node)  # self.nfev += 1: store_attribute(self_object, ...)
        elif isinstance(node, (ast.Expr, ast.Assert, ast.Raise)):
            self.effects.effect(node)  # print(...), assert, raise: run in the forward only
        elif isinstance(node, ast.Return):
            self.reject(node, "a return here is not supported", "return at the end")
        elif isinstance(node, ast.AugAssign) and self._is_list_entry(node.target):
            self.writes.entry_in_place(node)  # rows[k] *= v: the array rows[k] holds changes
        elif isinstance(node, ast.AugAssign):
            right = node.value
            old = None
            if isinstance(node.target, ast.Name):
                right = self.atom(node.value)  # the right side is read before the write
                self.writes.check_in_place(node)
                old = self.current[node.target.id]
            value = ast.BinOp(left=as_load(node.target), op=node.op, right=right)
            self.assign(node.target, ast.copy_location(value, node))
            if old is not None:
                self._mark_augmented(self.current[node.target.id], old)
                # views and aliases see the write
                if not isinstance(node.value, ast.Constant):  # z + 1.0 keeps z's layout
                    self.layout_unsure[self.current[node.target.id]] = node
                self.aliases.spread_write(old, self.current[node.target.id], node)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, node.value)
        elif isinstance(node, ast.Assign):
            checked, self.checked_update = self.checked_update, None
            old = self.current.get(checked) if checked is not None else None
            self.assign(node.targets[0], node.value)
            if old is not None and isinstance(node.targets[0], ast.Name):
                self._mark_augmented(self.current[node.targets[0].id], old)

    def _runtime_in_place_check(self, node: ast.Expr) -> bool:
        """Whether ``node`` is the forward's ``check_in_place(y, '+=', v)`` of the
        runtime (in a gradient function read again for a second derivative): the
        update it checks is the assignment that follows, whose step is marked
        ``augmented`` again, so the check is made again where that update runs."""
        call = node.value  # its name may be the one emit gave it beside a user's name
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            return False
        if len(call.args) != 3 or not isinstance(call.args[0], ast.Name):
            return False
        try:
            return self.resolver.evaluate(call.func) is check_in_place
        except UnsupportedSyntaxError:
            return False

    def _mark_augmented(self, version: str, old: str) -> None:
        """The step computing ``version = old op v`` from ``y op= v``: numpy updates
        the array in place, keeping its dtype and shape, which the forward checks
        (``check_in_place``) where the compiled code makes a new version."""
        for step in reversed(self.emitted):
            if step.target == version:
                value = step.value
                if isinstance(value, ast.BinOp) and isinstance(value.left, ast.Name):
                    step.augmented = value.left.id == old
                return

    def assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name) and self.stack_steps.stack_kind_made(value):
            version = self.version_name(target.id)
            self.stack_steps.new_stack(version, value, self.stack_steps.stack_kind_made(value))
            self.current[target.id] = version
        elif isinstance(target, ast.Name):
            version = self.version_name(target.id)
            self.expressions.lower(value, target=version)  # the right side reads the old versions
            if isinstance(value, ast.List) or self._is_list_read(value) or self._makes_list(value):
                self.list_names.add(version)
            self.current[target.id] = version
        elif (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and all(isinstance(e, ast.Name) for e in target.elts)
        ):
            if len(target.elts) != len(value.elts):
                self.reject(target, "the two sides of this assignment differ in length", "")
            atoms = [self.atom(v) for v in value.elts]  # right side first, like Python
            for name_node, atom in zip(target.elts, atoms, strict=True):
                version = self.version_name(name_node.id)
                # the atom already names a version: copy it as it is (s, t = t, s)
                kind = "copy" if self.is_varied(atom) else "static"
                self.emit(Step(version, atom, kind), value)
                self.current[name_node.id] = version
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.writes.setitem(target, value)
        elif (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Call)
            and all(isinstance(e, ast.Name) for e in target.elts)
        ):
            self.calls.unpack_call(target, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.effects.unpack_value(target, value)  # N, D = x.shape; a, (b, c) = v; a, *r = v
        else:
            self.reject(
                target,
                "this assignment target is not supported",
                "assign to a name, a tuple of names, or an element of an array (y[i] = ...)",
            )

    def _return(self, node: ast.Return) -> tuple[list[str], bool]:
        if node.value is None:
            self.reject(node, "the function returns nothing", "return the value to differentiate")
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        is_tuple = isinstance(node.value, ast.Tuple)
        outputs: list[str] = []
        for i, value in enumerate(values):
            name = self.fresh("out" if not is_tuple else f"out{i + 1}")
            atom = self.atom(value, name=name)
            if not isinstance(atom, ast.Name) or atom.id in outputs or atom.id in self.params:
                atom = self.expressions.lower(atom, target=name)
            outputs.append(atom.id)
        return outputs, is_tuple

    def atom(self, node: ast.expr, name: str | None = None) -> ast.expr:
        """A name or constant holding ``node``'s value (emitting steps as needed)."""
        if isinstance(node, ast.Constant):
            return node
        if isinstance(node, ast.Name) and not self.resolver.is_global(node.id):
            return ast.Name(self.current.get(node.id, node.id), ast.Load())
        return self.expressions.lower(node, target=name)

    def _is_list_entry(self, target: ast.expr) -> bool:
        """``ys[k]`` of a list built here (not an array's element)."""
        return (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and self.current.get(target.value.id) in self.list_names
        )

    def _makes_list(self, value: ast.expr) -> bool:
        """``list(a)`` or ``tuple(a)`` of any ``a`` (an array gives its rows), or
        ``ys.copy()`` of a list built here: a new list."""
        if not (isinstance(value, ast.Call) and len(value.args) <= 1 and not value.keywords):
            return False
        func = value.func
        if isinstance(func, ast.Attribute):
            return func.attr == "copy" and not value.args and self._is_list_read(func.value)
        if not (isinstance(func, ast.Name) and value.args and self.resolver.is_global(func.id)):
            return False
        try:
            return self.resolver.evaluate(func) in (list, tuple)
        except UnsupportedSyntaxError:
            return False

    def _is_list_read(self, value: ast.expr) -> bool:
        """``ys`` or a slice ``ys[1:]`` of a list built here: a list too."""
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
            value = value.value
        return isinstance(value, ast.Name) and self.current.get(value.id) in self.list_names

    def emit(self, step: Step, node: ast.AST | None = None) -> ast.Name:
        if step.target is None:  # temporaries are named after their operands, in order
            step.target = self.fresh()
        step.origin = self.origin
        if isinstance(node, ast.expr):
            step.expression = node
        names = step.operand_names()
        if step.kind in ("primitive", "copy", "op_call") and names & self.may_carry:
            self.may_carry.add(step.target)
        step.loops = tuple(self.loop_stack)
        self.steps.append(step)
        self.emitted.append(step)
        self.taken.add(step.target)
        unsure = [self.layout_unsure[n] for n in sorted(names & self.layout_unsure.keys())]
        if unsure:
            self.layout_unsure.update(dict.fromkeys(step.defined(), unsure[0]))
        self.aliases.note_view(step)
        if step.kind == "static" and step.callee is None:
            self.resolver.note_module_local(step.target, step.value)
        return ast.Name(step.target, ast.Load())

    def user_name(self, name: str) -> str:
        """The name the user wrote for ``name``: the variable a version stands for
        (``x_2``: ``x``), through the names the desugaring made (``f_2``: ``f``)."""
        variable = self.variable_of.get(name, name)
        return self.made_from.get(variable, variable)

    def version_name(self, name: str) -> str:
        """The name of the next value assigned to the user's ``name`` (x, then x_2...)."""
        taken_before = name in self.current or any(name in s.defined() for s in self.emitted)
        version = name if not taken_before else self.fresh(name + "_")
        self.taken.add(version)
        self.variable_of[version] = name
        return version

    def fresh(self, stem: str = "t") -> str:
        if stem not in ("t",) and not stem.endswith("_") and stem not in self.taken:
            self.taken.add(stem)
            return stem
        n = 1 if stem == "t" else 2
        if stem == "t":
            self.temp_count += 1
            n = self.temp_count
        while f"{stem}{n}" in self.taken:
            n += 1
            if stem == "t":
                self.temp_count = n
        self.taken.add(f"{stem}{n}")
        return f"{stem}{n}"

    def rename(self, node: ast.expr) -> ast.expr:
        """A copy of ``node`` reading each local name's current version."""
        node = copy_tree(node)
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id in self.current:
                child.id = self.current[child.id]
        return node

    def is_varied(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.may_carry

    def carries_gradient(self, node: ast.expr, also: frozenset[str] = frozenset()) -> bool:
        """Whether ``node``'s value may depend differentiably on a parameter.

        ``also``: user names to count as carrying gradient too (a loop's carried names).
        """
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Name):
            return node.id in also or self.current.get(node.id, node.id) in self.may_carry
        if isinstance(node, (ast.Compare, ast.JoinedStr)):
            return False
        if isinstance(node, ast.Attribute):
            if node.attr in NO_GRADIENT_ATTRIBUTES:
                return False
            return self.carries_gradient(node.value, also)
        if isinstance(node, ast.Subscript):
            if self.carries_gradient(node.value, also):
                return True
            # np.r_[x, c] calls a function of its index; an array's item only picks one
            computes = self.resolver.computes_from_index(node.value)
            return computes and self.carries_gradient(node.slice, also)
        if isinstance(node, ast.Call):
            popped_from = self.stack_steps.stack_of(node, "pop")
            if popped_from is not None:  # a gradient function's memory, read again
                return self.stacks[popped_from] == "values"
            if self.resolver.is_nondifferentiable_call(node):
                return False
            # the function called is a value too: np.poly1d(x)(0.5) is made from x
            parts = [*node.args, *(k.value for k in node.keywords), node.func]
            return any(self.carries_gradient(p, also) for p in parts)
        return any(
            self.carries_gradient(c, also)
            for c in ast.iter_child_nodes(node)
            if isinstance(c, ast.expr)
        )

    def reject(self, node: ast.AST, message: str, hint: str) -> None:
        raise UnsupportedSyntaxError(message, self.parsed.location(node), hint=hint)


def _defaults(parsed: ParsedFunction) -> dict[str, Any]:
    signature = inspect.signature(parsed.fn)
    return {
        name: p.default
        for name, p in signature.parameters.items()
        if p.default is not inspect.Parameter.empty
    }
