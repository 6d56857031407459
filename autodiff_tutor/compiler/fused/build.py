"""A lowered pair compiled by numba, and the specialized pair that calls it.

:func:`fused_pair` takes the pair :mod:`..specialized` made for one call's shapes and
the trees it was emitted from, lowers them (:mod:`.scalarize`) into one kernel that
returns the value and the gradients, writes the kernel as Python source (each line's
comment names the user's line) and compiles it with numba. The :class:`Specialized`
it returns calls the kernel in its forward and hands the gradients over in its memory,
so the front door runs it like any specialized pair. Where the pair cannot be
lowered, or numba cannot compile the kernel, the numpy pair is kept and says why in
its ``fused_note``.

>>> import numpy as np
>>> from autodiff_tutor.compiler.fused.scalarize import scalarize
>>> import ast
>>> forward = ast.parse("out = (x * x).sum()").body
>>> kernel = scalarize(forward, [], ["x"], "out", "d_out", [], {"x": (3,)}, {})
>>> print(kernel_source("f", kernel))
def f_fused(x):
    n = x.shape[0]
    total = 0.0
    for i in range(n):
        total += x[i] * x[i]
    return total, ()
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import importlib.util
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from autodiff_tutor.compiler.emit import Generated
from autodiff_tutor.compiler.fused.loops import lower_loops
from autodiff_tutor.compiler.fused.matrices import lower_matrices
from autodiff_tutor.compiler.fused.scalarize import Kernel, NotLowered, scalarize
from autodiff_tutor.compiler.specialized import Specialized
from autodiff_tutor.syntax import copy_tree

#: The comment width of a kernel line: code, then its user's line.
_COMMENT_AT = 48


def numba_or_none() -> Any:
    """The numba module, or ``None`` where it is not installed."""
    try:
        return importlib.import_module("numba")
    except ImportError:
        return None


def kernel_source(name: str, kernel: Kernel, comments: bool = False) -> str:
    """The kernel as a Python function (numba compiles it): the value and the
    gradients out."""
    lines = []
    for loop, params, returned, body in kernel.loops:  # numba compiles these
        lines.append(f"def {loop}({', '.join(params)}):")
        lines.extend(_body_lines(body, comments))
        if returned:
            lines.append(f"    return {', '.join(returned)}")
        lines.append("")
    lines.append(f"def {name}_fused({', '.join(kernel.params)}):")
    lines.extend(_body_lines(kernel.lines, comments))
    gradients = ", ".join(kernel.gradients)
    gradients = f"({gradients},)" if len(kernel.gradients) == 1 else f"({gradients})"
    lines.append(f"    return {kernel.output}, {gradients}")
    return "\n".join(lines)


def _body_lines(body: Sequence[tuple[int, str, str]], comments: bool) -> list[str]:
    width = max((4 * (d + 1) + len(c) for d, c, _ in body), default=0)
    width = min(max(width, 24), _COMMENT_AT)
    lines = []
    for depth, code, origin in body:
        text = "    " * (depth + 1) + code
        if comments and origin:
            text = f"{text.ljust(width)}  # {origin}"
        lines.append(text)
    return lines


def lower(
    generated: Generated,
    args: Sequence[Any],
    scope: dict[str, Any],
    wrt_positions: Sequence[int],
) -> Kernel:
    """The kernel of ``generated`` (the specialized pair's trees, before its numpy
    rewrites of memory) for ``args``; :class:`NotLowered` where it cannot be."""
    if len(generated.outputs) != 1 or len(generated.seeds) != 1:
        raise NotLowered("a function of several outputs")
    shapes: dict[str, Any] = {}
    for name, arg in zip(generated.params, args, strict=True):
        if type(arg) is np.ndarray:
            if arg.dtype != np.float64:
                raise NotLowered(f"{name} is {arg.dtype}; fused loops take float64")
            shapes[name] = arg.shape
        elif type(arg) in (float, np.float64):
            shapes[name] = None
        else:
            raise NotLowered(f"{name} is a {type(arg).__name__}")
    for i in wrt_positions:
        if shapes[generated.params[i]] is None:
            raise NotLowered(f"the gradient of the number {generated.params[i]}")
    trees = copy_tree(generated)
    for name in trees.memory.names:  # the backward reads the forward's names themselves
        kept = trees.memory.kept(name)
        if isinstance(kept, ast.Call) and ast.unparse(kept.func) == "like":
            kept = kept.args[0]  # only its shape is kept: the kernel has the value itself
        if not (isinstance(kept, ast.Name) and kept.id == name):
            raise NotLowered(f"the memory keeps {ast.unparse(kept)}")
    lowering = scalarize
    if any(shape is not None and len(shape) >= 2 for shape in shapes.values()):
        # loops over rows between matrix products; a Python loop over their steps
        steps = any(isinstance(s, ast.For) for s in trees.forward)
        lowering = lower_loops if steps else lower_matrices
    return lowering(
        trees.forward,
        trees.backward,
        list(generated.params),
        generated.outputs[0],
        generated.seeds[0],
        list(generated.gradients),
        shapes,
        scope,
    )


def compile_kernel(
    name: str, source: str, cached: bool = True, loops: Sequence[str] = ()
) -> Callable[..., Any]:
    """The kernel's source compiled by numba (no Python fallback: an unsupported
    construct is an error here, and the numpy pair runs). Where :func:`kernel_file`
    can keep the source in a file, numba caches the machine code beside it, so another
    process with the same kernel loads it instead of compiling it again. Where the
    kernel has ``loops`` (functions of its own), numba compiles those and the kernel
    stays the Python function that calls them and numpy's matrix products."""
    numba = numba_or_none()
    path = kernel_file(name, source) if cached else None
    if path is not None:
        place = hashlib.sha256(str(path.parent).encode()).hexdigest()[:8]  # one per folder
        module_name = f"autodiff_tutor_fused_{place}_{path.stem}"
        module = sys.modules.get(module_name)
        if module is None:  # numba's cache finds the function through its module
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        namespace, cache = module.__dict__, True
    else:
        namespace = {"np": np, "math": math}
        exec(compile(source, f"<fused {name}>", "exec"), namespace)  # noqa: S102 - our own code
        cache = False
    # reassoc: sums are added in whatever order vectorizes (as numpy's pairwise sums
    # differ from a plain loop's): values agree to rounding, not bit for bit
    # error_model numpy: a division by zero is inf or nan, as numpy's, not an exception
    jit = numba.njit(cache=cache, nogil=True, fastmath={"reassoc"}, error_model="numpy")
    if not loops:
        return jit(namespace[f"{name}_fused"])
    for loop in loops:  # the kernel finds them as globals of its module
        if not isinstance(namespace[loop], numba.core.dispatcher.Dispatcher):
            namespace[loop] = jit(namespace[loop])
    return namespace[f"{name}_fused"]


