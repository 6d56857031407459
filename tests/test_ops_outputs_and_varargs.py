"""Multi-output ops and ops with a variable number of inputs (the seeds' ``varargin``):
check_op validates them, and both AD modes use their backward, matching central
finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import DifferentiableFunction, array_module, check_op, differentiable, grad
from autodiff_tutor.errors import BackwardOutputError, ForwardOutputError, UnsupportedSyntaxError
from autodiff_tutor.ops import op_vjp
from autodiff_tutor.tracing import evaluate, gradient, last_tape, traced

rng = np.random.default_rng(10)


class Polar(DifferentiableFunction):
    """(x, y) -> (r, theta): two inputs, two outputs."""

    def __init__(self):
        super().__init__(
            num_outputs=2, save_inputs_for_backward=True, save_outputs_for_backward=True
        )

    def forward(self, x, y):
        xp = array_module(x)
        return xp.sqrt(x * x + y * y), xp.atan2(y, x)

    def backward(self, d_r, d_theta, compute_gradients, x, y, r, theta):
        dx = d_r * x / r - d_theta * y / (r * r) if compute_gradients[0] else None
        dy = d_r * y / r + d_theta * x / (r * r) if compute_gradients[1] else None
        return dx, dy


class Norm(DifferentiableFunction):
    """sqrt(x1**2 + ... + xn**2) for any number n of inputs."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True, save_outputs_for_backward=True)

    def forward(self, *xs):
        xp = array_module(*xs)
        return xp.sqrt(sum(x * x for x in xs))

    def backward(self, d_y, compute_gradients, *saved):
        *xs, y = saved  # the inputs, then the output
        return tuple(
            d_y * x / y if flag else None for x, flag in zip(xs, compute_gradients, strict=True)
        )


polar, norm = Polar(), Norm()


def test_check_op_passes_a_two_output_op():
    report = check_op(polar, rng.standard_normal((5, 2)), rng.standard_normal((5, 2)))
    assert report.passed
    assert report["finite differences"].status == "passed"


@pytest.mark.parametrize("count", [1, 2, 4])
def test_check_op_passes_a_variable_argument_op(count):
    inputs = [rng.standard_normal((3, 2)) for _ in range(count)]
    report = check_op(norm, *inputs)
    assert report.passed
    assert report["compute_gradients"].status == "passed"


def test_check_op_catches_a_variable_argument_backward_that_drops_an_input():
    class Dropping(Norm):
        def backward(self, d_y, compute_gradients, *saved):
            *xs, y = saved
            return tuple(d_y * x / y for x in xs[:-1])  # one gradient short

    report = check_op(Dropping(), *(rng.standard_normal((3, 2)) for _ in range(3)))
    assert not report.passed


def model(a, b, c):
    r, theta = polar(a, b)
    return np.sum(r * theta + norm(a, b, c))


def model_plain(a, b, c):
    return np.sum(np.hypot(a, b) * np.arctan2(b, a) + np.sqrt(a * a + b * b + c * c))


