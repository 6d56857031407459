"""Stage 1 (names): a user's name that the generated code also uses for itself.

The generated code calls its runtime helpers by short names (``unbroadcast``, ``like``,
``size``, ``zeros_like``) and some builtins (``range``, ``reversed``), and makes
variables of its own (``xp``, ``stack``, ``memory``). A user function may take a
parameter, bind a variable or read a global of the same name (``def loss(x, memory)``,
``size = 3.0`` in a notebook, ``from numpy import zeros_like``). So that each name
means one thing, the front end reads such a name through a stand-in
(``size__user``) while the compiler works, and emission, renaming the trees before
it renders them (:func:`renamed`), gives the user's name back and calls the helper by
another name (``size_``): the generated code reads the user's own variable, live, as
the user's function does.

>>> import numpy as np
>>> from autodiff_tutor.compiler.front.source import parse_function
>>> size = 3.0
>>> def f(x):
...     return np.sum(x * size)
>>> parsed = with_helper_names_aliased(parse_function(f), {"size": len})
>>> parsed.aliases
{'size__user': 'size'}
>>> renames = emission_names(parsed, {"size": len})
>>> identifier_renames({"size__user", "size", "d_size__user", "x"}, renames)
{'size__user': 'size', 'size': 'size_', 'd_size__user': 'd_size'}
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from autodiff_tutor.compiler.code import Names, bindings
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.syntax import copy_tree

#: How a stand-in's name ends (never shown: emission gives the user's name back).
STAND_IN = "__user"

T = TypeVar("T", bound=ast.AST)


def with_helper_names_aliased(parsed: ParsedFunction, helpers: Mapping[str, Any]) -> ParsedFunction:
    """``parsed`` with each name that is also a helper's (a parameter, a variable the
    function binds, or a free name read) replaced by a stand-in, recorded in
    ``aliases``; ``parsed`` itself when there is none.

    A parameter's stand-in is the compiler's own name for it: callers still name it as
    written (``wrt``, keywords), and :meth:`.ParsedFunction.own_name` translates. A
    free name bound to the helper itself needs no stand-in.
    """
    tree = parsed.tree
    structures = getattr(parsed, "structures", None) or {}  # parameters given as leaves
    bound = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)} | set(structures)
    bound |= set(bindings(tree))
    namespace = parsed.namespace()

    def clashes(name: str) -> bool:
        if name not in helpers:
            return False
        return name in bound or namespace.get(name) is not helpers[name]

    def named(node: ast.AST) -> bool:
        return isinstance(node, ast.Name | ast.arg) and clashes(_name(node))

    if not any(named(node) for node in ast.walk(tree)):
        return parsed
    stand_ins = {name: alias for alias, name in parsed.aliases.items()}
    taken = Names(tree).taken | set(namespace) | set(helpers)
    tree = copy_tree(tree)
    for node in ast.walk(tree):
        if named(node):
            name = _name(node)
            if name not in stand_ins:
                stand_ins[name] = _unused(name + STAND_IN, taken)
            setattr(node, "id" if isinstance(node, ast.Name) else "arg", stand_ins[name])
    aliases = {alias: name for name, alias in stand_ins.items()}
    if not structures:
        return dataclasses.replace(parsed, tree=tree, aliases=aliases)
    structures = {stand_ins.get(name, name): value for name, value in structures.items()}
    return dataclasses.replace(parsed, tree=tree, aliases=aliases, structures=structures)


def as_written(text: str, aliases: Mapping[str, str]) -> str:
    """``text`` (an error message, a description) with each stand-in of ``aliases``
    given the user's name back.

    >>> as_written("copy like__user (like__user_x stays)", {"like__user": "like"})
    'copy like (like__user_x stays)'
    """
    for alias in sorted(aliases, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(alias)}\b", aliases[alias], text)
    return text


@contextlib.contextmanager
def errors_as_written(parsed: ParsedFunction) -> Iterator[None]:
    """Raise an :class:`AutodiffError` from the block with the user's names in its
    message and hint where it quotes a stand-in."""
    try:
        yield
    except AutodiffError as error:
        if parsed.aliases:
            error.reworded(lambda text: as_written(text, parsed.aliases))
        raise


def emission_names(parsed: ParsedFunction, helpers: Mapping[str, Any]) -> dict[str, str]:
    """The renames that emission makes: each stand-in back to the user's name, and
    each helper whose name the user's code uses to a new name (its name and ``_``).
    Empty for a function with no such name (nearly every one)."""
    if not parsed.aliases:
        return {}
    taken = Names(parsed.tree).taken | set(parsed.namespace()) | set(helpers)
    renames = dict(parsed.aliases)
    for name in sorted(set(parsed.aliases.values())):
        renames[name] = _unused(f"{name}_", taken)
    return renames


def identifier_renames(identifiers: set[str], renames: Mapping[str, str]) -> dict[str, str] | None:
    """``renames`` (:func:`emission_names`) and the generated names made from a
    stand-in (``d_size__user`` becomes ``d_size``), unless two of the generated
    code's ``identifiers`` would then share a name (then those keep their stand-in: unique,
    correct, less readable). ``None`` when even ``renames`` would merge two names.
    """
    if not renames:
        return {}
    stand_ins = sorted((a for a in renames if a.endswith(STAND_IN)), key=len, reverse=True)
    derived = {}
    for name in identifiers - renames.keys():
        alias = next((a for a in stand_ins if a in name), None)
        if alias is not None:
            derived[name] = name.replace(alias, renames[alias])
    for candidate in ({**renames, **derived}, dict(renames)):
        if _injective(identifiers, candidate):
            return candidate
    return None


def _injective(identifiers: set[str], renames: Mapping[str, str]) -> bool:
    return len({renames.get(n, n) for n in identifiers}) == len(identifiers)


def renamed(tree: T, renames: Mapping[str, str]) -> T:
    """A copy of ``tree`` (generated code) with its identifiers (variables,
    parameters; not attributes or keywords) renamed by ``renames``
    (:func:`identifier_renames`); ``tree`` itself when it has none of them.

    >>> print(ast.unparse(renamed(ast.parse("y = size__user * size(x.size)"),
    ...                           {"size__user": "size", "size": "size_"})))
    y = size * size_(x.size)
    """
    if not any(_identifier(n) and _name(n) in renames for n in ast.walk(tree)):
        return tree
    tree = copy_tree(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = renames.get(node.id, node.id)
        elif isinstance(node, ast.arg):
            node.arg = renames.get(node.arg, node.arg)
    return tree


def with_users_names(tree: T, aliases: Mapping[str, str]) -> T:
    """``tree`` (a user's expression, to quote) with each stand-in of ``aliases`` given
    the user's name back, also inside a name made from it (a version, an inlined
    helper's copy: ``size__user_1`` reads ``size_1``).

    >>> print(ast.unparse(with_users_names(ast.parse("size__user_1 * x"),
    ...                                    {"size__user": "size"})))
    size_1 * x
    """
    stand_ins = sorted(aliases, key=len, reverse=True)
    renames = {}
    for node in ast.walk(tree):
        if _identifier(node):
            alias = next((a for a in stand_ins if a in _name(node)), None)
            if alias is not None:
                renames[_name(node)] = _name(node).replace(alias, aliases[alias])
    return renamed(tree, renames)


def _identifier(node: ast.AST) -> bool:
    return isinstance(node, ast.Name | ast.arg)


def _name(node: ast.Name | ast.arg) -> str:
    return node.id if isinstance(node, ast.Name) else node.arg


def _unused(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name
