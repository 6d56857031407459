"""Each tracing pitfall of the seeds is reproducible and ends in a clear, located
error or warning that says what happened, why it breaks the gradient, and what to do."""

import math
import pickle
import warnings

import numpy as np
import pytest
from oracles import central_difference
from wrapped_text import flat, wrapped

from autodiff_tutor.errors import (
    GradientEscapeError,
    NonDifferentiableInputError,
    NonScalarOutputError,
    TracingError,
    TracingEscapeError,
    TracingWarning,
)
from autodiff_tutor.tracing import (
    evaluate,
    extract_data,
    gradient,
    last_tape,
    stop_gradient,
    traced,
    value_and_gradient,
)


def raised(fn, *args, error=TracingError):
    """Run ``evaluate(fn, *args)`` and return the error it raises."""
    with pytest.raises(error) as info:
        evaluate(fn, *args)
    return info.value


def located_at(error, text):
    """The error points at the user's line (file, line and the source text)."""
    assert error.location is not None
    assert error.location.filename == __file__
    assert text in error.location.text
    return True


# --- a traced value made inside the evaluated function ---------------------------


def test_differentiating_with_respect_to_a_value_made_inside_is_an_error():
    def fun(x1):
        x2 = traced(0.0)
        y = x1 + x2
        return gradient(y, x2)

    error = raised(fun, traced(1.0))
    assert "gradient(y, x2): x2 is not on the trace" in error.message
    assert "made by traced() inside the function that evaluate() runs" in error.message
    assert "a constant has no gradient" in error.message
    assert "pass the value to evaluate() as an argument" in error.hint
    assert located_at(error, "gradient(y, x2)")


def test_an_untraced_portion_warns_but_the_gradient_is_right():
    def fun(x1):
        x2 = traced(0.0)
        y = x1 * 2 + x2
        return gradient(y, x1)

    with pytest.warns(
        TracingWarning, match=wrapped("also depends on a traced value that the trace")
    ) as w:
        g = evaluate(fun, traced(1.0))
    assert g == 2.0
    assert w[0].filename == __file__
    assert "use a plain array instead of traced()" in flat(str(w[0].message))


def test_a_traced_value_captured_from_outside_is_not_on_the_trace():
    w = traced([1.0, 2.0])

    def loss(x):
        return gradient(np.sum(w * x), w)

    error = raised(loss, traced([3.0, 4.0]))
    assert "w is not on the trace" in error.message
    assert "made outside evaluate()" in error.message
    assert "not passed to it as an argument" in error.message
    assert "evaluate(f, ..., w)" in error.hint


# --- extract_data and continuing ------------------------------------------------------


def test_extracting_and_continuing_warns_about_the_missing_contribution():
    def fun(x):
        y = x + extract_data(x) ** 2
        return gradient(y, x)

    with pytest.warns(
        TracingWarning, match=wrapped(r"extract_data\(\) at .* took out the data")
    ) as w:
        g = evaluate(fun, traced(2.5))
    assert g == 1.0  # the seeds' behaviour: only the leading x term counts
    message = str(w[0].message)
    assert "leaves out its contribution" in message
    assert "stop_gradient" in message
    assert w[0].filename == __file__


def test_stop_gradient_says_it_on_purpose_and_does_not_warn():
    def fun(x):
        y = x + stop_gradient(x) ** 2
        return gradient(y, x)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert evaluate(fun, traced(2.5)) == 1.0


def test_reading_a_value_after_it_is_computed_does_not_warn():
    def fun(x):
        y = np.sum(x * x)
        logged = extract_data(y)  # logging the loss: nothing is computed from it
        return logged, gradient(y, x)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        logged, g = evaluate(fun, traced([1.0, 2.0]))
    assert logged == 5.0 and g.tolist() == [2.0, 4.0]


def test_reading_a_value_midway_then_computing_with_traced_values_does_not_warn():
    def fun(x):
        h = x * x
        print(extract_data(h).sum())  # a look at an intermediate value
        return gradient(np.sum(h * 3.0), x)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert evaluate(fun, traced([1.0, 2.0])).tolist() == [6.0, 12.0]


def test_an_output_computed_only_from_extracted_data_is_an_error():
    def fun(x):
        y = extract_data(x) ** 2
        return gradient(y, x)

    error = raised(fun, traced(2.5))
    assert "y is a plain float64, not a traced value" in error.message
    assert "extract_data() at" in error.message
    assert "without extract_data()" in error.hint
    assert located_at(error, "gradient(y, x)")


