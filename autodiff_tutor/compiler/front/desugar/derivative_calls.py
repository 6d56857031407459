"""Derivatives taken inside differentiated code, as calls of the functions computing them.

``grad(f)(x)``, ``value_and_grad(f)(x)``, ``hvp(f)(x, v)`` and ``jvp(f, (x,), (v,))``
written inside a function that is itself differentiated (a Newton step, a gradient
penalty, one step of meta-learning) are calls of a derivative the compiler generates:
a plain Python function with source (``f_grad(x)``: the forward, the seed, the
backward in a row; ``f_jvp(x, x_dot)``; ``f_grad_jvp(x, v)``); ``hessian(f)(x)`` is
one such product per entry of ``x``, written as a loop; ``pullback(v)`` of ``value,
pullback = vjp(f, x, wrt=0)`` is ``grad`` of ``sum(f(x) * v)``. Each call is rewritten
here into a call of that function, nested as a helper that the compiler then inlines
and differentiates like any other code: nested derivatives are code, so the outer
derivative never mixes up its perturbation with the inner one.

A lambda or a def of the differentiated function that reads its variables
(``grad(lambda y: f(x, y))(y0)``, ``x`` a variable of the caller) is *lifted*: its
tree becomes a function of those variables first and of its own parameters after, the
derivative is taken with respect to its own parameters only, and the call passes the
variables' values at the call (what the closure would read). ``x`` then stays an
input of the inlined derivative, which the outer derivative differentiates:
``d/dx [x * d/dy (x + y)]`` is 1.

The front doors (``grad``, ``jvp``, ...) live above the compiler: the module that makes
the derivative functions registers itself here (:func:`register_derivative_maker`).

>>> lifted = lift_lambda(ast.parse("lambda y: x * y", mode="eval").body, {"x", "z"})
>>> print(ast.unparse(lifted.tree))
def lifted(x, y):
    return x * y
>>> lifted.captured
['x']
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy

from autodiff_tutor.compiler.front.desugar.callees import (
    assigned_names,
    function_defaults,
    is_function_value,
)
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.errors import (
    ArgumentError,
    AutodiffError,
    Location,
    NonDifferentiableInputError,
    UnsupportedSyntaxError,
)
from autodiff_tutor.syntax import copy_tree

#: the kinds of derivative a call can take inside compiled code
CALLED_WITH_FUNCTION = ("grad", "value_and_grad", "hvp")  # kind(f, wrt)(*args)
REFUSED = ("hessian", "vjp")  # refused where they are not called as written below
_makers: list[Any] = []


@dataclass
class Lifted:
    """A lambda or def of the differentiated function as a function of its own:
    ``tree`` takes the ``captured`` variables of the caller first, then its own
    parameters (``own``)."""

    tree: ast.FunctionDef
    captured: list[str]
    own: list[str]


@dataclass
class Request:
    """A derivative to make: ``kind`` of ``function`` (a value known while compiling)
    or of ``lifted`` (its tree, read in ``parsed``'s names) with respect to ``wrt``
    (positions or names, as the user wrote them; for ``jvp``, the parameters given a
    tangent)."""

    kind: str
    wrt: Any
    function: Any = None
    lifted: Lifted | None = None
    parsed: ParsedFunction | None = None
    params: list[str] = field(default_factory=list)


@dataclass
class Made:
    """The generated function computing a derivative, and the entry of its result the
    call gives (``hvp``: the tangent of the gradient; ``None``: all of it)."""

    function: Callable[..., Any]
    pick: int | None = None


def register_derivative_maker(maker: Any) -> None:
    """Set what tells the front doors apart and makes their derivative functions
    (``autodiff_tutor.api.derivatives`` registers it): ``maker.kind(value)`` is the kind
    of a front door or of a function one made (``"made"``), else ``None``;
    ``maker.made(value)`` the request such a function stands for; ``maker.make(request)``
    a :class:`Made`."""
    _makers[:] = [maker]


def derivative_kind(value: Any) -> str | None:
    """``"grad"``, ``"jvp"``, ... for a front door, ``"made"`` for ``grad(f)`` made
    before; ``None`` for anything else.

    >>> derivative_kind(len) is None
    True
    """
    return _makers[0].kind(value) if _makers else None


@dataclass
class Context:
    """What the rewrite needs of the specializer at a call: the parsed function (with
    what was bound while specializing), the value an expression denotes (``NOT_KNOWN``
    if none; ``guard=True``: assumed by the compiled code), the caller's local names,
    its defs, how to nest a function as a helper (its name), and whether its lambdas
    may be lifted (they are the differentiated function's own, not an inlined
    helper's)."""

    parsed: ParsedFunction
    value_of: Callable[..., Any]
    local: set[str]
    function: ast.FunctionDef
    nest: Callable[[Any, ast.Call], str]
    fresh: Callable[[str], str]
    lifting: bool
    bind: Callable[[Any, str], ast.Name] | None = None  # a name read as this value
    #: the function ``function`` is a def of (its defs are the caller's too)
    outer: ast.FunctionDef | None = None


NOT_KNOWN = object()


def rewritten(call: ast.Call, context: Context) -> ast.expr | None:
    """``call`` as a call of the generated derivative it takes, or ``None`` where it
    takes none (left to the other rewrites)."""
    func = call.func
    if (  # vjp(f, x, wrt=0)[1](v): the pullback applied
        isinstance(func, ast.Subscript)
        and isinstance(func.value, ast.Call)
        and isinstance(func.slice, ast.Constant)
        and func.slice.value == 1
        and derivative_kind(context.value_of(func.value.func)) == "vjp"
    ):
        context.value_of(func.value.func, guard=True)
        return pullback(func.value, call, context)
    if isinstance(func, ast.Call):  # grad(f, wrt)(x)
        kind = derivative_kind(context.value_of(func.func))
        if kind is not None:
            context.value_of(func.func, guard=True)
        if kind in CALLED_WITH_FUNCTION:
            return _with_function(kind, func, call, context)
        if kind == "hessian" and context.bind is not None:
            return _hessian(func, call, context)
        if kind in REFUSED:
            _refuse(kind, func, context)
        return None
    value = context.value_of(func)
    kind = derivative_kind(value)
    if kind is not None:
        context.value_of(func, guard=True)
    if kind == "jvp":
        return _jvp(call, context)
    if kind in REFUSED:
        _refuse(kind, call, context)
    if kind == "made":  # dg = grad(f) at module level, then dg(x)
        made_kind, function, wrt = _makers[0].made(value)
        _check_one_input(made_kind, wrt, context.parsed.location(call))
        request = Request(made_kind, wrt, function=function)
        return _called(request, call, [], list(call.args), context)
    return None


def _with_function(kind: str, maker: ast.Call, call: ast.Call, context: Context) -> ast.expr:
    """``grad(f, wrt)(*args)``, ``value_and_grad(...)``, ``hvp(f, wrt)(*args, v)``."""
    wrt = _wrt(kind, maker, context)
    fixed = _functions_fixed(kind, maker.args[0], wrt, call, context)
    if fixed is not None:  # grad(f)(x, np.tanh): grad(lambda x: f(x, act=np.tanh))(x)
        function, wrt, call = fixed
        request, captured = _request(kind, function, wrt, context)
        return _called(request, call, captured, list(call.args), context)
    request, captured = _request(kind, maker.args[0], wrt, context)
    return _called(request, call, captured, list(call.args), context)


def _functions_fixed(
    kind: str, function: ast.expr, wrt: Any, call: ast.Call, context: Context
) -> tuple[ast.Lambda, Any, ast.Call] | None:
    """``grad(f, wrt)(x, np.tanh)`` where a parameter of the def ``f`` is given a
    function known while compiling (or left to a default that is one): the derivative
    of a lambda calling ``f`` with that function, which the compiler resolves while
    compiling the lambda (``lambda x: f(x, act=np.tanh)``), its ``wrt`` among the
    lambda's parameters, and the call passing the other arguments. ``None`` where no
    parameter is given a function."""
    value = context.value_of(function)
    if not context.lifting or not inspect.isfunction(value):
        return None
    signature = inspect.signature(value)
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind not in plain for p in signature.parameters.values()):
        return None
    given = list(call.args[:-1] if kind == "hvp" else call.args)
    if any(isinstance(a, ast.Starred) for a in given) or any(k.arg is None for k in call.keywords):
        return None
    try:
        bound = signature.bind_partial(*given, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return None  # refused, with Python's words, where the call is made
    functions = {n: e for n, e in bound.arguments.items() if _known_function(e, context)}
    defaults = function_defaults(value, set(bound.arguments))
    if not functions and not defaults:
        return None
    own = [n for n in bound.arguments if n not in functions]
    names = list(signature.parameters)
    picked = [
        names[w] if isinstance(w, int) and -len(names) <= w < len(names) else w
        for w in (wrt if isinstance(wrt, list) else [wrt])
    ]
    for name in picked:
        if name in functions or name in defaults:  # refused as the front door refuses it
            raise NonDifferentiableInputError(
                f"cannot differentiate {value.__name__} with respect to {name!r}: it is "
                "given a function, and only floating-point arrays have gradients",
                context.parsed.location(call),
                hint=f"leave {name!r} out of wrt",
            )
    if any(p not in own for p in picked):
        return None  # a name that is no parameter: refused where the call is made
    shifted = [own.index(p) for p in picked]
    body = ast.Call(
        copy_tree(function),
        [],
        [ast.keyword(n, ast.Name(n, ast.Load())) for n in own]
        + [ast.keyword(n, copy_tree(e)) for n, e in functions.items()],
    )
    arguments = ast.arguments([], [ast.arg(n) for n in own], None, [], [], None, [])
    made = ast.Lambda(arguments, body)
    ast.copy_location(made, function)
    passed = [bound.arguments[n] for n in own] + ([call.args[-1]] if kind == "hvp" else [])
    rewritten = ast.copy_location(ast.Call(call.func, passed, []), call)
    return (
        ast.fix_missing_locations(made),
        shifted if isinstance(wrt, list) else shifted[0],
        ast.fix_missing_locations(rewritten),
    )


def _known_function(expr: ast.expr, context: Context) -> bool:
    """Whether ``expr`` is a function known while compiling, read without the caller's
    variables (``np.tanh``, a module-level def)."""
    if not isinstance(expr, (ast.Name, ast.Attribute)):
        return False
    root = expr
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or root.id in context.local:
        return False
    value = context.value_of(expr)
    return value is not NOT_KNOWN and is_function_value(value) and derivative_kind(value) is None


def vjp_parts(made: ast.Call, context: Context) -> tuple[ast.expr, list[ast.expr], Any]:
    """The function, the arguments and the ``wrt`` (written out) of ``vjp(f, *args,
    wrt=...)`` taken inside differentiated code; refused where it is written otherwise."""
    where = context.parsed.location(made)
    keywords = {k.arg: k.value for k in made.keywords}
    if (
        len(made.args) < 2
        or any(isinstance(a, ast.Starred) for a in made.args)
        or set(keywords) != {"wrt"}
    ):
        raise UnsupportedSyntaxError(
            "vjp inside differentiated code takes the function, its arguments one by one, "
            "and wrt written out (the inputs whose gradients the pullback gives)",
            where,
            hint="write value, pullback = vjp(f, x, y, wrt=[0, 1]), then pullback(v)",
        )
    return made.args[0], list(made.args[1:]), _constant(keywords["wrt"], "wrt", context)


def pullback(made: ast.Call, call: ast.Call, context: Context) -> ast.expr | None:
    """``pullback(v)`` of ``vjp(f, *args, wrt=...)``: by linearity, the gradient of
    ``sum(f(*args) * v)`` with respect to the inputs ``wrt`` names, a tuple (as the
    pullback returns), taken by ``grad`` of a function written here,
    ``def f_pullback(seed, *args): return (f(*args) * seed).sum()``, its seed held."""
    function, arguments, wrt = vjp_parts(made, context)
    where = context.parsed.location(call)
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        raise UnsupportedSyntaxError(
            "the pullback of vjp inside differentiated code takes one seed, shaped like "
            "the function's output",
            where,
        )
    value = context.value_of(function, guard=True) if isinstance(function, ast.Name) else None
    if value is None or value is NOT_KNOWN or not callable(value):
        raise UnsupportedSyntaxError(
            "vjp inside differentiated code differentiates a function known while "
            "compiling, by its name",
            context.parsed.location(function),
            hint="define the function with def at module level (or in this function) and "
            "pass it by name",
        )
    try:
        params = list(inspect.signature(value).parameters)
    except (TypeError, ValueError):
        params = []
    entries = wrt if isinstance(wrt, (list, tuple)) else [wrt]
    positions = [params.index(e) if isinstance(e, str) and e in params else e for e in entries]
    count = len(arguments)
    if not all(type(p) is int and -count <= p < count for p in positions):
        raise UnsupportedSyntaxError(
            f"wrt={wrt!r} does not name arguments of this vjp call",
            context.parsed.location(made),
            hint="give positions among the arguments passed, or their parameter names",
        )
    chosen = [p % count for p in positions]
    if len(set(chosen)) != len(chosen):  # as the front door says it
        names = [params[p] if p < len(params) else str(p) for p in chosen]
        raise ArgumentError(f"wrt names a parameter twice: {names}", context.parsed.location(made))
    seed = context.fresh("seed")
    own = [seed] + [context.fresh(f"{_stem(function)}_arg") for _ in arguments]
    product = ast.BinOp(
        ast.Call(copy_tree(function), [ast.Name(n, ast.Load()) for n in own[1:]], []),
        ast.Mult(),
        ast.Name(seed, ast.Load()),
    )
    body = [ast.Return(ast.Call(ast.Attribute(product, "sum", ast.Load()), [], []))]
    tree = _tree(context.fresh(f"{_stem(function)}_pullback"), [], own, body, call)
    lifted = Lifted(tree, [], own)
    request = Request(
        "grad",
        [1 + p % count for p in positions],
        lifted=lifted,
        parsed=_parsed(context.parsed, tree),
        params=own,
    )
    return _called(request, call, [], [call.args[0], *arguments], context)


def _hessian(maker: ast.Call, call: ast.Call, context: Context) -> ast.expr | None:
    """``hessian(f, wrt)(*args)``: one Hessian-vector product (``hvp(f, wrt)``) per entry
    of the input ``x`` it differentiates, along the basis vectors, stacked and shaped
    ``x.shape + x.shape`` (as the front door computes it), written as code::

        np.reshape(np.stack([np.reshape(f_hvp(*args, np.reshape(
            np.eye(np.size(x), dtype=np.result_type(x))[i], np.shape(x))),
            (np.size(x),)) for i in range(np.size(x))]), np.shape(x) + np.shape(x))
    """
    wrt = _wrt("hessian", maker, context)
    request, captured = _request("hvp", maker.args[0], wrt, context)
    arguments, keywords = list(call.args), list(call.keywords)
    starred = any(isinstance(a, ast.Starred) for a in arguments)
    every = arguments  # each parameter's argument, in order: x is read there
    position = _position(request, captured, wrt)
    if request.function is not None and not starred:  # by keyword, or left out
        every = _every_argument(request.function, arguments, keywords, call, context)
        if position is None:  # the front door's words
            params = list(inspect.signature(request.function).parameters)
            where = context.parsed.location(call)
            _check_wrt_names(wrt, params, request.function.__name__, where)
    elif keywords:
        every = []  # a lifted def takes its arguments by position
    if starred or not (position is not None and 0 <= position < len(every)):
        raise UnsupportedSyntaxError(
            "hessian(f)(...) inside differentiated code takes the arguments of f one by "
            "one, by position",
            context.parsed.location(call),
            hint="write hessian(f)(x) or hessian(f, wrt=1)(x, y)",
        )
    assert context.bind is not None
    np_ = context.bind(numpy, "np")
    entry = context.fresh("hessian_entry")

    def numpy_call(name: str, *args: ast.expr) -> ast.Call:
        return ast.Call(ast.Attribute(copy_tree(np_), name, ast.Load()), list(args), [])

    def of_x(name: str) -> ast.Call:  # np.size(x), np.shape(x)
        return numpy_call(name, copy_tree(every[position]))

    identity = numpy_call("eye", of_x("size"))  # in x's dtype, as the front door's
    identity.keywords = [ast.keyword("dtype", of_x("result_type"))]
    basis = ast.Subscript(identity, ast.Name(entry, ast.Load()), ast.Load())
    direction = numpy_call("reshape", basis, of_x("shape"))
    product = _called(request, call, captured, [*arguments, direction], context, keywords)
    if product is None:
        return None
    flat_size = ast.Tuple([of_x("size")], ast.Load())
    entries = ast.Call(ast.Name("range", ast.Load()), [of_x("size")], [])
    loop = ast.comprehension(ast.Name(entry, ast.Store()), entries, [], 0)
    rows = ast.ListComp(numpy_call("reshape", product, flat_size), [loop])
    both = ast.BinOp(of_x("shape"), ast.Add(), of_x("shape"))
    result = numpy_call("reshape", numpy_call("stack", rows), both)
    return ast.fix_missing_locations(ast.copy_location(result, call))


def _position(request: Request, captured: list[str], wrt: Any) -> int | None:
    """The position among the call's arguments of the input ``wrt`` names."""
    if request.lifted is not None:
        own = request.lifted.own
        if isinstance(wrt, str):
            return own.index(wrt) if wrt in own else None
        return wrt % len(own) if isinstance(wrt, int) and -len(own) <= wrt < len(own) else None
    try:
        params = list(inspect.signature(request.function).parameters)
    except (TypeError, ValueError):
        return None
    if isinstance(wrt, str):
        return params.index(wrt) if wrt in params else None
    if isinstance(wrt, bool) or not isinstance(wrt, int):
        return None
    return wrt % len(params) if -len(params) <= wrt < len(params) else None


def _wrt(kind: str, maker: ast.Call, context: Context) -> Any:
    """The ``wrt`` of ``kind(f, wrt)``, refused where the call is not written so."""
    where = context.parsed.location(maker)
    if not maker.args or any(isinstance(a, ast.Starred) for a in maker.args):
        raise UnsupportedSyntaxError(
            f"{kind}(...) needs the function to differentiate as its first argument",
            where,
            hint=f"write {kind}(f)(x) or {kind}(f, wrt=1)(x, y)",
        )
    wrt = _constant(maker.args[1], "wrt", context) if len(maker.args) > 1 else 0
    for keyword in maker.keywords:
        if keyword.arg != "wrt":
            raise UnsupportedSyntaxError(
                f"{kind}(...) takes the function and wrt, not {keyword.arg!r}",
                context.parsed.location(keyword.value),
            )
        wrt = _constant(keyword.value, "wrt", context)
    _check_one_input(kind, wrt, where)
    return wrt


def _check_one_input(kind: str, wrt: Any, where: Location) -> None:
    """Refuse ``hvp`` and ``hessian`` of anything but one input, as the front door does."""
    if kind in ("hvp", "hessian") and (isinstance(wrt, bool) or not isinstance(wrt, (int, str))):
        raise ArgumentError(
            f"{kind} takes one input to differentiate, by position or name; got wrt={wrt!r}",
            where,
            hint="for several inputs, pass them as one array, or take one block at a time",
        )


def _jvp(call: ast.Call, context: Context) -> ast.expr:
    """``jvp(f, (x, y), (dx, None))``: the tangent function of ``f`` along the
    arguments given a tangent, called on the arguments then those tangents."""
    where = context.parsed.location(call)
    args = call.args
    if (
        len(args) != 3
        or call.keywords
        or not all(isinstance(a, (ast.Tuple, ast.List)) for a in args[1:])
        or len(args[1].elts) != len(args[2].elts)
    ):
        raise UnsupportedSyntaxError(
            "jvp inside differentiated code takes the function and two tuples written out, "
            "the arguments and their tangents (one each)",
            where,
            hint="write jvp(f, (x,), (v,)); give None as the tangent of an argument held fixed",
        )
    values, tangents = args[1].elts, args[2].elts
    given = [not (isinstance(t, ast.Constant) and t.value is None) for t in tangents]
    if not any(given):
        raise UnsupportedSyntaxError(
            "every tangent is None: there is no direction to differentiate along", where
        )
    request, captured = _request("jvp", args[0], None, context)
    if request.lifted is not None:  # its own parameters, as the call outside binds them
        own = request.lifted.own
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        try:
            inspect.Signature([inspect.Parameter(n, kind) for n in own]).bind(*values)
        except TypeError as error:
            said = _name_outside(args[0], context)
            raise ArgumentError(f"cannot call {said}({', '.join(own)}): {error}", where) from None
    offset = len(captured)
    request.wrt = [offset + i for i, g in enumerate(given) if g]
    dots = [t for t, g in zip(tangents, given, strict=True) if g]
    return _called(request, call, captured, [*values, *dots], context)


def _request(
    kind: str, function: ast.expr, wrt: Any, context: Context
) -> tuple[Request, list[str]]:
    """The request for ``kind`` of the function ``function`` denotes, and the caller's
    variables it reads (passed first)."""
    lifted = None
    if isinstance(function, ast.Lambda) and context.lifting:
        lifted = lift_lambda(function, context.local)
    elif isinstance(function, ast.Name) and context.lifting:
        definition = _caller_def(context, function.id)
        if definition is not None:
            lifted = lift_def(definition, context.local)
        if lifted is not None and definition is not _local_def(context.function, function.id):
            hidden = set(lifted.captured) & assigned_names(context.function)
            if hidden:  # the call would pass the def's own variables, not the closure's
                raise UnsupportedSyntaxError(
                    f"{kind}({function.id}) here differentiates a def that reads "
                    f"{', '.join(sorted(hidden))} of the function around it, a name this "
                    "helper binds too",
                    context.parsed.location(function),
                    hint=f"pass {', '.join(sorted(hidden))} to {function.id} as arguments",
                )
    local = isinstance(function, ast.Lambda) or (
        isinstance(function, ast.Name) and _caller_def(context, function.id)
    )
    if lifted is None and local:
        why = (
            "takes defaults, *args, keyword-only parameters or **kwargs"
            if context.lifting
            else "is written in a function the compiler inlines here (a method, a "
            "function held by an object)"
        )
        raise UnsupportedSyntaxError(
            f"{kind}(...) here differentiates a function defined in the code that {why}",
            context.parsed.location(function),
            hint="define it at module level with plain parameters, and pass it the values "
            "it reads as arguments",
        )
    if (
        lifted is None
        and isinstance(function, ast.Attribute)
        and not isinstance(context.value_of(function.value), types.ModuleType)
    ):
        said = ast.unparse(function)
        raise UnsupportedSyntaxError(
            f"{kind}({said}) inside differentiated code is not supported: {said} is "
            "reached through an object",
            context.parsed.location(function),
            hint=f"differentiate a lambda that calls it: {kind}(lambda x: {said}(x))",
        )
    if lifted is None:
        value = context.value_of(function, guard=True)
        if value is NOT_KNOWN or not callable(value):
            raise UnsupportedSyntaxError(
                f"{kind}(...) here differentiates a function the compiler cannot know "
                "while compiling",
                context.parsed.location(function),
                hint="pass a function defined with def (at module level or in this "
                "function), or a lambda written in the call",
            )
        return Request(kind, wrt, function=value), []
    where = context.parsed.location(function)
    _check_wrt_names(wrt, lifted.own, _name_outside(function, context), where)
    lifted.tree.name = context.fresh(_stem(function))
    parsed = _parsed(context.parsed, lifted.tree)
    params = lifted.captured + lifted.own
    return (
        Request(kind, _shifted(wrt, lifted), lifted=lifted, parsed=parsed, params=params),
        lifted.captured,
    )


def _called(
    request: Request,
    call: ast.Call,
    captured: list[str],
    arguments: list[ast.expr],
    context: Context,
    keywords: list[ast.keyword] | None = None,
) -> ast.expr | None:
    """The call of the nested helper running the derivative ``request`` asks for;
    ``None`` where that derivative cannot be made (``call.derivative_refusal`` says
    why)."""
    try:
        made = _makers[0].make(request)
    except AutodiffError as error:
        # left as written: run as the plain call where no gradient flows through it
        # (it reads no variable carrying one), refused with this error where one does
        if isinstance(error, ArgumentError):  # about this call's wrt: located at it
            error.location = None
        call.derivative_refusal = error.located_at(context.parsed.location(call))
        return None
    if made is None:
        raise UnsupportedSyntaxError(
            f"{request.kind} of this function inside differentiated code is not supported "
            "(a bound method, a callable object or a partial)",
            context.parsed.location(call),
            hint="differentiate a def or a lambda here, passing the object's arrays as arguments",
        )
    keywords = list(call.keywords) if keywords is None else keywords
    if request.kind in ("jvp", "hvp") and request.function is not None:
        # a tangent function takes every parameter of f by position, then the tangents
        tangents = len(request.wrt) if request.kind == "jvp" else 1
        values = _every_argument(request.function, arguments[:-tangents], keywords, call, context)
        arguments, keywords = [*values, *arguments[-tangents:]], []
    helper = context.nest(made.function, call)
    given = [ast.Name(n, ast.Load()) for n in captured] + arguments
    result: ast.expr = ast.Call(ast.Name(helper, ast.Load()), given, keywords)
    if made.pick is not None:
        result = ast.Subscript(result, ast.Constant(made.pick), ast.Load())
    return ast.fix_missing_locations(ast.copy_location(result, call))


def _every_argument(
    function: Any, values: list[ast.expr], keywords: list[ast.keyword], call: ast.Call, context
) -> list[ast.expr]:
    """The argument of each parameter of ``function``, in order, for a call passing
    ``values`` and ``keywords``: a default left out is written in (a literal), and
    a call Python would refuse is refused, with its words."""
    where = context.parsed.location(call)
    signature = inspect.signature(function)
    try:
        bound = signature.bind(*values, **{k.arg: k.value for k in keywords})
    except TypeError as error:
        raise ArgumentError(f"cannot call {function.__name__}: {error}", where) from None
    arguments = []
    for name, parameter in signature.parameters.items():
        if name in bound.arguments:
            arguments.append(bound.arguments[name])
        elif parameter.default is not parameter.empty and _literal(parameter.default):
            arguments.append(ast.Constant(parameter.default))
        else:
            raise UnsupportedSyntaxError(
                f"pass the argument {name!r} of {function.__name__} here: its default is "
                "not a number or a string the compiler can write into the derivative's call",
                where,
            )
    return arguments


def _literal(value: Any) -> bool:
    return value is None or type(value) in (bool, int, float, str)


def lift_lambda(function: ast.Lambda, local: set[str]) -> Lifted | None:
    """``lambda y: x * y`` reading the caller's ``x``: ``def lifted(x, y)`` (``None``
    where its parameters are not plain ones)."""
    if not _plain_parameters(function.args):
        return None
    own = [a.arg for a in function.args.args]
    body = [ast.copy_location(ast.Return(copy_tree(function.body)), function.body)]
    captured = _captured(body, own, local)
    return Lifted(_tree("lifted", captured, own, body, function), captured, own)


def lift_def(definition: ast.FunctionDef, local: set[str]) -> Lifted | None:
    """``def inner(y): return f(x, y)`` inside the caller: ``def inner(x, y)``."""
    if not _plain_parameters(definition.args):
        return None
    own = [a.arg for a in definition.args.args]
    body = copy_tree(definition.body)
    captured = _captured(body, own, local - {definition.name})
    return Lifted(_tree(definition.name, captured, own, body, definition), captured, own)


def _plain_parameters(arguments: ast.arguments) -> bool:
    return not (
        arguments.posonlyargs
        or arguments.vararg
        or arguments.kwonlyargs
        or arguments.kwarg
        or arguments.defaults
    )


def _captured(body: list[ast.stmt], own: list[str], local: set[str]) -> list[str]:
    """The caller's variables ``body`` reads, in the order it first reads them."""
    assigned = assigned_names(ast.Module(body, []))
    seen: list[str] = []
    for node in ast.walk(ast.Module(body, [])):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id in local
            and node.id not in own
            and node.id not in assigned
            and node.id not in seen
        ):
            seen.append(node.id)
    return sorted(seen, key=lambda n: _first_read(body, n))


def _first_read(body: list[ast.stmt], name: str) -> tuple[int, int]:
    reads = [
        (n.lineno, n.col_offset)
        for n in ast.walk(ast.Module(body, []))
        if isinstance(n, ast.Name) and n.id == name and hasattr(n, "lineno")
    ]
    return min(reads, default=(0, 0))


def _tree(
    name: str, captured: list[str], own: list[str], body: list[ast.stmt], like: ast.AST
) -> ast.FunctionDef:
    arguments = ast.arguments([], [ast.arg(n) for n in captured + own], None, [], [], None, [])
    tree = ast.FunctionDef(name, arguments, body, [], None)
    return ast.fix_missing_locations(ast.copy_location(tree, like))


def _parsed(parsed: ParsedFunction, tree: ast.FunctionDef) -> ParsedFunction:
    """The lifted tree read in the caller's names and located in the caller's file (a
    plain :class:`ParsedFunction`: a structured caller's leaves are not its own)."""
    fields = {f.name: getattr(parsed, f.name) for f in dataclasses.fields(ParsedFunction)}
    copies = {"aliases": dict(parsed.aliases), "values": dict(parsed.values)}
    return ParsedFunction(**{**fields, **copies, "tree": tree})


def _check_wrt_names(wrt: Any, own: list[str], name: str, where: Location) -> None:
    """Refuse a ``wrt`` that names none of the parameters ``own`` of the function as
    written (a closure's variables read from around it are passed first, but are not
    its parameters), with the front door's words."""
    for entry in wrt if isinstance(wrt, (list, tuple)) else [wrt]:
        if isinstance(entry, bool) or entry is None:
            continue  # None: every parameter; a bool: refused by the front door
        if isinstance(entry, int) and not -len(own) <= entry < len(own):
            message = f"wrt={entry} is out of range: {name} has {len(own)} parameters {own}"
        elif isinstance(entry, str) and entry not in own:
            message = f"wrt={entry!r} is not a parameter of {name}; its parameters are {own}"
        else:
            continue
        raise ArgumentError(message, where)


def _shifted(wrt: Any, lifted: Lifted) -> Any:
    """``wrt`` of the lifted function's own parameters, the captured ones before them:
    positions move by how many were captured; names and ``None`` (its own parameters)
    stay; ``None`` is every own parameter (the position of the only one: one gradient,
    as the front door gives it)."""
    count, own = len(lifted.captured), len(lifted.own)
    if wrt is None:
        return count if own == 1 else list(lifted.own)
    if isinstance(wrt, bool):
        return wrt  # refused by the front door, as given
    if isinstance(wrt, int):
        return count + (wrt % own if -own <= wrt < own else wrt)
    if isinstance(wrt, str):
        return wrt
    return [_shifted(w, lifted) for w in wrt]


def _caller_def(context: Context, name: str) -> ast.FunctionDef | None:
    """The def named ``name`` of the caller, or of the function it is a def of."""
    found = _local_def(context.function, name)
    if found is None and context.outer is not None:
        found = _local_def(context.outer, name)
    return found


def _local_def(function: ast.FunctionDef, name: str) -> ast.FunctionDef | None:
    """The def named ``name`` at the top of ``function``'s body, the only binding of
    that name there."""
    found = [s for s in function.body if isinstance(s, ast.FunctionDef) and s.name == name]
    stores = [
        n
        for n in ast.walk(function)
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
    ]
    return found[0] if len(found) == 1 and not stores else None


def _constant(expr: ast.expr, name: str, context: Context) -> Any:
    """``wrt`` written out, or a name known while compiling (a closure's, a global's:
    guarded) holding a position, a name, or a list of them."""
    try:
        return ast.literal_eval(expr)
    except ValueError:
        pass
    value = context.value_of(expr, guard=True)
    if isinstance(value, (int, str)) or (
        isinstance(value, (list, tuple)) and all(isinstance(v, (int, str)) for v in value)
    ):
        return value
    raise UnsupportedSyntaxError(
        f"{name} of a derivative taken inside differentiated code is written out (a "
        "position, a name, or a list of them), or a name known while compiling",
        context.parsed.location(expr),
        hint=f"write {name}=0, {name}='w' or {name}=[0, 1]",
    )


def _name_outside(function: ast.expr, context: Context) -> str:
    """The name a def or lambda written here goes by outside differentiated code, in
    the front door's messages (see :func:`~.source.function_name`)."""
    if isinstance(function, ast.Name):
        return function.id
    return f"lambda_{context.parsed.location(function).line}"


def _stem(function: ast.expr) -> str:
    return function.id if isinstance(function, ast.Name) else "lifted"


def _refuse(kind: str, node: ast.expr, context: Context) -> None:
    hints = {
        "hessian": "call it where it is made: hessian(f)(x) or hessian(f, wrt=1)(x, y) "
        "(or use hvp(f)(x, v))",
        "vjp": "write value, pullback = vjp(f, x, wrt=0) (at the function's top level, "
        "then pullback(v)) or vjp(f, x, wrt=0)[1](v); or use grad(f)(x), jvp(f, (x,), (v,))",
    }
    raise UnsupportedSyntaxError(
        f"{kind} called inside differentiated code is not supported",
        context.parsed.location(node),
        hint=hints[kind],
    )
