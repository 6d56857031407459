"""A corpus of objective functions, in the styles of public examples and course
assignments (written here; no code copied): normalisation layers, convolution and
pooling by loops, recurrent cells, attention, Gaussian processes, variational and
mixture models, physics by ``np.roll``, classification losses.

Each module registers its models with :func:`model`; :func:`load_all` gathers them for
``tests/test_corpus_models.py``, which differentiates each one in both modes (compiler
``grad``, tracing ``value_and_gradient``) against central differences and autograd.

A model one mode cannot do carries the reason (``compiler=`` / ``tracing=``):
the test marks it ``xfail(strict=True)``, so a fix shows up until the mark goes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MODULES = (
    "normalization",
    "convolution",
    "recurrent",
    "attention",
    "probabilistic",
    "losses",
    "physics",
    "decompositions",
)


@dataclass
class Model:
    """An objective: ``fn(*sample(rng))`` is a scalar; ``wrt`` are the differentiated
    argument positions; ``compiler``/``tracing`` say why a mode cannot run it."""

    fn: Callable[..., Any]
    sample: Callable[[Any], tuple[Any, ...]]
    wrt: tuple[int, ...] = (0,)
    compiler: str | None = None
    tracing: str | None = None
    autograd: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.fn.__name__


REGISTRY: list[Model] = []


def model(
    sample: Callable[[Any], tuple[Any, ...]],
    wrt: tuple[int, ...] = (0,),
    compiler: str | None = None,
    tracing: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as a corpus model."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.append(Model(fn, sample, wrt, compiler, tracing))
        return fn

    return register


def load_all() -> list[Model]:
    """Every model of every corpus module."""
    for name in MODULES:
        importlib.import_module(f"corpus_models.{name}")
    return list(REGISTRY)
