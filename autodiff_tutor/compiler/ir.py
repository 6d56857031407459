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
from dataclasses import dataclass, field
from typing import Any

# Step kinds:
#   primitive: an operation with a derivative rule (or a non-differentiable one)
#   copy:      'y = x' (a name or a constant)
#   static:    a value that never carries gradient (shapes, comparisons, constants)
#   op_call:   a call to a DifferentiableOp (custom op or compiled function)
#   opaque:    a call with no rule (fine while no gradient flows through it)
#   escape:    a call that leaves the differentiable world (float(x), x.item())
KINDS = ("primitive", "copy", "static", "op_call", "opaque", "escape")


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

    def source(self) -> str:
        """The step as one line of Python."""
        return f"{self.target} = {ast.unparse(self.value)}"

    def operand_names(self) -> set[str]:
        """Every name the step's value reads."""
        return {n.id for n in ast.walk(self.value) if isinstance(n, ast.Name)}

    def input_names(self) -> list[tuple[str, str]]:
        """(rule input, name) for each input that is a variable (sequences expanded)."""
        pairs = []
        for param, atom in self.inputs.items():
            for element in atom.elts if isinstance(atom, (ast.List, ast.Tuple)) else [atom]:
                if isinstance(element, ast.Name):
                    pairs.append((param, element.id))
        return pairs


@dataclass
class Program:
    """A normalized function: parameters, steps, and the names it returns."""

    name: str
    params: list[str]
    defaults: dict[str, Any]
    steps: list[Step]
    outputs: list[str]
    returns_tuple: bool
    origin_of_return: ast.AST | None = None
    namespace: dict[str, Any] = field(default_factory=dict)

    def defined_names(self) -> set[str]:
        """Parameters and every step target."""
        return set(self.params) | {s.target for s in self.steps}

    def source(self) -> str:
        """The normalized program as Python source (the forward without memory).

        >>> Program("f", ["x"], {}, [], ["x"], False).source()
        'def f(x):\\n    return x'
        """
        body = [f"    {s.source()}" for s in self.steps]
        returned = ", ".join(self.outputs)
        body.append(f"    return {returned}")
        return f"def {self.name}({', '.join(self.params)}):\n" + "\n".join(body)
