"""Programs organized around objects, methods and functions as values (part of the
generator, beside :mod:`fuzz.forms`): the families ``method_calls``,
``function_values``, ``static_structure``, ``varargs`` and ``generated_names``.

The blocks the generator writes over ``x`` and ``w`` become the body of a function or
a method whose first lines (*reads*, from the form's :class:`Piece` s) make ``w`` from
what the call is given:

- ``method_calls``: a class ``Model`` whose loss calls other methods of ``self``
  (``self.layer(w, self.W)``, chains of them, ``@staticmethod`` and ``@classmethod``),
  a callable object held in an attribute (``self.act(w)``), a function held in an
  attribute (an ufunc, a def, a lambda, a partial), another object's method
  (``self.inner.forward(w)``), the method of a class from another module reading that
  module's globals (``self.block.forward(w)``), an attribute of an object held
  (``self.scaler.V``), a dict of objects looped over, an object with ``__slots__``, an
  enum member and a logger held, an optimizer holding the model (a reference cycle,
  read through); the blocks sometimes in a method of their own that the loss calls
  (``return self.objective(x, w)``);
- ``function_values``: a function passed as an argument (``def f(x, w, act)`` called
  with ``np.tanh``, a def, a lambda, ``functools.partial``, a callable object), a
  module-level lambda or partial, a local bound to a function, a higher-order helper, a function
  returned by a call (``make_act(1.5)(w)``), a local lambda, a list of functions
  looped over, enumerated or indexed (changed in place or rebound between calls), a
  tuple of ufuncs written out, a helper's function default (``__defaults__`` changed);
- ``static_structure``: a list or dict of arrays as an argument, read with static
  slices and negative indexes (``params[:-1]``, ``params[1:]``, ``params[-1]``,
  ``params[i + 1]`` in ``range(len(params) - 1)``, keys ``p[f"W{i}"]``), an int
  argument as a loop bound;
- ``varargs``: ``def f(x, w, *args)`` or ``def loss(self, x, *args)`` called with 0 to
  3 extra arguments (numbers, constant arrays), read by ``len``, a loop, an index, or
  passed on (``self.objective(x, w, *args)``);
- ``generated_names``: parameters, attributes and locals named like the generated
  code's own names (``xp``, ``memory``, ``like``, ``stack``, ``size``, ``result``,
  ``returned``, ``d_out``, ``t1``);
- ``nested_grad``: derivatives taken inside the differentiated code (``grad``,
  ``value_and_grad``, ``hvp``, ``jvp`` of a module function, a lambda or a def that
  reads the caller's ``x`` and ``w``, a gradient bound to a local, Newton steps in a
  loop), the module function redefined between calls.

The target is a def, a module-level lambda calling it, or a ``functools.partial``
of it; it is made once (``value_and_grad``), at each call, or through
``differentiable(f)``. The module defines ``inputs(x, w)`` (the call's arguments,
read anew at every state) and ``make(x, w)`` (the object). With changes between calls
(the function passed, a method replaced on the class, an attribute's function
swapped, a callable object's attribute, the number of ``*args``, the list's length, an
int loop bound, a global of another module whose class's method the code calls, a
partial's keyword changed in place, the target's ``__call__`` replaced on its class),
the program also belongs to ``state_across_calls``: a specialization kept past the
change shows as a wrong number.

>>> form = draw_call_form(random.Random(3), frozenset(), frozenset({"varargs"}))
>>> form.family, "def inputs(x, w):" in form.render([], ["    v1 = x * w\\n"], "np.sum(v1)")
('varargs', True)
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from fuzz.knobs import OTHER_MODULE, Change

#: The families this module writes (constructs of the generator).
CALL_FAMILIES = ("method_calls", "function_values", "static_structure", "varargs")
CALL_FAMILIES += ("generated_names",)
#: drawn by a generator of its own (:func:`draw_nested_form`): the seeds of the families
#: above keep their programs
NESTED_FAMILIES = ("nested_grad",)
P_NESTED = 0.2  # the share of programs (drawn in none of the above) calling grad inside,
NESTED_SEEDS = range(62_000_000, 63_000_000)  # in these seeds; others keep their programs
P_CALLS = 0.10  # the share of otherwise plain programs drawn into these families
P_CHANGES = 0.4  # the share of them called across changes of what they are given


@dataclass(frozen=True)
class Piece:
    """What the body reads: lines at its start (rebinding ``w``), module text (helpers,
    classes, globals), lines of ``Model.__init__``, methods of ``Model``, lines of its
    class body; ``loops``: the reads loop (no second-order check); ``changes``: how a
    user changes what it reads between calls."""

    read: tuple[str, ...] = ()
    module: str = ""
    init: tuple[str, ...] = ()
    methods: str = ""
    loops: bool = False
    changes: tuple[Change, ...] = ()  # the changes of what it reads a user makes


@dataclass(frozen=True)
class CallForm:
    """How the blocks are wrapped (``holder``: ``function`` or ``object``), what is
    differentiated (``target``: ``f``, ``method``, ``call``), with respect to what
    (``wrt``), made how (``made``: ``once``, ``each``, ``differentiable``), the target's
    parameters (``params``, after ``self``), the call's arguments (``inputs``, an
    expression over ``x`` and ``w``), the wrapper of a function (``def``, ``lambda``,
    ``partial``), whether the blocks are a method of their own (``split``) and the
    name of the parameter attribute (``attribute``)."""

    family: str
    holder: str
    target: str
    wrt: Any
    knobs: tuple[Piece, ...]
    changes: tuple[Change, ...] = ()
    made: str = "once"
    params: tuple[str, ...] = ("x", "w")
    inputs: str = "(x, w)"
    wrapper: str = "def"
    split: bool = False
    attribute: str = "W"

    @property
    def tags(self) -> frozenset[str]:
        """The families the program belongs to."""
        return frozenset({self.family, *(["state_across_calls"] if self.changes else [])})

    @property
    def arguments(self) -> tuple[str, ...]:
        """The names the target is called with (its arguments are ``inputs(x, w)``)."""
        return ("*inputs(x, w)",)

    @property
    def loop_free(self) -> bool:
        """No piece loops."""
        return not any(p.loops for p in self.knobs)

    def render(self, helpers: list[str], blocks: list[str], result: str) -> str:
        """The module text: imports, module pieces, helpers, the target, ``make``,
        ``inputs``, the changes."""
        chunks = [c.strip("\n") for p in self.knobs for c in p.module.split("\n\n\n")]
        modules = "".join(c + "\n\n\n" for c in dict.fromkeys(chunks) if c)
        head = "import functools\n\nimport numpy as np\n\n\n" + modules
        head += "".join(h + "\n\n" for h in helpers)
        reads = [line for p in self.knobs for line in p.read]
        main = self._object(reads, blocks, result) if self.holder == "object" else ""
        main = main or self._function(reads, blocks, result)
        main += f"\n\ndef inputs(x, w):\n    return {self.inputs}\n"
        changes = "".join(
            f"\n\ndef change_{i}(model, grads):\n" + _lines(c.lines, 4)
            for i, c in enumerate(self.changes, 1)
        )
        return head + main + changes

    def _function(self, reads: list[str], blocks: list[str], result: str) -> str:
        params = list(self.params)
        name = "f" if self.wrapper == "def" else "body"
        if self.wrapper == "partial":
            params.append("scale=1.0")
            reads = [*reads, "w = w * scale"]
        text = f"def {name}({', '.join(params)}):\n" + _lines(reads, 4) + "".join(blocks)
        text += f"    return {result}\n"
        if self.wrapper == "lambda":
            passed = ", ".join(self.params)
            text += f"\n\nf = lambda {', '.join(self.params)}: body({passed})  # noqa: E731\n"
        elif self.wrapper == "partial":
            text += "\n\nf = functools.partial(body, scale=0.7)\n"
        return text + "\n\ndef make(x, w):\n    return None\n"

    def _object(self, reads: list[str], blocks: list[str], result: str) -> str:
        init = [f"self.{self.attribute} = w.copy()", *(line for p in self.knobs for line in p.init)]
        methods = "".join(p.methods + "\n" for p in self.knobs if p.methods)
        method = "__call__" if self.target == "call" else "loss"
        reads = [f"w = self.{self.attribute}", *reads]
        text = "class Model:\n    OFFSET = 0.2\n\n    def __init__(self, w):\n" + _lines(init, 8)
        text += "\n" + methods + f"\n    def {method}(self, {', '.join(self.params)}):\n"
        text += _lines(reads, 8)
        if self.split:
            passed = ", ".join(["x", "w", *(p for p in self.params if p.startswith("*"))])
            text += f"        return self.objective({passed})\n\n"
            extra = [p for p in self.params if p.startswith("*")]
            text += f"    def objective(self, {', '.join(['x', 'w', *extra])}):\n"
        text += "".join(_indent(b) for b in blocks) + f"        return {result}\n"
        return text + "\n\ndef make(x, w):\n    return Model(w)\n"

    def without(self, knob: int | None = None, change: int | None = None) -> CallForm:
        """This form less one piece or one change (for the minimizer)."""
        knobs = tuple(k for i, k in enumerate(self.knobs) if i != knob)
        changes = tuple(c for i, c in enumerate(self.changes) if i != change)
        return replace(self, knobs=knobs, changes=changes)


def _lines(lines: list[str] | tuple[str, ...], indent: int) -> str:
    return "".join((" " * indent + line if line else "") + "\n" for line in lines)


def _indent(block: str) -> str:
    return "".join("    " + line if line.strip() else line for line in block.splitlines(True))


# -- the pieces of each family ------------------------------------------------------------

ACT_CLASSES = """class Act:
    def __init__(self, gain):
        self.gain = gain

    def __call__(self, z):
        return np.tanh(z * self.gain)


