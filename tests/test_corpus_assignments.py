"""The course-assignment corpus (tests/corpus_assignments) in the tracing mode: buffers
the program fills, conversions and scipy likelihoods. Each program's value is numpy's,
its gradient matches central differences (first order) and autograd where autograd
can run it, and its second order along a direction (``higher_derivatives=True``)
matches central differences of the gradient. A program tracing refuses carries the
reason and is ``xfail(strict=True)``."""

import numpy as np
import pytest
from corpus_assignments import load_all
from corpus_assignments.measure import check, inputs
from oracles import autograd_gradient, central_difference

from autodiff_tutor.tracing import evaluate, gradient, traced, value_and_gradient

PROGRAMS = load_all()
BY_NAME = {p.name: p for p in PROGRAMS}


def _marked():
    return [
        pytest.param(p.name, marks=pytest.mark.xfail(strict=True, reason=p.tracing))
        if p.tracing
        else p.name
        for p in PROGRAMS
    ]


def test_the_corpus_is_large_and_covers_the_three_families():
    assert len(PROGRAMS) >= 40 and len(BY_NAME) == len(PROGRAMS)
    assert {p.family for p in PROGRAMS} == {"buffers", "conversions", "likelihoods"}
    refused = [p for p in PROGRAMS if p.tracing]
    assert len(refused) <= 0.05 * len(PROGRAMS), [p.name for p in refused]  # the bar


@pytest.mark.parametrize("name", _marked())
def test_tracing_matches_numpy_and_central_differences(name):
    check(BY_NAME[name])


@pytest.mark.parametrize("name", _marked())
def test_second_order_along_a_direction_matches_central_differences(name):
    """d/dx <grad f(x), v> by tracing the gradient, against central differences of
    tracing's first-order gradient (itself checked above)."""
    p = BY_NAME[name]
    fn, args, i = p.fn, inputs(p), p.wrt[0]  # fn in a closure: tracing reaches it there
    x = np.asarray(args[i], dtype=np.float64)
    v = np.linspace(0.5, -0.5, x.size).reshape(x.shape)
    others = args[:i] + args[i + 1 :]  # passed to evaluate, as a user passes data

    def directional(x_traced, *others):
        y = fn(*others[:i], x_traced, *others[i:])
        g = gradient(y, x_traced, higher_derivatives=True)
        return gradient(np.sum(g * v), x_traced)

    def along_v(x_traced, *others):
        return np.sum(gradient(fn(*others[:i], x_traced, *others[i:]), x_traced) * v)

    got = evaluate(directional, traced(x), *others)
    want = central_difference(lambda xv: evaluate(along_v, traced(xv), *others), [x], 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# autograd's numpy in place of numpy: the programs written with numpy only
AUTOGRAD = [p.name for p in PROGRAMS if p.family == "conversions" and p.autograd and not p.tracing]


@pytest.mark.parametrize("name", AUTOGRAD)
@pytest.mark.filterwarnings("ignore:.*is slow for array inputs")  # autograd's np.r_, np.c_
def test_tracing_matches_autograd(name):
    """autograd runs the same source with its numpy in place of numpy's."""
    p = BY_NAME[name]
    args = inputs(p)
    _, got = value_and_gradient(p.fn, *args, wrt=list(p.wrt))
    for k, i in enumerate(p.wrt):
        floats = [np.asarray(a, dtype=float) if j == i else a for j, a in enumerate(args)]
        want = autograd_gradient(p.fn, floats, i)
        np.testing.assert_allclose(got[k], want, rtol=1e-8, atol=1e-10)
