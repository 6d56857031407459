"""Small custom ops for the symbolic-verification tests, and numeric confirmation helpers.

The ops are written like a student would write them (masks, ``xp.where``, attributes
read from ``self``, memory values); the helpers evaluate a report's counterexample with
the op's real numpy forward and backward, so a test can confirm that the difference a
report claims is really there.
"""

from __future__ import annotations

import inspect
import linecache
import textwrap
from typing import Any

import numpy as np

from autodiff_tutor.ops import DifferentiableFunction
from autodiff_tutor.runtime.backend import array_module


class ReLU(DifferentiableFunction):
    def __init__(self) -> None:
        super().__init__(save_inputs_for_backward=True, name="relu")

    def forward(self, x):
        xp = array_module(x)
        return xp.maximum(x, 0)

    def backward(self, d_y, compute_gradients, x):
        return d_y * (x > 0)


class ReLUFromMemory(DifferentiableFunction):
    """The backward reads a memory value (the mask) saved by the forward."""

    def __init__(self) -> None:
        super().__init__(num_memory_values=1, name="relu_memory")

    def forward(self, x):
        mask = x > 0
        return x * mask, mask

    def backward(self, d_y, compute_gradients, mask):
        return d_y * mask


class ReLUFromOutput(DifferentiableFunction):
    """The backward reads the saved output."""

    def __init__(self) -> None:
        super().__init__(save_outputs_for_backward=True, name="relu_output")

    def forward(self, x):
        xp = array_module(x)
        return xp.where(x > 0, x, xp.zeros_like(x))

    def backward(self, d_y, compute_gradients, y):
        return d_y * (y > 0)


class LeakyReLU(DifferentiableFunction):
    def __init__(self, slope: float = 0.01) -> None:
        super().__init__(save_inputs_for_backward=True, name="leaky_relu")
        self.slope = slope

    def forward(self, x):
        xp = array_module(x)
        return xp.where(x > 0, x, self.slope * x)

    def backward(self, d_y, compute_gradients, x):
        xp = array_module(x)
        return xp.where(x > 0, d_y, self.slope * d_y)


class Huber(DifferentiableFunction):
    """Huber loss per element, with a learnable threshold ``delta > 0``."""

    def __init__(self) -> None:
        super().__init__(save_inputs_for_backward=True, name="huber")

    def forward(self, x, delta):
        xp = array_module(x)
        small = xp.abs(x) <= delta
        return xp.where(small, 0.5 * x * x, delta * (xp.abs(x) - 0.5 * delta))

    def backward(self, d_y, compute_gradients, x, delta):
        xp = array_module(x)
        small = xp.abs(x) <= delta
        d_x = d_delta = None
        if compute_gradients[0]:
            d_x = d_y * xp.where(small, x, delta * xp.sign(x))
        if compute_gradients[1]:
            d_delta = d_y * xp.where(small, 0.0, xp.abs(x) - delta)
        return d_x, d_delta


class Abs(DifferentiableFunction):
    def __init__(self) -> None:
        super().__init__(save_inputs_for_backward=True, name="abs")

    def forward(self, x):
        xp = array_module(x)
        return xp.abs(x)

    def backward(self, d_y, compute_gradients, x):
        xp = array_module(x)
        return d_y * xp.sign(x)


class Clip(DifferentiableFunction):
    """``clip(x, lo, hi)`` with gradients for the bounds too (``lo < hi``)."""

    def __init__(self) -> None:
        super().__init__(save_inputs_for_backward=True, name="clip")

    def forward(self, x, lo, hi):
        xp = array_module(x)
        return xp.clip(x, lo, hi)

    def backward(self, d_y, compute_gradients, x, lo, hi):
        inside = (x >= lo) & (x <= hi)
        return d_y * inside, d_y * (x < lo), d_y * (x > hi)


# --- planted bugs: mutants of an op's real backward ---------------------------------------


class AbsRatio(DifferentiableFunction):
    """The classic d|x| = x / |x|: 0/0 at x == 0 (numpy gives nan there)."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return np.abs(x)

    def backward(self, d_y, compute_gradients, x):
        return d_y * x / np.abs(x)


def mutant(base: type, name: str, old: str, new: str, method: str = "backward") -> type:
    """A subclass of ``base`` whose ``method`` is ``base``'s source with ``old`` replaced by
    ``new`` (exactly one occurrence): a planted bug in the op's real code.

    The mutated source is registered with ``linecache`` under a ``<mutant ...>`` name,
    as IPython does for notebook cells, so it has source for the translator and runs
    as real numpy code for the numeric confirmation.
    """
    source = textwrap.dedent(inspect.getsource(getattr(base, method)))
    count = source.count(old)
    assert count == 1, f"{base.__name__}.{method}: {old!r} occurs {count} times; update {name}"
    body = textwrap.indent(source.replace(old, new), "    ")
    text = f"class {name}(_base):\n{body}"
    filename = f"<mutant {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = dict(getattr(base, method).__globals__, _base=base)
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


# --- numeric confirmation of counterexamples ---------------------------------------------


def _arrays(point: dict[str, float], names: list[str], shape: tuple[int, ...]) -> list[Any]:
    return [np.full(shape, point[n], dtype=np.float64) for n in names]


def _loss(op: Any, arrays: list[Any], seed: Any) -> float:
    outputs, _ = op.op_forward(*arrays)
    return float(np.sum(seed * outputs[0]))


def backward_at(op: Any, report: Any, point: dict[str, float], shape=(1,)) -> list[float]:
    """The op's real backward at ``point`` (one value per input)."""
    arrays = _arrays(point, list(report.inputs), shape)
    seed = np.full(shape, point[report.seeds[0]])
    _, saved = op.op_forward(*arrays)
    grads = op.op_backward((seed,), (True,) * len(arrays), saved)
    return [float(np.ravel(g)[0]) for g in grads]


