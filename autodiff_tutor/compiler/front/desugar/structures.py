"""Desugaring of structures known at compile time: dicts, nested lists and tuples.

A structured parameter (``params = [(W1, b1), (W2, b2)]``, ``p = {"W": W, "b": b}``)
reaches the compiler as its leaves, one parameter each (``params_0_0``...), with the
structure as a literal of those names. Local dict literals and nested literals are
structures too. This pass makes every structure disappear before normalization:

- a read ``params[1][0]``, ``p["W"]``, ``len(params)`` is replaced by the leaf or the
  constant it denotes;
- ``for W, b in params``, ``for k, v in p.items()``, ``zip``/``enumerate``/``reversed``
  of structures, and ``for i in range(len(params))`` are unrolled, one copy of the body
  per element (the copies keep the user's line numbers; :mod:`.front.desugar.unroll`);
- ``W, b = layer`` assigns leaf by leaf; ``d["k"] = v`` on a local dict names a new leaf;
  ``d["k"] += v`` writes the leaf in place (``entry = d_k; entry += v``), as numpy
  writes the array the entry holds;
- a dict comprehension over a structure becomes one leaf per key.

Indexes, slices, keys and range bounds are computed while compiling from ints known
at the call (``params[-1]``, ``params[:-1]``, ``range(len(params) - 1)``,
``params[2 * i + 1]``, ``range(n_layers)`` with an int argument or a global int, see
:mod:`.front.desugar.reads`). What it cannot resolve statically (an index computed
from an array's values, a structure reassigned in a loop, a write into a structured
parameter) is refused with a located error.

>>> import ast
>>> tree = ast.parse('''
... def f(p, X):
...     for W, b in p:
...         X = X @ W + b
...     return X
... ''').body[0]
>>> literal = ast.parse("[(p_0_0, p_0_1), (p_1_0, p_1_1)]", mode="eval").body
>>> body = Structures(Names(tree), {"p": literal}).run(tree.body)
>>> print(ast.unparse(ast.Module(body, [])))
W = p_0_0
b = p_0_1
X = X @ W + b
W = p_1_0
b = p_1_1
X = X @ W + b
return X
"""

from __future__ import annotations

import ast
from typing import Any

from autodiff_tutor.compiler.code import Names
from autodiff_tutor.compiler.front.desugar.attributes import MUTATING, AttributeWrites
from autodiff_tutor.compiler.front.desugar.base import (
    StatementPass,
    assign_like,
    augmented_value,
    name_node,
    reject,
)
from autodiff_tutor.compiler.front.desugar.reads import (
    DISPLAYS,
    OPTIONS_HINT,
    Reads,
    bind_target,
    items_of,
    static_truth,
    substitute,
)
from autodiff_tutor.compiler.front.desugar.unroll import Unrolling
from autodiff_tutor.compiler.front.source import as_load
from autodiff_tutor.syntax import copy_tree


