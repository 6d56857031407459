"""Stage 5: build the backward statements (reverse mode), and then the forward.

The backward visits the active steps in reverse, inlines each rule's formula and
accumulates one gradient ``d_<name>`` per value; an input that does not reach the
output gets a zero gradient of its shape and dtype. Branches and loops are replayed
in reverse: a loop runs backwards over its iterations, popping from the tape what
each iteration pushed; a branch takes the path the forward took.

Once the backward is known, :mod:`~autodiff_tutor.compiler.primal` writes the
forward: only what is needed, pushing on the tape exactly what the backward reads.

>>> import numpy as np
>>> from autodiff_tutor.compiler.source import parse_function
>>> from autodiff_tutor.compiler.normalize import normalize
>>> from autodiff_tutor.compiler.activity import analyze
>>> def f(x):
...     return np.sum(np.exp(x))
>>> parsed = parse_function(f)
>>> program = normalize(parsed, ["x"])
>>> generated = build(program, analyze(program, parsed, ["x"]), parsed, ["x"])
>>> [line.code for line in generated.backward]
['d_t1 = unreduce(d_out, t1)', 'd_x = d_t1 * t1']
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from autodiff_tutor.compiler.activity import Activity
from autodiff_tutor.compiler.inline import inline, inline_all, is_none_gradient
from autodiff_tutor.compiler.ir import Branch, Loop, Node, Program, Step, tuple_source, walk_steps
from autodiff_tutor.compiler.optimize import fold
from autodiff_tutor.compiler.shapes import ShapeClasses
from autodiff_tutor.compiler.source import ParsedFunction
from autodiff_tutor.rules.registry import Rule, lookup


@dataclass
class Line:
    """One generated statement, its nesting depth, and the user's line it comes from."""

    code: str
    origin: str = ""  # e.g. "line 3: np.sum(h * h)"
    depth: int = 0


@dataclass
class Generated:
    """Forward and backward statements of one function, ready to emit."""

    name: str
    params: list[str]
    wrt: list[str]
    outputs: list[str]
    returns_tuple: bool
    forward: list[Line] = field(default_factory=list)
    backward: list[Line] = field(default_factory=list)
    memory: list[str] = field(default_factory=list)
    gradients: list[str] = field(default_factory=list)
    prefix: str = "d_"  # gradients are named prefix + value name
    shape_only: set[str] = field(default_factory=set)  # saved as like(t): shape and dtype

    @property
    def seeds(self) -> list[str]:
        """The backward's parameters: one output gradient per output."""
        return [f"{self.prefix}{name}" for name in self.outputs]


def build(
    program: Program,
    activity: Activity,
    parsed: ParsedFunction,
    wrt: list[str],
    in_place: bool = True,
) -> Generated:
    """Generate the forward and backward statements for gradients w.r.t. ``wrt``.

    ``in_place=False`` writes every accumulation as a new array: slower, but the
    backward is then itself differentiable (second derivatives compile it again).
    """
    from autodiff_tutor.compiler.primal import forward_lines, pushable

    generated = Generated(program.name, program.params, wrt, program.outputs, program.returns_tuple)
    backward = _Backward(program, activity, parsed, in_place)
    generated.prefix = backward.prefix
    backward.block(program.steps)
    for name in wrt:
        if name not in backward.has_adjoint:
            backward.emit(
                f"{backward.prefix}{name} = zeros_like({name})", f"{name} does not reach the output"
            )
    generated.gradients = [f"{backward.prefix}{name}" for name in wrt]
    lines = backward.lines
    if any(_reads_name(line.code, "xp") for line in lines):
        seed = generated.seeds[0]
        lines.insert(0, Line(f"xp = array_module({seed})", "the array module of the gradients"))
    generated.backward = lines
    read = {n for line in lines for n in names_read(line.code)}
    top = pushable(program.steps, params=program.params) | {"tape"}
    order = program.params + [n for s in program.all_steps() for n in _defined_with_saved(s)]
    loops = _loops(program.steps)
    order += [n for loop in loops for n in (loop.index, loop.counter) if n] + ["tape"]
    generated.memory = [n for n in dict.fromkeys(order) if n in read & top]
    if in_place:  # the functional form (second derivatives) keeps the values themselves
        generated.shape_only = shape_only_names(lines) - program.list_names
    generated.forward = forward_lines(
        program, parsed, set(generated.memory), backward.pushes, generated.shape_only
    )
    return generated


