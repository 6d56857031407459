"""``verify_symbolic``: prove a backward right region by region, and judge its kinks.

Give it a custom op (a :class:`~autodiff_tutor.ops.DifferentiableFunction`), a
compiled function (``@differentiable``), or a forward and a backward function (or
their source). It translates both to sympy per element
(:mod:`~autodiff_tutor.verify.symbolic.translate`), differentiates the piecewise forward for
every input, compares with the backward in every region of the conditions
(:mod:`~autodiff_tutor.verify.symbolic.check`), and looks at every boundary between
regions (:mod:`~autodiff_tutor.verify.symbolic.kinks`). The result is a
:class:`~autodiff_tutor.verify.symbolic.report.SymbolicReport`: ``.passed``, one entry
per input and region, text (``print``) and a notebook table.

>>> import numpy as np
>>> def relu(x):
...     return np.maximum(x, 0)
>>> def relu_backward(d_y, x):
...     return d_y * (x > 0)
>>> report = verify_symbolic(relu, relu_backward)
>>> report.passed, [(c.region, c.verdict) for c in report.regions]
(True, [('x < 0', 'proved'), ('x > 0', 'proved')])
>>> print(report.kinks[0].boundary, report.kinks[0].verdict, report.kinks[0].detail)
x = 0 one-sided the derivative from x < 0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy as sp

from autodiff_tutor.compiler.front.source import ParsedFunction, parse_function
from autodiff_tutor.errors import ArgumentError, TranslationError
from autodiff_tutor.verify.symbolic.check import Problem, check_regions
from autodiff_tutor.verify.symbolic.kinks import kink_checks
from autodiff_tutor.verify.symbolic.report import SymbolicReport
from autodiff_tutor.verify.symbolic.runs import Run
from autodiff_tutor.verify.symbolic.translate import Flags, parse_source, translate_parsed

__all__ = [
    "problem_from_compiled",
    "problem_from_op",
    "problem_from_pair",
    "verify_compiled",
    "verify_problem",
    "verify_symbolic",
]

Source = Callable[..., Any] | str


def verify_symbolic(
    op: Any,
    backward: Source | None = None,
    *,
    layout: str = "inputs",
    wrt: Any = None,
    assume: Sequence[Any] = (),
    reductions: Sequence[str] = (),
    samples: int = 3000,
    seed: int = 0,
    name: str | None = None,
) -> SymbolicReport:
    """Verify a backward against its forward with sympy (see the module docstring).

    - ``verify_symbolic(op)``: a custom op (``forward``/``backward`` methods);
    - ``verify_symbolic(f)``: a compiled function (its generated forward and backward,
      for the inputs ``wrt``);
    - ``verify_symbolic(forward, backward)``: two functions or source strings. With
      ``layout="inputs"`` the backward is ``backward(*d_outputs, *inputs)`` and the
      forward returns the output(s); with ``layout="memory"`` (the generated code's
      shape) the forward returns ``(outputs, memory)`` and the backward is
      ``backward(*d_outputs, memory)``.

    ``assume`` restricts the inputs (``["tl < tr"]``); ``reductions`` names your own
    helpers that sum over the elements sharing a parameter.
    """
    if backward is not None:
        problem = problem_from_pair(op, backward, layout, assume, reductions, name)
    elif callable(getattr(op, "forward_source", None)) and callable(
        getattr(op, "backward_source", None)
    ):
        problem = problem_from_compiled(op, wrt, assume, reductions, name)
    elif callable(getattr(op, "forward", None)) and callable(getattr(op, "backward", None)):
        problem = problem_from_op(op, assume, reductions, name)
    else:
        raise ArgumentError(
            f"verify_symbolic needs a custom op, a compiled function, or a forward and a "
            f"backward; got {type(op).__name__}",
            hint="verify_symbolic(op), verify_symbolic(f) for @differentiable f, or "
            "verify_symbolic(forward, backward)",
        )
    return verify_problem(problem, samples=samples, seed=seed)


def verify_compiled(f: Any, wrt: Any = None, **options: Any) -> SymbolicReport:
    """Verify the generated backward of a compiled (``@differentiable``) function.

    The entry point for compiled functions: the same as ``verify_symbolic(f, wrt=wrt)``.
    """
    return verify_symbolic(f, wrt=wrt, **options)


def verify_problem(problem: Problem, samples: int = 3000, seed: int = 0) -> SymbolicReport:
    """Run the region and kink checks on an already translated :class:`Problem`."""
    report, regions = check_regions(problem, samples=samples, seed=seed)
    report.kinks = kink_checks(problem, regions, report)
    return report


def _symbols(names: Sequence[str]) -> list[sp.Symbol]:
    return [sp.Symbol(n, real=True) for n in names]


def _assumptions(assume: Sequence[Any], symbols: Sequence[sp.Symbol]) -> tuple[Any, ...]:
    table = {s.name: s for s in symbols}
    return tuple(sp.sympify(a, locals=table) if isinstance(a, str) else a for a in assume)


def _params(parsed: ParsedFunction, skip_self: bool) -> list[str]:
    args = parsed.tree.args
    names = [a.arg for a in [*args.posonlyargs, *args.args]]
    return names[1:] if skip_self else names


def _as_tuple(value: Any, count: int, what: str = "") -> tuple[Any, ...]:
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if what and len(values) != count:
        raise TranslationError(
            f"{what} returns {len(values)} value(s), {count} expected",
            hint="a backward returns one gradient per input (None where not computed); a "
            "forward returns its outputs, then its memory values",
        )
    return values


def problem_from_op(
    op: Any, assume: Sequence[Any] = (), reductions: Sequence[str] = (), name: str | None = None
) -> Problem:
    """Translate a custom op's ``forward`` and ``backward`` (read from its class).

    The backward gets its arguments in MATLAB's order: one gradient symbol per
    output, ``compute_gradients`` (all true), then the saved inputs, saved outputs and
    memory values the op declares.
    """
    cls = type(op)
    forward = parse_function(cls.forward)
    backward = parse_function(cls.backward)
    input_names = _params(forward, skip_self=True)
    inputs = _symbols(input_names)
    result = translate_parsed(forward, inputs, forward.namespace(), True, op, reductions)
    n_out = int(getattr(op, "num_outputs", 1))
    n_memory = int(getattr(op, "num_memory_values", 0))
    values = _as_tuple(result.value, n_out + n_memory, f"the forward of {cls.__name__}")
    outputs, memory = values[:n_out], values[n_out:]
    seed_names = _params(backward, skip_self=True)[:n_out]
    seeds = _symbols(seed_names)
    args: list[Any] = [*seeds, Flags()]
    if getattr(op, "save_inputs_for_backward", False):
        args += inputs
    if getattr(op, "save_outputs_for_backward", False):
        args += outputs
    args += memory
    grads = translate_parsed(
        backward, args, backward.namespace(), True, op, reductions, result.channel_wise
    )
    return Problem(
        name or getattr(op, "name", cls.__name__),
        tuple(inputs),
        tuple(outputs),
        tuple(seeds),
        _as_tuple(grads.value, len(inputs), f"the backward of {cls.__name__}"),
        _assumptions(assume, inputs),
        tuple(result.notes + grads.notes),
        _run_op(op, tuple(input_names), tuple(seed_names)),
    )


def _run_op(op: Any, inputs: tuple[str, ...], seeds: tuple[str, ...]) -> Run | None:
    """The op's own ``op_forward`` and backward, on arrays shaped for its data format."""
    if not callable(getattr(op, "op_forward", None)):
        return None
    backward = getattr(op, "op_backward_raw", None) or op.op_backward
    flags = (True,) * len(inputs)
    fmt = getattr(op, "format", None)
    shape = (1,) * len(fmt) if isinstance(fmt, str) and fmt else (1,)
    return Run(
        op.op_forward, lambda d, saved: backward(d, flags, saved), inputs, inputs, seeds, shape
    )