class Structures(StatementPass):
    """Replace structures by their leaves (see the module docstring): the state of one
    function's pass (what each name holds, the leaves, the ints known while compiling,
    ...), its steps for statements and assignments, and one part per concern, each an
    object of its own module that reads that state through ``self.structures``: reads
    of structures (``self.reads``), loops unrolled (``self.unrolling``) and writes into
    an object's attributes (``self.attribute_writes``)."""

    def __init__(
        self,
        names: Names,
        seeds: dict[str, ast.expr],
        statics: dict[str, int] | None = None,
        namespace: dict | None = None,
        local: frozenset[str] = frozenset(),
        once: frozenset[str] = frozenset(),
    ):
        self.names = names
        # names the function assigns once (an inlined helper's parameter given "W"):
        # an int or string written out there is known while compiling
        self.once = once
        self.written: dict[str, int | str] = {}
        self.env: dict[str, ast.expr] = dict(seeds)  # name -> its structure, as a literal
        self.parameters = set(seeds)
        self.leaves: set[str] = {
            n.id for s in seeds.values() for n in ast.walk(s) if isinstance(n, ast.Name)
        }
        self.parameter_leaves = frozenset(self.leaves)  # never rebound (writes refused)
        self.depth = 0  # inside a loop or branch that is not unrolled
        self.constants: dict[str, ast.expr] = {}  # unrolled loop indices
        self.output_keys: tuple[str, ...] | None = None  # the keys of a returned dict
        # ints known when the function is called: arguments the call is specialized on
        # (see api.arguments), and global ints; the ones an index or a range read
        self.statics = dict(statics or {})
        self.statics_used: set[str] = set()
        self.namespace = namespace or {}
        self.local = local  # names the function binds: not globals
        self.globals_used: set[str] = set()
        # lists built by appends outside loops that stay loops (rows = []; for W, b in
        # params: rows.append((W, b))): their items, held in names, while nothing else
        # touched them; zip(*rows) reads them (the list itself is still built at run time)
        self.built: dict[str, list[ast.expr]] = {}
        self.built_from: dict[str, str] = {}  # rows = items: the other name of the list
        self.reads = Reads(self)
        self.unrolling = Unrolling(self)
        self.attribute_writes = AttributeWrites(self)

    # -- statements ------------------------------------------------------------------

    def _statement(self, node: ast.stmt) -> list[ast.stmt]:
        appended = self._append_to_built(node)
        if appended is not None:
            return appended
        heads = [getattr(node, f) for f in ("target", "iter", "test") if hasattr(node, f)]
        compound = isinstance(node, (ast.For, ast.While, ast.If))  # bodies: statement by statement
        mentioned = {
            n.id
            for h in (heads if compound else [node])
            for n in ast.walk(h)
            if isinstance(n, ast.Name)
        }
        out = self._statement_of(node)
        touched = [n for n in self.built if n in mentioned or self.built_from.get(n) in mentioned]
        built = {name: self.built.pop(name) for name in touched}  # a list as any from now on
        if not self.depth and isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and isinstance(value, ast.List) and not value.elts:
                self.built[target.id] = []
            elif isinstance(target, ast.Name) and isinstance(value, ast.Name) and value.id in built:
                self.built[target.id] = built[value.id]  # rows = items: one list, two names
                self.built_from[target.id] = value.id
        return out

    def _append_to_built(self, node: ast.stmt) -> list[ast.stmt] | None:
        """``rows.append(v)`` of a list in ``built``, outside loops that stay loops:
        ``v`` held in fresh names (a later unrolled copy rebinds its names), recorded."""
        call = node.value if isinstance(node, ast.Expr) else None
        if not (
            not self.depth
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id in self.built
            and len(call.args) == 1
            and not call.keywords
        ):
            return None
        name = call.func.value.id
        items = self.built.pop(name)
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(call.args[0])):
            return self._statement_of(node)  # rows.append(rows): a list as any
        value = self.reads.fold(call.args[0], whole=True)
        nested = any(isinstance(e, DISPLAYS) for e in getattr(value, "elts", ()))
        if isinstance(value, ast.Dict) or nested:  # a list of dicts or of nested lists: as any
            return self._statement_of(node)
        statements, item = self.hold(value, f"{name}_{len(items)}", node)
        self.built[name] = [*items, item]
        call.args = [copy_tree(item)]
        return [*statements, node]

    def _statement_of(self, node: ast.stmt) -> list[ast.stmt]:
        if isinstance(node, ast.If):
            node.test = self.reads.fold(self.reads.attributes(node.test))
            truth = static_truth(node.test, self.reads.known)
            if truth is not None:  # if len(args) > 2: the branch Python takes, alone
                return self.run(node.body if truth else node.orelse)
        written = self.attribute_writes.statement(node)  # self.nfev += 1
        if written is not None:
            return written
        self._check_mutation(node)
        if (
            not self.depth
            and isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in self.once
            and isinstance(node.value, ast.Constant)
            and type(node.value.value) in (int, str)
        ):
            self.written[node.targets[0].id] = node.value.value
        if isinstance(node, (ast.For, ast.While, ast.If)):
            return self._compound(node)
        node = self.reads.attributes(node)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            return self.assign(node.targets[0], node.value, node)
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
            return self._augmented_entry(node)
        if isinstance(node, ast.Return) and node.value is not None:
            value = self.reads.fold(node.value, whole=True)
            if isinstance(value, ast.Dict) and self.depth:
                reject(
                    node,
                    "a dict is returned inside a loop or a branch",
                    "assign its values in the branch and return the dict once, at the end",
                )
            if isinstance(value, ast.Dict):
                return self._return_dict(value, node)
            if isinstance(value, ast.Tuple) and any(isinstance(e, ast.Dict) for e in value.elts):
                reject(
                    node,
                    "a dict inside a returned tuple is not supported",
                    "return the dict alone (vjp and jvp give it back as a dict; put the "
                    "other values in it), or return a tuple of arrays",
                )
        for field in ("value", "test", "msg", "exc"):
            if isinstance(getattr(node, field, None), ast.expr):
                setattr(node, field, self.reads.fold(getattr(node, field)))
        return [node]

    def _compound(self, node: ast.For | ast.While | ast.If) -> list[ast.stmt]:
        """A loop (unrolled where it goes over a structure) or a branch; its body
        statement by statement, its heads read after the attributes it writes are held
        in variables (a while test reads them anew at each iteration)."""
        if isinstance(node, ast.For):
            node.iter = self.reads.attributes(node.iter)
            unrolled = self.unrolling.unroll(node)
            if unrolled is not None:
                return unrolled
        carried = self.attribute_writes.carry(node)
        for field in ("iter", "test"):
            if hasattr(node, field):
                setattr(node, field, self.reads.fold(self.reads.attributes(getattr(node, field))))
        self._enter(node)
        node.body = self.run(node.body)
        node.orelse = self.run(node.orelse)
        self.depth -= 1
        return [*carried, node]

    def _return_dict(self, value: ast.Dict, at: ast.Return) -> list[ast.stmt]:
        """``return {"loss": l, "y": y}``: the function returns the list of the values,
        and ``output_keys`` says which key each has (the API gives a dict back)."""
        for key, item in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                reject(value, "a returned dict must have string keys", "use strings as keys")
            if isinstance(item, DISPLAYS) or isinstance(item, ast.Constant):
                reject(
                    item,
                    "a returned dict must hold arrays (not lists, dicts or constants)",
                    "return one array per key, or return a tuple",
                )
        statements, literal = self.hold(value, "out", at)
        self.output_keys = tuple(k.value for k in literal.keys)
        returned = ast.copy_location(ast.Return(ast.List(literal.values, ast.Load())), at)
        return [*statements, returned]

    def _enter(self, node: ast.stmt) -> None:
        """Names assigned in a region that is not unrolled must not be structures."""
        self.depth += 1
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                if child.id in self.env:
                    reject(
                        child,
                        f"{child.id!r} holds a structure (a dict or a nested list) and is "
                        "assigned inside a loop or a branch",
                        "assign it once, before the loop or branch",
                    )

    def _check_mutation(self, node: ast.stmt) -> None:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in MUTATING
        ):
            return
        root = call.func.value
        while isinstance(root, ast.Subscript):  # hist["loss"].append(v): hist changes
            root = root.value
        if not (isinstance(root, ast.Name) and root.id in self.env):
            return
        if root is not call.func.value and root.id not in self.parameters:
            reject(
                call,
                f"this changes an entry of the structure {self.names.user_text(root.id)!r} "
                "in place",
                f"keep that list in a name of its own (losses = []; losses.{call.func.attr}"
                "(...)), and put it in the structure afterwards",
            )
        self.refuse_write(root.id, call)

    def refuse_write(self, name: str, node: ast.AST) -> None:
        said = self.names.user_text(name)  # (loss_self_1 of an inlined method: self)
        if isinstance(node, ast.Attribute) and self.attribute_writes.holder(name) is not None:
            reject(
                node,
                f"this form of write into {said}.{node.attr} is not supported: the compiled "
                "code makes a write into an attribute for its effect when it is a statement "
                "of its own",
                f"write {said}.{node.attr} = value on a line of its own",
            )
        if isinstance(node, ast.Attribute):  # in a method called inside, a held object
            reject(
                node,
                f"this sets the attribute {said}.{node.attr} of an object that the compiled "
                "code reads only as its attributes here (an object held by another, or the "
                "object of a method called inside the differentiated one)",
                "make the write in the differentiated method itself (self.x = value runs "
                "for its effect there), or after the gradient",
            )
        if name in self.parameters:
            reject(
                node,
                f"this changes the parameter {said!r} in place, which is not differentiated",
                "build a new list or dict instead",
            )
        reject(node, f"this changes the structure {said!r} in place", "build a new one instead")

    def assign(self, target: ast.expr, value: ast.expr, at: ast.stmt) -> list[ast.stmt]:
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            if target.value.id in self.env:
                return self._write_item(target, value, at)
        if isinstance(value, ast.DictComp):
            value = self._dict_comprehension(value)
        else:
            value = self.reads.fold(value, whole=True)
        if isinstance(target, (ast.Tuple, ast.List)) and self.is_structure(value):
            out: list[ast.stmt] = []
            for element, item in _pair_up(target, items_of(value), value):
                out += self.assign(element, item, at)
            return out
        if isinstance(target, ast.Name):
            self.env.pop(target.id, None)
            if target.id in self.parameters:
                reject(target, f"the structured parameter {target.id!r} is reassigned")
            if self.is_structure(value):
                if self.depth and target.id in self.once and self._of_parameters(value):
                    self.env[target.id] = value  # self_1 = self in a loop: one more name
                    return []
                if self.depth:
                    empty = isinstance(value, ast.Dict) and not value.keys  # config = {}
                    reject(
                        at,
                        "a structure (a dict or a nested list) is made inside a loop or a branch",
                        OPTIONS_HINT if empty else "make it before the loop or branch",
                    )
                statements, literal = self.hold(value, target.id, at)
                self.env[target.id] = literal
                return statements
        elif self.is_structure(value) and isinstance(value, ast.Dict):
            reject(value, "a dict can only be assigned to a name here")
        return [ast.copy_location(ast.Assign([target], value), at)]

    def _write_item(self, target: ast.Subscript, value: ast.expr, at: ast.stmt) -> list:
        name = target.value.id
        key = self.reads.fold(target.slice)
        if name in self.parameters or self.depth or not isinstance(key, ast.Constant):
            self.refuse_write(name, target)
        statements, leaf = self.hold(self.reads.fold(value, whole=True), f"{name}_{key.value}", at)
        if isinstance(self.env[name], ast.Dict):
            self.set_entry(name, key.value, leaf)
            return statements
        structure = copy_tree(self.env[name])
        if isinstance(key.value, int) and -len(structure.elts) <= key.value < len(structure.elts):
            if isinstance(structure, ast.Tuple):
                reject(target, "tuples cannot be changed")
            structure.elts[key.value] = leaf
        else:
            reject(target, "this index is out of range")
        self.env[name] = structure
        return statements

    def _augmented_entry(self, node: ast.AugAssign) -> list[ast.stmt]:
        """``c[k] op= v``: Python reads the entry, runs its in-place operator and stores
        the result back (``entry = c[k]; entry op= v; c[k] = entry``). An array changes
        in place, so every name sharing its memory sees the write; a number gives a new
        one. For a structure known here the entry is a leaf: it is held in a name of its
        own, written as ``a op= v`` is (normalization follows the write to the names
        that share the array) and made the structure's entry. Any other container (an
        array, a list made at run time) is left to normalization."""
        target = node.target
        value = self.reads.fold(node.value, whole=True)
        if not (isinstance(target.value, ast.Name) and target.value.id in self.env):
            return [ast.copy_location(ast.AugAssign(target, node.op, value), node)]
        name = target.value.id
        key = self.reads.fold(target.slice)
        if name in self.parameters or self.depth or not isinstance(key, ast.Constant):
            self.refuse_write(name, target)
        entry = self.reads.fold(as_load(target), whole=True)
        if isinstance(entry, ast.Tuple):  # a tuple gives a new tuple: the entry is rebound
            return self.assign(target, augmented_value(node), node)
        if isinstance(entry, DISPLAYS):
            reject(
                node,
                f"this changes a list or dict held in the structure {name!r} in place",
                f"keep it in a name of its own and write that name ({name}_items += ...), "
                "then put it in the structure",
            )
        stem = f"{name}_{key.value}"
        held = self.names.fresh(stem if stem.isidentifier() else name)
        self.leaves.add(held)
        written = ast.copy_location(ast.AugAssign(name_node(held, True), node.op, value), node)
        written.described_as = ast.unparse(target)  # what errors call the written array
        return [
            assign_like(held, entry, node),
            written,
            *self._write_item(target, name_node(held), node),
        ]

    def set_entry(self, name: str, key: Any, value: ast.expr) -> None:
        """The dict ``name`` holds, with ``value`` at ``key`` (a new entry, or in place of
        the old one)."""
        literal = copy_tree(self.env[name])  # (keeps is_object, cls, holder)
        keys = [k.value for k in literal.keys]
        if key in keys:
            literal.values[keys.index(key)] = value
        else:
            literal.keys.append(ast.Constant(key))
            literal.values.append(value)
        self.env[name] = literal

    def hold(self, value: ast.expr, stem: str, at: ast.stmt) -> tuple[list, ast.expr]:
        """Copy each leaf of ``value`` that is not already a leaf into a fresh name."""
        if isinstance(value, ast.Constant) or (
            isinstance(value, ast.Name) and value.id in self.leaves
        ):
            return [], value
        if isinstance(value, ast.Dict):
            out, values = [], []
            for key, item in zip(value.keys, value.values, strict=True):
                if not isinstance(key, ast.Constant):
                    reject(value, "dict keys must be constants here", "use strings as keys")
                statements, leaf = self.hold(item, f"{stem}_{key.value}", at)
                out += statements
                values.append(leaf)
            held = unique_keys([copy_tree(k) for k in value.keys], values)
            held.is_object = getattr(value, "is_object", False)  # self = obj: still an object
            held.cls = getattr(value, "cls", None)
            return out, held
        if isinstance(value, (ast.List, ast.Tuple)):
            out, elements = [], []
            for i, item in enumerate(value.elts):
                statements, leaf = self.hold(item, f"{stem}_{i}", at)
                out += statements
                elements.append(leaf)
            held = type(value)(elements, ast.Load())
            held.fields = getattr(value, "fields", None)  # q = p of a namedtuple: q.W
            return out, held
        leaf = self.names.fresh(stem.replace("-", "_")) if not stem.isidentifier() else None
        leaf = leaf or self.names.exact(stem)
        self.leaves.add(leaf)
        return [assign_like(leaf, value, at)], name_node(leaf)

    def _of_parameters(self, value: ast.expr) -> bool:
        """Whether ``value`` is made of the leaves of structured parameters only (a
        method's ``self`` inlined in a loop, a name bound once): the same structure at
        every iteration."""
        names = [n for n in ast.walk(value) if isinstance(n, ast.Name)]
        return bool(names) and all(n.id in self.parameter_leaves for n in names)

    def is_structure(self, value: ast.expr) -> bool:
        """A literal the pass keeps track of: a dict, nested, or holding tracked leaves."""
        if isinstance(value, ast.Dict):
            return True
        if not isinstance(value, (ast.List, ast.Tuple)):
            return False
        return any(
            isinstance(e, DISPLAYS) or (isinstance(e, ast.Name) and e.id in self.leaves)
            for e in value.elts
        )

    def _dict_comprehension(self, node: ast.DictComp) -> ast.Dict:
        if len(node.generators) != 1 or node.generators[0].ifs:
            reject(node, "dict comprehensions take one 'for' without 'if' here")
        generator = node.generators[0]
        elements = self.unrolling.elements(generator.iter)
        if elements is None:
            reject(generator.iter, "a dict comprehension must go over a dict or a structure")
        keys, values = [], []
        for element in elements:
            bound = bind_target(generator.target, element)
            if bound is None:
                reject(generator.target, "cannot unpack this element here")
            key = self.reads.fold(substitute(node.key, bound))
            if not isinstance(key, ast.Constant):
                reject(node.key, "the keys of a dict comprehension must be known statically")
            keys.append(key)
            values.append(self.reads.fold(substitute(node.value, bound), whole=True))
        return unique_keys(keys, values)