class Softplus:
    def __call__(self, z):
        return np.log(1.0 + np.exp(z))"""

HELPERS = """def smooth(a):
    return a / (1.0 + a * a)


def scaled(a, k=1.0):
    return np.sin(a * k)


def mix(c, a):
    return c * a + np.cos(a)"""

#: functions a user passes or stores: (text, module text it needs)
FUNCTIONS = (
    ("np.tanh", ""),
    ("np.sin", ""),
    ("smooth", HELPERS),
    ("lambda a: a * np.tanh(a)", ""),
    ("functools.partial(scaled, k=0.7)", HELPERS),
    ("functools.partial(mix, 0.3)", HELPERS),
    ("Act(1.3)", ACT_CLASSES),
)


def _swaps(
    rng: random.Random, target: str, kind: str, first: str, glob: bool = False
) -> tuple[tuple[Change, ...], str]:
    """Two changes rebinding ``target`` to functions other than ``first`` (and the
    module text they need)."""
    chosen = rng.sample([f for f in FUNCTIONS if f[0] != first], 2)
    changes = tuple(
        Change(
            kind, (f"global {target}", f"{target} = {text}") if glob else (f"{target} = {text}",)
        )
        for text, _ in chosen
    )
    return changes, "\n\n\n".join(module for _, module in chosen)


def method_pieces(rng: random.Random) -> list[tuple[Piece, list[Change]]]:
    """Methods of ``self``, callable and function attributes, static and class methods,
    another object's method."""
    layer = rng.choice(["np.tanh(h) * W + 0.1 * h", "h * W + np.sin(h)"])
    fn, fn_module = rng.choice(FUNCTIONS)
    swaps, swap_module = _swaps(rng, "model.fn", "attr_function_swapped", fn)
    via = rng.choice(["self", "Model"])
    replaced_layer = (
        "def other_layer(self, h, W):",
        "    return h * W * 0.5 + np.cos(h)",
        "",
        "Model.layer = other_layer",
    )
    return [
        (
            Piece(
                ("w = self.layer(w, self.W)",),
                methods=f"    def layer(self, h, W):\n        return {layer}\n",
            ),
            [Change("method_replaced", replaced_layer)],
        ),
        (
            Piece(
                ("w = self.forward(w)",),
                init=("self.b = 0.1 * np.ones(4)",),
                methods="    def forward(self, a):\n        return self.squash(self.affine(a))\n\n"
                "    def affine(self, a):\n        return a * self.W + self.b\n\n"
                "    def squash(self, a):\n        return np.tanh(a)\n",
            ),
            [
                Change("method_replaced", ("Model.squash = lambda self, a: a / (1.0 + a * a)",)),
                Change("attr_rebound", ("model.b = model.b + 0.5",)),
            ],
        ),
        (
            Piece(("w = self.act(w)",), module=ACT_CLASSES, init=("self.act = Act(1.3)",)),
            [
                Change("subobject_attr_rebound", ("model.act.gain = -0.7",)),
                Change("subobject_replaced", ("model.act = Softplus()",)),
                Change(
                    "dunder_replaced", ("Act.__call__ = lambda self, z: np.sin(z) * self.gain",)
                ),
            ],
        ),
        (
            Piece(
                ("w = self.fn(w) + 0.5 * w",),
                module="\n\n\n".join(m for m in (fn_module, swap_module) if m),
                init=(f"self.fn = {fn}",),
            ),
            list(swaps),
        ),
        (
            Piece(
                (f"w = {via}.squash_static(w)",),
                methods="    @staticmethod\n    def squash_static(a):\n"
                "        return a / (1.0 + a * a)\n",
            ),
            [Change("instance_shadows_method", ("model.squash_static = lambda a: np.sin(a)",))]
            if via == "self"
            else [Change("method_replaced", ("Model.squash_static = staticmethod(np.cos)",))],
        ),
        (
            Piece(
                ("w = self.shift(w)",),
                methods="    @classmethod\n    def shift(cls, a):\n        return a + cls.OFFSET\n",
            ),
            [Change("class_attr_rebound", ("Model.OFFSET = -0.9",))],
        ),
        (
            Piece(
                ("w = self.block.forward(w)",),
                module=OTHER_MODULE,
                init=("self.block = layers.Block(np.linspace(0.5, 1.5, 4))",),
                loops=True,
            ),
            [
                Change("module_global_rebound", ("layers.GAIN = -0.8 * layers.GAIN",)),
                Change("module_loop_count_changed", ("layers.DEPTH = 3 - layers.DEPTH",)),
                Change("module_array_rebound", ("layers.SHIFT = layers.SHIFT + 0.3",)),
            ],
        ),
        (
            Piece(
                ("w = self.soft(w) + 0.2 * w",),
                module=HELPERS,
                init=("self.soft = functools.partial(scaled, k=0.7)",),
            ),
            [Change("partial_keyword_changed", ('model.soft.keywords["k"] *= -1.5',))],
        ),
        (
            Piece(
                ("w = self.inner.forward(w)",),
                module=INNER,
                init=("self.inner = Inner(np.linspace(0.5, 1.5, 4))",),
            ),
            [
                Change("subobject_attr_rebound", ("model.inner.V = model.inner.V * -1.0",)),
                Change("subobject_replaced", ("model.inner = Inner(np.ones(4) * 0.3)",)),
            ],
        ),
        *object_attribute_pieces(),
    ]


