"""Stage 1 (names): a user's name that the generated code also uses for a helper.

The generated code calls its runtime helpers by short names (``unbroadcast``, ``like``,
``size``, ``zeros_like``). A user function may read a global or closure variable of
the same name (``size = 3.0`` in a notebook, ``from numpy import zeros_like``). So
that each name means one thing, the front end reads such a name through a stand-in
(``size__user``) while the compiler works, and emission gives the user's name back
and calls the helper by another name (``size_``): the generated code reads the user's
own variable, live, as the user's function does.

>>> import numpy as np
>>> from autodiff_tutor.compiler.s1_source import parse_function
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
import copy
import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from autodiff_tutor.compiler.s1_source import ParsedFunction

#: How a stand-in's name ends (never shown: emission gives the user's name back).
STAND_IN = "__user"


def with_helper_names_aliased(parsed: ParsedFunction, helpers: Mapping[str, Any]) -> ParsedFunction:
    """``parsed`` reading each free name that is also a helper's name through a
    stand-in (recorded in ``aliases``); ``parsed`` itself when there is none.

    A name the function binds itself (a parameter, a variable) is not a free name:
    the pipeline refuses those with a located error and a rename hint. A free name
    bound to the helper itself needs no stand-in.
    """
    tree = parsed.tree
    bound = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    bound |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not _loads(n)}
    namespace = parsed.namespace()

    def clashes(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Name)
            and _loads(node)
            and node.id in helpers
            and node.id not in bound
            and namespace.get(node.id) is not helpers[node.id]
        )

    if not any(clashes(node) for node in ast.walk(tree)):
        return parsed
    stand_ins = {name: alias for alias, name in parsed.aliases.items()}
    taken = _names_in(tree) | set(namespace) | set(helpers)
    tree = copy.deepcopy(tree)
    for node in ast.walk(tree):
        if clashes(node):
            if node.id not in stand_ins:
                stand_ins[node.id] = _unused(node.id + STAND_IN, taken)
            node.id = stand_ins[node.id]
    aliases = {alias: name for name, alias in stand_ins.items()}
    return dataclasses.replace(parsed, tree=tree, aliases=aliases)


def emission_names(parsed: ParsedFunction, helpers: Mapping[str, Any]) -> dict[str, str]:
    """The renames that emission makes: each stand-in back to the user's name, and
    each helper whose name the user's code reads to a new name (its name and ``_``).
    Empty for a function with no such name (nearly every one)."""
    if not parsed.aliases:
        return {}
    taken = _names_in(parsed.tree) | set(parsed.namespace()) | set(helpers)
    renames = dict(parsed.aliases)
    for name in sorted(set(parsed.aliases.values())):
        renames[name] = _unused(f"{name}_", taken)
    return renames


def renamed_source(source: str, renames: Mapping[str, str]) -> str:
    """``source`` (generated Python) with the names in ``renames`` renamed: a helper's
    name where it is a variable or parameter (not an attribute, a keyword or in a
    comment), a stand-in everywhere (it appears in comments that quote the user's
    code). The layout of every line is kept.
    """
    if not renames:
        return source
    lines = [line.encode() for line in source.split("\n")]
    spots = [
        (n.lineno - 1, n.col_offset, n.end_col_offset, renames[_name(n)])
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Name | ast.arg) and _name(n) in renames
    ]
    for row, start, end, name in sorted(spots, reverse=True):  # right to left in a line
        lines[row] = lines[row][:start] + name.encode() + lines[row][end:]
    text = "\n".join(line.decode() for line in lines)
    stand_ins = [alias for alias in renames if alias.endswith(STAND_IN)]
    if not stand_ins:
        return text
    pattern = r"\b(" + "|".join(re.escape(alias) for alias in stand_ins) + r")\b"
    return re.sub(pattern, lambda match: renames[match.group(0)], text)


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
