"""Unsupported constructs inside loops and branches get a located error, never a wrong gradient.

``test_compiler_errors.py`` covers the constructs at the top of a function body; here
they sit inside ``for``/``while`` bodies, ``if`` branches and helpers, where the
compiler has desugared and renamed things before it gets to them, so the location
(line, column, the source line, the caret) must still point at the user's code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracles import central_difference
from wrapped_text import wrapped

from autodiff_tutor.api import grad
from autodiff_tutor.errors import (
    AutodiffError,
    GradientEscapeError,
    NoDerivativeRuleError,
    UnsupportedSyntaxError,
)

TOTAL = 0.0


def gen_in_loop(x):
    for v in x:
        yield v * 2


def yield_from_in_branch(x):
    if x[0] > 0:
        yield from x
    return x


def try_in_loop(x):
    s = 0.0
    for v in x:
        try:
            s = s + np.log(v)
        except FloatingPointError:
            s = s + v
    return s


def global_write_in_loop(x):
    global TOTAL
    for v in x:
        TOTAL = TOTAL + v
    return np.sum(x)


def nonlocal_in_helper(x):
    s = 0.0

    def add(v):
        nonlocal s
        s = s + v
        return s

    return add(np.sum(x))


def class_in_branch(x):
    if x[0] > 0:

        class Box:
            value = 1.0

    return np.sum(x)


def sort_in_loop(x):
    y = x * 2
    for _ in range(2):
        y.sort()
        y = y * y
    return np.sum(y)


def fill_in_branch(x):
    y = x * 2
    if x[0] > 0:
        y.fill(0.0)
    return np.sum(y)


def write_param_in_loop(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2
    return np.sum(x)


def augment_param_in_branch(x):
    if np.sum(x) > 0:
        x += 1.0
    return np.sum(x * x)


def write_view_in_loop(x):
    y = np.zeros((2, 3))
    row = y[0]
    for j in range(3):
        row[j] = x[j] * x[j]
    return np.sum(y)


def write_base_with_view_in_loop(x):
    y = np.zeros((2, 3))
    row = y[1]
    for j in range(3):
        y[1, j] = x[j]
    return np.sum(row * x)


def random_in_loop(x):
    s = x
    for _ in range(3):
        s = s + np.random.normal(s, 0.1)
    return np.sum(s)


def random_scale_in_branch(x):
    s = np.sum(x * x)
    if s > 0:
        s = s + np.sum(np.random.normal(0.0, s, size=3))
    return s


def or_value_in_loop(x):
    s = 0.0
    for v in x:
        s = s + (v or 1.0)
    return s


def for_else(x):
    s = 0.0
    for v in x:
        if v > 1:
            break
        s = s + v
    else:
        s = s * 2
    return s


def while_else(x):
    s = x[0]
    while s < 1:
        s = s * 2
    else:
        s = s + 1
    return s


def lambda_argument_in_loop(x):
    s = 0.0
    for v in x:
        s = s + np.sum(sorted(x, key=lambda t: t * v))
    return s


def set_comprehension_in_loop(x):
    s = 0.0
    for v in x:
        s = s + len({round(t) for t in x}) * v
    return s


def walrus_in_while(x):
    k = 3
    s = x
    while (k := k - 1) > 0:
        s = s * x
    return np.sum(s)


def del_in_loop(x):
    s = 0.0
    for v in x:
        t = v * v
        s = s + t
        del t
    return s


def math_in_loop(x):
    s = 0.0
    for v in x:
        s = s + math.erf(v)
    return s


def escape_in_branch(x):
    s = np.sum(x)
    if s > 0:
        s = float(s) * 2
    return s * x[0]


def recursive_helper(v, n):
    if n == 0:
        return v
    return recursive_helper(np.sin(v), n - 1)


def calls_recursive_in_loop(x):
    s = 0.0
    for k in range(2):
        s = s + np.sum(recursive_helper(x, k))
    return s


# (function, error class, message, line offset from the def, 0-based column, located text)
CASES = [
    (gen_in_loop, UnsupportedSyntaxError, "generators are not supported", 2, 8, "yield v * 2"),
    (
        yield_from_in_branch,
        UnsupportedSyntaxError,
        "generators are not supported",
        2,
        8,
        "yield from x",
    ),
    (try_in_loop, UnsupportedSyntaxError, "'try' is not supported", 3, 8, "try:"),
    (
        global_write_in_loop,
        UnsupportedSyntaxError,
        "'global' is not supported",
        1,
        4,
        "global TOTAL",
    ),
    (nonlocal_in_helper, UnsupportedSyntaxError, "'nonlocal' is not supported", 4, 8, "nonlocal s"),
    (
        class_in_branch,
        UnsupportedSyntaxError,
        "classes defined inside the function",
        3,
        8,
        "class Box:",
    ),
    (sort_in_loop, UnsupportedSyntaxError, "changes an array in place", 3, 8, "y.sort()"),
    (fill_in_branch, UnsupportedSyntaxError, "changes an array in place", 3, 8, "y.fill(0.0)"),
    (write_param_in_loop, UnsupportedSyntaxError, "in place", 2, 8, "x[i]"),
    (augment_param_in_branch, UnsupportedSyntaxError, "in place", 2, 8, "x += 1.0"),
    (write_view_in_loop, UnsupportedSyntaxError, "in place.*view", 4, 8, "row[j]"),
    (write_base_with_view_in_loop, UnsupportedSyntaxError, "in place.*view", 4, 8, "y[1, j]"),
    (random_in_loop, NoDerivativeRuleError, "np.random.normal", 3, 16, "np.random.normal(s, 0.1)"),
    (random_scale_in_branch, NoDerivativeRuleError, "np.random.normal", 3, 23, "np.random.normal("),
    (or_value_in_loop, UnsupportedSyntaxError, "'or' used as a value", 3, 17, "v or 1.0"),
    (for_else, UnsupportedSyntaxError, "'else' on a loop is not supported", 7, 8, "s = s * 2"),
    (while_else, UnsupportedSyntaxError, "'else' on a loop is not supported", 5, 8, "s = s + 1"),
    (
        lambda_argument_in_loop,
        UnsupportedSyntaxError,
        "a lambda is supported only",
        3,
        37,
        "lambda",
    ),
    (set_comprehension_in_loop, UnsupportedSyntaxError, "set comprehensions", 3, 20, "{round"),
    (walrus_in_while, UnsupportedSyntaxError, "':=' is not supported", 3, 11, "k := k - 1"),
    (del_in_loop, UnsupportedSyntaxError, "'del' is not supported", 5, 8, "del t"),
    (math_in_loop, NoDerivativeRuleError, "no derivative rule for math.erf", 3, 16, "math.erf(v)"),
    (escape_in_branch, GradientEscapeError, "gradient would be lost", 3, 12, "float(s)"),
]


def span_of(error: AutodiffError) -> str:
    location = error.location
    return location.text[location.column : location.column + location.length]


@pytest.mark.parametrize(
    ("fn", "error", "message", "offset", "column", "snippet"),
    CASES,
    ids=[case[0].__name__ for case in CASES],
)
def test_unsupported_construct_inside_control_flow_is_located(
    fn, error, message, offset, column, snippet
):
    with pytest.raises(error, match=wrapped(message)) as info:
        grad(fn)(np.array([0.5, 0.7, 1.5]))
    location = info.value.location
    assert location is not None, "the error does not say where"
    assert location.filename == __file__
    assert location.line == fn.__code__.co_firstlineno + offset
    assert location.column == column
    assert span_of(info.value).startswith(snippet), span_of(info.value)
    text = str(info.value)
    assert f"line {location.line}, column {column + 1}" in text
    assert info.value.hint and "hint:" in text
    caret_line = next(line for line in text.splitlines() if line.strip().startswith("^"))
    assert caret_line.index("^") - 4 == column  # the caret sits under the construct


def test_recursion_through_a_module_helper_points_at_the_recursive_call():
    with pytest.raises(UnsupportedSyntaxError, match="calls itself: recursion") as info:
        grad(calls_recursive_in_loop)(np.array([0.5, 0.7]))
    location = info.value.location
    assert location.line == recursive_helper.__code__.co_firstlineno + 3
    assert location.column == 11
    assert span_of(info.value) == "recursive_helper(np.sin(v), n - 1)"
    assert "loop" in info.value.hint


def test_random_generator_method_on_a_differentiated_value_is_rejected():
    def noisy(x, rng):
        if x[0] > 0:
            x = rng.normal(x, 0.1)
        return np.sum(x)

    with pytest.raises(NoDerivativeRuleError, match="rng.normal"):
        grad(noisy)(np.array([0.5, 0.7]), np.random.default_rng(0))


# -- variables named like the generated code's own names ------------------------------------


def stack_named_variable(x):
    stack = x * 2
    for _ in range(2):
        stack = stack * x
    return np.sum(stack)


def class_named_variable(x):
    Stack = x * 1.0
    for _ in range(2):
        if x[0] > 0:
            Stack = Stack * x
    return np.sum(Stack)


def helper_named_variable(x):
    assign_at = np.zeros(3)
    assign_at[0] = x[1] * 3
    return np.sum(assign_at * x)


@pytest.mark.parametrize("fn", [stack_named_variable, class_named_variable, helper_named_variable])
def test_variable_named_like_generated_code_is_differentiated(fn):
    """A variable named like the generated code's own names keeps its name; the
    generated code's own is renamed (tests/test_helper_name_clashes.py)."""
    x = np.array([0.5, 0.7, 1.5])
    expected = central_difference(fn, [x], 0)
    np.testing.assert_allclose(grad(fn)(x), expected, rtol=1e-7, atol=1e-8)


