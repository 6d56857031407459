"""Formatted arrays: labels sorted like MATLAB's, carried through elementwise
ops, reductions and permutes, in plain and traced arrays; SReLU and PReLU take and
return them; mismatched formats are located errors; gradients through them agree with
central finite differences."""

from __future__ import annotations

import copy

import array_api_strict as xps
import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor.errors import DataFormatError
from autodiff_tutor.ops import (
    FormattedArray,
    PReLUFunction,
    dims,
    find_dims,
    formatted,
    is_formatted,
    prelu,
    prelu_reference,
    srelu,
    srelu_reference,
    strip_dims,
)
from autodiff_tutor.tracing import (
    evaluate,
    extract_data,
    gradient,
    is_traced,
    last_tape,
    stop_gradient,
    traced,
)

rng = np.random.default_rng(16)


def located_here(error: DataFormatError, text: str) -> bool:
    """The error points at this file, at the line that contains ``text``."""
    assert error.location is not None
    assert error.location.filename == __file__
    assert text in error.location.text
    return True


# --- making formatted arrays --------------------------------------------------------


def test_labels_are_sorted_into_matlab_order_and_the_data_follows():
    data = rng.standard_normal((5, 2, 3))  # batch, time, channel
    x = formatted(data, "BTC")
    assert dims(x) == "CBT"
    assert x.shape == (3, 5, 2)
    np.testing.assert_array_equal(strip_dims(x), np.transpose(data, (2, 0, 1)))
    # MATLAB's own example: dlarray(randn(3, 4), 'TS') has dims 'ST'
    assert dims(formatted(np.ones((3, 4)), "TS")) == "ST"
    assert formatted(np.ones((3, 4)), "TS").shape == (4, 3)


def test_an_already_sorted_format_keeps_the_data_as_it_is():
    data = np.ones((4, 4, 3, 2))
    x = formatted(data, "SSCB")
    assert strip_dims(x) is data
    assert find_dims(x, "S") == (0, 1) and find_dims(x, "C") == (2,)
    assert find_dims(np.ones(2), "C") == () and dims(np.ones(2)) == ""


@pytest.mark.parametrize(
    ("fmt", "shape", "match"),
    [("SCC", (2, 3, 4), "2 'C'"), ("SCB", (2, 3), "labels 3 axes"), ("XB", (2, 3), "unknown")],
)
def test_bad_formats_are_located_errors(fmt, shape, match):
    with pytest.raises(DataFormatError, match=match) as info:
        formatted(np.ones(shape), fmt)
    assert located_here(info.value, "formatted(np.ones(shape), fmt)")


def test_relabelling_a_formatted_array_is_refused():
    x = formatted(np.ones((2, 3)), "CB")
    assert formatted(x, "BC") is x  # the same labels: nothing to do
    with pytest.raises(DataFormatError, match="already formatted 'CB'") as info:
        formatted(x, "SB")
    assert "strip_dims" in info.value.hint


# --- labels through operations ------------------------------------------------------


def test_elementwise_operations_keep_the_labels():
    x = formatted(rng.standard_normal((4, 3, 2)), "SCB")
    alpha = np.full((1, 3, 1), 0.25)  # channel-wise, unformatted: broadcasts
    results = [
        x * 2.0,
        1.0 - x,
        -x,
        abs(x),
        x * alpha,
        np.exp(x),
        np.maximum(x, 0.0),
        np.where(x > 0, x, alpha * x),
        np.clip(x, -1.0, 1.0),
        x > 0,
        x + x,
    ]
    for result in results:
        assert is_formatted(result) and dims(result) == "SCB" and result.shape == (4, 3, 2)
    np.testing.assert_allclose(strip_dims(results[7]), prelu_reference(strip_dims(x), alpha))


