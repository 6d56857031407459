"""Normalization of a write into an array that other names share: they all see it.

In numpy several names can see one array: an alias (``z = y``) or a view (``v = y.T``,
``y[1:]``, ``y.reshape(-1)``), and a write through any of them (``z += 1``,
``v[0] = 2``) changes what all of them hold. The compiler makes every write a new
version of the written array (``z_2 = z + 1``, like JAX's ``y.at[i].set(v)``); then,
as PyTorch's *functionalization* does, it gives the others new versions too:

- upwards, the written view is put back into the array it was taken from
  (``y_2 = assign_at(y, at[1:], v_2)``, ``y_2 = v_2.T``, ``y_2 = v_2.reshape(y.shape)``,
  ``y_2 = np.flip(v_2)``, ``y_2 = np.rot90(v_2, -k)``); a view numpy makes read-only
  (``np.diag`` of a matrix; of a vector it is a new array) passes no write up;
- downwards, every view still in use is taken again from the new array (``v_2 = y_2.T``).

Whether numpy returned a view or a copy can depend on the memory layout
(``y.reshape(-1)`` copies a transposed ``y``; ``y[0]`` of a 1-D ``y`` is a scalar
copy; ``z += 1`` makes a new object when ``z`` is a number). So each update runs only
when ``shares_memory(v, y)`` says so, a test computed once per pair at run time. The
compiled arrays have the user's layouts, except after ``z += v`` (compiled
``z_2 = z + v``: numpy lays a new array out as it likes), and what is computed from
it: a reshape of those (``layout_unsure``) is left to the final check.

Arrays without gradient take part too: their steps keep the user's expression whole,
and an alias or a single view of one (``c.T``, ``c[1:]``, ``np.reshape(c, ...)``) is
read as the primitive it is.

Left to the final check of :mod:`front.normalize.writes` (refused when a stale name is
read): writes inside loops, arrays shared through lists or branches, views that cannot
be put back (``np.transpose(y, axes)``, ``broadcast_to``, a view of a view in one
expression without gradient, ``c.T[0]``), and writes reaching a parameter (the
caller's array, refused as in PyTorch and JAX).

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.aliases``.
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.front.normalize.sharing import read_only, view_base
from autodiff_tutor.compiler.ir import Branch, Step
from autodiff_tutor.rules.registry import lookup, views
from autodiff_tutor.syntax import copy_tree

# views whose array is the view reshaped back (same elements, same order)
RESHAPES = views("reshape")
# views that give their array back when taken again (y = np.flip(v) of v = np.flip(y))
SELF_INVERSE = {"swapaxes", "flip", "fliplr", "flipud"}
# views without gradient put back as the primitive they are, with their options
# (``np.flip(c, 1)``, ``np.rot90(c, 2)``)
STATIC_WITH_OPTIONS = {"flip", "fliplr", "flipud", "rot90"}


class Aliases(Part):
    """Tracks which value is a view of which, and spreads each write to the others."""

    def note_view(self, step: Step) -> None:
        """Remember that ``step``'s result may be a view (or an alias) of its operand."""
        if (
            self.normalizer.loop_stack
            or step.synthetic
            or step.targets
            or step.kind not in ("primitive", "copy", "static")
        ):
            return
        base = view_base(step, self.normalizer.writes.is_module)
        if base is None or base in self.normalizer.list_names or base == step.target:
            return
        if step.kind == "static" and not _is_alias(step):
            step = _static_view(step, base)  # without gradient: the user's call as it is
            if step is None:
                return  # not one that can be put back: the final check decides
        self.normalizer.view_of[step.target] = (base, step)

    def spread_write(self, old: str, new: str, node: ast.AST) -> None:
        """``new`` is ``old`` after a write: give every name sharing it a new version."""
        if self.normalizer.loop_stack:
            return  # the final check decides (a loop body is lowered once)
        up, version = [], old
        while version in self.normalizer.view_of:
            base, step = self.normalizer.view_of[version]
            if read_only(step):
                break  # a write through it is its own (numpy's view refuses writes)
            if not _can_put_back(step):
                return  # the final check refuses it if a stale name is read
            up.append((version, base, step))
            version = base
        root = version
        if root in self.normalizer.params or self._made_by_call(root):
            return  # the caller's array, or one a call may share: refused by the checks
        members = [
            v
            for v in dict.fromkeys(self.normalizer.current.values())
            if v != old and root in self._bases(v)
        ]
        if not up and not members:
            return
        down = [
            (v, *self.normalizer.view_of[v]) for m in members for v in [*self._between(m, root), m]
        ]
        for _, base, step in up + down:
            if _layout_decides(step) and base in self.normalizer.layout_unsure:
                # numpy's view-or-copy depends on a layout the compiled code may not have
                self.normalizer.layout_blocked[old] = self.normalizer.layout_unsure[base]
                return
        renamed = {old: new}
        for version, base, step in up:
            test = self._shares_test(version, base, node)
            value = self._put_back(step, base, renamed[version])
            renamed[base] = self._guarded(test, value, base, node)
            self._relate(renamed[version], renamed[base], _retaken(step, base, renamed[base]), test)
        for member in members:
            for version in [*reversed(self._between(member, root)), member]:
                if version in renamed:
                    continue
                base, step = self.normalizer.view_of[version]
                test = self._shares_test(version, base, node)
                value = _retaken(step, base, renamed[base])
                renamed[version] = self._guarded(test, value, version, node)
                self._relate(renamed[version], renamed[base], value, test)
        for name, version in list(self.normalizer.current.items()):
            if version in renamed:
                self.normalizer.current[name] = renamed[version]

    def _relate(self, view: str, base: str, step: Step, test: str) -> None:
        """``view`` is ``step`` of ``base`` (after a write); whether it shares ``base``'s
        memory is what ``test`` said of the versions before (the compiled arrays may not
        share memory: ``y_2 = assign_at(y, at[1:], v_2)`` is a new array)."""
        self.normalizer.view_of[view] = (base, step)
        self.normalizer.shares_tests[(view, base)] = test

    def _made_by_call(self, version: str) -> bool:
        """Whether ``version`` comes from a call the compiler cannot see into."""
        return any(
            version in step.defined() and step.kind in ("opaque", "op_call", "escape")
            for step in self.normalizer.emitted
        )

    def _between(self, version: str, root: str) -> list[str]:
        """The arrays ``version`` was taken from below ``root``, nearest first (``root``
        is where a write stops going up: the array it started from, or a read-only view
        such as ``np.diag(t)``, whose writes are its own)."""
        chain = self._bases(version)
        return chain[: chain.index(root)]

    def _bases(self, version: str) -> list[str]:
        """The arrays ``version`` was taken from, nearest first, ending at its root."""
        chain = []
        while version in self.normalizer.view_of:
            version = self.normalizer.view_of[version][0]
            chain.append(version)
        return chain

    def _shares_test(self, view: str, base: str, node: ast.AST) -> str:
        """The name of ``shares_memory(view, base)``: inherited by the versions a write
        made, else computed once per pair of the user's and block (a test computed in
        one branch is not there in the other)."""
        if (view, base) in self.normalizer.shares_tests:
            return self.normalizer.shares_tests[(view, base)]
        key = (view, base, id(self.normalizer.steps))
        if key not in self.normalizer.shares_tests:
            call = ast.Call(ast.Name("shares_memory", ast.Load()), [_name(view), _name(base)], [])
            step = Step(None, call, "static", op="shares_memory")
            self.normalizer.shares_tests[key] = self._synthetic(step, node)
        return self.normalizer.shares_tests[key]

    def _guarded(self, test: str, value: Step, old: str, node: ast.AST) -> str:
        """``new = value if test else old``, as a branch; returns ``new``'s name."""
        variable = self.normalizer.variable_of.get(old)
        target = self.normalizer.version_name(variable) if variable else self.normalizer.fresh()
        outer, self.normalizer.steps = self.normalizer.steps, []
        if value.kind == "copy":  # an alias: the new version is the same array
            source = value.value.id
        else:
            source = self._synthetic(value, node)
        body, self.normalizer.steps = self.normalizer.steps, outer
        self.normalizer.flow.copy_back(body, target, source, node)
        orelse: list = []
        self.normalizer.flow.copy_back(orelse, target, old, node)
        self.normalizer.steps.append(Branch(test, body, orelse, [target], node))
        self.normalizer.spread_versions.add(target)
        return target

    def _synthetic(self, step: Step, node: ast.AST) -> str:
        """Emit a step the compiler adds (not a read of the user's, for the final check)."""
        name = self.normalizer.emit(step, node if isinstance(node, ast.expr) else None).id
        step.synthetic = True
        return name

    @staticmethod
    def _put_back(step: Step, base: str, view: str) -> Step:
        """The step computing ``base`` with the written ``view`` put back where ``step``
        took it from."""
        if _is_alias(step) or step.op == "copy":  # an alias; np.asarray(y) is y itself
            return Step(None, _name(view), "copy")
        if step.op == "getitem":
            index = copy_tree(step.options["index"])
            at = ast.Subscript(_name("at"), index, ast.Load())
            call = ast.Call(_name("assign_at"), [_name(base), at, _name(view)], [])
            inputs = {"x": _name(base), "value": _name(view)}
            return Step(
                None, call, "primitive", op="setitem", inputs=inputs, options={"index": index}
            )
        if step.op in SELF_INVERSE or (step.op == "transpose" and "axes" not in step.options):
            return _retaken(step, base, view)  # its own inverse

        def of_view(call: ast.Call, op: str, options: dict[str, ast.expr]) -> Step:
            return Step(None, call, "primitive", op=op, inputs={"x": _name(view)}, options=options)

        if step.op == "transpose":  # v = y.transpose(axes): y = v.transpose(inverse_axes(axes))
            axes = ast.Call(_name("inverse_axes"), [copy_tree(step.options["axes"])], [])
            call = ast.Call(ast.Attribute(_name(view), "transpose", ast.Load()), [axes], [])
            return of_view(call, "transpose", {"axes": axes})
        if step.op == "rot90":  # v = np.rot90(y, k, axes): y = np.rot90(v, -k, axes)
            turns = copy_tree(step.options.get("k", ast.Constant(1)))
            back = {**step.options, "k": ast.UnaryOp(ast.USub(), turns)}
            back = {k: copy_tree(v) for k, v in back.items()}
            keywords = [ast.keyword(k, v) for k, v in back.items()]
            call = ast.Call(copy_tree(step.value.func), [_name(view)], keywords)
            return of_view(call, "rot90", back)
        if step.op == "moveaxis":  # moved back: destination to source
            back = {"source": step.options["destination"], "destination": step.options["source"]}
            back = {k: copy_tree(v) for k, v in back.items()}
            moved = [_name(view), back["source"], back["destination"]]
            return of_view(ast.Call(copy_tree(step.value.func), moved, []), "moveaxis", back)
        shape = ast.Attribute(_name(base), "shape", ast.Load())
        call = ast.Call(ast.Attribute(_name(view), "reshape", ast.Load()), [shape], [])
        return of_view(call, "reshape", {"shape": shape})


