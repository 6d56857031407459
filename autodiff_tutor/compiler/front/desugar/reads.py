"""Reads of structures, for :mod:`.front.desugar.structures`:
``self.W`` of an object parameter, ``params[1][0]``, ``p["W"]``, ``len(params)``,
``d.items()``, ``sorted(d)``, each replaced by the leaf or constant it denotes.

Part of :mod:`.front.desugar.structures`, whose pass holds it as ``reads``: it reads
the pass's state, and calls its other parts, through ``self.structures``.

>>> import ast
>>> from autodiff_tutor.compiler.code import Names
>>> from autodiff_tutor.compiler.front.desugar.structures import Structures
>>> literal = ast.parse("{'W': p_W, 'b': [p_b_0, p_b_1]}", mode="eval").body
>>> structures = Structures(Names(literal), {"p": literal})
>>> ast.unparse(structures.reads.fold(ast.parse("p['b'][1] * len(p)", mode="eval").body))
'p_b_1 * 2'
"""

from __future__ import annotations

import ast
import builtins
import operator
from typing import Any

from autodiff_tutor.compiler.front.desugar.base import reject
from autodiff_tutor.syntax import copy_tree

DISPLAYS = (ast.List, ast.Tuple, ast.Dict)
#: builtins that ask about an object, answered while compiling for an object seen as
#: the structure of its attributes
_INTROSPECTION = ("getattr", "hasattr", "isinstance", "vars")
# the options-dict habit (def f(x, config=None): config = config or {}) and what works
OPTIONS_HINT = (
    "a choice between structures is made while compiling, not while running: for a dict "
    "of options give the parameter a dict default (def f(x, config={}), then "
    "config.get('scale', 2.0)) or keyword parameters (def f(x, scale=2.0))"
)


