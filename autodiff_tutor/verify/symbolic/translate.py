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
import operator
import textwrap
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from autodiff_tutor.compiler.front.source import ParsedFunction, as_load, parse_function
from autodiff_tutor.errors import TranslationError
from autodiff_tutor.rules.names import canonical, is_array_module
from autodiff_tutor.verify.symbolic.algebra import (
    FUNCTIONS,
    as_condition,
    as_number,
    binary,
    compare,
    is_condition,
    is_symbolic,
    logical,
)

__all__ = [
    "Flags",
    "Translation",
    "finish",
    "parse_source",
    "translate_function",
    "translate_parsed",
]

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.Pow: "pow"}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}

_PYTHON = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
}

#: Functions that sum an array over the elements sharing a parameter (or broadcast a
#: gradient back): per element, the identity. Matched by name.
SUM_LIKE = {
    "sum",
    "reduce_to_channels",
    "unbroadcast",
    "unreduce",
    "sum_to_shape",
    "broadcast_like",
    "broadcast_to",
}
#: Functions and methods that only change the shape of an array: per element, identity.
SHAPE_ONLY = {
    "reshape",
    "expand_dims",
    "squeeze",
    "transpose",
    "permute_dims",
    "moveaxis",
    "swapaxes",
    "asarray",
    "array",
    "copy",
    "ascontiguousarray",
    "atleast_1d",
    "atleast_2d",
    "float32",
    "float64",
    "float",
    "cast_like",
    "like",  # the shape and dtype the forward saves for the backward
}
#: Of those, the broadcast helpers of generated code: identities per element, usable
#: in further arithmetic (they sum only where a value was broadcast).
BROADCASTS = {"unbroadcast", "unreduce", "broadcast_like", "broadcast_to", "sum_to_shape"}
ARRAY_MODULE_FACTORIES = {"array_module", "get_array_module", "array_namespace"}
CONSTANT_LIKE = {"zeros_like": 0, "ones_like": 1, "zeros": 0, "ones": 1, "empty_like": 0}
MUTATING = {"fill", "put", "itemset", "sort", "resize", "copyto", "place", "putmask", "at"}


class Opaque:
    """A value the translation carries but cannot compute with (``x.dtype``, ``len(...)``)."""

    def __init__(self, description: str) -> None:
        self.description = description

    def __repr__(self) -> str:
        return f"<{self.description}>"


class Flags:
    """``compute_gradients``: every flag reads as true (all gradients are checked)."""

    def __repr__(self) -> str:
        return "compute_gradients"


class Namespace:
    """The array module (``np``, ``xp = array_module(x)``)."""

    def __repr__(self) -> str:
        return "xp"


class Summed:
    """The result of a sum over elements (``xp.sum``, ``reduce_to_channels``).

    Per element it is that element's contribution, which is right only where the sum
    is final (returned, or summed again): using it in further arithmetic would mix
    elements, so the translator refuses that, except for a factor that is the same
    for every summed element (see ``_Interpreter.scaled_sum``). ``by`` names the
    reduction (``reduce_to_channels``) and ``fmt`` the value of its format argument
    (``"BC"``); both are empty for any other sum.
    """

    def __init__(self, expr: Any, line: int, by: str = "", fmt: str = "") -> None:
        self.expr = expr
        self.line = line
        self.by = by
        self.fmt = fmt

    def __repr__(self) -> str:
        return f"sum({self.expr})"


class Named:
    """A helper of generated code known by name only (``unbroadcast`` without globals)."""

    def __init__(self, name: str) -> None:
        self.__name__ = name


def finish(value: Any) -> Any:
    """A translated value with the :class:`Summed` wrappers removed (tuples too).

    >>> finish((Summed(1, line=3), None))
    (1, None)
    """
    if isinstance(value, Summed):
        return value.expr
    if isinstance(value, (tuple, list)):
        return tuple(finish(v) for v in value)
    return value


