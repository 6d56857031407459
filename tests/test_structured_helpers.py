"""A dict (or a list of pairs) of parameters passed to a helper of the module, the
habit of ``def layer(params, x): return np.tanh(x @ params["W"] + params["b"])``:
inlined like a helper defined inside the function, so that the dict's reads fold into
its leaves. Against central differences in both modes and forward mode. A helper that
cannot be inlined (it reads a name the function binds to something else) is refused at
the call, never miscompiled."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

import autodiff_tutor as ad
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.tracing import value_and_gradient

RNG = np.random.default_rng(23)
X = RNG.normal(size=(3, 4))
W = RNG.normal(size=4)
scale = 0.5  # a module constant that layer_scaled reads


def layer(params, z):
    return np.tanh(z * params["scale"] + params["bias"])


def mlp(layers, z):
    for weights, bias in layers:
        z = np.tanh(z @ weights + bias)
    return z


def layer_scaled(params, z):
    return np.sin(z * params["w"]) * scale


def local_dict(x, w):
    p = {"scale": x * 0.5, "bias": w}
    return np.sum(layer(p, x)) + np.sum(layer(p, 0.5 * x) ** 2)


def dict_literal(x, w):
    return np.sum(layer({"scale": np.cos(x), "bias": w * w}, x))


def list_of_pairs(x, w):
    layers = [(np.outer(w, w), w), (np.eye(4) * 0.5, np.sin(w))]
    return np.sum(mlp(layers, x) ** 2)


@pytest.mark.parametrize("fn", [local_dict, dict_literal, list_of_pairs])
def test_a_structure_passed_to_a_helper_in_every_mode(fn):
    for index in (0, 1):
        want = central_difference(fn, [X, W], index)
        np.testing.assert_allclose(ad.grad(fn, wrt=index)(X, W), want, rtol=1e-6, atol=1e-9)
        got = value_and_gradient(fn, X, W, wrt=[index])[1][0]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    direction = (RNG.normal(size=X.shape), RNG.normal(size=W.shape))
    expected = np.sum(central_difference(fn, [X, W], 0) * direction[0])
    expected += np.sum(central_difference(fn, [X, W], 1) * direction[1])
    np.testing.assert_allclose(ad.jvp(fn, (X, W), direction)[1], expected, rtol=1e-6)


def passed_through(x, params):
    return np.sum(layer(params, x) ** 2)


def test_a_structured_parameter_passed_on_to_a_helper():
    params = {"scale": X * 0.3, "bias": W}
    got = ad.grad(passed_through, wrt=1)(X, params)
    for key in params:

        def along(leaf, key=key):
            return passed_through(X, {**params, key: leaf})

        want = central_difference(along, [params[key]], 0)
        np.testing.assert_allclose(got[key], want, rtol=1e-6, atol=1e-9)


def shadows_the_helpers_global(x, w):
    scale = 2.0  # layer_scaled reads the module's scale: inlining it here would not
    return np.sum(layer_scaled({"w": w}, x)) * scale


def test_a_helper_that_cannot_be_inlined_is_still_refused_at_the_call():
    with pytest.raises(UnsupportedSyntaxError, match="structure") as info:
        ad.grad(shadows_the_helpers_global, wrt=[0, 1])(X, W)
    assert info.value.location.text.strip().startswith("return np.sum(layer_scaled(")