class Reads:
    """Folding of reads of structures (``self.structures.env`` maps names to their
    literals)."""

    def __init__(self, structures: Any) -> None:
        self.structures = structures  # the pass it is part of: its state, its other parts

    def attributes(self, node: ast.stmt) -> ast.stmt:
        """``self.W`` of an object parameter reads its entry ``self["W"]``, and so does an
        attribute of an object it holds (``self.encoder.W``, ``self.layers[0].W``:
        ``self["encoder"]["W"]``); writes that are not statements of their own are
        refused (the statements are kept for their effect, see
        :mod:`.front.desugar.attributes`)."""
        structures, reads = self.structures, self
        holding = {n for n, s in structures.env.items() if _holds_object(s)}
        if not holding:
            return node

        class Attributes(ast.NodeTransformer):
            def visit_Attribute(self, attribute: ast.Attribute) -> ast.expr:
                said = structures.names.user_text(attribute.value)  # self.encoder
                self.generic_visit(attribute)
                value = attribute.value
                literal = reads.object_at(value, holding)
                if literal is None:
                    return attribute
                if isinstance(literal, ast.Tuple):  # p.W of a namedtuple: its field
                    if attribute.attr not in literal.fields or not isinstance(
                        attribute.ctx, ast.Load
                    ):
                        return attribute  # p._asdict(), ...: as written
                    index = ast.Constant(literal.fields.index(attribute.attr))
                    return ast.copy_location(ast.Subscript(value, index, ast.Load()), attribute)
                own = isinstance(value, ast.Name)  # the parameter's own attribute
                if not isinstance(attribute.ctx, ast.Load):
                    structures.refuse_write(value.id if own else said, attribute)
                if own:
                    structures.attribute_writes.refuse_changed_list(attribute)
                keys = [k.value for k in literal.keys]
                if attribute.attr not in keys:
                    reject(
                        attribute,
                        f"{said}.{attribute.attr} is not an attribute of the object's "
                        "instance, nor a method or a value of its class that the compiler "
                        "reads (a method, static method or class method is inlined where "
                        "it is called, not used as a value; a property is followed where "
                        "its getter's source can be read)",
                        f"call it where its value is needed ({said}.{attribute.attr}(...)), "
                        "or pass the value in as an argument",
                    )
                key = ast.Constant(attribute.attr)
                return ast.copy_location(ast.Subscript(value, key, ast.Load()), attribute)

        return Attributes().visit(node)

    def object_at(self, expr: ast.expr, holding: set[str]) -> ast.Dict | ast.Tuple | None:
        """The literal of the object ``expr`` reads, where it is an object parameter
        (``self``) or an entry of one at keys and indexes written out
        (``self["encoder"]``, ``self["layers"][0]``), or of a namedtuple (its tuple,
        which knows its ``fields``); else ``None``."""
        found = self._literal_at(expr, holding)
        return found if _has_attributes(found) else None

    def _literal_at(self, expr: ast.expr, holding: set[str]) -> ast.expr | None:
        if isinstance(expr, ast.Name):
            return self.structures.env.get(expr.id) if expr.id in holding else None
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
            return _entry_at(self._literal_at(expr.value, holding), expr.slice.value)
        return None

    def fold(self, expr: ast.expr, whole: bool = False) -> ast.expr:
        """``expr`` with structures replaced and reads of them resolved."""
        reads, structures = self, self.structures

        class Fold(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.expr:
                if isinstance(node.ctx, ast.Load) and node.id in structures.constants:
                    return copy_tree(structures.constants[node.id])
                if isinstance(node.ctx, ast.Load) and node.id in structures.env:
                    return ast.copy_location(copy_tree(structures.env[node.id]), node)
                return node

            def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
                node.test = self.visit(node.test)
                truth = static_truth(node.test, reads.known)
                if truth is None:
                    node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
                    return node
                # a test known while compiling (len(args) > 2): the arm Python takes,
                # alone; the other one is never read (its indexes may be out of range)
                return self.visit(node.body if truth else node.orelse)

            def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
                self.generic_visit(node)
                if not isinstance(node.value, DISPLAYS):
                    return node
                node.slice = reads.static_slice(node.slice)  # params[f"W{i}"], params[-1]
                return reads.subscript(node)

            def visit_Call(self, node: ast.Call) -> ast.expr:
                self.generic_visit(node)
                node.keywords = spread_keywords(node)  # f(x, **opts), opts a dict known here
                func = node.func
                introspected = reads.introspection(node)
                if introspected is not None:  # getattr(self, "W1"), isinstance(self, M)
                    return introspected
                if isinstance(func, ast.Name) and func.id == "len" and len(node.args) == 1:
                    if isinstance(node.args[0], DISPLAYS):
                        return ast.Constant(len(items_of(node.args[0])))
                if (  # zip(*pairs) of a structure: its transpose
                    isinstance(func, ast.Name)
                    and func.id == "zip"
                    and len(node.args) == 1
                    and isinstance(node.args[0], ast.Starred)
                ):
                    rows = node.args[0].value
                    if isinstance(rows, ast.Name) and rows.id in structures.built:
                        rows = ast.List(copy_tree(structures.built[rows.id]), ast.Load())
                    if not isinstance(rows, (ast.List, ast.Tuple)) or not all(
                        isinstance(r, (ast.List, ast.Tuple)) for r in rows.elts
                    ):
                        reject(
                            node,
                            "zip(*...) needs a structure known while compiling",
                            "zip the sequences by name: zip(a, b)",
                        )
                    columns = zip(*[r.elts for r in rows.elts], strict=False)
                    return ast.List([ast.Tuple(list(c), ast.Load()) for c in columns], ast.Load())
                if (  # list(zip(Ws, bs)), tuple(enumerate(layers)) of structures: written out
                    isinstance(func, ast.Name)
                    and func.id in ("list", "tuple")
                    and len(node.args) == 1
                    and not node.keywords
                ):
                    elements = iterated(node.args[0])
                    if elements is not None:
                        return (ast.List if func.id == "list" else ast.Tuple)(elements, ast.Load())
                if (  # sorted(d), list(d) of a dict: its keys
                    isinstance(func, ast.Name)
                    and func.id in ("sorted", "list")
                    and len(node.args) == 1
                    and not node.keywords
                    and isinstance(node.args[0], ast.Dict)
                ):
                    keys = [k.value for k in node.args[0].keys]
                    keys = sorted(keys) if func.id == "sorted" else keys
                    return ast.List([ast.Constant(k) for k in keys], ast.Load())
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Dict):
                    entries = func.value
                    if func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant):
                        return entry_or_default(entries, node)  # d.get("k", default)
                    if func.attr == "values":
                        return ast.List(entries.values, ast.Load())
                    if func.attr == "keys":
                        return ast.List(entries.keys, ast.Load())
                    if func.attr == "items":
                        pairs = zip(entries.keys, entries.values, strict=True)
                        return ast.List([ast.Tuple(list(p), ast.Load()) for p in pairs], ast.Load())
                return node

        folded = Fold().visit(copy_tree(expr))
        if whole and isinstance(folded, DISPLAYS):
            return folded  # assigned to a name or unpacked: the caller takes it apart
        for node in ast.walk(folded):  # what is left must be plain values for the compiler
            if not isinstance(node, DISPLAYS):
                continue
            nested = isinstance(node, ast.Dict) or any(isinstance(e, DISPLAYS) for e in node.elts)
            tracked = any(
                isinstance(n, ast.Name) and n.id in structures.leaves for n in ast.walk(node)
            )
            if nested and (tracked or isinstance(node, ast.Dict)):
                choice = isinstance(expr, (ast.BoolOp, ast.IfExp))  # config = config or {}
                reject(
                    expr,
                    "a structure (a dict or a nested list) is used whole here",
                    OPTIONS_HINT if choice else "use its parts: params['W'], or loop over it",
                )
        return folded

    def introspection(self, call: ast.Call) -> ast.expr | None:
        """``getattr(self, "W1")`` (a name known while compiling: ``f"W{i}"`` in an
        unrolled loop), ``hasattr(self, "W2")``, ``isinstance(self, Model)``,
        ``vars(self)`` of an object seen as its attributes: its entry, a constant, the
        dict of its attributes, as Python gives them; ``None`` for any other call."""
        func, args = call.func, call.args
        if not (
            isinstance(func, ast.Name)
            and func.id in _INTROSPECTION
            and self._builtin(func.id)
            and args
            and getattr(args[0], "is_object", False)
            and not call.keywords
            and not any(isinstance(a, ast.Starred) for a in args)
        ):
            return None
        literal, cls = args[0], getattr(args[0], "cls", None)
        keys = [k.value for k in literal.keys]
        if func.id == "vars" and len(args) == 1:
            entries = ast.Dict(literal.keys, literal.values)  # a dict: not the object
            return ast.copy_location(entries, call)
        if func.id == "isinstance" and len(args) == 2 and cls is not None:
            classes = self._classes(args[1])
            if classes is None:
                return None
            return ast.copy_location(ast.Constant(issubclass(cls, classes)), call)
        if func.id not in ("getattr", "hasattr") or len(args) not in (2, 3):
            return None
        name = folded_key(args[1], self.known)
        if not (isinstance(name, ast.Constant) and type(name.value) is str):
            reject(
                call,
                f"{func.id} asks for an attribute whose name is known only when the code "
                "runs: the compiler reads an object's attributes while compiling, and the "
                "name is not made of strings and ints known then (a loop over a range of "
                "numbers written out, or of len(...), is unrolled and its index known)",
                "write the attribute's name out, or keep the arrays in a list attribute "
                "(self.Ws = [...]) and loop over it",
            )
        if func.id == "hasattr" and len(args) == 2:
            on_class = cls is not None and hasattr(cls, name.value)
            return ast.copy_location(ast.Constant(name.value in keys or on_class), call)
        if func.id != "getattr":
            return None
        if name.value in keys:
            return copy_tree(literal.values[keys.index(name.value)])
        if len(args) == 3 and (cls is None or not hasattr(cls, name.value)):
            return args[2]  # getattr(self, "W3", None): the default, as Python gives it
        reject(
            call,
            f"getattr reads {name.value!r}, which is not an attribute of the object's "
            "instance here (the compiled code reads an object's own attributes through "
            "getattr; a method or a value of its class is read as an attribute)",
            f"write it as an attribute (obj.{name.value})",
        )

    def _builtin(self, name: str) -> bool:
        """Whether ``name`` reads the builtin of that name (not rebound by the code)."""
        structures = self.structures
        found = structures.namespace.get(name, getattr(builtins, name))
        return name not in structures.local and found is getattr(builtins, name)

    def _classes(self, node: ast.expr) -> type | tuple[type, ...] | None:
        """The class (or tuple of classes) an ``isinstance`` test names by global names,
        else ``None`` (the compiled code is guarded by those names, as by any global it
        reads)."""
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        found = []
        for part in parts:
            if not isinstance(part, ast.Name) or part.id in self.structures.local:
                return None
            value = self.structures.namespace.get(part.id, getattr(builtins, part.id, None))
            if not isinstance(value, type):
                return None
            found.append(value)
        return tuple(found) if isinstance(node, ast.Tuple) else found[0]

    def subscript(self, node: ast.Subscript) -> ast.expr:
        structure, key = node.value, node.slice
        if isinstance(structure, ast.Dict):
            keys = [k.value for k in structure.keys]
            if isinstance(key, ast.Constant) and key.value in keys:
                return copy_tree(structure.values[keys.index(key.value)])
            if isinstance(key, ast.Constant):
                reject(node, f"the dict has no key {key.value!r} (its keys: {keys})")
            reject(
                node,
                "this key is known only at run time: the compiler reads a dict's keys "
                "while compiling",
                "write the key out (params['W1']), loop over the dict (for name, W in "
                "params.items()), or make the key from a range with numbers written out "
                "(for i in range(1, 3): params[f'W{i}'])",
            )
        if isinstance(key, ast.Constant) and type(key.value) is int:
            if -len(structure.elts) <= key.value < len(structure.elts):
                return copy_tree(structure.elts[key.value])
            reject(node, "this index is out of range")
        if isinstance(key, ast.Slice) and all(
            part is None or (isinstance(part, ast.Constant) and type(part.value) is int)
            for part in (key.lower, key.upper, key.step)
        ):
            bounds = [p.value if p is not None else None for p in (key.lower, key.upper, key.step)]
            return type(structure)(structure.elts[slice(*bounds)], ast.Load())
        if not self.structures.is_structure(structure):
            return node  # a flat list of plain values: the compiler reads it at run time
        reject(
            node,
            "this index into a structure is not known while compiling: the compiler picks "
            "a structure's entries while compiling, from Python ints known when the "
            "function is called (numbers written out, len(params), indices of loops over "
            "such ranges, int arguments and global ints), and this index is computed "
            "from something else (a value of an array, computed at run time)",
            "compute the index from those (for i in range(len(params)): params[i]), or, "
            "when the arrays have one shape and the index depends on array values, stack "
            "them into one array (np.stack(params)) and index that array",
        )

    def known(self, name: str) -> int | str | None:
        """The int or string a name stands for while compiling: an unrolled loop's
        index, an int argument the call was specialized on, a name assigned once an int
        or string written out, a global int."""
        if name in self.structures.constants:
            value = self.structures.constants[name]
            return value.value if isinstance(value, ast.Constant) else None
        if name in self.structures.statics:
            self.structures.statics_used.add(name)
            return self.structures.statics[name]
        if name in self.structures.written:
            return self.structures.written[name]
        return self._global_int(name)

    def _global_int(self, name: str) -> int | None:
        """A global int the function reads (``range(N_LAYERS)``); recorded, so that the
        compiled code is guarded by its value (see :mod:`.compiler.assumptions`)."""
        structures = self.structures
        value = structures.namespace.get(name)
        if name in structures.local or type(value) is not int:
            return None
        structures.globals_used.add(name)
        return value

    def static_slice(self, key: ast.expr) -> ast.expr:
        """A key, an index or a slice with each part computed where it is known."""
        if isinstance(key, ast.Slice):
            parts = [
                folded_key(p, self.known) if p is not None else None
                for p in (key.lower, key.upper, key.step)
            ]
            return ast.copy_location(ast.Slice(*parts), key)
        return folded_key(key, self.known)


