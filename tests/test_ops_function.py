"""DifferentiableFunction: the seeds' calling convention, what is kept, what is validated."""

from __future__ import annotations

import gc
import weakref

import array_api_strict as xps
import numpy as np
import pytest
from wrapped_text import wrapped

from autodiff_tutor.errors import ArgumentError, BackwardOutputError, ForwardOutputError
from autodiff_tutor.ops import DifferentiableFunction, is_differentiable_op, op_vjp
from autodiff_tutor.protocol import DifferentiableOp


class Recorder(DifferentiableFunction):
    """Two inputs, two outputs, everything saved, two memory values: records what backward got."""

    def __init__(self):
        super().__init__(
            num_outputs=2,
            save_inputs_for_backward=True,
            save_outputs_for_backward=True,
            num_memory_values=2,
        )
        self.seen = None

    def forward(self, a, b):
        return a * b, a + b, "memory-1", a - b

    def backward(self, d_prod, d_sum, compute_gradients, a, b, prod, total, m1, m2):
        self.seen = dict(
            d_prod=d_prod, d_sum=d_sum, flags=compute_gradients, a=a, b=b,
            prod=prod, total=total, m1=m1, m2=m2,
        )  # fmt: skip
        d_a = d_prod * b + d_sum if compute_gradients[0] else None
        d_b = d_prod * a + d_sum if compute_gradients[1] else None
        return d_a, d_b


def test_backward_receives_the_seeds_positional_order():
    op = Recorder()
    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    (prod, total), saved = op.op_forward(a, b)
    d_prod, d_sum = np.array([1.0, 10.0]), np.array([100.0, 1000.0])
    d_a, d_b = op.op_backward((d_prod, d_sum), (True, True), saved)
    seen = op.seen  # read-only views of what was given and saved
    assert seen["d_prod"].base is d_prod and seen["d_sum"].base is d_sum
    assert seen["flags"] == (True, True)
    assert seen["a"].base is a and seen["b"].base is b
    assert seen["prod"].base is prod and seen["total"].base is total
    assert not any(seen[n].flags.writeable for n in ("d_prod", "d_sum", "a", "b", "prod", "total"))
    assert seen["m1"] == "memory-1"
    np.testing.assert_array_equal(seen["m2"], a - b)
    # d/da (sum(d_prod * a * b) + sum(d_sum * (a + b))) = d_prod * b + d_sum
    np.testing.assert_array_equal(d_a, [103.0, 1050.0])
    np.testing.assert_array_equal(d_b, [101.0, 1020.0])


def test_calling_returns_outputs_only():
    op = Recorder()
    result = op(np.array([2.0]), np.array([3.0]))
    assert isinstance(result, tuple) and len(result) == 2
    np.testing.assert_array_equal(result[0], [6.0])
    np.testing.assert_array_equal(result[1], [5.0])


class Square(DifferentiableFunction):
    """One input; saves nothing but one memory value (2x)."""

    def __init__(self):
        super().__init__(num_memory_values=1)

    def forward(self, x):
        return x * x, 2 * x

    def backward(self, d_y, compute_gradients, two_x):
        return d_y * two_x


def test_only_declared_values_are_kept():
    op = Square()
    x = np.array([1.0, 2.0, 3.0])
    ref = weakref.ref(x)
    (y,), saved = op.op_forward(x)
    assert saved.inputs == () and saved.outputs == ()
    assert len(saved.memory) == 1
    del x
    gc.collect()
    assert ref() is None, "the input must not be kept alive when it is not declared"
    (d_x,) = op.op_backward((np.ones(3),), (True,), saved)
    np.testing.assert_array_equal(d_x, [2.0, 4.0, 6.0])


def test_single_input_backward_may_return_a_bare_value():
    _, (d_x,) = op_vjp(Square(), (np.array([3.0]),))
    np.testing.assert_array_equal(d_x, [6.0])


def test_implements_the_shared_protocol():
    op = Square()
    assert is_differentiable_op(op)
    assert isinstance(op, DifferentiableOp)
    assert op.name == "Square" and op.num_outputs == 1
    source = op.source()
    assert "def forward(self, x):" in source and "def backward(self, d_y" in source