def _name_of(fn: Any) -> str:
    return getattr(fn, "__name__", "") or type(fn).__name__


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

    >>> import sympy as sp
    >>> def f(x):
    ...     return -x if True else x
    >>> translate_function(f, [sp.Symbol("x")]).value
    -x
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
    the notes, what is channel-wise), its statements, and its expressions, each read
    per element (``expr_<node type>``)."""

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
                self.env[name] = self.expr(defaults[i - len(params) + len(defaults)])
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
            raise _Return(None if node.value is None else self.expr(node.value))
        if isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, self.expr(node.value))
        elif isinstance(node, ast.AugAssign):
            current = self.expr(as_load(node.target))
            self.assign(
                node.target,
                self.binop(node, node.op, current, self.expr(node.value)),
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
            fmt = self.expr(call.args[0]) if call.args else None
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
        value = self.expr(test)
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
        current = self.expr(target.value)
        index = self.expr(target.slice)
        if isinstance(index, Opaque) or index is Ellipsis or isinstance(index, slice):
            self.env[target.value.id] = value  # d[...] = v, d[:] = v
            return
        if not (is_symbolic(index) and is_condition(index)):
            raise self.fail(target, "only assignments through a boolean mask are translated")
        self.env[target.value.id] = FUNCTIONS["where"](index, value, current)

    # --- expressions -------------------------------------------------------------------

    def expr(self, node: ast.expr) -> Any:
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.fail(node, f"cannot translate {type(node).__name__} {ast.unparse(node)}")
        try:
            return method(node)
        except TranslationError as error:
            if error.location is not None:
                raise
            raise self.fail(node, error.message, error.hint) from None

    def expr_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def expr_Name(self, node: ast.Name) -> Any:
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.names:
            value = self.names[node.id]
            if isinstance(value, types.ModuleType) and is_array_module(value):
                return Namespace()
            return value
        if node.id in ("np", "numpy", "xp", "cupy", "cp"):
            return Namespace()
        if node.id in self.sums | SHAPE_ONLY | ARRAY_MODULE_FACTORIES:
            return Named(node.id)
        raise self.fail(node, f"unknown name {node.id!r}")

    def expr_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.expr(e) for e in node.elts)

    expr_List = expr_Tuple

    def expr_Slice(self, node: ast.Slice) -> Any:
        return slice(None)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.expr(node.operand)
        if isinstance(node.op, ast.Not) and not is_symbolic(value):
            return not value
        self.require_number(node.operand, value)
        if isinstance(node.op, ast.USub):
            return -as_number(value) if is_symbolic(value) else -value
        if isinstance(node.op, ast.UAdd):
            return value
        if isinstance(node.op, ast.Invert):
            return logical("not", value)
        raise self.fail(node, "'not' on array values (use ~ for masks)")

    def binop(self, node: ast.AST, op: ast.operator, left: Any, right: Any) -> Any:
        if not (is_symbolic(left) or is_symbolic(right)):
            if isinstance(left, (int, float)) and isinstance(right, (int, float)):
                return _PYTHON[type(op)](left, right)
        scaled = self.scaled_sum(node, op, left, right)
        if scaled is not None:
            return scaled
        for side in (left, right):
            self.require_number(node, side)
        if isinstance(op, ast.BitAnd):
            return logical("and", left, right)
        if isinstance(op, ast.BitOr):
            return logical("or", left, right)
        if type(op) in _BINARY:
            return binary(_BINARY[type(op)], left, right)
        raise self.fail(
            node,
            f"operator {type(op).__name__} cannot be translated per element",
            "matrix products and integer division mix elements",
        )

    def scaled_sum(self, node: ast.AST, op: ast.operator, left: Any, right: Any) -> Any:
        """``sum(g) * c``, ``c * sum(g)`` or ``sum(g) / c`` read as the sum of ``g * c``
        (``g / c``), when ``c`` is the same for every summed element: a number, or
        channel-wise inputs (see ``record_channel_wise``) with a ``reduce_to_channels``
        sum in the same format. ``None`` when that does not hold (then the sum is
        refused as usual)."""
        if isinstance(left, Summed) and isinstance(op, (ast.Mult, ast.Div)):
            total, factor = left, right
        elif isinstance(right, Summed) and isinstance(op, ast.Mult):
            total, factor = right, left
        else:
            return None
        if not self.same_for_every_summed_element(total, factor):
            return None
        self.note(node, "a sum times a factor that is the same for every summed element")
        product = binary(_BINARY[type(op)], total.expr, factor)
        return Summed(product, total.line, total.by, total.fmt)

    def same_for_every_summed_element(self, total: Summed, factor: Any) -> bool:
        if isinstance(factor, bool) or isinstance(factor, Summed):
            return False
        if isinstance(factor, (int, float)):
            return True
        if not is_symbolic(factor) or is_condition(factor):
            return False
        channel_sum = total.by == "reduce_to_channels" and total.fmt != ""
        return all(
            channel_sum and self.channel_wise.get(symbol) == total.fmt
            for symbol in factor.free_symbols
        )

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        return self.binop(node, node.op, self.expr(node.left), self.expr(node.right))

    def expr_Compare(self, node: ast.Compare) -> Any:
        left, conditions = self.expr(node.left), []
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.expr(comparator)
            if isinstance(op, (ast.Is, ast.IsNot)):  # identity: `d is None`
                same = left is right
                conditions.append(same if isinstance(op, ast.Is) else not same)
            elif type(op) in _COMPARE:
                self.require_number(node, left)
                self.require_number(node, right)
                conditions.append(compare(_COMPARE[type(op)], left, right))
            else:
                raise self.fail(node, f"comparison {type(op).__name__} cannot be translated")
            left = right
        return conditions[0] if len(conditions) == 1 else logical("and", *conditions)

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.expr(v) for v in node.values]
        if any(is_symbolic(v) for v in values):
            raise self.fail(node, "'and'/'or' on array values", "use & and | on masks")
        return all(values) if isinstance(node.op, ast.And) else any(values)

    def expr_IfExp(self, node: ast.IfExp) -> Any:
        return self.expr(node.body if self.truth(node.test) else node.orelse)

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        if isinstance(base, Namespace):
            return ("xp", node.attr)
        if is_symbolic(base):
            if node.attr in ("T", "mT", "real"):
                return base
            if node.attr in ("shape", "dtype", "ndim", "size"):
                return Opaque(ast.unparse(node))
            return ("method", base, node.attr)
        if base is self.owner and self.owner is not None:
            return getattr(base, node.attr, Opaque(ast.unparse(node)))
        if isinstance(base, Opaque):
            return Opaque(ast.unparse(node))
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.fail(node, f"unknown attribute {ast.unparse(node)}") from None

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        index = self.expr(node.slice)
        if isinstance(base, Flags):
            return True
        if isinstance(base, (tuple, list)) and isinstance(index, int):
            return base[index]
        if isinstance(base, Opaque):
            return Opaque(ast.unparse(node))
        if is_symbolic(base):
            if _selects_elements(index):
                raise self.fail(
                    node,
                    f"{ast.unparse(node)} picks particular elements",
                    "per-element translation understands masks, slices, None and ...",
                )
            return base  # a mask, slice or new axis: the element itself
        raise self.fail(node, f"cannot translate {ast.unparse(node)}")

    def require_number(self, node: ast.AST, value: Any) -> None:
        if isinstance(value, Summed):
            raise self.fail(
                node,
                f"the sum of line {value.line} is used in further computation: per element "
                "it cannot be followed (it mixes elements)",
                "the symbolic check reads sums only as the last step of a value",
            )
        if isinstance(value, (Opaque, Namespace, Flags, str, tuple)) or value is None:
            raise self.fail(node, f"{value!r} cannot be used as a number here")

    # --- calls -------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call) -> Any:
        expr = self.expr
        func = expr(node.func)
        args = [expr(a) for a in node.args]
        kwargs = {k.arg: expr(k.value) for k in node.keywords if k.arg}
        if isinstance(func, tuple) and func[0] == "xp":
            return self.array_call(node, canonical(func[1]), args, kwargs)
        if isinstance(func, tuple) and func[0] == "method":
            return self.method_call(node, func[1], func[2], args, kwargs)
        name = _name_of(func)
        if name in ARRAY_MODULE_FACTORIES:
            return Namespace()
        if func is builtins.abs:
            return FUNCTIONS["abs"](args[0])
        if func in (builtins.max, builtins.min) and len(args) == 2:
            return FUNCTIONS["maximum" if func is builtins.max else "minimum"](*args)
        if name in self.sums:
            return self.summed(node, name, args[0])
        if name in SHAPE_ONLY:
            return args[0]
        if any(is_symbolic(a) or isinstance(a, Summed) for a in [*args, *kwargs.values()]):
            raise self.fail(
                node,
                f"cannot translate the call {ast.unparse(node.func)}(...) on array values",
                "inline it, or if it sums over the elements sharing a parameter pass "
                f"reductions=[{name!r}] to verify_symbolic",
            )
        return Opaque(ast.unparse(node))

    def array_call(self, node: ast.Call, name: str, args: list[Any], kwargs: dict) -> Any:
        for value in [*args, *kwargs.values()]:
            if isinstance(value, Summed):
                self.require_number(node, value)
        if name == "clip":
            bounds = [kwargs.get(k) for k in ("a_min", "a_max", "min", "max")]
            args = [*args, *[b for b in bounds if b is not None]]
            return FUNCTIONS["clip"](*args)
        if name in FUNCTIONS:
            return FUNCTIONS[name](*args)
        if name in CONSTANT_LIKE:
            return sp.Integer(CONSTANT_LIKE[name])
        if name in ("full_like", "full"):
            return as_number(args[1] if len(args) > 1 else kwargs["fill_value"])
        if name == "astype":
            return _astype(args[0], args[1] if len(args) > 1 else kwargs.get("dtype"))
        if name in self.sums:
            return self.summed(node, name, args[0])
        if name in SHAPE_ONLY:
            return args[0]
        if name in ("mean", "prod", "max", "min", "matmul", "dot", "cumsum", "norm"):
            raise self.fail(node, f"xp.{name} mixes elements: it cannot be read per element")
        raise self.fail(node, f"xp.{name} has no symbolic translation")

    def method_call(
        self, node: ast.Call, base: Any, name: str, args: list[Any], kwargs: dict
    ) -> Any:
        if name in MUTATING:
            raise self.fail(node, f"in-place update .{name}() cannot be translated")
        if name == "astype":
            return _astype(base, args[0] if args else kwargs.get("dtype"))
        if name == "clip":
            return FUNCTIONS["clip"](base, *args)
        if name in self.sums:
            return self.summed(node, name, base)
        if name in SHAPE_ONLY:
            return base
        raise self.fail(node, f"method .{name}() has no symbolic translation")

    def summed(self, node: ast.AST, name: str, value: Any) -> Any:
        """A reduction: per element, the element's contribution (final use only); the
        broadcast helpers of generated code are identities per element."""
        if name in BROADCASTS:
            return value
        self.note(node, f"{name}(...) read as a sum: each element's contribution is checked")
        if isinstance(value, Summed):  # a sum of a sum: over more axes, of no known kind
            return Summed(value.expr, self.parsed.file_line(node))
        return Summed(value, self.parsed.file_line(node), name, self.format_argument(node, name))

    def format_argument(self, node: ast.AST, name: str) -> str:
        """The value of ``fmt`` in ``reduce_to_channels(x, fmt)`` when it is a known
        string (``self.format``, ``"BC"``); ``""`` for anything else."""
        if name != "reduce_to_channels" or not isinstance(node, ast.Call):
            return ""
        fmt = node.args[1] if len(node.args) > 1 else None
        fmt = fmt or next((k.value for k in node.keywords if k.arg == "fmt"), None)
        value = self.expr(fmt) if fmt is not None else None
        return value if isinstance(value, str) else ""


def _is_check(statement: ast.stmt) -> bool:
    return isinstance(statement, (ast.Pass, ast.Assert)) or (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
    )


def _selects_elements(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if part is None or part is Ellipsis or isinstance(part, slice):
            continue
        if is_symbolic(part) and is_condition(part):
            continue
        return True
    return False


def _astype(value: Any, dtype: Any) -> Any:
    if isinstance(dtype, tuple) and dtype[-1] in ("bool", "bool_"):
        return as_condition(value)
    if dtype is bool or getattr(dtype, "__name__", "") == "bool_":
        return as_condition(value)
    return as_number(value)
