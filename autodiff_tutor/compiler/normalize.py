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
from collections.abc import Iterable
from typing import Any

from autodiff_tutor.compiler.ir import Program, Step
from autodiff_tutor.compiler.resolve import Callee, Resolver
from autodiff_tutor.compiler.source import ParsedFunction
from autodiff_tutor.errors import AutodiffError, UnsupportedSyntaxError
from autodiff_tutor.rules import names as opnames
from autodiff_tutor.rules.registry import Rule, is_nondifferentiable, lookup

NO_GRADIENT_ATTRIBUTES = {"shape", "ndim", "dtype", "size"}
# Operations whose result can share memory with their input in numpy.
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
        self.steps: list[Step] = []
        self.taken = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)}
        self.taken |= set(self.params)
        self.resolver = Resolver(parsed, self.current)
        self.origin: ast.AST = self.tree
        self.temp_count = 0

    # -- statements -----------------------------------------------------------

    def run(self) -> Program:
        outputs: list[str] | None = None
        returns_tuple, return_node = False, None
        for statement in self.tree.body:
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
        return Program(
            name=self.tree.name,
            params=self.params,
            defaults=_defaults(self.parsed),
            steps=self.steps,
            outputs=outputs,
            returns_tuple=returns_tuple,
            origin_of_return=return_node,
            namespace=self.resolver.namespace,
        )

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.Pass, ast.Expr)):
            return  # a docstring or 'pass' (the fence rejected other expressions)
        if isinstance(node, ast.AugAssign):
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
        else:
            self._reject(
                target,
                "assigning into an array (x[i] = ...) or unpacking a call is not supported yet",
                "build a new array with np.where, np.concatenate or np.stack",
            )

    def _check_in_place(self, node: ast.AugAssign) -> None:
        """``z += v`` writes into z's array: only safe when nothing else sees that array.

        Compiling it as ``z = z + v`` is exact when z holds a fresh result (an
        arithmetic result or a Python number); if z is a parameter, another name's
        alias or a view (``x[1:]``, ``x.T``), numpy would change that array too.
        """
        name = node.target.id
        symbol = _AUG_SYMBOL.get(type(node.op), "?")
        version = self.current.get(name)
        producer = next((s for s in reversed(self.steps) if s.target == version), None)
        shared = version in self.params or (
            producer is not None
            and (
                (producer.kind == "copy" and isinstance(producer.value, ast.Name))
                or producer.op in VIEW_OPS
                or producer.kind in ("opaque", "op_call")
            )
        )
        aliased = any(
            s.kind in ("copy", "static") and isinstance(s.value, ast.Name) and s.value.id == version
            for s in self.steps
        )
        if shared or aliased:
            self._reject(
                node,
                f"'{name} {symbol}= ...' would change an array that other names share "
                "(a parameter, an alias or a view), in place",
                f"write '{name} = {name} {symbol} ...' to make a new array",
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
            at_index = ast.Subscript(value=ast.Name("at", ast.Load()), slice=index, ctx=ast.Load())
            return self._primitive(target, value, "getitem", [base], {"index": at_index}, node)
        if isinstance(node, ast.Call):
            return self._call(node, target)
        if isinstance(node, ast.IfExp):
            self._reject(node, "conditional expressions are not supported yet", "use np.where")
        self._reject(node, f"{type(node).__name__} cannot be differentiated here", "")

    def _call(self, node: ast.Call, target: str | None) -> ast.Name:
        callee = self.resolver.callee(node)
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
        if rule.sequence:
            self._reject(node, f"{rule.op} needs a list literal here", "write [a, b, ...] inline")
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
        return self._emit(step, node)

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
        self.steps.append(step)
        self.taken.add(step.target)
        if step.kind == "static" and step.callee is None and self.resolver.makes_module(step.value):
            self.resolver.module_locals.add(step.target)
        return ast.Name(step.target, ast.Load())

    def _version_name(self, name: str) -> str:
        """The name of the next value assigned to the user's ``name`` (x, then x_2...)."""
        taken_before = name in self.current or any(s.target == name for s in self.steps)
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
        if isinstance(node, (ast.Compare, ast.BoolOp)):
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
