"""Code as a tree: Python ``ast`` statements that remember their origin, and the
queries every stage asks of a tree (names bound, read and written; fresh names).

The reverse and forward-mode stages build their output with these constructors, the
memory stage reads it with :func:`free_reads`, the optimizer folds it, and only
``emit`` turns it into text. Each statement carries ``origin``: the user's line it
comes from (``"line 3: np.sum(h * h)"``), shown as a comment beside it.

>>> body = [assign("d_x", call("cos", name("x")), "line 2: np.sin(x)")]
>>> loop = for_loop("i", call("reversed", name("t1")), body, "line 2: for i in ...")
>>> sorted(free_reads([loop]))  # the loop header binds i: it is not read from outside
['cos', 'reversed', 't1', 'x']
>>> ast.unparse(loop).splitlines()[0], origin_of(body[0])
('for i in reversed(t1):', 'line 2: np.sin(x)')
"""

from __future__ import annotations

import ast
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from autodiff_tutor.syntax import copy_tree

Statement = ast.stmt


def name(identifier: str) -> ast.Name:
    """A name read: ``x``."""
    return ast.Name(identifier, ast.Load())


def call(function: str | ast.expr, *args: ast.expr, **keywords: ast.expr) -> ast.Call:
    """``function(*args, **keywords)``; a string function is a name."""
    func = name(function) if isinstance(function, str) else function
    return ast.Call(func, list(args), [ast.keyword(k, v) for k, v in keywords.items()])


def method(receiver: str, attribute: str, *args: ast.expr) -> ast.Call:
    """``receiver.attribute(*args)``."""
    return ast.Call(ast.Attribute(name(receiver), attribute, ast.Load()), list(args), [])


def targets(names: str | list[str]) -> ast.expr:
    """An assignment target: a name, or a tuple of names (``_`` for a skipped item)."""
    if isinstance(names, str):
        return ast.Name(names, ast.Store())
    return ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())


def tuple_of(names: list[str]) -> ast.Tuple:
    """A tuple of names, read: ``(a, b)``."""
    return ast.Tuple([name(n) for n in names], ast.Load())


def with_origin(statement: Statement, origin: str = "") -> Statement:
    """``statement`` remembering the user's line it comes from."""
    statement.origin = origin
    return ast.fix_missing_locations(statement)


def origin_of(statement: Statement) -> str:
    """The user's line a generated statement comes from ('' if none)."""
    return getattr(statement, "origin", "")


def assign(target: str | list[str], value: ast.expr, origin: str = "") -> Statement:
    """``target = value``."""
    return with_origin(ast.Assign([targets(target)], value), origin)


def add_into(target: ast.expr, value: ast.expr, origin: str = "") -> Statement:
    """``target += value`` (in place)."""
    store = _as_store(target)
    return with_origin(ast.AugAssign(store, ast.Add(), value), origin)


def expression(value: ast.expr, origin: str = "") -> Statement:
    """A call kept for its effect: ``stack.push(...)``."""
    return with_origin(ast.Expr(value), origin)


def if_else(
    test: str, body: list[Statement], orelse: list[Statement], origin: str = ""
) -> Statement:
    """``if test: body else: orelse`` (an empty body gets ``pass``)."""
    return with_origin(ast.If(name(test), body or [ast.Pass()], orelse), origin)


def for_loop(index: str, iterable: ast.expr, body: list[Statement], origin: str = "") -> Statement:
    """``for index in iterable: body``."""
    return with_origin(ast.For(targets(index), iterable, body or [ast.Pass()], []), origin)


def while_loop(test: ast.expr, body: list[Statement], origin: str = "") -> Statement:
    """``while test: body``."""
    return with_origin(ast.While(test, body or [ast.Pass()], []), origin)


#: The augmented operators numpy runs in place on an array, by their ``ast`` operator.
IN_PLACE_SYMBOLS = {
    ast.Add: "+=",
    ast.Sub: "-=",
    ast.Mult: "*=",
    ast.Div: "/=",
    ast.FloorDiv: "//=",
    ast.Mod: "%=",
    ast.Pow: "**=",
}


