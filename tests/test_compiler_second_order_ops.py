"""Second derivatives through custom ops (``DifferentiableFunction``): an op of the
user's whose ``forward`` and ``backward`` the compiler reads is differentiated again
(its backward compiled), or gets its second derivative from another op its backward
calls; what the protocol checks (how many values ``forward`` returns, each gradient's
shape) is still checked; the rest is refused at the user's call. Checked against
central differences of the gradient and against autograd on the same formulas."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import DifferentiableFunction, grad, hvp, jvp
from autodiff_tutor.errors import (
    BackwardOutputError,
    ForwardOutputError,
    GradientEscapeError,
    NoDerivativeRuleError,
)


class Scale(DifferentiableFunction):
    """``x * a`` with its backward written in numpy (compiled when differentiated again)."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x, a):
        return x * a

    def backward(self, d_y, compute_gradients, x, a):
        d_x = d_y * a if compute_gradients[0] else None
        d_a = np.sum(d_y * x) if compute_gradients[1] else None
        return d_x, d_a


class SoftPlus(DifferentiableFunction):
    """``log(1 + exp(x))``, its output saved: the backward reads it."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return np.log1p(np.exp(x))

    def backward(self, d_y, compute_gradients, x):
        return d_y / (1.0 + np.exp(-x))


scale, softplus = Scale(), SoftPlus()


def uses_scale(x, a):
    return np.sum(scale(x, a) ** 3)


def uses_softplus(x):
    return np.sum(softplus(x) ** 2 * x)


def autograd_uses_scale(x, a):
    return anp.sum((x * a) ** 3)


def autograd_uses_softplus(x):
    return anp.sum(anp.log1p(anp.exp(x)) ** 2 * x)


X = np.array([0.3, -1.2, 0.7])
V = np.array([1.0, 0.5, -2.0])
A = np.float64(1.5)


def along_v_in_x(x, a):
    return np.sum(grad(uses_scale, wrt=0)(x, a) * V)


def in_a(x, a):
    return grad(uses_scale, wrt=1)(x, a)


def softplus_along_v(x):
    return np.sum(grad(uses_softplus)(x) * V)


def autograd_along_v_in_x(x, a):
    return anp.sum(autograd.grad(autograd_uses_scale, 0)(x, a) * V)


def autograd_in_a(x, a):
    return autograd.grad(autograd_uses_scale, 1)(x, a)


def autograd_softplus_along_v(x):
    return anp.sum(autograd.grad(autograd_uses_softplus)(x) * V)


@pytest.mark.parametrize(
    ("fn", "twin", "args", "index"),
    [
        (along_v_in_x, autograd_along_v_in_x, (X, A), 0),
        (along_v_in_x, autograd_along_v_in_x, (X, A), 1),
        (in_a, autograd_in_a, (X, A), 0),
        (in_a, autograd_in_a, (X, A), 1),
        (softplus_along_v, autograd_softplus_along_v, (X,), 0),
    ],
    ids=["scale-xx", "scale-xa", "scale-ax", "scale-aa", "softplus"],
)
def test_a_custom_op_of_yours_is_differentiated_again(fn, twin, args, index):
    """Reverse over reverse: the gradient of a function taking the gradient through the
    op, which compiles the op's backward; against central differences and autograd."""
    args = list(args)
    compiled = grad(fn, wrt=index)(*args)
    np.testing.assert_allclose(compiled, central_difference(fn, args, index), atol=1e-6)
    np.testing.assert_allclose(compiled, autograd.grad(twin, index)(*args), rtol=1e-10)


def test_hvp_through_a_custom_op_of_yours():
    """Forward over reverse: the tangent of the gradient, the op's backward compiled."""
    compiled = hvp(uses_softplus)(X, V)
    expected = autograd.hessian_vector_product(autograd_uses_softplus)(X, V)
    np.testing.assert_allclose(compiled, expected, rtol=1e-10)