def test_a_path_cut_by_extract_data_is_an_error_not_a_silent_zero():
    def fun(x, w):
        y = np.sum(w * extract_data(x))
        return gradient(y, x)

    error = raised(fun, traced([1.0, 2.0]), traced([3.0, 4.0]))
    assert "y does not depend on x through the trace" in error.message
    assert "the gradient would silently be zero" in error.message
    assert "extract_data(x) ** 2" in error.hint


def test_a_new_variable_from_extracted_data_gets_its_own_gradient():
    # the seeds: extractdata can introduce a new independent variable from a
    # dependent one; here z = x**2 becomes a variable of its own, in the same trace
    def fun(x):
        y = x * x
        z = traced(extract_data(y))
        w = np.sum(np.sin(z) * z) + np.sum(x)
        return gradient(w, z, x)

    x = np.array([0.5, -1.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a started variable is no unintended cut
        d_z, d_x = evaluate(fun, traced(x))
    z = x * x
    assert np.allclose(d_z, central_difference(lambda z: np.sum(np.sin(z) * z), [z], 0))
    assert np.allclose(d_z, np.cos(z) * z + np.sin(z))
    assert np.allclose(d_x, np.ones(2))  # w reaches x only through np.sum(x)


def test_a_new_variable_from_extracted_data_is_labelled_on_the_tape():
    def fun(x):
        z = traced(extract_data(x * 2))
        return gradient(z * z, z)

    assert evaluate(fun, traced(1.5)) == 6.0
    inputs = [row for row in last_tape().rows() if row["op"] == "input"]
    assert [row["outputs"] for row in inputs] == [["x"], ["extract_data(v1)"]]
    assert inputs[0]["where"] == "argument"
    assert inputs[1]["where"].startswith("test_tracing_pitfalls.py:")


def test_retracing_extracted_data_does_not_carry_the_gradient_of_x():
    def fun(x):
        z = traced(extract_data(x * 2)) * 3
        return gradient(z, x)

    error = raised(fun, traced(1.0))
    assert "z does not depend on x through the trace" in error.message
    assert "traced() started a new variable from that data" in error.message
    assert located_at(error, "gradient(z, x)")


def test_only_extracted_data_starts_a_new_variable():
    def fun(x):
        z = traced(extract_data(x) + 1.0)  # computed from extracted data: not the data
        return gradient(z * z, z)

    error = raised(fun, traced(1.0))
    assert "made by traced() inside" in error.message
    assert "traced(extract_data(value))" in error.hint


# --- gradient outside evaluate, and traces that ended --------------------------------


def test_gradient_outside_evaluate_is_an_error():
    x = traced(2.0)
    with pytest.raises(TracingError) as info:
        gradient(x * x, x)
    assert "gradient() was called outside evaluate()" in info.value.message
    assert "return y, gradient(y, x)" in info.value.hint
    assert located_at(info.value, "gradient(x * x, x)")


def test_gradient_of_an_output_after_evaluate_returned_is_an_error():
    y = evaluate(lambda x: np.sum(x * x), traced([1.0]))
    with pytest.raises(TracingError) as info:
        gradient(y, y)
    assert "already returned" in info.value.message


def test_a_value_from_an_ended_trace_used_in_a_new_evaluation():
    y = evaluate(lambda x: x * 2, traced(1.0))

    def again(x):
        return gradient(y * x, y)

    error = raised(again, traced(3.0))
    assert "y belongs to trace" in error.message
    assert "which ended when that evaluate() call returned" in error.message
    assert "traced(extract_data(value))" in error.hint


def test_a_pickled_traced_value_loses_its_trace():
    shipped = pickle.loads(pickle.dumps(traced([1.0, 2.0])))

    def fun(x):
        return gradient(np.sum(x * shipped), shipped)

    error = raised(fun, traced([1.0, 1.0]))
    assert "pickled (sent to another process" in error.message
    assert "send the gradients" in error.hint


# --- conversions that would drop the trace -------------------------------------------


class Outside:
    """Methods: code that tracing does not reach (numpy and math there are their own)."""

    def asarray(self, x):
        return np.asarray(x)

    def array_of_list(self, x):
        return np.array([x, x])

    def exp(self, x):
        return math.exp(x)


@pytest.mark.parametrize(
    ("convert", "twin"),
    [
        (lambda x: np.asarray(x) * x, lambda x: x * x),
        (lambda x: np.array([x, 2 * x]) * x, lambda x: np.stack([x, 2 * x]) * x),
        (lambda x: math.exp(x) * x, lambda x: np.exp(x) * x),
    ],
    ids=["asarray", "array-of-list", "math"],
)
def test_a_conversion_in_the_traced_function_keeps_the_trace(convert, twin):
    """np.asarray(x), np.array([x, ...]) and math.exp(x) written in the traced function
    itself are followed: the gradient is that of the twin written with numpy."""

    def fun(x):
        y = np.sum(convert(x))
        return gradient(y, x)

    got = evaluate(fun, traced(0.7))
    want = central_difference(lambda v: np.sum(twin(v)), [np.array(0.7)], 0)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    ("convert", "what", "text"),
    [
        (lambda x: float(x), "float()", "float(x)"),
        (lambda x: int(x), "int()", "int(x)"),
        (lambda x: x.item(), ".item()", "x.item()"),
        (lambda x: x.tolist(), ".tolist()", "x.tolist()"),
        (lambda x: Outside().asarray(x), "np.asarray()", "np.asarray(x)"),
        (lambda x: Outside().array_of_list(x), "np.asarray()", "np.array([x, x])"),
        (lambda x: Outside().exp(x), "float()", "math.exp(x)"),
        (lambda x: [1, 2][x], "integer", "[1, 2][x]"),
    ],
    ids=["float", "int", "item", "tolist", "asarray", "array-of-list", "math", "index"],
)
def test_converting_a_traced_value_is_a_located_error(convert, what, text):
    """True escapes (float, int, .item(), .tolist(), an index), and conversions in code
    tracing does not reach (a method: numpy there is numpy's own)."""
    error = raised(convert, traced(1.0), error=TracingEscapeError)
    assert isinstance(error, GradientEscapeError)  # the same class the compiler raises
    assert what in error.message
    assert "silently get no gradient" in error.message
    assert "stop_gradient(x)" in error.hint and "extract_data()" in error.hint
    assert located_at(error, text)


def test_converting_is_fine_once_the_trace_is_released_or_ended():
    def fun(x):
        y = np.sum(x * x)
        g = gradient(y, x)
        return float(y), g  # the trace was released by gradient(): nothing to lose

    value, g = evaluate(fun, traced([1.0, 2.0]))
    assert value == 5.0
    out = evaluate(lambda x: x * 2, traced(3.0))
    assert float(out) == 6.0 and np.asarray(out) == 6.0


# --- in-place writes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("write", "text"),
    [
        # element writes (y[0] = 1.0, y[1:] = y[:1]) are followed:
        # tests/test_tracing_inplace.py checks their values and gradients
        ("del y[0]", "y[0]"),
        ("y.fill(0.0)", "y.fill"),
        ("y.sort()", "y.sort"),
        ("np.add.at(y, [0], 1.0)", "np.add.at(y, [0], 1.0)"),
    ],
)
def test_writing_into_a_traced_array_is_a_located_error(write, text):
    namespace = {"np": np}
    code = compile(f"def fun(x):\n    y = x * 2\n    {write}\n    return y\n", __file__, "exec")
    exec(code, namespace)
    with pytest.raises(TracingError) as info:
        evaluate(namespace["fun"], traced([1.0, 2.0]))
    assert "writes into a traced array in place" in info.value.message
    assert "the gradient would silently be wrong" in info.value.message
    assert "np.where(mask, new_value, y)" in info.value.hint
    assert info.value.lineno == 3


