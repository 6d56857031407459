"""Property tests: random shapes and broadcasting pairs, checked against autograd."""

import autograd
import autograd.numpy as anp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autodiff_tutor.api import grad

# autograd references of the compiled functions below
REFERENCES = {
    "add": lambda a, b: anp.sum((a + b) ** 2),
    "subtract": lambda a, b: anp.sum(anp.sin(a - b)),
    "multiply": lambda a, b: anp.sum(a * b * a),
    "divide": lambda a, b: anp.sum(a / (2 + b * b)),
    "maximum": lambda a, b: anp.sum(anp.maximum(a, b) * a),
    # autograd's where does not sum a broadcast branch back: broadcast it by hand
    "where": lambda a, b: anp.sum(anp.where(a > b, a * b, b + 0 * a)),
}


def add(a, b):
    return np.sum((a + b) ** 2)


def subtract(a, b):
    return np.sum(np.sin(a - b))


def multiply(a, b):
    return np.sum(a * b * a)


def divide(a, b):
    return np.sum(a / (2 + b * b))


def maximum(a, b):
    return np.sum(np.maximum(a, b) * a)


def where(a, b):
    return np.sum(np.where(a > b, a * b, b))


COMPILED = {
    "add": add,
    "subtract": subtract,
    "multiply": multiply,
    "divide": divide,
    "maximum": maximum,
    "where": where,
}

finite = st.floats(-3, 3, allow_nan=False, width=64)


@st.composite
def broadcasting_pair(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    a_shape, b_shape = shapes.input_shapes
    a = draw(hnp.arrays(np.float64, a_shape, elements=finite))
    b = draw(hnp.arrays(np.float64, b_shape, elements=finite))
    return a, b


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(sorted(REFERENCES)), pair=broadcasting_pair())
def test_broadcasting_gradients_have_input_shapes_and_match_autograd(op, pair):
    a, b = pair
    # ties (a == b) follow different conventions in autograd: keep them apart
    if op in ("maximum", "where"):
        a = a + 0.25 * (np.abs(np.subtract(a, b)) < 1e-3)
    da, db = grad(COMPILED[op], wrt=[0, 1])(a, b)
    assert np.shape(da) == np.shape(a) and np.shape(db) == np.shape(b)
    reference = REFERENCES[op]
    ea = autograd.grad(reference, 0)(a, b)
    eb = autograd.grad(reference, 1)(a, b)
    np.testing.assert_allclose(da, ea, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(db, eb, rtol=1e-9, atol=1e-12)


def reduce_all(x, axis, keepdims):
    return np.sum(np.sum(x * x, axis=axis, keepdims=keepdims) ** 2)


def mean_all(x, axis, keepdims):
    return np.sum(np.mean(np.exp(x), axis=axis, keepdims=keepdims) ** 2)


@settings(max_examples=40, deadline=None)
@given(
    x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=finite),
    data=st.data(),
)
def test_reductions_over_random_axes(x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    keepdims = data.draw(st.booleans())
    for fn, reference in (
        (reduce_all, lambda v: anp.sum(anp.sum(v * v, axis=axis, keepdims=keepdims) ** 2)),
        (mean_all, lambda v: anp.sum(anp.mean(anp.exp(v), axis=axis, keepdims=keepdims) ** 2)),
    ):
        gradient = grad(fn)(x, axis, keepdims)
        assert gradient.shape == x.shape
        np.testing.assert_allclose(gradient, autograd.grad(reference)(x), rtol=1e-9, atol=1e-12)


def matmul_chain(a, b):
    return np.sum(np.tanh(a @ b))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_matmul_shapes(data):
    n, k, m = (data.draw(st.integers(1, 3)) for _ in range(3))
    batch = data.draw(st.sampled_from([(), (2,), (1,), (2, 1)]))
    a_shape = data.draw(st.sampled_from([(k,), (*batch, n, k)]))
    b_shape = data.draw(st.sampled_from([(k,), (k, m), (*batch, k, m)]))
    a = data.draw(hnp.arrays(np.float64, a_shape, elements=finite))
    b = data.draw(hnp.arrays(np.float64, b_shape, elements=finite))
    da, db = grad(matmul_chain, wrt=[0, 1])(a, b)
    reference = lambda u, v: anp.sum(anp.tanh(anp.matmul(u, v)))  # noqa: E731
    np.testing.assert_allclose(da, autograd.grad(reference, 0)(a, b), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(db, autograd.grad(reference, 1)(a, b), rtol=1e-9, atol=1e-12)
