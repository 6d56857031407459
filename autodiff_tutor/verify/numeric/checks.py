"""``check_op`` and ``check_layer``: what MATLAB's checkLayer and PyTorch's gradcheck test.

Each check returns a :class:`~autodiff_tutor.verify.numeric.report.CheckReport` with one entry
per category:

================== ==========================================================
category           what is checked
================== ==========================================================
forward            forward runs for many observations and for one; the right
                   number of outputs, on the inputs' array module
backward           backward runs for many and one observations and returns one
                   gradient per input (``None`` only where not requested)
gradient shapes    every gradient has its input's shape (nothing left to sum)
gradient dtypes    float32 and float64 inputs give outputs and gradients of the
                   same dtype and array module
compute_gradients  with no gradient requested, and with one at a time: ``None``
                   where not requested, the same gradient where requested
finite differences gradients match 5-point central differences in float64
                   (nan never matches; where the forward is not finite there is
                   nothing to compare with, and the category fails)
kinks              input elements on (or next to) a kink are found, reported
                   with the slope the backward picks, and re-checked at a
                   nudged point instead of failing mysteriously; a value there
                   outside both one-sided slopes (or nan) fails
GPU                the same on cupy arrays, or "skipped: no GPU"
================== ==========================================================

>>> import numpy as np
>>> from autodiff_tutor.ops import PReLUFunction
>>> X = np.random.default_rng(0).standard_normal((4, 3))
>>> report = check_op(PReLUFunction("BC"), X, np.full((1, 3), 0.25))
>>> report.passed, report["finite differences"].status
(True, 'passed')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from autodiff_tutor.api.compiled import differentiable
from autodiff_tutor.errors import BackwardOutputError, front_door
from autodiff_tutor.ops import formats
from autodiff_tutor.ops.function import (
    GradientProblem,
    as_gradient_tuple,
    describe_inputs,
    gradient_problems,
    is_array,
)
from autodiff_tutor.runtime.backend import array_module, shape_of
from autodiff_tutor.verify.numeric.common import (
    backward_raw,
    cast_inputs,
    describe,
    input_names,
    is_float_array,
    random_like,
)
from autodiff_tutor.verify.numeric.gpu import gpu_entry
from autodiff_tutor.verify.numeric.gradients import finite_difference_entries
from autodiff_tutor.verify.numeric.report import CheckEntry, CheckReport

__all__ = ["check_op", "differs"]

DTYPE_KINDS = ("dtype", "module")
#: the category of a problem with a backward's gradients, by its kind (others: "backward")
CATEGORIES = {"shape": "gradient shapes", **dict.fromkeys(DTYPE_KINDS, "gradient dtypes")}


class _Collector:
    """Messages per category, deduplicated, in order."""

    def __init__(self) -> None:
        self.messages: dict[str, list[str]] = {}

    def add(self, category: str, message: str) -> None:
        bucket = self.messages.setdefault(category, [])
        if message not in bucket:
            bucket.append(message)

    def entry(self, category: str, ok_message: str) -> CheckEntry:
        problems = self.messages.get(category)
        if problems:
            return CheckEntry(category, "failed", "\n".join(problems))
        return CheckEntry(category, "passed", ok_message)


def observation_sets(
    inputs: tuple[Any, ...], axis: int | None, data_inputs: Sequence[int] | None = None
) -> dict[str, tuple[Any, ...]]:
    """The inputs with many observations and with one, along the batch ``axis``.

    The inputs at positions ``data_inputs`` (by default: those shaped like the first
    one) are sliced to their first observation. With a single observation given,
    there is only that set.

    >>> list(observation_sets((np.zeros((4, 3)), np.zeros((1, 3))), 0))
    ['4 observations', '1 observation']
    """
    if axis is None or not inputs or len(shape_of(inputs[0])) <= axis:
        return {"the given inputs": inputs}
    shape = shape_of(inputs[0])
    if shape[axis] == 1:
        return {"1 observation (give several to check a batch)": inputs}
    first = (slice(None),) * axis + (slice(0, 1), ...)
    if data_inputs is not None:
        one = tuple(x[first] if i in data_inputs else x for i, x in enumerate(inputs))
    else:
        one = tuple(x[first] if shape_of(x) == shape else x for x in inputs)
    return {f"{shape[axis]} observations": inputs, "1 observation": one}


def _run_forward(op: Any, name: str, label: str, inputs: tuple[Any, ...], out: _Collector) -> Any:
    try:
        outputs, saved = op.op_forward(*inputs)
    except Exception as exc:  # the user's forward: report whatever it raises
        out.add("forward", f"forward raised {describe(exc)} ({label})")
        return None
    expected = getattr(op, "num_outputs", len(outputs))
    if len(outputs) != expected:
        out.add("forward", f"forward gave {len(outputs)} outputs, the op declares {expected}")
    module = array_module(*inputs)
    for k, y in enumerate(outputs):
        if is_array(y) and array_module(y) is not module:
            out.add(
                "forward",
                f"output {k} is an array of {array_module(y).__name__}, the inputs of "
                f"{getattr(module, '__name__', module)}: use xp = array_module(X)",
            )
    return outputs, saved


def _sort_problems(problems: list[GradientProblem], label: str, out: _Collector) -> None:
    for p in problems:
        out.add(CATEGORIES.get(p.kind, "backward"), f"{p.message} ({label})")


def _run_backward(
    op: Any,
    name: str,
    label: str,
    inputs: tuple[Any, ...],
    flags: tuple[bool, ...],
    rng: Any,
    out: _Collector,
) -> tuple[Any, list[GradientProblem]] | None:
    """Forward and backward with random output gradients; problems sorted into ``out``."""
    ran = _run_forward(op, name, label, inputs, out)
    if ran is None:
        return None
    outputs, saved = ran
    d_outputs = tuple(random_like(y, rng) for y in outputs)
    try:
        result = backward_raw(op, d_outputs, flags, saved)
    except BackwardOutputError as exc:
        out.add("backward", f"{exc.message} ({label})")
        return None
    except Exception as exc:  # the user's backward: report whatever it raises
        out.add("backward", f"backward raised {describe(exc)} ({label})")
        return None
    specs = describe_inputs(input_names(op, len(inputs)), inputs)
    problems = gradient_problems(name, specs, flags, result)
    return result, problems


@front_door
def check_op(
    op: Any,
    *inputs: Any,
    batch_axis: int | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-7,
    max_elements: int = 64,
    seed: int = 0,
    data_inputs: Sequence[int] | None = None,
) -> CheckReport:
    """Check a differentiable op (custom or compiled; a plain function is compiled
    first) at sample ``inputs``.

    ``batch_axis`` is the observation axis of the first input (taken from the op's
    ``format`` when it has one); ``data_inputs`` gives the positions of the inputs
    that carry observations (by default those shaped like the first). At most ``max_elements``
    elements per input are compared with finite differences. See the module docstring
    for the categories.

    >>> import numpy as np
    >>> from autodiff_tutor.ops import DifferentiableFunction
    >>> class Cube(DifferentiableFunction):
    ...     def __init__(self):
    ...         super().__init__(save_inputs_for_backward=True)
    ...     def forward(self, x):
    ...         return x * x * x
    ...     def backward(self, d_y, compute_gradients, x):
    ...         return 2 * x * x * d_y            # wrong: should be 3 x^2
    >>> report = check_op(Cube(), np.array([0.5, 1.0, 2.0]))
    >>> [entry.category for entry in report.failures()]
    ['finite differences']
    """
    if not hasattr(op, "op_forward") and callable(op):
        op = differentiable(op)  # a plain def (or a method, a lambda): compiled, as grad does
    name = getattr(op, "name", type(op).__name__)
    rng = np.random.default_rng(seed)
    if batch_axis is None and isinstance(getattr(op, "format", None), str):
        batch_axis = formats.batch_axis(op.format)
    flags = tuple(is_float_array(x) for x in inputs)
    out = _Collector()
    sets = observation_sets(inputs, batch_axis, data_inputs)
    ran_any = False
    for label, xs in sets.items():
        ran = _run_backward(op, name, f"with {label}", xs, flags, rng, out)
        if ran is not None:
            ran_any = True
            _sort_problems(ran[1], f"with {label}", out)
    _check_one_observation_shapes(op, sets, batch_axis, out)
    for dtype in ("float32", "float64"):
        ran = _run_backward(
            op, name, f"with {dtype} inputs", cast_inputs(inputs, dtype), flags, rng, out
        )
        if ran is not None:
            _sort_problems([p for p in ran[1] if p.kind in DTYPE_KINDS], f"{dtype} inputs", out)
            _check_output_dtypes(op, cast_inputs(inputs, dtype), dtype, out)
    entries = [
        out.entry(
            "forward", f"runs with {' and '.join(sets)}; {getattr(op, 'num_outputs', 1)} output(s)"
        ),
        out.entry("backward", f"runs; one gradient for each of the {sum(flags)} float input(s)"),
        out.entry("gradient shapes", "every gradient has its input's shape"),
        out.entry("gradient dtypes", "float32 and float64 in, the same dtype and array module out"),
    ]
    if not ran_any:
        reason = "forward or backward does not run (see above)"
        entries += [
            CheckEntry(c, "skipped", reason)
            for c in ("compute_gradients", "finite differences", "kinks")
        ]
    else:
        entries.append(
            _compute_gradients_entry(op, name, cast_inputs(inputs, "float64"), flags, rng)
        )
        entries += finite_difference_entries(
            op,
            name,
            cast_inputs(inputs, "float64"),
            flags,
            input_names(op, len(inputs)),
            rtol=rtol,
            atol=atol,
            max_elements=max_elements,
            rng=rng,
        )
    entries.append(gpu_entry(op, inputs, flags, rng))
    return CheckReport(name, entries)


def _check_one_observation_shapes(
    op: Any, sets: dict[str, Any], axis: int | None, out: _Collector
) -> None:
    if len(sets) != 2:
        return
    (many_label, many), (_, one) = sets.items()
    try:
        many_out, _ = op.op_forward(*many)
        one_out, _ = op.op_forward(*one)
    except Exception:  # already reported by the forward runs
        return
    n = shape_of(many[0])[axis]
    for k, (a, b) in enumerate(zip(many_out, one_out, strict=False)):
        sa, sb = shape_of(a), shape_of(b)
        want = tuple(1 if (i == axis and m == n) else m for i, m in enumerate(sa))
        if sb != want:
            out.add(
                "forward",
                f"output {k} has shape {sa} with {many_label} but {sb} with one (expected {want})",
            )


def _check_output_dtypes(op: Any, inputs: tuple[Any, ...], dtype: str, out: _Collector) -> None:
    try:
        outputs, _ = op.op_forward(*inputs)
    except Exception:  # already reported
        return
    for k, y in enumerate(outputs):
        if is_float_array(y) and str(y.dtype).split(".")[-1] != dtype:
            out.add("gradient dtypes", f"forward turns {dtype} inputs into a {y.dtype} output {k}")


def _compute_gradients_entry(
    op: Any, name: str, inputs: tuple[Any, ...], flags: tuple[bool, ...], rng: Any
) -> CheckEntry:
    category = "compute_gradients"
    if getattr(op, "honours_compute_gradients", True) is False:
        return CheckEntry(category, "skipped", "this backward takes no compute_gradients flags")
    out = _Collector()
    ran = _run_forward(op, name, "float64 inputs", inputs, out)
    if ran is None:
        return CheckEntry(category, "skipped", "forward does not run")
    outputs, saved = ran
    d_outputs = tuple(random_like(y, rng) for y in outputs)
    try:
        reference = as_gradient_tuple(backward_raw(op, d_outputs, flags, saved), len(inputs))
    except Exception:  # reported by the backward category
        return CheckEntry(category, "skipped", "backward does not run with every flag set")
    names = input_names(op, len(inputs))
    specs = describe_inputs(names, inputs)
    patterns = [tuple(False for _ in flags)]
    patterns += [tuple(j == i for j in range(len(flags))) for i, f in enumerate(flags) if f]
    for pattern in patterns:
        shown = "(" + ", ".join("T" if f else "F" for f in pattern) + ")"
        try:
            result = backward_raw(op, d_outputs, pattern, saved)
        except Exception as exc:  # the user's backward: report whatever it raises
            out.add(category, f"backward raised {describe(exc)} with compute_gradients={shown}")
            continue
        for p in gradient_problems(name, specs, pattern, result):
            if p.kind in ("count", "missing", "unrequested"):
                out.add(category, f"with compute_gradients={shown}: {p.message}")
        grads = as_gradient_tuple(result, len(inputs))
        if grads is None or reference is None:
            continue
        for i, wanted in enumerate(pattern):
            if wanted and differs(grads[i], reference[i]):
                out.add(
                    category,
                    f"the gradient for input {i} ({names[i]!r}) differs when it is the only one "
                    f"requested {shown}: does backward read compute_gradients[{i}] and return "
                    "the gradients in the order of the inputs?",
                )
    n = len(patterns)
    return out.entry(category, f"{n} patterns (none, then one at a time): None where not requested")


def differs(a: Any, b: Any) -> bool:
    """Whether two arrays of the same shape differ beyond rounding (1e-10, relative).

    >>> differs(np.ones(2), np.ones(2) + 1e-12), differs(np.ones(2), np.zeros(2))
    (False, True)
    """
    if not (is_array(a) and is_array(b)) or shape_of(a) != shape_of(b):
        return False
    xp = array_module(a, b)
    scale = 1.0 + float(xp.max(xp.abs(b)))
    return float(xp.max(xp.abs(a - b))) > 1e-10 * scale
