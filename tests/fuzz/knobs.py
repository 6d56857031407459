"""The state a program of the fuzz families reads, and how users change it between
calls (part of :mod:`fuzz.forms`).

A :class:`Knob` is a piece of state: the parameters of an object (an array ``self.W``,
a list ``self.layers``, a dict ``self.params``: the *layouts*), its other attributes (a
number, a loop bound, a flag, a constant array), module globals (an array, a float, a
loop bound, a flag, a list, a dict, a helper function, a partial, an object whose class
comes from another module reading that module's globals) or closure cells, with the lines
at the start of the body that read it. Each comes with the changes a user makes to it
(:class:`Change`: rebinding, writing in place, replacing a list or dict by one of
another length or keys, redefining a function, changing a partial's keyword in
place, rebinding another module's global, replacing ``__call__`` on the class), drawn
so that each is valid after those drawn before it.

>>> import random
>>> knob, options = LAYOUTS["W"](random.Random(0), "grads")
>>> knob.read, [change.kind for change, _ in options({})]
(('w = self.W',), ['attr_rebound', 'attr_inplace', 'attr_item_write'])
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Change:
    """A change of the program's state between two calls: its kind (the first word of
    a failure's detail) and the body of its function ``change_k(model, grads)``."""

    kind: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Knob:
    """A piece of state the body reads: where it is defined (module text, lines of
    ``__init__``, or a closure cell: its name and first value) and the lines at the
    start of the body that read it (they rebind ``w``)."""

    read: tuple[str, ...]
    module: str = ""
    init: tuple[str, ...] = ()
    cell: tuple[str, str] | None = None


#: (knob, changes(facts) -> [(change, facts it leaves)]) where ``facts`` holds the
#: lengths and keys the changes drawn so far left (so that every drawn change is valid)
Options = Callable[[dict[str, Any]], list[tuple[Change, dict[str, Any]]]]


def _changes(*pairs: tuple[str, tuple[str, ...]]) -> Options:
    return lambda facts: [(Change(kind, lines), {}) for kind, lines in pairs]


def array_layout(rng: random.Random, step: str | None) -> tuple[Knob, Options]:
    step = step or "np.cos(model.W)"
    knob = Knob(("w = self.W",), init=("self.W = w.copy()",))
    return knob, _changes(
        ("attr_rebound", (f"model.W = model.W - 0.1 * {step}",)),
        ("attr_inplace", (f"model.W -= 0.1 * {step}",)),
        ("attr_item_write", (rng.choice(["model.W[1] = 0.3", "model.W[1:3] *= -1.5"]),)),
    )


def list_layout(rng: random.Random, step: str | None) -> tuple[Knob, Options]:
    loop = rng.random() < 0.6  # a loop over the list: its length may change
    if loop:
        read = ("w = self.layers[0] * 1.0", "for layer in self.layers[1:]:")
        read += ("    w = w * 0.5 + np.tanh(layer)",)
    else:
        read = ("w = self.layers[0] + np.sin(self.layers[1])",)
    knob = Knob(read, init=("self.layers = [w.copy(), np.cos(w)]",))
    new = f"[a - 0.1 * g for a, g in zip(model.layers, {step})]" if step else None
    new = new or "[a * 0.9 for a in model.layers]"

    def options(facts: dict[str, Any]) -> list[tuple[Change, dict[str, Any]]]:
        n = facts.get("layers", 2)
        found = [(Change("list_replaced", (f"model.layers = {new}",)), {})]
        found.append((Change("list_item_inplace", ("model.layers[0] *= 0.8",)), {}))
        if n >= 2:
            item = "model.layers[1] = model.layers[1] - 0.2"
            found.append((Change("list_item_rebound", (item,)), {}))
        if loop:
            longer = "model.layers = model.layers + [np.sin(model.layers[0])]"
            found.append((Change("list_longer", (longer,)), {"layers": n + 1}))
            append = "model.layers.append(model.layers[-1] * 0.5)"
            found.append((Change("list_append", (append,)), {"layers": n + 1}))
            if n >= 2:
                shorter = Change("list_shorter", ("model.layers = model.layers[:1]",))
                found.append((shorter, {"layers": 1}))
        return found

    return knob, options


