"""Static structure: what the compiler resolves while compiling in a function whose
parameters are lists, tuples or dicts of arrays, and the statements it keeps for their
effect.

At a call, a structure's length and keys are known, and so are int arguments and
global ints: slices (``params[:-1]``, ``params[::2]``), negative indexes, indexes
computed from loop indices (``params[2 * i + 1]``), range bounds (``range(len(params)
- 1)``, ``range(n_layers)``), keys made by f-strings, a structure handed whole to a
helper (``forward(params[:-1], x)``, ``zip(*pairs(params))``) and a helper returning a
tuple. Each case is checked in the compiler (``value_and_grad`` three times, so the
specialized pair runs) against central differences and autograd, and in tracing.
An int argument or global the code was specialized on gets its own code when it
changes. A write into a dict of state (``bn_param["running_mean"] = ...``) runs in
the forward as in Python, with no gradient through the dict; reading the dict after
that write, and an index computed from array values, are refused, located.
"""

import contextlib
import io
import sys
import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import structured_central_difference

from autodiff_tutor import grad, value_and_grad
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.pytree import flatten
from autodiff_tutor.tracing import value_and_gradient

RNG = np.random.default_rng(28)
PAIRS = [(RNG.normal(size=(2, 2)) * 0.7, RNG.normal(size=2) * 0.3) for _ in range(3)]
MATRICES = [RNG.normal(size=(2, 2)) * 0.7 for _ in range(4)]
NAMED = {f"W{i}": RNG.normal(size=(2, 2)) * 0.7 for i in (1, 2, 3)} | {
    f"b{i}": RNG.normal(size=2) * 0.3 for i in (1, 2, 3)
}
X = RNG.normal(size=(3, 2))
N_LAYERS = 3


def all_but_last_then_last(params, x):
    for W, b in params[:-1]:
        x = np.tanh(x @ W + b)
    W, b = params[-1]
    return np.sum((x @ W + b) ** 2)


def middle_slice(params, x):
    for W, b in params[1:-1]:
        x = np.tanh(x @ W + b)
    return np.sum(x**2) + np.sum(params[0][1] * params[-1][1])


def every_other(Ws, x):
    for W in Ws[::2]:
        x = np.tanh(x @ W)
    return np.sum(x @ Ws[-3])


def negative_indexes(Ws, x):
    return np.sum(np.tanh(x @ Ws[-2]) @ Ws[-1]) + np.sum(Ws[-4][-1])


def range_of_len_minus_one(Ws, x):
    for i in range(len(Ws) - 1):
        W = Ws[i]
        x = np.tanh(x @ W)
    return np.sum(x @ Ws[len(Ws) - 1])


def range_from_one(Ws, x):
    for i in range(1, len(Ws)):
        x = np.tanh(x @ Ws[i] + x @ Ws[i - 1])
    return np.sum(x)


