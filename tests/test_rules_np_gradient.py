"""``np.gradient`` (central differences inside, one-sided at the edges) in user
programs: in both modes, the general and the
specialized pair (``value_and_grad`` called three times), forward mode, against
central differences (float64) and autograd (which has ``np.gradient`` of a 1-D array
without spacing; ``np.gradient(x, h)`` is ``np.gradient(x) / h``), and the transpose
of the rule checked against numpy's own map. What the rule does not cover is refused
at the call, in both modes."""

import autograd.numpy as anp
import numpy as np
import pytest
from oracles import autograd_gradient, central_difference
from program_checks import assert_gradient_in_every_mode

from autodiff_tutor import grad, value_and_grad
from autodiff_tutor.errors import AutodiffError, NoDerivativeRuleError
from autodiff_tutor.runtime.helpers import gradient_operand
from autodiff_tutor.tracing import value_and_gradient

X = np.array([0.3, -1.2, 0.8, 1.5, -0.4, 0.9, 0.1])


def jerk(x, dt=0.1):
    v = np.gradient(x, dt)
    return np.sum(np.sin(np.gradient(v, dt)) * x) + np.sum(np.gradient(x) ** 2)


def jerk_twin(x, dt=0.1):  # autograd's np.gradient takes no spacing: divide by it
    v = anp.gradient(x) / dt
    return anp.sum(anp.sin(anp.gradient(v) / dt) * x) + anp.sum(anp.gradient(x) ** 2)


def slopes(x):
    grid = x[:6].reshape(2, 3) * x[6]
    return np.sum(np.gradient(grid, 0.5, axis=1) ** 3) + np.sum(np.gradient(grid, axis=0))


def slopes_twin(x):  # the rows' and columns' differences written out
    grid = x[:6].reshape(2, 3) * x[6]
    along = anp.stack(
        [grid[:, 1] - grid[:, 0], (grid[:, 2] - grid[:, 0]) / 2, grid[:, 2] - grid[:, 1]]
    )
    return anp.sum((along / 0.5) ** 3) + 2 * anp.sum(grid[1] - grid[0])


@pytest.mark.parametrize("fn, twin", [(jerk, jerk_twin), (slopes, slopes_twin)])
def test_np_gradient_in_every_mode(fn, twin):
    direction = np.linspace(-1.0, 1.0, X.size)
    assert_gradient_in_every_mode(fn, twin, X, direction)
    want = central_difference(fn, [X], 0)
    np.testing.assert_allclose(autograd_gradient(twin, [X], 0), want, rtol=1e-6, atol=1e-9)
    pair = value_and_grad(fn)
    for _ in range(3):  # the general pair, then the specialized one
        value, gradient = pair(X)
        np.testing.assert_allclose(value, fn(X), rtol=1e-12)
        np.testing.assert_allclose(gradient, want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "shape, axis, h", [((2,), None, 1.0), ((5,), -1, 0.3), ((3, 6), 1, 0.5), ((4, 3, 2), 0, 2.0)]
)
def test_the_rule_is_the_transpose_of_numpy_map(shape, axis, h):
    n = shape[0 if axis is None else axis]
    along = 0 if axis is None else axis
    rng = np.random.default_rng(0)
    g = rng.normal(size=shape)
    for j in range(n):  # <g, L e_j> for each unit sample e_j along the axis
        unit = np.zeros(shape)
        np.moveaxis(unit, along, 0)[j] = 1.0
        got = np.moveaxis(gradient_operand(g, unit, h, axis), along, 0)[j]
        want = np.sum(np.moveaxis(g * np.gradient(unit, h, axis=along), along, 0), axis=0)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def several_axes(x):
    return np.sum(np.gradient(x.reshape(1, 7), 0.1, 0.2)[0])


def second_order_edges(x):
    return np.sum(np.gradient(x, edge_order=2))


def coordinates(x):
    return np.sum(np.gradient(x, np.linspace(0.0, 1.0, 7)) ** 2)


def no_axis(x):
    return np.sum(np.gradient(x[:6].reshape(3, 2))[0])


@pytest.mark.parametrize(
    "fn, words, hint",
    [
        (several_axes, "several axes", "one axis per call"),
        (second_order_edges, "edge_order=2", "edge_order at 1"),
        (coordinates, "sample coordinates", "np.diff(f) / np.diff(x)"),
        (no_axis, "2-D array without axis=", "one axis per call"),
    ],
)
def test_what_the_rule_does_not_cover_is_refused(fn, words, hint):
    for call in (lambda: grad(fn)(X), lambda: value_and_gradient(fn, X)):
        with pytest.raises(NoDerivativeRuleError) as caught:
            call()
        assert words in caught.value.message
        assert hint in caught.value.hint
        assert caught.value.location.filename == __file__


def test_a_spacing_with_gradient_is_refused_in_both_modes():
    def stretched(x, h):
        return np.sum(np.gradient(x, h) ** 2)

    calls = (
        lambda: grad(stretched, wrt=(0, 1))(X, 0.5),
        lambda: value_and_gradient(stretched, X, 0.5, wrt=(0, 1)),
    )
    for call in calls:  # the rule gives h no gradient: it would be lost, not zero
        with pytest.raises(AutodiffError, match="spacing") as caught:
            call()
        assert caught.value.location.filename == __file__
    np.testing.assert_allclose(  # h without gradient is an ordinary option
        grad(stretched)(X, 0.5), central_difference(lambda x: stretched(x, 0.5), [X], 0), 1e-6
    )
