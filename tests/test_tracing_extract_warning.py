"""The tracing warning "extract_data() ... took out the data ..., and the computation
went on" fires when the extracted data (or a view of it, or an array made after the
extraction) reaches the output, so the gradient leaves out a contribution; and stays
quiet when the data was only read and the plain arrays that reach the output existed
before the extraction (arguments, globals, closure values, locals). Each case checks
the gradient against central differences of the function as tracing sees it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor.tracing import evaluate, extract_data, gradient, traced

X = np.array([0.5, -1.5])
TARGET = np.array([1.0, -1.0])


def _gradient_and_warned(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = evaluate(fn, traced(X), *args)
    return g, [w for w in caught if "the computation went on" in str(w.message)]


def target_argument(x, t):
    h = x * x
    print(extract_data(h).sum())  # a look at the loss's parts
    return gradient(np.sum((h - t) ** 2), x)


def target_global(x):
    h = x * x
    extract_data(h)
    return gradient(np.sum((h - TARGET) ** 2), x)


def test_closure_constant_does_not_warn():
    weights = np.array([2.0, 3.0])

    def closure(x):
        h = np.sin(x)
        extract_data(h)
        return gradient(np.sum(h * weights), x)

    g, warned = _gradient_and_warned(closure)
    assert not warned
    np.testing.assert_allclose(g, central_difference(lambda v: np.sum(np.sin(v) * weights), [X], 0))


def branch_on_a_value(x, t):
    h = np.tanh(x)
    if extract_data(np.sum(h)) < 10.0:  # a test on a value: no data flows on
        h = h * t
    return gradient(np.sum(h), x)


def local_made_before(x):
    scale = np.linspace(1.0, 2.0, 2)
    h = x * x
    print(extract_data(h))
    return gradient(np.sum(h * scale), x)


def data_to_another_output(x, t):
    h = x * x
    logged = extract_data(h) * 2.0  # goes elsewhere, not into the output below
    del logged
    return gradient(np.sum(h * t), x)


QUIET = {
    target_argument: ((TARGET,), lambda v: np.sum((v * v - TARGET) ** 2)),
    target_global: ((), lambda v: np.sum((v * v - TARGET) ** 2)),
    branch_on_a_value: ((TARGET,), lambda v: np.sum(np.tanh(v) * TARGET)),
    local_made_before: ((), lambda v: np.sum(v * v * np.linspace(1.0, 2.0, 2))),
    data_to_another_output: ((TARGET,), lambda v: np.sum(v * v * TARGET)),
}


@pytest.mark.parametrize("fn", list(QUIET), ids=lambda f: f.__name__)
def test_reading_then_computing_with_older_arrays_does_not_warn(fn):
    args, plain = QUIET[fn]
    g, warned = _gradient_and_warned(fn, *args)
    assert not warned
    np.testing.assert_allclose(g, central_difference(plain, [X], 0), rtol=1e-6)


def data_itself(x, t):
    h = x * x
    return gradient(np.sum(h * t + extract_data(h)), x)


def computed_from_data(x):
    return gradient(np.sum(x + extract_data(x) ** 2), x)


def a_view_of_data(x):
    d = extract_data(x * 2.0)
    return gradient(np.sum(x * d[::-1]), x)


def a_number_from_data(x):
    return gradient(np.sum(x * extract_data(x).sum()), x)


def local_made_after(x):
    h = x * x
    scale = extract_data(h) + 1.0
    return gradient(np.sum(h * scale), x)


LOUD = {
    # what tracing computes: the extracted part is a constant, so only the rest counts
    data_itself: (
        (TARGET,),
        lambda v: np.sum(v * v * TARGET),
        lambda v: np.sum(v * v * (TARGET + 1)),
    ),
    computed_from_data: ((), lambda v: np.sum(v), lambda v: np.sum(v + v**2)),
    a_view_of_data: ((), lambda v: np.sum(v * 2.0 * X[::-1]), lambda v: np.sum(v * 2 * v[::-1])),
    a_number_from_data: ((), lambda v: np.sum(v) * np.sum(X), lambda v: np.sum(v) * np.sum(v)),
    local_made_after: (
        (),
        lambda v: np.sum(v * v * (X * X + 1)),
        lambda v: np.sum(v**2 * (v**2 + 1)),
    ),
}


@pytest.mark.parametrize("fn", list(LOUD), ids=lambda f: f.__name__)
def test_data_reaching_the_output_warns_and_the_gradient_misses_its_part(fn):
    args, as_traced, true_function = LOUD[fn]
    g, warned = _gradient_and_warned(fn, *args)
    assert len(warned) == 1
    assert warned[0].filename == __file__
    np.testing.assert_allclose(g, central_difference(as_traced, [X], 0), rtol=1e-6)
    true_gradient = central_difference(true_function, [X], 0)
    assert not np.allclose(g, true_gradient)  # a contribution really is missing
