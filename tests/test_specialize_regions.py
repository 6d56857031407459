"""Specialized pairs of programs with ``while`` loops, custom-op calls and branches.

A ``while`` loop is specialized when the probe ran it and every name it binds kept
one shape and dtype (``specialize.regions.loops_settled``); a custom op's outputs and the
gradients its backward returns are checked where the specialized code runs; a branch
outside loops is specialized on the path the probe took, its test checked
(``specialize.paths``). A failed check drops the specialization and runs the general pair for
the call. Every gradient here is judged by central differences (and autograd where it
applies), on calls that run the specialized pair with loops that run 0, 1 or many
times and branches going either way.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import (
    DifferentiableFunction,
    PReLUFunction,
    SReLUFunction,
    differentiable,
    value_and_grad,
)
from autodiff_tutor.compiler.specialize.probe import guard_key
from autodiff_tutor.compiler.specialized import compile_specialized


def _check(fn, args, wrt, gradients, rtol=1e-6):
    for position, g in zip(wrt, gradients, strict=True):
        expected = central_difference(fn, args, position)
        np.testing.assert_allclose(g, expected, rtol=rtol, atol=1e-7)


def _general(fn, args, wrt):
    """The general pair's value and gradients (a fresh ``value_and_grad``'s first call)."""
    value, gradients = value_and_grad(fn, wrt=wrt)(*args)
    return value, gradients


def _pair(fn, wrt, args):
    return differentiable(fn).derivative(wrt).specializations.get(guard_key(args))


# -- while loops ---------------------------------------------------------------------------


def halve(x):
    while np.sum(x * x) > 1.0:
        x = x * 0.5
    return np.sum(np.sin(x) * x)


def newton_sqrt(a):
    y = a
    while np.max(np.abs(y * y - a)) > 1e-10:
        y = 0.5 * (y + a / y)
    return np.sum(y)


def halve_then_for(x, w):
    while np.sum(x * x) > 1.0:
        for _ in range(2):
            x = x * 0.75 + 0.0 * w
    return np.sum(np.tanh(x) * w)


def accumulate(x):
    s = 0.0  # a float first, an array after one iteration: two facts
    while np.sum(s) < 3.0:
        s = s + x * x
    return np.sum(s)


def shrink(x):
    y = x
    while y.shape[0] > 2:  # the loop changes the shape of what it carries
        y = y[1:] * 1.5
    return np.sum(y * y)


def prefix(x):
    i = 1
    while i < x.shape[0] and np.sum(x[:i]) < 2.0:  # a count the values decide...
        i = i + 1
    return np.sum(x[:i] ** 2)  # ...decides a shape


def running_sum(x, limit):
    i = 0
    s = x[0] * 0.0
    while i < x.shape[0] and np.sum(s) < limit:  # how far the values decide
        s = s + x[i] * x[i]  # an integer index: the shape of x[i] is that of a row
        i = i + 1
    return np.sum(s)


def _halve_inputs():
    """Same shape; the loop runs 2, 1 (the probe), 0, many, 0 and 2 times."""
    base = np.array([0.3, -0.2, 0.4])
    return [base * 4.0, base * 2.5, base, base * 40.0, base * 0.5, base * 4.0]


def test_a_while_loop_is_specialized_and_right_for_any_number_of_iterations():
    both = value_and_grad(halve)
    for x in _halve_inputs():
        value, g = both(x)
        assert np.isclose(value, halve(x))
        _check(halve, (x,), [0], [g])
        np.testing.assert_allclose(g, autograd_gradient(halve, (x,), 0), rtol=1e-12)
        np.testing.assert_allclose(g, _general(halve, (x,), 0)[1], rtol=1e-12)
    pair = _pair(halve, 0, (x,))
    assert pair is not None and "while" in pair.forward_source  # the specialized pair ran


def test_a_probe_with_zero_iterations_leaves_the_general_pair():
    both = value_and_grad(halve)
    x = np.array([0.1, 0.2])  # no iteration at the probe: nothing known of the body
    both(x), both(x)
    assert _pair(halve, 0, (x,)) is None
    for y in (x * 30.0, x):
        _check(halve, (y,), [0], [both(y)[1]])


def test_newton_iterations_vary_and_the_specialized_gradient_stays_right():
    both = value_and_grad(newton_sqrt)
    rng = np.random.default_rng(3)
    near_one = np.full(5, 1.0 + 1e-7)  # one or two iterations (at 1 exactly: none, and
    # the program's derivative there is 1, not that of sqrt: not a case to judge by it)
    inputs = [rng.uniform(1.0, 4.0, 5), near_one, rng.uniform(0.5, 9.0, 5), near_one * 50]
    for a in inputs:
        value, g = both(a)
        np.testing.assert_allclose(g, 0.5 / np.sqrt(a), rtol=1e-6)  # d/da sum(sqrt(a))
        np.testing.assert_allclose(g, _general(newton_sqrt, (a,), 0)[1], rtol=1e-12)
    pair = _pair(newton_sqrt, 0, (inputs[0],))
    assert pair is not None and "unbroadcast" not in pair.backward_source


def test_a_for_loop_inside_a_while_loop():
    both = value_and_grad(halve_then_for, wrt=[0, 1])
    w = np.array([0.5, -1.0, 2.0])
    for x in _halve_inputs():
        _, grads = both(x, w)
        _check(halve_then_for, (x, w), [0, 1], grads)
    assert _pair(halve_then_for, [0, 1], (x, w)) is not None


def test_a_while_loop_indexing_rows_by_its_counter():
    both = value_and_grad(running_sum)
    x = np.array([[0.5, 1.0], [1.5, -0.5], [2.0, 0.3], [0.1, 0.2]])
    for limit in (3.0, 3.0, 0.5, 100.0, 6.0, 1e-3):  # 2 (the probe), 1, 4, 3, 1 rows
        _, g = both(x, limit)
        _check(running_sum, (x, limit), [0], [g])
    pair = _pair(running_sum, 0, (x, 3.0))
    assert pair is not None and "while" in pair.forward_source


def nested_whiles(x):
    while np.sum(x * x) > 1.0:
        y = x
        while np.max(np.abs(y)) > 0.5:  # 0 or more times in each outer iteration
            y = y * 0.5
        x = x * 0.5 + 0.1 * y
    return np.sum(np.sin(x))


def test_a_while_loop_inside_a_while_loop():
    both = value_and_grad(nested_whiles)
    x = np.array([0.9, -0.6, 0.3])
    for scale in (1.5, 1.5, 4.0, 0.5, 30.0, 1.2):
        _, g = both(scale * x)
        _check(nested_whiles, (scale * x,), [0], [g])
    assert _pair(nested_whiles, 0, (x,)) is not None


@pytest.mark.parametrize("fn", [accumulate, shrink, prefix])
def test_loops_whose_shapes_change_are_not_specialized(fn):
    derivative = differentiable(fn).derivative(0)
    x = np.array([0.9, 0.7, 1.1, 0.2])
    assert compile_specialized(derivative, (x,)) is None
    both = value_and_grad(fn)
    for y in (x, x, x * 0.3, x * 3.0, x):
        _check(fn, (y,), [0], [both(y)[1]])


def test_show_prints_the_specialized_while_loop():
    compiled = differentiable(newton_sqrt)
    both = value_and_grad(compiled)
    a = np.array([2.0, 3.0])
    both(a), both(a)
    texts = compiled.specialized_sources()
    (text,) = [t for t in texts if t.startswith("# specialized for a: float64[2]\n")]
    backward = text.split("def newton_sqrt_backward", 1)[1]
    assert "for _ in range(count):" in backward
    for line in backward.splitlines()[2:-1]:
        if not line.strip().startswith("for "):
            assert "# line " in line or "# gradient" in line, line


# -- custom operations ---------------------------------------------------------------------

SRELU = SReLUFunction("BC")
PRELU = PReLUFunction("BC")


def srelu_net(W, tl, al, tr, ar, X):
    return np.sum(SRELU(X @ W, tl, al, tr, ar) ** 2)


def prelu_net(W, alpha, X):
    return np.sum(np.tanh(PRELU(X @ W, alpha)))


class Positive(DifferentiableFunction):
    """The positive elements of ``x``: an output shape the values decide."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)
        self.forward_calls = 0

    def forward(self, x):
        self.forward_calls += 1
        return x[x > 0]

    def backward(self, d_y, compute_gradients, x):
        d_x = np.zeros_like(x)
        d_x[x > 0] = d_y
        return d_x