def sets_the_shape(x):
    t = x * 2.0
    t.shape = (4,)
    return np.sum(t)


def sets_flat(x):
    y = np.zeros((2, 2))
    y.flat = x.ravel() ** 2
    return np.sum(y)


@pytest.mark.parametrize(
    ("fn", "hint"),
    [(sets_the_shape, "x = x.reshape(new_shape)"), (sets_flat, "np.reshape(values, x.shape)")],
)
def test_setting_an_attribute_of_a_traced_array_is_a_located_error(fn, hint):
    """Not a raw AttributeError from the Traced class."""
    with pytest.raises(TracingError) as info:
        value_and_gradient(fn, np.ones((2, 2)))
    assert "changes a traced array in place" in info.value.message
    assert hint in info.value.hint
    assert info.value.location.filename == __file__


def rounds_to_an_int(x):
    return round(x[0] * 3) * x[1]


def rounds_to_a_digit(x):
    return round(x[0], 1) * x[1]


def test_round_of_a_traced_value_is_numpys():
    """round(t) of a scalar is a Python int (a conversion, refused like int(t));
    round(t, 1) is np.round, whose derivative is zero almost everywhere (both were a
    raw TypeError); round of an array raises numpy's TypeError."""
    x = np.array([0.33, 1.26])
    with pytest.raises(TracingEscapeError) as info:
        value_and_gradient(rounds_to_an_int, x)
    assert "round()" in info.value.message
    value, gradient = value_and_gradient(rounds_to_a_digit, x)
    assert value == pytest.approx(rounds_to_a_digit(x))
    np.testing.assert_allclose(gradient, [0.0, 0.3])
    with pytest.raises(TypeError, match="doesn't define __round__"):
        value_and_gradient(lambda x: np.sum(round(x, 1)), x)