def _holds_object(literal: ast.expr) -> bool:
    """Whether a structure's literal is an object's (or a namedtuple's), or holds one."""
    return any(_has_attributes(n) for n in ast.walk(literal))


def _has_attributes(literal: Any) -> bool:
    """Whether a literal is of an object (its attributes, a dict display) or of a
    namedtuple (its fields, a tuple display)."""
    return getattr(literal, "is_object", False) or bool(getattr(literal, "fields", None))


def _entry_at(literal: ast.expr | None, key: object) -> ast.expr | None:
    """The entry of a dict (or object) literal at ``key``, of a list or tuple literal at
    the int ``key``; ``None`` where there is none."""
    if isinstance(literal, ast.Dict):
        keys = [k.value if isinstance(k, ast.Constant) else None for k in literal.keys]
        return literal.values[keys.index(key)] if key in keys else None
    if isinstance(literal, (ast.List, ast.Tuple)) and type(key) is int:
        return literal.elts[key] if -len(literal.elts) <= key < len(literal.elts) else None
    return None


def iterated(node: ast.expr) -> list[ast.expr] | None:
    """The items that iterating ``node`` gives, when ``node`` is a list or tuple written
    out, or ``zip`` (``strict=`` of equal lengths), ``enumerate`` or ``reversed`` of such; else
    ``None``. (Only where the iterator is consumed at once, by ``list(...)``: a
    ``zip(...)`` kept in a name is exhausted by its first loop, a list is not.)

    >>> pairs = iterated(ast.parse("zip([a, b], (c, d))", mode="eval").body)
    >>> [ast.unparse(p) for p in pairs]
    ['(a, c)', '(b, d)']
    >>> [ast.unparse(p) for p in iterated(ast.parse("enumerate(reversed([a, b]))").body[0].value)]
    ['(0, b)', '(1, a)']
    """
    if isinstance(node, (ast.List, ast.Tuple)):
        return [copy_tree(e) for e in node.elts]
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    if node.keywords and node.func.id != "zip":
        return None
    parts = [iterated(a) for a in node.args]
    if not parts or any(p is None for p in parts):
        return None
    return combined(node, parts)