def squared(v):
    return v * v


def scale_of_a_helper(x, a):
    """A custom op of yours next to a helper function of yours: the helper is inlined,
    the op's backward compiled (the helper kept both as operations, refused)."""
    return np.sum(scale(squared(x), a) ** 3)


def test_a_custom_op_of_yours_next_to_a_helper_is_differentiated_again():
    _, forward_over_reverse = jvp(grad(scale_of_a_helper), (X, A), (V, None))
    expected = autograd.hessian_vector_product(lambda x: anp.sum((x * x * A) ** 3))(X, V)
    np.testing.assert_allclose(forward_over_reverse, expected, rtol=1e-10)
    eps = 1e-6
    gradient = grad(scale_of_a_helper)
    differences = (gradient(X + eps * V, A) - gradient(X - eps * V, A)) / (2 * eps)
    np.testing.assert_allclose(forward_over_reverse, differences, rtol=1e-6)


class CubeDerivative(DifferentiableFunction):
    """``3 x**2 d_y``, with its own hand-written backward: the second derivative of x**3."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x, d_y):
        return 3.0 * x * x * d_y

    def backward(self, g, compute_gradients, x, d_y):
        d_x = 6.0 * x * d_y * g if compute_gradients[0] else None
        return d_x, (3.0 * x * x * g if compute_gradients[1] else None)


cube_derivative = CubeDerivative()


class Cube(DifferentiableFunction):
    """``x**3`` whose backward is another op: that op's backward is the second derivative."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x * x * x

    def backward(self, d_y, compute_gradients, x):
        return cube_derivative(x, d_y)


cube = Cube()


def uses_cube(x):
    return np.sum(cube(x))


def test_a_backward_calling_another_op_supplies_the_second_derivative():
    second = grad(lambda x: np.sum(grad(uses_cube)(x) * V))(X)
    np.testing.assert_allclose(second, 6.0 * X * V, rtol=1e-12)


def test_forward_mode_through_a_hand_written_backward_is_refused():
    """hvp is forward over reverse: the op in the backward has no jvp."""
    with pytest.raises(NoDerivativeRuleError, match="second derivatives through cube"):
        hvp(uses_cube)(X, V)


class Escapes(DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x * x

    def backward(self, d_y, compute_gradients, x):
        return np.asarray([2.0 * float(v) for v in x]) * d_y


escapes = Escapes()


def uses_escapes(x):
    return np.sum(escapes(x))


def test_a_backward_the_compiler_cannot_differentiate_is_refused_at_the_call():
    np.testing.assert_allclose(grad(uses_escapes)(X), 2 * X)  # first order: fine
    with pytest.raises(GradientEscapeError, match="second derivatives through escapes") as raised:
        hvp(uses_escapes)(X, V)
    assert raised.value.location.text.strip() == "return np.sum(escapes(x))"


class TooMany(DifferentiableFunction):
    def forward(self, x):
        return x * x, x  # declares one output and no memory values

    def backward(self, d_y, compute_gradients):
        return d_y


class WrongShape(DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x * x

    def backward(self, d_y, compute_gradients, x):
        return np.sum(2.0 * x * d_y)  # a scalar, not shaped like x


too_many, wrong_shape = TooMany(), WrongShape()


def uses_too_many(x):
    return np.sum(too_many(x))


def uses_wrong_shape(x):
    return np.sum(wrong_shape(x))


@pytest.mark.parametrize(
    ("fn", "error"),
    [(uses_too_many, ForwardOutputError), (uses_wrong_shape, BackwardOutputError)],
)
def test_what_the_protocol_checks_is_checked_when_differentiated_again(fn, error):
    """Called directly, forward's count and backward's shapes are still checked: the
    second derivative raises as the first does, never returns a number."""
    with pytest.raises(error):
        grad(fn)(X)
    with pytest.raises(error):
        jvp(grad(fn), (X,), (V,))