def test_both_modes_use_the_backward_and_agree_with_finite_differences():
    args = [rng.standard_normal(3) + 2.0 for _ in range(3)]
    expected = [central_difference(model_plain, args, i) for i in range(3)]

    def traced_model(a, b, c):
        return gradient(model(a, b, c), a, b, c)

    from_tracing = evaluate(traced_model, *(traced(x) for x in args))
    assert [r.op for r in last_tape().records] == ["Polar", "multiply", "Norm", "add", "sum"]
    from_compiler = grad(differentiable(model), wrt=["a", "b", "c"])(*args)
    for got_t, got_c, want in zip(from_tracing, from_compiler, expected, strict=True):
        np.testing.assert_allclose(got_t, want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(got_c, want, rtol=1e-6, atol=1e-8)


def radius_read_by_index(x, y):
    return np.sum(polar(x, y)[0])


def both_outputs_kept_whole(x, y):
    outputs = polar(x, y)
    return np.sum(outputs[0] * outputs[1])


@pytest.mark.parametrize("fn", [radius_read_by_index, both_outputs_kept_whole])
def test_a_two_output_op_not_unpacked_at_its_call_is_refused_with_the_form_that_works(fn):
    """The compiler takes an op's outputs where the call unpacks them: a result read
    by index or kept whole is refused at the call (not an internal error), with a hint
    whose form compiles and agrees with central differences."""
    x, y = rng.standard_normal(3) + 2.0, rng.standard_normal(3)
    with pytest.raises(UnsupportedSyntaxError, match="polar has 2 outputs") as refused:
        grad(fn)(x, y)
    assert refused.value.location.filename == __file__
    assert "y1, y2 = polar(x, y)" in refused.value.hint

    def unpacked(x, y):
        y1, y2 = polar(x, y)
        return np.sum(y1 * y2)

    np.testing.assert_allclose(
        grad(unpacked)(x, y), central_difference(both_outputs_kept_whole, [x, y], 0), rtol=1e-6
    )


class CubeWrittenInPlace(DifferentiableFunction):
    """A backward that scales its incoming gradient in place."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x**3

    def backward(self, d_y, compute_gradients, x):
        d_y *= 3 * x * x
        return d_y


cube_in_place = CubeWrittenInPlace()


def cube_beside_its_input(x):
    return np.sum((cube_in_place(x) + x) * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("mode", ["compiler", "tracing", "check_op"])
def test_a_backward_that_writes_into_what_it_is_given_is_refused(mode):
    """The gradient a backward is given is shared with other gradients (here ``x``'s
    own): writing into it in place would change them silently. Every mode refuses
    it, saying so, and leaves the caller's input as it was."""
    x = np.array([0.5, -1.0, 2.0])
    before = x.copy()
    if mode == "check_op":
        report = check_op(cube_in_place, x)
        assert not report.passed and "writes into an array it is given" in str(report)
    else:
        run = grad if mode == "compiler" else lambda f: lambda x: gradient_of(f, x)
        with pytest.raises(BackwardOutputError) as refused:
            run(cube_beside_its_input)(x)
        assert "writes into an array it is given" in refused.value.message
    np.testing.assert_array_equal(x, before)


def gradient_of(f, x):
    return evaluate(lambda x: gradient(f(x), x), traced(x))


def polar_by_keyword(x, y):
    radius, angle = polar(y=y, x=x)
    return np.sum(radius)


def test_an_op_called_with_keywords_is_refused_as_python_refuses_it():
    """An op is called with its inputs by position (``op(x, y)``): the call Python
    refuses (``TypeError``) is refused by the compiler too, not differentiated."""
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    with pytest.raises(TypeError):
        polar_by_keyword(x, y)
    with pytest.raises(UnsupportedSyntaxError) as refused:
        grad(polar_by_keyword)(x, y)
    assert "unexpected keyword argument" in refused.value.message


class ReturnsTwo(DifferentiableFunction):
    """Declares one output, returns two."""

    def forward(self, x):
        return x, x

    def backward(self, d_y, compute_gradients):
        return d_y


returns_two = ReturnsTwo()


def calls_returns_two(x):
    return np.sum(returns_two(x))


@pytest.mark.parametrize("mode", ["plain", "tracing", "compiler"])
def test_an_ops_error_is_located_at_its_call_in_every_mode(mode):
    x = np.array([0.3, -2.0])
    run = {
        "plain": calls_returns_two,
        "tracing": lambda x: evaluate(calls_returns_two, traced(x)),
        "compiler": grad(calls_returns_two),
    }[mode]
    with pytest.raises(ForwardOutputError) as refused:
        run(x)
    assert refused.value.location.filename == __file__
    assert "returns_two(x)" in refused.value.location.text


class MaskedInPlace(DifferentiableFunction):
    """Keeps its mask as a memory value, and scales it in place in the backward."""

    def __init__(self):
        super().__init__(num_memory_values=1)

    def forward(self, x):
        mask = (x > 0).astype(x.dtype)
        return x * mask, mask

    def backward(self, d_y, compute_gradients, mask):
        mask *= d_y
        return mask


class PassesThrough(DifferentiableFunction):
    def forward(self, x):
        return x * 1.0

    def backward(self, d_y, compute_gradients):
        return d_y


def test_a_memory_value_is_the_ops_own_and_a_gradient_returned_as_given_is_writable():
    """A backward may write into its own memory value (a fresh one each call); a
    gradient it returns unchanged comes back as the array given, writable."""
    x = np.array([0.5, -1.0, 2.0])

    masked = MaskedInPlace()

    def relu_sum(x):
        return np.sum(masked(x) * np.array([1.0, 2.0, 3.0]))

    np.testing.assert_allclose(grad(relu_sum)(x), [1.0, 0.0, 3.0])
    seed = np.ones(3)
    (gradient,) = op_vjp(PassesThrough(), (x,), (seed,))[1]
    assert gradient is seed and gradient.flags.writeable
