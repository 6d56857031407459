"""Programs organized the way users organize them (part of the generator): the
families ``object_method`` and ``state_across_calls``.

The blocks the generator writes over ``x`` and ``w`` become the body of something
other than ``def f(x, w)``; the first lines of the body (*reads*) make ``w`` from the
program's state:

- ``object_method``: a class ``Model`` whose attributes hold the parameters (an array
  ``self.W``, a list ``self.layers`` or a dict ``self.params`` of arrays; numbers,
  loop bounds, flags and constant arrays beside them), and a method ``loss(self, x)``
  (or ``__call__``) computing the loss from them. It is differentiated as a bound
  method or a callable object: ``value_and_grad(model.loss, wrt="self.W")``,
  ``wrt="self"``, ``wrt=["x", "self.W"]``, the method's own argument, ``grad(model)``
  (tracing's ``value_and_gradient`` the same way).
- ``state_across_calls``: the program (an object, ``def f(x, w)``, or ``f`` made by a
  factory whose cells it reads) is called several times, and between calls functions
  ``change_k(model, grads)`` of the program change what it reads, the way users do:
  an attribute rebound (``model.W = model.W - 0.1 * grads``) or changed in place
  (``model.W -= ...``, ``model.W[1] = ...``), a list or dict attribute replaced (the
  same or another length or keys) or changed in place, a module global rebound (an
  array, a float, an int used as a loop bound, a bool used in an ``if``, a list, a
  dict) or changed in place, a closure cell rebound (``nonlocal``), a helper function
  the program calls redefined (``global hw; def hw(a): ...``), a partial's keyword
  changed in place, a global of another module whose class's method the program
  calls (``layers.GAIN = ...``), the object's ``__call__`` replaced on its class.

:mod:`fuzz.check_forms` says how such programs are called and judged.

>>> form = draw_form(random.Random(5), frozenset(), frozenset({"state_across_calls"}))
>>> "state_across_calls" in form.tags and len(form.changes) >= 1
True
>>> "def change_1(model, grads):" in form.render([], ["    v1 = x * w\\n"], "np.sum(v1)")
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from fuzz.knobs import (
    LAYOUTS,
    Change,
    Knob,
    Options,
    attribute_knobs,
    call_knob,
    cell_knobs,
    global_knobs,
)

#: The families this module writes (constructs of the generator).
FAMILIES = ("object_method", "state_across_calls")
P_OBJECT = 0.12  # the share of programs that are objects called once
P_STATE = 0.15  # the share of programs called across changes of their state


@dataclass(frozen=True)
class Form:
    """How the blocks are wrapped, differentiated and called.

    ``holder``: ``function`` (``def f(x, w)``), ``closure`` (``f`` made by
    ``make_loss``, reading its cells) or ``object`` (``Model``). ``target``: ``f``,
    ``method`` (``model.loss``) or ``call`` (``model``, a ``__call__``). ``wrt``: what
    the compiler is asked for. ``made``: ``once`` (one compiled function for every
    call) or ``each`` (made again at each call, as in ``grad(f)(x)`` in a loop).
    """

    holder: str
    target: str
    wrt: Any
    knobs: tuple[Knob, ...]
    changes: tuple[Change, ...] = ()
    made: str = "once"

    @property
    def tags(self) -> frozenset[str]:
        """The families the program belongs to."""
        tags = {"object_method"} if self.holder == "object" else set()
        return frozenset(tags | ({"state_across_calls"} if self.changes else set()))

    @property
    def arguments(self) -> tuple[str, ...]:
        """The names the target is called with."""
        return ("x",) if self.holder == "object" else ("x", "w")

    def render(self, helpers: list[str], blocks: list[str], result: str) -> str:
        """The module text: globals, helpers, the holder, ``make``, the changes."""
        module = "".join(k.module + "\n\n\n" for k in self.knobs if k.module)
        head = "import numpy as np\n\n\n" + module + "".join(h + "\n\n" for h in helpers)
        reads = [line for k in self.knobs for line in k.read]
        if self.holder == "object":
            main = self._object(reads, blocks, result)
        elif self.holder == "closure":
            main = self._closure(reads, blocks, result)
        else:
            body = _lines(reads, 4) + "".join(blocks) + f"    return {result}\n"
            main = "def f(x, w):\n" + body + "\n\ndef make(x, w):\n    return None\n"
        changes = "".join(
            f"\n\ndef change_{i}(model, grads):\n" + _lines(c.lines, 4)
            for i, c in enumerate(self.changes, 1)
        )
        return head + main + changes

    def _object(self, reads: list[str], blocks: list[str], result: str) -> str:
        init = [line for k in self.knobs for line in k.init] or ["pass"]
        method = "__call__" if self.target == "call" else "loss"
        return (
            "class Model:\n    def __init__(self, w):\n"
            + _lines(init, 8)
            + f"\n    def {method}(self, x):\n"
            + _lines(reads, 8)
            + "".join(_indent(b) for b in blocks)
            + f"        return {result}\n\n\ndef make(x, w):\n    return Model(w)\n"
        )

    def _closure(self, reads: list[str], blocks: list[str], result: str) -> str:
        cells = [k.cell for k in self.knobs if k.cell]
        setters = "".join(
            f"\n    def set_{n}(value):\n        nonlocal {n}\n        {n} = value\n"
            for n, _ in cells
        )
        returned = ", ".join(["f", *(f"set_{n}" for n, _ in cells)])
        return (
            f"def make_loss({', '.join(n for n, _ in cells)}):\n    def f(x, w):\n"
            + _lines(reads, 8)
            + "".join(_indent(b) for b in blocks)
            + f"        return {result}\n"
            + setters
            + f"\n    return {returned}\n\n\n"
            + f"{returned} = make_loss({', '.join(v for _, v in cells)})\n\n\n"
            + "def make(x, w):\n    return None\n"
        )

    def without(self, knob: int | None = None, change: int | None = None) -> Form:
        """This form less one knob or one change (for the minimizer)."""
        knobs = tuple(k for i, k in enumerate(self.knobs) if i != knob)
        changes = tuple(c for i, c in enumerate(self.changes) if i != change)
        return Form(self.holder, self.target, self.wrt, knobs, changes, self.made)


def _lines(lines: list[str] | tuple[str, ...], indent: int) -> str:
    return "".join((" " * indent + line if line else "") + "\n" for line in lines)


def _indent(block: str) -> str:
    """A block of ``f``'s body (indented by 4), indented by 4 more."""
    return "".join("    " + line if line.strip() else line for line in block.splitlines(True))


