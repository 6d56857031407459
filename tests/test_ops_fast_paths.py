"""The fast paths of an op's call protocol check as much as the full checks they skip.

An op remembers what cannot change between calls with the same numpy signature (the
input descriptions, the checked format and its axes) and decides with a few attribute
comparisons that a correct numpy gradient breaks no rule. These tests make sure a wrong
gradient, a wrong parameter or another array library is still caught, with the full
message, on the first call and on a call after correct ones.
"""

from __future__ import annotations

import itertools

import array_api_strict as xps
import numpy as np
import pytest
from wrapped_text import wrapped

from autodiff_tutor import value_and_grad
from autodiff_tutor.errors import BackwardOutputError, DataFormatError
from autodiff_tutor.ops import (
    DifferentiableFunction,
    PReLUFunction,
    SReLUFunction,
    check_channel_parameters,
    op_vjp,
    reduce_to_channels,
)
from autodiff_tutor.ops.function import (
    describe_inputs,
    gradient_problems,
    numpy_gradients_fine,
    same_numpy_inputs,
)


class Scale(DifferentiableFunction):
    """y = a * X with a per-column a; ``bug`` breaks the backward on demand."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True, name="scale")
        self.bug = None

    def forward(self, X, a):
        return a * X

    def backward(self, d_y, compute_gradients, X, a):
        d_X = d_y * a if compute_gradients[0] else None
        d_a = reduce_to_channels(d_y * X, "BC") if compute_gradients[1] else None
        if self.bug == "float32":
            d_X = d_X.astype(np.float32)
        elif self.bug == "not summed":
            d_a = d_y * X
        elif self.bug == "list":
            return [d_X, d_a]
        elif self.bug == "unrequested":
            d_a = reduce_to_channels(d_y * X, "BC")
        elif self.bug == "missing":
            d_a = None
        elif self.bug == "view of a subclass":
            d_X = np.ma.masked_array(d_X)
        return d_X, d_a


X = np.arange(6.0).reshape(3, 2)
A = np.array([[2.0, 3.0]])

BUGS = {
    "float32": r"input 0 \('X'\) has dtype float32, but the input has dtype float64",
    "not summed": r"input 1 \('a'\) has shape \(3, 2\), but the input has shape \(1, 2\)",
    "unrequested": r"input 1 \('a'\) was computed although compute_gradients\[1\] is False",
    "missing": r"input 1 \('a'\) is None, but compute_gradients\[1\] is True",
}


@pytest.mark.parametrize("bug", sorted(BUGS))
@pytest.mark.parametrize("correct_calls_before", [0, 3])
def test_a_wrong_gradient_is_caught_on_the_first_and_on_a_later_call(bug, correct_calls_before):
    op = Scale()
    for _ in range(correct_calls_before):
        op_vjp(op, (X, A))  # the fast paths remember this signature
    op.bug = bug
    flags = (True, False) if bug == "unrequested" else (True, True)
    with pytest.raises(BackwardOutputError, match=wrapped(BUGS[bug])):
        op_vjp(op, (X, A), compute_gradients=flags)
    with pytest.raises(BackwardOutputError, match=wrapped(BUGS[bug])):
        op_vjp(op, (X, A), compute_gradients=flags)  # and again: nothing was cached


def test_a_list_or_an_ndarray_subclass_takes_the_full_check_and_passes_when_right():
    op = Scale()
    op.bug = "list"  # a list is allowed: the full check reads it
    _, (d_X, d_a) = op_vjp(op, (X, A))
    assert d_a.shape == (1, 2)
    op.bug = "view of a subclass"  # a masked array is an array of the input's shape and dtype
    _, (d_X, d_a) = op_vjp(op, (X, A))
    assert isinstance(d_X, np.ma.MaskedArray)


def test_a_wrong_gradient_in_a_compiled_function_is_caught_after_correct_calls():
    op = Scale()

    def loss(X, a):
        return np.sum(op(X, a) ** 2)

    both = value_and_grad(loss, wrt=[0, 1])
    for _ in range(3):
        value, (d_X, d_a) = both(X, A)
    np.testing.assert_allclose(d_a, np.sum(2 * (A * X) * X, axis=0, keepdims=True))
    op.bug = "float32"
    for _ in range(2):
        with pytest.raises(BackwardOutputError, match=wrapped(BUGS["float32"])):
            both(X, A)


def test_new_shapes_dtypes_or_libraries_get_new_input_descriptions():
    op = Scale()
    op_vjp(op, (X, A))
    op.bug = "not summed"
    X4, A4 = np.ones((4, 3)), np.ones((1, 3))  # another shape: named in the message
    with pytest.raises(
        BackwardOutputError, match=wrapped(r"\(4, 3\), but the input has shape \(1, 3\)")
    ):
        op_vjp(op, (X4, A4))
    op.bug = None
    (y,), saved = op.op_forward(X.astype(np.float32), A.astype(np.float32))
    assert [s.dtype for s in saved.specs] == [np.float32, np.float32]
    (y,), saved = op.op_forward(xps.asarray(X), xps.asarray(A))
    assert saved.specs[0].module is not np  # a strict array is described as one


class NumpyInsideBackward(DifferentiableFunction):
    """Returns numpy gradients for any input: wrong for a strict array input."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True, name="numpy inside")

    def forward(self, x):
        return 2 * x

    def backward(self, d_y, compute_gradients, x):
        return np.full(x.shape, 2.0)