INNER = (
    "class Inner:\n    def __init__(self, V):\n        self.V = V\n\n"
    "    def forward(self, a):\n        return np.tanh(a) * self.V"
)


def object_attribute_pieces() -> list[tuple[Piece, list[Change]]]:
    """What an object holds besides arrays and the user's objects (an enum's member, a
    logger), a back-reference to itself, an object with ``__slots__``, a dict of objects
    and an attribute of an object held (``self.inner.V``)."""
    return [
        (
            Piece(
                ("w = w * (1.5 if self.mode == Mode.TRAIN else -0.5)",),
                module="import enum\nimport logging\n\n\n"
                "class Mode(enum.Enum):\n    TRAIN = 1\n    EVAL = 2",
                init=("self.mode = Mode.TRAIN", 'self.log = logging.getLogger("fuzz")'),
            ),
            [Change("enum_attr_changed", ("model.mode = Mode.EVAL",))],
        ),
        (
            Piece(
                ("w = w + self.optimizer.lr * np.sin(self.optimizer.model.W)",),
                module="class Optimizer:\n    def __init__(self, model, lr):\n"
                "        self.model = model\n        self.lr = lr",
                init=("self.optimizer = Optimizer(self, 0.3)",),
            ),
            [Change("subobject_attr_rebound", ("model.optimizer.lr = -0.6",))],
        ),
        (
            Piece(
                ("w = self.affine(w)",),
                module='class Affine:\n    __slots__ = ("a", "c")\n\n'
                "    def __init__(self, a, c):\n        self.a = a\n        self.c = c\n\n"
                "    def __call__(self, z):\n        return np.tanh(self.a * z) + self.c",
                init=("self.affine = Affine(0.7, np.linspace(-0.2, 0.2, 4))",),
            ),
            [
                Change("subobject_attr_rebound", ("model.affine.a = -1.1",)),
                Change("subobject_replaced", ("model.affine = Affine(1.3, np.zeros(4))",)),
            ],
        ),
        (
            Piece(
                ("for block in self.blocks.values():", "    w = block.forward(w) + w"),
                module=INNER,
                init=(
                    'self.blocks = {"a": Inner(np.linspace(0.5, 1.5, 4)), '
                    '"b": Inner(np.ones(4) * -0.4)}',
                ),
            ),
            [
                Change("subobject_attr_rebound", ('model.blocks["b"].V = np.ones(4) * 0.9',)),
                Change("subobject_replaced", ('model.blocks["c"] = Inner(np.ones(4) * 0.2)',)),
            ],
        ),
        (
            Piece(
                ("w = w * self.scaler.V + np.cos(w)",),
                module=INNER,
                init=("self.scaler = Inner(np.linspace(-1.0, 1.0, 4))",),
            ),
            [Change("subobject_attr_rebound", ("model.scaler.V = model.scaler.V * 0.5",))],
        ),
    ]