def test_reductions_drop_the_labels_of_the_reduced_axes():
    x = formatted(rng.standard_normal((4, 4, 3, 2)), "SSCB")
    assert dims(np.sum(x, axis=(0, 1))) == "CB"
    assert dims(x.mean(axis=-1)) == "SSC"
    assert dims(np.max(x, axis=2, keepdims=True)) == "SSCB"
    assert dims(x.sum(axis=(0, 1, 3), keepdims=False)) == "C"
    total = np.sum(x)
    assert not is_formatted(total) and total == pytest.approx(np.sum(strip_dims(x)))
    np.testing.assert_allclose(strip_dims(np.sum(x, axis=(0, 1))), strip_dims(x).sum(axis=(0, 1)))


def test_permutes_move_the_labels_with_their_axes():
    x = formatted(rng.standard_normal((4, 3, 2)), "SCB")
    assert dims(x.T) == "BCS" and x.T.shape == (2, 3, 4)
    assert dims(np.transpose(x, (2, 0, 1))) == "BSC"
    assert dims(x.transpose(1, 0, 2)) == "CSB"
    assert dims(np.swapaxes(x, 0, 2)) == "BCS"
    assert dims(np.moveaxis(x, 0, -1)) == "CBS"
    np.testing.assert_array_equal(strip_dims(np.moveaxis(x, 0, -1)), np.moveaxis(x.data, 0, -1))


def test_truth_and_numbers_come_from_the_data():
    one = formatted(np.array([[0.0]]), "CB")
    assert not bool(one > 0) and bool(one == 0)
    assert float(formatted(np.array(2.0), "")) == 2.0 and int(formatted(np.array(3.0), "")) == 3
    with pytest.raises(ValueError, match="ambiguous"):
        bool(formatted(np.ones((2, 1)), "CB"))  # as numpy says for several elements
    copied = copy.deepcopy(one)
    assert dims(copied) == "CB" and copied.data is not one.data


def test_other_operations_give_unformatted_results():
    x = formatted(rng.standard_normal((4, 3, 2)), "SCB")
    for result in (x.reshape(12, 2), x[0], np.concatenate([x, x]), x.data @ np.ones(2)):
        assert not is_formatted(result)


def test_mismatched_formats_are_a_located_error():
    a = formatted(np.ones((3, 2)), "CB")
    b = formatted(np.ones((3, 2)), "SB")
    with pytest.raises(DataFormatError, match="different data formats 'CB' and 'SB'") as info:
        a + b
    assert located_here(info.value, "a + b")
    with pytest.raises(DataFormatError, match="np.where"):
        np.where(a > 0, a, b)


def test_broadcasting_that_adds_axes_is_a_located_error():
    x = formatted(np.ones((3, 2)), "CB")
    with pytest.raises(DataFormatError, match="the result has 3 axes") as info:
        x * np.ones((4, 3, 2))
    assert located_here(info.value, "x * np.ones((4, 3, 2))")


# --- traced formatted arrays ------------------------------------------------------------


def test_traced_with_a_format_is_a_formatted_traced_array():
    x = traced(rng.standard_normal((2, 3)), "BC")
    assert dims(x) == "CB" and x.shape == (3, 2)
    assert is_traced(strip_dims(x))
    assert dims(traced(x)) == "CB"  # traced() of a formatted array keeps its labels


def test_labels_follow_a_traced_computation_and_the_gradient_is_formatted():
    data = rng.standard_normal((4, 3, 2))

    def loss(x, w):
        y = np.tanh(x * w)  # SCB
        pooled = np.sum(y, axis=0)  # CB
        assert dims(y) == "SCB" and dims(pooled) == "CB" and dims(pooled.T) == "BC"
        value = np.sum(pooled.T**2)
        return gradient(value, x, w)

    w = rng.standard_normal((1, 3, 1))
    d_x, d_w = evaluate(loss, traced(data, "SCB"), traced(w))
    assert dims(d_x) == "SCB" and not is_formatted(d_w)

    def plain(x, w):
        return np.sum(np.sum(np.tanh(x * w), axis=0) ** 2)

    np.testing.assert_allclose(strip_dims(d_x), central_difference(plain, [data, w], 0), atol=1e-6)
    np.testing.assert_allclose(d_w, central_difference(plain, [data, w], 1), atol=1e-6)


