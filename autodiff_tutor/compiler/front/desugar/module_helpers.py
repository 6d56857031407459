"""Module-level helpers nested into the differentiated function, so that
:class:`~.front.desugar.nested.InlineNested` inlines them where they are called: for
second derivatives (the gradient's code differentiated again needs the helpers'
operations in place) and for calls with a structure (``layer(params, x)``: the
structure's reads fold into its leaves only where the helper's body is inlined).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.code import bindings
from autodiff_tutor.compiler.front.desugar.base import only_called
from autodiff_tutor.compiler.front.desugar.derivative_calls import (
    CALLED_WITH_FUNCTION,
    derivative_kind,
)
from autodiff_tutor.compiler.front.lambdas import def_of_lambda
from autodiff_tutor.compiler.front.source import ParsedFunction, parse_function
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.syntax import copy_tree


def with_helpers_nested(parsed: ParsedFunction, called: list[Any]) -> ParsedFunction | None:
    """``parsed`` with the user functions it calls (``called``, and those they call;
    ``@differentiable`` ones by their function)
    defined inside it, so that they are inlined like nested helpers; ``None`` when one
    of them cannot be (another module's names, several returns, no source...).

    First derivatives call a helper as a compiled operation (its own forward and
    backward); a second derivative differentiates the gradient's code again, which
    needs the helper's operations in place (see ``compile_gradient_function``).

    >>> import numpy as np
    >>> from autodiff_tutor.compiler.front.source import parse_function
    >>> def _double(v):
    ...     return 2.0 * v
    >>> def f(x):
    ...     return np.sum(_double(x))
    >>> nested = with_helpers_nested(parse_function(f), [_double])
    >>> [type(s).__name__ for s in nested.tree.body]
    ['FunctionDef', 'Return']
    """
    namespace = parsed.namespace()
    user_locals = {a.arg for a in ast.walk(parsed.tree) if isinstance(a, ast.arg)}
    user_locals |= set(bindings(parsed.tree))
    definitions: dict[str, ast.FunctionDef] = {}
    nested_objects: dict[str, Any] = {}
    # (helper, called directly): one called only by another helper may stay a call
    pending = [(helper, True) for helper in called]
    while pending:
        helper, direct = pending.pop()
        name = getattr(helper, "__name__", "")
        if name in definitions:
            continue
        found = _nestable(helper, namespace, user_locals, set(definitions))
        if found is None:
            if direct:
                return None
            continue  # called where it was: compiled in turn, as for a first derivative
        for definition in found:
            definitions[definition.name] = definition
        nested_objects[name] = helper
        helper_names = parse_function(helper).namespace()
        reads = set().union(*(_free_reads(d) for d in found))
        pending += [(helper_names[n], False) for n in reads if inlinable(helper_names.get(n))]
    tree = _calls_by_name(copy_tree(parsed.tree), parsed.values, nested_objects)
    first_call = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n) in definitions),
        tree,
    )
    nested = []
    for definition in definitions.values():
        definition = copy_tree(definition)
        for child in ast.walk(definition):  # errors point at the user's call
            if hasattr(child, "lineno"):
                ast.copy_location(child, first_call)
        nested.append(definition)
    tree.body = nested + tree.body
    return dataclasses.replace(parsed, tree=tree)


def _nestable(
    helper: Any, namespace: dict[str, Any], user_locals: set[str], taken: set[str]
) -> list[ast.FunctionDef] | None:
    """The definitions that nest ``helper`` (its own, and those of the helpers it
    defines inside, hoisted beside it); ``None`` when it cannot be nested."""
    name = getattr(helper, "__name__", "")
    if namespace.get(name) is not helper or name in user_locals:
        return None  # not reachable by its name from the user's function
    try:
        source = parse_function(helper)
    except AutodiffError:
        return None
    helper_names = source.namespace()

    def differentiates(func: ast.expr) -> bool:  # grad, value_and_grad, hvp, jvp
        return isinstance(func, ast.Name) and derivative_kind(helper_names.get(func.id)) in (
            *CALLED_WITH_FUNCTION,
            "jvp",
        )

    found = _hoisted(source.tree, set(namespace) | user_locals | taken, differentiates)
    if found is None:
        return None
    for tree in found:
        reads = _free_reads(tree) - {d.name for d in found}
        if any(n in user_locals or namespace.get(n) is not helper_names.get(n) for n in reads):
            return None  # a name that means something else where the helper is inlined
        if (
            tree.decorator_list
            or not _plain_signature(tree)
            or not _one_final_return(tree, _differentiated_functions(tree, differentiates))
        ):
            return None
    return found


def _hoisted(
    tree: ast.FunctionDef, taken: set[str], differentiates: Callable[[ast.expr], bool] = bool
) -> list[ast.FunctionDef] | None:
    """``tree`` (a copy) and the helpers it defines in its body (``def`` or ``name =
    lambda``) that read none of its own names, renamed ``<function>_<helper>`` and
    moved beside it, so that it has no function inside; ``[tree]`` when it defines
    none; ``None`` when a hoisted name is taken or bound twice, or when one that reads
    its names (a closure) is used otherwise than differentiated (``grad(bump)``, the
    call's function ``differentiates``): such a closure stays inside, as a def, and
    the derivative taken of it is lifted where the helper is nested.

    >>> import textwrap
    >>> tree = ast.parse(textwrap.dedent('''
    ...     def body(x):
    ...         sq = lambda a: a * a
    ...         return sq(x)
    ... ''')).body[0]
    >>> [d.name for d in _hoisted(tree, set())], ast.unparse(_hoisted(tree, set())[0].body[0])
    (['body', 'body_sq'], 'return body_sq(x)')
    """
    tree = copy_tree(tree)
    inner: dict[str, ast.FunctionDef] = {}
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef):
            inner[statement.name] = statement
        elif (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Lambda)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            name = statement.targets[0].id
            inner[name] = def_of_lambda(name, statement.value, statement)
    bound = bindings(tree)
    bound.update(n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    bound.update(a.arg for a in tree.args.args + tree.args.kwonlyargs)
    own = set(bound) - set(inner)
    closures = {n for n, d in inner.items() if _free_reads(d) & own}
    differentiated = {
        d.name
        for d in _differentiated_functions(tree, differentiates)
        if isinstance(d, ast.FunctionDef)
    }
    if any(bound[n] != 1 or n not in differentiated for n in closures):
        return None  # a closure called or passed: not nested
    kept = {n: inner.pop(n) for n in closures}  # written as a def where it was
    own |= set(kept)
    renames = {n: f"{tree.name}_{n}" for n in inner}
    if any(bound[n] != 1 or renames[n] in taken for n in inner):
        return None
    # g = helper, bound once and only called: calls of the function it names
    aliases = {
        s.targets[0].id: s.value.id
        for s in tree.body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Name)
        and s.value.id not in own | set(inner)
        and bound[s.targets[0].id] == 1
        and (only_called(tree, s.targets[0].id) or s.targets[0].id not in code.reads(tree))
    }
    renames.update(aliases)
    own -= set(aliases)
    if any(_free_reads(d) & own for d in inner.values()):
        return None  # reads a name of the function's: a closure, not hoisted

    class Renamed(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            if node.id in renames:
                return ast.copy_location(ast.Name(renames[node.id], node.ctx), node)
            return node

    tree.body = [
        kept.get(_defined(s), s)
        for s in tree.body
        if _defined(s) not in inner and _alias(s) not in aliases
    ]
    hoisted = [Renamed().visit(tree)]
    for n, definition in inner.items():
        definition.name = renames[n]
        hoisted.append(Renamed().visit(definition))
    return [ast.fix_missing_locations(d) for d in _lambdas_hoisted(hoisted, own, taken)]


def _lambdas_hoisted(
    definitions: list[ast.FunctionDef], own: set[str], taken: set[str]
) -> list[ast.FunctionDef]:
    """``definitions`` with each lambda written inside them (``apply(lambda a: a * a,
    w)``) that reads none of ``own`` made a definition of its own beside them,
    ``<function>_lambda_<k>``, and read by that name (a lambda that reads ``own``, or a
    name the definition it is in binds, is left: the function then has a function
    inside, and is not nested)."""
    out = list(definitions)
    count = 0

    class ByName(ast.NodeTransformer):
        def __init__(self, where: str, bound: set[str]):
            self.where, self.bound = where, bound

        def visit_Lambda(self, node: ast.Lambda) -> ast.expr:
            nonlocal count
            definition = def_of_lambda("", node)
            if _free_reads(definition) & self.bound or any(
                isinstance(n, ast.Lambda) for n in ast.walk(node.body)
            ):
                return node
            count += 1
            definition.name = f"{self.where}_lambda_{count}"
            while definition.name in taken:
                count += 1
                definition.name = f"{self.where}_lambda_{count}"
            out.append(definition)
            return ast.copy_location(ast.Name(definition.name, ast.Load()), node)

    for definition in definitions:
        ByName(definitions[0].name, own | _bound(definition)).visit(definition)
    return out


def _bound(tree: ast.FunctionDef) -> set[str]:
    """The names ``tree`` binds: its parameters, the names it assigns, loop variables."""
    return set(bindings(tree)) | {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}


def _alias(statement: ast.stmt) -> str | None:
    """The name ``g`` of a statement ``g = name``."""
    if (
        isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Name)
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id
    return None


def _defined(statement: ast.stmt) -> str | None:
    """The name a ``def`` or ``name = lambda ...`` defines."""
    if isinstance(statement, ast.FunctionDef):
        return statement.name
    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Lambda):
        target = statement.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    return None


def _calls_by_name(tree: ast.FunctionDef, values: dict[str, Any], nested: dict[str, Any]):
    """``tree`` with the names that hold a nested helper as a value (``fn_2`` for the
    ``smooth`` given to ``apply(smooth, x)``, which ``apply`` calls) replaced by the
    helper's own name, so that those calls inline it too."""
    aliases = {
        alias: name
        for alias, value in values.items()
        for name, helper in nested.items()
        if value is helper and alias != name
    }
    if not aliases:
        return tree

    class ByName(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            if isinstance(node.ctx, ast.Load) and node.id in aliases:
                return ast.copy_location(ast.Name(aliases[node.id], ast.Load()), node)
            return node

    return ByName().visit(tree)


def with_structure_helpers_nested(parsed: ParsedFunction) -> ParsedFunction:
    """``parsed`` with the user functions it calls with a structure (a dict, or a list
    or tuple of lists or tuples: ``layer(params, x)``) defined inside it, so that they
    are inlined like nested helpers and the structure's reads (``params["W"]``) fold
    into its leaves; unchanged where there is no such call, or where a helper cannot
    be nested (see :func:`with_helpers_nested`: the call is then refused as before,
    "a structure is used whole here"). A dict spread into keywords (``**opts``) is no
    structure argument: it is spread where the call is compiled.

    >>> import numpy as np
    >>> from autodiff_tutor.compiler.front.source import parse_function
    >>> def _layer(p, z):
    ...     return np.tanh(z * p["W"])
    >>> def f(x):
    ...     p = {"W": x}
    ...     return np.sum(_layer(p, x))
    >>> nested = with_structure_helpers_nested(parse_function(f))
    >>> [type(s).__name__ for s in nested.tree.body]
    ['FunctionDef', 'Assign', 'Return']
    """
    namespace = parsed.namespace()
    tree = parsed.tree
    structures = set(getattr(parsed, "structures", {}))
    for node in ast.walk(tree):  # names the function binds to a structure it writes
        if isinstance(node, ast.Assign) and _is_structure(node.value, set()):
            structures |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    called: list[Any] = []
    for call in ast.walk(tree):
        helper = namespace.get(_called(call)) if isinstance(call, ast.Call) else None
        if not inspect.isfunction(helper) or helper in called:
            continue
        arguments = call.args + [k.value for k in call.keywords if k.arg is not None]
        if any(_is_structure(a, structures) for a in arguments):
            called.append(helper)
    if not called:
        return parsed
    return with_helpers_nested(parsed, called) or parsed


def _is_structure(value: ast.expr, names: set[str]) -> bool:
    """A dict (display or comprehension), a list or tuple holding lists or tuples, a
    name of one of ``names``, or a slice of one (``forward(params[:-1], x)``)."""
    if isinstance(value, ast.Name):
        return value.id in names
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        return _is_structure(value.value, names)
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return True
    nested = (ast.List, ast.Tuple)
    return isinstance(value, nested) and any(isinstance(e, nested) for e in value.elts)


def _called(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else None


def _free_reads(tree: ast.FunctionDef) -> set[str]:
    """The names a function reads that it does not bind itself."""
    return code.reads(tree) - _bound(tree)


def _plain_signature(tree: ast.FunctionDef) -> bool:
    arguments = tree.args
    return not (arguments.vararg or arguments.kwarg or arguments.kwonlyargs)


def _one_final_return(tree: ast.FunctionDef, differentiated: list[ast.AST] = ()) -> bool:
    """Whether ``tree`` returns once, at its end, and defines no function inside but
    the ``differentiated`` ones (whose derivatives are lifted, see :func:`_hoisted`)."""
    inside = [
        n
        for d in differentiated
        for n in (
            ast.walk(d.body) if isinstance(d, ast.Lambda) else ast.walk(ast.Module(d.body, []))
        )
    ]
    skip = {id(n) for n in inside}
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return) and id(n) not in skip]
    nested = [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.Lambda))
        and n not in differentiated
        and id(n) not in skip
    ]
    return len(returns) == 1 and tree.body[-1] is returns[0] and nested == [tree]


