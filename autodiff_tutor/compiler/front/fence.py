"""Stage 1 (with the source): the supported subset of Python, and located errors for the rest.

The fence is purely syntactic: it walks the tree once and rejects any construct the
compiler does not differentiate, pointing at it with file, line, column, a caret
and a hint. What passes the fence, the later stages know how to handle (or they
reject it with an equally located error when the reason is semantic).

>>> import ast
>>> from autodiff_tutor.compiler.front.source import parse_function
>>> def f(x):
...     return {v for v in x}
>>> check_supported(parse_function(f))
Traceback (most recent call last):
...
autodiff_tutor.errors.UnsupportedSyntaxError: set comprehensions are not supported ...
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.code import root_name
from autodiff_tutor.compiler.front.desugar.callees import assigned_names, spread_count
from autodiff_tutor.compiler.front.desugar.walrus import hoistable
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.errors import UnsupportedSyntaxError

# Numpy code with structured control flow: one expression language, these statements.
SUPPORTED_STATEMENTS = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Return,
    ast.Expr,
    ast.Pass,
    ast.If,
    ast.For,
    ast.While,
    ast.Break,
    ast.Continue,
    ast.FunctionDef,  # helpers defined inside are inlined where they are called
    ast.arguments,
    ast.arg,
    ast.Assert,  # kept for their effect: run in the forward, never in the backward
    ast.Raise,
    ast.With,  # lowered to __enter__() / body / __exit__()
    ast.withitem,
)
SUPPORTED_EXPRESSIONS = (
    ast.Name,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.Call,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.keyword,
    ast.BoolOp,
    ast.IfExp,
    ast.Dict,  # structures known at compile time (desugar_structures)
    ast.ListComp,  # comprehensions are lowered to loops (desugar_python)
    ast.GeneratorExp,
    ast.DictComp,
    ast.comprehension,
    ast.Lambda,  # only 'f = lambda ...' (a nested helper); others are refused later
    ast.JoinedStr,  # f-strings never carry gradient
    ast.FormattedValue,
)
CONTEXTS = (ast.Load, ast.Store, ast.Del, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)

# What to tell a user about each construct the compiler rejects.
HINTS: dict[type[ast.AST], tuple[str, str]] = {
    ast.SetComp: ("set comprehensions are not supported", "use arrays"),
    ast.Yield: ("generators are not supported", "return an array instead of yielding"),
    ast.YieldFrom: ("generators are not supported", "return an array instead of yielding"),
    ast.Await: ("async code is not supported", "use a plain def"),
    ast.Try: ("'try' is not supported", "move error handling outside the function"),
    ast.Global: ("'global' is not supported", "pass the value as an argument"),
    ast.Nonlocal: ("'nonlocal' is not supported", "return the value instead"),
    ast.ClassDef: ("classes defined inside the function are not supported", "define it outside"),
    ast.AsyncFunctionDef: ("async functions are not supported", "use a plain def"),
    ast.AsyncFor: ("async loops are not supported", "use a plain for"),
    ast.AsyncWith: ("'async with' is not supported", "move it outside the function"),
    ast.Delete: ("'del' is not supported", "let the value go out of scope"),
    ast.Import: ("imports inside the function are not supported", "import at module level"),
    ast.ImportFrom: ("imports inside the function are not supported", "import at module level"),
    ast.NamedExpr: (
        "':=' is not supported here (only in an 'if' test or a comprehension's condition, "
        "where it always runs and its name is read nowhere else in the test)",
        "assign it in a statement of its own (before the 'if'; for a 'while', before the "
        "loop and again at the end of its body)",
    ),
    ast.Starred: ("'*' unpacking is not supported", "pass the arguments one by one"),
    ast.Set: ("set literals are not supported", "use arrays"),
}


def check_supported(parsed: ParsedFunction) -> None:
    """Raise :class:`UnsupportedSyntaxError` at the first construct outside the subset.

    >>> from autodiff_tutor.compiler.front.source import parse_function
    >>> def ok(x, y=2.0):
    ...     return x * y
    >>> check_supported(parse_function(ok))
    """
    _check_signature(parsed)
    namespace = parsed.namespace()
    local = assigned_names(parsed.tree)
    for statement in parsed.tree.body:
        if _is_docstring(statement):
            continue
        transposed = {  # zip(*pairs) of a structure: resolved while compiling
            id(arg)
            for call in ast.walk(statement)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "zip"
            and len(call.args) == 1
            for arg in call.args
        }
        spread = {  # np.random.rand(*x.shape): a shape's integers, never a gradient
            id(arg)
            for call in ast.walk(statement)
            if isinstance(call, ast.Call)
            for arg in call.args
            if isinstance(arg, ast.Starred)
            and (
                (isinstance(arg.value, ast.Attribute) and arg.value.attr == "shape")
                or spread_count(call, namespace, local) is not None  # model(t, *p)
            )
        }
        hoisted = {  # if (n := f(x)) > 1: an assignment before the test (front.desugar.walrus)
            id(walrus)
            for node in ast.walk(statement)
            for test in _tests(node)
            for walrus in hoistable(test)
        }
        writes = frozenset(  # a statement np.fill_diagonal(a, v) is a[k, k] = v; a value is not
            id(node.value)
            for node in ast.walk(statement)
            if isinstance(node, ast.Expr) and is_fill_diagonal(node.value, namespace)
        )
        for node in ast.walk(statement):
            if id(node) not in transposed | spread | hoisted:
                _check_node(parsed, node, namespace, writes)


def _tests(node: ast.AST) -> list[ast.expr]:
    """The tests of an ``if`` statement or a comprehension's conditions."""
    if isinstance(node, ast.If):
        return [node.test]
    return list(node.ifs) if isinstance(node, ast.comprehension) else []


