"""A function compiled once and called again after the user changed what it reads.

Training loops compile ``value_and_grad`` once and change state between steps: an
object's attributes (rebound, changed in place, a list or dict of parameters replaced),
globals (arrays of the same or another shape, numbers, loop bounds, flags, a function
rebound to another), closure cells, and helpers redefined in a later notebook cell. At
every step the compiled result must equal a fresh compile on the new state (and
central differences); tracing, which runs the function anew, must agree too.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import types

import numpy as np
import pytest
from oracles import central_difference

import autodiff_tutor as ad
from autodiff_tutor import tracing

STEPS = 12
_cells = itertools.count()


def run_cell(namespace: dict, source: str) -> None:
    """Run ``source`` in ``namespace`` as a notebook cell runs: its source registered
    with linecache under a name of its own, so the compiler can read it."""
    filename = f"<cell-{next(_cells)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)


def notebook(*cells: str) -> dict:
    namespace: dict = {"np": np}
    for cell in cells:
        run_cell(namespace, cell)
    return namespace


def fresh(fn):
    """The same function as a new object: compiling it shares nothing with ``fn``."""
    return types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )


def assert_same(got, expected, what):
    value, gradient = got
    expected_value, expected_gradient = expected
    np.testing.assert_allclose(value, expected_value, rtol=1e-12, err_msg=f"value, {what}")
    np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-10, atol=1e-12, err_msg=what)


# -- the textbook training loop over a model object -------------------------------

MODEL = """
class Model:
    def __init__(self):
        self.W = np.array([[1.0, -0.5], [0.3, 0.8]])
        self.b = np.array([0.1, -0.2])

    def loss(self, X):
        h = np.tanh(X @ self.W + self.b)
        return np.sum(h * h)
"""

X = np.array([[1.0, 0.5], [-0.3, 0.9], [0.2, -1.1]])


def _rebind(model, g, step):
    model.W = model.W - 0.1 * g


def _in_place(model, g, step):
    model.W -= 0.1 * g


def _element(model, g, step):
    model.W[step % 2, 0] = 0.1 * step


def _new_array_other_values(model, g, step):
    model.W = np.full((2, 2), 0.05 * step)


def _other_attribute(model, g, step):
    model.b = model.b + 0.1


UPDATES = [_rebind, _in_place, _element, _new_array_other_values, _other_attribute]


@pytest.mark.parametrize("update", UPDATES, ids=lambda u: u.__name__.strip("_"))
def test_training_loop_over_a_model_object_sees_every_update(update):
    """``value_and_grad(model.loss, wrt="self.W")`` made once: each step's value and
    gradient are those of the model as it is now (a fresh compile, tracing and
    central differences agree)."""
    model = notebook(MODEL)["Model"]()
    both = ad.value_and_grad(model.loss, wrt="self.W")
    for step in range(STEPS):
        got = both(X)
        method = types.MethodType(fresh(type(model).loss), model)
        expected = ad.value_and_grad(method, wrt="self.W")(X)
        assert_same(got, expected, f"compiler, step {step}")
        traced = tracing.value_and_gradient(model.loss, X, wrt="self.W")
        assert_same(traced, expected, f"tracing, step {step}")
        if step % 4 == 0:

            def loss_of(W, model=model):
                saved, model.W = model.W, W
                try:
                    return model.loss(X)
                finally:
                    model.W = saved

            np.testing.assert_allclose(got[1], central_difference(loss_of, [model.W], 0), atol=1e-6)
        update(model, got[1], step)


def test_an_attribute_holding_a_list_replaced_by_a_longer_list():
    """A list of parameters replaced by a new one of another length: the gradient has
    the new structure, with the new values."""
    source = """
class Stack:
    def __init__(self):
        self.layers = [np.eye(2), 0.5 * np.eye(2)]

    def loss(self, x):
        for W in self.layers:
            x = np.tanh(x @ W)
        return np.sum(x)
"""
    model = notebook(source)["Stack"]()
    both = ad.value_and_grad(model.loss, wrt="self.layers")
    x = np.array([[0.3, -0.7]])
    for step in range(6):
        value, gradients = both(x)
        expected_value, expected = tracing.value_and_gradient(model.loss, x, wrt="self.layers")
        assert len(gradients) == len(model.layers) == 2 + step // 2
        np.testing.assert_allclose(value, expected_value, rtol=1e-12)
        for got, want in zip(gradients, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        if step % 2:
            model.layers = [*model.layers, (0.1 * step) * np.ones((2, 2))]
        else:
            model.layers = [W + 0.1 for W in model.layers]


def test_an_attribute_holding_a_dict_replaced_by_a_new_dict():
    source = """
class Net:
    def __init__(self):
        self.params = {"W": np.eye(2), "b": np.zeros(2)}

    def loss(self, x):
        return np.sum(np.sin(x @ self.params["W"] + self.params["b"]))
