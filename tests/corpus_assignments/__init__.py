"""Course-assignment programs (written here; no code copied) in three styles that tracing
must follow, each a scalar objective:

- ``buffers``: outputs filled into arrays the program makes (convolution and pooling
  by loops, RNN and LSTM forwards filling ``h[:, t, :]``, ``out[:, j] += ...``,
  ``np.add(a, b, out=buf)``);
- ``conversions``: ``np.array([a, b])`` of traced values, ``np.asarray``,
  ``np.r_``/``np.c_``, ``np.float64``/``np.int64`` casts, ``X.dot(W)``;
- ``scipy``: Gaussian and Student-t likelihoods with ``scipy.stats``,
  ``scipy.special.logsumexp``/``softmax``/``log_softmax``.

Each module registers its programs with :func:`assignment`: ``sample(rng)`` gives the
arguments, ``wrt`` the differentiated positions. A program tracing refuses carries the
reason (``tracing=``): the tests mark it ``xfail(strict=True)``, so a fix shows up
until the mark goes. ``tests/test_corpus_assignments.py`` checks tracing against
central differences (first order, and second order along a direction), and autograd
where it can run the program; ``python -m corpus_assignments.measure`` (from
``tests/``) counts right, refused, wrong and crashed per family.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MODULES = ("buffers", "conversions", "likelihoods")


#: why tracing cannot run a program (the tests mark it xfail(strict=True))
METHOD_BUFFER = (
    "np.zeros made in a method called on an object (self.forward) is numpy's own plain "
    "array: tracing reaches the function given to it and the functions it names, not the "
    "methods of objects; the write of a traced value into it is refused at its line"
)
FLOAT32 = (
    "np.float32(t) converts the traced value to numpy (and rounds it): refused at its line "
    "as a conversion; t.astype(np.float32) is followed"
)


@dataclass
class Assignment:
    """A program: ``fn(*sample(rng))`` is a scalar; ``wrt`` are the differentiated
    positions; ``tracing`` says why tracing cannot run it; ``autograd`` whether
    autograd can run it (it cannot write into arrays, nor differentiate np.asarray,
    numpy scalar casts, math functions or np.array of nested lists of its values)."""

    fn: Callable[..., Any]
    sample: Callable[[Any], tuple[Any, ...]]
    family: str
    wrt: tuple[int, ...] = (0,)
    tracing: str | None = None
    autograd: bool = True

    @property
    def name(self) -> str:
        return self.fn.__name__


REGISTRY: list[Assignment] = []


def assignment(
    sample: Callable[[Any], tuple[Any, ...]],
    wrt: tuple[int, ...] = (0,),
    tracing: str | None = None,
    autograd: bool = True,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as a program of the corpus (its family is its module's name)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        family = fn.__module__.rsplit(".", 1)[-1]
        REGISTRY.append(Assignment(fn, sample, family, wrt, tracing, autograd))
        return fn

    return register


def load_all() -> list[Assignment]:
    """Every program of every module of the corpus."""
    for name in MODULES:
        importlib.import_module(f"corpus_assignments.{name}")
    return list(REGISTRY)