def combined(call: ast.Call, parts: list[list[ast.expr] | None]) -> list[ast.expr] | None:
    """The items of ``zip``, ``enumerate`` or ``reversed`` (``call``) of sequences whose
    items are known while compiling (``parts``; ``None`` for one that is not), else
    ``None``."""
    name = call.func.id
    if name == "zip" and all(p is not None for p in parts) and zipped_as_written(call, parts):
        return [ast.Tuple(list(items), ast.Load()) for items in zip(*parts, strict=False)]
    if name == "enumerate" and len(parts) == 1 and not call.keywords:
        return [ast.Tuple([ast.Constant(i), e], ast.Load()) for i, e in enumerate(parts[0])]
    if name == "reversed" and len(parts) == 1:
        return parts[0][::-1]
    return None


def zipped_as_written(call: ast.Call, parts: list[list[ast.expr]]) -> bool:
    """Whether ``zip(...)`` of sequences known while compiling (``parts``) gives the
    pairs that ``zip(..., strict=False)`` gives: no keyword, ``strict=False``, or
    ``strict=True`` (the linters' advice) of sequences of one length.

    >>> call = ast.parse("zip(a, b, strict=True)").body[0].value
    >>> zipped_as_written(call, [[1, 2], [3, 4]]), zipped_as_written(call, [[1], [3, 4]])
    (True, False)
    """
    if not call.keywords:
        return True
    if len(call.keywords) != 1 or call.keywords[0].arg != "strict":
        return False
    strict = call.keywords[0].value
    if not (isinstance(strict, ast.Constant) and isinstance(strict.value, bool)):
        return False
    return not strict.value or len({len(p) for p in parts}) == 1


