"""Stage 4, activity analysis — which values carry gradient to the output.

A value is *varied* when it depends differentiably on an input we differentiate
with respect to, and *useful* when the output depends on it. Only steps whose
result is both (*active*) get a backward statement, and only their varied inputs
get a gradient. This is also where a gradient that would silently vanish is
caught: a varied value flowing into a call without a rule, or out through
``float(x)``, is an error when the result reaches the output.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(x, y):
...     n = x.shape[0]
...     return np.sum(x * x) + n * y
>>> front = front_end(f)
>>> activity = analyze(front.program, front.parsed, ["x"])
>>> sorted(activity.active), sorted(activity.varied - activity.useful)
(['out', 't1', 't2', 'x'], [])
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.compiler.ir import Program
from autodiff_tutor.compiler.rule_inline import is_none_gradient
from autodiff_tutor.errors import (
    GradientEscapeError,
    NoDerivativeRuleError,
    UnsupportedSyntaxError,
)
from autodiff_tutor.pytree import is_user_class
from autodiff_tutor.rules.names import ufunc_method_hint
from autodiff_tutor.rules.registry import lookup

DIFFERENTIABLE_KINDS = ("primitive", "copy", "op_call")  # user calls become op_call


@dataclass
class Activity:
    """The result of the analysis: sets of names."""

    varied: set[str]
    useful: set[str]

    @property
    def active(self) -> set[str]:
        """Names that are both varied and useful: they get an adjoint."""
        return self.varied & self.useful

    def describe(self) -> str:
        """The sets, one per line, as the stages view shows them."""
        return "\n".join(
            f"{label}: {', '.join(sorted(names)) or '(none)'}"
            for label, names in (
                ("active (varied and useful)", self.active),
                ("varied only", self.varied - self.useful),
                ("useful only", self.useful - self.varied),
            )
        )


def analyze(program: Program, parsed: ParsedFunction, wrt: list[str] | None = None) -> Activity:
    """Compute varied and useful names; reject gradients that would silently vanish."""
    steps = program.all_steps()
    varied = varied_names(steps, wrt if wrt is not None else program.params)
    # gradients flow back only through differentiable steps, to their inputs (a static
    # step such as ones_like(out) or x > 0 reads a value but passes no gradient to it)
    useful = closure(set(program.outputs), steps, _gradient_edges_backward)
    # a value that reaches the output in any way: where a dropped gradient matters
    reaches = closure(
        set(program.outputs), steps, lambda step: (set(step.defined()), step.operand_names())
    )
    for step in steps:
        if step.target in reaches and step.kind in ("opaque", "escape"):
            carried = sorted(_reads(step) & varied)
            if carried and step.refusal is not None:
                raise step.refusal  # a construct refused where it carries gradient
            if carried:
                _raise_dropped_gradient(step, carried, parsed, program)
    for operand in program.static_operands:
        if operand.reads & varied:
            raise UnsupportedSyntaxError(
                f"{operand.what} must not depend on a differentiated value",
                parsed.location(operand.node),
                hint=operand.hint,
            )
    return Activity(varied, useful)


def varied_names(steps: list, wrt: list[str]) -> set[str]:
    """The names that depend differentiably on ``wrt`` (the forward half of the analysis).

    >>> from autodiff_tutor.compiler.pipeline import front_end
    >>> def f(x, y):
    ...     return x * 2.0 + y
    >>> program = front_end(f).program
    >>> sorted(varied_names(program.all_steps(), ["x"]))
    ['out', 't1', 'x']
    """
    return closure(set(wrt), steps, _gradient_edges_forward)


def closure(start: set[str], steps: list, edges) -> set[str]:
    """Grow ``start`` to a fixpoint: where a step's sources (``edges(step)``: sources,
    targets) meet it, add the step's targets. One pass is not enough: loops carry
    values back to earlier steps.

    >>> import ast
    >>> from autodiff_tutor.compiler.ir import Step
    >>> steps = [Step("b", ast.Name("a"), "copy"), Step("a", ast.Name("c"), "copy")]
    >>> sorted(closure({"c"}, steps, lambda s: (s.operand_names(), set(s.defined()))))
    ['a', 'b', 'c']
    """
    found = set(start)
    changed = True
    while changed:
        changed = False
        for step in steps:
            sources, targets = edges(step)
            if sources & found and not targets <= found:
                found |= targets
                changed = True
    return found


def _gradient_edges_forward(step) -> tuple[set[str], set[str]]:
    if step.kind in ("push", "pop") and step.op == "values":  # through the memory stack
        if step.kind == "push":
            return _reads(step), {step.stack}
        return {step.stack}, set(step.defined())
    if step.kind not in DIFFERENTIABLE_KINDS:
        return set(), set()
    return _reads(step), set(step.defined())


def _gradient_edges_backward(step) -> tuple[set[str], set[str]]:
    sources, targets = _gradient_edges_forward(step)
    return targets, sources


def _reads(step) -> set[str]:
    """The names a step passes gradient to (not shape-only inputs, like unbroadcast's x)."""
    if step.kind == "copy":
        return step.operand_names()
    if step.kind == "push":
        return {name for _, name in step.input_names()}
    rule = lookup(step.op) if step.kind == "primitive" else None
    if rule is None:
        return {name for _, name in step.input_names()}
    return {
        name
        for param, name in step.input_names()
        if not is_none_gradient(rule, rule.inputs.index(param))
    }


def _raise_dropped_gradient(
    step, carried: list[str], parsed: ParsedFunction, program: Program
) -> None:
    what = step.description or "this call"
    users = sorted({program.user_name(n) for n in carried if not re.fullmatch(r"t\d+", n)})
    names = ", ".join(repr(n) for n in users)  # the user's names, not versions
    node = step.expression or step.origin
    location = parsed.location(node) if node is not None else None
    if step.kind == "escape":
        raise GradientEscapeError(
            f"{what} turns {names or 'a value that carries gradient'} into a plain value, "
            "so its gradient would be lost "
            "and the result would be silently wrong",
            location,
            hint="np.stack([...]) makes one array of a list that carries gradient; if you "
            "mean to cut the gradient here, call stop_gradient(...) explicitly"
            if what.rsplit(".", 1)[-1] in ("array", "asarray", "asanyarray", "ascontiguousarray")
            else "keep it an array; if you mean to cut the gradient here, "
            "call stop_gradient(...) explicitly",
        )
    hint = (
        "use a numpy function with a rule, write a DifferentiableFunction with "
        "a backward, or cut the gradient with stop_gradient(...)"
    )
    ufunc_method = re.fullmatch(r"np\.(\w+)\.(reduce|accumulate|reduceat|outer)", what)
    if ufunc_method is not None:  # np.add.reduce: np.sum, when there is a function form
        hint = ufunc_method_hint(*ufunc_method.groups())
    if is_user_class(step.callee):  # Gaussian(mu, s): an object of a class of yours built
        hint = (
            f"an object of {step.callee.__name__} built here is followed where it is built "
            f"once, at the function's top level (g = {step.callee.__name__}(...), then "
            "g.method(...)), not in a loop or on a side of if/else, and/or; or build it "
            "outside the differentiated function and pass it as an argument"
        )
    if "random" in what:
        hint = (
            "a random draw has no derivative with respect to its parameters; "
            "reparameterize: mu + sigma * np.random.standard_normal(shape)"
        )
    raise NoDerivativeRuleError(
        f"no derivative rule for {what}, which is called on {names or 'a value'} that carries "
        "gradient",
        location,
        hint=hint,
    )