def kernel_file(name: str, source: str) -> Path | None:
    """The kernel's source as a module in the cache folder (``$AUTODIFF_TUTOR_CACHE``,
    else ``~/.cache/autodiff_tutor``), named by a hash of the source; ``None`` where
    no such folder can be written."""
    root = os.environ.get("AUTODIFF_TUTOR_CACHE") or Path.home() / ".cache" / "autodiff_tutor"
    text = f"# autodiff_tutor fused kernel, v3\nimport math\n\nimport numpy as np\n\n\n{source}\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = Path(root) / "fused" / f"{name}_{digest}.py"
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(text)
            os.replace(temporary, path)  # whole, where processes write it at once
    except OSError:
        return None
    return path


def fused_pair(
    pair: Specialized,
    generated: Generated,
    args: Sequence[Any],
    scope: dict[str, Any],
    wrt_positions: Sequence[int],
) -> Specialized:
    """``pair`` run by a numba kernel of its lowered forward and backward, or ``pair``
    itself with the reason in its ``fused_note``."""
    try:
        kernel = lower(generated, args, scope, wrt_positions)
    except NotLowered as reason:
        return dataclasses.replace(pair, fused_note=f"not fused ({reason}): numpy runs")
    name = generated.name
    source = kernel_source(name, kernel)
    loops = [loop[0] for loop in kernel.loops]
    shown = kernel_source(name, kernel, comments=True)
    try:
        try:
            compiled = compile_kernel(name, source, loops=loops)
            out, gradients = compiled(*args)  # compiled here, on the arguments' types
        except Exception:  # numba's cache did not load: compiled without it
            compiled = compile_kernel(name, source, cached=False, loops=loops)
            out, gradients = compiled(*args)
        _check(out, gradients, args, wrt_positions)
    except Exception as error:  # numba refused it: the numpy pair runs
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        return dataclasses.replace(pair, fused_note=f"not fused (numba: {reason}): numpy runs")
    return dataclasses.replace(
        pair,
        forward=_forward_of(compiled),
        backward=_backward,
        seed=pair.seed,
        unsure=(),
        fused_source=shown,
        fused_note="fused by numba",
    )


def _check(out: Any, gradients: Any, args: Sequence[Any], wrt_positions: Sequence[int]) -> None:
    if len(gradients) != len(wrt_positions):
        raise NotLowered("the kernel's gradients do not match the inputs")
    for g, i in zip(gradients, wrt_positions, strict=True):
        if g.shape != np.shape(args[i]):
            raise NotLowered("a gradient of another shape than its input")


def _forward_of(kernel: Callable[..., Any]) -> Callable[..., Any]:
    def fused_forward(*args: Any) -> tuple[Any, Any]:
        out, gradients = kernel(*args)
        return np.float64(out), gradients

    return fused_forward


def _backward(seed: Any, memory: Any) -> tuple[Any, ...]:
    """The kernel made the gradients for the seed 1 (what the specialized pair's
    backward is for): they are its memory."""
    return memory