def items_of(value: ast.expr) -> list[ast.expr]:
    return list(value.keys) if isinstance(value, ast.Dict) else list(value.elts)


def bind_target(target: ast.expr, element: ast.expr) -> dict[str, ast.expr] | None:
    if isinstance(target, ast.Name):
        return {target.id: element}
    if isinstance(target, ast.Tuple) and isinstance(element, (ast.Tuple, ast.List)):
        if len(target.elts) != len(element.elts):
            return None
        bound: dict[str, ast.expr] = {}
        for t, e in zip(target.elts, element.elts, strict=True):
            inner = bind_target(t, e)
            if inner is None:
                return None
            bound.update(inner)
        return bound
    return None


def substitute(expr: ast.expr, bound: dict[str, ast.expr]) -> ast.expr:
    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return copy_tree(bound[node.id]) if node.id in bound else node

    return Replace().visit(copy_tree(expr))


_KEY_OPERATORS = {ast.Add: operator.add, ast.Mod: operator.mod, ast.Sub: operator.sub,
                  ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}  # fmt: skip


def folded_key(node: ast.expr, known=None) -> ast.expr:
    """A key or index made of constants computed (``"W%d" % 1``, ``f"W{1}"``,
    ``"W" + str(1)``: ``"W1"``; ``-1``, ``2 * 1 + 1``, ``n // 2`` with ``n`` known);
    any other expression as it is. ``known(name)`` gives the int a name stands for
    while compiling (a loop index unrolled, an int argument), or ``None``.

    >>> ast.unparse(folded_key(ast.parse('f"b{2}"', mode="eval").body))
    "'b2'"
    >>> ast.unparse(folded_key(ast.parse('"W%d" % (1 + 1)', mode="eval").body))
    "'W2'"
    >>> ast.unparse(folded_key(ast.parse("2 * i + 1", mode="eval").body, {"i": 3}.get))
    '7'
    """
    value = static_value(node, known)
    return node if value is None else ast.copy_location(ast.Constant(value), node)


