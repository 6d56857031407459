"""Normalization of in-place writes: ``y[i] = v``, ``ys.append(v)``, ``z += v``, and
``ys[k] += v`` (the array a list's entry holds, written in place).

Each write becomes a new version of the array or list (``y_2 = assign_at(y, at[i],
v)``), which is exact when no other name sees the old array: writes into parameters
are rejected, and views or aliases of a written array may not be read afterwards.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.writes``.
"""

from __future__ import annotations

import ast
import types

from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.front.normalize.resolve import is_user_function
from autodiff_tutor.compiler.front.normalize.sharing import (
    item_position,
    known_items,
    list_items,
    list_read,
    list_source,
    memory_edges,
)
from autodiff_tutor.compiler.ir import Branch, Loop, StaticOperand, Step
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.syntax import copy_tree

_AUG_SYMBOL = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
}


class Writes(Part):
    """Array writes and list appends as new versions; checks that they are exact."""

    def setitem(self, target: ast.Subscript, value: ast.expr) -> None:
        """``y[i] = v`` becomes ``y_2 = assign_at(y, at[i], v)``: a new version of y."""
        name = target.value.id
        key = target.slice
        if (
            name in self.normalizer.params
            and self.normalizer.current.get(name) == name
            and _string(key)
        ):
            return self._store_entry(target, value)
        # params = [W, b]; params[0] = v
        is_list = self.normalizer.current.get(name) in self.normalizer.list_names
        if is_list and isinstance(target.slice, (ast.Slice, ast.Tuple)):
            self.normalizer.reject(
                target.slice,
                f"a slice write into the list {name!r} is not supported",
                f"write its items one by one ({name}[0] = ...), or build a new list",
            )
        item = self.normalizer.atom(value)  # the right side is read before the write
        index = self.normalizer.calls.static_operand(target.slice, "an index")
        fix = f"{name} = list({name})" if is_list else f"{name} = {name}.copy()"
        what = getattr(target, "described_as", f"{name}[...] = ...")  # np.fill_diagonal(a, v)
        self._check_unshared(name, target, what, fix)
        base = ast.Name(self.normalizer.current[name], ast.Load())
        at_index = ast.Subscript(ast.Name("at", ast.Load()), index, ast.Load())
        call = ast.Call(ast.Name("assign_at", ast.Load()), [base, at_index, item], [])
        version = self.normalizer.version_name(name)
        if is_list:  # a new version of the list (list_result: it is a list name)
            op, inputs = "list_setitem", {"xs": base, "x": item}
        else:
            op, inputs = "setitem", {"x": base, "value": item}
        self.normalizer.calls.primitive(version, call, op, [], {"index": index}, target, inputs)
        self.normalizer.current[name] = version
        # views and aliases see the write
        self.normalizer.aliases.spread_write(base.id, version, target)

    def _store_entry(self, target: ast.Subscript, value: ast.expr) -> None:
        """``state["k"] = v`` into a dict parameter (``bn_param["running_mean"] = ...``):
        run in the forward for its effect, as Python does (the caller sees the entry
        changed), with no gradient through the dict; reading the parameter after the
        write is refused where the write is made (see :mod:`.front.desugar.structures`)."""
        item = self.normalizer.atom(value)
        holder = ast.Name(target.value.id, ast.Load())
        key = ast.Constant(target.slice.value)
        call = ast.Call(ast.Name("store_entry", ast.Load()), [holder, key, item], [])
        self._effect(call, holder, item, target, target)

    def kept_write(self, node: ast.Expr) -> None:
        """A write into an attribute of the method's object (``store_attribute(
        self_object, "nfev", v)``, see :mod:`.front.desugar.attributes`): run in the
        forward for its effect; the value written must not carry gradient, which
        activity checks for the ``wrt`` asked."""
        call = node.value
        holder, key, value, *flags = call.args
        item = self.normalizer.atom(value)
        if isinstance(item, ast.Name) and item.id in self.normalizer.may_carry:
            what = f"the value written into {node.written}"
            hint = (
                f"{node.written} gets no gradient: the compiled forward writes it for its "
                "effect, and a gradient through the object would be lost; keep a "
                "differentiated value in a local variable (a cache of the forward pass is "
                "what the generated code keeps for you), or write it after the gradient"
            )
            self.normalizer.static_operands.append(
                StaticOperand(what, node.written_value, {item.id}, hint)
            )
        holder = self.normalizer.rename(holder)
        stored = ast.Call(call.func, [holder, key, item, *flags], [])
        self._effect(stored, holder, item, node, node.value)

    def _effect(self, call: ast.Call, holder: ast.expr, item: ast.expr, at, node) -> None:
        """``call`` made in the forward for its effect, reading the object or dict it
        writes into (``holder``) and the value it writes."""
        statement = ast.copy_location(ast.Expr(call), at)
        reads = [copy_tree(holder)] + ([item] if isinstance(item, ast.Name) else [])
        step = Step(self.normalizer.fresh("effect"), ast.Tuple(reads, ast.Load()), "effect")
        step.statement = statement
        self.normalizer.emit(step, node)

    def append(self, call: ast.Call) -> None:
        """``ys.append(v)`` becomes ``ys_2 = ys + [v]``: a new version of the list."""
        name = call.func.value.id
        if self.normalizer.current.get(name) not in self.normalizer.list_names:
            self.normalizer.reject(
                call, f"{name!r} is not a list built in this function", "start it with []"
            )
        item = self.normalizer.atom(call.args[0])
        self._check_unshared(name, call, f"{name}.append(...)", f"{name} = list({name})")
        base = ast.Name(self.normalizer.current[name], ast.Load())
        value = ast.BinOp(base, ast.Add(), ast.List([item], ast.Load()))
        version = self.normalizer.version_name(name)
        self.normalizer.calls.primitive(
            version, value, "list_append", [], {}, call, {"xs": base, "x": item}
        )
        self.normalizer.list_names.add(version)
        self.normalizer.current[name] = version

    def check_in_place(self, node: ast.AugAssign) -> None:
        """``z += v`` writes into z's array; compiled as ``z = z + v`` when that is exact."""
        written = _written(node)  # z, or d["k"] where z holds a structure's entry
        symbol = _AUG_SYMBOL.get(type(node.op), "?")
        self._check_unshared(
            node.target.id,
            node,
            f"{written} {symbol}= ...",
            f"write '{written} = {written} {symbol} ...'",
        )

    def entry_in_place(self, node: ast.AugAssign) -> None:
        """``ys[k] op= v`` on a list: Python runs ``entry = ys[k]; entry op= v; ys[k] =
        entry``. An array entry changes in place, so every name sharing its memory sees
        the write (as with ``a op= v``); a number gives a new one. Either way the list
        then holds the result.

        Compiled so: the entry read from the list, written as ``a op= v`` is (a new
        version, spread to the names that share the array, checked at the end) and
        stored back into the list by a write of the compiler's (the list is the object
        the user holds: reading it afterwards reads the written entry). Where the list's
        items are known here (written out, or appended outside loops) the entry is that
        item, so the write reaches the names it shares memory with. A check in the
        forward refuses a list whose other items share the entry's memory: numpy would
        change them too, and the compiled list keeps them as they were.
        """
        normalizer = self.normalizer
        target = node.target
        name = target.value.id
        if isinstance(target.slice, (ast.Slice, ast.Tuple)):
            normalizer.reject(
                target.slice,
                f"an augmented assignment to a slice of the list {name!r} is not supported",
                f"write its items one by one ({name}[0] += ...), or build a new list",
            )
        written, symbol = _written(node), _AUG_SYMBOL.get(type(node.op), "?")
        listed = normalizer.current[name]
        index = normalizer.calls.static_operand(target.slice, "an index")
        self._check_alone(listed, index, node, f"{written} {symbol}= ...")
        items = known_items(listed, normalizer.emitted)
        read = ast.Subscript(ast.Name(name, ast.Load()), copy_tree(target.slice), ast.Load())
        entry = normalizer.expressions.lower(ast.copy_location(read, target), normalizer.fresh())
        normalizer.resolver.locals.add(entry.id)  # a value of this function, not a global
        position = None if items is None else item_position(index, len(items))
        item = items[position] if position is not None else None
        held = item.id if isinstance(item, ast.Name) else None
        if entry.id in normalizer.list_names or held in normalizer.list_names:
            normalizer.reject(
                node,
                f"'{written} {symbol}= ...' changes the list {written} holds in place (every "
                "name holding that list sees it), which the compiler does not follow here",
                "append to that list by a name of its own (inner.append(v), with inner "
                f"the list put in {name}), or build the lists with their items written out",
            )
        if position is not None:  # the item itself: its own name, or a number
            normalizer.list_entries[entry.id] = (listed, held)
            if held is not None and not normalizer.loop_stack:
                normalizer.view_of[entry.id] = (held, Step(entry.id, ast.Name(held), "copy"))
        right = normalizer.atom(node.value)  # read after the entry, as Python does
        self._check_unshared(
            name,
            node,
            f"{written} {symbol}= ...",
            f"write '{written} = {written} {symbol} ...'",
            version=entry.id,
            holder=listed,
        )
        value = ast.copy_location(ast.BinOp(entry, node.op, right), node)
        result = normalizer.expressions.lower(value, normalizer.fresh())
        if not isinstance(node.value, ast.Constant):  # rows[k] + 1.0 keeps its layout
            normalizer.layout_unsure[result.id] = node
        normalizer.aliases.spread_write(entry.id, result.id, node)
        base = ast.Name(normalizer.current[name], ast.Load())
        at_index = ast.Subscript(ast.Name("at", ast.Load()), copy_tree(index), ast.Load())
        call = ast.Call(ast.Name("assign_at", ast.Load()), [base, at_index, result], [])
        version = normalizer.version_name(name)
        inputs = {"xs": base, "x": result}
        options = {"index": copy_tree(index)}
        normalizer.calls.primitive(version, call, "list_setitem", [], options, target, inputs)
        normalizer.emitted[-1].synthetic = True  # the same list: not a read of a stale one
        normalizer.list_names.add(version)
        normalizer.current[name] = version

    def _check_alone(self, listed: str, index: ast.expr, node: ast.AugAssign, what: str) -> None:
        """``entry_alone(ys, k, ...)``, run in the forward for its effect: refuses a list
        whose other items share memory with ``ys[k]`` (the user's words for the refusal)."""
        words = [ast.Constant(node.target.value.id), ast.Constant(what)]
        operands = [ast.Name(listed, ast.Load()), copy_tree(index), *words]
        check = ast.Call(ast.Name("entry_alone", ast.Load()), operands, [])
        names = sorted({n.id for n in ast.walk(index) if isinstance(n, ast.Name)} - {listed})
        reads = [ast.Name(listed, ast.Load()), *(ast.Name(n, ast.Load()) for n in names)]
        step = Step(self.normalizer.fresh("effect"), ast.Tuple(reads, ast.Load()), "effect")
        step.statement = ast.copy_location(ast.Expr(check), node)
        self.normalizer.emit(step)

    def _check_unshared(
        self,
        name: str,
        node: ast.AST,
        what: str,
        fix: str,
        version: str | None = None,
        holder: str | None = None,
    ) -> None:
        """An in-place write is compiled as a new version of the array: exact only when
        no other name that sees the old array is read afterwards (Python would show
        them the change).

        Rejected at once: parameters (the caller's array) and arrays returned by calls
        the compiler cannot see into. Views and aliases (``r = y``, ``x[1:]``, ``x.T``)
        are rejected only when one of them is read after the write (checked at the end).
        ``version``: the array written, where it is not ``name``'s current version (the
        entry of the list ``holder``, whose later versions hold the written entry).
        """
        version = version or self.normalizer.current.get(name)
        if version is None and name in self.normalizer.resolver.namespace:
            self.normalizer.reject(  # STATS["calls"] += 1 of a module-level dict
                node,
                f"this changes {name!r} in place, a value the function reads from outside "
                "(a global or a closure variable): the compiled code does not make writes "
                "into values it does not own",
                f"keep the count or record in an attribute of the method's object "
                f"(self.calls += 1 runs for its effect), or update {name} outside the "
                "differentiated function",
            )
        if version is None:
            self.normalizer.reject(node, f"{name!r} is not defined yet", "")
        family = self._same_array(version)
        problem = bool(family & set(self.normalizer.params))
        for step in self.normalizer.emitted:  # made by a call we cannot see into: may alias
            if set(step.defined()) & family and step.kind in ("opaque", "op_call", "escape"):
                problem = problem or list_source(step.value) is None  # list(t): a new list
        if problem:
            self._in_place_error(node, what, fix)
        loops = set(self.normalizer.loop_stack)
        self.normalizer.pending_writes.append(
            (len(self.normalizer.emitted), version, node, what, fix, loops, holder)
        )
        # r += v may change what an earlier rows[1] read: read it again
        self.normalizer.computed.clear()

    def _in_place_error(
        self,
        node: ast.AST,
        what: str,
        fix: str,
        seen_by: str = "",
        element: str = "",
        layout: ast.AugAssign | None = None,
        listed: bool = False,
        reads: ast.expr | None = None,
        parameter: str = "",
    ) -> None:
        later = f", and {seen_by!r} shares it and is read after the write" if seen_by else ""
        hint = f"make a copy first ({fix}), or build a new array"
        if parameter:  # ys[k] += v, the entry may be the parameter's array
            hint = (
                f"copy {parameter!r} where the function starts ({parameter} = "
                f"{parameter}.copy()) if the write should change it (the compiled code "
                f"never writes into the caller's array), or {fix} if no other name should "
                "see the write"
            )
        if seen_by:  # a copy keeps what seen_by holds: say how to change it instead
            into = "the arrays it holds" if listed else "it"
            hint = (
                f"make a copy first ({fix}) if {seen_by!r} should keep its values; if it "
                f"should see the write, write into {into} directly (by name and index)"
            )
        if layout is not None:  # the spread was given up (front.normalize.aliases)
            name, symbol = _written(layout), _AUG_SYMBOL.get(type(layout.op), "?")
            line = self.normalizer.parsed.location(layout).line
            later = (
                f", and {seen_by!r} is read after the write: whether it shares the array in "
                f"numpy depends on the memory layout that '{name} {symbol}= ...' (line {line}) "
                "leaves, which the compiled code cannot follow"
            )
            hint = (
                f"write '{name} {symbol}= ...' on line {line} as '{name} = {name} {symbol} ...' "
                "(a new array, laid out as numpy lays it out), or copy what you read before "
                "the write"
            )
        if _is_swap(node, reads):  # y[0], y[2] = y[2], y[0]: the right side reads y
            name = node.value.id
            hint = (
                f"a swap reads the array it writes: write it with lists of indices, "
                f"{name}[[i, j]] = {name}[[j, i]] (the right side is then a copy), or build "
                "a new array"
            )
        if element:  # y[0]: a view of a 2-D y, a copy of one element of a 1-D y
            later = (
                f", and {seen_by!r} may share it (an element read is a view unless it is a "
                "single number) and is read after the write"
            )
            hint = f"copy what you read ({seen_by} = {element}.copy()) or the array ({fix})"
        self.normalizer.reject(
            node,
            f"'{what}' would change, in place, an array that other names share "
            f"(a parameter, an alias or a view){later}",
            hint,
        )

    def check_writes(self) -> None:
        """Views and aliases of a written array must not be read after the write.

        In a loop that writes, a read earlier in the body is also after the write (of the
        previous iteration), unless the body made that view afresh before reading it.
        """
        definer = {}
        for position, step in enumerate(self.normalizer.emitted):
            for name in step.defined():
                definer.setdefault(name, []).append((position, step))
        for index, version, node, what, fix, loops, holder in self.normalizer.pending_writes:
            family = self._same_array(version)
            related = self._sharing(family, index, loops)
            parameters = sorted(related & set(self.normalizer.params))
            if parameters:  # an entry (ys[k] += v, d["k"] += v) may be the parameter's array
                parameter = parameters[0] if _entry_written(node) else ""
                self._in_place_error(node, what, fix, parameter=parameter)
            # the list the entry is in holds the written entry from the write on (its
            # other items share none of its memory: checked in the forward)
            exempt = self._same_array(holder) if holder else set()
            watched = related - family - exempt
            for position, step in enumerate(self.normalizer.emitted):
                if step.synthetic:
                    continue
                for name in step.operand_names() & watched:
                    if position == index:
                        stale = False  # the write itself reads the values before it
                    elif position > index:
                        fresh = self.normalizer.spread_versions
                        stale = not _made_between(name, index, position, definer, fresh)
                    else:
                        stale = self._stale_in_loop(name, position, step, loops, definer)
                    if stale:
                        variable = self.normalizer.user_name(name)  # not its version
                        reads = _held_expression(name, definer)  # a temporary's: x[i - 1]
                        seen_by = variable if reads is None else ast.unparse(reads)
                        element = _element(name, definer, variable)
                        layout = self.normalizer.layout_blocked.get(version)
                        listed = name in self.normalizer.list_names
                        self._in_place_error(
                            node, what, fix, seen_by, element, layout, listed, reads
                        )

    def _sharing(self, family: set[str], index: int, loops: set) -> set[str]:
        """Names that see the memory of the written array when the write happens: made
        before the write, or anywhere in a loop around it (the next iteration's write)."""
        related = set(family)
        # ys[i] = v, ys.append(v): the list object
        list_write = bool(family & self.normalizer.list_names)
        held = {} if list_write else self._held_items()
        values = {n for step in self.normalizer.emitted for n in step.defined()} | set(
            self.normalizer.params
        )
        fresh = self._made_afresh(family, index) if list_write else set()
        changed = True
        while changed:
            changed = False
            for position, step in enumerate(self.normalizer.emitted):
                if self._same_variable_copy(step) or not (
                    position < index or set(step.loops) & loops
                ):
                    continue
                if position > index and _innermost_shared(step.loops, loops) in fresh:
                    continue  # an earlier iteration's list: this one writes a new list
                if list_write and list_read(step, self.normalizer.list_names):
                    continue  # list(ys), old = ys[0]: a slot write leaves them as they were
                edges = memory_edges(
                    step,
                    self.normalizer.list_names,
                    self.is_module,
                    self._entry_held(step, held),
                    values,
                    self._is_helper,
                )
                for seer, seen in edges:
                    if seen in related and seer not in related:
                        related |= self._same_array(seer)
                        changed = True
        return related

    def _made_afresh(self, family: set[str], index: int) -> set[int]:
        """The loops whose every iteration makes the written list anew before the write
        (``cols = []`` directly in the loop's body, not in a branch or an inner loop):
        what a later step of an earlier iteration holds is another list."""
        made = {
            id(step)
            for step in self.normalizer.emitted[:index]
            if not step.synthetic
            and isinstance(step.value, ast.List)
            and set(step.defined()) & family
        }
        loops: set[int] = set()

        def visit(nodes: list, loop: int | None) -> None:
            for node in nodes:
                if isinstance(node, Loop):
                    visit(node.body, id(node.origin))
                elif isinstance(node, Branch):
                    visit(node.body, None)
                    visit(node.orelse, None)
                elif loop is not None and id(node) in made:
                    loops.add(loop)

        visit(self.normalizer.steps, None)
        return loops

    @staticmethod
    def _stale_in_loop(name: str, position: int, reader: Step, loops: set, definer: dict) -> bool:
        shared = set(reader.loops) & loops
        if not shared:
            return False
        fresh = [
            p
            for p, step in definer.get(name, [])
            if p < position and not step.synthetic and shared <= set(step.loops)
        ]
        return not fresh

    def _entry_held(self, step: Step, held: dict[str, set[str]]) -> dict[str, set[str]]:
        """``held``, where ``step`` reads a list's entry whose item is known here
        (``ys[k] op= v``): the list holds that item alone, as far as the read goes."""
        entry = self.normalizer.list_entries.get(step.target)
        if entry is None:
            return held
        listed, item = entry
        return {**held, listed: {item} if item is not None else set()}

    def _held_items(self) -> dict[str, set[str]]:
        """Each list version -> the arrays it holds (its own items and its earlier
        versions'; a copy of a list holds the same)."""
        held: dict[str, set[str]] = {}
        for step in self.normalizer.emitted:
            lists = self.normalizer.list_names
            items = list_items(step, self.is_module, self._is_helper, lists)
            if items is not None:  # and what the lists among them hold (ys + [v], list(ys))
                before = set().union(*(held.get(item, set()) for item in items))
                held.update(dict.fromkeys(step.defined(), before | set(items)))
            elif isinstance(step.value, ast.Name) and step.value.id in held:  # a copy
                for target in step.defined():
                    held.setdefault(target, set()).update(held[step.value.id])
        return held

    def _is_helper(self, name: str) -> bool:
        """Whether ``name`` is a function of the user's (called without gradient, it is
        not inlined: it may return its arguments or views of them)."""
        if not self.normalizer.resolver.is_global(name):
            return False
        try:
            return is_user_function(self.normalizer.resolver.evaluate(ast.Name(name, ast.Load())))
        except UnsupportedSyntaxError:
            return False

    def is_module(self, name: str) -> bool:
        """Whether ``name`` (in a step without gradient) is a module, not an array."""
        resolver = self.normalizer.resolver
        version = self.normalizer.current.get(name, name)
        if version in resolver.module_locals or version in resolver.module_values:
            return True
        if not resolver.is_global(name):
            return False
        try:
            return isinstance(resolver.evaluate(ast.Name(name, ast.Load())), types.ModuleType)
        except UnsupportedSyntaxError:
            return False

    def _same_variable_copy(self, step: Step) -> bool:
        """A copy the compiler made between two versions of one user variable (a loop's
        copy-in or copy-back): the same object, as the user sees it."""
        if not (step.synthetic and isinstance(step.value, ast.Name)):
            return False
        variable = self.normalizer.variable_of.get(step.target)
        return variable is not None and variable == self.normalizer.variable_of.get(step.value.id)

    def _same_array(self, version: str) -> set[str]:
        """``version`` and the other versions of the same object: those the compiler's own
        copies tie to it, and for a list, its versions before and after each append."""
        family = {version}
        changed = True
        while changed:
            changed = False
            for step in self.normalizer.emitted:
                if self._same_variable_copy(step):
                    pair = {step.target, step.value.id}
                elif step.op in ("list_append", "list_setitem"):  # the list object itself
                    pair = {step.target, step.inputs["xs"].id}
                else:
                    continue
                if pair & family and not pair <= family:
                    family |= pair
                    changed = True
        return family