# -- drawing a form ---------------------------------------------------------------------


def draw_form(
    rng: random.Random, exclude: frozenset[str], require: frozenset[str] = frozenset()
) -> Form | None:
    """The form of a program (``None``: a plain ``def f(x, w)``), from its own ``rng``
    (so that the blocks are the same whichever form is drawn). ``require``: families
    the program must belong to (one of them)."""
    allowed = [f for f in FAMILIES if f not in exclude]
    wanted = [f for f in allowed if f in require]
    draw = rng.random()
    if wanted:
        family = rng.choice(wanted)
    elif require:
        return None
    elif draw < P_OBJECT and "object_method" in allowed:
        family = "object_method"
    elif draw < P_OBJECT + P_STATE and "state_across_calls" in allowed:
        family = "state_across_calls"
    else:
        return None
    state = "state_across_calls" in allowed and (
        family == "state_across_calls" or rng.random() < 0.3
    )
    objects = "object_method" in allowed and (family == "object_method" or rng.random() < 0.6)
    holder = "object" if objects else rng.choice(["function", "closure"])
    made = rng.choice(["once", "once", "once", "each"])
    if holder == "object":
        target, wrt, knobs = _object_parts(rng)
    else:
        target, wrt = "f", [0, 1]
        knobs = _pick(rng, global_knobs(rng), rng.randint(1, 2))
        if holder == "closure":
            knobs = _pick(rng, cell_knobs(rng), rng.randint(1, 2)) + knobs
    changes = _draw_changes(rng, [options for _, options in knobs]) if state else ()
    return Form(holder, target, wrt, tuple(k for k, _ in knobs), changes, made)


def _object_parts(rng: random.Random) -> tuple[str, Any, list[tuple[Knob, Options]]]:
    attribute = rng.choice(["W", "W", "layers", "params"])
    target = rng.choice(["method", "method", "method", "call"])
    name = f"self.{attribute}"
    wrt = rng.choice([name, name, "self", "x", 0, None, ["x", name]])
    # the changes step along the gradient where the compiler is asked for it
    steps = {name: "grads", "self": f'grads["{attribute}"]'}
    step = "grads[1]" if isinstance(wrt, list) else steps.get(wrt) if isinstance(wrt, str) else None
    extras = {**attribute_knobs(rng), **global_knobs(rng)}
    knobs = [LAYOUTS[attribute](rng, step), *_pick(rng, extras, rng.randint(0, 2))]
    return target, wrt, knobs + ([call_knob(attribute)] if target == "call" else [])


def _pick(rng: random.Random, knobs: dict[str, Any], count: int) -> list[Any]:
    return [knobs[name] for name in rng.sample(sorted(knobs), count)]


def _draw_changes(rng: random.Random, options: list[Options]) -> tuple[Change, ...]:
    """One to three changes, each valid after those before it."""
    facts: dict[str, Any] = {}
    changes = []
    for _ in range(rng.randint(1, 3)):
        found = rng.choice(options)(facts)
        change, left = rng.choice(found)
        facts.update(left)
        changes.append(change)
    return tuple(changes)