def test_numpy_gradients_for_strict_inputs_are_caught_after_numpy_calls():
    op = NumpyInsideBackward()
    for _ in range(2):
        op_vjp(op, (np.ones(2),))  # right for numpy inputs
    with pytest.raises(
        BackwardOutputError, match=wrapped(r"is an array of numpy.*array_api_strict")
    ):
        op_vjp(op, (xps.ones(2),), (xps.ones(2),))


# --- the quick checks agree with the full ones ---------------------------------------------

SHAPES = [(), (2,), (3, 2), (1, 2)]
DTYPES = [np.float32, np.float64]


def _candidates(shape, dtype):
    """Gradients to try for an input of ``shape`` and ``dtype``: right and wrong ones."""
    return [
        None,
        np.ones(shape, dtype),
        np.ones(shape, np.float32 if dtype == np.float64 else np.float64),
        np.ones((*shape, 1)),
        np.ones((5,), dtype),
        np.float64(1.0),
        1.0,
        xps.ones(shape, dtype=getattr(xps, np.dtype(dtype).name)),
    ]


@pytest.mark.parametrize(("shape", "dtype"), list(itertools.product(SHAPES, DTYPES)))
def test_numpy_gradients_fine_never_passes_what_the_full_check_rejects(shape, dtype):
    specs = describe_inputs(("x", "w"), (np.ones(shape, dtype), np.ones((1, 2))))
    second = [None, np.ones((1, 2)), np.ones((2, 2))]
    checked = 0
    for grad, other, flags in itertools.product(
        _candidates(shape, dtype), second, itertools.product([True, False], repeat=2)
    ):
        result = (grad, other)
        full = gradient_problems("f", specs, flags, list(result))  # a list: the full path
        if numpy_gradients_fine(specs, flags, result):
            assert full == [], (shape, dtype, grad, other, flags)
            checked += 1
        assert (gradient_problems("f", specs, flags, result) == []) == (full == [])
    assert checked > 0  # the quick path was taken for the right gradients


def test_same_numpy_inputs_requires_the_exact_shape_dtype_and_library():
    specs = describe_inputs(("x",), (np.ones((2, 3)),))
    assert same_numpy_inputs(specs, (np.zeros((2, 3)),))
    assert not same_numpy_inputs(specs, (np.zeros((3, 2)),))
    assert not same_numpy_inputs(specs, (np.zeros((2, 3), np.float32),))
    assert not same_numpy_inputs(specs, (xps.zeros((2, 3)),))
    assert not same_numpy_inputs(specs, (np.zeros((2, 3)), np.zeros(1)))
    assert not same_numpy_inputs(specs, (np.float64(0.0),))


