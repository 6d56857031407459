"""The fused backend: a specialized pair lowered into loops that numba compiles.

``differentiable(f, backend="numba")`` (or ``value_and_grad(f, backend="numba")``)
runs, from the second call with the same argument shapes, one compiled kernel that
computes the value and the gradient in fused loops (:mod:`.scalarize` lowers the
specialized pair, :mod:`.build` compiles it). ``f.show(backend="numba")`` prints the
kernel beside the numpy pair. Where a pair cannot be lowered, its numpy code runs and
``show`` says why. numba is the optional extra ``pip install autodiff_tutor[fused]``.

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> def f(x):
...     return np.sum(x * x)
>>> fused = with_backend(differentiable(f), "numpy")
>>> fused is differentiable(f)
True
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.errors import BackendUnavailableError
from autodiff_tutor.locations import location

#: The backends a compiled function runs on: numpy (the pairs as written) and numba.
BACKENDS = ("numpy", "numba")

_EXTRA_HINT = (
    'install numba, the optional extra of the fused backend: pip install "autodiff_tutor[fused]" '
    '(or leave out backend="numba": the numpy backend runs the same gradients)'
)


def require(backend: str) -> None:
    """Refuse, located at the user's call, a backend that is unknown or not installed."""
    if backend not in BACKENDS:
        raise BackendUnavailableError(
            f"unknown backend {backend!r}",
            location(),
            hint=f"the backends are {', '.join(map(repr, BACKENDS))}",
        )
    if backend == "numba":
        from autodiff_tutor.compiler.fused.build import numba_or_none

        if numba_or_none() is None:
            raise BackendUnavailableError(
                'backend="numba" needs numba, which is not installed', location(), hint=_EXTRA_HINT
            )


def with_backend(compiled: Any, backend: str) -> Any:
    """``compiled`` (a :class:`~autodiff_tutor.api.compiled.Differentiable`) running on
    ``backend``: itself for its own backend, else a twin made once and kept on it
    (its own compiled pairs and specializations)."""
    require(backend)
    if getattr(compiled, "backend", "numpy") == backend:
        return compiled
    if type(compiled).__name__ != "Differentiable":
        raise BackendUnavailableError(
            f"backend={backend!r} takes a def or a lambda, not {type(compiled).__name__}",
            location(),
            hint="differentiate the function the method or object calls, its values as arguments",
        )
    twins = compiled.__dict__.setdefault("_backends", {})
    if backend not in twins:
        twin = type(compiled)(compiled.fn)
        twin.backend = backend
        twin.parsed = compiled.parsed
        twins[backend] = twin
    return twins[backend]


def attach(derivative: Any, backend: str) -> Any:
    """``derivative`` whose specializations are lowered for ``backend`` (see
    :func:`.specialized.compile_specialized`): numpy keeps them as they are."""
    if backend == "numba":
        from autodiff_tutor.compiler.fused.build import fused_pair

        derivative.lowering = fused_pair
    return derivative


def show_text(compiled: Any, wrt: Any = None) -> str:
    """Each specialized pair of ``compiled`` (numpy code) with the kernel its backend
    runs it as, or the reason it runs as numpy code."""
    derivative = compiled.derivative(wrt)
    texts = []
    for pair, numpy_text in zip(
        [p for p in derivative.specializations.values() if p is not None],
        compiled.specialized_sources(wrt),
        strict=True,
    ):
        head = f"# {compiled.backend}: {pair.fused_note or 'numpy runs'}"
        fused = f"\n\n# the fused kernel: value and gradient in one call\n{pair.fused_source}"
        texts.append(f"{numpy_text}\n\n{head}{fused if pair.fused_source else ''}")
    return "\n\n".join(texts) or (
        "(no specialization yet: the kernel is made at the second call of value_and_grad "
        "with the same argument shapes)"
    )