def in_place_check(update: ast.expr, origin: str = "") -> Statement | None:
    """``check_in_place(y, '+=', v)`` before ``y_2 = y + v``, which the user wrote as
    ``y += v``: numpy updates ``y``'s array in place, keeping its dtype and shape,
    and refuses what does not fit; the compiled version must refuse it too.
    ``None`` where the update is no operator numpy runs in place.

    >>> ast.unparse(in_place_check(ast.parse("y + t1", mode="eval").body))
    "check_in_place(y, '+=', t1)"
    """
    symbol = IN_PLACE_SYMBOLS.get(type(getattr(update, "op", None)))
    if symbol is None:
        return None
    check = call(
        "check_in_place", copy_tree(update.left), ast.Constant(symbol), copy_tree(update.right)
    )
    return expression(check, origin)


def is_in_place_check(statement: Statement) -> bool:
    """Whether ``statement`` is a :func:`in_place_check`.

    >>> is_in_place_check(ast.parse("check_in_place(y, '+=', t1)").body[0])
    True
    """
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and is_name(statement.value.func, "check_in_place")
    )


def stack_pop(replays: list, origin: str = "") -> Statement:
    """A placeholder at the start of a body the backward replays (a loop iteration, a
    branch path): the values its forward pushed on the stack, popped. The memory
    stage fills in which names (or drops it when the body needs none)."""
    statement = assign([], method("stack", "pop"), origin)
    statement.replays = replays
    return statement


def with_array_module(statements: list[Statement], of: str, origin: str = "") -> list[Statement]:
    """``statements``, led by ``xp = array_module(of)`` when one of them uses ``xp``.

    >>> [ast.unparse(s) for s in with_array_module([assign("d_x", name("x"))], "d_out")]
    ['d_x = x']
    >>> body = [assign("d_x", method("xp", "cos", name("x")))]
    >>> [ast.unparse(s) for s in with_array_module(body, "d_out")]
    ['xp = array_module(d_out)', 'd_x = xp.cos(x)']
    """
    if not any("xp" in reads(s) for s in walk_statements(statements)):
        return statements
    return [assign("xp", call("array_module", name(of)), origin), *statements]


