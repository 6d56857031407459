"""Record a generated backward as it runs: each executed line and the gradients after it.

``sys.settrace`` is switched on for the backward's own frame only (helpers it calls
run untraced), so loops show every iteration and branches show the side taken.
After each executed line the ``d_*`` variables are copied, so a later step cannot
change what an earlier one shows. The previous trace function (a debugger, a
coverage tool) is put back afterwards.

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> @differentiable
... def f(x):
...     return np.sum(x * x)
>>> derivative = f.derivative()
>>> out, memory = derivative.forward(np.array([1.0, 2.0]))
>>> recording = record_backward(derivative.backward, np.float64(1.0), memory)
>>> [step.number for step in recording.steps]
[2, 3, 4, 5]
>>> recording.steps[2].changed, recording.steps[2].gradients["d_x"].tolist()
(('d_x',), [2.0, 4.0])
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BackwardRecording", "ExecutedLine", "record_backward"]


@dataclass(frozen=True)
class ExecutedLine:
    """One executed line: its 1-based number in the backward's source (the ``def`` is
    line 1), the gradient variables after it ran, and the names it changed."""

    number: int
    gradients: dict[str, Any]
    changed: tuple[str, ...]


@dataclass
class BackwardRecording:
    """Every line the backward executed, in order, and what it returned."""

    steps: list[ExecutedLine] = field(default_factory=list)
    result: Any = None
    truncated: bool = False


def _snapshot(value: Any) -> Any:
    if isinstance(value, list):
        return [_snapshot(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_snapshot(v) for v in value)
    copy = getattr(value, "copy", None)
    return copy() if callable(copy) and hasattr(value, "shape") else value


def _equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "shape"):
        if a.shape != b.shape:
            return False
        from autodiff_tutor.runtime.backend import array_module

        xp = array_module(a)
        return bool(xp.all((a == b) | ((a != a) & (b != b))))
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:  # objects without a usable ==: treat as changed
        return False


def _gradients(frame_locals: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in frame_locals.items() if k.startswith("d_")}


def record_backward(
    backward: Callable[..., Any], *args: Any, max_steps: int = 5000
) -> BackwardRecording:
    """Run ``backward(*args)`` and record its executed lines (at most ``max_steps``;
    ``truncated`` says when there were more). See the module docstring."""
    code = backward.__code__
    recording = BackwardRecording()
    state: dict[str, Any] = {"line": None, "raw": {}, "copies": {}}

    def record(frame: Any) -> None:
        if state["line"] is None:
            return
        if len(recording.steps) >= max_steps:
            recording.truncated = True
            return
        raw = _gradients(frame.f_locals)
        copies = {k: _snapshot(v) for k, v in raw.items()}
        changed = tuple(
            k
            for k in raw
            if k not in state["raw"]
            or raw[k] is not state["raw"][k]
            or not _equal(copies[k], state["copies"][k])
        )
        number = state["line"] - code.co_firstlineno + 1
        recording.steps.append(ExecutedLine(number, copies, changed))
        state["raw"], state["copies"] = raw, copies

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event in ("line", "return"):
            record(frame)
            state["line"] = frame.f_lineno if event == "line" else None
        return local

    def start(frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code is code:
            state["raw"] = _gradients(frame.f_locals)
            state["copies"] = {k: _snapshot(v) for k, v in state["raw"].items()}
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(start)
    try:
        recording.result = backward(*args)
    finally:
        sys.settrace(previous)
    return recording
