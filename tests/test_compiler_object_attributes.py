"""What an object the compiled code reads is seen as: the structure of its attributes,
where the values it holds that are not the user's objects (an enum's member, a logger,
a class such as ``np.float64``) are values, a reference cycle (an optimizer keeping its
model, a layer's back-reference to its network) is followed once, ``__slots__`` are
its attributes, and an object it holds is read through (``self.encoder.W``). ``wrt``
names an attribute of an object held (``"self.encoder.W"``) or a value of the class
read through ``self``; names that are none of these are refused at the call. A dict of
objects is looped over as a list is; ``getattr``, ``hasattr``, ``isinstance`` and
``vars`` of an object are answered while compiling; a namedtuple's field is its entry.

Every gradient is checked against central differences; refusals are located.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import logging
import typing

import numpy as np
import pytest
from oracles import central_difference
from wrapped_text import wrapped

from autodiff_tutor import grad, value_and_grad
from autodiff_tutor.errors import ArgumentError, ReferenceCycleError, UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.1])
W = np.array([0.5, -1.0, 2.0])


def by_attribute(obj, name, loss, x=X):
    """Central differences of ``loss(x)`` w.r.t. the attribute ``name`` of ``obj``."""
    kept = getattr(obj, name)

    def with_value(value):
        setattr(obj, name, value)
        try:
            return loss(x)
        finally:
            setattr(obj, name, kept)

    return central_difference(with_value, [np.array(kept, dtype=float)], 0)


def by_x(loss, x=X):
    return central_difference(loss, [x], 0)


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


# -- values an object holds that are not structures ---------------------------------


class Mode(enum.Enum):
    TRAIN = 1
    EVAL = 2


class Switched:
    def __init__(self):
        self.W = W.copy()
        self.mode = Mode.TRAIN

    def loss(self, x):
        h = np.sin(self.W * x)
        if self.mode == Mode.TRAIN:
            h = h * 2.0
        return np.sum(h)


def test_an_enum_attribute_is_a_value_and_a_changed_member_is_followed():
    model = Switched()
    step = value_and_grad(model.loss)
    close(step(X)[1], by_x(model.loss))
    model.mode = Mode.EVAL
    value, gradient = step(X)
    assert value == pytest.approx(model.loss(X))
    close(gradient, by_x(model.loss))
    gradients = grad(model.loss, wrt="self")(X)
    close(gradients["W"], by_attribute(model, "W", model.loss))
    assert gradients["mode"] is None


def scaled_by_mode(x, mode):
    return np.sum(np.sin(x)) * (2.0 if mode == Mode.TRAIN else 1.0)


@pytest.mark.parametrize("mode", [Mode.TRAIN, Mode.EVAL])
def test_an_enum_argument_is_a_value(mode):
    close(grad(scaled_by_mode, wrt="x")(X, mode), by_x(lambda x: scaled_by_mode(x, mode)))


class Factor(float, enum.Enum):
    SMALL = 1.5


class ScaledByEnum:
    def __init__(self):
        self.W = W.copy()
        self.k = Factor.SMALL

    def loss(self, x):
        return np.sum(np.sin(self.W * x) * self.k)


def test_a_float_enum_member_is_not_differentiated():
    model = ScaledByEnum()
    close(grad(model.loss)(X), by_x(model.loss))
    gradients = grad(model.loss, wrt="self")(X)
    assert gradients["k"] is None
    close(gradients["W"], by_attribute(model, "W", model.loss))


class Logged:
    def __init__(self):
        self.W = W.copy()
        self.logger = logging.getLogger("autodiff_tutor.tests.logged")

    def loss(self, x):
        return np.sum(np.sin(self.W * x))


def logged_loss(x, logger):
    return np.sum(x**3)


def test_a_logger_attribute_or_argument_is_a_value():
    model = Logged()
    close(grad(model.loss)(X), by_x(model.loss))
    close(grad(model.loss, wrt="self")(X)["W"], by_attribute(model, "W", model.loss))
    close(grad(logged_loss, wrt="x")(X, model.logger), 3 * X**2)


class Typed:
    def __init__(self):
        self.W = W.copy()
        self.dtype = np.float64

    def loss(self, x):
        return np.sum(np.sin(self.W * x) * np.ones(3, dtype=self.dtype))


def test_a_class_held_in_an_attribute_is_a_value():
    model = Typed()
    close(grad(model.loss)(X), by_x(model.loss))
    gradients = grad(model.loss, wrt="self")(X)
    close(gradients["W"], by_attribute(model, "W", model.loss))
    assert gradients["dtype"] is None


# -- reference cycles -----------------------------------------------------------------


class SGD:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.lr = lr


class WithOptimizer:
    def __init__(self):
        self.W = W.copy()
        self.optimizer = SGD(self)
        self.me = self

    def loss(self, x):
        return np.sum(np.sin(self.W * x))

    def through_the_cycle(self, x):
        return np.sum(np.sin(self.me.W * x)) + np.sum(self.optimizer.model.W**2)

    def twice_round(self, x):
        return np.sum(np.sin(self.me.me.W * x))


def test_an_object_holding_itself_is_differentiated():
    model = WithOptimizer()
    close(grad(model.loss)(X), by_x(model.loss))
    close(grad(model.loss, wrt="self")(X)["W"], by_attribute(model, "W", model.loss))


def test_a_cycle_is_followed_once_to_the_same_attributes():
    model = WithOptimizer()
    step = value_and_grad(model.through_the_cycle, wrt=["x", "self.W"])
    for _ in range(2):
        value, (dx, dW) = step(X)
        assert value == pytest.approx(model.through_the_cycle(X))
        close(dx, by_x(model.through_the_cycle))
        close(dW, by_attribute(model, "W", model.through_the_cycle))


def test_a_cycle_read_twice_round_is_refused_at_the_line():
    model = WithOptimizer()
    with pytest.raises(ReferenceCycleError, match=wrapped("reference cycle twice")) as caught:
        grad(model.twice_round)(X)
    assert "self.me.me.W" in caught.value.location.text


class Network:
    def __init__(self):
        self.W = W.copy()
        self.layers = []


class BackReferencing:
    def __init__(self, network, b):
        self.network = network  # the layer knows its network
        self.b = b

    def __call__(self, x):
        return np.tanh(x * self.network.W + self.b)


def through_layers(network, x):
    h = x
    for layer in network.layers:
        h = layer(h)
    return np.sum(h)


def test_layers_reading_their_network_through_a_back_reference():
    network = Network()
    network.layers = [BackReferencing(network, np.array([0.1, 0.2, 0.3])) for _ in range(2)]
    close(grad(through_layers, wrt="x")(network, X), by_x(lambda x: through_layers(network, x)))
    gradients = grad(through_layers, wrt="network")(network, X)
    close(gradients["W"], by_attribute(network, "W", lambda x: through_layers(network, x)))
    first = network.layers[0]
    close(
        gradients["layers"][0]["b"], by_attribute(first, "b", lambda x: through_layers(network, x))
    )


# -- slots, objects passed and written ------------------------------------------------


@dataclasses.dataclass(slots=True)
class SlottedLinear:
    W: np.ndarray
    b: np.ndarray
    calls: int = 0

    def loss(self, x):
        return np.sum(np.tanh(x @ self.W + self.b) ** 2)

    def counted(self, x):
        self.calls += 1
        return np.sum(np.tanh(x @ self.W + self.b) ** 2)


def test_a_slotted_dataclass_is_seen_as_its_slots():
    layer = SlottedLinear(np.array([[0.5, -0.2], [0.3, 0.8], [-0.6, 0.1]]), np.array([0.1, -0.3]))
    close(grad(layer.loss)(X), by_x(layer.loss))
    gradients = grad(layer.loss, wrt="self")(X)
    close(gradients["b"], by_attribute(layer, "b", layer.loss))
    by_W = central_difference(lambda w: SlottedLinear(w, layer.b).loss(X), [layer.W], 0)
    close(gradients["W"], by_W)
    close(grad(layer.counted)(X), by_x(layer.loss))
    assert layer.calls == 1


class Slotted:
    __slots__ = ("W", "unset")

    def __init__(self):
        self.W = W.copy()

    def loss(self, x):
        return np.sum(np.sin(self.W * x))


def test_a_class_with_slots_is_seen_as_the_slots_it_has_set():
    model = Slotted()
    assert grad(model.loss, wrt="self")(X).keys() == {"W"}
    close(grad(model.loss)(X), by_x(model.loss))


class TrainState:
    def __init__(self):
        self.step = 0
        self.w = np.array([1.0, 2.0, 3.0])


def counts_its_calls(state, x):
    state.step = state.step + 1
    return np.sum(x**2)


def doubles_its_weights(state, x):
    state.w = state.w * 2
    return np.sum(state.w * x)


def test_an_object_argument_whose_attributes_are_written():
    state = TrainState()
    step = value_and_grad(counts_its_calls, wrt="x")
    for calls in (1, 2, 3):
        close(step(state, X)[1], 2 * X)
        assert state.step == calls
    close(grad(doubles_its_weights, wrt="x")(state, X), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(state.w, [2.0, 4.0, 6.0])


# -- objects held, read through; wrt of what they hold ----------------------------------


class Encoder:
    def __init__(self, k=1.0):
        self.W = W * k

    def __call__(self, x):
        return np.tanh(self.W * x)


class AutoEncoder:
    scale = np.array([1.0, 2.0, 3.0])  # a value of the class, read through self

    def __init__(self):
        self.encoder = Encoder()
        self.layers = [Encoder(1.0), Encoder(0.5)]

    def reads_through(self, x):
        return np.sum(np.tanh(self.encoder.W * x) ** 2 + self.layers[1].W * x)

    def calls_through(self, x):
        return np.sum(self.encoder(x) ** 2 * self.scale)


def test_an_attribute_of_an_object_held_is_read():
    model = AutoEncoder()
    close(grad(model.reads_through)(X), by_x(model.reads_through))
    gradients = grad(model.reads_through, wrt="self")(X)
    close(gradients["encoder"]["W"], by_attribute(model.encoder, "W", model.reads_through))
    close(gradients["layers"][1]["W"], by_attribute(model.layers[1], "W", model.reads_through))


@pytest.mark.parametrize("method", ["reads_through", "calls_through"])
def test_wrt_names_an_attribute_of_an_object_held(method):
    model = AutoEncoder()
    loss = getattr(model, method)
    step = value_and_grad(loss, wrt=["self.encoder.W", "x"])
    for _ in range(2):
        _, (dW, dx) = step(X)
        close(dW, by_attribute(model.encoder, "W", loss))
        close(dx, by_x(loss))
    close(grad(loss, wrt="self.layers.1.W")(X), by_attribute(model.layers[1], "W", loss))


def test_wrt_names_a_value_of_the_class_read_through_self():
    model = AutoEncoder()
    step = value_and_grad(model.calls_through, wrt="self.scale")
    close(step(X)[1], by_attribute(AutoEncoder, "scale", model.calls_through))
    AutoEncoder.scale = np.array([5.0, -1.0, 0.5])  # changed on the class: read anew
    try:
        value, gradient = step(X)
        assert value == pytest.approx(model.calls_through(X))
        close(gradient, by_attribute(AutoEncoder, "scale", model.calls_through))
    finally:
        AutoEncoder.scale = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    ("wrt", "message"),
    [
        ("self.missing", "wrt names self.missing, but self has no attribute 'missing'"),
        ("self.calls_through", "self has no attribute 'calls_through'"),
        ("self.encoder.V", "but self.encoder has no attribute 'V'"),
        ("self.scale.W", "self.scale is not an object nor a structure"),
    ],
)
def test_wrt_naming_no_attribute_is_refused_at_the_call(wrt, message):
    model = AutoEncoder()
    with pytest.raises(ArgumentError, match=wrapped(message)) as caught:
        grad(model.calls_through, wrt=wrt)(X)
    assert caught.value.location.filename == __file__


# -- dicts of objects, questions about an object, namedtuple fields --------------------


class Block:
    def __init__(self, k):
        self.W = W * k

    def __call__(self, h):
        return np.tanh(self.W * h)


class Blocks:
    def __init__(self):
        self.blocks = {"enc": Block(1.0), "dec": Block(0.5)}  # as torch's ModuleDict

    def by_values(self, x):
        h = x
        for block in self.blocks.values():
            h = block(h)
        return np.sum(h**2)

    def by_items(self, x):
        h = x
        for _, block in self.blocks.items():
            h = block(h)
        return np.sum(h**2)

    def by_keys(self, x):
        h = x
        for name in self.blocks:
            h = self.blocks[name](h)
        return np.sum(h**2)

    def summed(self, x):
        return sum(np.sum(block(x)) for block in self.blocks.values())

    def by_key(self, x):
        return np.sum(self.blocks["dec"](x) * self.blocks["enc"].W)


@pytest.mark.parametrize("method", ["by_values", "by_items", "by_keys", "summed", "by_key"])
def test_a_dict_of_objects_is_looped_over_and_read_as_a_list_is(method):
    model = Blocks()
    loss = getattr(model, method)
    step = value_and_grad(loss)
    for _ in range(2):
        value, gradient = step(X)
        assert value == pytest.approx(loss(X))
        close(gradient, by_x(loss))
    gradients = grad(loss, wrt="self")(X)
    encoder = model.blocks["enc"]
    close(gradients["blocks"]["enc"]["W"], by_attribute(encoder, "W", loss))


def blocks_passed(blocks, x):
    h = x
    for block in blocks.values():
        h = block(h)
    return np.sum(h)


def test_a_dict_of_objects_passed_as_an_argument():
    blocks = Blocks().blocks
    close(grad(blocks_passed, wrt="x")(blocks, X), by_x(lambda x: blocks_passed(blocks, x)))
    blocks["mid"] = Block(2.0)  # another key: its own compilation
    close(grad(blocks_passed, wrt="x")(blocks, X), by_x(lambda x: blocks_passed(blocks, x)))


class Introspected:
    def __init__(self):
        self.W1 = W.copy()
        self.W2 = np.array([1.0, 1.0, -1.0])

    def by_getattr(self, x):
        h = x
        for i in range(1, 3):
            h = np.tanh(getattr(self, f"W{i}") * h)
        return np.sum(h) + np.sum(getattr(self, "W1") * x)  # noqa: B009 - as written

    def by_default(self, x):
        extra = getattr(self, "W3", None)
        return np.sum(self.W1 * x) if extra is None else np.sum(extra * x)

    def by_hasattr(self, x):
        if hasattr(self, "W2") and not hasattr(self, "W3"):
            return np.sum(self.W2 * x**2)
        return np.sum(x)

    def by_isinstance(self, x):
        if isinstance(self, (Introspected, Blocks)):
            return np.sum(self.W1 * x**2)
        return np.sum(x)

    def by_vars(self, x):
        total = 0.0
        for name, value in vars(self).items():
            if name.startswith("W"):
                total = total + np.sum(np.sin(value * x))
        return total

    def by_a_name_known_at_run_time(self, x):
        return np.sum(getattr(self, "W" + str(int(x[0] > 0))) * x)


@pytest.mark.parametrize(
    "method", ["by_getattr", "by_default", "by_hasattr", "by_isinstance", "by_vars"]
)
def test_questions_about_an_object_are_answered_while_compiling(method):
    model = Introspected()
    loss = getattr(model, method)
    close(grad(loss)(X), by_x(loss))
    close(grad(loss, wrt="self")(X)["W1"], by_attribute(model, "W1", loss))


def test_getattr_of_a_name_known_only_at_run_time_is_refused_at_the_line():
    model = Introspected()
    with pytest.raises(UnsupportedSyntaxError, match=wrapped("known only when the code runs")):
        grad(model.by_a_name_known_at_run_time)(X)


Params = collections.namedtuple("Params", ["W", "b"])


class Layer(typing.NamedTuple):
    W: np.ndarray
    b: np.ndarray


def by_field(p, x):
    return np.sum(np.tanh(x * p.W + p.b) ** 2)


def by_field_of_a_copy(p, x):
    q = p
    return np.sum(np.tanh(x * q.W + q.b) ** 2)


@pytest.mark.parametrize("kind", [Params, Layer])
@pytest.mark.parametrize("loss", [by_field, by_field_of_a_copy])
def test_a_namedtuple_field_is_its_entry(kind, loss):
    p = kind(W.copy(), np.array([0.1, 0.2, 0.3]))
    gradient = grad(loss)(p, X)
    assert type(gradient) is kind
    close(gradient.W, central_difference(lambda w: loss(kind(w, p.b), X), [p.W], 0))
    close(gradient.b, central_difference(lambda b: loss(kind(p.W, b), X), [p.b], 0))
    close(grad(loss, wrt="x")(p, X), by_x(lambda x: loss(p, x)))


class Private:
    def __init__(self):
        self.__W = W.copy()  # stored as _Private__W
        self.__k = 2.0

    def __scaled(self, x):
        return np.sin(self.__W * x) * self.__k

    def loss(self, x):
        return np.sum(self.__scaled(x)) + np.sum(self.__W**2)


def test_private_attributes_and_methods_are_read_as_python_mangles_them():
    model = Private()
    close(grad(model.loss)(X), by_x(model.loss))
    gradients = grad(model.loss, wrt="self")(X)
    close(gradients["_Private__W"], by_attribute(model, "_Private__W", model.loss))