def _differentiated_functions(
    tree: ast.FunctionDef, differentiates: Callable[[ast.expr], bool]
) -> list[ast.AST]:
    """The defs at the top of ``tree``'s body and the lambdas in it that are only
    differentiated: each read of the def's name, and each such lambda, is the first
    argument of a call whose function ``differentiates`` (``grad(bump)``, ``jvp(lambda
    s: ..., (w,), (v,))``)."""
    firsts = [
        n.args[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and n.args and differentiates(n.func)
    ]
    out: list[ast.AST] = [f for f in firsts if isinstance(f, ast.Lambda)]
    first_ids = {id(f) for f in firsts}
    for statement in tree.body:
        if not isinstance(statement, ast.FunctionDef):
            continue
        reads = [
            n
            for n in ast.walk(tree)
            if code.is_name(n, statement.name) and isinstance(n.ctx, ast.Load)
        ]
        if reads and all(id(n) in first_ids for n in reads):
            out.append(statement)
    return out


def inlinable(obj: Any) -> bool:
    """Whether ``obj`` is a function of the user's (or ``@differentiable`` one) whose
    body can be inlined; custom ops (a hand-written backward) are not.

    >>> inlinable(_called), inlinable(len), inlinable(lambda v: v)
    (True, False, False)
    """
    fn = inspect.unwrap(obj) if obj is not None else None
    return inspect.isfunction(fn) and fn.__name__ != "<lambda>"