def pairs_by_index(Ws, x):
    for i in range(len(Ws) // 2):
        x = np.tanh(x @ Ws[2 * i] @ Ws[2 * i + 1])
    return np.sum(x)


def next_index(Ws, x):
    for i in range(len(Ws) - 1):
        x = np.tanh(x @ Ws[i] + 0.5 * x @ Ws[i + 1])
    return np.sum(x)


def layers_from_an_argument(Ws, x, n_layers):
    for i in range(n_layers):
        x = np.tanh(x @ Ws[i])
    return np.sum(x)


def layers_from_a_global(Ws, x):
    for i in range(N_LAYERS):
        x = np.tanh(x @ Ws[i])
    return np.sum(x)


def keys_from_f_strings(p, x):
    for i in range(1, len(p) // 2 + 1):
        x = np.tanh(x @ p[f"W{i}"] + p["b" + str(i)])
    return np.sum(x**2)


def forward(params, x):
    for W in params:
        x = np.tanh(x @ W)
    return x


def slice_to_a_helper(Ws, x):
    return np.sum(forward(Ws[:-1], x) @ Ws[-1])


def pairs_of(params):
    return [(W, b) for W, b in params]


def transposed_helper_result(params, x):
    Ws, bs = zip(*pairs_of(params))  # noqa: B905 (course style)
    return np.sum(np.tanh(x @ Ws[0] + bs[1]) @ Ws[2])


def transposed_comprehension(params, x):
    rows = [(W * 2, b) for W, b in params]
    Ws, bs = zip(*rows)  # noqa: B905 (course style)
    return np.sum(x @ Ws[-1] + bs[0])


def doubled(Ws):
    return [W * 2 for W in Ws]


def helper_list_indexed(Ws, x):
    A = doubled(Ws)
    return np.sum(x @ A[0] @ A[-1])


def seeded_and_checked(Ws, x):
    np.random.seed(0)
    print("input", x.shape)
    assert x.ndim == 2
    return np.sum(np.tanh(x @ Ws[0]) @ Ws[1])


CASES = [
    (all_but_last_then_last, (PAIRS, X)),
    (middle_slice, (PAIRS, X)),
    (every_other, (MATRICES, X)),
    (negative_indexes, (MATRICES, X)),
    (range_of_len_minus_one, (MATRICES, X)),
    (range_from_one, (MATRICES, X)),
    (pairs_by_index, (MATRICES, X)),
    (next_index, (MATRICES, X)),
    (layers_from_an_argument, (MATRICES, X, 3)),
    (layers_from_a_global, (MATRICES, X)),
    (keys_from_f_strings, (NAMED, X)),
    (slice_to_a_helper, (MATRICES, X)),
    (transposed_helper_result, (PAIRS, X)),
    (transposed_comprehension, (PAIRS, X)),
    (helper_list_indexed, (MATRICES, X)),
    (seeded_and_checked, (MATRICES, X)),
]
IDS = [case[0].__name__ for case in CASES]


def leaves(value):
    return [np.asarray(v, dtype=np.float64) for v in flatten(value)[0]]


def assert_gradient(fn, args, gradient):
    want = structured_central_difference(fn, list(args), 0)
    got = leaves(gradient)
    assert len(got) == len(want)
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)


def with_autograd(fn):
    """``fn`` and the helpers of this module it calls, their ``np`` autograd's."""
    namespace = dict(vars(sys.modules[__name__]))
    namespace["np"] = anp
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == __name__:
            namespace[name] = types.FunctionType(
                value.__code__, namespace, name, value.__defaults__
            )
    return namespace[fn.__name__]


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_compiled_against_central_differences(fn, args):
    compiled = value_and_grad(fn)
    with contextlib.redirect_stdout(io.StringIO()):
        results = [compiled(*args) for _ in range(3)]  # the third runs the specialized pair
        expected = fn(*args)
        for value, gradient in results:
            np.testing.assert_allclose(value, expected, rtol=1e-12)
            assert_gradient(fn, args, gradient)


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_autograd_agrees_with_central_differences(fn, args):
    with contextlib.redirect_stdout(io.StringIO()):
        assert_gradient(fn, args, autograd.grad(with_autograd(fn), 0)(*args))


@pytest.mark.filterwarnings("ignore::autodiff_tutor.errors.TracingWarning")  # unused leaves
@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_tracing_against_central_differences(fn, args):
    name = fn.__code__.co_varnames[0]
    with contextlib.redirect_stdout(io.StringIO()):
        value, gradients = value_and_gradient(fn, *args, wrt=[name])
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        assert_gradient(fn, args, gradients[0])


def test_an_int_argument_gets_code_of_its_own_per_value():
    compiled = value_and_grad(layers_from_an_argument)
    for n_layers in (3, 1, 4, 3):
        for _ in range(3):
            value, gradient = compiled(MATRICES, X, n_layers)
        np.testing.assert_allclose(value, layers_from_an_argument(MATRICES, X, n_layers))
        assert_gradient(layers_from_an_argument, (MATRICES, X, n_layers), gradient)


def test_a_global_int_rebound_compiles_again():
    global N_LAYERS
    compiled = value_and_grad(layers_from_a_global)
    try:
        for n_layers in (3, 2, 4):
            N_LAYERS = n_layers
            for _ in range(3):
                value, gradient = compiled(MATRICES, X)
            np.testing.assert_allclose(value, layers_from_a_global(MATRICES, X))
            assert_gradient(layers_from_a_global, (MATRICES, X), gradient)
    finally:
        N_LAYERS = 3


def batch_norm(x, gamma, beta, bn_param):
    momentum = bn_param.get("momentum", 0.9)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    mu = np.mean(x, axis=0)
    xhat = (x - mu) / np.sqrt(np.var(x, axis=0) + 1e-5)
    bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mu
    return np.sum((gamma * xhat + beta) ** 2 * np.arange(1.0, 4.0))


def test_a_write_into_a_dict_of_state_runs_as_in_python_with_no_gradient_through_it():
    x, gamma, beta = RNG.normal(size=(4, 3)), RNG.normal(size=3), RNG.normal(size=3)
    state = {"momentum": 0.8, "running_mean": np.zeros(3)}
    expected_state = {"momentum": 0.8, "running_mean": np.zeros(3)}
    compiled = value_and_grad(batch_norm, wrt=["x", "gamma", "beta"])
    for _ in range(3):
        value, gradients = compiled(x, gamma, beta, state)
        np.testing.assert_allclose(value, batch_norm(x, gamma, beta, expected_state))
        np.testing.assert_allclose(state["running_mean"], expected_state["running_mean"])
        for index, gradient in enumerate(gradients):
            frozen = {"momentum": 0.8, "running_mean": np.zeros(3)}  # the oracle's own dict
            args = [x, gamma, beta, frozen]
            args[0], args[index] = args[index], args[0]
            want = structured_central_difference(
                lambda a, *rest, i=index: batch_norm(*_swap([a, *rest], i)), args, 0
            )[0]
            np.testing.assert_allclose(gradient, want, rtol=1e-5, atol=1e-7)


def _swap(args, index):
    args = list(args)
    args[0], args[index] = args[index], args[0]
    return args


def reads_state_after_writing(x, state):
    state["scale"] = np.sum(x)
    return np.sum(x * state["scale"])


def writes_state_in_a_loop(x, state):
    total = 0.0
    for _ in range(2):
        total = total + np.sum(x * state["scale"])
        state["scale"] = np.sum(x)
    return total


def index_from_array_values(Ws, x):
    return np.sum(x @ Ws[int(np.argmax(x[0]))])


def loop_bound_from_array_values(Ws, x):
    for i in range(int(np.sum(x > 0))):
        x = np.tanh(x @ Ws[i])
    return np.sum(x)


REFUSED = [
    (
        reads_state_after_writing,
        (X, {"scale": 1.0}),
        "is read after this function wrote",
        'state["scale"])',
    ),
    (
        writes_state_in_a_loop,
        (X, {"scale": 1.0}),
        "is read after this function wrote",
        'state["scale"])',
    ),
    (index_from_array_values, (MATRICES, X), "not known while compiling", "Ws[int("),
    (loop_bound_from_array_values, (MATRICES, X), "not known while compiling", "Ws[i]"),
]


@pytest.mark.parametrize(
    ("fn", "args", "message", "snippet"), REFUSED, ids=[r[0].__name__ for r in REFUSED]
)
def test_what_stays_refused_is_located_with_a_hint_that_keeps_the_meaning(
    fn, args, message, snippet
):
    with pytest.raises(UnsupportedSyntaxError, match=message.replace(" ", r"\s+")) as raised:
        grad(fn)(*args)
    location = raised.value.location
    assert location.filename == __file__
    assert location.text[location.column :].startswith(snippet)
    assert raised.value.hint


def layers_from_a_closure():
    n_layers = 2

    def loss(Ws, x):
        for i in range(n_layers):
            x = np.tanh(x @ Ws[i])
        return np.sum(x)

    def rebind(n):
        nonlocal n_layers
        n_layers = n

    return loss, rebind


def test_a_closure_int_rebound_compiles_again():
    loss, rebind = layers_from_a_closure()
    compiled = value_and_grad(loss)
    for n_layers in (2, 4, 1):
        rebind(n_layers)
        for _ in range(3):
            value, gradient = compiled(MATRICES, X)
        np.testing.assert_allclose(value, loss(MATRICES, X))
        assert_gradient(loss, (MATRICES, X), gradient)
