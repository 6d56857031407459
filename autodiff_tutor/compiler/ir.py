"""The compiler's intermediate form: one operation per statement.

Normalization turns the user's function into a :class:`Program`: a list of
:class:`Step` s, each assigning one operation to one name, and the names returned.
Every step remembers the user's node it came from (for comments and errors).

>>> import ast
>>> step = Step("t1", ast.parse("x * y", mode="eval").body, kind="primitive", op="multiply")
>>> step.source()
't1 = x * y'
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Step kinds:
#   primitive: an operation with a derivative rule (or a non-differentiable one)
#   copy:      'y = x' (a name or a constant)
#   static:    a value that never carries gradient (shapes, comparisons, constants)
#   op_call:   a call to a DifferentiableOp (custom op or compiled function)
#   opaque:    a call with no rule (fine while no gradient flows through it)
#   escape:    a call that leaves the differentiable world (float(x), x.item())
#   effect:    a statement kept for its side effect (print, assert, raise): it runs in
#              the forward, once, and never in the backward; its target is a placeholder
#   push, pop: 'stack.push(v)' (its target a placeholder) and 't = stack.pop()' of the
#              memory stack ``stack``, in a gradient function differentiated again; ``op``
#              says which stack: "values" (carries gradient) or "path" (never does)
KINDS = ("primitive", "copy", "static", "op_call", "opaque", "escape", "effect", "push", "pop")


@dataclass
class Step:
    """``target = value``: one operation, its operands atoms (names or constants)."""

    target: str | None
    value: ast.expr
    kind: str
    op: str | None = None
    inputs: dict[str, ast.expr] = field(default_factory=dict)  # rule input -> atom
    options: dict[str, ast.expr] = field(default_factory=dict)  # rule option -> expr
    origin: ast.AST | None = None  # the user's node (for locations and comments)
    callee: Any = None  # the resolved object of a call (custom op, unknown function)
    description: str = ""  # how the user wrote the operation ('np.tanh', 'x.sum')
    expression: ast.expr | None = None  # the user's sub-expression this step computes
    copy_back: bool = False  # assigns a region's canonical name at the end of a body
    synthetic: bool = False  # a copy the compiler made (not in the user's program)
    loops: tuple[int, ...] = ()  # the loops around the step (for the in-place write check)
    targets: list[str] | None = None  # several outputs (a call returning a tuple)
    refusal: Exception | None = None  # opaque: raised if a value it reads carries gradient
    statement: ast.stmt | None = None  # an effect's statement (its names renamed)
    stack: str | None = None  # push, pop, and Stack(): the stack's name
    augmented: bool = False  # y op= v on a name: numpy updates y's array in place

    def source(self) -> str:
        """The step as one line of Python."""
        if self.statement is not None:
            return ast.unparse(self.statement).splitlines()[0]
        if self.kind == "push":
            return ast.unparse(self.value)
        return f"{self.target} = {ast.unparse(self.value)}"

    def operand_names(self) -> set[str]:
        """Every name the step's value reads."""
        return {n.id for n in ast.walk(self.value) if isinstance(n, ast.Name)}

    def defined(self) -> list[str]:
        """The names this step assigns."""
        return list(self.targets) if self.targets else [self.target]

    def input_names(self) -> list[tuple[str, str]]:
        """(rule input, name) for each input that is a variable (sequences expanded)."""
        pairs = []
        for param, atom in self.inputs.items():
            for element in atom.elts if isinstance(atom, (ast.List, ast.Tuple)) else [atom]:
                if isinstance(element, ast.Name):
                    pairs.append((param, element.id))
        return pairs


@dataclass
class Branch:
    """``if test: body else: orelse``; ``canonical`` names are assigned in every path."""

    test: str  # a name holding the (static) condition
    body: list[Node]
    orelse: list[Node]
    canonical: list[str]
    origin: ast.AST | None = None


