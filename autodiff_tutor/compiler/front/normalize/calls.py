"""Normalization of calls: numpy functions and methods with derivative rules (bound
to their rule's inputs and options by :mod:`.front.normalize.rule_calls`), custom ops and
the user's own functions (compiled in turn), and calls nothing differentiates.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.calls``.
"""

from __future__ import annotations

import ast
import functools
import inspect
from typing import Any

from autodiff_tutor.compiler.front.desugar.desugar import desugar_function
from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.front.normalize.conversions import conversion_name
from autodiff_tutor.compiler.front.normalize.resolve import Callee
from autodiff_tutor.compiler.front.normalize.sharing import only_lists
from autodiff_tutor.compiler.front.source import parse_function
from autodiff_tutor.compiler.ir import StaticOperand, Step
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.rules import names as opnames
from autodiff_tutor.rules.registry import is_nondifferentiable, lookup


class Calls(Part):
    """Lowering of calls into primitive, op-call and opaque steps."""

    unpacked: ast.Call | None = None  # the call ``a, b = call`` is unpacking, if any

    def call(self, node: ast.Call, target: str | None) -> ast.Name:
        callee = self.normalizer.resolver.callee(node)
        if callee.kind == "escape" and self._is_list_of_arrays(node):
            callee = Callee("primitive", op="stack", obj=callee.obj, description=callee.description)
        if self._is_conversion(node, callee):  # np.array(x) of x with gradient: a copy
            return self.normalizer.conversions.conversion(node, target)
        if callee.obj in (list, tuple) and len(node.args) == 1 and self.is_list_value(node.args[0]):
            return self._list_copy(node.args[0], node, target)
        if self._is_list_copy_method(node):  # ys.copy() of a list built here
            return self._list_copy(node.func.value, node, target)
        if callee.kind == "module_call":  # xp.tanh(x) where xp = array_module(x)
            callee = Callee(
                "primitive", op=opnames.canonical(callee.attr), description=callee.description
            )
        if callee.kind == "primitive" and callee.op is not None:
            if is_nondifferentiable(callee.op) and lookup(callee.op) is None:
                return self.normalizer.emit(
                    Step(target, self.normalizer.rename(node), "static", op=callee.op)
                )
            node = self._spread_shape(node, callee)
            rule = lookup(callee.op)
            if rule is not None:
                return self.normalizer.rule_calls.rule_call(node, target, callee, rule)
            callee = Callee("opaque", obj=callee.obj, description=callee.description)
        self._spread_shape(node, callee)
        if callee.kind in ("op_call", "user_call", "op_factory"):
            return self._op_call(node, target, callee)
        args = [self._operand(a) for a in node.args]
        keywords = [ast.keyword(k.arg, self._operand(k.value)) for k in node.keywords]
        func = self.normalizer.rename(node.func)
        operands = list(args) + [k.value for k in keywords]
        if callee.receiver is not None:
            receiver = self._operand(callee.receiver)
            func = ast.Attribute(value=receiver, attr=node.func.attr, ctx=ast.Load())
            operands.insert(0, receiver)
        value = ast.Call(func=func, args=args, keywords=keywords)
        inputs = {f"arg{i}": a for i, a in enumerate(operands) if isinstance(a, ast.Name)}
        step = Step(target, value, callee.kind, inputs=inputs, callee=callee.obj)
        step.description = callee.description
        return self.normalizer.emit(step, node)

    def _spread_shape(self, node: ast.Call, callee: Callee) -> ast.Call:
        """``x.reshape(*y.shape)`` is ``x.reshape(y.shape)``; any other ``f(*y.shape)``
        whose result may carry gradient is refused (the fence lets ``*y.shape`` through
        for calls like ``np.random.rand(*x.shape)``, whose results are constants)."""
        spread = [a for a in node.args if isinstance(a, ast.Starred)]
        if not spread:
            return node
        if callee.op == "reshape" and callee.receiver is not None and len(node.args) == 1:
            return ast.copy_location(ast.Call(node.func, [spread[0].value], node.keywords), node)
        self.normalizer.expressions.refuse(
            spread[0],
            "'*' unpacking into a call that carries gradient is not supported",
            "pass the arguments one by one (x.reshape(y.shape) rather than x.reshape(*y.shape))",
        )
        return node

    def _op_call(self, node: ast.Call, target: str | None, callee: Callee) -> ast.Name:
        """A call to a differentiable operation: a custom op, or a user function compiled
        in turn (``differentiable(helper)``); keywords and defaults become positional."""
        obj = callee.obj
        signature = _call_signature(callee)
        given = {k.arg: k.value for k in node.keywords}
        try:
            if callee.kind == "op_call" and callable(obj):  # as Python calls it (op(x, y))
                inspect.signature(obj).bind(*node.args, **given)
            bound = signature.bind(*node.args, **given)
        except TypeError as error:
            self.normalizer.reject(node, f"cannot call {callee.description}: {error}", "")
        outputs = output_count(obj)
        if outputs > 1 and node is not self.unpacked:
            names = ", ".join(f"y{i + 1}" for i in range(outputs))
            self.normalizer.reject(
                node,
                f"{callee.description} has {outputs} outputs: the compiler takes them where "
                "the call unpacks them",
                f"write {names} = {ast.unparse(node)}, then use each output",
            )
        bound.apply_defaults()
        positional: list[ast.expr] = []
        names: list[str] = []  # the parameter each positional argument binds to
        for name, value in bound.arguments.items():
            many = signature.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL
            for item in value if many else (value,):  # forward(self, *xs): each one
                if isinstance(item, ast.expr):
                    positional.append(item)
                elif _is_literal(item):
                    positional.append(ast.Constant(item))
                else:
                    self.normalizer.reject(
                        node, f"pass the argument {name!r} of {callee.description}", ""
                    )
                names.append(name)
        func = self.normalizer.rename(node.func)
        if callee.kind == "op_factory":  # srelu(X, ..., fmt): the op made for its options
            for n, a in zip(names, positional, strict=True):
                if n in obj.static_params and isinstance(a, ast.Constant) and a.value is None:
                    self.normalizer.reject(
                        node,
                        f"{callee.description} needs {n}= here: compiled code takes plain "
                        "arrays, which carry no data format",
                        f"pass it, e.g. {n}='SSCB' (formatted arrays say their format "
                        "themselves in tracing mode and plain calls)",
                    )
            static = [a for n, a in zip(names, positional, strict=True) if n in obj.static_params]
            positional = [
                a for n, a in zip(names, positional, strict=True) if n not in obj.static_params
            ]
            options = [self.static_operand(a, "an option of the op") for a in static]
            func = ast.Call(ast.Attribute(func, "make_op", ast.Load()), options, [])
        for argument in positional:
            if self.is_list_value(argument) and self.normalizer.carries_gradient(argument):
                self.normalizer.reject(
                    argument,
                    f"passing a list of values with gradient to {callee.description} is not "
                    "supported",
                    "pass the arrays one by one, or np.stack them into one array",
                )
        args = [self._operand(a) for a in positional]
        if callee.kind == "user_call":
            self._check_recursion(node, obj)
            func = ast.Call(ast.Name("differentiable", ast.Load()), [func], [])
        value = ast.Call(func=func, args=args, keywords=[])
        inputs = {f"arg{i}": a for i, a in enumerate(args) if isinstance(a, ast.Name)}
        step = Step(target, value, "op_call", inputs=inputs, callee=obj)
        step.description = callee.description
        return self.normalizer.emit(step, node)

    def returned_key(self, base: ast.expr, key: ast.expr) -> ast.Constant | None:
        """The position of ``key`` in the dict a user's helper returns, when ``base`` was
        made here by calling that helper (its compiled form returns the dict's values,
        in order): ``helper(x)["loss"]`` reads the value at that position."""
        made = [
            s for s in self.normalizer.emitted if isinstance(base, ast.Name) and s.target == base.id
        ]
        if not made or made[-1].kind != "op_call" or not inspect.isfunction(made[-1].callee):
            return None
        keys = returned_keys(made[-1].callee)
        if keys is None:
            return None
        if not (isinstance(key, ast.Constant) and key.value in keys):
            self.normalizer.reject(
                key,
                f"{made[-1].description} returns a dict with the keys {', '.join(keys)}: "
                "read one of them, by its name written out",
                f"write {ast.unparse(base)}[{keys[0]!r}]",
            )
        return ast.Constant(keys.index(key.value))

    def _check_recursion(self, node: ast.Call, fn) -> None:
        if fn is self.normalizer.parsed.fn:
            self.normalizer.reject(
                node,
                f"{self.normalizer.tree.name!r} calls itself: recursion is not supported",
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
        return isinstance(arg, ast.List) or (isinstance(arg, ast.Name) and self.is_list_value(arg))

    def _is_conversion(self, node: ast.Call, callee: Callee) -> bool:
        """``np.array(x)``, ``np.asarray(x)``, ``xp.asarray(x)``... of x with gradient."""
        if callee.kind not in ("escape", "module_call") or not conversion_name(node):
            return False
        if not node.args or self.is_list_value(node.args[0]):  # np.asarray(ys): an escape
            return False
        return self.normalizer.carries_gradient(node.args[0])

    def _is_list_copy_method(self, node: ast.Call) -> bool:
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "copy"
            and not (node.args or node.keywords)
            and isinstance(func.value, ast.Name)
            and self.is_list_value(func.value)
        )

    def _list_copy(self, items: ast.expr, node: ast.Call, target: str | None) -> ast.Name:
        """``list(ys)``, ``tuple(ys)`` or ``ys.copy()`` of a list built here: a new list
        of the same items (its gradient is the copy's), so that ``ys[0] = v`` later
        leaves the copy as it was (a tuple is a list here, as tuples written out are)."""
        if isinstance(items, (ast.List, ast.Tuple)):
            items = ast.List([self.normalizer.atom(e) for e in items.elts], ast.Load())
        else:
            items = ast.Name(self.normalizer.current[items.id], ast.Load())
        value = ast.Call(ast.Name("list", ast.Load()), [items], [])
        return self.primitive(target, value, "make_list", [], {}, node, {"xs": items})

    def holds_lists(self, base: ast.expr) -> bool:
        """Whether ``base`` is a list built here that holds lists only (``rows`` of
        ``rows.append(cols)``, of a nested comprehension): what is read from it is one."""
        if not (isinstance(base, ast.Name) and base.id in self.normalizer.list_names):
            return False
        return only_lists(base.id, self.normalizer.emitted, self.normalizer.list_names)

    def is_list_value(self, node: ast.expr) -> bool:
        """A list (or tuple) written out, or a name holding a list built here."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return True
        return (
            isinstance(node, ast.Name)
            and self.normalizer.current.get(node.id) in self.normalizer.list_names
        )

    def _operand(self, node: ast.expr) -> ast.expr:
        """An atom when ``node`` carries gradient, else the expression itself."""
        return (
            self.normalizer.atom(node)
            if self.normalizer.carries_gradient(node)
            else self.normalizer.rename(node)
        )

    def static_operand(self, node: ast.expr, what: str) -> ast.expr:
        """An operand kept whole (an index, an option); activity checks, for the ``wrt``
        asked, that it does not depend on a differentiated value."""
        renamed = self.normalizer.rename(node)
        if self.normalizer.carries_gradient(node):
            reads = {n.id for n in ast.walk(renamed) if isinstance(n, ast.Name)}
            self.normalizer.static_operands.append(
                StaticOperand(what, node, reads & self.normalizer.may_carry)
            )
        return renamed

    def primitive(
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
                return self.normalizer.emit(Step(target, value, "static", op=op), node)
            self.normalizer.expressions.refuse(
                node, f"no derivative rule for the operation '{op}'", ""
            )
        if inputs is None:
            inputs = dict(zip(rule.inputs, operands, strict=False))
        key = (op, ast.dump(value))
        if target is None and key in self.normalizer.computed and not rule.list_result:
            return ast.Name(self.normalizer.computed[key], ast.Load())  # x[i] read twice: one value
        step = Step(target, value, "primitive", op=op, inputs=inputs, options=options)
        step.description = ast.unparse(node) if isinstance(node, ast.expr) else op
        name = self.normalizer.emit(step, node)
        self.normalizer.computed.setdefault(key, name.id)
        if rule.list_result:  # its gradient is a list too: accumulate with add_lists
            self.normalizer.list_names.add(name.id)
        return name

    def unpack_call(self, target: ast.Tuple, value: ast.Call) -> None:
        """``a, b = helper(x)`` (names only): one step with several outputs."""
        names = [element.id for element in target.elts]
        self.unpacked = value  # an op's several outputs are taken here
        try:
            temp = self.normalizer.expressions.lower(value, target=None)
        finally:
            self.unpacked = None
        step = self.normalizer.emitted[-1]
        versions = [self.normalizer.version_name(n) for n in names]
        op_call = step.kind == "op_call" and step.target == temp.id
        if op_call and output_count(step.callee) == len(versions):
            step.targets = versions
            if temp.id in self.normalizer.may_carry:
                self.normalizer.may_carry |= set(versions)
        else:  # a value holding a tuple or list: one item each (with gradient if it has one)
            for i, version in enumerate(versions):
                if names[i] == "_":
                    continue  # an unpacked value nobody reads
                item = ast.Subscript(temp, ast.Constant(i), ast.Load())
                if temp.id in self.normalizer.may_carry:
                    index = {"index": ast.Constant(i)}
                    self.primitive(version, item, "getitem", [temp], index, value)
                else:
                    self.normalizer.emit(Step(version, item, "static"))
        for name, version in zip(names, versions, strict=True):
            self.normalizer.current[name] = version


def _call_signature(callee: Callee) -> inspect.Signature:
    """The parameters of a called user function or op (its forward, for custom ops)."""
    obj = callee.obj
    if callee.kind in ("user_call", "op_factory"):
        return inspect.signature(obj)
    if hasattr(obj, "signature"):  # a @differentiable function
        return obj.signature
    return inspect.signature(getattr(obj, "forward", obj.op_forward))


def _is_literal(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def output_count(obj: Any) -> int:
    """How many outputs a call of ``obj`` gives: an op's ``num_outputs``, the values a
    function of the user's returns (``return a, b``: two; ``return t`` of a tuple: one).
    """
    count = getattr(obj, "num_outputs", None)
    if isinstance(count, int):
        return count
    return _returned_count(obj) if inspect.isfunction(obj) else 1


@functools.cache
def _returned_count(fn: Any) -> int:
    try:
        body = desugar_function(parse_function(fn)).body
    except AutodiffError:  # its own compilation says what is wrong, at its line
        return 1
    value = next((s.value for s in body if isinstance(s, ast.Return)), None)
    return len(value.elts) if isinstance(value, ast.Tuple) else 1


@functools.cache
def returned_keys(fn: Any) -> tuple[str, ...] | None:
    """The keys of the dict ``fn`` returns (``return {"loss": l, "acc": a}``), in order;
    ``None`` when it returns no dict, or when its source does not compile (its own
    compilation reports that, at its line)."""
    try:
        return desugar_function(parse_function(fn)).output_keys
    except AutodiffError:
        return None
