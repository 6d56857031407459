"""The corpus of everyday Python (tests/corpus_python) against finite differences and
autograd, and second derivatives of its loop-free programs (issue 13)."""

import numpy as np
import pytest
from corpus_python import PROGRAMS
from oracles import autograd_gradient

from autodiff_tutor import grad, jvp
from autodiff_tutor.errors import NonDifferentiableInputError
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


def finite_differences(fn, args, index, eps=1e-6):
    """Central differences w.r.t. every float leaf of ``args[index]``, in its structure."""
    leaves, tree = flatten(args[index])
    gradients = []
    for j, leaf in enumerate(leaves):
        leaf = np.asarray(leaf, dtype=np.float64)
        gradient = np.zeros_like(leaf)
        for k in range(leaf.size):
            values = []
            for sign in (1, -1):
                moved = leaf.copy().reshape(-1)
                moved[k] += sign * eps
                changed = list(leaves)
                changed[j] = moved.reshape(leaf.shape)
                call = list(args)
                call[index] = unflatten(tree, changed)
                values.append(float(fn(*call)))
            gradient.reshape(-1)[k] = (values[0] - values[1]) / (2 * eps)
        gradients.append(gradient)
    return gradients


def leaves_of(value):
    return [np.asarray(v, dtype=np.float64) for v in flatten(value)[0]]


def same_structure(a, b):
    return flatten(a)[1][0] == flatten(b)[1][0] and len(flatten(a)[0]) == len(flatten(b)[0])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("program", CASES, ids=IDS)
def test_gradients_match_finite_differences_and_autograd(program, seed):
    args = program.sample(np.random.default_rng(seed))
    gradients = grad(program.fn, wrt=list(program.wrt))(*args)
    for index, gradient in zip(program.wrt, gradients, strict=True):
        assert same_structure(gradient, args[index])  # the same structure as the argument
        expected = finite_differences(program.fn, args, index)
        for got, want in zip(leaves_of(gradient), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if program.autograd:
            oracle = autograd_gradient(program.fn, args, index)
            for got, want in zip(leaves_of(gradient), leaves_of(oracle), strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


# Second order on the loop-free programs. jvp and grad of grad take arrays: a structure
# that stacks into one array (a tuple of equal-shaped arrays) is differentiated as that
# array; dicts and ragged lists are refused with a clear error (recorded here).
LOOP_FREE = [p for p in PROGRAMS if p.loop_free]
REFUSED_SECOND_ORDER = {"dense_layer_tuple", "mlp_dict", "autoencoder_nested", "tuple_of_dicts"}


def second_order_case(program):
    if program.refused:
        return case(program)
    if program.name in REFUSED_SECOND_ORDER:
        reason = "jvp of a gradient takes arrays: dicts and ragged lists are not flattened there"
        return pytest.param(program, marks=pytest.mark.xfail(strict=True, reason=reason))
    return program


def test_second_order_on_a_dict_is_refused_clearly():
    program = next(p for p in LOOP_FREE if p.name == "mlp_dict")
    args = program.sample(np.random.default_rng(0))
    with pytest.raises(NonDifferentiableInputError, match="structure"):
        jvp(grad(program.fn), args, [args[0], None])


@pytest.mark.parametrize(
    "program", [second_order_case(p) for p in LOOP_FREE], ids=[p.name for p in LOOP_FREE]
)
def test_hessian_vector_products_match_differences_of_the_gradient(program):
    args = program.sample(np.random.default_rng(7))
    index = program.wrt[0]
    gradient = grad(program.fn, wrt=index)
    direction = np.random.default_rng(8).normal(size=np.shape(args[index]))
    tangents = [None] * len(args)
    tangents[index] = direction
    _, hvp = jvp(gradient, args, tangents)
    eps = 1e-5
    plus, minus = list(args), list(args)
    plus[index] = args[index] + eps * direction
    minus[index] = args[index] - eps * direction
    expected = (gradient(*plus) - gradient(*minus)) / (2 * eps)
    np.testing.assert_allclose(hvp, expected, rtol=1e-5, atol=1e-6)