def _static_view(step: Step, base: str) -> Step | None:
    """The view ``step`` (a step without gradient, the user's expression as it is) as
    the primitive it is, for the spread of writes: ``c[1:]``, ``c.T``, ``np.transpose(c)``,
    ``c.reshape(-1)``, ``np.reshape(c, (-1,))``... (``None`` for other views, and views
    of views such as ``c.T[0]``: the final check decides).

    >>> call = ast.parse("np.reshape(c, (-1,))").body[0].value
    >>> view = _static_view(Step("v", call, "static"), "c")
    >>> view.op, ast.unparse(view.inputs["x"])
    ('reshape', 'c')
    """
    value, x = step.value, _name(base)
    if isinstance(value, (ast.Subscript, ast.Attribute)):
        if not (isinstance(value.value, ast.Name) and value.value.id == base):
            return None
        if isinstance(value, ast.Subscript):
            return Step(step.target, value, "static", "getitem", {"x": x}, {"index": value.slice})
        return Step(step.target, value, "static", "transpose", {"x": x})  # c.T
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    receiver = value.func.value
    if isinstance(receiver, ast.Name) and receiver.id == base:  # c.reshape(-1)
        rest = value.args
    elif value.args and isinstance(value.args[0], ast.Name) and value.args[0].id == base:
        rest = value.args[1:]  # np.reshape(c, (-1,))
    else:
        return None
    op = value.func.attr
    if op == "transpose" and not rest and not value.keywords:
        return Step(step.target, value, "static", "transpose", {"x": x})
    if op in STATIC_WITH_OPTIONS:
        options = _bound_options(op, rest, value.keywords)
        if options is None:
            return None
        return Step(step.target, value, "static", op, {"x": x}, options)
    return Step(step.target, value, "static", op, {"x": x}) if op in RESHAPES else None


