"""Programs organized the way Python programmers organize them (written here; no code
copied): objects, methods and functions as values, one module per style:

- ``estimators``: estimator classes with ``loss``/``fit`` (scikit-learn-like scripts);
- ``layers``: numpy layer classes with ``__call__`` and ``forward``, activation and
  loss classes as in ML-from-scratch libraries;
- ``benchmarks``: optimization benchmark classes, ``fun(self, x, *args)``;
- ``networks``: a textbook ``Network`` class with ``feedforward`` and ``cost``, and
  models that call other objects' methods;
- ``course_layers``: course layer functions returning ``(out, cache)``;
- ``functions``: functions as values (``nonlinearity`` parameters, ``functools.partial``,
  ``f(a)(x)``, module-level lambdas, ``grad(lambda ...)``);
- ``structures``: static structure (``params[:-1]``, ``range(len(params) - 1)``,
  f-string keys, a structure handed whole to a helper);
- ``names``: user names the generated code also uses (``xp``, ``memory``, ``like``...);
- ``effects``: statements kept for their effect (seeding, prints, state-dict writes);
- ``training``: training loops over a model object.

Each module registers its programs with :func:`program`; the decorated function takes
a seeded ``numpy.random.Generator`` and returns ``(callable, args)``: the callable as a
user would pass it (a bound method, an object, a partial, a lambda, a function) and
its arguments. ``wrt`` names what is differentiated: parameters of the callable by
name, or attributes of its object (``"self.W"``). ``row`` is the construct (a key of ``ROWS``)
that the program exercises. ``kind`` is ``"grad"`` (a scalar objective) or
``"vjp"`` (an array, or ``(out, cache)`` whose later outputs get ``None`` seeds);
``differentiable=True`` passes the callable through ``differentiable()`` first;
``steps > 1`` is a training loop (one ``value_and_grad``, the attributes in ``wrt``
rebound after each step, then the model's ``on_step_end()`` where it has one: a
schedule rebinding other attributes). ``tests/test_corpus_objects.py`` runs them
(``tests/corpus_objects/checks.py``); ``python -m corpus_objects.measure`` (from
``tests/``) counts them per row and mode. What a mode refuses is recorded in
``today.py`` (the tests mark it ``xfail(strict=True)``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MODULES = (
    "estimators", "layers", "benchmarks", "networks", "course_layers", "functions",
    "structures", "names", "effects", "training",
)  # fmt: skip

# the constructs the corpus covers, one row each of measure's table, in its order
ROWS = {
    "callables": "differentiable()/grad of a bound method or a callable object",
    "varargs": "methods with *args (def fun(self, x, *args))",
    "methods_inside": "a method or another object's method called inside the code",
    "cache_vjp": "vjp of a function returning (out, cache), None seeds",
    "functions_as_values": "nonlinearity parameters, partial, f(a)(x), lambdas",
    "static_structure": "params[:-1], range(len(params) - 1), f-string keys, helpers",
    "user_names": "user names xp, memory, like, stack, size",
    "effects": "effect statements and state-dict writes",
    "training_loops": "training loops over a model object",
}

BOX_DOT = "autograd's ArrayBox has no .dot method (x.dot(w) with x differentiated)"


@dataclass
class Program:
    """A program: ``build(rng)`` gives ``(callable, args)``; see the module docstring."""

    build: Callable[[Any], tuple[Callable[..., Any], tuple[Any, ...]]]
    row: str
    wrt: tuple[str, ...]
    kind: str = "grad"
    differentiable: bool = False
    steps: int = 1
    autograd: str | None = None

    @property
    def name(self) -> str:
        return self.build.__name__

    @property
    def module(self) -> str:
        return self.build.__module__

    @property
    def compiler(self) -> str | None:
        """Why the compiler cannot run it (recorded in ``today.py``), or ``None``."""
        from corpus_objects.today import COMPILER

        return COMPILER.get(self.name)

    @property
    def tracing(self) -> str | None:
        """Why tracing cannot run it (recorded in ``today.py``), or ``None``."""
        from corpus_objects.today import TRACING

        return TRACING.get(self.name)


REGISTRY: list[Program] = []


def program(
    row: str,
    wrt: tuple[str, ...],
    kind: str = "grad",
    differentiable: bool = False,
    steps: int = 1,
    autograd: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``build`` as a corpus program."""
    assert row in ROWS, row
    assert kind in ("grad", "vjp"), kind

    def register(build: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.append(Program(build, row, wrt, kind, differentiable, steps, autograd))
        return build

    return register


def load_all() -> list[Program]:
    """Every program of every module of the corpus."""
    for name in MODULES:
        importlib.import_module(f"corpus_objects.{name}")
    return list(REGISTRY)
