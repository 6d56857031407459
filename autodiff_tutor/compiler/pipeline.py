"""The compiler pipeline: the one place that runs the stages, in order.

Reverse mode (``compile_derivative``)::

    source -> fence -> desugar -> normalize      the front end: once per function
           -> activity                           once per choice of wrt
           -> adjoint -> optimize -> memory -> forward -> emit

At a ``value_and_grad`` call with argument shapes and dtypes not seen before, the
pair is specialized on them (:mod:`.specialized`: a probe run of the
backward, then ``adjoint -> optimize -> specialize -> simplify -> memory -> slots ->
forward -> emit`` again), where the program is shape-static (:mod:`.specialize.probe`).

Forward mode (``compile_tangent``) shares the front end and activity, then runs
``tangent -> emit``. Every stage's result can be shown (:func:`stages`,
``f.show(stages=True)``).

>>> import numpy as np
>>> def f(x):
...     return np.sum(np.sin(x))
>>> derivative = compile_derivative(f, wrt=("x",))
>>> out, memory = derivative.forward(np.zeros(3))
>>> derivative.backward(1.0, memory)[0].tolist()
[1.0, 1.0, 1.0]
>>> list(stages(f, ["x"]))
['source', 'normalize', 'activity', 'adjoint', 'optimize', 'memory', 'forward', 'emit']
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from autodiff_tutor.compiler.activity import Activity, analyze, varied_names
from autodiff_tutor.compiler.code import walk_statements
from autodiff_tutor.compiler.emit import (
    GENERATED_NAMES,
    Generated,
    Line,
    Source,
    Spelling,
    compile_pair,
    compile_sources,
    lines_of,
    render_body,
    render_forward,
    render_jvp,
    rendered,
)
from autodiff_tutor.compiler.forward_mode.tangent import build_jvp
from autodiff_tutor.compiler.front.desugar.desugar import desugar_function
from autodiff_tutor.compiler.front.desugar.known_callees import with_known_callees_nested
from autodiff_tutor.compiler.front.desugar.module_helpers import (
    inlinable,
    with_helpers_nested,
    with_structure_helpers_nested,
)
from autodiff_tutor.compiler.front.fence import check_supported
from autodiff_tutor.compiler.front.names import errors_as_written, with_helper_names_aliased
from autodiff_tutor.compiler.front.normalize.normalize import normalize
from autodiff_tutor.compiler.front.source import ParsedFunction, parse_function
from autodiff_tutor.compiler.ir import Program
from autodiff_tutor.compiler.reverse.adjoint import Adjoint, build_adjoint
from autodiff_tutor.compiler.reverse.forward import build_forward
from autodiff_tutor.compiler.reverse.memory import Memory, plan_memory
from autodiff_tutor.compiler.reverse.optimize import optimize
from autodiff_tutor.compiler.second_order import ORIGIN_ATTRIBUTE, at_users_line
from autodiff_tutor.compiler.specialize.direct_ops import direct_op_calls
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.locations import is_user_file
from autodiff_tutor.syntax import copy_tree


@dataclass
class FrontEnd:
    """What does not depend on ``wrt``: the parsed source and the normalized program."""

    parsed: ParsedFunction
    program: Program


@at_users_line
def front_end(fn: Callable[..., Any]) -> FrontEnd:
    """source -> fence -> desugar -> normalize."""
    return front_end_of(parse_function(fn))


def front_end_of(parsed: ParsedFunction) -> FrontEnd:
    """fence -> desugar -> normalize, on an already parsed function (structured
    parameters flattened into leaves, see :mod:`autodiff_tutor.pytree`)."""
    parsed = with_helper_names_aliased(parsed, GENERATED_NAMES)
    with errors_as_written(parsed):
        parsed = with_structure_helpers_nested(parsed)  # layer(params, x): inlined
        parsed = with_known_callees_nested(parsed)  # self.f(x), net.f(x), sig(x): inlined
    parsed = with_helper_names_aliased(parsed, GENERATED_NAMES)  # and the names those read
    with errors_as_written(parsed):
        check_supported(parsed)
        return FrontEnd(parsed, normalize(parsed, desugar_function(parsed)))


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
    #: pairs specialized on argument shapes and dtypes, by guard key (``None``: the
    #: general pair serves that key); see :mod:`.specialized`
    specializations: dict[Any, Any] = field(default_factory=dict)
    #: what lowers each specialized pair for another backend (``fused.build.fused_pair``
    #: for numba); ``None``: the numpy pair runs
    lowering: Callable[..., Any] | None = None

    @functools.cached_property
    def wrt_positions(self) -> tuple[int, ...]:
        """The positions of the ``wrt`` parameters."""
        return tuple(self.program.params.index(name) for name in self.wrt)

    @functools.cached_property
    def reverse_pass(self) -> tuple[Adjoint, list[ast.stmt]]:
        """The adjoint and its optimized backward, made once for the pairs
        specialized on this derivative (the probe's and each specialization's): each
        generates from a copy (:func:`generate_checked`), so specializing costs
        memory, forward and its own rewrites, not the reverse pass again.
        :func:`compile_derivative` keeps a copy of its own; made here otherwise (a
        derivative rebuilt for one path through the branches)."""
        return _reverse(self.program, self.activity, self.parsed, list(self.wrt), True)

    @property
    def num_outputs(self) -> int:
        return len(self.generated.outputs)

    @property
    def returns_tuple(self) -> bool:
        return self.generated.returns_tuple

    @functools.cached_property
    def forward_lines(self) -> list[Line]:
        """The forward's body as rendered lines (code, origin, depth)."""
        return lines_of(self.generated.forward)

    @functools.cached_property
    def backward_lines(self) -> list[Line]:
        """The backward's body as rendered lines (code, origin, depth)."""
        return lines_of(self.generated.backward)