def static_value(node: ast.expr, known=None) -> str | int | None:
    """The int or string ``node`` denotes while compiling (see :func:`folded_key`),
    else ``None``: what Python would compute, or ``None`` where it would raise.

    >>> [static_value(ast.parse(text, mode="eval").body) for text in ("-1", "x", "7 // 2")]
    [-1, None, 3]
    """
    if isinstance(node, ast.Constant) and type(node.value) in (str, int):
        return node.value
    if isinstance(node, ast.Name) and known is not None:
        value = known(node.id)
        return value if type(value) in (str, int) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = static_value(node.operand, known)
        if type(operand) is not int:
            return None
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _KEY_OPERATORS:
        left, right = static_value(node.left, known), static_value(node.right, known)
        if left is None or right is None or (type(left) is str and type(node.op) is ast.Sub):
            return None
        try:
            value = _KEY_OPERATORS[type(node.op)](left, right)
        except (TypeError, ZeroDivisionError):  # "W" + 1: Python raises it when it runs
            return None
        return value if type(value) in (str, int) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
        inner = static_value(node.args[0], known) if len(node.args) == 1 else None
        return None if inner is None or node.keywords else str(inner)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                if part.conversion != -1 or part.format_spec is not None:
                    return None
                part = part.value
            value = static_value(part, known)
            if value is None:
                return None
            parts.append(str(value))
        return "".join(parts)
    return None


_COMPARISONS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
                ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                ast.Is: operator.is_, ast.IsNot: operator.is_not}  # fmt: skip
_SINGLETONS = (None, True, False)


