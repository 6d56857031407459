"""The compiler pipeline, stage by stage:
``source -> fence -> normalize -> activity -> reverse -> optimize -> emit``.

>>> import numpy as np
>>> def f(x):
...     return np.sum(np.sin(x))
>>> derivative = compile_derivative(f, wrt=("x",))
>>> out, memory = derivative.forward(np.zeros(3))
>>> derivative.backward(1.0, memory)[0].tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from autodiff_tutor.compiler.activity import Activity, analyze
from autodiff_tutor.compiler.emit import (
    compile_functions,
    compile_sources,
    helper_names,
    render_body,
)
from autodiff_tutor.compiler.fence import check_supported
from autodiff_tutor.compiler.forward_mode import build_jvp, render_jvp
from autodiff_tutor.compiler.ir import Program
from autodiff_tutor.compiler.normalize import normalize
from autodiff_tutor.compiler.resolve import MODULE_FACTORIES
from autodiff_tutor.compiler.reverse import Generated, Line, build, names_read
from autodiff_tutor.compiler.source import ParsedFunction, parse_function
from autodiff_tutor.errors import UnsupportedSyntaxError


@dataclass
class Derivative:
    """A compiled forward/backward pair for one choice of ``wrt``."""

    name: str
    wrt: tuple[str, ...]
    forward: Callable[..., Any]
    backward: Callable[..., Any]
    forward_source: str
    backward_source: str
    program: Program
    activity: Activity
    generated: Generated
    parsed: ParsedFunction

    @functools.cached_property
    def wrt_positions(self) -> tuple[int, ...]:
        """The positions of the ``wrt`` parameters."""
        return tuple(self.program.params.index(name) for name in self.wrt)

    @property
    def num_outputs(self) -> int:
        return len(self.generated.outputs)

    @property
    def returns_tuple(self) -> bool:
        return self.generated.returns_tuple


def compile_derivative(fn: Callable[..., Any], wrt: Sequence[str]) -> Derivative:
    """Run every stage on ``fn`` for gradients with respect to the parameters ``wrt``."""
    parsed, program, activity = _front_end(fn, wrt)
    generated = build(program, activity, parsed, list(wrt))
    _avoid_helper_clashes(generated, program, parsed)
    forward, backward, forward_src, backward_src = compile_functions(generated, parsed.fn)
    return Derivative(
        parsed.name,
        tuple(wrt),
        forward,
        backward,
        forward_src,
        backward_src,
        program,
        activity,
        generated,
        parsed,
    )


@dataclass
class TangentFunction:
    """A compiled forward-mode (JVP) function for one choice of ``wrt``."""

    name: str
    wrt: tuple[str, ...]
    function: Callable[..., Any]
    source: str
    returns_tuple: bool


def compile_tangent(fn: Callable[..., Any], wrt: Sequence[str]) -> TangentFunction:
    """The forward-mode pipeline: source, fence, normalize, tangents, emit."""
    parsed, program, _ = _front_end(fn, wrt)  # activity rejects gradients that would vanish
    tangents = build_jvp(program, parsed, list(wrt))
    source = render_jvp(tangents)
    (function,) = compile_sources(f"{parsed.name}_jvp", [source], parsed.fn)
    return TangentFunction(parsed.name, tuple(wrt), function, source, program.returns_tuple)


def _front_end(
    fn: Callable[..., Any], wrt: Sequence[str]
) -> tuple[ParsedFunction, Program, Activity]:
    """The stages reverse and forward mode share: source, fence, normalize, activity."""
    parsed = parse_function(fn)
    check_supported(parsed)
    program = normalize(parsed, wrt)
    return parsed, program, analyze(program, parsed, list(wrt))


def compile_gradient_function(derivative: Derivative, single: bool) -> Callable[..., Any]:
    """One plain function computing the gradient: forward, seed, backward, in a row.

    It has source (registered like all generated code), so the compiler can
    differentiate it again: second derivatives and Hessian-vector products.
    """
    program, parsed = derivative.program, derivative.parsed
    generated = build(program, derivative.activity, parsed, list(derivative.wrt), in_place=False)
    if "tape" in generated.memory:
        raise UnsupportedSyntaxError(
            f"second derivatives of {derivative.name!r} are not supported: its gradient "
            "replays branches or loops from a tape, which is not differentiated again",
            hint="take second derivatives of functions without if/for/while (np.where is fine)",
        )
    if len(generated.outputs) != 1:
        raise UnsupportedSyntaxError("second derivatives need a single (scalar) output")
    output = generated.outputs[0]
    lines = [f"def {derivative.name}_grad({', '.join(generated.params)}):"]
    lines += render_body(generated.forward, comments=False)
    lines.append(f"    {generated.prefix}{output} = ones_like({output})")
    lines += render_body(generated.backward, comments=True)
    gradients = generated.gradients
    lines.append(f"    return {gradients[0] if single else '(' + ', '.join(gradients) + ',)'}")
    source = "\n".join(lines)
    (function,) = compile_sources(f"{derivative.name}_grad", [source], derivative.parsed.fn)
    return function


def _avoid_helper_clashes(generated: Generated, program: Program, parsed: ParsedFunction) -> None:
    """Fail loudly if a user's variable would shadow a name the generated code uses."""
    user = program.defined_names() | set(program.params)
    used = {n for line in generated.backward for n in _names(line)} & (helper_names() | {"xp"})
    used |= _forward_helpers(generated, program)
    modules = {
        s.target
        for s in program.all_steps()
        if isinstance(s.value, ast.Call) and ast.unparse(s.value.func) in MODULE_FACTORIES
    }
    clashes = (used | {"memory"}) & user
    clashes -= modules & {"xp"}  # 'xp = array_module(...)': the same module either way
    if clashes:
        name = sorted(clashes)[0]
        where = next((s.origin for s in program.all_steps() if s.target == name and s.origin), None)
        raise UnsupportedSyntaxError(
            f"the variable name {name!r} is also used by the generated code",
            parsed.location(where) if where is not None else None,
            hint=f"rename your variable {name!r} (for example to '{name}_')",
        )


def _forward_helpers(generated: Generated, program: Program) -> set[str]:
    """Runtime names the generated forward uses besides the user's own code."""
    names = {"tape", "Tape"} if "tape" in generated.memory else set()
    for step in program.all_steps():
        if step.op == "setitem":
            names |= {"assign_at", "at"}
        if step.synthetic and isinstance(step.value, ast.Name) and step.value.id == "unbound":
            names.add("unbound")
        if step.kind == "op_call" and isinstance(step.value.func, ast.Call):
            names.add("differentiable")
    return names


def _names(line: Line) -> set[str]:
    return names_read(line.code)