def function_pieces(rng: random.Random, holder: str) -> list[tuple[Piece, list[Change]]]:
    """Functions as values: passed (function holder only: ``act``), module lambdas,
    locals bound to functions, higher-order helpers, returned closures, local lambdas."""
    applied, applied_module = rng.choice(FUNCTIONS[:4])
    found = [
        (
            Piece(
                ("w = sigmoid(w) * 2.0",),
                module="sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731",
            ),
            [
                Change(
                    "lambda_redefined", ("global sigmoid", "sigmoid = lambda z: np.tanh(z) * 0.5")
                )
            ],
        ),
        (
            Piece(
                ("g = helper", "w = g(w) * 0.9"),
                module="def helper(a):\n    return np.sin(a) + 0.5 * a",
            ),
            [
                Change(
                    "helper_redefined",
                    ("global helper", "", "def helper(a):", "    return np.cos(a) * a"),
                )
            ],
        ),
        (
            Piece(
                (f"w = apply({applied}, w)",),
                module=applied_module + "\n\n\ndef apply(fn, a):\n    return fn(a) * 0.5 + a",
            ),
            [],
        ),
        (
            Piece(
                ("w = make_act(1.5)(w)",),
                module="def make_act(k):\n    return lambda z: np.tanh(k * z)",
            ),
            [],
        ),
        (
            Piece(
                ("sq = lambda a: a * np.cos(a)  # noqa: E731", "w = sq(w)"),
            ),
            [],
        ),
        _listed_functions(rng),
        (
            Piece(
                ("w = with_default(w)",),
                module="def with_default(a, fn=np.tanh):\n    return fn(a) * 0.7 + 0.3 * a",
            ),
            [Change("default_changed", ("with_default.__defaults__ = (np.sin,)",))],
        ),
        (
            Piece(
                ("for squash in (np.tanh, np.sin):", "    w = squash(w) * 0.8 + 0.2 * w"),
                loops=True,
            ),
            [],
        ),
        (
            Piece(
                ("w = soft(w) + 0.1 * w",),
                module=HELPERS + "\n\n\nsoft = functools.partial(scaled, k=0.7)",
            ),
            [Change("partial_keyword_changed", ('soft.keywords["k"] *= -1.5',))],
        ),
    ]
    return found


