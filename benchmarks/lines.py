"""Line-level timing of the code ``autodiff_tutor`` generates for a workload.

``python -m benchmarks.lines WORKLOAD [SIZE] [CALLS]`` prints the generated forward
and backward (the pair specialized on the arguments' shapes where there is one: what
``value_and_grad`` runs from its second call), then the seconds spent on each of their
statements (summed over the iterations of loops), the median over ``CALLS`` calls. It
is the tool for finding which generated line costs what (each statement timer adds
about 0.1 µs per statement run; use ``OPENBLAS_NUM_THREADS=1`` for steady matrix
products).

The generated functions are recompiled from their source with a timer around every
simple statement, in the same namespace (the runtime helpers, the user's globals and
closure values), so they compute exactly what the originals compute.

>>> profile = profile_lines("rosenbrock", "tiny", calls=2)
>>> [part.name for part in profile]
['forward', 'backward']
>>> any(line.startswith("d_x") for line, _ in profile[1].lines)  # the gradient of x
True
"""

from __future__ import annotations

import ast
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor import differentiable
from autodiff_tutor.api.arguments import scalar_seed
from autodiff_tutor.compiler.emit import RUNTIME
from autodiff_tutor.compiler.specialized import specialized_pair
from benchmarks.workloads import WORKLOADS

_COMPOUND = (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.Return, ast.FunctionDef)


@dataclass
class Part:
    """One generated function: its source and the seconds per call of each statement."""

    name: str
    source: str
    lines: list[tuple[str, float]]


class _Timers(ast.NodeTransformer):
    """Put ``start = clock()`` / ``spent[k] += clock() - start`` around simple statements."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(node, ast.Module) or not isinstance(body, list):
                continue
            timed: list[ast.stmt] = []
            for statement in body:
                if isinstance(statement, _COMPOUND):
                    timed.append(statement)
                    continue
                k = len(self.statements)
                self.statements.append(ast.unparse(statement).splitlines()[0])
                timed += [
                    ast.parse(f"__start{k} = __clock()").body[0],
                    statement,
                    ast.parse(f"__spent[{k}] += __clock() - __start{k}").body[0],
                ]
            setattr(node, field, timed)
        return node


def _timed(
    fn: Callable[..., Any], source: str
) -> tuple[Callable[..., Any], list[str], list[float]]:
    timers = _Timers()
    tree = ast.fix_missing_locations(timers.visit(ast.parse(source)))
    spent = [0.0] * len(timers.statements)
    scope = {**fn.__globals__, **RUNTIME, "__clock": time.perf_counter, "__spent": spent}
    cells = fn.__closure__ or ()
    scope.update({n: c.cell_contents for n, c in zip(fn.__code__.co_freevars, cells, strict=True)})
    exec(compile(tree, f"<timed {fn.__name__}>", "exec"), scope)  # noqa: S102 - generated code
    return scope[fn.__name__], timers.statements, spent


def profile_lines(name: str, size: str = "large", calls: int = 10) -> list[Part]:
    """Per-statement seconds per call of the generated forward and backward of ``name``."""
    workload = WORKLOADS[name]
    args = workload.make_args(np.random.default_rng(0), size)
    compiled = differentiable(workload.fn)
    derivative = compiled.derivative(list(workload.wrt))
    # what value_and_grad runs from its second call: the pair specialized on the
    # arguments' shapes where there is one, else the general pair
    pair = specialized_pair(derivative, args) or derivative
    forward, forward_lines, forward_spent = _timed(pair.forward, pair.forward_source)
    backward, backward_lines, backward_spent = _timed(pair.backward, pair.backward_source)
    forward_calls, backward_calls = [], []
    for _ in range(calls):
        forward_spent[:] = [0.0] * len(forward_spent)
        backward_spent[:] = [0.0] * len(backward_spent)
        out, memory = forward(*args)
        backward(scalar_seed(compiled, out), memory)
        forward_calls.append(list(forward_spent))
        backward_calls.append(list(backward_spent))
    return [
        Part("forward", pair.forward_source, _medians(forward_lines, forward_calls)),
        Part("backward", pair.backward_source, _medians(backward_lines, backward_calls)),
    ]


def _medians(lines: list[str], calls: list[list[float]]) -> list[tuple[str, float]]:
    """Each statement's median over the calls (robust to the odd preempted call)."""
    return [(line, statistics.median(c[k] for c in calls)) for k, line in enumerate(lines)]


def main(argv: list[str] | None = None) -> None:
    """Print the generated code and its per-line costs (µs per call)."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in WORKLOADS:
        raise SystemExit(
            f"usage: python -m benchmarks.lines {{{','.join(WORKLOADS)}}} [SIZE] [CALLS]"
        )
    name, size = argv[0], argv[1] if len(argv) > 1 else "large"
    calls = int(argv[2]) if len(argv) > 2 else 10
    parts = profile_lines(name, size, calls)
    for part in parts:
        print(part.source, end="\n\n")
    for part in parts:
        total = sum(seconds for _, seconds in part.lines)
        print(f"== {part.name}: {total * 1e6:.1f} µs per call (statements timed one by one)")
        for line, seconds in part.lines:
            print(f"{seconds * 1e6:12.1f} µs  {line[:100]}")


if __name__ == "__main__":
    main()