def problem_from_compiled(
    f: Any,
    wrt: Any = None,
    assume: Sequence[Any] = (),
    reductions: Sequence[str] = (),
    name: str | None = None,
) -> Problem:
    """Translate the generated forward and backward of a compiled function.

    Every parameter is a symbol; gradients are checked for ``wrt`` (by default every
    parameter without a default value).
    """
    names = list(getattr(f, "params", []))
    wrt_names = list(f.wrt_names(wrt)) if hasattr(f, "wrt_names") else names
    namespace = dict(getattr(getattr(f, "fn", None), "__globals__", {}))
    title = name or getattr(f, "name", "compiled")
    forward = parse_source(f.forward_source(wrt), f"<generated forward of {title}>")
    backward = parse_source(f.backward_source(wrt), f"<generated backward of {title}>")
    problem = _memory_layout(
        title, forward, backward, names, wrt_names, namespace, assume, reductions
    )
    problem.run = _run_compiled(f, names, wrt_names, tuple(s.name for s in problem.seeds))
    return problem


def _run_compiled(
    f: Any, names: list[str], wrt_names: list[str], seeds: tuple[str, ...]
) -> Run | None:
    """The compiled function run as an operation (its generated forward and backward)."""
    if not callable(getattr(f, "op_forward", None)):
        return None
    flags = (True,) * len(names)

    def backward(d_outputs: tuple[Any, ...], saved: Any) -> tuple[Any, ...]:
        grads = f.op_backward(d_outputs, flags, saved)
        return tuple(grads[names.index(n)] for n in wrt_names)

    return Run(f.op_forward, backward, tuple(names), tuple(wrt_names), seeds)


