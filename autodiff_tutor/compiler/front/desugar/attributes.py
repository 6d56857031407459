"""Writes into the attributes of the method's object, kept for their effect: a
benchmark class counting its evaluations (``self.nfev += 1``), a model keeping a
history (``self.history.append(self.calls)``).

The object reaches the compiler as the structure of its attributes (``self.nfev`` is
the leaf ``self_nfev``, see :mod:`autodiff_tutor.api.arguments`); when the
function writes into one, the object itself is passed too (``self_object``), and the
write becomes a call the compiled forward makes for its effect, once per call, as
Python does: ``store_attribute(self_object, "nfev", self_nfev_1)``. No gradient goes
through the object: the value written must not depend on a differentiated value
(activity checks it, for the ``wrt`` asked). Reads of the attribute after the write
read the value written, as in Python: at the top level of the function the
structure's entry becomes the name holding it; an attribute written inside a loop or
a branch is held in a variable from before that loop or branch. An item appended to
a list attribute is appended to the object's list; reading that list afterwards is
refused where its entries are not followed (a list passed as one value).

Part of :mod:`.front.desugar.structures`, whose pass holds it as ``attribute_writes``:
it reads the pass's state, and calls its other parts, through ``self.structures``.

>>> import ast
>>> from autodiff_tutor.compiler.code import Names
>>> from autodiff_tutor.compiler.front.desugar.structures import Structures
>>> tree = ast.parse('''
... def fun(self, x):
...     self.nfev += 1
...     return x * self.nfev
... ''').body[0]
>>> literal = ast.parse("{'nfev': self_nfev}", mode="eval").body
>>> literal.is_object, literal.holder = True, "self_object"
>>> names = Names(ast.Module([tree, ast.Expr(literal)], []))  # the leaves' names taken
>>> body = Structures(names, {"self": literal}).run(tree.body)
>>> print(ast.unparse(ast.Module(body, [])))
self_nfev_1 = self_nfev + 1
store_attribute(self_object, 'nfev', self_nfev_1, True)
return x * self_nfev_1
"""

from __future__ import annotations

import ast
import inspect
import types
from typing import Any

from autodiff_tutor.compiler.front.desugar.base import (
    assign_like,
    augmented_value,
    name_node,
    reject,
)
from autodiff_tutor.syntax import copy_tree

#: the runtime helpers the writes become (see :mod:`autodiff_tutor.runtime`)
STORE, APPEND = "store_attribute", "append_to_attribute"
DISPLAYS = (ast.List, ast.Tuple, ast.Dict, ast.Set)
#: methods that change a list or dict in place
MUTATING = {"append", "extend", "insert", "pop", "remove", "update", "clear", "setdefault"}


