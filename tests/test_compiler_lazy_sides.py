"""A helper called in a side Python may skip (``a if c else b``, the right side of
``and``/``or``, an assert's message) runs only when Python evaluates that side: a
helper that raises, warns, asserts or prints on the skipped path must not do so in the
compiled function either. The same holds for a comprehension or ``sum(...)`` there
(lowered to a loop, which runs only on its side).

Each program is compiled with ``@differentiable`` and compared with the plain Python
call (the value), central differences (the gradient) and tracing mode, which runs
Python itself; ``value_and_grad`` is called three times, as the second call on the
same shapes runs the pair specialized on them.
"""

import warnings

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, value_and_grad
from autodiff_tutor.tracing import value_and_gradient


def inverse_total(a):
    return np.sum(np.linalg.inv(a))


def module_helper_in_else(a):
    return np.sum(a * a) if np.linalg.det(a) == 0 else inverse_total(a)


def nested_helper_in_else(x):
    def fourth(v):
        return v[3] * np.sin(v[0])

    return np.sum(x * x) if x.size < 4 else fourth(x)


def nested_helper_in_body(x):
    def fourth(v):
        return v[3] * np.sin(v[0])

    return fourth(x) if x.size >= 4 else np.sum(x * x)


def lambda_in_else(x):
    reciprocal = lambda v: 1.0 / v  # noqa: E731 (a lambda is what this checks)
    return np.sum(x) if np.min(np.abs(x)) < 0.1 else np.sum(np.sin(reciprocal(x)))


def helpers_in_both_sides(x):
    def head(v):
        assert v[0] > 0, "head needs a positive first entry"
        return np.log(v[0]) * v[1]

    def tail(v):
        assert v[0] <= 0, "tail needs a non-positive first entry"
        return np.exp(v[0]) * v[1]

    return head(x) if x[0] > 0 else tail(x)


def nested_conditionals(x):
    def fourth(v):
        return v[3] * v[0]

    def third(v):
        return v[2] ** 2

    y = fourth(x) if x.size > 3 else (third(x) if x.size > 2 else np.sum(x))
    return y * np.cos(x[0])


def helper_in_a_loop_side(x):
    def log_of(v):
        return np.log(v)

    s = 0.0
    for v in x:
        s = s + (log_of(v) if v > 0 else v * v)
    return s


def helper_after_and(x):
    def fourth(v):
        assert v.size > 3, "fourth needs four entries"
        return v[3]

    if x.size > 3 and fourth(x) > 0:
        return np.sum(x * x)
    return np.sum(np.sin(x))


def helper_after_or(x):
    def inverse_diagonal(v):
        return np.sum(1.0 / v)

    if np.min(np.abs(x)) < 0.1 or inverse_diagonal(x) > 1:
        return np.sum(np.tanh(x))
    return np.sum(x**3)


def helper_in_elif(x):
    def fourth(v):
        return v[3]

    if x.size < 4:
        y = np.sum(x * x)
    elif x.size < 6 and fourth(x) > 0:
        y = np.sum(x**3)
    else:
        y = np.sum(x)
    return y


def chain_of_three(x):
    positive = lambda v: np.all(v > 0)  # noqa: E731
    fourth = lambda v: v[3] > 1  # noqa: E731
    if x.size > 3 and positive(x) and fourth(x):
        return np.sum(np.log(x))
    return np.sum(x * x)


def helper_calling_a_helper_in_a_side(x):
    def logs(v):
        return np.log(v)

    def total(v):  # its own conditional expression, inlined in the caller's side
        return np.sum(logs(v)) if np.all(v > 0) else np.sum(v * v)

    return total(x) if x.size > 1 else x[0] * 3.0


def pair_in_a_side(x):
    def pair(v):
        return v[0] * 2.0, v[1] * 3.0

    a, b = pair(x) if x.size > 1 else (x[0], x[0])
    return a * b


def comprehension_in_else(x):  # its loop reads x[3]: only on the side Python takes
    return np.sum(x * x) if x.size < 4 else np.sum(np.stack([v * x[3] for v in x]))


def sum_of_a_generator_in_else(x):
    return np.sum(np.sin(x)) if np.min(x) <= 0 else sum(np.log(v) for v in x)


def sum_after_and(x):
    if x.size > 3 and sum([x[3] * v for v in x]) > 1:
        return np.sum(x * x)
    return np.sum(np.cos(x))


SHORT, LONG = np.array([0.3, -1.2]), np.array([0.5, 0.7, 1.5, 2.0])
CASES = [
    (module_helper_in_else, [np.zeros((2, 2)), np.array([[2.0, 0.5], [0.3, 1.0]])]),
    (nested_helper_in_else, [SHORT, LONG]),
    (nested_helper_in_body, [SHORT, LONG]),
    (lambda_in_else, [np.array([0.0, 2.0]), np.array([1.5, 2.0])]),
    (helpers_in_both_sides, [np.array([-0.5, 2.0]), np.array([0.5, 2.0])]),
    (nested_conditionals, [SHORT, LONG[:3], LONG]),
    (helper_in_a_loop_side, [np.array([-0.5, 2.0, -1.0, 1.5])]),
    (helper_after_and, [SHORT, LONG, -LONG]),
    (helper_after_or, [np.array([0.0, 2.0]), np.array([0.5, 4.0]), np.array([4.0, 5.0])]),
    (helper_in_elif, [SHORT, LONG, -LONG, np.arange(1.0, 8.0)]),
    (chain_of_three, [SHORT, -LONG, np.array([1.5, 0.5, 2.0, 0.5]), LONG]),
    (helper_calling_a_helper_in_a_side, [LONG, SHORT, np.array([-2.0])]),
    (pair_in_a_side, [SHORT, np.array([1.5])]),
    (comprehension_in_else, [SHORT, LONG]),
    (sum_of_a_generator_in_else, [np.array([-0.5, 2.0]), np.array([0.5, 2.0])]),
    (sum_after_and, [SHORT, LONG, -LONG]),
]
ARGUMENTS = [(fn, x) for fn, xs in CASES for x in xs]
IDS = [f"{fn.__name__}-{k}" for fn, xs in CASES for k in range(len(xs))]


