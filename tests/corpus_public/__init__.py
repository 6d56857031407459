"""Objective functions written as people write them in public code, not for this
project (written here; no code copied), one module per style:

- ``course``: course assignments; ``deeplearning``: deep-learning assignments as
  students write them (conv-relu-pool nets with loops over filters and ``np.pad``,
  ``scores[np.arange(N), y]``, negative sampling, residual blocks, margins);
- ``science``: scientific objectives for ``scipy.optimize``; ``numerics``:
  scientific-computing exercises (stencils, Simpson's rule by stepped slices, RK4
  loops, a shooting method, Newton on Kepler's equation, optimization test functions);
  ``engineering``: engineering and finance scripts;
- ``stats``: statistics and machine learning as in lecture notes and
  scikit-learn-like scripts;
- ``notebook``, ``habits``, ``idioms``: habits of notebooks and everyday code
  (keyword-only arguments, ``keepdims``, lists built in loops, ``float()`` on Python
  floats, ``np.einsum``, the walrus operator, ``itertools``, ``functools.reduce``,
  ``try``/``except``, chained comparisons, ``x.T.dot(y)``...).

Each module registers its objectives with :func:`objective`; :func:`load_all` gathers
them for ``tests/test_corpus_public.py``, which differentiates each in both modes (the
compiler's ``value_and_grad``, called three times so the specialized pair runs, and
tracing's ``value_and_gradient``) against central differences and autograd
(``tests/corpus_checks.py``).

An objective one mode cannot do carries the reason (``compiler=`` /
``tracing=``): the test marks it ``xfail(strict=True)``, so a fix shows up until the
mark goes. ``autograd=`` says why autograd cannot run it as written (finite
differences alone then).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MODULES = (
    "course", "deeplearning", "science", "numerics", "engineering", "stats", "notebook",
    "habits", "idioms",
)  # fmt: skip

MATH_ON_BOXES = "math.* on autograd's boxes fails (autograd traces numpy only)"
WRITES = "autograd cannot write into an array (x[i] = ...)"
PLAIN_DOT = "autograd cannot run ndarray.dot on a box (X.dot(W) with X plain, or W.dot)"


@dataclass
class Objective:
    """An objective: ``fn(*sample(rng))`` is a scalar; ``wrt`` are the differentiated
    argument positions (an argument may be a dict or list of arrays)."""

    fn: Callable[..., Any]
    sample: Callable[[Any], tuple[Any, ...]]
    wrt: tuple[int, ...] = (0,)
    compiler: str | None = None
    tracing: str | None = None
    autograd: str | None = None

    @property
    def name(self) -> str:
        return self.fn.__name__


REGISTRY: list[Objective] = []


def objective(
    sample: Callable[[Any], tuple[Any, ...]],
    wrt: tuple[int, ...] = (0,),
    compiler: str | None = None,
    tracing: str | None = None,
    autograd: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as a corpus objective."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.append(Objective(fn, sample, wrt, compiler, tracing, autograd))
        return fn

    return register


def load_all() -> list[Objective]:
    """Every objective of every module of the corpus."""
    for name in MODULES:
        importlib.import_module(f"corpus_public.{name}")
    return list(REGISTRY)


# Why a mode cannot run an objective (the tests mark it xfail(strict=True)).
AUX_DICT = "a helper returning (loss, {'accuracy': ...}): a dict inside a returned tuple is refused"
TRACING_SCIPY = (
    "scipy.linalg.cho_factor has no derivative rule: tracing's scipy refuses it at the call "
    "(as the compiler does), where scipy would convert the traced array with np.asarray"
)
FLOAT_CAST = (
    "float() of a value that carries gradient is refused in both modes by design (the book's "
    "'a value that escapes' row): the hint says to keep it an array or call stop_gradient"
)
