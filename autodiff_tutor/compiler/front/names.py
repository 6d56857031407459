"""Stage 1 (names): a user's name that the generated code also uses for itself.

The generated code calls its runtime helpers by short names (``unbroadcast``, ``like``,
``size``, ``zeros_like``) and some builtins (``range``, ``reversed``), and makes
variables of its own (``xp``, ``stack``, ``memory``). A user function may take a
parameter, bind a variable or read a global of the same name (``def loss(x, memory)``,
``size = 3.0`` in a notebook, ``from numpy import zeros_like``). So that each name
means one thing, the front end reads such a name through a stand-in
(``size__user``) while the compiler works, and emission gives the user's name back
and calls the helper by another name (``size_``): the generated code reads the user's
own variable, live, as the user's function does.

>>> import numpy as np
>>> from autodiff_tutor.compiler.front.source import parse_function
>>> size = 3.0
>>> def f(x):
...     return np.sum(x * size)
>>> parsed = with_helper_names_aliased(parse_function(f), {"size": len})
>>> parsed.aliases
{'size__user': 'size'}
>>> renames = emission_names(parsed, {"size": len})
>>> renamed_source("y = size__user * size(x)  # size__user * size", renames)
'y = size * size_(x)  # size * size'
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import io
import re
import tokenize
from collections.abc import Iterator, Mapping
from typing import Any

from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.syntax import copy_tree

#: How a stand-in's name ends (never shown: emission gives the user's name back).
STAND_IN = "__user"


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
    bound |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not _loads(n)}
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
    taken = _names_in(tree) | set(namespace) | set(helpers)
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
    taken = _names_in(parsed.tree) | set(parsed.namespace()) | set(helpers)
    renames = dict(parsed.aliases)
    for name in sorted(set(parsed.aliases.values())):
        renames[name] = _unused(f"{name}_", taken)
    return renames


def identifier_renames(sources: list[str], renames: Mapping[str, str]) -> dict[str, str] | None:
    """``renames`` (:func:`emission_names`) and the generated names made from a
    stand-in (``d_size__user`` becomes ``d_size``), unless two identifiers of
    ``sources`` would then share a name (then those keep their stand-in: unique,
    correct, less readable). ``None`` when even ``renames`` would merge two names.
    """
    if not renames:
        return {}
    stand_ins = sorted((a for a in renames if a.endswith(STAND_IN)), key=len, reverse=True)
    identifiers = {_name(n) for s in sources for n in ast.walk(ast.parse(s)) if _identifier(n)}
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


def renamed_source(source: str, renames: Mapping[str, str]) -> str:
    """``source`` (generated Python) with its identifiers (variables, parameters; not
    attributes or keywords) renamed by ``renames`` (:func:`identifier_renames`), and
    the stand-ins in its comments (they quote the user's code) given the user's
    names. The layout of every line is kept.
    """
    if not renames:
        return source
    lines = [line.encode() for line in source.split("\n")]
    spots = [
        (n.lineno - 1, n.col_offset, n.end_col_offset, renames[_name(n)])
        for n in ast.walk(ast.parse(source))
        if _identifier(n) and _name(n) in renames
    ]
    comments = _comment_columns(source)
    for row, start, end, name in sorted(spots, reverse=True):  # right to left in a line
        lines[row] = lines[row][:start] + name.encode() + lines[row][end:]
    texts = [line.decode() for line in lines]
    column = min((c for c, _ in comments.values()), default=0)  # where comments line up
    for row, (_, comment) in comments.items():
        code = texts[row][: texts[row].rindex(comment)].rstrip()
        texts[row] = code.ljust(column - 2) + "  " + comment
    text = "\n".join(texts)
    stand_ins = [alias for alias in renames if alias.endswith(STAND_IN) and alias in text]
    if not stand_ins:
        return text
    pattern = "|".join(re.escape(alias) for alias in sorted(stand_ins, key=len, reverse=True))
    return re.sub(pattern, lambda match: renames[match.group(0)], text)


def _comment_columns(source: str) -> dict[int, tuple[int, str]]:
    """Each comment that follows code: its column and text, by row (from 0)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {
        t.start[0] - 1: (t.start[1], t.string)
        for t in tokens
        if t.type == tokenize.COMMENT and t.line[: t.start[1]].strip()
    }


def _identifier(node: ast.AST) -> bool:
    return isinstance(node, ast.Name | ast.arg)


def _name(node: ast.Name | ast.arg) -> str:
    return node.id if isinstance(node, ast.Name) else node.arg


def _loads(node: ast.Name) -> bool:
    return isinstance(node.ctx, ast.Load)


def _names_in(tree: ast.AST) -> set[str]:
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return names | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}


def _unused(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name