def zip_strict_loop(x, y):
    s = 0.0
    for a, b in zip(x, y, strict=True):
        s = s + a * np.exp(b)
    return s


def test_zip_strict_is_differentiated_and_checks_lengths():
    """``zip(..., strict=True)`` (the linters' advice) checks the lengths before the
    loop, as Python does, and the loop is differentiated."""
    x, y = np.array([0.5, -1.0, 2.0]), np.array([0.3, 0.1, -0.7])
    for k in (0, 1):
        expected = central_difference(zip_strict_loop, [x, y], k)
        np.testing.assert_allclose(grad(zip_strict_loop, wrt=[k])(x, y)[0], expected, rtol=1e-7)
    with pytest.raises(ValueError, match="different lengths"):
        grad(zip_strict_loop, wrt=[0, 1])(x, y[:2])


def zip_strict_flag_loop(x, y, flag=True):
    s = 0.0
    for a, b in zip(x, y, strict=flag):
        s = s + a * np.exp(b)
    return s


def test_zip_strict_not_a_literal_is_refused_with_a_rewrite_hint():
    with pytest.raises(UnsupportedSyntaxError, match=r"zip\(\.\.\., strict=\.\.\.\)") as info:
        grad(zip_strict_flag_loop, wrt=[0, 1])(np.ones(2), np.ones(2))
    location = info.value.location
    assert location.line == zip_strict_flag_loop.__code__.co_firstlineno + 2
    assert location.text[location.column :].startswith("strict=flag")
    assert "strict=True" in info.value.hint and "range(len(a))" in info.value.hint


def sort_copy_in_loop(x):
    s = 0.0
    for k in range(2):
        y = np.sort(x * (k + 1))
        s = s + np.sum(y * np.arange(3.0))
    return s


def test_functional_sort_is_not_mistaken_for_the_in_place_method():
    """``np.sort`` returns a copy: not an in-place write, and its rule gives the
    gradient (each sorted slot sends its gradient back to the element it came from)."""
    x = np.array([0.5, 0.7, -1.5])
    got = grad(sort_copy_in_loop)(x)
    # y = sort(x * c) puts x2, x0, x1 in slots 0, 1, 2 (weights 0, 1, 2) for c = 1, 2
    np.testing.assert_allclose(got, [1.0 + 2.0, 2.0 + 4.0, 0.0])