@at_users_line
def compile_derivative(
    fn: Callable[..., Any],
    wrt: Sequence[str],
    front: FrontEnd | None = None,
    record: dict[str, str] | None = None,
) -> Derivative:
    """Run every stage on ``fn`` for gradients with respect to the parameters ``wrt``.

    ``front``: the function's front end, when the caller keeps it (it does not depend
    on ``wrt``); ``record``: filled with each stage's result, as text.
    """
    front = front or front_end(fn)
    parsed, program = front.parsed, front.program
    wrt = [parsed.own_name(name) for name in wrt]  # a parameter's stand-in (front.names)
    with errors_as_written(parsed):
        activity = analyze(program, parsed, wrt)
        reverse = _reverse(program, activity, parsed, wrt, True)
        kept = reverse[0], _private_copy(reverse[1])  # before memory changes it in place
        generated = _generate(program, activity, parsed, wrt, True, record, reverse=reverse)
    forward, backward = compile_pair(parsed.name, generated, parsed)
    forward_src, backward_src = forward.generated_source, backward.generated_source
    if record is not None:
        record["emit"] = f"{forward_src}\n\n{backward_src}"
    derivative = Derivative(
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
    derivative.__dict__["reverse_pass"] = kept  # for specializing: not made again
    return derivative


def _generate(
    program: Program,
    activity: Activity,
    parsed: ParsedFunction,
    wrt: list[str],
    in_place: bool,
    record: dict[str, str] | None,
    transform: Callable[[list[ast.stmt], set[str]], list[ast.stmt]] | None = None,
    slots: Callable[[Program, list[ast.stmt], Memory], None] | None = None,
    reverse: tuple[Adjoint, list[ast.stmt]] | None = None,
) -> Generated:
    """adjoint -> optimize (or ``reverse``, their result) -> (``transform``: probe or
    specialize) -> memory -> (``slots``: what counted loops keep in arrays, a
    specialized pair) -> forward."""
    adjoint, backward = reverse or _reverse(program, activity, parsed, wrt, in_place)
    if transform is not None:
        keep = {*adjoint.seeds, *adjoint.gradients, *program.params, *program.defined_names()}
        backward = transform(backward, keep)
    # a backward differentiated again pushes the values apart from the path
    values = None if in_place else varied_names(program.all_steps(), program.params)
    memory = plan_memory(program, backward, adjoint.seeds, in_place, parsed, values)
    if slots is not None:
        slots(program, backward, memory)
    generated = Generated(
        program.name,
        program.params,
        wrt,
        program.outputs,
        program.returns_tuple,
        forward=build_forward(program, parsed, memory),
        backward=backward,
        memory=memory,
        gradients=adjoint.gradients,
        seeds=adjoint.seeds,
    )
    if record is not None:
        record["source"] = "\n".join(parsed.lines)
        record["normalize"] = program.source()
        record["activity"] = activity.describe()
        record["adjoint"] = "\n".join(render_body(lines_of(adjoint.backward)))
        record["optimize"] = "\n".join(render_body(lines_of(backward)))
        record["memory"] = memory.describe()
        record["forward"] = render_forward(generated)
    return generated


def _reverse(
    program: Program, activity: Activity, parsed: ParsedFunction, wrt: list[str], in_place: bool
) -> tuple[Adjoint, list[ast.stmt]]:
    """adjoint -> optimize: the adjoint and its optimized backward."""
    adjoint = build_adjoint(program, activity, parsed, wrt, in_place)
    return adjoint, optimize(adjoint.backward, adjoint.seeds[0])


def generate_checked(
    derivative: Derivative,
    transform: Callable[[list[ast.stmt], set[str]], list[ast.stmt]],
    slots: Callable[[Program, list[ast.stmt], Memory], None] | None = None,
) -> Generated:
    """The derivative's trees generated again with ``transform`` between optimize and
    memory (the specialized pipeline's probe and specialization) and ``slots`` after
    memory. ``transform`` gets a copy of the derivative's reverse pass, its own to
    change."""
    program, parsed = derivative.program, derivative.parsed
    wrt = list(derivative.wrt)
    adjoint, backward = derivative.reverse_pass
    reverse = adjoint, _private_copy(backward)  # the transforms change it in place
    return _generate(
        program, derivative.activity, parsed, wrt, True, None, transform, slots, reverse
    )


def _private_copy(backward: list[ast.stmt]) -> list[ast.stmt]:
    """A copy of ``backward`` to change in place; a stack-pop placeholder still
    points at the program's body (shared, never copied)."""
    keep = {id(s.replays): s.replays for s in walk_statements(backward) if hasattr(s, "replays")}
    return copy_tree(backward, keep)


def stages(fn: Callable[..., Any], wrt: Sequence[str]) -> dict[str, str]:
    """Each stage's result for ``fn`` and ``wrt``, as text, in the order they run."""
    record: dict[str, str] = {}
    compile_derivative(fn, wrt, record=record)
    order = ("source", "normalize", "activity", "adjoint", "optimize", "memory", "forward", "emit")
    return {stage: record[stage] for stage in order}


@dataclass
class TangentFunction:
    """A compiled forward-mode (JVP) function for one choice of ``wrt``."""

    name: str
    wrt: tuple[str, ...]
    function: Callable[..., Any]
    source: str
    returns_tuple: bool


@at_users_line
def compile_tangent(
    fn: Callable[..., Any], wrt: Sequence[str], front: FrontEnd | None = None
) -> TangentFunction:
    """The forward-mode pipeline: the front end, activity, tangent, emit."""
    front = front or front_end(fn)
    parsed, program = front.parsed, front.program
    wrt = [parsed.own_name(name) for name in wrt]  # a parameter's stand-in (front.names)
    with errors_as_written(parsed):
        analyze(program, parsed, wrt)  # rejects gradients that would vanish
        tangents = build_jvp(program, parsed, wrt)
    render = functools.partial(render_jvp, tangents)
    (function,) = compile_sources(f"{parsed.name}_jvp", [render], parsed)
    return TangentFunction(
        parsed.name, tuple(wrt), function, function.generated_source, program.returns_tuple
    )


def _readable_op(op: Any) -> bool:
    """Whether ``op`` is a custom op whose ``forward`` and ``backward`` are methods of
    yours (in your files), which the compiler reads and inlines when it differentiates
    a gradient again."""
    if not callable(getattr(op, "direct_calls", None)):
        return False
    methods = [getattr(type(op), name, None) for name in ("forward", "backward")]
    return all(inspect.isfunction(m) and is_user_file(m.__code__.co_filename) for m in methods)


def compile_gradient_function(
    derivative: Derivative, single: bool, value: bool = False
) -> Callable[..., Any]:
    """One plain function computing the gradient: forward, seed, backward, in a row
    (``value``: it returns the value and the gradient, as ``value_and_grad`` does).

    It has source (registered like all generated code), so the compiler can
    differentiate it again: second derivatives and Hessian-vector products.
    """
    with errors_as_written(derivative.parsed):
        return _gradient_function(derivative, single, value)


def _literal(value: Any) -> bool:
    """Whether ``value`` is written as a literal its ``repr`` reads back as (``0.1``, ``2``).

    >>> _literal(0.1), _literal("mean"), _literal(float("nan")), _literal([1])
    (True, True, False, False)
    """
    if type(value) not in (int, float, bool, str, type(None)):
        return False
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError):
        return False


