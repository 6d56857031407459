"""The "GPU" category of ``check_op``: the same op on cupy arrays, when there is a GPU.

The op runs forward and backward on the CPU (numpy, float64) and on the GPU (cupy,
the same values); outputs and gradients must be cupy arrays and agree with the CPU
ones. Without cupy or a CUDA device the entry says so and is skipped.

>>> import numpy as np
>>> from autodiff_tutor.ops import PReLUFunction
>>> entry = gpu_entry(PReLUFunction("BC"), (np.ones((2, 2)), np.ones((1, 2))), (True, True),
...                   np.random.default_rng(0))
>>> entry.status in ("passed", "skipped")
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.ops.function import is_array
from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.verify.numeric.common import cast_inputs, describe, random_like
from autodiff_tutor.verify.numeric.report import CheckEntry

__all__ = ["gpu_entry", "gpu_unavailable_reason"]


def gpu_unavailable_reason() -> str | None:
    """Why there is no GPU to check on, or ``None`` when cupy sees a CUDA device.

    >>> gpu_unavailable_reason() is None or gpu_unavailable_reason().startswith("no GPU")
    True
    """
    try:
        import cupy
    except ImportError:
        return "no GPU: cupy is not installed"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver or a broken install: both mean no GPU
        return f"no GPU: cupy cannot reach a CUDA device ({describe(exc)})"
    return None if count > 0 else "no GPU: cupy sees no CUDA device"


def gpu_entry(
    op: Any, inputs: tuple[Any, ...], flags: tuple[bool, ...], rng: np.random.Generator
) -> CheckEntry:
    """Run ``op`` on cupy copies of numpy ``inputs`` and compare with the CPU (see the module)."""
    reason = gpu_unavailable_reason()
    if reason is not None:
        return CheckEntry("GPU", "skipped", reason)
    if any(is_array(x) and array_module(x) is not np for x in inputs):
        return CheckEntry("GPU", "skipped", "the GPU pass starts from numpy inputs")
    import cupy

    cpu_inputs = cast_inputs(inputs, "float64")
    gpu_inputs = tuple(cupy.asarray(x) if is_array(x) else x for x in cpu_inputs)
    try:
        cpu_out, cpu_saved = op.op_forward(*cpu_inputs)
        d_outputs = tuple(random_like(y, rng) for y in cpu_out)
        cpu_grads = op.op_backward(d_outputs, flags, cpu_saved)
        gpu_out, gpu_saved = op.op_forward(*gpu_inputs)
        gpu_grads = op.op_backward(tuple(cupy.asarray(d) for d in d_outputs), flags, gpu_saved)
    except Exception as exc:  # the user's code on cupy: report whatever it raises
        return CheckEntry("GPU", "failed", f"on cupy arrays: {describe(exc)}")
    problems = []
    pairs = [("output", k, c, g) for k, (c, g) in enumerate(zip(cpu_out, gpu_out, strict=True))]
    pairs += [
        ("gradient", k, c, g) for k, (c, g) in enumerate(zip(cpu_grads, gpu_grads, strict=True))
    ]
    for what, k, c, g in pairs:
        if c is None and g is None:
            continue
        if not isinstance(g, cupy.ndarray):
            problems.append(f"{what} {k} is a {type(g).__name__}, not a cupy array")
        elif not np.allclose(cupy.asnumpy(g), np.asarray(c), rtol=1e-9, atol=1e-12):
            problems.append(f"{what} {k} differs between GPU and CPU")
    if problems:
        return CheckEntry("GPU", "failed", "\n".join(problems))
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    return CheckEntry("GPU", "passed", f"forward and backward on cupy ({device}) match the CPU")
