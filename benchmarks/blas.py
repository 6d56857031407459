"""The matrix products of the large ``mlp`` and ``rnn`` rows, numpy against torch.

``python -m benchmarks.blas`` times, with one thread each, the products that dominate
those rows (the forward's ``X @ W1`` and the backward's ``X.T @ d``) in numpy (the BLAS
numpy was built with) and in torch (its own BLAS). Where torch eager is ahead of the
hand-written numpy code on those rows, this shows how much of the lead is the matrix
product kernel alone, which no numpy code, generated or hand-written, can change.

>>> rows = time_products(repeat=1, shapes={"tiny": ((4, 3), (3, 2))})
>>> [(row.name, row.numpy > 0) for row in rows]
[('tiny: A @ B', True), ('tiny: A.T @ C', True)]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks import THREAD_VARIABLES

#: (left, right) shapes of the dominant product of each large row.
SHAPES = {
    "mlp large (X @ W1)": ((512, 256), (256, 512)),
    "mlp issue-large (X @ W1)": ((2048, 784), (784, 512)),
    "rnn large (h @ Wh)": ((64, 256), (256, 256)),
}


#: OpenBLAS reads its kernel (CPU type) from this variable, when set, instead of detecting
#: the CPU: an older kernel than the CPU's makes every numpy matrix product slower.
KERNEL_VARIABLE = "OPENBLAS_CORETYPE"

_ARCHITECTURE = (
    "import numpy, threadpoolctl;"
    "print(next((i.get('architecture') or '' for i in threadpoolctl.threadpool_info()"
    " if i['user_api'] == 'blas'), ''))"
)


def kernel() -> dict[str, str]:
    """numpy's BLAS and the kernel it runs: ``library``, ``version``, ``architecture``,
    and where :data:`KERNEL_VARIABLE` chooses the kernel, ``set_by`` and ``detected``
    (the kernel OpenBLAS picks for this CPU, read in a process without the variable).
    Empty where threadpoolctl (in the ``bench`` extra) is not installed.

    >>> sorted(kernel()) in ([], ["architecture", "library", "version"],
    ...                      ["architecture", "detected", "library", "set_by", "version"])
    True
    """
    import numpy  # noqa: F401  (threadpoolctl sees only the libraries loaded)

    try:
        import threadpoolctl
    except ImportError:
        return {}
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        return {}
    found = {
        "library": blas[0]["internal_api"],
        "version": blas[0].get("version") or "",
        "architecture": blas[0].get("architecture") or "",
    }
    if os.environ.get(KERNEL_VARIABLE):
        free = {k: v for k, v in os.environ.items() if k != KERNEL_VARIABLE}
        detected = subprocess.run(
            [sys.executable, "-c", _ARCHITECTURE], env=free, capture_output=True, text=True
        )
        found["set_by"] = f"{KERNEL_VARIABLE}={os.environ[KERNEL_VARIABLE]}"
        found["detected"] = detected.stdout.strip()
    return found


def describe(found: dict[str, str]) -> str:
    """One sentence for a report: the library, its kernel and who chose it.

    >>> print(describe({"library": "openblas", "version": "0.3.31", "architecture": "Haswell",
    ...                 "set_by": "OPENBLAS_CORETYPE=Haswell", "detected": "SkylakeX"}))
    ... # doctest: +NORMALIZE_WHITESPACE
    BLAS: openblas 0.3.31, Haswell kernel, set by OPENBLAS_CORETYPE=Haswell (on this CPU
    OpenBLAS picks SkylakeX: numpy's matrix products are slower than they would be).
    """
    if not found:
        return "BLAS kernel not known (threadpoolctl is not installed)."
    text = f"BLAS: {found['library']} {found['version']}, {found['architecture']} kernel"
    if "set_by" not in found:
        return text + ", as OpenBLAS picks for this CPU."
    text += f", set by {found['set_by']}"
    if found["detected"] and found["detected"] != found["architecture"]:
        text += (
            f" (on this CPU OpenBLAS picks {found['detected']}: numpy's matrix products are "
            "slower than they would be)"
        )
    return text + "."


@dataclass
class Row:
    """Seconds per product in numpy and in torch (``None``: torch is not installed)."""

    name: str
    numpy: float
    torch: float | None


#: The two products timed: the forward's and the backward's (with the gradient ``C``).
_PRODUCTS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "A @ B": lambda A, B, C: A @ B,
    "A.T @ C": lambda A, B, C: A.T @ C,
}


def _best(multiply: Callable[..., Any], arrays: list[Any], repeat: int) -> float:
    multiply(*arrays)
    times = []
    for _ in range(repeat):
        start = time.process_time()
        multiply(*arrays)
        times.append(time.process_time() - start)
    return min(times)


def time_products(repeat: int = 7, shapes: dict[str, Any] | None = None) -> list[Row]:
    """For each shape pair, ``A @ B`` and ``A.T @ C`` (the backward's product with the
    gradient ``C`` of ``A @ B``) in numpy and torch: the best of ``repeat`` CPU times.
    numpy is imported here, after :func:`main` set the thread count."""
    import numpy as np

    try:
        import torch
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    rows = []
    for name, (left, right) in (shapes or SHAPES).items():
        arrays = [rng.normal(size=left), rng.normal(size=right)]
        arrays.append(rng.normal(size=(left[0], right[1])))
        label = name.split(" (")[0]
        on_torch = [torch.from_numpy(v) for v in arrays] if torch else None
        for product, multiply in _PRODUCTS.items():
            seconds = _best(multiply, arrays, repeat)
            other = _best(multiply, on_torch, repeat) if on_torch else None
            rows.append(Row(f"{label}: {product}", seconds, other))
    return rows


def main() -> None:
    """Print the table (one BLAS thread unless the environment says otherwise)."""
    for variable in THREAD_VARIABLES:
        os.environ.setdefault(variable, "1")
    try:
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    except ImportError:
        pass
    print("| product | numpy | torch | torch / numpy |")
    print("|---|---|---|---|")
    for row in time_products():
        other = f"{row.torch * 1e3:.2f} ms" if row.torch is not None else "not installed"
        ratio = f"{row.torch / row.numpy:.2f}" if row.torch is not None else ""
        print(f"| {row.name} | {row.numpy * 1e3:.2f} ms | {other} | {ratio} |")


if __name__ == "__main__":
    main()