"""
    model = notebook(source)["Net"]()
    both = ad.value_and_grad(model.loss, wrt="self.params")
    x = np.array([[0.3, -0.7], [1.0, 0.2]])
    for step in range(6):
        value, gradients = both(x)
        expected_value, expected = tracing.value_and_gradient(model.loss, x, wrt="self.params")
        np.testing.assert_allclose(value, expected_value, rtol=1e-12)
        assert gradients.keys() == expected.keys()
        for key in expected:
            np.testing.assert_allclose(gradients[key], expected[key], rtol=1e-10, atol=1e-12)
        model.params = {k: v * 0.9 + 0.05 * step for k, v in model.params.items()}


# -- globals, closures and helpers changed between calls ---------------------------

# Each case: the cells that define ``f`` and its state, then the cells run between
# calls (one per change), in the order a user runs them.
CASES = {
    "a global array rebound, same shape": (
        "A = np.eye(3)\ndef f(x):\n    return np.sum(np.sin(A @ x))\n",
        ["A = 2.0 * A + 0.1", "A[0, 1] = 3.0", "A = np.ones((3, 3))"],
    ),
    "a global array rebound to another shape (broadcasting changes)": (
        "B = np.array([1.0, 2.0, 3.0])\ndef f(x):\n    return np.sum(np.sin(x * B))\n",
        ["B = np.array([2.0])", "B = np.ones((2, 3, 1))", "B = np.arange(3.0)"],
    ),
    "a global number rebound, then an array": (
        "c = 2.0\ndef f(x):\n    return np.sum(c * x ** 2)\n",
        ["c = 5.0", "c = np.array([[1.0], [2.0], [3.0]])", "c = 3"],
    ),
    "a global loop bound": (
        "n = 2\ndef f(x):\n    s = 0.0\n    for i in range(n):\n"
        "        s = s + np.sum(np.sin(x * (i + 1)))\n    return s\n",
        ["n = 4", "n = 0", "n = 1"],
    ),
    "a global flag taken by an if": (
        "flag = True\ndef f(x):\n    if flag:\n        return np.sum(np.sin(x))\n"
        "    return np.sum(np.cos(x) * x)\n",
        ["flag = False", "flag = True"],
    ),
    "a global function rebound to another numpy function": (
        "act = np.tanh\ndef f(x):\n    return np.sum(act(x) * x)\n",
        ["act = np.sin", "act = np.exp", "act = np.tanh"],
    ),
    "a helper redefined in a later cell": (
        "def h(z):\n    return z * z\n\ndef f(x):\n    return np.sum(h(x))\n",
        [
            "def h(z):\n    return np.sin(z) * 3.0\n",
            "def h(z):\n    return np.exp(z)\n",
            "h = np.cos",
        ],
    ),
    "a helper's own global rebound": (
        "k = 2.0\nact = np.tanh\ndef h(z):\n    return act(z) * k\n\n"
        "def f(x):\n    return np.sum(h(x))\n",
        ["k = 3.0", "act = np.sin"],
    ),
    "a global dict entry changed, then the dict replaced": (
        "weights = {'a': 1.0, 'b': 2.0}\ndef f(x):\n"
        "    return np.sum(weights['a'] * x + weights['b'] * x ** 2)\n",
        ["weights['a'] = 4.0", "weights = {'a': -1.0, 'b': 0.5}"],
    ),
    "a closure cell rebound": (
        "def make():\n    scale = 2.0\n    act = np.tanh\n"
        "    def f(x):\n        return np.sum(scale * act(x))\n"
        "    def set_scale(v):\n        nonlocal scale\n        scale = v\n"
        "    def set_act(g):\n        nonlocal act\n        act = g\n"
        "    return f, set_scale, set_act\n"
        "f, set_scale, set_act = make()\n",
        ["set_scale(7.0)", "set_act(np.sin)", "set_scale(np.array([1.0, 2.0, 3.0]))"],
    ),
}

x0 = np.array([0.3, -0.8, 1.1])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mode", ["value_and_grad", "grad", "jvp", "hvp"])
def test_a_compiled_function_follows_its_globals_closures_and_helpers(case, mode):
    """Compiled once, called several times after each change (the specialized pairs
    run from the second call): every result equals a fresh compile's, and central
    differences of the plain function."""
    setup, changes = CASES[case]
    namespace = notebook(setup)
    compiled = ad.differentiable(namespace["f"])
    direction = np.array([1.0, 0.5, -2.0])
    made = {
        "value_and_grad": lambda f: ad.value_and_grad(f),
        "grad": lambda f: lambda x: (f(x), ad.grad(f)(x)),
        "jvp": lambda f: lambda x: ad.jvp(f, (x,), (direction,)),
        "hvp": lambda f: lambda x: ad.jvp(ad.grad(f), (x,), (direction,)),
    }[mode]
    once = made(compiled)
    for change in ["", *changes]:
        run_cell(namespace, change)
        for call in range(3):
            x = x0 + 0.1 * call
            got = once(x)
            expected = made(fresh(namespace["f"]))(x)
            assert_same(got, expected, f"{case}, after {change!r}, call {call}")
            if mode in ("value_and_grad", "grad"):
                difference = central_difference(namespace["f"], [x], 0)
                np.testing.assert_allclose(got[1], difference, atol=1e-6)
            if mode == "jvp":
                difference = central_difference(namespace["f"], [x], 0) @ direction
                np.testing.assert_allclose(got[1], difference, atol=1e-6)


def test_a_rebound_name_makes_the_function_compile_again_and_only_then():
    """The compiled pair is reused while the names it read are unchanged (a rebound
    number of the same type is read at the call), and made again after a rebinding
    that changes what was compiled (a function, an array's shape)."""
    namespace = notebook(
        "act = np.tanh\nc = 1.0\nA = np.ones(3)\ndef f(x):\n    return np.sum(c * act(x) * A)\n"
    )
    compiled = ad.differentiable(namespace["f"])
    first = compiled.derivative()
    run_cell(namespace, "c = 2.0\nA = np.zeros(3)")
    assert compiled.derivative() is first
    run_cell(namespace, "act = np.sin")
    second = compiled.derivative()
    assert second is not first
    run_cell(namespace, "A = np.zeros((2, 3))")
    assert compiled.derivative() is not second


def test_a_method_and_a_structured_call_follow_a_rebound_global():
    """The flattened function a bound method or a structured argument is compiled as
    is guarded like the function itself: a global function rebound between calls is
    seen, not the flattened pair made before it."""
    namespace = notebook(
        "act = np.tanh\n"
        "class Model:\n"
        "    def __init__(self):\n"
        "        self.W = np.array([[1.0, 0.5], [-0.3, 2.0]])\n"
        "    def loss(self, x):\n"
        "        return np.sum(act(x @ self.W))\n"
        "def f(params, x):\n"
        "    return np.sum(act(x @ params[0]))\n"
    )
    model, x = namespace["Model"](), np.array([[0.3, 0.5]])
    method = ad.value_and_grad(model.loss, wrt="self.W")
    structured = ad.grad(namespace["f"])
    for change in ["", "act = np.sin", "act = np.exp"]:
        run_cell(namespace, change)
        for _ in range(2):
            value, gradient = method(x)
            expected_value, expected = tracing.value_and_gradient(model.loss, x, wrt="self.W")
            assert_same((value, gradient), (expected_value, expected), f"method, {change!r}")
            (got,) = structured([model.W], x)
            np.testing.assert_allclose(got, expected, rtol=1e-10, err_msg=f"params, {change!r}")


# -- a class from another module, reading that module's globals ----------------------

LAYERS = """
import numpy as np

SCALE = 2.0
DEPTH = 1
OFFSET = np.zeros(3)


class Layer:
    def __init__(self):
        self.W = np.array([0.5, -1.0, 2.0])

    def __call__(self, x):
        h = x
        for _ in range(DEPTH):
            h = np.tanh(self.W * h + OFFSET) * SCALE
        return h

    def forward(self, x):
        return np.tanh(self.W * x + OFFSET) * SCALE
"""

USER = """
layer = layers.Layer()

def loss(x):
    return np.sum(layer(x))

class Model(layers.Layer):
    def loss(self, x):
        return np.sum(self.forward(x) ** 2)
"""


def module(name: str, source: str) -> types.ModuleType:
    """A module of its own, its source readable as an imported file's is."""
    made = types.ModuleType(name)
    run_cell(made.__dict__, source)
    return made


def second_differences(fn, x, eps=1e-4):
    """The Hessian of scalar ``fn`` at a vector ``x`` by central differences of its
    values (float64)."""
    steps = np.eye(x.size) * eps
    return np.array(
        [
            [
                (fn(x + a + b) - fn(x + a - b) - fn(x - a + b) + fn(x - a - b)) / (4 * eps**2)
                for b in steps
            ]
            for a in steps
        ]
    )


@pytest.mark.parametrize(
    "change",
    [
        "layers.SCALE = -1.0",  # a float of the module
        "layers.DEPTH = 3",  # an int its method loops over
        "layers.OFFSET = np.array([0.5, -0.5, 1.0])",  # an array rebound
    ],
)
def test_a_method_from_another_module_follows_that_modules_globals(change):
    """A callable object and a user's subclass whose methods come from another module:
    after that module's global changes, value_and_grad made before, a fresh grad and
    hessian give the plain function's value and central differences."""
    namespace = notebook()
    namespace["layers"] = module("layers", LAYERS)
    run_cell(namespace, USER)
    loss, model = namespace["loss"], namespace["Model"]()
    made = ad.value_and_grad(loss)
    method = ad.value_and_grad(model.loss)
    second = ad.hessian(model.loss)
    for step in ["", change]:
        run_cell(namespace, step)
        for call in range(2):
            x = x0 + 0.1 * call
            for f, both in ((loss, made), (model.loss, method)):
                value, gradient = both(x)
                np.testing.assert_allclose(value, f(x), rtol=1e-12, err_msg=step)
                difference = central_difference(f, [x], 0)
                np.testing.assert_allclose(gradient, difference, atol=1e-6, err_msg=step)
                np.testing.assert_allclose(ad.grad(f)(x), difference, atol=1e-6, err_msg=step)
            expected = second_differences(model.loss, x)
            np.testing.assert_allclose(second(x), expected, atol=1e-5, err_msg=step)


def make_layer():
    """A layer whose class is made inside this function, its method reading a variable
    of it, and the function that rebinds that variable."""
    scale = 2.0

    class Layer:
        def __init__(self):
            self.W = np.array([0.5, -1.0, 2.0])

        def __call__(self, x):
            return np.tanh(self.W * x) * scale

    def set_scale(value):
        nonlocal scale
        scale = value

    return Layer(), set_scale


closure_layer, set_closure_scale = make_layer()


def closure_layer_loss(x):
    return np.sum(closure_layer(x) ** 2)


def test_a_method_reading_a_closure_variable_follows_it():
    """A class made inside a function, its method reading a variable of that function
    rebound by ``nonlocal`` between calls: the compiled code reads the new value."""
    both = ad.value_and_grad(closure_layer_loss)
    for scale in (2.0, -1.0, np.array([1.0, 2.0, 3.0])):
        set_closure_scale(scale)
        value, gradient = both(x0)
        np.testing.assert_allclose(value, closure_layer_loss(x0), rtol=1e-12)
        difference = central_difference(closure_layer_loss, [x0], 0)
        np.testing.assert_allclose(gradient, difference, atol=1e-6)


# -- what a callable passed to a front door runs, changed after ---------------------


def scaled_sines(x, scale=1.0):
    return np.sum(np.sin(scale * x))


class Smoothed:
    def __init__(self):
        self.W = np.array([0.5, -1.0, 2.0])
        self.act = functools.partial(scaled_sines, scale=1.0)

    def loss(self, x):
        return self.act(self.W * x) ** 2


def test_a_partials_keywords_changed_in_place_are_followed():
    """A ``functools.partial`` given to value_and_grad, and one an object holds and its
    method calls, whose ``keywords`` dict is changed in place between calls (as
    Python reads them at each call)."""
    f = functools.partial(scaled_sines, scale=2.0)
    model = Smoothed()
    made = [(f, ad.value_and_grad(f)), (model.loss, ad.value_and_grad(model.loss))]
    second = ad.hessian(f)
    for scale in (2.0, -1.0, 0.5):
        f.keywords["scale"] = scale
        model.act.keywords["scale"] = scale
        for call in range(2):
            x = x0 + 0.1 * call
            for function, both in made:
                value, gradient = both(x)
                np.testing.assert_allclose(value, function(x), rtol=1e-12)
                difference = central_difference(function, [x], 0)
                np.testing.assert_allclose(gradient, difference, atol=1e-6)
                np.testing.assert_allclose(ad.grad(function)(x), difference, atol=1e-6)
            np.testing.assert_allclose(second(x), second_differences(f, x), atol=1e-5)


def test_call_replaced_on_the_class_is_followed():
    """``Objective.__call__`` replaced on the class after value_and_grad, grad and
    hessian of an object were made: they differentiate what ``obj(x)`` runs now."""

    class Objective:
        def __call__(self, x):
            return np.sum(np.sin(x))

    obj = Objective()
    both, gradient, second = ad.value_and_grad(obj), ad.grad(obj), ad.hessian(obj)
    for step in range(3):
        if step == 1:
            Objective.__call__ = lambda self, x: np.sum(np.cos(x) ** 3)
        if step == 2:
            Objective.__call__ = lambda self, x: np.sum(x**4) / 4
        value, differentiated = both(x0)
        difference = central_difference(obj, [x0], 0)
        np.testing.assert_allclose(value, obj(x0), rtol=1e-12, err_msg=f"step {step}")
        np.testing.assert_allclose(differentiated, difference, atol=1e-6)
        np.testing.assert_allclose(gradient(x0), difference, atol=1e-6)
        np.testing.assert_allclose(second(x0), second_differences(obj, x0), atol=1e-5)