def _gradient_function(derivative: Derivative, single: bool, value: bool) -> Callable[..., Any]:
    program, parsed, activity = derivative.program, derivative.parsed, derivative.activity
    wrt = list(derivative.wrt)
    # the functions of yours it calls (custom ops stay calls: read below, or refused)
    helpers = [s.callee for s in program.all_steps() if s.kind == "op_call"]
    helpers = [h for h in helpers if inlinable(h)]
    if helpers:
        nested = with_helpers_nested(parsed, helpers)  # the helpers' operations in place
        if nested is not None:
            nested_front = front_end_of(nested)
            parsed, program = nested_front.parsed, nested_front.program
            activity = analyze(program, parsed, wrt)
    generated = _generate(program, activity, parsed, wrt, False, None)
    forward, backward = generated.forward, generated.backward
    calls = [s for s in program.all_steps() if s.kind == "op_call"]
    if calls and all(_readable_op(s.callee) for s in calls):
        # custom ops of yours: their forward and backward called directly, so that
        # differentiating this function again compiles them (inlined as methods)
        scope = parsed.namespace()
        forward, backward, _ = direct_op_calls(
            forward, backward, generated.memory.names, scope, None
        )
    through = [
        n
        for n in ast.walk(ast.Module(forward, []))
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "op_forward"
    ]
    calls = [c for c in calls if not _readable_op(c.callee)] or calls
    if through:  # the gradient calls an op (and its backward) by the protocol
        node = calls[0].expression or calls[0].origin
        plain = inlinable(calls[0].callee)
        raise UnsupportedSyntaxError(
            f"second derivatives of {derivative.name!r} through {calls[0].description} are "
            "not supported: its gradient calls that operation (and its backward), which is "
            "not differentiated again",
            parsed.location(node) if node is not None else None,
            hint="a helper is inlined for second derivatives when it is a plain function of "
            "this module with one final return, reading no name this function redefines; "
            "define it inside the function, or write its body in place"
            if plain
            else "a custom op is differentiated again when it is a DifferentiableFunction "
            "whose forward and backward the compiler can read (written with numpy "
            "operations); write the computation with numpy operations otherwise",
        )
    if len(generated.outputs) != 1:
        raise UnsupportedSyntaxError("second derivatives need a single (scalar) output")
    name = f"{derivative.name}_{'value_and_grad' if value else 'grad'}"
    signature = inspect.signature(parsed.fn).parameters
    own = [parsed.own_name(p) for p in signature]
    same = list(generated.params) == own  # the user's parameters, in their order
    # keyword-only parameters stay keyword-only, with their defaults: written in the
    # source where they are literals (inlined again, a call may leave them out), else
    # set on the function (below)
    keyword_only = [p.kind is p.KEYWORD_ONLY for p in signature.values()] if same else []
    defaults = [p.default for p in signature.values() if p.default is not p.empty]
    written = same and all(_literal(d) for d in defaults)

    def render(spell: Spelling) -> Source:
        output = spell(generated.outputs[0])
        params = spell.all(generated.params)
        if written:
            params = [
                f"{param}={p.default!r}" if p.default is not p.empty else param
                for param, p in zip(params, signature.values(), strict=True)
            ]
        if any(keyword_only):
            params.insert(keyword_only.index(True), "*")
        lines: list[str | tuple[str, Line]] = [f"def {name}({', '.join(params)}):"]
        lines += rendered(lines_of(forward, spelling=spell), comments=False)
        lines.append(f"    {spell(generated.seeds[0])} = {spell('seed_one')}({output})")
        lines += rendered(lines_of(backward, spelling=spell), comments=True)
        gradients = spell.all(generated.gradients)
        returned = gradients[0] if single else f"({', '.join(gradients)},)" if gradients else "()"
        lines.append(f"    return {output + ', ' if value else ''}{returned}")
        return Source.of(lines)

    (function,) = compile_sources(name, [render], parsed)
    setattr(function, ORIGIN_ATTRIBUTE, derivative.parsed)  # refusals point at the user
    if same:  # grad(f)(x) uses f's defaults too
        function.__defaults__ = parsed.fn.__defaults__
        function.__kwdefaults__ = parsed.fn.__kwdefaults__
    return function
