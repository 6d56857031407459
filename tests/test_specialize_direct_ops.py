"""A specialized pair calls a custom op's own ``forward`` and ``backward``.

``compiler/specialize.direct_ops``: after the probe's checked call through the protocol, the
pair specialized on argument shapes calls ``op.forward`` / ``op.backward`` itself and
checks every output and gradient against the probed facts. Judged here: gradients
against central differences and the general pair, over calls that run the
specialized pair; an op that misbehaves after the probe (a gradient of another shape,
another dtype) falls back to the general pair, which reports it; ops that override the
protocol, one-input ops and inputs rebound after the call keep the protocol call or
stay right.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import (
    DifferentiableFunction,
    PReLUFunction,
    SReLUFunction,
    differentiable,
    value_and_grad,
)
from autodiff_tutor.compiler.specialize.probe import guard_key
from autodiff_tutor.errors import AutodiffError

SRELU = SReLUFunction("BC")
PRELU = PReLUFunction("BC")


def _pair(fn, wrt, args):
    return differentiable(fn).derivative(wrt).specializations.get(guard_key(args))


def _right(fn, args, wrt, grads):
    for position, g in zip(wrt, grads, strict=True):
        np.testing.assert_allclose(g, central_difference(fn, args, position), rtol=1e-6, atol=1e-7)


def _calls(fn, wrt, args, times=3):
    both = value_and_grad(fn, wrt=wrt)
    for _ in range(times):
        value, grads = both(*args)
        assert np.isclose(value, fn(*args))
        _right(fn, args, wrt, grads)
    return both


def srelu_mse(W, b, tl, al, tr, ar, X, Y):
    z = X @ W + b
    a = SRELU(z, tl, al, tr, ar)
    r = a - Y
    return np.sum(r * r) / X.shape[0]


def _srelu_args(rng):
    return (
        rng.normal(size=(3, 4)),
        rng.normal(size=4),
        np.full((1, 4), -0.4),
        np.full((1, 4), 0.2),
        np.full((1, 4), 0.5),
        np.full((1, 4), 1.5),
        rng.normal(size=(6, 3)),
        rng.normal(size=(6, 4)),
    )


def test_the_specialized_pair_calls_forward_and_backward_and_stays_right():
    args = _srelu_args(np.random.default_rng(0))
    wrt = [0, 1, 2, 3, 4, 5]
    both = _calls(srelu_mse, wrt, args)
    pair = _pair(srelu_mse, wrt, args)
    assert pair is not None
    assert "SRELU.forward(z, tl, al, tr, ar)" in pair.forward_source
    assert "op_forward" not in pair.forward_source
    assert "SRELU.backward(" in pair.backward_source and "op_backward" not in pair.backward_source
    # every gradient the op returns is checked against the probe's facts
    assert "expect_arrays((d_z, d_tl, d_al, d_tr, d_ar), ((6, 4), (1, 4)," in pair.backward_source
    general = value_and_grad(srelu_mse, wrt=wrt)(*args)[1]  # a first call: the general pair
    for got, expected in zip(both(*args)[1], general, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_some_gradients_asked_for():
    args = _srelu_args(np.random.default_rng(1))
    _calls(srelu_mse, [2, 5], args)  # tl and ar only: the op computes no more
    pair = _pair(srelu_mse, [2, 5], args)
    assert pair is not None and "SRELU.backward(" in pair.backward_source


class Moody(DifferentiableFunction):
    """``x * w`` whose backward, once ``broken`` is set, returns a gradient of another
    shape or dtype: after the probe, so only the pair's own checks can see it."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)
        self.broken = None

    def forward(self, x, w):
        return x * w

    def backward(self, d_y, compute_gradients, x, w):
        d_x, d_w = d_y * w, np.sum(d_y * x, axis=0, keepdims=True)
        if self.broken == "shape":
            d_w = d_w[0]
        elif self.broken == "dtype":
            d_w = d_w.astype(np.float32)
        return d_x, d_w


MOODY = Moody()


