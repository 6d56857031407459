"""Unrolling of loops over structures known at compile time, for
:mod:`.front.desugar.structures`: ``for W, b in params``,
``for k, v in p.items()``, ``zip``/``enumerate``/``reversed``/``sorted`` of structures,
``for i in range(len(params))``, and a constant range whose index makes a dict's keys
(``params[f"W{i}"]``) become one copy of the body per element (the copies keep the
user's line numbers).

Part of :mod:`.front.desugar.structures`, whose pass holds it as ``unrolling``: it
reads the pass's state, and calls its other parts, through ``self.structures``.

>>> import ast
>>> from autodiff_tutor.compiler.code import Names
>>> from autodiff_tutor.compiler.front.desugar.structures import Structures
>>> tree = ast.parse('''
... def f(p, s):
...     for k, v in p.items():
...         s = s + v
...     for i in range(1, 3):
...         s = s * p[f"W{i}"]
...     return s
... ''').body[0]
>>> literal = ast.parse("{'W1': p_W1, 'W2': p_W2}", mode="eval").body
>>> body = Structures(Names(tree), {"p": literal}).run(tree.body)
>>> print(ast.unparse(ast.Module(body, [])))
k = 'W1'
v = p_W1
s = s + v
k = 'W2'
v = p_W2
s = s + v
i = 1
s = s * p_W1
i = 2
s = s * p_W2
return s
"""

from __future__ import annotations

import ast
from typing import Any

from autodiff_tutor.compiler.front.desugar.base import reject
from autodiff_tutor.compiler.front.desugar.reads import combined, static_value
from autodiff_tutor.syntax import copy_tree


class Unrolling:
    """Loops over structures, one copy of the body per element."""

    def __init__(self, structures: Any) -> None:
        self.structures = structures  # the pass it is part of: its state, its other parts

    def unroll(self, node: ast.For) -> list[ast.stmt] | None:
        """One copy of the body per element, when the loop goes over a structure, or
        over a constant range whose index makes a structure's keys (``params[f"W{i}"]``)."""
        sequence = self.elements(node.iter) or self._key_range(node)
        if sequence is None:
            return None
        if node.orelse:
            reject(node.orelse[0], "'else' on a loop is not supported")
        for child in ast.walk(ast.Module(node.body, [])):
            if isinstance(child, (ast.Break, ast.Continue, ast.Return)):
                reject(
                    child,
                    f"'{type(child).__name__.lower()}' in a loop over a structure is not supported",
                    "the loop is unrolled: compute a mask instead",
                )
        out: list[ast.stmt] = []
        for element in sequence:
            index = node.target.id if isinstance(node.target, ast.Name) else None
            stored = {
                n.id
                for s in node.body
                for n in ast.walk(s)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            if index is not None and index not in stored and isinstance(element, ast.Constant):
                self.structures.constants[index] = element
            out += self.structures.assign(copy_tree(node.target), copy_tree(element), node)
            out += self.structures.run(copy_tree(node.body))
            self.structures.constants.pop(index, None)
        return out

    def elements(self, iterable: ast.expr) -> list[ast.expr] | None:
        """The elements a loop goes over, when they are known statically."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            name, args = iterable.func.id, iterable.args
            if name == "range" and self._indexes_structure(iterable):
                return self._static_range(iterable)
            if name in ("sorted", "list") and len(args) == 1 and not iterable.keywords:
                fold = self.structures.reads.fold
                folded = fold(copy_tree(iterable))  # sorted(d): d's keys, in order
                if isinstance(folded, ast.List) and isinstance(fold(args[0], True), ast.Dict):
                    return list(folded.elts)
            parts = [self.elements(a) for a in args]
            if parts and parts[0] is not None:  # zip, enumerate, reversed of structures
                return combined(iterable, parts)
            return None
        value = self.structures.reads.fold(copy_tree(iterable), whole=True)
        if isinstance(value, ast.Dict):
            return list(value.keys)
        if isinstance(value, (ast.List, ast.Tuple)) and self.structures.is_structure(value):
            return list(value.elts)
        return None

    def _key_range(self, node: ast.For) -> list[ast.expr] | None:
        """``for i in range(1, 3)`` (or ``in (1, 2)``) whose body reads
        ``params["W%d" % i]`` of a dict parameter (or a dict built here, or
        ``getattr(self, f"W{i}")`` of an object), or ``Ws[i]``,
        ``Ws[2 * i]`` of a list: the indices, when the range's bounds are known while
        compiling (numbers written out, an int argument, a global int) or the items are
        numbers or strings written out (a key that is not in the dict is refused at the
        read)."""
        index = node.target
        keyed = isinstance(index, ast.Name) and any(
            self._keyed_read(n, index.id) for s in node.body for n in ast.walk(s)
        )
        if not keyed:
            return None
        call = node.iter
        if isinstance(call, (ast.Tuple, ast.List)):
            items = call.elts
            written = all(
                isinstance(e, ast.Constant) and type(e.value) in (int, str) for e in items
            )
            return [copy_tree(e) for e in items] if written else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            return None
        return self._static_range(call) if call.func.id == "range" else None

    def _keyed_read(self, node: ast.AST, index: str) -> bool:
        """Whether ``node`` reads a structure at a key made from ``index``:
        ``params[f"W{i}"]``, or ``getattr(self, f"W{i}")`` of an object."""
        if isinstance(node, ast.Subscript):
            structure, key = node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
        ):
            structure, key = node.args[0], node.args[1]
        else:
            return False
        return (
            isinstance(structure, ast.Name)
            and structure.id in self.structures.env
            and any(isinstance(m, ast.Name) and m.id == index for m in ast.walk(key))
        )

    def _static_range(self, call: ast.Call) -> list[ast.expr] | None:
        """The indices of ``range(...)`` when its bounds are ints known while compiling
        (``len(params) - 1``, ``n_layers`` an int argument or a global int), else ``None``."""
        if call.keywords or not 1 <= len(call.args) <= 3:
            return None
        reads = self.structures.reads
        bounds = [static_value(reads.fold(copy_tree(a)), reads.known) for a in call.args]
        if not all(type(b) is int for b in bounds) or bounds[2:] == [0]:
            return None
        return [ast.Constant(i) for i in range(*bounds)]

    def _indexes_structure(self, call: ast.Call) -> bool:
        """``range(len(s))`` of a structure ``s``: its index reads ``s[i]``."""
        return any(
            isinstance(n, ast.Name) and n.id in self.structures.env
            for a in call.args
            for n in ast.walk(a)
        )