POSITIVE = Positive()


def positive_part(x):
    return np.sum(POSITIVE(x) ** 3)


class Spread:
    """A protocol op (no validation) whose backward returns a gradient of shape
    ``(1, n)`` for an input of shape ``(n,)`` when its first value is negative: the
    general code sums it back, the specialized code must not take it as probed."""

    name, num_outputs = "spread", 1

    def op_forward(self, x):
        return (2.0 * x,), x

    def op_backward(self, d_outputs, compute_gradients, x):
        d_x = 2.0 * d_outputs[0]
        return (d_x[None, :] if x[0] < 0 else d_x,)

    def source(self):
        return "y = 2 x"

    def __call__(self, x):  # plain numpy: what central differences call
        return 2.0 * x


SPREAD = Spread()


def spread_net(x, w):
    return np.sum(np.sin(SPREAD(x * w)) * w)


def _srelu_args(rng):
    return (
        rng.normal(size=(3, 4)),
        np.full((1, 4), -0.4),
        np.full((1, 4), 0.2),
        np.full((1, 4), 0.5),
        np.full((1, 4), 1.5),
        rng.normal(size=(6, 3)),
    )


@pytest.mark.parametrize(
    "fn, make, wrt",
    [
        (srelu_net, _srelu_args, [0, 1, 2, 3, 4]),
        (
            prelu_net,
            lambda rng: (rng.normal(size=(3, 4)), np.full((1, 4), 0.25), rng.normal(size=(5, 3))),
            [0, 1],
        ),
    ],
)
def test_custom_ops_are_specialized_with_a_guard_and_stay_right(fn, make, wrt):
    both = value_and_grad(fn, wrt=wrt)
    for seed in (0, 0, 1, 2):
        args = make(np.random.default_rng(seed))
        value, grads = both(*args)
        assert np.isclose(value, fn(*args))
        _check(fn, args, wrt, grads)
        general = _general(fn, args, wrt)[1]
        for got, expected in zip(grads, general, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-12)
    pair = _pair(fn, wrt, args)
    assert pair is not None and "expect_array(" in pair.forward_source