@pytest.mark.parametrize("order", ["formatted first", "traced first"])
def test_a_traced_parameter_meets_formatted_data_in_either_order(order):
    # the traced operand must never be unwrapped by the formatted one (a lost gradient)
    X = formatted(rng.standard_normal((3, 2)), "CB")

    def loss(w):
        y = X * w if order == "formatted first" else w * X
        z = np.multiply(X, w) if order == "formatted first" else np.multiply(w, X)
        assert dims(y) == "CB" and dims(z) == "CB"
        return gradient(np.sum(y) + np.sum(z), w)

    w = np.full((3, 1), 0.5)
    got = evaluate(loss, traced(w))
    np.testing.assert_allclose(got, 2 * strip_dims(X).sum(axis=1, keepdims=True))


def test_extract_data_gives_plain_data_and_stop_gradient_keeps_the_labels():
    def extracted(x):
        plain = extract_data(x)
        assert not is_formatted(plain) and not is_traced(plain)
        return plain

    def f(x):
        constant = stop_gradient(x)
        assert dims(constant) == "CB" and not is_traced(strip_dims(constant))
        return gradient(np.sum(x * constant), x)

    data = rng.standard_normal((2, 3))
    np.testing.assert_array_equal(evaluate(extracted, traced(data, "BC")), data.T)
    np.testing.assert_allclose(strip_dims(evaluate(f, traced(data, "BC"))), data.T)


# --- SReLU and PReLU take and return formatted arrays ---------------------------------


def srelu_parameters(channels: int, shape: tuple[int, ...]) -> list[np.ndarray]:
    values = (-0.4, 0.2, 0.5, 0.3)
    return [np.full(shape, v) + 0.05 * rng.standard_normal(shape) for v in values[:channels]]


def test_srelu_takes_the_format_from_formatted_data_and_returns_it():
    data = rng.standard_normal((5, 5, 3, 2))
    params = srelu_parameters(4, (1, 1, 3, 1))
    Y = srelu(formatted(data, "SSCB"), *params)  # no fmt=
    assert dims(Y) == "SSCB"
    np.testing.assert_array_equal(strip_dims(Y), srelu(data, *params, fmt="SSCB"))
    np.testing.assert_allclose(strip_dims(Y), srelu_reference(data, *params))


def test_prelu_sorts_like_matlab_and_labels_the_output():
    data = rng.standard_normal((6, 4))  # batch, channel
    X = formatted(data, "BC")  # held as CB
    alpha = np.full((4, 1), 0.1)
    Y = prelu(X, alpha)
    assert dims(Y) == "CB"
    np.testing.assert_allclose(strip_dims(Y), prelu_reference(data.T, alpha))


def test_the_op_object_strips_the_labels_as_in_the_seeds():
    X = formatted(rng.standard_normal((4, 2)), "CB")
    Y = PReLUFunction("CB")(X, np.full((4, 1), 0.2))
    assert isinstance(Y, np.ndarray) and not is_formatted(Y)


def test_interface_functions_refuse_conflicting_or_missing_formats():
    X = formatted(np.ones((3, 2)), "CB")
    alpha = np.full((3, 1), 0.1)
    with pytest.raises(DataFormatError, match="fmt='BC', but X is formatted 'CB'") as info:
        prelu(X, alpha, fmt="BC")
    assert located_here(info.value, 'prelu(X, alpha, fmt="BC")')
    with pytest.raises(DataFormatError, match="X is not formatted, so fmt= must say") as info:
        prelu(np.ones((3, 2)), alpha)
    assert located_here(info.value, "prelu(np.ones((3, 2)), alpha)")
    with pytest.raises(DataFormatError, match="different data formats 'CB' and 'SB'"):
        prelu(X, formatted(np.full((3, 1), 0.1), "SB"))


