"""A gradient the specialized backward updates in place owns its array (specialize.owned).

The case: ``v7 = v3 * 0.5 * v3`` gives ``d_v3 = 0.5 * v3 + v3 * 0.5``, which
simplification folds to ``d_v3 = v3``; a ``while`` loop then adds into ``d_v3`` in
place, which must not change ``v3``, still read by the loop: the specialized pair (from
the second call) agrees with central differences.
"""

import numpy as np
from oracles import central_difference

from autodiff_tutor import differentiable, value_and_grad


def folded_to_an_alias(x, w):
    v2 = []
    for k in range(3):
        v2.append(np.sin(x[k]) * x[k])
    v3 = np.stack(v2)[:, 3]
    v4 = v3 + 0.0
    n = 0
    while n < 1 or n < 4 and np.mean(v4 * v4) < 4.0:
        v4 = v4 * 1.4 + 0.1 * np.sin(v3)
        n += 1
    v7 = v3 * 0.5 * v3
    return np.sum(v4 * v4) + np.sum(v7) + 0.1 * np.sum(x * x) + np.sum(w)


def square_halves(x):
    v = np.tanh(x)
    s = v * 0.5 * v  # d_v folds to v itself
    for _ in range(3):
        s = s + np.sin(v)  # then gains in place, in a loop
    return np.sum(s)


def test_specialized_pairs_match_differences_when_a_gradient_folds_to_a_value():
    rng = np.random.default_rng(60718)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=4)
    expected = central_difference(folded_to_an_alias, [x, w], 0)
    both = value_and_grad(differentiable(folded_to_an_alias), wrt=[0, 1])
    for _ in range(3):  # the general pair, then the specialized one
        np.testing.assert_allclose(both(x, w)[1][0], expected, rtol=1e-6, atol=1e-7)
    y = rng.normal(size=5)
    expected = central_difference(square_halves, [y], 0)
    both = value_and_grad(differentiable(square_halves))
    for _ in range(3):
        np.testing.assert_allclose(both(y)[1], expected, rtol=1e-6, atol=1e-7)


def product(x, y):
    return np.sum(x * y)  # d_x is y, d_y is x


def total(x, y):
    return np.sum(x + y)  # both gradients are ones


def shifted(x, W):
    return np.sum(x @ W) + np.sum(x)


def test_returned_gradients_are_arrays_of_their_own_on_every_call():
    # the specialized backward's gradients are not checked when it makes each of them
    # (not_made_here); where simplification leaves an argument or a shared array, the
    # check copies: never an argument, never one array for two gradients, writable
    rng = np.random.default_rng(3)
    cases = [
        (product, (rng.normal(size=4), rng.normal(size=4))),
        (total, (rng.normal(size=4), rng.normal(size=4))),
        (shifted, (rng.normal(size=3), rng.normal(size=(3, 2)))),
    ]
    for fn, args in cases:
        both = value_and_grad(fn, wrt=[0, 1])
        for _ in range(3):
            _, grads = both(*args)
            for position, g in enumerate(grads):
                assert g.flags.writeable and g.base is None
                assert not any(np.shares_memory(g, a) for a in args)
                np.testing.assert_allclose(g, central_difference(fn, args, position))
            assert not np.shares_memory(grads[0], grads[1])
            grads[0][...] = 7.0  # the caller owns it: the next call is unaffected
        pair = differentiable(fn).derivative([0, 1]).specializations
        assert any(p is not None for p in pair.values())