class AttributeWrites:
    """``self.x = v``, ``self.x += v`` and ``self.xs.append(v)`` on an object whose
    attributes the function writes (its literal names the parameter holding it)."""

    def __init__(self, structures: Any) -> None:
        self.structures = structures  # the pass it is part of: its state, its other parts
        # the variables holding attributes written in loops and branches, and the list
        # attributes appended to whose items are not followed
        self.carried: set[str] = set()
        self.changed_lists: dict[tuple[str, str], ast.stmt] = {}

    def holder(self, name: str) -> str | None:
        """The parameter passing the object ``name`` itself, when it is written."""
        literal = self.structures.env.get(name)
        return getattr(literal, "holder", None) if getattr(literal, "is_object", False) else None

    def statement(self, node: ast.stmt) -> list[ast.stmt] | None:
        """The statements for a write into an attribute, else ``None``."""
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            return self._attribute_call(node, node.value)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AugAssign):
            target, value = node.target, augmented_value(node)
        else:
            return None
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
            return None
        holder = self.holder(target.value.id)
        if holder is None:
            return None
        return self._write_attribute(target, value, node, holder)

    def _write_attribute(
        self, target: ast.Attribute, value: ast.expr, at: ast.stmt, holder: str
    ) -> list[ast.stmt]:
        obj, attr = target.value.id, target.attr
        self.refuse_setter(target)
        folded = self._read(value)
        if isinstance(folded, DISPLAYS):
            reject(
                target,
                f"this sets {obj}.{attr} to a list, tuple or dict: the compiled code keeps "
                "an attribute's write for its effect only when it is a value (a number, "
                "an array)",
                f"set {obj}.{attr} to that structure after the gradient, outside the "
                "differentiated method",
            )
        literal = self.structures.env[obj]
        keys = [k.value for k in literal.keys]
        if self.structures.depth:
            entry = literal.values[keys.index(attr)]  # a variable: see carry
            statements, leaf = [assign_like(entry.id, folded, at)], name_node(entry.id)
        else:
            statements, leaf = self.structures.hold(folded, f"{obj}_{attr}", at)
            self.structures.set_entry(obj, attr, leaf)
        augmented = ast.Constant(isinstance(at, ast.AugAssign))
        args = [name_node(holder), ast.Constant(attr), copy_tree(leaf), augmented]
        return [*statements, _effect(STORE, args, at, f"{obj}.{attr}", target)]

    def _attribute_call(self, node: ast.Expr, call: ast.Call) -> list[ast.stmt] | None:
        """``self.history.append(v)``: appended to the object's list."""
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Attribute)
            and isinstance(func.value.value, ast.Name)
            and func.attr in MUTATING
        ):
            return None
        obj, attr = func.value.value.id, func.value.attr
        holder = self.holder(obj)
        if holder is None:
            return None
        if func.attr != "append" or len(call.args) != 1 or call.keywords or self.structures.depth:
            reject(
                call,
                f"this changes the attribute {obj}.{attr} of the object in place: the "
                "compiled code keeps, for its effect, an append at the top level of the "
                "method, and writes self.x = value anywhere",
                f"append at the top level of the method, or assign a new value "
                f"({obj}.{attr} = ...)",
            )
        keys = [k.value for k in self.structures.env[obj].keys]
        if attr not in keys:
            reject(func.value, f"{obj}.{attr} is not an attribute of the object")
        item = self._read(call.args[0])
        if isinstance(item, DISPLAYS):
            reject(call.args[0], "the compiled code appends a value (a number, an array) here")
        statements, leaf = self.structures.hold(item, f"{obj}_{attr}_item", node)
        entry = self.structures.env[obj].values[keys.index(attr)]
        if isinstance(entry, ast.List):  # its items are followed: the list grows here too
            grown = ast.List([*entry.elts, copy_tree(leaf)], ast.Load())
            self.structures.set_entry(obj, attr, grown)
        else:
            self.changed_lists[(obj, attr)] = node  # one value: reads of it after are refused
        args = [name_node(holder), ast.Constant(attr), copy_tree(leaf)]
        return [*statements, _effect(APPEND, args, node, f"{obj}.{attr}", call)]

    def _read(self, value: ast.expr) -> ast.expr:
        """The value written, with its reads of structures and attributes resolved."""
        reads = self.structures.reads
        return reads.fold(reads.attributes(value), whole=True)

    def carry(self, region: ast.stmt) -> list[ast.stmt]:
        """Before a loop or branch that is not unrolled: each attribute written inside
        it held in a variable (``self_nfev_2 = self_nfev``), which its writes reassign
        and its reads read, there and after."""
        out: list[ast.stmt] = []
        for node in ast.walk(region):
            targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
            for target in targets:
                if not (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and isinstance(target.ctx, ast.Store)
                    and self.holder(target.value.id) is not None
                ):
                    continue
                obj, attr = target.value.id, target.attr
                self.refuse_setter(target)
                literal = self.structures.env[obj]
                keys = [k.value for k in literal.keys]
                if attr not in keys:
                    reject(
                        target,
                        f"this sets a new attribute {obj}.{attr} inside a loop or a branch",
                        f"give {obj}.{attr} a value in __init__, or before the loop or branch",
                    )
                entry = literal.values[keys.index(attr)]
                if isinstance(entry, ast.Name) and entry.id in self.carried:
                    continue  # held already, by an enclosing loop or branch
                if isinstance(entry, DISPLAYS):
                    reject(
                        target,
                        f"{obj}.{attr} holds a structure and is set inside a loop or a branch",
                        f"set {obj}.{attr} once, outside loops and branches",
                    )
                variable = self.structures.names.fresh(f"{obj}_{attr}")
                self.carried.add(variable)
                out.append(assign_like(variable, copy_tree(entry), region))
                self.structures.set_entry(obj, attr, name_node(variable))
        return out

    def refuse_setter(self, target: ast.Attribute) -> None:
        """A write into an attribute the object's class defines as a property (or any
        descriptor that sets): Python runs its setter, which stores elsewhere
        (``self._w``), so reads after it see what the setter stored, not the value
        written; the compiled code keeps writes to the object's own attributes only."""
        obj, attr = target.value.id, target.attr
        cls = getattr(self.structures.env[obj], "cls", None)
        raw = inspect.getattr_static(cls, attr, None) if cls is not None else None
        if raw is None or not hasattr(type(raw), "__set__"):
            return
        if isinstance(raw, types.MemberDescriptorType):  # a __slots__ entry: stored as is
            return
        kind = "a property" if isinstance(raw, property) else "a descriptor"
        if isinstance(raw, property) and raw.fset is None:
            reject(
                target,
                f"this sets {obj}.{attr}, which {cls.__name__} defines as a property "
                "without a setter: Python raises AttributeError here",
                f"Python raises here too: give {cls.__name__}.{attr} a setter, or set "
                "the attribute the property reads",
            )
        reject(
            target,
            f"this sets {obj}.{attr}, which {cls.__name__} defines as {kind}: Python runs "
            "its setter, which the compiled code does not follow (it keeps writes to the "
            "object's own attributes)",
            f"write what the setter of {cls.__name__}.{attr} does in place of this "
            f"assignment (set the attributes it stores), or set {obj}.{attr} outside "
            "the differentiated method",
        )

    def refuse_changed_list(self, attribute: ast.Attribute) -> None:
        """A read of a list attribute appended to before, whose items are not followed."""
        key = (attribute.value.id, attribute.attr)
        if key in self.changed_lists:
            line = getattr(self.changed_lists[key], "lineno", "?")
            reject(
                attribute,
                f"{key[0]}.{key[1]} is read after the append of line {line}, which the "
                "compiled forward makes for its effect: this read would not see it",
                f"keep the values in a local list and read that, or read {key[0]}.{key[1]} "
                "before appending",
            )


def _effect(helper: str, args: list[ast.expr], at: ast.stmt, what: str, where: ast.AST):
    """The statement the compiled forward runs for the write; ``written`` names the
    attribute and ``written_value`` is where the user wrote it (``self.cache`` of
    ``self.cache = z``: the error's caret, if the value carries gradient)."""
    statement = ast.copy_location(ast.Expr(ast.Call(name_node(helper), args, [])), at)
    statement.written = what
    statement.written_value = where
    return statement
