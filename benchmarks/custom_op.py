"""Where ``srelu_net``'s time goes: the op, the chain rule around it, the machinery.

``python -m benchmarks.custom_op [SIZE] [REPEATS]`` (default ``small 25``) times, one
after another in each repeat (interleaved: a shared machine's load hits all alike):

- ``hand-written (fused)``: the benchmark's baseline, SReLU written inline as masks
  (:func:`benchmarks.handwritten.srelu_net`);
- ``hand-written (op's methods)``: the chain rule written by hand around the custom
  op's own ``forward`` and ``backward`` (:func:`op_calling`), what a user of the op
  without automatic differentiation would write;
- ``autodiff_tutor``: ``value_and_grad`` of the workload (its pair specialized on the
  shapes, which calls the same two methods);
- ``generated pair``: that specialized forward and backward alone, without
  ``value_and_grad``'s call around them.

It prints the median time per call and the ratios to the first two. The gradients of
all four are checked against each other first.

>>> import numpy as np
>>> from benchmarks.workloads import WORKLOADS
>>> args = WORKLOADS["srelu_net"].make_args(np.random.default_rng(0), "tiny")
>>> from benchmarks.handwritten import HANDWRITTEN
>>> fused, by_op = HANDWRITTEN["srelu_net"](*args), op_calling(*args)
>>> bool(np.isclose(fused[0], by_op[0]))
True
>>> all(np.allclose(a, b) for a, b in zip(fused[1], by_op[1]))
True
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

import numpy as np

from autodiff_tutor import differentiable, value_and_grad
from benchmarks.handwritten import HANDWRITTEN
from benchmarks.workloads import SRELU, WORKLOADS, srelu_net

_ALL = (True,) * 5


def op_calling(W1, b1, tl, al, tr, ar, W2, X, Y) -> tuple[Any, tuple[Any, ...]]:
    """Value and gradients of ``srelu_net``, the chain rule by hand around the op's own
    ``forward`` and ``backward``."""
    batch = X.shape[0]
    z = X @ W1 + b1
    a, left, right = SRELU.forward(z, tl, al, tr, ar)
    r = a @ W2 - Y
    value = np.sum(r * r) / batch
    d_r = (2.0 / batch) * r
    d_W2 = a.T @ d_r
    d_a = d_r @ W2.T
    d_z, d_tl, d_al, d_tr, d_ar = SRELU.backward(d_a, _ALL, z, tl, al, tr, ar, left, right)
    return value, (X.T @ d_z, d_z.sum(axis=0), d_tl, d_al, d_tr, d_ar, d_W2)


def main(size: str = "small", repeats: int = 25) -> None:
    args = WORKLOADS["srelu_net"].make_args(np.random.default_rng(0), size)
    compiled = differentiable(srelu_net)
    both = value_and_grad(compiled, wrt=list(range(7)))
    both(*args), both(*args)  # the second call makes the specialized pair
    pair = compiled.derivative(list(range(7))).specializations[_key(args)]

    def generated() -> tuple[Any, Any]:
        out, memory = pair.forward(*args)
        return out, pair.backward(pair.seed, memory)

    systems = {
        "hand-written (fused)": lambda: HANDWRITTEN["srelu_net"](*args),
        "hand-written (op's methods)": lambda: op_calling(*args),
        "autodiff_tutor": lambda: both(*args),
        "generated pair": generated,
    }
    reference = op_calling(*args)[1]
    for name, run in systems.items():
        for got, expected in zip(run()[1], reference, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-10, err_msg=name)
    calls = 400 if size in ("tiny", "small") else 5
    seconds: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(repeats):
        for name, run in systems.items():
            start = time.process_time()
            for _ in range(calls):
                run()
            seconds[name].append((time.process_time() - start) / calls)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    fused, by_op = medians["hand-written (fused)"], medians["hand-written (op's methods)"]
    print(f"srelu_net {size}, median of {repeats} x {calls} calls, process time")
    print("| system | per call | / fused | / op's methods |\n|---|---|---|---|")
    for name, value in medians.items():
        print(f"| {name} | {value * 1e6:.1f} µs | {value / fused:.2f} | {value / by_op:.2f} |")


def _key(args: tuple[Any, ...]) -> tuple[Any, ...]:
    from autodiff_tutor.compiler.specialize.probe import guard_key

    return guard_key(args)


if __name__ == "__main__":
    main(*(sys.argv[1:2] or ["small"]), *(int(a) for a in sys.argv[2:3]))