def static_truth(node: ast.expr, known=None) -> bool | None:
    """Whether a test is true, when it is known while compiling: a structure (``if
    args:``, true when not empty), comparisons of ints and strings known then
    (``len(args) > 2`` once ``len(args)`` is folded, ``n == 0`` with ``n`` known, see
    :func:`static_value`), ``is None`` of ``None``, ``not``, ``and``, ``or``; else
    ``None`` (the test is made at run time).

    >>> [static_truth(ast.parse(t, mode="eval").body) for t in ("2 > 2", "None is None", "x > 1")]
    [False, True, None]
    >>> static_truth(ast.parse("n >= 1 and not 0", mode="eval").body, {"n": 3}.get)
    True
    >>> [static_truth(ast.parse(t, mode="eval").body) for t in ("()", "(a, b)", "not []")]
    [False, True, True]
    """
    constant = isinstance(node, ast.Constant)
    if constant and (_singleton(node.value) or type(node.value) in (int, str)):
        return bool(node.value)
    if isinstance(node, DISPLAYS) and not any(
        item is None or isinstance(item, ast.Starred) for item in items_of(node)
    ):  # if args: a structure known while compiling is true when it is not empty
        return bool(items_of(node))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = static_truth(node.operand, known)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):  # left to right, as Python evaluates it
        stops_at = isinstance(node.op, ast.Or)  # 'or' stops at a true operand, 'and' at a false
        for value in node.values:
            truth = static_truth(value, known)
            if truth is None or truth is stops_at:
                return truth
        return not stops_at
    if isinstance(node, ast.Compare):
        operands = [_operand(o, known) for o in [node.left, *node.comparators]]
        if any(o is _UNKNOWN for o in operands) or not all(
            type(op) in _COMPARISONS for op in node.ops
        ):
            return None
        identities = [
            (left, right)
            for op, left, right in zip(node.ops, operands, operands[1:], strict=False)
            if isinstance(op, (ast.Is, ast.IsNot))
        ]
        if not all(_singleton(left) and _singleton(right) for left, right in identities):
            return None  # 'is' of ints or strings: not a question of value
        try:
            return all(
                _COMPARISONS[type(op)](left, right)
                for op, left, right in zip(node.ops, operands, operands[1:], strict=False)
            )
        except TypeError:  # 1 < "a": Python raises it when it runs
            return None
    return None


_UNKNOWN = object()


def _singleton(value: object) -> bool:
    return any(value is s for s in _SINGLETONS)  # not 'in': 0 == False


def _operand(node: ast.expr, known) -> object:
    """An operand of a comparison known while compiling, else ``_UNKNOWN``."""
    if isinstance(node, ast.Constant) and _singleton(node.value):
        return node.value
    value = static_value(node, known)
    return _UNKNOWN if value is None else value


def spread_keywords(call: ast.Call) -> list[ast.keyword]:
    """The call's keywords with ``**{"scale": 2.0}`` (a dict whose keys are known while
    compiling) spread into ``scale=2.0``, as Python binds them.

    >>> call = ast.parse("f(x, **{'scale': s, 'shift': 0.5})", mode="eval").body
    >>> [ast.unparse(k) for k in spread_keywords(call)]
    ['scale=s', 'shift=0.5']
    """
    keywords: list[ast.keyword] = []
    for keyword in call.keywords:
        entries = keyword.value
        if keyword.arg is not None or not isinstance(entries, ast.Dict):
            keywords.append(keyword)
            continue
        for key, value in zip(entries.keys, entries.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                reject(keyword.value, "'**' unpacks a dict whose keys are not all strings")
            keywords.append(ast.copy_location(ast.keyword(key.value, value), keyword.value))
    names = [k.arg for k in keywords if k.arg is not None]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        reject(call, f"the call gets several values for the keyword {repeated[0]!r}")
    return keywords


def entry_or_default(entries: ast.Dict, call: ast.Call) -> ast.expr:
    """``d.get(key, default)`` of a dict known while compiling: the entry, else the
    default (``None`` when none is given), as Python's ``dict.get``.

    >>> d = ast.parse("{'a': x}", mode="eval").body
    >>> [ast.unparse(entry_or_default(d, ast.parse(c, mode="eval").body))
    ...  for c in ("d.get('a')", "d.get('b', y)", "d.get('b')")]
    ['x', 'y', 'None']
    """
    keys = [k.value if isinstance(k, ast.Constant) else None for k in entries.keys]
    key = call.args[0].value
    if key in keys:
        return copy_tree(entries.values[keys.index(key)])
    return copy_tree(call.args[1]) if len(call.args) > 1 else ast.Constant(None)