def bound_names(target: ast.expr) -> set[str]:
    """The names an assignment target binds (``d_x[i] += ...`` binds none)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {n for element in target.elts for n in bound_names(element)}
    return set()


def reads(node: ast.AST) -> set[str]:
    """Every name an expression or a simple statement reads."""
    found = {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        found.add(node.target.id)  # x += v reads x
    return found


def writes(statement: Statement) -> set[str]:
    """The names a statement binds itself (a ``for`` header its index, not its body)."""
    if isinstance(statement, ast.Assign):
        return {n for t in statement.targets for n in bound_names(t)}
    if isinstance(statement, (ast.AugAssign, ast.For)):
        return bound_names(statement.target)
    return set()


def free_reads(statements: list[Statement], bound: Iterable[str] = ()) -> set[str]:
    """Names ``statements`` read before binding them: what must come from outside.

    Scopes follow Python's flow: a ``for`` header binds its index for the body, an
    assignment binds its targets for what follows, and a name bound on one path of an
    ``if`` only counts as bound after it when both paths bind it.
    """
    free: set[str] = set()
    _free(statements, set(bound), free)
    return free


def _free(statements: list[Statement], bound: set[str], free: set[str]) -> set[str]:
    """Add to ``free`` what ``statements`` read unbound; returns what is bound after."""
    for statement in statements:
        if isinstance(statement, ast.If):
            free |= reads(statement.test) - bound
            after_body = _free(statement.body, set(bound), free)
            after_else = _free(statement.orelse, set(bound), free)
            bound = after_body & after_else
        elif isinstance(statement, ast.For):
            free |= reads(statement.iter) - bound
            _free(statement.body, bound | bound_names(statement.target), free)
        elif isinstance(statement, ast.While):
            free |= reads(statement.test) - bound
            _free(statement.body, set(bound), free)
        else:
            value = getattr(statement, "value", None)
            read = reads(statement) if value is None else reads(value)
            if isinstance(statement, ast.AugAssign):
                read |= reads(statement.target) | bound_names(statement.target)
            elif isinstance(statement, ast.Assign):
                read |= {n for t in statement.targets for n in reads(t)}  # d_x[i] = ...: i
            free |= read - bound
            bound = bound | writes(statement)
    return bound


def own_parts(statement: Statement) -> list[ast.AST]:
    """What a statement holds itself: a compound statement's header, or all of a simple
    one (``for i in reversed(t1):`` holds ``i`` and ``reversed(t1)``, not its body)."""
    if isinstance(statement, ast.For):
        return [statement.target, statement.iter]
    if isinstance(statement, (ast.If, ast.While)):
        return [statement.test]
    return [statement]


def walk_statements(statements: list[Statement]) -> Iterator[Statement]:
    """Every statement, nested bodies included, in order."""
    for statement in statements:
        yield statement
        for field in ("body", "orelse"):
            yield from walk_statements(getattr(statement, field, []))


def blocks(statements: list[Statement]) -> Iterator[list[Statement]]:
    """Every list of statements: ``statements`` and each nested body, in order.

    >>> loop = ast.parse("for i in r:\\n    a = i\\nb = 1").body
    >>> [len(block) for block in blocks(loop)]
    [2, 1]
    """
    yield statements
    for statement in statements:
        for field in ("body", "orelse"):
            body = getattr(statement, field, None)
            if body:
                yield from blocks(body)


def rewrite_blocks(
    statements: list[Statement], rewrite: Callable[[Statement], list[Statement]]
) -> list[Statement]:
    """``statements`` with each statement, at every depth, replaced by what
    ``rewrite`` makes of it (a list), its nested bodies rewritten first (in place).

    >>> loop = ast.parse("for i in r:\\n    a = i").body
    >>> print(ast.unparse(rewrite_blocks(loop, lambda s: [s, expression(call("f"))])))
    for i in r:
        a = i
        f()
    f()
    """
    out: list[Statement] = []
    for statement in statements:
        for field in ("body", "orelse"):
            body = getattr(statement, field, None)
            if body:
                setattr(statement, field, rewrite_blocks(body, rewrite))
        out += rewrite(statement)
    return out


def substituted(node: ast.AST, values: dict[str, ast.expr]) -> Any:
    """``node`` (changed in place) with each name it reads from ``values`` replaced by
    a copy of that expression.

    >>> ast.unparse(substituted(ast.parse("y = x * x"), {"x": call("f", name("a"))}))
    'y = f(a) * f(a)'
    """

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in values and isinstance(node.ctx, ast.Load):
                return ast.copy_location(copy_tree(values[node.id]), node)
            return node

    return Replace().visit(node)


def changed_names(statement: Statement) -> list[str]:
    """The names a statement binds or changes in place, its loop index included.

    >>> [changed_names(s) for s in ast.parse("d_x[i] += g\\nfor j in r: pass\\nf(x)").body]
    [['d_x', 'i'], ['j'], []]
    """
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For)):
        targets = [statement.target]
    else:
        targets = []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _as_store(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Store())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(target.value, target.slice, ast.Store())
    return target


def fresh_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name2``, ``name3``... where it is taken; then taken.

    >>> taken = {"a_all"}
    >>> fresh_name("a_all", taken), fresh_name("b_all", taken)
    ('a_all2', 'b_all')
    """
    fresh, k = name, 1
    while fresh in taken:
        k += 1
        fresh = f"{name}{k}"
    taken.add(fresh)
    return fresh