def dict_layout(rng: random.Random, step: str | None) -> tuple[Knob, Options]:
    loop = rng.random() < 0.5  # a loop over the values: its keys may change
    if loop:
        read = ('w = self.params["w"] * 1.0', "for value in self.params.values():")
        read += ("    w = w + 0.5 * np.sin(value)",)
    else:
        read = ('w = self.params["w"] + np.sin(self.params["b"])',)
    knob = Knob(read, init=('self.params = {"w": w.copy(), "b": 0.5 * w + 0.1}',))
    new = f"v - 0.1 * {step}[k]" if step else "v * 0.9"

    def options(facts: dict[str, Any]) -> list[tuple[Change, dict[str, Any]]]:
        keys = facts.get("params", ("w", "b"))
        replaced = f"model.params = {{k: {new} for k, v in model.params.items()}}"
        found = [(Change("dict_replaced", (replaced,)), {})]
        found.append((Change("dict_entry_inplace", ('model.params["w"] += 0.2',)), {}))
        if "b" in keys:
            entry = 'model.params["b"] = model.params["b"] - 0.3'
            found.append((Change("dict_entry", (entry,)), {}))
        if loop and "c" not in keys:
            more = 'model.params = {**model.params, "c": np.cos(model.params["w"])}'
            found.append((Change("dict_new_keys", (more,)), {"params": (*keys, "c")}))
            added = 'model.params["c"] = np.tanh(model.params["w"])'
            found.append((Change("dict_entry_added", (added,)), {"params": (*keys, "c")}))
        if loop and "b" in keys:
            fewer = tuple(k for k in keys if k != "b")
            removed = Change("dict_entry_removed", ('del model.params["b"]',))
            found.append((removed, {"params": fewer}))
        return found

    return knob, options


def attribute_knobs(rng: random.Random) -> dict[str, tuple[Knob, Options]]:
    """Attributes beside the parameters: a number, a loop bound, a flag, a constant array."""
    steps = rng.choice(["model.steps = model.steps + 1", "model.steps = 0"])
    bias = rng.choice(["model.bias[0] = 2.0", "model.bias *= -1.0"])
    return {
        "scale": (
            Knob(("w = w * self.scale",), init=("self.scale = 0.7",)),
            _changes(("attr_float_rebound", ("model.scale = model.scale - 0.5",))),
        ),
        "steps": (
            Knob(
                ("for _ in range(self.steps):", "    w = np.tanh(w) + 0.5 * w"),
                init=("self.steps = 2",),
            ),
            _changes(("attr_int_rebound", (steps,))),
        ),
        "use_sin": (
            Knob(("if self.use_sin:", "    w = np.sin(w) + w"), init=("self.use_sin = True",)),
            _changes(("attr_bool_rebound", ("model.use_sin = not model.use_sin",))),
        ),
        "bias": (
            Knob(("w = w + self.bias",), init=("self.bias = np.linspace(-0.5, 0.5, 4)",)),
            _changes(
                ("attr_const_inplace", (bias,)),
                ("attr_const_rebound", ("model.bias = model.bias * -1.0 + 0.2",)),
            ),
        ),
    }


#: a partial of a function, its keyword changed in place between calls
SOFT_PARTIAL = """import functools


def soft_scaled(a, k=1.0):
    return np.sin(a * k)


SOFT = functools.partial(soft_scaled, k=0.7)"""

#: another module of the user's (a layer library): its source registered with linecache
#: as an imported file's is, so that the compiler reads its class's methods
OTHER_MODULE = """import linecache
import types

LAYERS_SOURCE = (
    "import numpy as np\\n"
    "\\n"
    "GAIN = 1.5\\n"
    "DEPTH = 2\\n"
    "SHIFT = np.zeros(4)\\n"
    "\\n"
    "class Block:\\n"
    "    def __init__(self, V):\\n"
    "        self.V = V\\n"
    "\\n"
    "    def forward(self, a):\\n"
    "        for _ in range(DEPTH):\\n"
    "            a = np.tanh(a * self.V + SHIFT) * GAIN\\n"
    "        return a\\n"
)


def module_of(name, source):
    filename = f"<fuzz module {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    made = types.ModuleType(name)
    exec(compile(source, filename, "exec"), made.__dict__)
    return made


layers = module_of("layers", LAYERS_SOURCE)"""