def _moody_net():
    def moody_net(x, w):  # a new function each time: its own specializations
        return np.sum(np.sin(MOODY(x, w)))

    return moody_net


@pytest.mark.parametrize("broken", ["shape", "dtype"])
def test_a_backward_that_changes_after_the_probe_is_reported_not_used(broken):
    x, w = np.random.default_rng(2).normal(size=(4, 3)), np.ones((1, 3))
    moody_net = _moody_net()
    both = _calls(moody_net, [0, 1], (x, w))
    assert "MOODY.backward(" in _pair(moody_net, [0, 1], (x, w)).backward_source
    MOODY.broken = broken
    try:
        with pytest.raises(AutodiffError, match="d_w|gradient"):
            both(x, w)  # the guard fires; the general pair's checked call reports it
    finally:
        MOODY.broken = None
    assert _pair(moody_net, [0, 1], (x, w)) is None  # the general pair serves the key now
    _right(moody_net, (x, w), [0, 1], both(x, w)[1])


class Checked(Moody):
    """Overrides the protocol (counts its calls): it keeps being called through it."""

    def __init__(self):
        super().__init__()
        self.protocol_calls = 0

    def op_forward(self, *inputs):
        self.protocol_calls += 1
        return super().op_forward(*inputs)


CHECKED = Checked()


def checked_net(x, w):
    return np.sum(np.tanh(CHECKED(x, w)) * w)


def test_an_op_that_overrides_the_protocol_keeps_it():
    x, w = np.random.default_rng(3).normal(size=(4, 3)), np.full((1, 3), 0.5)
    _calls(checked_net, [0, 1], (x, w))
    assert CHECKED.protocol_calls >= 3
    pair = _pair(checked_net, [0, 1], (x, w))
    assert pair is not None and "CHECKED.op_forward(" in pair.forward_source


class Square(DifferentiableFunction):
    """One input: its backward may hand its gradient back bare."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x * x

    def backward(self, d_y, compute_gradients, x):
        return 2 * x * d_y


SQUARE = Square()


def square_net(x):
    return np.sum(np.cos(SQUARE(x)))


def test_a_one_input_op_keeps_the_protocol_and_stays_right():
    x = np.random.default_rng(4).normal(size=5)
    _calls(square_net, [0], (x,))
    assert "SQUARE.op_forward(" in _pair(square_net, [0], (x,)).forward_source


def rebound_after(x, alpha):
    y = PRELU(x, alpha)  # the op saves x: the name is bound again below
    x = x * 3.0
    y = y * x
    return np.sum(y * y)


def test_an_input_rebound_after_the_call_reaches_the_backward_as_it_was():
    rng = np.random.default_rng(5)
    x, alpha = rng.normal(size=(4, 3)), np.full((1, 3), 0.2)
    _calls(rebound_after, [0, 1], (x, alpha))


class TwoOut(DifferentiableFunction):
    """Two outputs ``e = exp(x w)`` and ``f = e x``, inputs and outputs saved, and one
    memory value (``x w``)."""

    def __init__(self):
        super().__init__(
            num_outputs=2,
            save_inputs_for_backward=True,
            save_outputs_for_backward=True,
            num_memory_values=1,
        )

    def forward(self, x, w):
        xw = x * w
        e = np.exp(xw)
        return e, e * x, xw

    def backward(self, d_e, d_f, compute_gradients, x, w, e, f, xw):
        # de/dx = w e, df/dx = e + w f; de/dw = f, df/dw = x f
        d_x = d_e * w * e + d_f * (e + w * f)
        d_w = np.sum(d_e * f + d_f * x * f, axis=0, keepdims=True)
        return d_x, d_w + 0 * np.sum(xw, axis=0, keepdims=True)


TWO = TwoOut()


def two_out_net(x, w):
    e, f = TWO(x, w)
    return np.sum(e * f) + np.sum(f)


def test_an_op_with_two_saved_outputs_and_a_memory_value():
    rng = np.random.default_rng(6)
    x, w = rng.uniform(0.5, 1.5, size=(3, 2)), rng.uniform(0.2, 0.8, size=(1, 2))
    _calls(two_out_net, [0, 1], (x, w))
    pair = _pair(two_out_net, [0, 1], (x, w))
    assert "TWO.forward(x, w)" in pair.forward_source
    assert "TWO.backward(" in pair.backward_source


class Shared(DifferentiableFunction):
    """``x * (a + b)`` whose backward hands back a view (``d_x``) and one array for two
    gradients (``d_a`` is ``d_b``): right numbers, not arrays of their own."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x, a, b):
        return x * (a + b)

    def backward(self, d_y, compute_gradients, x, a, b):
        d_ab = np.sum(d_y * x, axis=0, keepdims=True)
        return (d_y * (a + b)).T.T, d_ab, d_ab


