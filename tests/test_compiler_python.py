"""The corpus of everyday Python (tests/corpus_python) against finite differences and
autograd, and second derivatives of its loop-free programs against differences of the
gradient."""

import numpy as np
import pytest
from corpus_python import PROGRAMS
from corpus_python.common import check_gradients, leaves_of, same_structure

from autodiff_tutor import grad, jvp, vjp
from autodiff_tutor.errors import ArgumentError, NonDifferentiableInputError
from autodiff_tutor.pytree import flatten, unflatten


def case(program):
    if program.refused:
        return pytest.param(program, marks=pytest.mark.xfail(strict=True, reason=program.refused))
    return program


IDS = [p.name for p in PROGRAMS]
CASES = [case(p) for p in PROGRAMS]
SEEDS = (0, 1, 2)


def test_the_corpus_is_large_enough():
    assert len([p for p in PROGRAMS if not p.refused]) >= 40
    assert sum(p.loop_free for p in PROGRAMS) >= len(PROGRAMS) // 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("program", CASES, ids=IDS)
def test_gradients_match_finite_differences_and_autograd(program, seed):
    args = program.sample(np.random.default_rng(seed))
    gradients = grad(program.fn, wrt=list(program.wrt))(*args)
    check_gradients(program, args, gradients)


# Second order on the loop-free programs: jvp of the gradient (a Hessian-vector
# product), structures included (the direction has the argument's structure).
LOOP_FREE = [p for p in PROGRAMS if p.loop_free]


def _direction(value, rng):
    leaves, tree = flatten(value)
    return unflatten(tree, [rng.normal(size=np.shape(v)) for v in leaves])


def _moved(value, direction, step):
    leaves, tree = flatten(value)
    moved = [v + step * d for v, d in zip(leaves, flatten(direction)[0], strict=True)]
    return unflatten(tree, moved)


def test_vjp_of_a_gradient_with_a_dict_is_refused_clearly():
    program = next(p for p in LOOP_FREE if p.name == "mlp_dict")
    args = program.sample(np.random.default_rng(0))
    with pytest.raises(NonDifferentiableInputError, match="structure") as raised:
        vjp(grad(program.fn), *args)
    assert "jvp(grad(f), args, tangents)" in raised.value.hint
    assert raised.value.location.text.strip() == "vjp(grad(program.fn), *args)"


@pytest.mark.parametrize("program", [case(p) for p in LOOP_FREE], ids=[p.name for p in LOOP_FREE])
def test_hessian_vector_products_match_differences_of_the_gradient(program):
    args = program.sample(np.random.default_rng(7))
    index = program.wrt[0]
    gradient = grad(program.fn, wrt=index)
    direction = _direction(args[index], np.random.default_rng(8))
    tangents = [None] * len(args)
    tangents[index] = direction
    _, hvp = jvp(gradient, args, tangents)
    assert same_structure(hvp, args[index])
    eps = 1e-5
    plus, minus = list(args), list(args)
    plus[index] = _moved(args[index], direction, eps)
    minus[index] = _moved(args[index], direction, -eps)
    ends = leaves_of(gradient(*plus)), leaves_of(gradient(*minus))
    for got, high, low in zip(leaves_of(hvp), *ends, strict=True):
        np.testing.assert_allclose(got, (high - low) / (2 * eps), rtol=1e-5, atol=1e-6)


def test_jvp_takes_structures_with_tangents_of_the_same_structure():
    def loss(params, X):
        h = X
        for W, b in params:
            h = np.tanh(h @ W + b)
        return np.sum(h**2)

    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(3, 2)), rng.normal(size=2)), (rng.normal(size=(2, 2)), np.zeros(2))]
    X = rng.normal(size=(4, 3))
    direction = _direction(params, rng)
    value, slope = jvp(loss, [params, X], [direction, None])
    eps = 1e-6
    high, low = loss(_moved(params, direction, eps), X), loss(_moved(params, direction, -eps), X)
    assert value == loss(params, X)
    np.testing.assert_allclose(slope, (high - low) / (2 * eps), rtol=1e-6)
    with pytest.raises(ArgumentError, match="same structure") as raised:
        jvp(loss, [params, X], [direction[:1], None])
    assert raised.value.location is not None