# Helpers that read one argument (by position) only for its shape and dtype.
SHAPE_READERS = {"unbroadcast": 1, "unreduce": 1, "cast_like": 1, "scatter": 1, "size": 0}


def shape_only_names(lines: list[Line]) -> set[str]:
    """Names the backward reads only for their shape and dtype: the forward saves
    ``like(t)`` for them instead of the whole array.

    >>> sorted(shape_only_names([Line("d_a = unbroadcast(d_t, t)"), Line("d_b = d_t * u")]))
    ['t']
    """
    shape_uses: set[str] = set()
    other_uses: set[str] = set()
    for line in lines:
        tree = _parse_line(line.code)
        if tree is None:
            continue
        positions = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                position = SHAPE_READERS.get(node.func.id)
                if position is not None and len(node.args) > position:
                    argument = node.args[position]
                    if isinstance(argument, ast.Name):
                        positions.add(id(argument))
                        shape_uses.add(argument.id)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if id(node) not in positions:
                    other_uses.add(node.id)
    return shape_uses - other_uses


def _defined_with_saved(step: Step) -> list[str]:
    names = step.defined()
    if step.kind == "op_call":
        names = [*names, f"{step.target}_saved"]
    return names


class _Backward:
    def __init__(
        self, program: Program, activity: Activity, parsed: ParsedFunction, in_place: bool
    ):
        self.in_place = in_place
        self.program = program
        self.activity = activity
        self.parsed = parsed
        self.lines: list[Line] = []
        self.has_adjoint: set[str] = set(program.outputs)
        self.origin = ""
        self.depth = 0
        self.pushes: dict[int, list[str]] = {}  # id(body list) -> names its iteration pushes
        self.prefix = gradient_prefix(program)
        self.owned: set[str] = set()  # gradients whose array only this backward holds
        self.shapes = ShapeClasses(program)

    def emit(self, code: str, origin: str | None = None) -> None:
        self.lines.append(Line(code, self.origin if origin is None else origin, self.depth))

    def contribute(self, name: str, expr: ast.expr) -> None:
        """Add ``expr`` to the gradient of ``name``.

        The first contribution assigns; the second makes a new array (the first may be
        another gradient's array); later ones add in place into that array, which only
        this gradient owns.
        """
        target = f"{self.prefix}{name}"
        if name in self.has_adjoint and name in self.owned:
            self.emit(f"{target} += {ast.unparse(expr)}")
            return
        if name in self.has_adjoint:
            current = ast.Name(target, ast.Load())
            if name in self.program.list_names:
                expr = ast.Call(ast.Name("add_lists", ast.Load()), [current, expr], [])
            else:
                expr = fold(ast.BinOp(current, ast.Add(), expr))
                if self.in_place:
                    self.owned.add(name)
        else:
            self.owned.discard(name)
        self.has_adjoint.add(name)
        self.emit(f"{target} = {ast.unparse(expr)}")

    def scatter_into(self, name: str, gradient: ast.expr, index: ast.expr) -> None:
        """The gradient of reading ``name[index]``: added in place into an owned buffer."""
        target = f"{self.prefix}{name}"
        if name in self.program.list_names or not self.in_place:
            at_index = ast.Subscript(ast.Name("at", ast.Load()), index, ast.Load())
            expr = ast.Call(ast.Name("scatter", ast.Load()), [gradient, _load(name), at_index], [])
            self.contribute(name, expr)
            return
        if name not in self.owned:
            if name in self.has_adjoint:  # a copy that this gradient owns from now on
                self.emit(f"{target} = {target}.copy()")
            else:
                self.emit(f"{target} = zeros_like({name})")
            self.owned.add(name)
            self.has_adjoint.add(name)
        if self._basic_index(index):  # no element twice: plain in-place addition
            place = ast.unparse(ast.Subscript(ast.Name(target, ast.Load()), index, ast.Load()))
            self.emit(f"{place} += {ast.unparse(gradient)}")
            return
        index_text = ast.unparse(ast.Subscript(ast.Name("at", ast.Load()), index, ast.Load()))
        self.emit(f"add_at({target}, {index_text}, {ast.unparse(gradient)})")

    def _basic_index(self, index: ast.expr) -> bool:
        """Whether an index is statically basic: ints, slices and loop counters only."""
        counters = {loop.index for loop in _loops(self.program.steps) if loop.index}
        for node in ast.walk(index):
            if isinstance(node, ast.Name) and node.id not in counters:
                return False
            if isinstance(node, ast.Constant) and not (
                node.value is None or node.value is Ellipsis or type(node.value) is int
            ):
                return False
            if isinstance(node, (ast.List, ast.Call, ast.Compare, ast.Subscript, ast.Attribute)):
                return False
        return True

    # -- blocks, branches, loops -----------------------------------------------------

    def block(self, nodes: list[Node]) -> None:
        for node in reversed(nodes):
            if isinstance(node, Step):
                active = set(node.defined()) & self.activity.active
                if node.kind == "static":
                    # a constant overwrote a value with gradient elsewhere (s = 1.0 in a
                    # loop): before this point, that name's gradient starts again from zero
                    self.has_adjoint -= active
                elif active:
                    self.step(node)
            elif isinstance(node, Branch):
                self.branch(node)
            else:
                self.loop(node)

    def _region_active(self, region: Branch | Loop) -> bool:
        inner = walk_steps(region.body + (region.orelse if isinstance(region, Branch) else []))
        return any(set(s.defined()) & self.activity.active for s in inner)

    def _zero_init(self, region: Branch | Loop) -> None:
        """Gradients the region adds to must exist before it (zeros where none yet)."""
        bodies = region.body + (region.orelse if isinstance(region, Branch) else [])
        inner = walk_steps(bodies)
        inside = {t for s in inner for t in s.defined()} - set(region.canonical)
        touched = set()
        for step in inner:
            if set(step.defined()) & self.activity.active:
                touched |= {n for _, n in step.input_names()} & self.activity.varied
                if step.kind == "copy":
                    touched.add(step.value.id)
        touched |= set(region.canonical) & self.activity.active
        for name in sorted(touched - inside - self.has_adjoint):
            self.emit(
                f"{self.prefix}{name} = zeros_like({name})",
                "gradient accumulated in the region below",
            )
            self.has_adjoint.add(name)
            if self.in_place and name not in self.program.list_names:
                self.owned.add(name)

    def _body(self, nodes: list[Node], pop: bool, origin: str, finish=None) -> list[Line]:
        """The reverse of a body, as lines; records what its forward must push."""
        outer_lines, self.lines = self.lines, []
        self.depth += 1
        self.block(nodes)
        if finish is not None:
            finish()
        body = self.lines
        if pop:
            from autodiff_tutor.compiler.primal import pushable

            read = {n for line in body for n in names_read(line.code)}
            pushed = [n for n in _ordered(nodes) if n in read & pushable(nodes)]
            if pushed:
                self.pushes[id(nodes)] = pushed
                body.insert(0, Line(f"{tuple_source(pushed)} = tape.pop()", origin, self.depth))
        self.depth -= 1
        self.lines = outer_lines
        return body or [Line("pass", "", self.depth + 1)]

    def branch(self, node: Branch) -> None:
        if not self._region_active(node):
            return
        self._zero_init(node)
        before, owned = set(self.has_adjoint), set(self.owned)
        self.origin = _node_origin(self.parsed, node.origin)
        origin = self.origin
        body = self._body(node.body, pop=True, origin=origin)
        owned_in_body, self.owned = self.owned, set(owned)
        self.has_adjoint = set(before)
        orelse = self._body(node.orelse, pop=True, origin=origin)
        self.has_adjoint = before
        self.owned = owned & owned_in_body & self.owned  # owned after either path
        self.emit(f"if {node.test}:", origin)
        self.lines += body
        if any(line.code != "pass" for line in orelse):
            self.emit("else:", origin)
            self.lines += orelse

    def loop(self, node: Loop) -> None:
        if not self._region_active(node):
            return
        self._zero_init(node)
        before = set(self.has_adjoint)
        # a gradient the body rebinds may hold another's array when the next iteration starts
        owned = set(self.owned)
        self.owned -= {n for s in walk_steps(node.body) for n in s.defined()} | set(node.canonical)
        self.origin = origin = _node_origin(self.parsed, node.origin)
        carried = [c for c in node.canonical if c in self.activity.active]

        def finish() -> None:  # each carried gradient must exist for the next iteration
            for name in carried:
                if name not in self.has_adjoint:
                    self.emit(f"{self.prefix}{name} = zeros_like({name})", origin)
                    self.has_adjoint.add(name)
                    if self.in_place and name not in self.program.list_names:
                        self.owned.add(name)

        body = self._body(node.body, pop=True, origin=origin, finish=finish)
        self.has_adjoint = before
        self.owned &= owned  # after zero iterations, or after any number
        if node.kind == "for":
            header = f"for {node.index} in reversed({node.iterations}):"
        else:
            header = f"for _ in range({node.counter}):"
        self.emit(header, origin)
        self.lines += body

    # -- one step --------------------------------------------------------------------

    def step(self, step: Step) -> None:
        self.origin = _origin(self.parsed, step)
        self.owned -= set(step.defined())  # read from now on: others may hold its array
        g = ast.Name(f"{self.prefix}{step.target}", ast.Load())
        if step.kind == "copy":
            self.contribute(step.value.id, g)
            if step.copy_back and self._in_loop_body(step):
                self.has_adjoint.discard(step.target)
        elif step.kind == "op_call":
            self._op_call(step)
        else:
            rule = lookup(step.op)
            if rule.sequence:
                self._sequence(step, rule, g)
            else:
                self._primitive(step, rule, g)

    def _in_loop_body(self, step: Step) -> bool:
        return step.target in self._loop_canonicals()

    def _loop_canonicals(self) -> set[str]:
        if not hasattr(self, "_canonicals"):
            loops = _loops(self.program.steps)
            self._canonicals = {c for loop in loops for c in loop.canonical}
        return self._canonicals

    def _is_varied(self, atom: ast.expr) -> bool:
        return isinstance(atom, ast.Name) and atom.id in self.activity.varied

    def _primitive(self, step: Step, rule: Rule, g: ast.Name) -> None:
        bindings = {
            "g": g,
            "out": ast.Name(step.target, ast.Load()),
            "xp": ast.Name("xp", ast.Load()),
        }
        bindings.update(step.inputs)
        bindings.update(step.options)
        if rule.op == "getitem" and self._is_varied(step.inputs["x"]):
            self.scatter_into(step.inputs["x"].id, g, step.options["index"])
            return
        contributions: dict[str, list[ast.expr]] = {}
        for index, param in enumerate(rule.inputs):
            atom = step.inputs[param]
            if not self._is_varied(atom) or is_none_gradient(rule, index):
                continue
            expr = fold(inline(rule, index, bindings))
            others = [a for p, a in step.inputs.items() if p != param]
            same_shape = all(
                isinstance(a, ast.Constant) or _same(a, atom) or self.shapes.same(a, atom)
                for a in others
            )
            if rule.broadcasting and not same_shape:
                expr = ast.Call(ast.Name("unbroadcast", ast.Load()), [expr, atom], [])
            contributions.setdefault(atom.id, []).append(expr)
        for name, exprs in contributions.items():
            if len(exprs) == 2 and _same(exprs[0], exprs[1]):  # x * x: one term, twice
                exprs = [ast.BinOp(ast.Constant(2), ast.Mult(), exprs[0])]
            total = exprs[0]
            for expr in exprs[1:]:
                total = ast.BinOp(total, ast.Add(), expr)
            self.contribute(name, total)

    def _sequence(self, step: Step, rule: Rule, g: ast.Name) -> None:
        param = rule.inputs[0]
        sequence = step.inputs[param]
        bindings = {"g": g, "xp": ast.Name("xp", ast.Load()), **step.inputs, **step.options}
        pieces = fold(inline_all(rule, bindings))
        if isinstance(sequence, ast.Name):  # a list variable: its gradient is a list
            self.contribute(sequence.id, pieces)
            return
        flags = [self._is_varied(e) for e in sequence.elts]
        targets = self._gradient_targets(sequence.elts, flags)
        trailing = "," if len(targets) == 1 else ""
        self.emit(f"{', '.join(targets)}{trailing} = {ast.unparse(pieces)}")
        self._collect(sequence.elts, targets)

    def _op_call(self, step: Step) -> None:
        args = step.value.args
        flags = tuple(self._is_varied(a) for a in args)
        seeds = [
            f"{self.prefix}{t}" if t in self.has_adjoint else f"zeros_like({t})"
            for t in step.defined()
        ]
        targets = self._gradient_targets(args, flags)
        op = ast.unparse(step.value.func)
        trailing = "," if len(targets) == 1 else ""
        call = f"{op}.op_backward({tuple_source(seeds)}, {flags!r}, {step.target}_saved)"
        self.emit(f"{', '.join(targets)}{trailing} = {call}")
        self._collect(args, targets)

    def _gradient_targets(self, atoms: list[ast.expr], flags) -> list[str]:
        """Names receiving one gradient per atom: ``d_x`` for a first gradient, else a part."""
        targets, seen = [], set()
        for i, (atom, flag) in enumerate(zip(atoms, flags, strict=True)):
            if not flag:
                targets.append("_")
            elif atom.id in self.has_adjoint or atom.id in seen:
                targets.append(f"{self.prefix}{atom.id}_part{i + 1}")
            else:
                targets.append(f"{self.prefix}{atom.id}")
                seen.add(atom.id)
        return targets

    def _collect(self, atoms: list[ast.expr], targets: list[str]) -> None:
        for atom, target in zip(atoms, targets, strict=True):
            if "_part" in target:
                self.contribute(atom.id, ast.Name(target, ast.Load()))
            elif target != "_":
                self.has_adjoint.add(atom.id)


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def gradient_prefix(program: Program) -> str:
    """``d_`` for gradient names, unless the program has names like that already
    (a generated gradient function being differentiated again)."""
    names = program.defined_names() | set(program.params)
    for prefix in ("d_", "dbar_", "adjoint_"):
        if not any(prefix + name in names for name in names):
            return prefix
    return "adjoint_of_"