SHARED = Shared()


def shared_net(x, a, b):
    return np.sum(np.sin(SHARED(x, a, b)))


def test_gradients_an_op_hands_back_are_copied_where_they_are_not_the_callers_own():
    rng = np.random.default_rng(7)
    args = (rng.normal(size=(4, 3)), rng.normal(size=(1, 3)), rng.normal(size=(1, 3)))
    both = _calls(shared_net, [0, 1, 2], args)
    pair = _pair(shared_net, [0, 1, 2], args)
    assert "SHARED.backward(" in pair.backward_source
    assert pair.unsure == (0, 1, 2)  # the op's: checked at each call
    for _ in range(2):
        d_x, d_a, d_b = both(*args)[1]
        for g in (d_x, d_a, d_b):
            assert g.flags.writeable and not any(np.shares_memory(g, a) for a in args)
        assert not np.shares_memory(d_a, d_b)
        d_a[...] = 0.0  # the caller's own: the other gradient keeps its values
        _right(shared_net, args, [2], [d_b])


def test_srelu_and_prelu_keep_their_promise_of_new_gradient_arrays():
    # returns_new_arrays: the fast path hands their gradients over unchecked
    rng = np.random.default_rng(8)
    X, dY = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    params = [np.full((1, 4), v) for v in (-0.4, 0.2, 0.5, 1.5)]
    for op, inputs in ((SRELU, (X, *params)), (PRELU, (X, params[1]))):
        assert op.returns_new_arrays
        for flags in np.ndindex(*(2,) * len(inputs)):
            wanted = tuple(bool(f) for f in flags)
            _, saved = op.op_forward(*inputs)
            seen = [X, dY, *inputs, *saved.memory]
            for g in op.op_backward((dY,), wanted, saved):
                if g is None:
                    continue
                assert type(g) is np.ndarray and g.base is None and g.flags.writeable
                assert not any(np.shares_memory(g, other) for other in seen)
                seen.append(g)
    args = _srelu_args(rng)
    _calls(srelu_mse, [0, 1, 2, 3, 4, 5], args)
    assert _pair(srelu_mse, [0, 1, 2, 3, 4, 5], args).unsure == ()


class LeakySReLU(SReLUFunction):
    """Overrides SReLU's backward so that its ``d_al`` is a view: SReLU's promise of new
    arrays is not inherited, so the fast call checks (and copies) again."""

    def backward(self, *args):
        d_x, d_tl, d_al, d_tr, d_ar = super().backward(*args)
        return d_x, d_tl, d_al.T.T, d_tr, d_ar


LEAKY = LeakySReLU("BC")


def leaky_mse(W, b, tl, al, tr, ar, X, Y):
    r = LEAKY(X @ W + b, tl, al, tr, ar) - Y
    return np.sum(r * r)


def test_a_subclass_that_overrides_backward_does_not_inherit_the_promise():
    args = _srelu_args(np.random.default_rng(9))
    _calls(leaky_mse, [0, 1, 2, 3, 4, 5], args)
    assert _pair(leaky_mse, [0, 1, 2, 3, 4, 5], args).unsure == (2, 3, 4, 5)
