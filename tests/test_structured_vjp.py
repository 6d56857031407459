"""vjp and jvp with structures: lists, tuples and dicts of arrays as arguments, lists
and dicts as outputs. Each pullback is checked against central differences (float64)
and autograd of the seed-weighted output; what stays refused is a located error."""

import autograd
import numpy as np
import pytest
from oracles import structured_central_difference, with_autograd_numpy

from autodiff_tutor import grad, jvp, vjp
from autodiff_tutor.errors import (
    ArgumentError,
    NonDifferentiableInputError,
    NonScalarOutputError,
    UnsupportedSyntaxError,
)
from autodiff_tutor.pytree import flatten

RNG = np.random.default_rng(7)


def layer(p, x):
    return np.tanh(x @ p["W"] + p["b"])


def two_layers(params, x):
    h = x
    for W, b in params:
        h = np.sin(h @ W + b)
    return h


def products(ws):
    return ws[0] * ws[1] + np.exp(ws[2])


def split(a, b):
    return {"sum": a + np.sin(b), "product": a * b}


def as_list(a):
    return [a * a, np.cos(a)]


def keyed_layer(p, x):
    y = np.tanh(x @ p["W"] + p["b"])
    return {"y": y, "norm": np.sum(y * y)}


def _weighted(fn, seed):
    """The scalar ``<seed, fn(*args)>``: its gradient is the vjp with ``seed``."""

    def scalar(*args):
        out = fn(*args)
        leaves = flatten(out)[0] if isinstance(out, (dict, list)) else [out]
        seeds = flatten(seed)[0] if isinstance(seed, (dict, list)) else [seed]
        return sum(np.sum(s * o) for s, o in zip(seeds, leaves, strict=True))

    return scalar


def _autograd_weighted(fn, seed):
    plain = with_autograd_numpy(fn)
    return _weighted(plain, seed)


def _leaves(value):
    return flatten(value)[0]


CASES = [
    (
        layer,
        lambda: [{"W": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}, RNG.normal(size=(4, 3))],
        "p",
    ),
    (
        two_layers,
        lambda: [
            [
                (RNG.normal(size=(3, 3)), RNG.normal(size=3)),
                (RNG.normal(size=(3, 2)), RNG.normal(size=2)),
            ],
            RNG.normal(size=(2, 3)),
        ],
        "params",
    ),
    (products, lambda: [[RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3)]], "ws"),
    (products, lambda: [(RNG.normal(size=2), RNG.normal(size=2), RNG.normal(size=2))], "ws"),
]