def _listed_functions(rng: random.Random) -> tuple[Piece, list[Change]]:
    """A list of functions the body calls: looped over, enumerated, indexed in a
    ``range(len(...))`` loop or at an index written out; changed in place or rebound."""
    chosen = rng.sample(FUNCTIONS, 3)
    entries = ", ".join(text for text, _ in chosen[:2])
    module = "\n\n\n".join(dict.fromkeys(m for _, m in chosen if m))
    module += f"\n\n\nSQUASHES = [{entries}]"
    reads = rng.choice(
        [
            ("for squash in SQUASHES:", "    w = squash(w) * 0.8 + 0.1 * w"),
            ("for i, squash in enumerate(SQUASHES):", "    w = squash(w) * (0.5 + 0.1 * i)"),
            ("for i in range(len(SQUASHES)):", "    w = SQUASHES[i](w) * 0.9"),
            ("w = SQUASHES[-1](w) + 0.2 * w",),
        ]
    )
    third = chosen[2][0]
    changes = [
        Change("list_entry_swapped", (f"SQUASHES[0] = {third}",)),
        Change("list_rebound", ("global SQUASHES", f"SQUASHES = [{third}, {entries}]")),
    ]
    return Piece(reads, module=module.strip(), loops=reads[0].startswith("for")), changes


def structure_pieces(rng: random.Random, kind: str) -> list[tuple[Piece, list[Change]]]:
    """Reads of a list (``params``) or a dict (``p``) of arrays with static indexes,
    slices and keys; an int argument ``n`` as a loop bound."""
    if kind == "dict":
        return [
            (
                Piece(
                    ("for i in range(1, LENGTH):", '    w = w * 0.5 + np.tanh(p[f"W{i}"])'),
                    loops=True,
                ),
                [],
            ),
            (Piece(('w = w + p[f"W{LENGTH - 1}"] * 0.3',)), []),
            (
                Piece(
                    ("for i in range(n):", '    w = w + np.cos(p[f"W{i % LENGTH}"])'), loops=True
                ),
                [Change("int_argument_changed", ("global N", "N = N + 2"))],
            ),
            (Piece(("for key in p:", "    w = w + 0.2 * np.sin(p[key])"), loops=True), []),
        ]
    return [
        (Piece(("for q in params[1:]:", "    w = np.tanh(w) * q"), loops=True), []),
        (Piece(("w = params[-1] + np.sin(w)",)), []),
        (Piece(("w = w * params[-2]",)), []),
        (
            Piece(
                (
                    "for i in range(len(params) - 1):",
                    "    w = w + params[i] * np.tanh(params[i + 1])",
                ),
                loops=True,
            ),
            [],
        ),
        (Piece(("for q in params[:-1]:", "    w = w * 0.5 + np.sin(q)"), loops=True), []),
        (Piece(("for q in params[1:-1]:", "    w = w + 0.3 * q"), loops=True), []),
        (Piece(("w = w + params[len(params) - 1] * params[0]",)), []),
        (
            Piece(
                ("for i in range(n):", "    w = w + np.cos(params[i % len(params)])"), loops=True
            ),
            [Change("int_argument_changed", ("global N", "N = N + 2"))],
        ),
    ]