def is_name(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is the name ``name``."""
    return isinstance(node, ast.Name) and node.id == name


def factors(node: ast.expr) -> list[ast.expr]:
    """The factors of a product, left to right; ``[node]`` for anything else.

    >>> [ast.unparse(f) for f in factors(ast.parse("a * (b * 2)", mode="eval").body)]
    ['a', 'b', '2']
    """
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return factors(node.left) + factors(node.right)
    return [node]


def names(*nodes: ast.AST) -> set[str]:
    """Every name that occurs in ``nodes`` (read or bound).

    >>> sorted(names(*ast.parse("y = f(x)\\nz = y").body))
    ['f', 'x', 'y', 'z']
    """
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def mentions(node: ast.AST, name: str) -> bool:
    """Whether ``name`` occurs anywhere in ``node`` (read or bound).

    >>> mentions(ast.parse("y = f(x)"), "x"), mentions(ast.parse("y = 1"), "x")
    (True, False)
    """
    return any(is_name(n, name) for n in ast.walk(node))


def resolve(func: ast.expr, scope: dict[str, Any]) -> Any:
    """The object ``func`` (a name or a dotted attribute, ``np.linalg.norm``) names in
    ``scope``; ``None`` where it is unknown.

    >>> import math
    >>> resolve(ast.parse("m.pi", mode="eval").body, {"m": math}) == math.pi
    True
    """
    if isinstance(func, ast.Name):
        return scope.get(func.id)
    if isinstance(func, ast.Attribute):
        owner = resolve(func.value, scope)
        return None if owner is None else getattr(owner, func.attr, None)
    return None


def numpy_name(scope: dict[str, Any]) -> str | None:
    """A name ``scope`` gives numpy (``np``), for generated calls with ``out=``."""
    import numpy

    return next((k for k, v in scope.items() if v is numpy), None)


class Names:
    """Fresh names that do not clash with any name in the function, and the name each
    was made from (a generator's ``f`` renamed ``f_2``: errors name ``f``).

    >>> names = Names(ast.parse("k_1 = x"))
    >>> names.fresh("k"), names.exact("x"), names.exact("y")
    ('k_2', 'x_3', 'y')
    >>> names.made_from
    {'k_2': 'k', 'x_3': 'x'}
    """

    def __init__(self, tree: ast.AST):
        self.taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        self.taken |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
        self.counter = itertools.count(1)
        self.made_from: dict[str, str] = {}  # fresh name -> the stem it was made from
        #: a helper's name renamed where the helper is inlined -> the name its code
        #: gives it (``eval_mode_self_1``: ``self``), for messages
        self.written_as: dict[str, str] = {}

    def fresh(self, stem: str) -> str:
        while True:
            name = f"{stem}_{next(self.counter)}"
            if name not in self.taken:
                self.taken.add(name)
                self.made_from[name] = stem
                return name

    def user_text(self, node: ast.expr | str) -> str:
        """``node`` (an expression, or a name) as the user's code writes it: names of
        inlined helpers as their code gives them.

        >>> names = Names(ast.parse("x"))
        >>> names.written_as["scale_self_1"] = "self"
        >>> names.user_text(ast.parse("scale_self_1.n", mode="eval").body)
        'self.n'
        """
        if isinstance(node, str):
            return self.written_as.get(node, node)
        renamed = copy_tree(node)
        for child in ast.walk(renamed):
            if isinstance(child, ast.Name):
                child.id = self.written_as.get(child.id, child.id)
        return ast.unparse(renamed)

    def exact(self, name: str) -> str:
        if name not in self.taken:
            self.taken.add(name)
            return name
        return self.fresh(name)


def bindings(tree: ast.AST) -> Counter[str]:
    """How many times ``tree`` binds (assigns or deletes) each name.

    >>> bindings(ast.parse("a = 1\\na, b = f(a)"))
    Counter({'a': 2, 'b': 1})
    """
    return Counter(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    )


def root_name(node: ast.expr | None) -> str | None:
    """The name a dotted expression starts from (``np`` of ``np.linalg.norm``), else
    ``None``.

    >>> root_name(ast.parse("np.linalg.norm", mode="eval").body), root_name(ast.Constant(1))
    ('np', None)
    """
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
