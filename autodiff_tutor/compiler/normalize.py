"""Stage 3: one operation per statement, with readable names.

``h = np.tanh(X @ W + b)`` becomes ``t1 = X @ W``, ``t2 = t1 + b``,
``h = np.tanh(t2)``. Each step records which primitive it is (resolved through the
function's globals, so ``np.tanh``, ``xp.tanh`` and ``cupy.tanh`` are all ``tanh``),
which operands are its rule's inputs and which are options (``axis=1``).

Names the user assigns twice get a fresh version (``x``, then ``x_2``), so every
value the backward pass needs still has a name. Expressions that never carry
gradient (``x.shape[0]``, ``x > 0``) stay whole.

>>> import numpy as np
>>> from autodiff_tutor.compiler.source import parse_function
>>> def f(X, W, b):
...     h = np.tanh(X @ W + b)
...     return np.sum(h * h)
>>> print(normalize(parse_function(f), wrt=["W", "b"]).source())
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
import builtins
import copy
import inspect
from collections.abc import Iterable
from typing import Any

from autodiff_tutor.compiler.desugar import DesugarError, desugar
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Program, Step
from autodiff_tutor.compiler.resolve import Callee, Resolver
from autodiff_tutor.compiler.source import ParsedFunction
from autodiff_tutor.errors import AutodiffError, UnsupportedSyntaxError
from autodiff_tutor.rules import names as opnames
from autodiff_tutor.rules.registry import Rule, is_nondifferentiable, lookup

NO_GRADIENT_ATTRIBUTES = {"shape", "ndim", "dtype", "size"}
# Operations whose result can share memory with their input in numpy.
LIST_RESULTS = {"unstack", "split_like", "make_list", "list_append"}
VIEW_OPS = {"getitem", "reshape", "transpose", "squeeze", "expand_dims"}
_AUG_SYMBOL = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
}


def normalize(parsed: ParsedFunction, wrt: Iterable[str]) -> Program:
    """Normalize ``parsed`` for gradients with respect to the parameters ``wrt``."""
    return _Normalizer(parsed, set(wrt)).run()


class _Normalizer:
    def __init__(self, parsed: ParsedFunction, wrt: set[str]):
        self.parsed = parsed
        self.tree = parsed.tree
        self.params = [a.arg for a in self.tree.args.posonlyargs + self.tree.args.args]
        self.params += [a.arg for a in self.tree.args.kwonlyargs]
        self.current: dict[str, str] = {p: p for p in self.params}  # user name -> version
        self.varied: set[str] = set(wrt)
        self.steps: list[Node] = []  # the block being filled (a body of a branch or loop)
        self.emitted: list[Step] = []  # every step so far, in order
        self.list_names: set[str] = set()
        self.pending_writes: list[tuple] = []  # in-place writes to check at the end
        self.loop_stack: list[int] = []  # the loops enclosing the step being emitted
        self.taken = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)}
        self.taken |= set(self.params)
        self.resolver = Resolver(parsed, self.current)
        self.origin: ast.AST = self.tree
        self.temp_count = 0

    # -- statements -----------------------------------------------------------

    def run(self) -> Program:
        outputs: list[str] | None = None
        returns_tuple, return_node = False, None
        try:
            body = desugar(self.tree).body
        except DesugarError as error:
            raise UnsupportedSyntaxError(
                error.message, self.parsed.location(error.node), hint="see the supported forms"
            ) from None
        self.taken |= {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name)}
        for statement in body:
            self.origin = statement
            if isinstance(statement, ast.Return):
                outputs, returns_tuple = self._return(statement)
                return_node = statement
                break
            self._statement(statement)
        if outputs is None:
            raise UnsupportedSyntaxError(
                f"{self.tree.name!r} has no return statement",
                self.parsed.location(self.tree),
                hint="return the value to differentiate",
            )
        self._check_writes()
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
        )

    def _statement(self, node: ast.stmt) -> None:
        self.origin = node
        if isinstance(node, ast.If):
            self._if(node)
        elif isinstance(node, (ast.For, ast.While)):
            self._loop(node)
        elif isinstance(node, ast.Expr) and _is_append(node.value):
            self._append(node.value)
        elif isinstance(node, (ast.Pass, ast.Expr)):
            return  # a docstring or 'pass' (the fence rejected other expressions)
        elif isinstance(node, ast.Return):
            self._reject(node, "a return here is not supported", "return at the end")
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                self._check_in_place(node)
            value = ast.BinOp(left=_load(node.target), op=node.op, right=node.value)
            self._assign(node.target, ast.copy_location(value, node))
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._assign(node.target, node.value)
        elif isinstance(node, ast.Assign):
            self._assign(node.targets[0], node.value)

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            version = self._version_name(target.id)
            self._lower(value, target=version)  # the right side reads the old versions
            if isinstance(value, ast.List) or (
                isinstance(value, ast.Name) and self.current.get(value.id) in self.list_names
            ):
                self.list_names.add(version)
            self.current[target.id] = version
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            if len(target.elts) != len(value.elts):
                self._reject(target, "the two sides of this assignment differ in length", "")
            atoms = [self._atom(v) for v in value.elts]  # right side first, like Python
            for name_node, atom in zip(target.elts, atoms, strict=True):
                if not isinstance(name_node, ast.Name):
                    self._reject(name_node, "only names can be unpacked into", "")
                version = self._version_name(name_node.id)
                self._lower(atom, target=version)
                self.current[name_node.id] = version
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self._setitem(target, value)
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Call):
            self._unpack_call(target, value)
        else:
            self._reject(
                target,
                "this assignment target is not supported",
                "assign to a name, a tuple of names, or an element of an array (y[i] = ...)",
            )

    # -- arrays, lists and calls with several results ----------------------------------

    def _setitem(self, target: ast.Subscript, value: ast.expr) -> None:
        """``y[i] = v`` becomes ``y_2 = assign_at(y, at[i], v)``: a new version of y."""
        name = target.value.id
        self._check_unshared(name, target, f"{name}[...] = ...", f"{name} = {name}.copy()")
        base = ast.Name(self.current[name], ast.Load())
        index = self._static_operand(target.slice, "an index")
        item = self._atom(value)
        at_index = ast.Subscript(ast.Name("at", ast.Load()), index, ast.Load())
        call = ast.Call(ast.Name("assign_at", ast.Load()), [base, at_index, item], [])
        version = self._version_name(name)
        inputs = {"x": base, "value": item}
        self._primitive(version, call, "setitem", [], {"index": index}, target, inputs)
        self.current[name] = version

    def _append(self, call: ast.Call) -> None:
        """``ys.append(v)`` becomes ``ys_2 = ys + [v]``: a new version of the list."""
        name = call.func.value.id
        if self.current.get(name) not in self.list_names:
            self._reject(call, f"{name!r} is not a list built in this function", "start it with []")
        self._check_unshared(name, call, f"{name}.append(...)", f"{name} = list({name})")
        base = ast.Name(self.current[name], ast.Load())
        item = self._atom(call.args[0])
        value = ast.BinOp(base, ast.Add(), ast.List([item], ast.Load()))
        version = self._version_name(name)
        self._primitive(version, value, "list_append", [], {}, call, {"xs": base, "x": item})
        self.list_names.add(version)
        self.current[name] = version

    def _unpack_call(self, target: ast.Tuple, value: ast.Call) -> None:
        """``a, b = helper(x)``: one step with several outputs."""
        names = []
        for element in target.elts:
            if not isinstance(element, ast.Name):
                self._reject(element, "only names can be unpacked into", "")
            names.append(element.id)
        temp = self._lower(value, target=None)
        step = self.emitted[-1]
        versions = [self._version_name(n) for n in names]
        if step.kind == "op_call" and step.target == temp.id:
            step.targets = versions
            if temp.id in self.varied:
                self.varied |= set(versions)
        else:  # a value holding a tuple or list: one item each (with gradient if it has one)
            for i, version in enumerate(versions):
                if names[i] == "_":
                    continue  # an unpacked value nobody reads
                item = ast.Subscript(temp, ast.Constant(i), ast.Load())
                if temp.id in self.varied:
                    index = {"index": ast.Constant(i)}
                    self._primitive(version, item, "getitem", [temp], index, value)
                else:
                    self._emit(Step(version, item, "static"))
        for name, version in zip(names, versions, strict=True):
            self.current[name] = version

    def _check_unshared(self, name: str, node: ast.AST, what: str, fix: str) -> None:
        """An in-place write is compiled as a new version of the array: exact only when
        no other name that sees the old array is read afterwards (Python would show
        them the change).

        Rejected at once: parameters (the caller's array) and arrays returned by calls
        the compiler cannot see into. Views and aliases (``r = y``, ``x[1:]``, ``x.T``)
        are rejected only when one of them is read after the write (checked at the end).
        """
        version = self.current.get(name)
        if version is None:
            self._reject(node, f"{name!r} is not defined yet", "")
        family = self._same_array(version)
        problem = bool(family & set(self.params))
        related = set(family)
        changed = True
        while changed:  # the arrays this one is a view of, and the views of those
            changed = False
            for step in self.emitted:
                if step.synthetic:
                    continue
                base = _view_base(step)
                defined = set(step.defined())
                if defined & related and step.kind in ("opaque", "op_call", "escape"):
                    problem = True
                if base is None:
                    continue
                pair = defined | self._same_array(base)
                if pair & related and not pair <= related:
                    related |= pair
                    changed = True
        if problem or related & set(self.params):
            self._in_place_error(node, what, fix)
        self.pending_writes.append((len(self.emitted), related - family, node, what, fix))

    def _in_place_error(self, node: ast.AST, what: str, fix: str, seen_by: str = "") -> None:
        later = f", and {seen_by!r} shares it and is read after the write" if seen_by else ""
        self._reject(
            node,
            f"'{what}' would change, in place, an array that other names share "
            f"(a parameter, an alias or a view){later}",
            f"make a copy first ({fix}), or build a new array",
        )

    def _check_writes(self) -> None:
        """Views and aliases of a written array must not be read after the write."""
        for index, watched, node, what, fix in self.pending_writes:
            write = self.emitted[index - 1] if index else None
            loops = write.loops if write is not None else ()
            for position, step in enumerate(self.emitted):
                later = position >= index or bool(set(step.loops) & set(loops))
                seen = step.operand_names() & watched
                if later and not step.synthetic and seen:
                    self._in_place_error(node, what, fix, sorted(seen)[0])

    def _same_array(self, version: str) -> set[str]:
        """``version`` and the versions the compiler's own copies tie to it."""
        family = {version}
        changed = True
        while changed:
            changed = False
            for step in self.emitted:
                if step.synthetic and isinstance(step.value, ast.Name):
                    pair = {step.target, step.value.id}
                    if pair & family and not pair <= family:
                        family |= pair
                        changed = True
        return family

    # -- control flow -------------------------------------------------------------

    def _block(self, statements: list[ast.stmt]) -> list[Node]:
        outer = self.steps
        self.steps = []
        for statement in statements:
            self._statement(statement)
        block, self.steps = self.steps, outer
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

    def _check_in_place(self, node: ast.AugAssign) -> None:
        """``z += v`` writes into z's array; compiled as ``z = z + v`` when that is exact."""
        name = node.target.id
        symbol = _AUG_SYMBOL.get(type(node.op), "?")
        self._check_unshared(
            name, node, f"{name} {symbol}= ...", f"write '{name} = {name} {symbol} ...'"
        )

    def _return(self, node: ast.Return) -> tuple[list[str], bool]:
        if node.value is None:
            self._reject(node, "the function returns nothing", "return the value to differentiate")
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        is_tuple = isinstance(node.value, ast.Tuple)
        outputs: list[str] = []
        for i, value in enumerate(values):
            name = self._fresh("out" if not is_tuple else f"out{i + 1}")
            atom = self._atom(value, name=name)
            if not isinstance(atom, ast.Name) or atom.id in outputs or atom.id in self.params:
                atom = self._lower(atom, target=name)
            outputs.append(atom.id)
        return outputs, is_tuple

    # -- expressions ------------------------------------------------------------

    def _atom(self, node: ast.expr, name: str | None = None) -> ast.expr:
        """A name or constant holding ``node``'s value (emitting steps as needed)."""
        if isinstance(node, ast.Constant):
            return node
        if isinstance(node, ast.Name) and not self.resolver.is_global(node.id):
            return ast.Name(self.current[node.id], ast.Load())
        return self._lower(node, target=name)

    def _lower(self, node: ast.expr, target: str | None) -> ast.Name:
        """Emit the steps computing ``node`` into the name ``target``."""
        if isinstance(node, (ast.Name, ast.Constant)):
            value = self._rename(node)
            kind = "copy" if self._is_varied(value) else "static"
            return self._emit(Step(target, value, kind))
        if not self._carries_gradient(node):
            return self._emit(Step(target, self._rename(node), "static"))
        if isinstance(node, ast.BinOp):
            left, right = self._atom(node.left), self._atom(node.right)
            op = opnames.BINARY_OPERATORS.get(type(node.op), type(node.op).__name__)
            value = ast.BinOp(left=left, op=node.op, right=right)
            return self._primitive(target, value, op, [left, right], {}, node)
        if isinstance(node, ast.UnaryOp):
            operand = self._atom(node.operand)
            op = opnames.UNARY_OPERATORS[type(node.op)]
            value = ast.UnaryOp(op=node.op, operand=operand)
            return self._primitive(target, value, op, [operand], {}, node)
        if isinstance(node, ast.Attribute):
            base = self._atom(node.value)
            op = opnames.op_of_attribute(node.attr)
            value = ast.Attribute(value=base, attr=node.attr, ctx=ast.Load())
            if op is None:
                self._reject(node, f"the attribute '.{node.attr}' is not differentiable", "")
            return self._primitive(target, value, op, [base], {}, node)
        if isinstance(node, ast.Subscript):
            base = self._atom(node.value)
            index = self._static_operand(node.slice, "an index")
            value = ast.Subscript(value=base, slice=index, ctx=ast.Load())
            return self._primitive(target, value, "getitem", [base], {"index": index}, node)
        if isinstance(node, ast.Call):
            return self._call(node, target)
        if isinstance(node, ast.IfExp):
            return self._if_expression(node, target)
        if isinstance(node, ast.BoolOp):
            word = "or" if isinstance(node.op, ast.Or) else "and"
            self._reject(
                node,
                f"'{word}' used as a value picks one of its operands: its gradient is not "
                "differentiated here",
                "write the choice explicitly, e.g. 'x if x else y' for 'x or y'",
            )
        if isinstance(node, (ast.List, ast.Tuple)):
            items = ast.List([self._atom(e) for e in node.elts], ast.Load())
            name = self._primitive(target, items, "make_list", [], {}, node, {"xs": items})
            self.list_names.add(name.id)
            return name
        self._reject(node, f"{type(node).__name__} cannot be differentiated here", "")

    def _if_expression(self, node: ast.IfExp, target: str | None) -> ast.Name:
        """``a if c else b``: a branch whose two paths assign one name."""
        test = self._condition(node.test)
        target = target or self._fresh()
        paths = []
        for value in (node.body, node.orelse):
            outer, self.steps = self.steps, []
            atom = self._atom(value)
            block, self.steps = self.steps, outer
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

    def _call(self, node: ast.Call, target: str | None) -> ast.Name:
        callee = self.resolver.callee(node)
        if callee.kind == "escape" and self._is_list_of_arrays(node):
            callee = Callee("primitive", op="stack", obj=callee.obj, description=callee.description)
        if callee.kind == "module_call":  # xp.tanh(x) where xp = array_module(x)
            callee = Callee(
                "primitive", op=opnames.canonical(callee.attr), description=callee.description
            )
        if callee.kind == "primitive" and callee.op is not None:
            rule = lookup(callee.op)
            if rule is not None:
                return self._rule_call(node, target, callee, rule)
            if is_nondifferentiable(callee.op):
                return self._emit(Step(target, self._rename(node), "static", op=callee.op))
            callee = Callee("opaque", obj=callee.obj, description=callee.description)
        if callee.kind in ("op_call", "user_call"):
            return self._op_call(node, target, callee)
        args = [self._operand(a) for a in node.args]
        keywords = [ast.keyword(k.arg, self._operand(k.value)) for k in node.keywords]
        func = self._rename(node.func)
        operands = list(args) + [k.value for k in keywords]
        if callee.receiver is not None:
            receiver = self._operand(callee.receiver)
            func = ast.Attribute(value=receiver, attr=node.func.attr, ctx=ast.Load())
            operands.insert(0, receiver)
        value = ast.Call(func=func, args=args, keywords=keywords)
        inputs = {f"arg{i}": a for i, a in enumerate(operands) if isinstance(a, ast.Name)}
        step = Step(target, value, callee.kind, inputs=inputs, callee=callee.obj)
        step.description = callee.description
        return self._emit(step, node)

    def _op_call(self, node: ast.Call, target: str | None, callee: Callee) -> ast.Name:
        """A call to a differentiable operation: a custom op, or a user function compiled
        in turn (``differentiable(helper)``); keywords and defaults become positional."""
        obj = callee.obj
        signature = _call_signature(callee)
        try:
            bound = signature.bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as error:
            self._reject(node, f"cannot call {callee.description}: {error}", "")
        bound.apply_defaults()
        positional: list[ast.expr] = []
        for name, value in bound.arguments.items():
            if isinstance(value, ast.expr):
                positional.append(value)
            elif _is_literal(value):
                positional.append(ast.Constant(value))
            else:
                self._reject(node, f"pass the argument {name!r} of {callee.description}", "")
        args = [self._operand(a) for a in positional]
        func = self._rename(node.func)
        if callee.kind == "user_call":
            self._check_recursion(node, obj)
            func = ast.Call(ast.Name("differentiable", ast.Load()), [func], [])
        value = ast.Call(func=func, args=args, keywords=[])
        inputs = {f"arg{i}": a for i, a in enumerate(args) if isinstance(a, ast.Name)}
        step = Step(target, value, "op_call", inputs=inputs, callee=obj)
        step.description = callee.description
        return self._emit(step, node)

    def _check_recursion(self, node: ast.Call, fn) -> None:
        if fn is self.parsed.fn:
            self._reject(
                node,
                f"{self.tree.name!r} calls itself: recursion is not supported",
                "write the recursion as a loop",
            )

    def _is_list_of_arrays(self, node: ast.Call) -> bool:
        """``np.array(ys)`` with ``ys`` a list built here (or a list literal) is a stack."""
        if (
            getattr(node.func, "attr", getattr(node.func, "id", "")) != "array"
            or len(node.args) != 1
        ):
            return False
        arg = node.args[0]
        if isinstance(arg, ast.List):
            return True
        return isinstance(arg, ast.Name) and self.current.get(arg.id) in self.list_names

    def _operand(self, node: ast.expr) -> ast.expr:
        """An atom when ``node`` carries gradient, else the expression itself."""
        return self._atom(node) if self._carries_gradient(node) else self._rename(node)

    def _rule_call(
        self, node: ast.Call, target: str | None, callee: Callee, rule: Rule
    ) -> ast.Name:
        params = rule.signature_parameters()
        positional: list[ast.expr] = list(node.args)
        receiver = callee.receiver
        if receiver is not None:
            positional.insert(0, receiver)
        bound: dict[str, ast.expr] = {}
        for param, arg in zip(params, positional, strict=False):
            bound[param] = arg
        extra = positional[len(params) :]
        if extra:
            if receiver is None or not params:
                self._reject(node, f"too many arguments for {callee.description}", "")
            last = params[-1]
            bound[last] = ast.Tuple(elts=[bound[last], *extra], ctx=ast.Load())
        for keyword in node.keywords:
            if keyword.arg not in params:
                self._reject(
                    keyword.value,
                    f"the keyword '{keyword.arg}=' of {callee.description} is not supported",
                    f"supported arguments: {', '.join(params)}",
                )
            bound[keyword.arg] = keyword.value
        missing = [p for p in rule.inputs if p not in bound]
        if missing:
            self._reject(node, f"{callee.description} is missing {', '.join(missing)}", "")
        self._check_options(node, rule, bound)
        inputs = {p: self._input_operand(bound[p], rule) for p in rule.inputs}
        options = {p: self._static_operand(bound[p], f"'{p}'") for p in rule.options if p in bound}
        lowered = {**inputs, **options}
        value = self._rebuild_call(node, callee, lowered, params, receiver is not None)
        return self._primitive(target, value, rule.op, list(inputs.values()), options, node, inputs)

    def _check_options(self, node: ast.Call, rule: Rule, bound: dict[str, ast.expr]) -> None:
        """Options a rule restricts (norm's ``ord``) must be literals the rule covers."""
        if rule.check is None:
            return
        values = dict(rule.options)
        for name in rule.options:
            if name in bound:
                try:
                    values[name] = ast.literal_eval(bound[name])
                except ValueError:
                    self._reject(
                        bound[name],
                        f"the option '{name}' must be a literal here, so the compiler can "
                        "check that its derivative rule covers it",
                        f"write the value of '{name}' directly in the call",
                    )
        try:
            rule.check_options(values)
        except AutodiffError as error:
            raise type(error)(error.message, self.parsed.location(node), error.hint) from None

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
        func = self._callee_expr(node, callee)
        if method:
            receiver, values = values[0], values[1:]
            func = ast.Attribute(value=receiver, attr=node.func.attr, ctx=ast.Load())
            if isinstance(lowered.get(params[-1]), ast.Tuple) and len(node.args) > 1:
                values = list(lowered[params[-1]].elts)  # x.reshape(2, 3) keeps its form
        keywords = [ast.keyword(k.arg, lowered[k.arg]) for k in node.keywords]
        return ast.Call(func=func, args=values, keywords=keywords)

    def _callee_expr(self, node: ast.Call, callee: Callee) -> ast.expr:
        if callee.receiver is not None:
            return node.func
        return self._rename(node.func)

    def _input_operand(self, node: ast.expr, rule: Rule) -> ast.expr:
        if rule.sequence and isinstance(node, (ast.List, ast.Tuple)):
            return type(node)(elts=[self._atom(e) for e in node.elts], ctx=ast.Load())
        if (
            rule.sequence
            and isinstance(node, ast.Name)
            and self.current.get(node.id) in self.list_names
        ):
            return ast.Name(self.current[node.id], ast.Load())
        if rule.sequence:
            self._reject(
                node,
                f"{rule.op} needs a list here",
                "write [a, b, ...] or build a list with append",
            )
        return self._atom(node)

    def _static_operand(self, node: ast.expr, what: str) -> ast.expr:
        if self._carries_gradient(node):
            self._reject(node, f"{what} must not depend on a differentiated value", "")
        return self._rename(node)

    def _primitive(
        self,
        target: str | None,
        value: ast.expr,
        op: str,
        operands: list[ast.expr],
        options: dict[str, ast.expr],
        node: ast.AST,
        inputs: dict[str, ast.expr] | None = None,
    ) -> ast.Name:
        rule = lookup(op)
        if rule is None:
            if is_nondifferentiable(op):
                return self._emit(Step(target, value, "static", op=op), node)
            self._reject(node, f"no derivative rule for the operation '{op}'", "")
        if inputs is None:
            inputs = dict(zip(rule.inputs, operands, strict=False))
        step = Step(target, value, "primitive", op=op, inputs=inputs, options=options)
        step.description = ast.unparse(node) if isinstance(node, ast.expr) else op
        name = self._emit(step, node)
        if op in LIST_RESULTS:  # its gradient is a list too: accumulate with add_lists
            self.list_names.add(name.id)
        return name

    # -- helpers ------------------------------------------------------------------

    def _emit(self, step: Step, node: ast.AST | None = None) -> ast.Name:
        if step.target is None:  # temporaries are named after their operands, in order
            step.target = self._fresh()
        step.origin = self.origin
        if isinstance(node, ast.expr):
            step.expression = node
        names = step.operand_names()
        if (
            step.kind in ("primitive", "copy", "op_call", "opaque", "escape")
            and names & self.varied
        ):
            if step.kind in ("primitive", "copy", "op_call"):
                self.varied.add(step.target)
        step.loops = tuple(self.loop_stack)
        self.steps.append(step)
        self.emitted.append(step)
        self.taken.add(step.target)
        if step.kind == "static" and step.callee is None and self.resolver.makes_module(step.value):
            self.resolver.module_locals.add(step.target)
        return ast.Name(step.target, ast.Load())

    def _version_name(self, name: str) -> str:
        """The name of the next value assigned to the user's ``name`` (x, then x_2...)."""
        taken_before = name in self.current or any(name in s.defined() for s in self.emitted)
        version = name if not taken_before else self._fresh(name + "_")
        self.taken.add(version)
        return version

    def _fresh(self, stem: str = "t") -> str:
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

    def _rename(self, node: ast.expr) -> ast.expr:
        """A copy of ``node`` reading each local name's current version."""
        node = copy.deepcopy(node)
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id in self.current:
                child.id = self.current[child.id]
        return node

    def _is_varied(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.varied

    def _carries_gradient(self, node: ast.expr) -> bool:
        """Whether ``node``'s value can depend differentiably on a varied name."""
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Name):
            return self.current.get(node.id, node.id) in self.varied
        if isinstance(node, ast.Compare):
            return False
        if isinstance(node, ast.Attribute):
            if node.attr in NO_GRADIENT_ATTRIBUTES:
                return False
            return self._carries_gradient(node.value)
        if isinstance(node, ast.Subscript):
            return self._carries_gradient(node.value)
        if isinstance(node, ast.Call):
            if self.resolver.is_nondifferentiable_call(node):
                return False
            parts = list(node.args) + [k.value for k in node.keywords]
            if isinstance(node.func, ast.Attribute):
                parts.append(node.func.value)
            return any(self._carries_gradient(p) for p in parts)
        return any(
            self._carries_gradient(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)
        )

    def _reject(self, node: ast.AST, message: str, hint: str) -> None:
        raise UnsupportedSyntaxError(message, self.parsed.location(node), hint=hint)


def _call_signature(callee: Callee) -> inspect.Signature:
    """The parameters of a called user function or op (its forward, for custom ops)."""
    obj = callee.obj
    if callee.kind == "user_call":
        return inspect.signature(obj)
    if hasattr(obj, "signature"):  # a @differentiable function
        return obj.signature
    return inspect.signature(getattr(obj, "forward", obj.op_forward))


VIEW_METHODS = {"reshape", "transpose", "squeeze", "ravel", "swapaxes", "view", "T"}


def _view_base(step: Step) -> str | None:
    """The name whose array ``step``'s result may share (an alias or a view), if any."""
    value = step.value
    if isinstance(value, ast.Name):
        return value.id
    if isinstance(value, (ast.Subscript, ast.Attribute)) and isinstance(value.value, ast.Name):
        if isinstance(value, ast.Subscript) or value.attr in VIEW_METHODS:
            return value.value.id
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        receiver = value.func.value
        if value.func.attr in VIEW_METHODS and isinstance(receiver, ast.Name):
            return receiver.id
    if step.op in VIEW_OPS and step.inputs:
        first = next(iter(step.inputs.values()))
        return first.id if isinstance(first, ast.Name) else None
    return None


def _is_literal(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _is_append(value: ast.expr) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "append"
        and isinstance(value.func.value, ast.Name)
        and len(value.args) == 1
        and not value.keywords
    )


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
            elif _is_append(node) if isinstance(node, ast.expr) else False:
                names.add(node.func.value.id)
    return names


def _load(target: ast.expr) -> ast.expr:
    loaded = copy.deepcopy(target)
    for child in ast.walk(loaded):
        if hasattr(child, "ctx"):
            child.ctx = ast.Load()
    return loaded


def _defaults(parsed: ParsedFunction) -> dict[str, Any]:
    import inspect

    signature = inspect.signature(parsed.fn)
    return {
        name: p.default
        for name, p in signature.parameters.items()
        if p.default is not inspect.Parameter.empty
    }


_ = builtins  # names resolve through ParsedFunction.namespace