def test_forward_returning_the_wrong_count_is_a_clear_error():
    class TooMany(DifferentiableFunction):
        def forward(self, x):
            return x, x

    with pytest.raises(ForwardOutputError, match=wrapped(r"returned 2 values.*num_outputs=1")):
        TooMany()(np.ones(2))

    class TooFew(DifferentiableFunction):
        def __init__(self):
            super().__init__(num_outputs=2, num_memory_values=1)

        def forward(self, x):
            return x, x

    with pytest.raises(ForwardOutputError, match=wrapped(r"returned 2 value\(s\).*must return 3")):
        TooFew()(np.ones(2))


class Scale(DifferentiableFunction):
    """y = a * X with a per-column a; ``bug`` picks a broken backward."""

    def __init__(self, bug=None):
        super().__init__(save_inputs_for_backward=True, name="scale")
        self.bug = bug

    def forward(self, X, a):
        return a * X

    def backward(self, d_y, compute_gradients, X, a):
        d_X = d_y * a if compute_gradients[0] else None
        d_a = np.sum(d_y * X, axis=0, keepdims=True) if compute_gradients[1] else None
        if self.bug == "not summed":
            d_a = d_y * X
        elif self.bug == "float64":
            d_X = d_X.astype(np.float64)
        elif self.bug == "count":
            return (d_X,)
        elif self.bug == "none":
            d_a = None
        elif self.bug == "always":
            d_a = np.sum(d_y * X, axis=0, keepdims=True)
        elif self.bug == "python float":
            d_a = 1.0
        return d_X, d_a


def run_scale(bug, dtype=np.float64, flags=(True, True)):
    X = np.arange(6.0, dtype=dtype).reshape(3, 2)
    a = np.array([[2.0, 3.0]], dtype=dtype)
    return op_vjp(Scale(bug), (X, a), compute_gradients=flags)


def test_a_correct_backward_passes_validation():
    _, (d_X, d_a) = run_scale(None)
    np.testing.assert_array_equal(d_X, np.broadcast_to([[2.0, 3.0]], (3, 2)))
    np.testing.assert_array_equal(d_a, [[0.0 + 2 + 4, 1.0 + 3 + 5]])


def test_shape_mismatch_names_op_input_and_both_shapes():
    with pytest.raises(BackwardOutputError) as info:
        run_scale("not summed")
    message = str(info.value)
    assert "'scale'" in message
    assert "input 1 ('a')" in message
    assert "(3, 2)" in message and "(1, 2)" in message
    assert "sum over axes (0,)" in message  # the hint says which reduction is missing


def test_dtype_mismatch_is_an_error_not_a_silent_cast():
    with pytest.raises(
        BackwardOutputError, match=wrapped(r"input 0 \('X'\) has dtype float64.*float32")
    ):
        run_scale("float64", dtype=np.float32)


def test_wrong_count_is_an_error():
    with pytest.raises(
        BackwardOutputError, match=wrapped(r"returned 1 value\(s\) but the op has 2")
    ):
        run_scale("count")


def test_none_only_where_not_requested():
    with pytest.raises(
        BackwardOutputError, match=wrapped(r"is None, but compute_gradients\[1\] is True")
    ):
        run_scale("none")
    _, (d_X, d_a) = run_scale("none", flags=(True, False))
    assert d_a is None and d_X is not None


def test_a_gradient_nobody_asked_for_is_an_error():
    with pytest.raises(BackwardOutputError, match=wrapped(r"compute_gradients\[1\] is False")):
        run_scale("always", flags=(True, False))


def test_a_python_float_for_an_array_input_is_an_error():
    with pytest.raises(
        BackwardOutputError, match=wrapped(r"is a float, expected an array of shape")
    ):
        run_scale("python float")


def test_array_module_mismatch_is_an_error():
    class NumpyInside(DifferentiableFunction):
        def forward(self, x):
            return 2 * x

        def backward(self, d_y, compute_gradients):
            return np.full((2,), 2.0)  # numpy, although the input is not

    x = xps.asarray([1.0, 2.0])
    with pytest.raises(
        BackwardOutputError, match=wrapped(r"is an array of numpy.*array_api_strict")
    ):
        op_vjp(NumpyInside(), (x,), (xps.ones(2),))