def test_a_value_shaped_op_output_fires_the_guard_and_the_general_pair_runs():
    both = value_and_grad(positive_part)
    x = np.array([0.5, -1.0, 2.0, 0.3])  # three positives at the probe
    both(x), both(x)
    assert _pair(positive_part, 0, (x,)) is not None
    other = np.array([0.5, -1.0, -2.0, 0.3])  # two positives: another output shape
    # forward runs per call: the specialized pair; the guard fires (specialized, then
    # general); then the general pair only, whatever the shape (no re-probing)
    for y, runs in ((x, 1), (other, 2), (x, 1), (-other, 1), (x, 1)):
        calls = POSITIVE.forward_calls
        value, g = both(y)
        assert POSITIVE.forward_calls - calls == runs
        assert np.isclose(value, positive_part(y))
        _check(positive_part, (y,), [0], [g])
        np.testing.assert_allclose(g, 3 * np.where(y > 0, y, 0.0) ** 2)
    assert _pair(positive_part, 0, (x,)) is None  # dropped: the general pair serves the key


def test_a_gradient_of_another_shape_from_an_op_fires_the_backward_guard():
    both = value_and_grad(spread_net, wrt=[0, 1])
    w = np.array([0.5, 1.5, -1.0])
    x = np.array([0.2, -0.4, 0.9])
    both(x, w), both(x, w)
    pair = _pair(spread_net, [0, 1], (x, w))
    assert pair is not None and "expect_array(d_" in pair.backward_source
    for y in (x, -x, x):  # -x: the op's backward returns a (1, 3) gradient
        _, grads = both(y, w)
        _check(spread_net, (y, w), [0, 1], grads)
    assert _pair(spread_net, [0, 1], (x, w)) is None