def _pair_up(target, items: list[ast.expr], value: ast.expr) -> list[tuple[ast.expr, ast.expr]]:
    """Each target with its item; a starred target takes a list of the middle items."""
    elements = target.elts
    starred = [i for i, e in enumerate(elements) if isinstance(e, ast.Starred)]
    if len(starred) > 1:
        reject(target, "only one starred name per unpacking")
    if not starred:
        if len(items) != len(elements):
            reject(target, f"cannot unpack {len(items)} values into {len(elements)} names")
        return list(zip(elements, items, strict=True))
    star, after = starred[0], len(elements) - starred[0] - 1
    if len(items) < len(elements) - 1:
        reject(target, f"cannot unpack {len(items)} values into {len(elements) - 1} or more")
    middle = ast.List(items[star : len(items) - after], ast.Load())
    return [
        *zip(elements[:star], items[:star], strict=True),
        (elements[star].value, middle),
        *zip(elements[star + 1 :], items[len(items) - after :], strict=True),
    ]


def unique_keys(keys: list[ast.Constant], values: list[ast.expr]) -> ast.Dict:
    """A dict display where a repeated key keeps its last value, as in Python.

    >>> keys = [ast.Constant("a"), ast.Constant("a")]
    >>> ast.unparse(unique_keys(keys, [ast.Name("x"), ast.Name("y")]))
    "{'a': y}"
    """
    entries: dict = {}
    for key, value in zip(keys, values, strict=True):
        entries[key.value] = value
    return ast.Dict([ast.Constant(k) for k in entries], list(entries.values()))