def global_knobs(rng: random.Random) -> dict[str, tuple[Knob, Options]]:
    """Module globals the body reads, and a helper it calls."""
    steps = rng.choice(["STEPS = STEPS + 1", "STEPS = 0", "STEPS = 1"])
    bias = rng.choice([("BIAS[1] = 0.9",), ("global BIAS", "BIAS *= -2.0")])  # numpy's *=: in place
    return {
        "SCALE": (
            Knob(("w = w * SCALE",), module="SCALE = 0.7"),
            _changes(("global_float_rebound", ("global SCALE", "SCALE = SCALE - 0.5"))),
        ),
        "BIAS": (
            Knob(("w = w + BIAS",), module="BIAS = np.array([0.1, -0.2, 0.3, 0.05])"),
            _changes(
                ("global_array_rebound", ("global BIAS", "BIAS = BIAS * 0.5 - 0.2")),
                ("global_array_inplace", bias),
            ),
        ),
        "STEPS": (
            Knob(("for _ in range(STEPS):", "    w = np.tanh(w) * 1.1 + 0.2"), module="STEPS = 2"),
            _changes(("global_int_rebound", ("global STEPS", steps))),
        ),
        "USE_SIN": (
            Knob(
                ("if USE_SIN:", "    w = np.sin(w) * 1.5", "else:", "    w = w * w"),
                module="USE_SIN = True",
            ),
            _changes(("global_bool_rebound", ("global USE_SIN", "USE_SIN = not USE_SIN"))),
        ),
        "CONFIG": (
            Knob(
                ('w = w * CONFIG["gain"] + CONFIG["shift"]',),
                module='CONFIG = {"gain": 1.2, "shift": 0.1}',
            ),
            _changes(
                ("global_dict_entry", ('CONFIG["gain"] = CONFIG["gain"] - 0.9',)),
                (
                    "global_dict_replaced",
                    ("global CONFIG", 'CONFIG = {"gain": -0.5, "shift": 0.3}'),
                ),
            ),
        ),
        "WEIGHTS": (
            Knob(("for c in WEIGHTS:", "    w = np.tanh(w * c)"), module="WEIGHTS = [0.5, 1.5]"),
            _changes(
                ("global_list_replaced", ("global WEIGHTS", "WEIGHTS = [0.3, -0.8, 1.1]")),
                ("global_list_append", ("WEIGHTS.append(0.9)",)),
                ("global_list_item", ("WEIGHTS[0] = -1.2",)),
            ),
        ),
        "BLOCK": (
            Knob(
                ("w = BLOCK.forward(w)",),
                module=OTHER_MODULE + "\n\n\nBLOCK = layers.Block(np.linspace(0.5, 1.5, 4))",
            ),
            _changes(
                ("module_global_rebound", ("layers.GAIN = -0.8 * layers.GAIN",)),
                ("module_loop_count_changed", ("layers.DEPTH = 3 - layers.DEPTH",)),
                ("module_array_rebound", ("layers.SHIFT = layers.SHIFT + 0.3",)),
            ),
        ),
        "SOFT": (
            Knob(("w = SOFT(w) + 0.1 * w",), module=SOFT_PARTIAL),
            _changes(("partial_keyword_changed", ('SOFT.keywords["k"] *= -1.5',))),
        ),
        "hw": (
            Knob(("w = hw(w)",), module="def hw(a):\n    return np.tanh(a) * 1.2"),
            _changes(
                (
                    "helper_redefined",
                    ("global hw", "", "def hw(a):", "    return np.sin(a) + 0.5 * a"),
                )
            ),
        ),
    }


def cell_knobs(rng: random.Random) -> dict[str, tuple[Knob, Options]]:
    """Cells of ``make_loss`` that its ``f`` reads, rebound by its setters."""
    scale = rng.choice(["-0.6", "1.4"])
    return {
        "scale": (
            Knob(("w = w * scale",), cell=("scale", "0.7")),
            _changes(("closure_rebound", (f"set_scale({scale})",))),
        ),
        "steps": (
            Knob(("for _ in range(steps):", "    w = np.tanh(w) + 0.5 * w"), cell=("steps", "2")),
            _changes(("closure_int_rebound", ("set_steps(3)",))),
        ),
        "offset": (
            Knob(("w = w + offset",), cell=("offset", "np.array([0.2, -0.1, 0.0, 0.3])")),
            _changes(("closure_array_rebound", ("set_offset(np.array([-0.4, 0.5, 0.1, 0.0]))",))),
        ),
    }


def call_knob(attribute: str) -> tuple[Knob, Options]:
    """The object's ``__call__`` (the target), replaced on its class by one reading
    ``x`` and the parameters' first array."""
    read = {"W": "self.W", "layers": "self.layers[0]", "params": 'self.params["w"]'}[attribute]
    replaced = f"Model.__call__ = lambda self, x: np.sum(np.tanh(x)) * np.sum(np.sin({read}))"
    return Knob(()), _changes(("call_replaced", (replaced,)))


#: the layouts of an object's parameters, by attribute name
LAYOUTS = {"W": array_layout, "layers": list_layout, "params": dict_layout}