def _check_signature(parsed: ParsedFunction) -> None:
    args = parsed.tree.args
    for special, what in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
        if special is not None:
            raise UnsupportedSyntaxError(
                f"{what} parameters are not supported",
                parsed.location(special),
                hint="name each parameter",
            )


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


# numpy methods and functions that change an array in place (the compiler's values
# are versions that never change, so these would silently break the gradient)
IN_PLACE_METHODS = {
    "sort",
    "fill",
    "put",
    "resize",
    "partition",
    "setfield",
    "itemset",
    "byteswap",
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__isub__",
    "__imul__",
    "__itruediv__",
    "__ipow__",
    "__imatmul__",
    "setflags",
}
IN_PLACE_FUNCTIONS = {
    "copyto", "place", "put", "putmask", "fill_diagonal", "put_along_axis", "at", "shuffle"
}  # fmt: skip


def in_place_call(
    node: ast.AST, namespace: dict | None = None, writes: frozenset[int] = frozenset()
) -> str | None:
    """The name of an in-place array operation this call makes, if any; ``writes``: the
    calls compiled as writes (``np.fill_diagonal(a, v)`` as a statement)."""
    if not isinstance(node, ast.Call):
        return None
    if any(keyword.arg == "out" for keyword in node.keywords):
        return "out="
    if isinstance(node.func, ast.Attribute):
        name = node.func.attr
        if name in IN_PLACE_FUNCTIONS and id(node) not in writes:
            return name
        if name in IN_PLACE_METHODS and not _is_module(node.func.value, namespace):
            return name  # y.sort() sorts y in place; np.sort(y) makes a sorted copy
    return None


def is_fill_diagonal(node: ast.expr, namespace: dict | None = None) -> bool:
    """``np.fill_diagonal(a, v)`` of a name ``a`` (without ``wrap``): the write
    ``a[k, k] = v``, which the compiler follows as any write into an array made here.

    >>> is_fill_diagonal(ast.parse("np.fill_diagonal(K, 0.0)", mode="eval").body)
    True
    """
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "fill_diagonal"
        and (namespace is None or _is_module(node.func.value, namespace))
        and len(node.args) == 2
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
    )


def _is_module(node: ast.expr, namespace: dict | None) -> bool:
    root = root_name(node)
    if root is None or namespace is None:
        return False
    return type(namespace.get(root)).__name__ == "module"


def _check_node(
    parsed: ParsedFunction, node: ast.AST, namespace: dict, writes: frozenset[int]
) -> None:
    in_place = in_place_call(node, namespace, writes)
    if in_place is not None:
        hint = (
            "compute a new array instead (np.sort(x), np.where(...), y = y + v, "
            "y[i] = v on an array made in this function)"
        )
        if in_place == "fill_diagonal" and is_fill_diagonal(node, namespace):  # as a value
            hint = (
                "write np.fill_diagonal(a, v) as a statement of its own (it returns None): "
                "the compiler follows it as the write a[k, k] = v"
            )
        raise UnsupportedSyntaxError(
            f"'{in_place}' changes an array in place, which the compiler does not differentiate",
            parsed.location(node),
            hint=hint,
        )
    if isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Store):
        return  # first, *rest = values
    if isinstance(node, SUPPORTED_STATEMENTS + SUPPORTED_EXPRESSIONS + CONTEXTS):
        if isinstance(node, ast.Assign) and len(node.targets) > 1:
            raise UnsupportedSyntaxError(
                "chained assignment 'a = b = ...' is not supported",
                parsed.location(node),
                hint="assign each name separately",
            )
        if isinstance(node, ast.Expr) and not (
            isinstance(node.value, (ast.Constant, ast.Call, *HINTS))
            or in_place_call(node.value, namespace, writes)  # reported when the walk gets there
        ):
            raise UnsupportedSyntaxError(
                "an expression statement is not supported: its value would be thrown away",
                parsed.location(node),
                hint="assign the result to a name; in-place methods "
                "(x.sort(), x.fill()) are not differentiable",
            )
        return
    message, hint = HINTS.get(
        type(node),
        (f"'{type(node).__name__}' is not supported", "rewrite it with plain numpy"),
    )
    raise UnsupportedSyntaxError(message, parsed.location(node), hint=hint)


def is_list_append(value: ast.expr) -> bool:
    """``name.append(v)``: one positional argument, the only expression statement kept.

    >>> is_list_append(ast.parse("ys.append(y)", mode="eval").body)
    True
    >>> is_list_append(ast.parse("ys.append(a, b)", mode="eval").body)
    False
    """
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "append"
        and isinstance(value.func.value, ast.Name)
        and len(value.args) == 1
        and not value.keywords
    )