def varargs_pieces(rng: random.Random) -> list[tuple[Piece, list[Change]]]:
    """Reads of ``args``: its length, a loop over it, its first item."""
    return [
        (Piece(("w = w * (1.0 + 0.3 * len(args))",)), []),
        (Piece(("for a in args:", "    w = np.tanh(w + a)"), loops=True), []),
        (Piece(("if args:", "    w = w * args[0]")), []),
        (Piece(("if len(args) > 1:", "    w = w + np.sin(args[1] * w)")), []),
    ]


NESTED_MODULE = (
    "from autodiff_tutor import grad, hvp, jvp, value_and_grad\n\n\n"
    "def inner_loss(a):\n    return np.sum(np.sin(a) * a + 0.1 * a ** 3)\n\n\n"
    "def squashed(a, squash=np.tanh):\n    return np.sum(squash(a) * a)"
)
INNER_REDEFINED = Change(
    "inner_redefined",
    ("global inner_loss", "", "def inner_loss(a):", "    return np.sum(np.cos(a) * a * 0.5)"),
)


def nested_pieces(rng: random.Random) -> list[tuple[Piece, list[Change]]]:
    """Derivatives inside the code: of the module's ``inner_loss``, of a lambda or a
    def reading ``x`` and ``w`` (the outer variables: no perturbation confusion), of a
    def given a function or left to its default one."""
    pieces = [
        ("w = w - 0.1 * grad(inner_loss)(w)",),
        ("w = w + 0.05 * np.sum(grad(inner_loss)(w) ** 2)",),
        ("w = w * grad(lambda s: np.sum(np.tanh(s * w)))(0.5)",),
        (
            "value, slope = value_and_grad(inner_loss)(w)",
            "w = w * 0.5 + 0.01 * value + 0.1 * slope",
        ),
        ("w = w + 0.1 * hvp(inner_loss)(w, np.cos(w))",),
        ("value, tangent = jvp(inner_loss, (w,), (np.sin(w),))", "w = w + 0.1 * tangent * w"),
        (
            "def bump(s):",
            "    return np.sum(np.cos(s) * w) + np.sum(x * x)",
            "w = w + 0.1 * grad(bump)(w)",
        ),
        ("dg = grad(inner_loss)", "w = w - 0.05 * dg(w) * dg(0.5 * w)"),
        # wrt=None of a function of one input: its one gradient, not a 1-tuple
        ("w = w - 0.1 * grad(inner_loss, wrt=None)(w)",),
        (
            "def tilt(s):",
            "    return np.sum(np.sin(s) * w)",
            "value, slope = value_and_grad(tilt, wrt=None)(w)",
            "w = w + 0.1 * slope * value",
        ),
        # a def given a function (or left to its default one): resolved while compiling
        ("w = w - 0.1 * grad(squashed)(w, np.sin)",),
        ("w = w + 0.1 * grad(squashed)(w) * w",),
    ]
    found = [(Piece(p, module=NESTED_MODULE), [INNER_REDEFINED]) for p in pieces]
    newton = ("for _ in range(2):", "    w = w - grad(inner_loss)(w) / 4.0")
    found.append((Piece(newton, module=NESTED_MODULE, loops=True), [INNER_REDEFINED]))
    return found


#: the users' names that the generated code also uses
USER_NAMES = ("xp", "memory", "like", "stack", "size", "result", "returned", "d_out", "t1")

#: the extra arguments a ``*args`` call may be given, and how their number changes
EXTRAS = ("0.5", "-0.3", "np.linspace(-0.2, 0.2, 4)", "1.5")
EXTRA_CHANGES = (
    Change("varargs_count_changed", ("global EXTRAS", "EXTRAS = EXTRAS + (0.7,)")),
    Change("varargs_count_changed", ("global EXTRAS", "EXTRAS = EXTRAS[:1]")),
    Change("varargs_count_changed", ("global EXTRAS", "EXTRAS = ()")),
)


# -- drawing a form -----------------------------------------------------------------------


