"""Bad input gets a clear, located error from errors.py — never a deep traceback."""

import math
import textwrap

import numpy as np
import pytest
from wrapped_text import flat, wrapped

from autodiff_tutor.api import grad, value_and_grad, vjp
from autodiff_tutor.errors import (
    ArgumentError,
    AutodiffError,
    GradientEscapeError,
    NoDerivativeRuleError,
    NonDifferentiableInputError,
    NonScalarOutputError,
    SourceUnavailableError,
    UnsupportedSyntaxError,
)


def first_line_of(fn):
    return fn.__code__.co_firstlineno


def assert_located(error, fn, line_offset, column, snippet):
    """The error points at line ``first line + line_offset``, ``column`` (0-based)."""
    location = error.location
    assert location is not None
    assert location.filename == __file__
    assert location.line == first_line_of(fn) + line_offset
    assert location.column == column
    assert snippet in location.text
    text = str(error)
    assert f"line {location.line}, column {column + 1}" in text
    assert "^" in text and "hint:" in text


def test_builtin_has_no_source():
    with pytest.raises(SourceUnavailableError, match=wrapped("not written in Python")):
        grad(len)(np.ones(2))


def test_exec_string_has_no_source():
    namespace = {"np": np}
    exec("def f(x):\n    return np.sum(x)\n", namespace)
    with pytest.raises(
        SourceUnavailableError, match=wrapped("source code is not available")
    ) as info:
        grad(namespace["f"])(np.ones(2))
    assert "exec()" in info.value.hint


def generator_fn(x):
    yield x