def test_backward_with_the_wrong_signature_gets_a_clear_error():
    class Forgot(DifferentiableFunction):
        def __init__(self):
            super().__init__(save_inputs_for_backward=True)

        def forward(self, x):
            return x

        def backward(self, d_y, compute_gradients):  # x is saved, so it is passed too
            return d_y

    with pytest.raises(
        ArgumentError, match=wrapped(r"1 output gradient\(s\), then compute_gradients")
    ):
        op_vjp(Forgot(), (np.ones(2),))


def test_constructor_and_call_arguments_are_checked():
    with pytest.raises(ArgumentError, match=wrapped("num_outputs")):
        DifferentiableFunction(num_outputs=0)
    with pytest.raises(ArgumentError, match=wrapped("num_memory_values")):
        DifferentiableFunction(num_memory_values=-1)
    (y,), saved = Square().op_forward(np.ones(2))
    with pytest.raises(
        ArgumentError, match=wrapped(r"1 flag\(s\) for 1 input|2 flag\(s\) for 1 input")
    ):
        Square().op_backward((np.ones(2),), (True, True), saved)
    with pytest.raises(ArgumentError, match=wrapped(r"2 output gradient\(s\) for 1 output")):
        Square().op_backward((np.ones(2), np.ones(2)), (True,), saved)
    with pytest.raises(ArgumentError, match=wrapped("forward of 'Square' cannot take")):
        Square()(np.ones(2), np.ones(2))


def test_a_subclass_that_skips_super_init_gets_the_defaults():
    class Bare(DifferentiableFunction):
        def __init__(self):
            pass

        def forward(self, x):
            return 3 * x

        def backward(self, d_y, compute_gradients):
            return 3 * d_y

    _, (d_x,) = op_vjp(Bare(), (np.ones(2),))
    np.testing.assert_array_equal(d_x, [3.0, 3.0])


def test_backward_is_not_called_when_no_gradient_is_requested():
    class Exploding(Square):
        def backward(self, d_y, compute_gradients, two_x):
            raise AssertionError("backward ran although nothing was requested")

    (y,), saved = Exploding().op_forward(np.ones(2))
    assert Exploding().op_backward((np.ones(2),), (False,), saved) == (None,)


def test_checks_still_run_on_calls_after_a_correct_one():
    # ops remember what cannot change between calls (signatures, input descriptions):
    # a later call that goes wrong is still caught, with the same located message
    op = Scale()
    X, a = np.arange(6.0).reshape(3, 2), np.array([[2.0, 3.0]])
    for _ in range(2):
        op_vjp(op, (X, a))
    op.bug = "not summed"
    with pytest.raises(BackwardOutputError, match=wrapped(r"input 1 \('a'\) has shape \(3, 2\)")):
        op_vjp(op, (X, a))
    op.bug = "float64"  # the same shapes in float32: the description follows the dtype
    with pytest.raises(BackwardOutputError, match=wrapped(r"input 0 \('X'\) has dtype float64")):
        op_vjp(op, (X.astype(np.float32), a.astype(np.float32)))
    op.bug = None
    with pytest.raises(ArgumentError, match=wrapped("forward of 'scale' cannot take")):
        op.op_forward(X, a, a)  # a count that never bound is still refused


def test_flags_of_any_truthy_kind_are_read_as_bools():
    (y,), saved = Scale().op_forward(np.ones((3, 2)), np.ones((1, 2)))
    d_X, d_a = Scale().op_backward((np.ones((3, 2)),), [1, 0], saved)
    assert d_a is None and d_X.shape == (3, 2)
    d_X, d_a = Scale().op_backward((np.ones((3, 2)),), (True, False), saved)
    assert d_a is None and d_X.shape == (3, 2)


class BothGradientsOneWrong(DifferentiableFunction):
    """Computes both gradients whatever is requested; the one for w has the wrong shape."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x, w):
        return x * w

    def backward(self, d_y, compute_gradients, x, w):
        return d_y * w, np.sum(d_y * x)


def test_a_wrong_gradient_is_reported_before_an_unrequested_one():
    op = BothGradientsOneWrong()
    outputs, saved = op.op_forward(np.ones(2), np.ones(2))
    with pytest.raises(BackwardOutputError) as info:
        op.op_backward((np.ones(2),), (False, True), saved)
    first, second = info.value.message.splitlines()
    assert "gradient for input 1 ('w') has shape ()" in first
    assert "wasted work" in second
