"""Where the time of the ``mlp`` rows goes: matrix products against the rest.

``python -m benchmarks.mlp_parts [SIZE ...]`` (default ``issue-small issue-large``)
times, on one core, the hand-written value and gradient of ``workloads.mlp``, its five
matrix products alone (numpy), and, where jax is importable, jax's ``jit`` of the whole
call and of the same five products alone (median of 7 repeats). Where numpy's products
alone take longer than jax's whole call, no fusion around them catches jax up on that
row: what is left is the BLAS library.

Run it with one BLAS thread and pinned, as the suite is::

    OPENBLAS_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false \\
    intra_op_parallelism_threads=1" taskset -c 1 python -m benchmarks.mlp_parts

>>> parts = numpy_parts("tiny", repeat=1)
>>> sorted(parts) == ["X @ W1", "X.T @ d_pre", "d_z @ W2.T", "h @ W2", "h.T @ d_z", "whole"]
True
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks import blas, handwritten
from benchmarks.workloads import WORKLOADS, with_numpy


def seconds(call: Callable[[], Any], repeat: int = 7) -> float:
    """Median seconds per call, each repeat at least 20 ms of calls."""
    times = []
    for _ in range(repeat):
        number = 1
        while True:
            start = time.perf_counter()
            for _ in range(number):
                call()
            elapsed = time.perf_counter() - start
            if elapsed > 0.02:
                break
            number *= 2
        times.append(elapsed / number)
    return statistics.median(times)


def _products(W1: Any, W2: Any, X: Any, h: Any, d_z: Any, d_pre: Any) -> dict[str, Any]:
    return {
        "X @ W1": lambda: X @ W1,
        "h @ W2": lambda: h @ W2,
        "d_z @ W2.T": lambda: d_z @ W2.T,
        "h.T @ d_z": lambda: h.T @ d_z,
        "X.T @ d_pre": lambda: X.T @ d_pre,
    }


def _inputs(size: str) -> tuple[Any, ...]:
    W1, b1, W2, b2, X, Y = WORKLOADS["mlp"].make_args(np.random.default_rng(0), size)
    h = np.tanh(X @ W1 + b1)
    return W1, b1, W2, b2, X, Y, h, np.ones((X.shape[0], W2.shape[1])), np.ones_like(h)


def numpy_parts(size: str, repeat: int = 7) -> dict[str, float]:
    """Seconds of the hand-written call (``whole``) and of each of its products."""
    W1, b1, W2, b2, X, Y, h, d_z, d_pre = _inputs(size)
    parts = {"whole": seconds(lambda: handwritten.mlp(W1, b1, W2, b2, X, Y), repeat)}
    for name, call in _products(W1, W2, X, h, d_z, d_pre).items():
        parts[name] = seconds(call, repeat)
    return parts


def jax_parts(size: str, repeat: int = 7) -> dict[str, float]:
    """Seconds of jax's jitted value and gradient (``whole``) and of its five products
    jitted alone (``products``)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    W1, b1, W2, b2, X, Y, h, d_z, d_pre = (jnp.asarray(a) for a in _inputs(size))
    both = jax.jit(jax.value_and_grad(with_numpy(WORKLOADS["mlp"].fn, jnp), argnums=(0, 1, 2, 3)))
    products = jax.jit(lambda *a: tuple(p() for p in _products(*a).values()))
    return {
        "whole": seconds(lambda: jax.block_until_ready(both(W1, b1, W2, b2, X, Y)), repeat),
        "products": seconds(
            lambda: jax.block_until_ready(products(W1, W2, X, h, d_z, d_pre)), repeat
        ),
    }


def main(sizes: list[str]) -> None:
    """Print, per size, the parts' times and their share of the hand-written call."""
    print(blas.describe(blas.kernel()))
    for size in sizes:
        parts = numpy_parts(size)
        whole = parts.pop("whole")
        products = sum(parts.values())
        print(f"mlp {size}: hand-written {whole * 1e3:.3f} ms")
        print(f"  numpy's products alone {products * 1e3:.3f} ms ({products / whole:.2f})")
        print("   ", ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in parts.items()))
        print(f"  the rest {(whole - products) * 1e3:.3f} ms ({1 - products / whole:.2f})")
        try:
            jaxed = jax_parts(size)
        except ImportError:
            continue
        print(
            f"  jax jit: whole {jaxed['whole'] * 1e3:.3f} ms ({jaxed['whole'] / whole:.2f}), "
            f"its products alone {jaxed['products'] * 1e3:.3f} ms "
            f"({jaxed['products'] / whole:.2f})"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["issue-small", "issue-large"])