@differentiable
def smooth(a, b):
    c = np.tanh(a) * b
    while np.sum(c * c) > 4.0:
        c = c * 0.5
    return c


def nested(x, w):
    return np.sum(smooth(x, w) * x)


def test_a_nested_compiled_function_is_guarded_and_right():
    both = value_and_grad(nested, wrt=[0, 1])
    rng = np.random.default_rng(4)
    for scale in (1.0, 1.0, 10.0, 0.1, 30.0):
        x, w = rng.normal(size=4), scale * rng.normal(size=4)
        _, grads = both(x, w)
        _check(nested, (x, w), [0, 1], grads)
    pair = _pair(nested, [0, 1], (x, w))
    assert pair is not None and "expect_array(" in pair.forward_source


def prelu_until_small(x, alpha):
    while np.sum(x * x) > 1.0:  # the op runs once per iteration, checked each time
        x = 0.5 * PRELU(x, alpha)
    return np.sum(x * x * x)


def test_a_custom_op_inside_a_while_loop():
    both = value_and_grad(prelu_until_small, wrt=[0, 1])
    alpha = np.full((1, 3), 0.3)
    x = np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -0.1]])
    for scale in (1.0, 1.0, 0.2, 5.0, 1.0):
        _, grads = both(scale * x, alpha)
        _check(prelu_until_small, (scale * x, alpha), [0, 1], grads)
    pair = _pair(prelu_until_small, [0, 1], (x, alpha))
    assert pair is not None and "expect_array(" in pair.forward_source


def test_show_prints_the_guard_with_its_comment():
    compiled = differentiable(srelu_net)
    both = value_and_grad(compiled, wrt=[0, 1, 2, 3, 4])
    args = _srelu_args(np.random.default_rng(0))
    both(*args), both(*args)
    text = "\n".join(compiled.specialized_sources([0, 1, 2, 3, 4]))
    guards = [line for line in text.splitlines() if "expect_array(" in line]
    assert guards and all("# line " in line and "SRELU(" in line for line in guards)


# -- branches ------------------------------------------------------------------------------