def test_out_into_an_array_of_the_functions_own_is_a_write_into_it():
    def fun(x):
        y = x * 2
        np.add(y, x**2, out=y)
        return gradient(np.sum(y), x)

    np.testing.assert_allclose(evaluate(fun, traced([1.0, 2.0])), [4.0, 6.0])


def test_writing_a_traced_result_into_a_plain_array_is_an_error():
    """A plain array from outside the function (here its argument) cannot take a trace."""

    def fun(x, a):
        a += x
        return a

    error = raised(fun, traced([1.0, 2.0]), np.zeros(2))
    assert "stores a traced result into a plain (untraced) array" in error.message
    assert "a = a + t" in error.hint
    assert located_at(error, "a += x")


def test_a_traced_result_added_into_the_functions_own_array_is_followed():
    def fun(x):
        a = np.zeros(2)
        a += x**2
        return gradient(np.sum(a), x)

    np.testing.assert_allclose(evaluate(fun, traced([1.0, 2.0])), [2.0, 4.0])


# --- what can and cannot be differentiated -------------------------------------------


def test_a_non_scalar_output_is_an_error():
    def fun(x):
        return gradient(x * 2, x)

    error = raised(fun, traced([1.0, 2.0]), error=NonScalarOutputError)
    assert "x * 2 has shape (2,), but only a scalar (one number)" in error.message
    assert "gradient(np.sum(x * 2), ...)" in error.hint
    assert "gradient((x * 2)[0], ..., retain=True)" in error.hint


def test_a_function_without_a_rule_is_named_and_never_dropped():
    error = raised(lambda x: np.i0(x), traced([1.0, 2.0]))
    assert "np.i0 has no derivative rule" in error.message
    assert "DifferentiableFunction" in error.hint
    method_error = raised(lambda x: x.compress([True, False]), traced([1.0, 2.0]))
    assert "x.compress has no derivative rule" in method_error.message
    operator_error = raised(lambda x: x % 2.0, traced([1.0, 2.0]))
    assert "the % operator has no derivative rule" in operator_error.message


def test_arguments_the_rule_does_not_know_are_reported():
    error = raised(lambda x: np.sum(x, dtype=np.float32), traced([1.0]))
    assert "np.sum(..., dtype=)" in error.message
    assert "axis, keepdims" in error.message
    reduce_error = raised(lambda x: np.add.reduce(x), traced([1.0]))
    assert "np.add.reduce(...) on a traced value is not supported" in reduce_error.message


def test_nested_evaluate_is_an_error():
    error = raised(lambda x: evaluate(lambda z: z, x), traced(1.0))
    assert "evaluate() was called inside another evaluate()" in error.message


def test_gradient_with_respect_to_a_plain_array_is_an_error():
    def fun(x, c):
        return gradient(np.sum(x * c), c)

    error = raised(fun, traced([1.0]), np.array([2.0]))
    assert "c is a plain ndarray, not a traced value" in error.message
    assert "pass traced(value) to evaluate()" in error.hint


def test_an_unused_variable_warns_and_gets_zeros():
    def fun(x, w):
        return gradient(np.sum(x * x), w)

    with pytest.warns(TracingWarning, match=wrapped("does not depend on w, so the gradient")):
        g = evaluate(fun, traced([1.0]), traced([5.0, 6.0]))
    assert g.tolist() == [0.0, 0.0]


def test_integer_data_cannot_be_traced():
    with pytest.raises(
        NonDifferentiableInputError, match=wrapped("needs real floating-point data")
    ):
        traced(np.array([1, 2]))
    assert traced([1, 2]).dtype == np.float64  # Python numbers become float64