@pytest.mark.parametrize(("fn", "x"), ARGUMENTS, ids=IDS)
def test_a_skipped_side_runs_no_helper(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a helper run on the skipped side warns
        expected = fn(x)
        traced_value, traced_gradient = value_and_gradient(fn, x)
        compiled = value_and_grad(differentiable(fn))
        results = [compiled(x) for _ in range(3)]  # general, then specialized on shapes
    differences = central_difference(fn, [x], 0)
    np.testing.assert_allclose(traced_value, expected, rtol=1e-12)
    np.testing.assert_allclose(traced_gradient, differences, rtol=1e-6, atol=1e-8)
    for value, gradient in results:
        np.testing.assert_allclose(value, expected, rtol=1e-12)
        np.testing.assert_allclose(gradient, traced_gradient, rtol=1e-12, atol=1e-14)


def loud_square(x):
    def loud(v):
        print("loud ran")
        return np.sum(v * v)

    return loud(x) if x[0] > 0 else np.sum(x)


@pytest.mark.parametrize(("x", "printed"), [(np.array([1.0, 2.0]), 1), (np.array([-1.0, 2.0]), 0)])
def test_a_side_effect_happens_only_on_the_side_python_takes(capsys, x, printed):
    expected = loud_square(x), central_difference(loud_square, [x], 0)
    capsys.readouterr()  # what the plain calls printed
    compiled = value_and_grad(differentiable(loud_square))
    results = [compiled(x) for _ in range(3)]  # general, then specialized on shapes
    assert capsys.readouterr().out == "loud ran\n" * (3 * printed)
    for value, gradient in results:
        np.testing.assert_allclose(value, expected[0], rtol=1e-12)
        np.testing.assert_allclose(gradient, expected[1], rtol=1e-6)


def count_or_default(x):
    positives = lambda v: int(np.sum(v > 0))  # noqa: E731
    k = positives(x) or 2  # the value of 'or' is an operand: 2, not True
    return np.sum(x * x) / k


def count_and_scale(x):
    positives = lambda v: int(np.sum(v > 0))  # noqa: E731
    k = positives(x) and 3  # the value of 'and' is an operand: 0 or 3, not a bool
    return np.sum(x * x) * (k + 0.5)


@pytest.mark.parametrize("fn", [count_or_default, count_and_scale])
@pytest.mark.parametrize("x", [np.array([-1.0, -2.0]), np.array([1.0, -2.0, 3.0])])
def test_and_or_give_the_operand_python_stops_at(fn, x):
    compiled = value_and_grad(differentiable(fn))
    for _ in range(3):
        value, gradient = compiled(x)
        np.testing.assert_allclose(value, fn(x), rtol=1e-12)
        np.testing.assert_allclose(gradient, central_difference(fn, [x], 0), rtol=1e-6)


def test_the_helper_body_is_generated_inside_the_branch():
    source = differentiable(nested_helper_in_else).forward_source()
    branch = source.index("if ")
    assert source.index("fourth_v") > branch, source  # not before the condition


def sum_or_squares(x):
    squares = lambda v: np.sum(v * v)  # noqa: E731
    return np.sum(x) or squares(x)  # the squares' gradient where the sum is 0


@pytest.mark.parametrize("x", [np.array([1.0, 2.0]), np.array([1.0, -1.0])])
def test_a_value_of_or_with_a_helper_on_the_right_is_differentiated(x):
    _, traced = value_and_gradient(sum_or_squares, x)
    compiled = value_and_grad(differentiable(sum_or_squares))
    for _ in range(3):
        value, gradient = compiled(x)
        np.testing.assert_allclose(value, sum_or_squares(x), rtol=1e-12)
        np.testing.assert_allclose(gradient, traced, rtol=1e-12)


def described_assertion(x):
    def describe(v):
        print("describe ran")
        return f"x[0] = {v[0]} is not positive"

    assert x[0] > 0, describe(x)
    return np.sum(x * x)


def test_an_assert_message_is_computed_only_when_the_assertion_fails(capsys):
    compiled = value_and_grad(differentiable(described_assertion))
    x = np.array([1.0, 2.0])
    for _ in range(3):
        value, gradient = compiled(x)
        np.testing.assert_allclose(value, 5.0)
        np.testing.assert_allclose(gradient, central_difference(described_assertion, [x], 0))
    assert capsys.readouterr().out == ""
    with pytest.raises(AssertionError, match=r"x\[0\] = -1.0 is not positive"):
        compiled(-x)
    assert capsys.readouterr().out == "describe ran\n"