def branchy(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = np.sum(x)  # another shape than the other arm's
    return np.sum(y * x)


def nested_branches(x, w):
    if np.sum(x) > 0:
        if np.max(w) > 1.0:
            y = np.tanh(x) * w
        else:
            y = x * x
    else:
        y = np.sum(x * w) * x
    return np.sum(y)


def branch_around_a_while(x):
    if np.sum(x) > 0:
        while np.sum(x * x) > 1.0:
            x = x * 0.5
    return np.sum(np.sin(x))


def branch_in_a_loop(x):
    for i in range(3):
        if np.sum(x) > i:
            x = x * 0.5
    return np.sum(x * x)


def breaks(x):
    for _ in range(4):
        if np.sum(x) > 3.0:
            break
        x = x * 1.5
    return np.sum(x * x)


def test_a_branch_is_specialized_on_the_probed_path_and_checked():
    both = value_and_grad(branchy)
    x = np.array([1.0, 2.0, -0.5])
    both(x), both(x)
    pair = _pair(branchy, 0, (x,))
    assert pair is not None and "expect_path(" in pair.forward_source
    code = (pair.forward_source + pair.backward_source).splitlines()
    assert not [line for line in code if line.strip().startswith("if ")]  # straight-line
    for y in (x, -x, x, -x):  # -x: the other arm (another shape): the general pair
        value, g = both(y)
        assert np.isclose(value, branchy(y))
        _check(branchy, (y,), [0], [g])
        np.testing.assert_allclose(g, autograd_gradient(branchy, (y,), 0), rtol=1e-12)
    assert _pair(branchy, 0, (x,)) is None  # the other path was met: dropped


@pytest.mark.parametrize("scale", [1.0, -1.0])
def test_nested_branches_either_way(scale):
    both = value_and_grad(nested_branches, wrt=[0, 1])
    x = scale * np.array([0.5, 1.0, -0.2])
    for w in (np.array([2.0, 0.1, 0.3]), np.array([2.0, 0.1, 0.3]), np.array([0.5, 0.1, 0.3])):
        _, grads = both(x, w)
        _check(nested_branches, (x, w), [0, 1], grads)


def test_a_branch_around_a_while_loop():
    both = value_and_grad(branch_around_a_while)
    x = np.array([1.0, 2.0, 0.5])
    for y in (x, x, x * 3.0, x * 0.1, -x, x):
        _check(branch_around_a_while, (y,), [0], [both(y)[1]])


@pytest.mark.parametrize("fn", [branch_in_a_loop, breaks])
def test_branches_inside_loops_are_not_specialized(fn):
    x = np.array([0.5, 1.0, 0.7])
    assert compile_specialized(differentiable(fn).derivative(0), (x,)) is None
    both = value_and_grad(fn)
    for y in (x, x, x * 3.0, -x):
        _check(fn, (y,), [0], [both(y)[1]])


def branch_before_broadcasting(x, w):
    v = w * 0.5 * x  # (4,) times (3, 4): the gradient of w * 0.5 is summed over rows
    if np.max(v) > 0.5:
        u = np.sin(v) * 2.0  # an arm with helper calls of its own...
    else:
        u = v * v
    u = u + 0.0
    u *= np.sin(v)
    return np.sum(u * u)


def test_sites_after_a_branch_are_those_of_the_path_taken():
    # the arms make different helper calls: the backward of the path taken numbers its
    # own calls, so the call that sums w's gradient over rows is found, and w's gradient
    # has w's shape (4,), not (3, 4), on either arm
    rng = np.random.default_rng(3)
    x, w = rng.uniform(-1.5, 1.5, (3, 4)), rng.uniform(-1.5, 1.5, 4)
    x[0] = np.abs(x[0]) + 2.0  # the first arm
    both = value_and_grad(branch_before_broadcasting, wrt=[0, 1])
    for y in (x, x, x * 0.01, x):  # x * 0.01: the other arm
        _, grads = both(y, w)
        assert grads[1].shape == w.shape
        _check(branch_before_broadcasting, (y, w), [0, 1], grads)
        expected = autograd_gradient(branch_before_broadcasting, (y, w), 1)
        np.testing.assert_allclose(grads[1], expected, rtol=1e-12)


def test_show_prints_the_checked_path():
    compiled = differentiable(branchy)
    both = value_and_grad(compiled)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    both(x), both(x)
    texts = compiled.specialized_sources()
    (text,) = [t for t in texts if t.startswith("# specialized for x: float64[4]\n")]
    (check,) = [line for line in text.splitlines() if "expect_path(" in line]
    assert "# line " in check and "if np.sum(x) > 0:" in check


# -- another array library -----------------------------------------------------------------


def strict_halve(x):
    while x[0] * x[0] > 1.0:  # operators only: a strict array stays strict
        x = x * 0.5
    if x[1] > 0:
        x = x * x
    return x[0] * x[1] + x[2]


def test_a_strict_array_library_runs_the_general_pair_with_its_own_arrays():
    import array_api_strict as xs

    both = value_and_grad(strict_halve)
    for values in ([3.0, 0.5, 1.0], [3.0, 0.5, 1.0], [0.2, -0.5, 1.0], [9.0, 2.0, -1.0]):
        x = np.array(values)
        value, g = both(xs.asarray(x))
        assert type(g) is type(xs.asarray(x))
        np.testing.assert_allclose(float(value), strict_halve(x))
        _check(strict_halve, (x,), [0], [np.asarray(g)])
    assert differentiable(strict_halve).derivative(0).specializations == {}  # no key
