"""Translate the numpy source of a forward or backward into sympy, one element at a time.

The translator reads a function's syntax tree (it never runs the function) and
evaluates it on sympy values, with numpy's meaning for each construct (see
:mod:`~autodiff_tutor.verify.symbolic.algebra`): arithmetic, elementwise functions,
comparisons and masks used as numbers, ``&``/``|``/``~``, ``where``, ``maximum``,
``minimum``, ``abs``, ``clip``, ``sign``, masked assignment ``d[x > 0] = v``.

The reasoning is per element: a value stands for one element of an array. Shape
operations (``reshape``, ``x[..., None]``, ``.T``) leave an element unchanged, and a
*sum* (``xp.sum``, ``reduce_to_channels``, ``unbroadcast``) collects the contributions
of the elements that share a channel-wise parameter, so per element it is the
contribution itself (the report says so). A sum may then be multiplied by a factor
that is the same for every summed element: a number, or inputs that the forward
checked channel-wise (``check_channel_parameters(fmt, ...)``) for a
``reduce_to_channels(..., fmt)`` sum; per element the factor multiplies the
contribution. Statements that compute no value (argument checks, docstrings, loops
that only check) are skipped and listed. What the translator cannot read, it refuses
with a :class:`~autodiff_tutor.errors.TranslationError` that names the construct and
the line.

>>> import numpy as np, sympy as sp
>>> def relu_backward(d_y, x):
...     return d_y * (x > 0)
>>> x, g = sp.symbols("x g", real=True)
>>> translate_function(relu_backward, [g, x]).value
g*Piecewise((1, x > 0), (0, True))
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from autodiff_tutor.compiler.front.source import ParsedFunction, as_load, parse_function
from autodiff_tutor.errors import TranslationError
from autodiff_tutor.verify.symbolic.algebra import FUNCTIONS, is_condition, is_symbolic
from autodiff_tutor.verify.symbolic.translate_calls import (
    MUTATING,
    SUM_LIKE,
    Calls,
    Flags,
    Namespace,
    Opaque,
    finish,
)
from autodiff_tutor.verify.symbolic.translate_expressions import Expressions

__all__ = ["Translation", "parse_source", "translate_function", "translate_parsed"]


@dataclass
class Translation:
    """The translated return value, and what the translator assumed or skipped."""

    value: Any
    notes: list[str] = field(default_factory=list)
    #: inputs checked channel-wise by ``check_channel_parameters(fmt, ...)``: symbol -> fmt
    #: (the format's value, such as ``"BC"``)
    channel_wise: dict[Any, str] = field(default_factory=dict)


def parse_source(source: str, filename: str = "<source>") -> ParsedFunction:
    """A :class:`ParsedFunction` for source text (generated code, a string in a test).

    >>> parse_source("def f(x):\\n    return x").name
    'f'
    """
    import textwrap

    dedented = textwrap.dedent(source).strip("\n")
    module = ast.parse(dedented)
    tree = next((n for n in module.body if isinstance(n, ast.FunctionDef)), None)
    if tree is None:
        raise TranslationError(f"no function definition in {filename}")
    return ParsedFunction(None, tree, filename, 1, dedented.splitlines(), 0)  # type: ignore[arg-type]


def translate_function(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    skip_self: bool = False,
    owner: Any = None,
    reductions: Sequence[str] = (),
) -> Translation:
    """Translate ``fn`` called with ``args`` (sympy values, tuples, :class:`Flags`).

    ``skip_self`` binds the first parameter to ``owner`` (a method read from a class).
    """
    parsed = parse_function(fn)
    return translate_parsed(parsed, args, parsed.namespace(), skip_self, owner, reductions)


def translate_parsed(
    parsed: ParsedFunction,
    args: Sequence[Any],
    namespace: dict[str, Any] | None = None,
    skip_self: bool = False,
    owner: Any = None,
    reductions: Sequence[str] = (),
    channel_wise: dict[Any, str] | None = None,
) -> Translation:
    """Translate an already parsed function (see :func:`translate_function`).

    ``channel_wise`` (a forward's :attr:`Translation.channel_wise`) says which inputs
    are the same for every element of a channel, so that a backward may multiply a
    ``reduce_to_channels`` sum by them.
    """
    names = dict(vars(builtins)) if namespace is None else namespace
    interpreter = _Interpreter(parsed, names, owner, set(SUM_LIKE) | set(reductions))
    interpreter.channel_wise = dict(channel_wise or {})
    return interpreter.call(list(args), skip_self)


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Interpreter:
    """The translation of one call of a function: its state (the names bound so far,
    the notes, what is channel-wise), its statements, and one part per kind of
    expression, each an object of its own module that reaches that state through
    ``self.interpreter``: expressions (``self.expressions``) and calls
    (``self.calls``)."""

    def __init__(
        self, parsed: ParsedFunction, names: dict[str, Any], owner: Any, sums: set[str]
    ) -> None:
        self.parsed = parsed
        self.names = names
        self.owner = owner
        self.sums = sums
        self.env: dict[str, Any] = {}
        self.notes: list[str] = []
        self.channel_wise: dict[Any, str] = {}
        self.expressions = Expressions(self)
        self.calls = Calls(self)

    # --- errors and notes ------------------------------------------------------------

    def fail(self, node: ast.AST, message: str, hint: str = "") -> TranslationError:
        location = self.parsed.location(node)
        return TranslationError(f"{message} (line {location.line})", location, hint=hint)

    def note(self, node: ast.AST, message: str) -> None:
        line = self.parsed.file_line(node)
        text = f"line {line}: {message}: {self.parsed.line_text(node)}"
        if text not in self.notes:
            self.notes.append(text)

    # --- functions and statements ----------------------------------------------------

    def call(self, args: list[Any], skip_self: bool) -> Translation:
        tree = self.parsed.tree
        params = [a.arg for a in [*tree.args.posonlyargs, *tree.args.args]]
        if skip_self:
            self.env[params.pop(0)] = self.owner
        if tree.args.vararg is not None or len(args) > len(params):
            raise self.fail(tree, f"{tree.name} takes parameters {params}, given {len(args)}")
        defaults = tree.args.defaults
        for i, name in enumerate(params):
            if i < len(args):
                self.env[name] = args[i]
            elif i >= len(params) - len(defaults):
                self.env[name] = self.expressions.expr(defaults[i - len(params) + len(defaults)])
            else:
                raise self.fail(tree, f"{tree.name}: no value for parameter {name!r}")
        try:
            self.block(tree.body)
        except _Return as result:
            return Translation(finish(result.value), self.notes, self.channel_wise)
        return Translation(None, self.notes, self.channel_wise)

    def block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Return):
            raise _Return(None if node.value is None else self.expressions.expr(node.value))
        if isinstance(node, ast.Assign):
            value = self.expressions.expr(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, self.expressions.expr(node.value))
        elif isinstance(node, ast.AugAssign):
            current = self.expressions.expr(as_load(node.target))
            self.assign(
                node.target,
                self.expressions.binop(node, node.op, current, self.expressions.expr(node.value)),
            )
        elif isinstance(node, ast.If):
            self.block(node.body if self.truth(node.test) else node.orelse)
        elif isinstance(node, ast.Expr):
            self.bare_expression(node)
        elif isinstance(node, (ast.Pass, ast.Assert)):
            if isinstance(node, ast.Assert):
                self.note(node, "assertion skipped")
        elif isinstance(node, ast.For) and all(_is_check(s) for s in node.body):
            self.note(node, "loop of checks skipped")
        else:
            kind = type(node).__name__
            raise self.fail(
                node,
                f"cannot translate a {kind} statement to sympy",
                "write the computation as straight-line array code with masks "
                "(loops and other statements are not translated)",
            )

    def bare_expression(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant):
            return  # a docstring
        if not isinstance(node.value, ast.Call):
            raise self.fail(node, "an expression statement that is not a call")
        func = node.value.func
        if isinstance(func, ast.Attribute) and func.attr in MUTATING:
            raise self.fail(node, f"in-place update {func.attr}() cannot be translated")
        if ast.unparse(func).split(".")[-1] == "check_channel_parameters":
            self.record_channel_wise(node.value)
        self.note(node, "statement without a value skipped")

    def record_channel_wise(self, call: ast.Call) -> None:
        """``check_channel_parameters(fmt, X, op, tl=tl, ...)`` raises unless each keyword
        value is channel-wise in ``fmt``: remember those inputs (by their symbols)."""
        try:
            fmt = self.expressions.expr(call.args[0]) if call.args else None
        except TranslationError:
            fmt = None
        if not isinstance(fmt, str):
            return  # a format the translation does not know: nothing is assumed
        for keyword in call.keywords:
            if keyword.arg and isinstance(keyword.value, ast.Name):
                value = self.env.get(keyword.value.id)
                if isinstance(value, sp.Symbol):
                    self.channel_wise[value] = fmt

    def truth(self, test: ast.expr) -> bool:
        value = self.expressions.expr(test)
        if is_symbolic(value):
            raise self.fail(
                test,
                "a branch on array values cannot be translated",
                "use masks or xp.where so that every element takes its own branch",
            )
        if isinstance(value, (Opaque, Namespace, Flags)):
            raise self.fail(test, f"cannot decide the condition {ast.unparse(test)}")
        return bool(value)

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, Flags):  # want_X, want_W = compute_gradients: all true
                value = (True,) * len(target.elts)
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise self.fail(target, "cannot unpack this value")
            for t, v in zip(target.elts, value, strict=True):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            self.assign_masked(target, value)
        else:
            raise self.fail(target, f"cannot assign to {ast.unparse(target)}")

    def assign_masked(self, target: ast.Subscript, value: Any) -> None:
        """``d[mask] = v``: per element, ``v`` where the mask holds, ``d`` elsewhere."""
        if not isinstance(target.value, ast.Name):
            raise self.fail(target, f"cannot assign to {ast.unparse(target)}")
        current = self.expressions.expr(target.value)
        index = self.expressions.expr(target.slice)
        if isinstance(index, Opaque) or index is Ellipsis or isinstance(index, slice):
            self.env[target.value.id] = value  # d[...] = v, d[:] = v
            return
        if not (is_symbolic(index) and is_condition(index)):
            raise self.fail(target, "only assignments through a boolean mask are translated")
        self.env[target.value.id] = FUNCTIONS["where"](index, value, current)


def _is_check(statement: ast.stmt) -> bool:
    return isinstance(statement, (ast.Pass, ast.Assert)) or (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
    )
