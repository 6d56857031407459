"""The systems timed on each workload, behind one small interface.

A :class:`System` prepares a zero-argument ``call`` for a workload and its inputs
(everything that is not per-call work happens in ``prepare``: wrapping, input
conversion), and says how to read ``(value, gradients)`` out of what the call
returns, as numpy. Libraries that are not installed are *missing*, not failed.

- ``forward``: the workload's plain function (the cost of the value alone);
- ``hand-written``: :mod:`benchmarks.handwritten`, the speed to reach;
- ``autodiff_tutor``: the compiler's ``value_and_grad`` (compiled once, cached call);
- ``tracing``: ``autodiff_tutor.tracing.value_and_gradient`` (operator overloading);
- ``tangent-ad``, ``autograd``, ``jax``, ``torch``: when importable (jax with ``jax.jit`` where the
  workload allows it, float64 everywhere). A system that cannot sensibly run a
  workload raises :class:`Skipped` with the reason.

>>> from benchmarks.workloads import WORKLOADS
>>> w = WORKLOADS["rosenbrock"]
>>> args = w.make_args(np.random.default_rng(0), "tiny")
>>> prepared = SYSTEMS["autodiff_tutor"].prepare(w, args)
>>> value, (dx,) = prepared.unpack(prepared.call())
>>> dx.shape
(6,)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np

import autodiff_tutor
from autodiff_tutor import differentiable, tracing, value_and_grad
from benchmarks.handwritten import HANDWRITTEN
from benchmarks.workloads import Workload, with_numpy

Result = tuple[Any, tuple[Any, ...] | None]


class Skipped(Exception):
    """This system does not run this workload (the message says why); not a failure."""


@dataclass
class Prepared:
    """A ready-to-time call, how to read its result, and how it runs (``mode``)."""

    call: Callable[[], Any]
    unpack: Callable[[Any], Result]
    mode: str = ""
    tracks_memory: bool = True


def _plain(result: Any) -> Result:
    value, gradients = result
    return value, tuple(gradients)


class System:
    """One way of computing a workload's value (and gradient)."""

    name = ""
    module = ""  # the library to import; empty for systems that are always there
    gradient = True  # False for the plain forward

    def version(self) -> str | None:
        """The library's version, or ``None`` when it is not installed."""
        if not self.module:
            return autodiff_tutor.__version__
        try:
            importlib.import_module(self.module)
        except ImportError:
            return None
        try:
            return metadata.version(self.module)
        except metadata.PackageNotFoundError:
            return "installed"

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        """A call of this system on ``workload`` with inputs ``args``."""
        raise NotImplementedError


class Forward(System):
    name = "forward"
    gradient = False

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        fn = workload.fn
        return Prepared(lambda: fn(*args), lambda value: (value, None))


class HandWritten(System):
    name = "hand-written"

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        fn = HANDWRITTEN[workload.name]
        return Prepared(lambda: fn(*args), _plain)


class Compiled(System):
    name = "autodiff_tutor"

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        both = value_and_grad(workload.fn, wrt=list(workload.wrt))
        return Prepared(lambda: both(*args), _plain, mode="compiled")


class Tracing(System):
    name = "tracing"

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        fn, wrt = workload.fn, list(workload.wrt)
        return Prepared(
            lambda: tracing.value_and_gradient(fn, *args, wrt=wrt), _plain, mode="traced"
        )


class Autograd(System):
    name = "autograd"
    module = "autograd"

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        import autograd
        import autograd.numpy as anp

        both = autograd.value_and_grad(with_numpy(workload.shared_fn, anp), argnum=workload.wrt)
        return Prepared(lambda: both(*args), _plain, mode="traced")


class TangentAD(System):
    """tangent-ad: source-to-source AD like ours, through its own generated code (the
    gradient with the value kept, ``preserve_result=True``); functions with a custom op
    are outside what it reads."""

    name = "tangent-ad"
    module = "tangent"

    def version(self) -> str | None:
        try:
            return metadata.version("tangent-ad")
        except metadata.PackageNotFoundError:
            return None

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        import tangent

        if workload.name == "srelu_net":
            raise Skipped("a custom op (DifferentiableFunction) has no tangent-ad rule")
        both = tangent.grad(workload.fn, wrt=tuple(workload.wrt), preserve_result=True, verbose=0)

        def unpack(result: Any) -> Result:
            *gradients, value = result
            return value, tuple(gradients)

        return Prepared(lambda: both(*args), unpack, mode="compiled")


class Fused(System):
    """``value_and_grad(..., backend="numba")``: the specialized pair as numba loops
    (made at the second call; a pair that cannot be lowered runs as numpy code, and
    the mode says so)."""

    name = "fused"
    module = "numba"

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        both = value_and_grad(workload.fn, wrt=list(workload.wrt), backend="numba")
        both(*args), both(*args)  # specialized and compiled: its note says how it runs
        compiled = differentiable(workload.fn, backend="numba")
        pairs = compiled.derivative(list(workload.wrt)).specializations.values()
        notes = {p.fused_note for p in pairs if p is not None}
        mode = "fused" if notes == {"fused by numba"} else "numpy (not fused)"
        return Prepared(lambda: both(*args), _plain, mode=mode)


class Jax(System):
    name = "jax"
    module = "jax"

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        import jax
        import jax.numpy as jnp

        if workload.jax.startswith("skip"):
            raise Skipped(workload.jax.partition(":")[2].strip())
        jax.config.update("jax_enable_x64", True)
        both = jax.value_and_grad(with_numpy(workload.shared_fn, jnp), argnums=workload.wrt)
        if workload.jax == "jit":
            both = jax.jit(both)
        inputs = [jnp.asarray(a) for a in args]

        def unpack(result: Any) -> Result:
            value, gradients = result
            return np.asarray(value), tuple(np.asarray(g) for g in gradients)

        return Prepared(
            lambda: jax.block_until_ready(both(*inputs)),
            unpack,
            mode=workload.jax,
            tracks_memory=False,
        )


class _TorchNumpy:
    """The numpy functions the workloads call, on torch tensors (``axis``/``keepdims``)."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def sum(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        if axis is None:
            return self.torch.sum(x)
        return self.torch.sum(x, dim=axis, keepdim=keepdims)

    def max(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        if axis is None:
            return self.torch.amax(x)
        return self.torch.amax(x, dim=axis, keepdim=keepdims)

    def __getattr__(self, name: str) -> Any:  # tanh, exp, log, cos, abs: same names
        return getattr(self.torch, name)


class Torch(System):
    name = "torch"
    module = "torch"

    def prepare(self, workload: Workload, args: tuple[Any, ...]) -> Prepared:
        import torch

        fn = with_numpy(workload.shared_fn, _TorchNumpy(torch))
        inputs = [torch.from_numpy(np.ascontiguousarray(a)) for a in args]
        leaves = [inputs[i].requires_grad_(True) for i in workload.wrt]

        def call() -> Any:
            out = fn(*inputs)
            return out, torch.autograd.grad(out, leaves)

        def unpack(result: Any) -> Result:
            value, gradients = result
            return value.item(), tuple(g.numpy() for g in gradients)

        return Prepared(call, unpack, mode="eager", tracks_memory=False)


SYSTEMS: dict[str, System] = {
    s.name: s
    for s in [
        Forward(),
        HandWritten(),
        Compiled(),
        Fused(),
        Tracing(),
        TangentAD(),
        Autograd(),
        Jax(),
        Torch(),
    ]
}