def test_gradients_through_formatted_srelu_match_finite_differences():
    data = rng.standard_normal((3, 3, 2, 2))
    data[data == 0] = 0.1
    params = srelu_parameters(4, (1, 1, 2, 1))
    weights = rng.standard_normal(data.shape)

    def loss(X, tl, al, tr, ar):
        Y = srelu(X, tl, al, tr, ar)
        assert dims(Y) == "SSCB"
        value = np.sum(Y * weights)
        return gradient(value, X, tl, al, tr, ar)

    grads = evaluate(loss, traced(data, "SSCB"), *(traced(p) for p in params))
    assert [r.op for r in last_tape().records] == ["srelu", "multiply", "sum"]
    assert dims(grads[0]) == "SSCB"

    def plain(X, tl, al, tr, ar):
        return np.sum(srelu_reference(X, tl, al, tr, ar) * weights)

    for i, got in enumerate(grads):
        expected = central_difference(plain, [data, *params], i)
        np.testing.assert_allclose(strip_dims(got), expected, atol=1e-6)


def test_gradients_through_formatted_prelu_match_finite_differences():
    data = rng.standard_normal((7, 3))  # batch, channel: held as CB
    alpha = np.full((3, 1), 0.3)

    def loss(X, alpha):
        value = np.sum(prelu(X, alpha) ** 2)
        return gradient(value, X, alpha)

    d_X, d_alpha = evaluate(loss, traced(data, "BC"), traced(alpha))
    assert dims(d_X) == "CB"

    def plain(X, alpha):
        return np.sum(prelu_reference(X, alpha) ** 2)

    np.testing.assert_allclose(strip_dims(d_X), central_difference(plain, [data.T, alpha], 0))
    np.testing.assert_allclose(d_alpha, central_difference(plain, [data.T, alpha], 1))


def test_formatted_arrays_of_a_strict_array_library():
    # only the array API: the labels, the permutation and the op use the data's module
    data = xps.asarray(rng.standard_normal((5, 3)))  # batch, channel
    X = formatted(data, "BC")
    assert dims(X) == "CB" and type(strip_dims(X)).__module__.startswith("array_api_strict")
    params = [xps.asarray(p) for p in srelu_parameters(4, (3, 1))]
    Y = srelu(X, *params)
    assert isinstance(Y, FormattedArray) and dims(Y) == "CB"
    assert type(strip_dims(Y)).__module__.startswith("array_api_strict")
    expected = srelu_reference(np.asarray(data).T, *(np.asarray(p) for p in params))
    np.testing.assert_allclose(np.asarray(strip_dims(Y)), expected)


def test_compiled_code_needs_the_format_of_plain_arrays_at_the_call():
    from autodiff_tutor import differentiable
    from autodiff_tutor.errors import UnsupportedSyntaxError

    def penalty(X, alpha):
        return np.sum(prelu(X, alpha))  # no fmt: plain arrays in compiled code

    with pytest.raises(UnsupportedSyntaxError, match="prelu needs fmt= here") as info:
        differentiable(penalty).derivative(("alpha",))
    assert info.value.location.filename == __file__
    assert "prelu(X, alpha)" in info.value.location.text


def test_a_compiled_function_is_one_op_on_formatted_traced_data():
    from autodiff_tutor import differentiable

    @differentiable
    def cube(x):
        return x * x * x

    data = np.array([[1.0, -2.0]])
    d_x = evaluate(lambda x: gradient(np.sum(cube(x)), x), traced(data, "CB"))
    assert [r.op for r in last_tape().records] == ["cube", "sum"]
    assert dims(d_x) == "CB"
    np.testing.assert_allclose(strip_dims(d_x), 3 * data**2)