@dataclass
class Loop:
    """A ``for`` over a range (``index``, ``iterations``) or a ``while`` (``test``)."""

    kind: str  # "for" | "while"
    body: list[Node]
    canonical: list[str]  # names carried from one iteration to the next
    index: str | None = None  # for: the loop variable
    iterations: str | None = None  # for: a name holding the range
    test: ast.expr | None = None  # while: the condition, re-evaluated each time
    counter: str | None = None  # while: counts iterations for the backward pass
    origin: ast.AST | None = None


Node = Step | Branch | Loop


class ValueRefusal(Exception):
    """A value the compiler cannot differentiate: ``error`` is raised only when, for the
    ``wrt`` asked, a value it reads carries gradient (activity decides)."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


@dataclass
class StaticOperand:
    """An index or option kept whole; it must not depend on a differentiated value."""

    what: str  # 'an index', "'axis'"
    node: ast.AST  # the user's expression (for the error's location)
    reads: set[str]  # the names it reads that may carry gradient
    hint: str = "compute it from values you do not differentiate (shapes, integers)"


def walk_steps(nodes: list[Node]) -> list[Step]:
    """Every step in ``nodes``, including those inside branches and loops.

    >>> walk_steps([Branch("c", [Step("a", ast.Constant(1), "static")], [], ["a"])])[0].target
    'a'
    """
    steps: list[Step] = []
    for node in nodes:
        if isinstance(node, Step):
            steps.append(node)
        elif isinstance(node, Branch):
            steps += walk_steps(node.body) + walk_steps(node.orelse)
        else:
            steps += walk_steps(node.body)
    return steps


def expressions_in(nodes: list[Node]) -> list[tuple[ast.AST, Step | Loop]]:
    """Every expression ``nodes`` keep, with the step or loop that keeps it: each step's
    value and options, an effect's statement, a ``while`` loop's test. What the program
    keeps whole (a condition, a value no gradient flows through) is found here too.

    >>> test = ast.parse("n < 3", mode="eval").body
    >>> body = [Step("n", ast.parse("n + 1", mode="eval").body, "static")]
    >>> [ast.unparse(e) for e, _ in expressions_in([Loop("while", body, ["n"], test=test)])]
    ['n < 3', 'n + 1']
    """
    found: list[tuple[ast.AST, Step | Loop]] = []
    for node in nodes:
        if isinstance(node, Step):
            kept = [node.value, *node.options.values(), node.statement]
            found += [(expression, node) for expression in kept if expression is not None]
        elif isinstance(node, Branch):
            found += expressions_in(node.body) + expressions_in(node.orelse)
        else:
            found += [(node.test, node)] if node.test is not None else []
            found += expressions_in(node.body)
    return found


def regions_in(nodes: list[Node]) -> list[Branch | Loop]:
    """Every branch and loop in ``nodes``, nested ones included, outer ones first."""
    found: list[Branch | Loop] = []
    for node in nodes:
        if isinstance(node, Branch):
            found += [node, *regions_in(node.body), *regions_in(node.orelse)]
        elif isinstance(node, Loop):
            found += [node, *regions_in(node.body)]
    return found


def loops_in(nodes: list[Node]) -> list[Loop]:
    """Every loop in ``nodes``, nested ones included, outer ones first."""
    return [region for region in regions_in(nodes) if isinstance(region, Loop)]


def counted_loops(program: Program) -> list[Loop]:
    """The ``for`` loops at the top level of ``program`` whose index counts their
    iterations from 0: over ``range(n)`` (one argument), made once at the top level,
    the index bound by the loop header alone. Their indices differ from one iteration
    to the next and are never negative.

    >>> body = [Step("t2", ast.parse("x[i]", mode="eval").body, "primitive", "getitem")]
    >>> steps = [Step("t1", ast.parse("range(n)", mode="eval").body, "static"),
    ...          Loop("for", body, [], index="i", iterations="t1")]
    >>> [loop.iterations for loop in counted_loops(Program("f", ["x", "n"], {}, steps, [], False))]
    ['t1']
    """
    steps = program.all_steps()
    found = []
    for loop in program.steps:
        if not (isinstance(loop, Loop) and loop.kind == "for"):
            continue
        definitions = [s for s in steps if loop.iterations in s.defined()]
        if len(definitions) != 1 or definitions[0] not in program.steps:
            continue
        value = definitions[0].value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            continue
        if value.func.id != "range" or len(value.args) != 1 or value.keywords:
            continue
        if not any(loop.index in s.defined() for s in steps):
            found.append(loop)
    return found


@dataclass
class Program:
    """A normalized function: parameters, steps, and the names it returns."""

    name: str
    params: list[str]
    defaults: dict[str, Any]
    steps: list[Node]
    outputs: list[str]
    returns_tuple: bool
    origin_of_return: ast.AST | None = None
    namespace: dict[str, Any] = field(default_factory=dict)

    list_names: set[str] = field(default_factory=set)
    static_operands: list[StaticOperand] = field(default_factory=list)
    #: a function returning a dict returns the list of its values; these are the keys
    output_keys: tuple[str, ...] | None = None
    #: global ints whose values the code was compiled on (``range(N_LAYERS)`` over a
    #: structure, unrolled): guarded by value, see :mod:`.compiler.assumptions`
    static_globals: tuple[str, ...] = ()
    #: the name the user wrote for each version (``x_2`` -> ``x``) and each name the
    #: desugaring made from one (a generator's ``f`` renamed ``f_2`` -> ``f``)
    user_names: dict[str, str] = field(default_factory=dict)

    def user_name(self, name: str) -> str:
        """The name the user wrote for ``name``; any other name (a temporary) as it is.

        >>> program = Program("f", ["x"], {}, [], ["x"], False, user_names={"x_2": "x"})
        >>> program.user_name("x_2"), program.user_name("t1")
        ('x', 't1')
        """
        return self.user_names.get(name, name)

    def all_steps(self) -> list[Step]:
        """Every step, including those inside branches and loops."""
        return walk_steps(self.steps)

    def bindings(self) -> Counter[str]:
        """How many steps bind each name."""
        return Counter(t for s in self.all_steps() for t in s.defined())

    def defined_names(self) -> set[str]:
        """Parameters and every step target."""
        return set(self.params) | {t for s in self.all_steps() for t in s.defined()}

    def source(self) -> str:
        """The normalized program as Python source (the forward without memory).

        >>> Program("f", ["x"], {}, [], ["x"], False).source()
        'def f(x):\\n    return x'
        """
        body = _render(self.steps, "    ")
        body.append(f"    return {', '.join(self.outputs)}")
        return f"def {self.name}({', '.join(self.params)}):\n" + "\n".join(body)


def tuple_source(names: list[str]) -> str:
    """The source of a tuple of names; one name keeps its trailing comma.

    >>> tuple_source(["x"]), tuple_source(["x", "y"])
    ('(x,)', '(x, y)')
    """
    return f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"


def _render(nodes: list[Node], indent: str) -> list[str]:
    lines = []
    for node in nodes:
        if isinstance(node, Step):
            lines.append(indent + node.source())
        elif isinstance(node, Branch):
            lines.append(f"{indent}if {node.test}:")
            lines += _render(node.body, indent + "    ") or [indent + "    pass"]
            if node.orelse:
                lines.append(f"{indent}else:")
                lines += _render(node.orelse, indent + "    ")
        elif node.kind == "for":
            lines.append(f"{indent}for {node.index} in {node.iterations}:")
            lines += _render(node.body, indent + "    ") or [indent + "    pass"]
        else:
            lines.append(f"{indent}while {ast.unparse(node.test)}:")
            lines += _render(node.body, indent + "    ") or [indent + "    pass"]
    return lines