def _bound_options(op: str, given: list[ast.expr], keywords: list[ast.keyword]) -> dict | None:
    """The options of a call of ``op`` after its array (``np.rot90(c, 2)``: ``k``), by
    the names its rule gives them; ``None`` for an argument the rule does not name.

    >>> call = ast.parse("np.rot90(c, 2, axes=(1, 0))").body[0].value
    >>> options = _bound_options("rot90", call.args[1:], call.keywords)
    >>> {name: ast.unparse(value) for name, value in options.items()}
    {'k': '2', 'axes': '(1, 0)'}
    """
    names = list(lookup(op).options)
    if len(given) > len(names) or any(k.arg not in names for k in keywords):
        return None
    return {**dict(zip(names, given, strict=False)), **{k.arg: k.value for k in keywords}}


def _is_alias(step: Step) -> bool:
    """``z = y``: a copy of a name, or the same without gradient (a static step)."""
    return step.kind == "copy" or (step.kind == "static" and isinstance(step.value, ast.Name))


def _layout_decides(step: Step) -> bool:
    """Whether numpy's choice of a view or a copy for ``step`` depends on the memory
    layout of its operand (``reshape`` and ``ravel`` copy a transposed array)."""
    return step.op in ("reshape", "ravel")


def _can_put_back(step: Step) -> bool:
    """Whether a write into ``step``'s result can be put back into its operand."""
    return (
        _is_alias(step)
        or step.op in ("copy", "getitem", "transpose", "rot90")
        or step.op in SELF_INVERSE
        or step.op in RESHAPES
        or (step.op == "moveaxis" and {"source", "destination"} <= step.options.keys())
    )


def _retaken(step: Step, base: str, new_base: str) -> Step:
    """``step`` again, taking its view of ``new_base`` instead of ``base``."""
    if _is_alias(step):
        return Step(None, _name(new_base), "copy")

    def renamed(node: ast.expr) -> ast.expr:
        node = copy_tree(node)
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id == base:
                child.id = new_base
        return node

    again = Step(None, renamed(step.value), "primitive", op=step.op)
    again.inputs = {k: renamed(v) for k, v in step.inputs.items()}
    again.options = {k: renamed(v) for k, v in step.options.items()}
    again.description = step.description
    return again


def _name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())