def problem_from_pair(
    forward: Source,
    backward: Source,
    layout: str = "inputs",
    assume: Sequence[Any] = (),
    reductions: Sequence[str] = (),
    name: str | None = None,
) -> Problem:
    """Translate a forward and a backward given as functions or source strings."""
    parsed_f, namespace = _parse(forward, "forward")
    parsed_b, namespace_b = _parse(backward, "backward")
    namespace = {**namespace_b, **namespace}
    names = _params(parsed_f, skip_self=False)
    title = name or parsed_f.name
    if layout == "memory":
        problem = _memory_layout(
            title, parsed_f, parsed_b, names, names, namespace, assume, reductions
        )
        run_f, run_b = _runnable(forward, parsed_f), _runnable(backward, parsed_b)
        if run_f is not None and run_b is not None:
            seeds = tuple(s.name for s in problem.seeds)
            problem.run = Run(
                lambda *xs: _outputs_and_memory(run_f(*xs)),
                lambda d, memory: run_b(*d, memory),
                tuple(names),
                tuple(names),
                seeds,
            )
        return problem
    if layout != "inputs":
        raise ArgumentError(f"layout must be 'inputs' or 'memory', got {layout!r}")
    inputs = _symbols(names)
    result = translate_parsed(parsed_f, inputs, namespace, reductions=reductions)
    outputs = _as_tuple(result.value, 1)
    seeds = _symbols(_params(parsed_b, skip_self=False)[: len(outputs)])
    grads = translate_parsed(parsed_b, [*seeds, *inputs], namespace, reductions=reductions)
    run_f, run_b = _runnable(forward, parsed_f), _runnable(backward, parsed_b)
    run = None
    if run_f is not None and run_b is not None:
        run = Run(
            lambda *xs: (_as_tuple(run_f(*xs), 1), xs),
            lambda d, xs: run_b(*d, *xs),
            tuple(names),
            tuple(names),
            tuple(s.name for s in seeds),
        )
    return Problem(
        title,
        tuple(inputs),
        outputs,
        tuple(seeds),
        _as_tuple(grads.value, len(inputs), f"the backward of {title}"),
        _assumptions(assume, inputs),
        tuple(result.notes + grads.notes),
        run,
    )


def _outputs_and_memory(result: Any) -> tuple[tuple[Any, ...], Any]:
    outputs, memory = result
    return _as_tuple(outputs, 1), memory


def _runnable(source: Source, parsed: ParsedFunction) -> Callable[..., Any] | None:
    """The function itself, or one defined by running its source with numpy as ``np``
    (``None`` when that fails: then only sympy reads it)."""
    if not isinstance(source, str):
        return source
    namespace: dict[str, Any] = {"np": np, "numpy": np}
    try:
        exec(compile("\n".join(parsed.lines), parsed.filename, "exec"), namespace)
    except Exception:  # the translation reports what it cannot read
        return None
    found = namespace.get(parsed.name)
    return found if callable(found) else None


def _parse(source: Source, what: str) -> tuple[ParsedFunction, dict[str, Any]]:
    if isinstance(source, str):
        return parse_source(source, f"<{what} source>"), {}
    parsed = parse_function(source)
    return parsed, parsed.namespace()


def _memory_layout(
    title: str,
    forward: ParsedFunction,
    backward: ParsedFunction,
    names: list[str],
    wrt_names: list[str],
    namespace: dict[str, Any],
    assume: Sequence[Any],
    reductions: Sequence[str],
) -> Problem:
    """forward(*inputs) -> (outputs, memory); backward(*d_outputs, memory) -> grads."""
    symbols = _symbols(names)
    result = translate_parsed(forward, symbols, namespace, reductions=reductions)
    if not (isinstance(result.value, tuple) and len(result.value) == 2):
        raise ArgumentError(f"the forward of {title} must return (outputs, memory)")
    outputs, memory = result.value
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    seeds = _symbols(_params(backward, skip_self=False)[:-1])  # then the memory
    grads = translate_parsed(backward, [*seeds, memory], namespace, reductions=reductions)
    inputs = tuple(symbols[names.index(n)] for n in wrt_names)
    return Problem(
        title,
        inputs,
        tuple(outputs),
        tuple(seeds),
        _as_tuple(grads.value, len(inputs), f"the backward of {title}"),
        _assumptions(assume, symbols),
        tuple(result.notes + grads.notes),
    )