@pytest.mark.parametrize(("fn", "make", "name"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_vjp_of_structured_argument_matches_oracles(fn, make, name):
    args = make()
    out, pullback = vjp(fn, *args, wrt=name)
    seed = RNG.normal(size=np.shape(out))
    (gradient,) = pullback(seed)
    assert type(gradient) is type(args[0])  # the argument's structure comes back
    expected = structured_central_difference(_weighted(fn, seed), args, 0)
    for g, e in zip(_leaves(gradient), expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
    by_autograd = autograd.grad(_autograd_weighted(fn, seed), 0)(*args)
    for g, e in zip(_leaves(gradient), _leaves(by_autograd), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_vjp_default_wrt_includes_structures_of_floats():
    p = {"W": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    x = RNG.normal(size=(4, 3))
    out, pullback = vjp(layer, p, x)
    seed = RNG.normal(size=out.shape)
    d_p, d_x = pullback(seed)
    assert set(d_p) == {"W", "b"}
    expected = structured_central_difference(_weighted(layer, seed), [p, x], 0)
    np.testing.assert_allclose(d_p["W"], expected[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_p["b"], expected[1], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        d_x, structured_central_difference(_weighted(layer, seed), [p, x], 1)[0], rtol=1e-6
    )


def test_vjp_structure_with_an_integer_leaf_gives_none_there():
    def scaled(p):
        return p["w"] * p["n"]

    _, pullback = vjp(scaled, {"w": np.array([1.0, 2.0]), "n": np.array([3, 4])}, wrt="p")
    (d_p,) = pullback(np.ones(2))
    assert d_p["n"] is None
    np.testing.assert_array_equal(d_p["w"], [3.0, 4.0])


@pytest.mark.parametrize("fn", [split, as_list], ids=["dict", "list"])
def test_vjp_of_structured_output_matches_oracles(fn):
    args = [RNG.normal(size=3), RNG.normal(size=3)][: fn.__code__.co_argcount]
    out, pullback = vjp(fn, *args)
    assert type(out) is (dict if fn is split else list)
    seed = (
        {k: RNG.normal(size=v.shape) for k, v in out.items()}
        if isinstance(out, dict)
        else [RNG.normal(size=v.shape) for v in out]
    )
    gradients = pullback(seed)
    for i, g in enumerate(gradients):
        expected = structured_central_difference(_weighted(fn, seed), args, i)[0]
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
        by_autograd = autograd.grad(_autograd_weighted(fn, seed), i)(*args)
        np.testing.assert_allclose(g, by_autograd, rtol=1e-10, atol=1e-12)


def test_vjp_structured_argument_and_dict_output():
    p = {"W": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    x = RNG.normal(size=(4, 3))
    out, pullback = vjp(keyed_layer, p, x, wrt="p")
    assert set(out) == {"y", "norm"}
    seed = {"y": RNG.normal(size=(4, 2)), "norm": np.float64(0.5)}
    (d_p,) = pullback(seed)
    expected = structured_central_difference(_weighted(keyed_layer, seed), [p, x], 0)
    np.testing.assert_allclose(d_p["W"], expected[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_p["b"], expected[1], rtol=1e-6, atol=1e-8)


def test_jvp_of_dict_output_matches_differences():
    a, b = RNG.normal(size=3), RNG.normal(size=3)
    da, db = RNG.normal(size=3), RNG.normal(size=3)
    out, out_dot = jvp(split, (a, b), (da, db))
    eps = 1e-6
    plus, minus = split(a + eps * da, b + eps * db), split(a - eps * da, b - eps * db)
    assert set(out_dot) == {"sum", "product"}
    for key in out:
        np.testing.assert_allclose(out[key], split(a, b)[key])
        np.testing.assert_allclose(out_dot[key], (plus[key] - minus[key]) / (2 * eps), rtol=1e-6)


def test_seed_of_wrong_structure_is_a_located_error():
    _, pullback = vjp(split, np.ones(2), np.ones(2))
    with pytest.raises(ArgumentError, match="keys") as caught:
        pullback({"sum": np.ones(2)})
    assert "test_structured_vjp.py" in str(caught.value)
    _, pullback = vjp(as_list, np.ones(2))
    with pytest.raises(ArgumentError, match="list of 2"):
        pullback(np.ones(2))
    with pytest.raises(ArgumentError, match="has 1 elements"):
        pullback([np.ones(2)])
    with pytest.raises(ArgumentError, match="shape"):
        pullback([np.ones(2), np.ones(3)])


def test_grad_of_a_dict_or_list_output_is_refused_as_not_scalar():
    with pytest.raises(NonScalarOutputError, match="a dict with the keys") as caught:
        grad(split)(np.ones(2), np.ones(2))
    assert "test_structured_vjp.py" in str(caught.value)
    with pytest.raises(NonScalarOutputError, match="a list of 2 values"):
        grad(as_list)(np.ones(2))


def test_returned_dict_of_lists_stays_refused():
    def nested(a):
        return {"pair": [a, 2 * a]}

    with pytest.raises(UnsupportedSyntaxError, match="must hold arrays") as caught:
        vjp(nested, np.ones(2))
    assert "return {" in str(caught.value)


def test_jvp_with_an_array_tangent_for_a_dict_stays_refused():
    def doubled(p):
        return p["w"] * 2

    with pytest.raises(Exception, match="tangent of the same structure") as caught:
        jvp(doubled, ({"w": np.ones(2)},), (np.ones(2),))
    assert "test_structured_vjp.py" in str(caught.value)


def test_dict_returned_in_a_branch_is_refused_with_a_true_hint():
    def branchy(a):
        if np.sum(a) > 0:
            return {"u": a}
        return {"u": -a}

    with pytest.raises(UnsupportedSyntaxError, match="inside a loop or a branch") as caught:
        vjp(branchy, np.ones(2))
    assert "return the dict once" in str(caught.value)


def test_a_structure_without_float_arrays_is_refused_in_wrt():
    def counted(p, x):
        return x * p["n"]

    p = {"n": np.array([1, 2])}
    for call in (
        lambda: vjp(counted, p, np.ones(2), wrt="p"),
        lambda: grad(lambda_free_counted, wrt="p")(p, np.ones(2)),
    ):
        with pytest.raises(NonDifferentiableInputError, match="no floating-point array") as caught:
            call()
        assert "test_structured_vjp.py" in str(caught.value)


def lambda_free_counted(p, x):
    return np.sum(x * p["n"])


def test_a_dict_inside_a_returned_tuple_is_refused_with_a_true_hint():
    def loss_and_parts(a):
        return np.sum(a), {"u": a * 2}

    with pytest.raises(UnsupportedSyntaxError, match="a dict inside a returned tuple") as caught:
        vjp(loss_and_parts, np.ones(2))
    assert "return the dict alone" in caught.value.hint
    assert "test_structured_vjp.py" in str(caught.value)


def test_a_nested_list_output_takes_a_nested_seed():
    def nested(a):
        return [a, [a * 2, np.sin(a)]]

    a = np.array([0.5, -0.3])
    out, pullback = vjp(nested, a)
    seed = [np.array([1.0, 2.0]), [np.array([0.5, 0.5]), np.array([-1.0, 3.0])]]
    (d_a,) = pullback(seed)
    expected = structured_central_difference(_weighted(nested, seed), [a], 0)[0]
    np.testing.assert_allclose(d_a, expected, rtol=1e-6, atol=1e-9)
    with pytest.raises(ArgumentError, match="element 1"):
        pullback([np.ones(2), np.ones(2)])