def _written(node: ast.AugAssign) -> str:
    """What ``node`` writes, as the user wrote it: ``z``, ``rows[1]``, or ``d["k"]`` for
    the name holding a structure's entry (see :mod:`.front.desugar.structures`).

    >>> _written(ast.parse("d['k'] += 1").body[0])
    'd["k"]'
    """
    text = getattr(node, "described_as", None) or ast.unparse(node.target)
    return text.replace("'", '"') if '"' not in text else text


def _entry_written(node: ast.AST) -> bool:
    """Whether ``node`` writes an entry of a list or a structure in place
    (``ys[k] += v``, ``d["k"] += v``)."""
    return isinstance(node, ast.AugAssign) and (
        isinstance(node.target, ast.Subscript) or hasattr(node, "described_as")
    )


def _innermost_shared(inner: tuple[int, ...], loops: set[int]) -> int | None:
    """The innermost of the loops ``inner`` (outermost first) that are in ``loops``."""
    shared = [loop for loop in inner if loop in loops]
    return shared[-1] if shared else None


def _made_between(name: str, start: int, end: int, definer: dict, fresh: set[str]) -> bool:
    """Whether ``name`` was made afresh after the write and before the read: by the
    user's code (a view taken after a write sees the written array, as the compiled code
    does), as a version that a write gave its views and aliases (``fresh``), or as the
    compiler's copy (a branch's or loop's join) of names all made afresh so."""
    steps = [(p, step) for p, step in definer.get(name, []) if start <= p < end]
    if any(not step.synthetic or name in fresh for _, step in steps):
        return True
    return bool(steps) and all(
        isinstance(step.value, ast.Name)
        and step.value.id != name
        and _made_between(step.value.id, start, p, definer, fresh)
        for p, step in steps
    )