# --- channel-wise parameters and formats ---------------------------------------------------


@pytest.mark.parametrize("correct_calls_before", [0, 2])
def test_wrong_channel_parameters_are_refused_on_any_call(correct_calls_before):
    op = PReLUFunction("BC")
    data = np.ones((4, 3))
    for _ in range(correct_calls_before):
        op(data, np.full((1, 3), 0.25))
    with pytest.raises(DataFormatError, match=r"'alpha' has shape \(3,\)"):
        op(data, np.full(3, 0.25))
    with pytest.raises(
        DataFormatError, match=wrapped(r"'alpha' has dtype float32 but the data has float64")
    ):
        op(data, np.full((1, 3), 0.25, np.float32))
    with pytest.raises(DataFormatError, match=wrapped(r"'alpha' is a array_api_strict")):
        op(data, xps.full((1, 3), 0.25))
    with pytest.raises(DataFormatError, match=wrapped(r"labels 2 axes but the array has 3")):
        op(np.ones((4, 3, 1)), np.full((1, 3, 1), 0.25))


def test_check_channel_parameters_names_the_wrong_one():
    data = np.ones((5, 3))
    right = np.ones((1, 3))
    check_channel_parameters("BC", data, "srelu", tl=right, al=right, tr=right, ar=right)
    with pytest.raises(DataFormatError, match=wrapped(r"srelu: parameter 'tr' has shape \(3, 1\)")):
        check_channel_parameters("BC", data, "srelu", tl=right, al=right, tr=right.T, ar=right)


def test_reduce_to_channels_checks_the_format_on_every_call():
    x = np.arange(6.0).reshape(2, 3)
    for _ in range(2):
        np.testing.assert_array_equal(reduce_to_channels(x, "BC"), [[3.0, 5.0, 7.0]])
    with pytest.raises(DataFormatError, match=wrapped(r"labels 2 axes but the array has 3")):
        reduce_to_channels(np.ones((2, 3, 1)), "BC")
    with pytest.raises(DataFormatError, match=r"has 2 'C'"):
        reduce_to_channels(x, "CC")
    strict = reduce_to_channels(xps.asarray(x), "BC")  # the array's own module
    assert type(strict).__module__.startswith("array_api_strict")
    np.testing.assert_array_equal(np.asarray(strict), [[3.0, 5.0, 7.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_srelu_gradients_after_many_calls_match_the_first_call(dtype):
    rng = np.random.default_rng(3)
    op = SReLUFunction("BC")
    params = [np.full((1, 4), v, dtype) for v in (-0.5, 0.1, 0.5, 0.3)]
    X1 = rng.standard_normal((6, 4)).astype(dtype)
    _, first = op_vjp(op, (X1, *params))
    for _ in range(3):
        _, again = op_vjp(op, (X1, *params))
    for a, b in zip(first, again, strict=True):
        assert a.dtype == dtype
        np.testing.assert_array_equal(a, b)


def test_check_channel_parameters_refuses_after_a_remembered_pass():
    """A pass is remembered by (format, data shape): other dtypes, another format of
    the same shape and a format that is not a string still get the full check."""
    data, right = np.ones((5, 3)), np.ones((1, 3))
    for _ in range(2):
        check_channel_parameters("BC", data, "srelu", tl=right, al=right)
    with pytest.raises(DataFormatError, match=wrapped(r"'al' has dtype float32")):
        check_channel_parameters("BC", data, "srelu", tl=right, al=right.astype(np.float32))
    with pytest.raises(DataFormatError, match=wrapped(r"needs a channel-wise shape \(5, 1\)")):
        check_channel_parameters("CB", data, "srelu", tl=right, al=right)
    with pytest.raises(DataFormatError, match="must be a string"):
        check_channel_parameters(["B", "C"], data, "srelu", tl=right)