def derivative_at(
    op: Any, report: Any, point: dict[str, float], name: str, shape=(1,), side: int = 0
) -> float:
    """Finite difference of ``sum(seed * op(inputs))`` in ``name`` at ``point``: central
    (``side=0``) or one-sided (``side=+1`` / ``-1``)."""
    names = list(report.inputs)
    seed = np.full(shape, point[report.seeds[0]])
    h = 1e-6

    def at(offset: float) -> float:
        moved = dict(point)
        moved[name] = point[name] + offset
        return _loss(op, _arrays(moved, names, shape), seed)

    if side == 0:
        return (at(h) - at(-h)) / (2 * h)
    return (at(side * h) - at(0.0)) / (side * h)


def confirm_region_counterexample(op: Any, report: Any, check: Any, shape=(1,)) -> None:
    """The counterexample of a failed region check is a real difference: central finite
    differences of the op's forward give the report's expected value, the op's backward
    gives the report's backward value, and the two differ."""
    point = check.counterexample
    assert point is not None, f"{check.input} in {check.region}: no counterexample"
    k = list(report.inputs).index(check.input)
    numeric = derivative_at(op, report, point, check.input, shape)
    backward = backward_at(op, report, point, shape)[k]
    scale = 1 + abs(numeric)
    assert abs(numeric - check.expected_value) < 1e-5 * scale, (numeric, check)
    assert abs(backward - check.got_value) < 1e-9 * scale, (backward, check)
    assert abs(numeric - backward) > 1e-3 * scale, (numeric, backward, check)


def tie_slope(
    op: Any, report: Any, point: dict[str, float], direction: dict[str, float], shape=(1,)
):
    """Central finite difference of ``sum(seed * op(inputs))`` at ``point`` along
    ``direction`` (input name -> how much it moves)."""
    names = list(report.inputs)
    seed = np.full(shape, point[report.seeds[0]])
    h = 1e-6

    def at(step: float) -> float:
        moved = {n: v + step * direction.get(n, 0.0) for n, v in point.items()}
        return _loss(op, _arrays(moved, names, shape), seed)

    return (at(h) - at(-h)) / (2 * h)


def confirm_joint_kink_counterexample(op: Any, report: Any, kink: Any, shape=(1,)) -> None:
    """The counterexample of a joint kink check (inputs on different sides of one kink)
    is real: moving those inputs together along the boundary (``x = t``: x and t by the
    same amount), the op's backward gives another slope than finite differences of its
    forward do. (A gradient from one side, or one mix of both, gives the same slope
    along the boundary as the forward.)"""
    import sympy as sp

    point = kink.counterexample
    assert point is not None, f"kink {kink.boundary}: no counterexample"
    lhs, rhs = (sp.sympify(side) for side in kink.boundary.split(" = "))
    names = kink.input.split(", ")
    direction = {n: 1.0 for n in names if n != str(lhs)}
    direction[str(lhs)] = float(sum(sp.diff(rhs, sp.Symbol(n)) for n in direction))
    grads = backward_at(op, report, point, shape)
    along = sum(grads[list(report.inputs).index(n)] * v for n, v in direction.items())
    numeric = tie_slope(op, report, point, direction, shape)
    assert abs(along - numeric) > 1e-3 * (1 + abs(numeric)), (along, numeric, kink)


def confirm_kink_counterexample(op: Any, report: Any, kink: Any, shape=(1,)) -> None:
    """The counterexample of an invalid kink lies on the boundary, and the op's backward
    there is outside the interval of the one-sided finite differences (for a joint
    check: see :func:`confirm_joint_kink_counterexample`)."""
    if ", " in kink.input:
        confirm_joint_kink_counterexample(op, report, kink, shape)
        return
    point = kink.counterexample
    assert point is not None, f"kink {kink.boundary}: no counterexample"
    k = list(report.inputs).index(kink.input)
    left = derivative_at(op, report, point, kink.input, shape, side=-1)
    right = derivative_at(op, report, point, kink.input, shape, side=+1)
    value = backward_at(op, report, point, shape)[k]
    low, high = min(left, right), max(left, right)
    assert value < low - 1e-3 or value > high + 1e-3, (value, left, right, kink)