def _held_expression(name: str, definer: dict) -> ast.expr | None:
    """The user's expression a temporary holds (``x[i - 1]``); ``None`` for a name."""
    steps = [step for _, step in definer.get(name, []) if step.expression is not None]
    if name.startswith("t") and name[1:].isdigit() and steps:
        return steps[0].expression
    return None


def _element(name: str, definer: dict, variable: str) -> str:
    """The user's ``y[i]`` or ``y[i, j]`` if ``name`` was read so (integers only: a view
    of ``y`` or a copy of one number, depending on ``y``'s dimensions), else ``""``."""
    steps = [step for _, step in definer.get(name, [])]
    if len(steps) != 1 or steps[0].op != "getitem" or steps[0].expression is None:
        return ""
    if getattr(steps[0].expression, "loop_item", False):  # for v in y: v itself
        return variable
    index = steps[0].options["index"]
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if any(isinstance(p, (ast.Slice, ast.Starred)) or _is_none(p) for p in parts):
        return ""
    return ast.unparse(steps[0].expression)


def _is_swap(target: ast.AST, reads: ast.expr | None) -> bool:
    """Whether the write into ``target`` (``y[0]``) is seen by a tuple of reads of the
    same array (``(y[2], y[0])``): a swap, ``y[0], y[2] = y[2], y[0]``.

    >>> _is_swap(ast.parse("y[0]").body[0].value, ast.parse("(y[2], y[0])").body[0].value)
    True
    """
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return False
    return isinstance(reads, ast.Tuple) and all(
        isinstance(e, ast.Subscript)
        and isinstance(e.value, ast.Name)
        and e.value.id == target.value.id
        for e in reads.elts
    )


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in (None, Ellipsis)


def _string(key: ast.expr) -> bool:
    """A key written as a string: the subscripted value is a dict (arrays take no
    string index)."""
    return isinstance(key, ast.Constant) and isinstance(key.value, str)
