"""A corpus of programs with control flow and calls, each with a sampler of inputs.

The programs live in ``corpus_flow_branches.py``, ``corpus_flow_loops.py``,
``corpus_flow_jumps.py``, ``corpus_flow_arrays.py`` and ``corpus_flow_calls.py``; this
module holds what they share, and :func:`load_all` gathers them.

Used by ``test_compiler_flow.py`` (against finite differences and autograd). Every
entry is a :class:`Program`: a scalar-valued function, a sampler (a numpy Generator
in, the argument tuple out), the positions of the arguments to differentiate (the
others are static: loop counts, flags), and the seeds to run it at.

Where the control flow depends on the data, ``path`` computes, in plain Python and
independently of the program, which way a given input goes (the branch taken, where
a loop breaks, how many times a ``while`` runs), and ``seeds`` maps each seed to the
path it must take: the tests assert both, so the corpus provably covers every branch
it claims to. The comment above each such program says which seed takes which path.

Programs that write into arrays in place cannot be run by autograd; they carry a
``reference``: the same function written without in-place writes (the tests check
that it returns the program's value before trusting its autograd gradient).

``bug`` marks a program the compiler mishandles (the tests mark it
``xfail(strict=True)``, so a fix shows up as a failure until the mark is removed);
``bug_on`` restricts it to the paths that fail, ``bug_at`` says whether it fails when
compiling or when running.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# A program the compiler mishandles gets bug="..." (an xfail, strict): none at present.


@dataclass
class Program:
    """One corpus entry; see the module docstring."""

    fn: Callable[..., Any]
    sample: Callable[[np.random.Generator], tuple[Any, ...]]
    wrt: tuple[int, ...] = (0,)
    seeds: dict[int, str] | tuple[int, ...] = (0, 1, 2)
    path: Callable[..., str] | None = None
    reference: Callable[..., Any] | None = None
    bug: str = ""
    bug_on: frozenset[str] | None = None
    bug_at: str = "run"  # "compile" or "run"
    fd_rtol: float = 1e-5
    tags: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.fn.__name__

    def args(self, seed: int) -> tuple[Any, ...]:
        return self.sample(np.random.default_rng(seed))

    def fails(self, label: str | None) -> bool:
        """Whether the known bug hits the run with path ``label``."""
        return bool(self.bug) and (self.bug_on is None or label in self.bug_on)


PROGRAMS: list[Program] = []


def program(sample: Callable[[np.random.Generator], tuple[Any, ...]], **options: Any):
    """Register the decorated function as a corpus program."""

    def decorate(fn):
        PROGRAMS.append(Program(fn, sample, **options))
        return fn

    return decorate


def u(rng: np.random.Generator, *shape: int, low: float = -2.0, high: float = 2.0):
    """Uniform floats of ``shape`` (a numpy float64 scalar when there is no shape)."""
    if not shape:
        return np.float64(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape)


def load_all() -> list[Program]:
    """Import every program module (each registers its programs) and return the corpus."""
    import corpus_flow_arrays  # noqa: F401
    import corpus_flow_branches  # noqa: F401
    import corpus_flow_calls  # noqa: F401
    import corpus_flow_jumps  # noqa: F401
    import corpus_flow_loops  # noqa: F401

    return PROGRAMS