def try_fn(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def set_comprehension_fn(x):
    return np.sum(np.array(sorted({v for v in x})))


def global_fn(x):
    global COUNTER
    return x


def class_fn(x):
    class Inner:
        pass

    return x


def generator_argument_fn(x):
    return np.sum(np.array(v * v for v in x))


def inplace_sort_fn(x):
    y = x * 2
    y.sort()
    return np.sum(y)


def malformed_append_fn(x):
    ys = []
    ys.append(x, x)  # Python would raise here; the compiler must not skip it
    return np.sum(x)


@pytest.mark.parametrize(
    ("fn", "offset", "column", "message"),
    [
        (generator_fn, 1, 4, "generators are not supported"),
        (try_fn, 1, 4, "'try' is not supported"),
        (set_comprehension_fn, 1, 34, "set comprehensions are not supported"),
        (global_fn, 1, 4, "'global' is not supported"),
        (class_fn, 1, 4, "classes defined inside the function"),
        (generator_argument_fn, 1, 26, "generator expressions are supported inside sum"),
        (inplace_sort_fn, 2, 4, "changes an array in place"),
        (malformed_append_fn, 2, 4, "an expression statement is not supported"),
    ],
)
def test_unsupported_syntax_is_located(fn, offset, column, message):
    with pytest.raises(UnsupportedSyntaxError, match=message) as info:
        grad(fn)(np.ones(3))
    assert_located(info.value, fn, offset, column, "")


def math_erf_fn(x):
    y = x * 2
    return np.sum(math.erf(y))


def test_call_without_rule_on_active_value():
    with pytest.raises(
        NoDerivativeRuleError, match=wrapped("no derivative rule for math.erf")
    ) as info:
        grad(math_erf_fn)(np.ones(1))
    assert_located(info.value, math_erf_fn, 2, 18, "math.erf(y)")


def escape_fn(x):
    s = float(np.sum(x))
    return s * x[0]


def item_fn(x):
    return x.sum().item() * 2.0


def tolist_fn(x):  # np.asarray(x) is a differentiable alias: tests/test_array_conversion.py
    y = (x * 2).tolist()
    return np.sum(y)


@pytest.mark.parametrize(
    ("fn", "offset", "column", "what"),
    [
        (escape_fn, 1, 8, "float"),
        (item_fn, 1, 11, "x.sum().item"),
        (tolist_fn, 1, 8, "tolist"),
    ],
)
def test_escapes_are_caught_before_running(fn, offset, column, what):
    with pytest.raises(GradientEscapeError, match=wrapped("gradient would be lost")) as info:
        grad(fn)(np.ones(3))
    assert what in str(info.value)
    assert "stop_gradient" in info.value.hint
    assert_located(info.value, fn, offset, column, what.split(".")[0])


def test_escape_on_inactive_value_is_fine():
    def f(x, n):
        k = int(n)
        return np.sum(x) * k

    assert grad(f)(np.ones(2), 3.0).tolist() == [3.0, 3.0]


def inplace_param_fn(x):
    x += 1.0
    return np.sum(x)


def inplace_alias_fn(x):
    y = x[1:]
    y *= 2.0
    return np.sum(y)


@pytest.mark.parametrize(("fn", "offset"), [(inplace_param_fn, 1), (inplace_alias_fn, 2)])
def test_in_place_update_of_shared_array_is_rejected(fn, offset):
    with pytest.raises(UnsupportedSyntaxError, match=wrapped("in place")) as info:
        grad(fn)(np.ones(3))
    assert_located(info.value, fn, offset, 4, "=")


def test_non_scalar_output_needs_a_seed():
    def f(x):
        return x * 2

    with pytest.raises(NonScalarOutputError, match=wrapped(r"shape \(3,\)")) as info:
        grad(f)(np.ones(3))
    assert "vjp" in info.value.hint


def test_tuple_output_needs_vjp():
    def f(x):
        return np.sum(x), np.sum(x * x)

    with pytest.raises(NonScalarOutputError, match=wrapped("returns 2 values")):
        grad(f)(np.ones(3))


def test_integer_input_cannot_be_differentiated():
    def f(x):
        return np.sum(x * 2)

    with pytest.raises(NonDifferentiableInputError, match=wrapped("int64")):
        grad(f)(np.arange(3))
    with pytest.raises(NonDifferentiableInputError, match=wrapped("int")):
        grad(f)(3)


@pytest.mark.parametrize(
    ("wrt", "message"), [(5, "out of range"), ("z", "not a parameter"), ([0, 0], "twice")]
)
def test_bad_wrt(wrt, message):
    def f(x, y):
        return np.sum(x * y)

    with pytest.raises(ArgumentError, match=message):
        grad(f, wrt=wrt)(np.ones(2), np.ones(2))


def test_seed_shape_is_checked():
    def f(x):
        return x * 2

    _, pullback = vjp(f, np.ones(3))
    with pytest.raises(ArgumentError, match=wrapped(r"shape \(2,\)")):
        pullback(np.ones(2))
    with pytest.raises(ArgumentError, match=wrapped("one seed each")):
        pullback(np.ones(3), np.ones(3))


def test_wrong_call_arguments():
    def f(x, y):
        return np.sum(x * y)

    with pytest.raises(ArgumentError, match=wrapped("cannot call f")):
        value_and_grad(f)(np.ones(2))


def undefined_name_fn(x):
    return np.sum(not_defined_anywhere(x))  # noqa: F821


def test_undefined_name_is_located():
    with pytest.raises(
        UnsupportedSyntaxError, match="'not_defined_anywhere' is not defined"
    ) as info:
        grad(undefined_name_fn)(np.ones(2))
    assert_located(info.value, undefined_name_fn, 1, 18, "not_defined_anywhere")


def test_every_error_is_an_autodiff_error():
    for cls in (
        SourceUnavailableError,
        UnsupportedSyntaxError,
        NoDerivativeRuleError,
        ArgumentError,
    ):
        assert issubclass(cls, AutodiffError)


def test_error_message_renders_a_caret_under_the_construct():
    with pytest.raises(NoDerivativeRuleError) as info:
        grad(math_erf_fn)(np.ones(1))
    lines = str(info.value).splitlines()
    source_line = next(i for i, line in enumerate(lines) if "math.erf(y)" in line)
    caret = lines[source_line + 1]
    start = lines[source_line].index("math.erf(y)")
    assert caret.index("^") == start
    assert caret.count("^") == len("math.erf(y)")
    _ = textwrap


def test_an_attribute_without_a_rule_is_located_with_a_hint():
    def real_part(x):
        return np.sum(x.real * x)

    with pytest.raises(UnsupportedSyntaxError, match="'.real' is not differentiable") as err:
        grad(real_part)(np.ones(3))
    assert_located(err.value, real_part, 1, 22, "x.real")
    assert "x.T" in err.value.hint and "res.eigenvalues" in err.value.hint


def test_a_ufunc_method_names_its_function_form():
    def summed(x):
        return np.add.reduce(x * x)

    with pytest.raises(NoDerivativeRuleError) as err:
        grad(summed)(np.ones(3))
    assert_located(err.value, summed, 1, 15, "np.add.reduce")
    assert "np.sum(x, axis=0) rather than np.add.reduce" in err.value.hint
    np.testing.assert_allclose(grad(lambda_free_sum)(np.arange(3.0)), [0.0, 2.0, 4.0])

    def running_max(x):
        return np.sum(np.maximum.accumulate(x))

    with pytest.raises(NoDerivativeRuleError) as err:
        grad(running_max)(np.ones(3))
    assert "has no function form" in err.value.hint


def lambda_free_sum(x):  # the function form the hint names
    return np.sum(x * x, axis=0)


def test_a_refusal_that_only_the_run_can_see_points_at_the_users_line():
    def repeated(x):
        y = x.copy()
        y[[0, 0]] = x[1:3]  # the indices are values: only the run sees they repeat
        return np.sum(y)

    with pytest.raises(NoDerivativeRuleError, match="repeated indices") as err:
        grad(repeated)(np.arange(1.0, 5.0))
    assert_located(err.value, repeated, 2, 8, "y[[0, 0]] = x[1:3]")


def test_the_same_refusal_in_forward_mode_points_at_the_users_line():
    from autodiff_tutor.api import jvp

    def repeated(x):
        y = x.copy()
        y[[0, 0]] = x[1:3]
        return np.sum(y)

    with pytest.raises(NoDerivativeRuleError, match="repeated indices") as err:
        jvp(repeated, (np.arange(1.0, 5.0),), (np.ones(4),))
    assert_located(err.value, repeated, 2, 8, "y[[0, 0]] = x[1:3]")


STATS = {"calls": 0}


def counts_in_a_global_dict(x):
    STATS["calls"] = STATS["calls"] + 1
    return np.sum(x**2)


def test_a_write_into_a_global_says_what_it_is():
    with pytest.raises(UnsupportedSyntaxError) as err:
        grad(counts_in_a_global_dict)(np.ones(3))
    assert_located(err.value, counts_in_a_global_dict, 1, 4, "STATS")
    assert "this changes 'STATS' in place, a value the function reads from outside" in flat(
        err.value.message
    )
    assert "not defined" not in err.value.message


class Counted:
    def __init__(self):
        self.W = np.array([0.5, -1.0, 2.0])
        self.n = 0
        self.training = True

    def loss(self, x):
        self.n = self.n + 1
        return np.sum(self.W * x**2)

    def eval_mode(self):
        self.training = False

    def evaluated(self, x):
        self.eval_mode()
        return np.sum(np.tanh(self.W * x))

    @property
    def scale(self):
        self.n += 1
        return float(self.n)

    def scaled(self, x):
        return np.sum(np.sin(self.W * x)) * self.scale


def calls_the_loss_of(model, x):
    return model.loss(x)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda m, x: grad(calls_the_loss_of, wrt="x")(m, x),
            "this sets the attribute self.n of an object that the compiled code reads only",
        ),
        (
            lambda m, x: grad(m.scaled)(x),
            "this sets the attribute self.n of an object that the compiled code reads only",
        ),
        (
            lambda m, x: grad(m.evaluated)(x),
            "the method 'eval_mode' is called for what it sets on its object "
            "(self.training = ...) and returns nothing",
        ),
    ],
)
def test_a_write_in_a_method_called_inside_is_refused_in_the_users_names(call, message):
    with pytest.raises(UnsupportedSyntaxError) as err:
        call(Counted(), np.ones(3))
    assert message in flat(err.value.message)
    assert "_self_" not in str(err.value)  # no name the inlining made
    assert err.value.location.filename == __file__


def squares_of_picked(x, n):
    return np.sum(x[n] ** 2)


def test_an_integer_input_in_wrt_is_said_before_what_compiling_it_refuses():
    """``grad(f, wrt=1)`` where ``n`` is an int index array: that ints have no gradient,
    not that "an index must not depend on a differentiated value" (true of the program
    only because wrt asked for n)."""
    with pytest.raises(NonDifferentiableInputError) as raised:
        grad(squares_of_picked, wrt=1)(np.array([0.5, 1.2, 0.7]), np.array([0, 1, 2]))
    assert "with respect to 'n'" in " ".join(str(raised.value).split())
    assert raised.value.location.filename == __file__