def draw_call_form(
    rng: random.Random, exclude: frozenset[str], require: frozenset[str] = frozenset()
) -> CallForm | None:
    """The form of a program of these families (``None``: none drawn), from its own
    ``rng``; ``require``: families the program must belong to (one of them)."""
    allowed = [f for f in CALL_FAMILIES if f not in exclude]
    wanted = [f for f in allowed if f in require]
    if require and not wanted:
        return None
    if not wanted and (not allowed or rng.random() >= P_CALLS):
        return None
    family = rng.choice(wanted or allowed)
    changing = "state_across_calls" not in exclude and rng.random() < P_CHANGES
    form = DRAWS[family](rng)
    made = rng.choice(["once", "once", "each", "differentiable"])
    form = replace(form, made=made)
    if not changing:
        return form
    options = [c for p in form.knobs for c in p.changes] + _step_changes(form)
    if not options:
        return form
    changes = tuple(rng.choice(options) for _ in range(rng.randint(1, 3)))
    return replace(form, changes=changes)


def draw_nested_form(
    rng: random.Random, exclude: frozenset[str], require: frozenset[str] = frozenset()
) -> CallForm | None:
    """The form of a ``nested_grad`` program (``None``: none drawn), from its own
    ``rng``, as :func:`draw_call_form` draws the others."""
    if "nested_grad" in exclude or (require and "nested_grad" not in require):
        return None
    if not require and rng.random() >= P_NESTED:
        return None
    form = replace(_draw_nested_grad(rng), made=rng.choice(["once", "once", "each"]))
    if "state_across_calls" in exclude or rng.random() >= P_CHANGES:
        return form
    return replace(form, changes=(INNER_REDEFINED,))


def _step_changes(form: CallForm) -> list[Change]:
    """The parameters moved along the gradient the change is given; the target's
    ``__call__`` replaced on its class, a target partial's keyword changed in place."""
    if form.holder == "object" and form.target == "call":
        replaced = (
            "Model.__call__ = lambda self, x, *args: np.sum(np.tanh(x)) * "
            f"np.sum(np.sin(self.{form.attribute}))"
        )
        return [*_steps(form), Change("call_replaced", (replaced,))]
    if form.wrapper == "partial":
        keyword = ('f.keywords["scale"] *= -1.5',)
        return [*_steps(form), Change("partial_keyword_changed", keyword)]
    return _steps(form)


def _steps(form: CallForm) -> list[Change]:
    """The parameters moved along the gradient the change is given."""
    if form.holder == "object":
        name = f"model.{form.attribute}"
        step = "grads[1]" if isinstance(form.wrt, list) else "grads"
        if form.wrt == f"self.{form.attribute}" or isinstance(form.wrt, list):
            return [Change("attr_rebound", (f"{name} = {name} - 0.1 * {step}",))]
        return [Change("attr_rebound", (f"{name} = {name} * 0.9",))]
    return []


def _pick(rng: random.Random, pieces: list[tuple[Piece, list[Change]]], low: int, high: int):
    chosen = rng.sample(pieces, min(len(pieces), rng.randint(low, high)))
    return tuple(replace(piece, changes=tuple(changes)) for piece, changes in chosen)


def _object_wrt(rng: random.Random, attribute: str = "W", argument: str = "x") -> Any:
    name = f"self.{attribute}"
    return rng.choice([name, name, argument, 0, [argument, name]])


def _draw_method_calls(rng: random.Random) -> CallForm:
    knobs = _pick(rng, method_pieces(rng), 1, 3)
    target = rng.choice(["method", "method", "call"])
    return CallForm(
        "method_calls",
        "object",
        target,
        _object_wrt(rng),
        knobs,
        params=("x",),
        inputs="(x,)",
        split=rng.random() < 0.3,
    )


def _draw_function_values(rng: random.Random) -> CallForm:
    holder = rng.choice(["function", "function", "object"])
    pieces = function_pieces(rng, holder)
    if holder == "function" and rng.random() < 0.6:  # a function passed as an argument
        text, module = rng.choice(FUNCTIONS)
        swaps, swap_module = _swaps(rng, "ACT", "function_argument_changed", text, glob=True)
        passed = Piece(
            ("w = act(w) + 0.5 * w",),
            module=f"{module}\n\n\n{swap_module}\n\n\nACT = {text}",
            changes=swaps,
        )
        knobs = (passed, *_pick(rng, pieces, 0, 2))
        wrapper = rng.choice(["def", "def", "lambda", "partial"])
        return CallForm(
            "function_values",
            "function",
            "f",
            [0, 1],
            knobs,
            params=("x", "w", "act"),
            inputs="(x, w, ACT)",
            wrapper=wrapper,
        )
    knobs = _pick(rng, pieces, 1, 3)
    if holder == "object":
        return CallForm(
            "function_values",
            "object",
            "method",
            _object_wrt(rng),
            knobs,
            params=("x",),
            inputs="(x,)",
        )
    wrapper = rng.choice(["def", "lambda", "partial"])
    return CallForm("function_values", "function", "f", [0, 1], knobs, wrapper=wrapper)