def _loops(nodes: list[Node]) -> list[Loop]:
    found = []
    for node in nodes:
        if isinstance(node, Loop):
            found.append(node)
            found += _loops(node.body)
        elif isinstance(node, Branch):
            found += _loops(node.body) + _loops(node.orelse)
    return found


def _ordered(nodes: list[Node]) -> list[str]:
    """Names defined in ``nodes`` (and loop canonicals read there), in program order."""
    names: list[str] = []
    for node in nodes:
        if isinstance(node, Step):
            names += _defined_with_saved(node)
        else:
            names += list(node.canonical)
            if isinstance(node, Loop):
                names += [n for n in (node.index, node.counter) if n]
    for node in nodes:
        if isinstance(node, Step):
            names += sorted(node.operand_names())
    return list(dict.fromkeys(names))


def _origin(parsed: ParsedFunction, step: Step) -> str:
    """'line N: <what the user wrote>' for a generated statement's comment."""
    node = step.origin if step.origin is not None else parsed.tree
    text = parsed.line_text(node)
    if step.expression is not None:
        text = _short(step.expression)
    return f"line {parsed.file_line(node)}: {text}"


def _node_origin(parsed: ParsedFunction, node: ast.AST | None) -> str:
    node = node if node is not None else parsed.tree
    return f"line {parsed.file_line(node)}: {_short_statement(parsed.line_text(node))}"


def _short_statement(text: str, limit: int = 36) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(expr: ast.expr, limit: int = 36) -> str:
    text = ast.unparse(expr)
    if len(text) > limit and isinstance(expr, ast.Call):
        text = f"{ast.unparse(expr.func)}(...)"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _same(a: ast.expr, b: ast.expr) -> bool:
    return ast.dump(a) == ast.dump(b)


def names_read(code: str) -> set[str]:
    """Names a line of generated code reads (for memory and tape contents)."""
    tree = _parse_line(code)
    if tree is None:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _parse_line(code: str) -> ast.Module | None:
    """One generated line as a tree; a header ('if c:', 'for i in r:') gets a 'pass'."""
    source = code.strip()
    if source.endswith(":"):
        source += " pass"
    if source == "else: pass":
        return None  # reads nothing, and cannot stand alone
    return ast.parse(source)


def _reads_name(code: str, name: str) -> bool:
    return name in names_read(code)