def _draw_static_structure(rng: random.Random) -> CallForm:
    kind = rng.choice(["list", "list", "dict"])
    length = rng.randint(2, 4)
    if kind == "list":
        maker = (
            "def make_params(w):\n"
            "    return [w * (1.0 + 0.2 * k) + 0.05 * k for k in range(LENGTH)]"
        )
        first, name = "w = params[0] * 1.0", "params"
    else:
        maker = (
            'def make_params(w):\n    return {f"W{k}": w * (1.0 + 0.2 * k) + 0.05 * k'
            " for k in range(LENGTH)}"
        )
        first, name = 'w = p["W0"] * 1.0', "p"
    module = f"LENGTH = {length}\nN = {rng.randint(0, 3)}\n\n\n{maker}"
    lengths = (
        Change("list_length_changed", ("global LENGTH", "LENGTH = LENGTH + 1")),
        Change("list_length_changed", ("global LENGTH", "LENGTH = max(2, LENGTH - 1)")),
    )
    base = Piece((first,), module=module, changes=lengths)
    knobs = (base, *_pick(rng, structure_pieces(rng, kind), 1, 3))
    with_n = any("range(n)" in line for p in knobs for line in p.read)
    params = ("x", name, "n") if with_n else ("x", name)
    inputs = "(x, make_params(w), N)" if with_n else "(x, make_params(w))"
    wrapper = rng.choice(["def", "def", "lambda"])
    return CallForm(
        "static_structure",
        "function",
        "f",
        [0, 1],
        knobs,
        params=params,
        inputs=inputs,
        wrapper=wrapper,
    )


def _draw_varargs(rng: random.Random) -> CallForm:
    count = rng.randint(0, 3)
    extras = rng.sample(EXTRAS, count)
    base = Piece(module=f"EXTRAS = ({''.join(e + ', ' for e in extras)})", changes=EXTRA_CHANGES)
    knobs = (base, *_pick(rng, varargs_pieces(rng), 1, 3))
    if rng.random() < 0.5:
        return CallForm(
            "varargs",
            "object",
            rng.choice(["method", "call"]),
            _object_wrt(rng),
            knobs,
            params=("x", "*args"),
            inputs="(x, *EXTRAS)",
            split=rng.random() < 0.4,
        )
    wrapper = rng.choice(["def", "def", "lambda", "partial"])
    return CallForm(
        "varargs",
        "function",
        "f",
        [0, 1],
        knobs,
        params=("x", "w", "*args"),
        inputs="(x, w, *EXTRAS)",
        wrapper=wrapper,
    )


def _draw_generated_names(rng: random.Random) -> CallForm:
    names = rng.sample(USER_NAMES, 5)
    first, second, local, other, last = names
    reads = [
        f"{local} = np.tanh(w) * 0.5",
        f"w = {local} + w",
        f"{other} = w * w",
        f"w = w - 0.1 * {other}",
    ]
    if rng.random() < 0.5:
        reads += [f"{last} = np.sum({other})", f"w = w + 0.01 * {last}"]
    if rng.random() < 0.5:
        attribute = rng.choice(["size", "memory", "like", "stack"])
        knobs = (Piece((f"x = {first} * 1.0", *reads)),)
        return CallForm(
            "generated_names",
            "object",
            "method",
            _object_wrt(rng, attribute, first),
            knobs,
            params=(first,),
            inputs="(x,)",
            attribute=attribute,
        )
    knobs = (Piece((f"x = {first} * 1.0", f"w = {second} * 1.0", *reads)),)
    wrapper = rng.choice(["def", "def", "lambda"])
    return CallForm(
        "generated_names", "function", "f", [0, 1], knobs, params=(first, second), wrapper=wrapper
    )


def _draw_nested_grad(rng: random.Random) -> CallForm:
    knobs = _pick(rng, nested_pieces(rng), 1, 3)
    wrapper = rng.choice(["def", "def", "lambda"])
    return CallForm("nested_grad", "function", "f", [0, 1], knobs, wrapper=wrapper)


DRAWS = {
    "method_calls": _draw_method_calls,
    "function_values": _draw_function_values,
    "static_structure": _draw_static_structure,
    "varargs": _draw_varargs,
    "generated_names": _draw_generated_names,
}
