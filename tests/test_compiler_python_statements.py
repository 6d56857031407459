"""Python statements in compiled code: effects (``print``, ``assert``, ``raise``,
``with``) run in the forward only, structured gradients keep their structure, builtins
and ``math`` functions on scalars match central differences, Python's own semantics
are kept (a repeated dict key, ``sum``'s start, a comprehension's own name), and what
the compiler does not take is refused with a located error."""

import math

import numpy as np
import pytest
from corpus_python.structures import l2_over_list
from oracles import central_difference
from wrapped_text import wrapped

from autodiff_tutor import differentiable, grad
from autodiff_tutor.errors import UnsupportedSyntaxError


def printed(x):
    s = np.sum(x**2)
    print("value", s)
    assert s >= 0, "a sum of squares"
    return s * 3.0


def test_an_effect_runs_once_in_the_forward_with_the_forward_value(capsys):
    compiled = differentiable(printed)
    gradient = grad(compiled)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(gradient, [6.0, 12.0])
    assert capsys.readouterr().out == "value 5.0\n"  # once: the backward prints nothing
    forward, backward = compiled.forward_source(), compiled.backward_source()
    assert forward.count("print(") == 1 and forward.count("assert ") == 1
    assert "print(" not in backward and "assert " not in backward


def raising(x):
    if np.any(x < 0):
        raise ValueError("x must not be negative")
    return np.sum(np.sqrt(x))


def test_raise_in_a_branch_raises_in_the_forward():
    x = np.array([1.0, 4.0])
    np.testing.assert_allclose(grad(raising)(x), central_difference(raising, [x], 0))
    with pytest.raises(ValueError, match="must not be negative"):
        grad(raising)(np.array([-1.0, 4.0]))


def errstate(x):
    with np.errstate(divide="ignore"):
        y = np.log(np.abs(x) + 1.0)
    return np.sum(y)


def test_with_enters_and_leaves_in_the_forward_only():
    compiled = differentiable(errstate)
    x = np.array([0.5, -2.0])
    np.testing.assert_allclose(grad(compiled)(x), central_difference(errstate, [x], 0))
    assert "__enter__" in compiled.forward_source()
    assert "__enter__" not in compiled.backward_source()


def mlp(params, X):
    h = X
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h)


def test_structured_gradients_come_back_in_the_same_structure():
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(2, 3)), rng.normal(size=3)), (rng.normal(size=(3, 1)), np.ones(1))]
    gradients = grad(mlp)(params, rng.normal(size=(4, 2)))
    assert isinstance(gradients, list) and all(isinstance(g, tuple) for g in gradients)
    assert [g[0].shape for g in gradients] == [(2, 3), (3, 1)]


def math_scalars(x):
    a = math.exp(x) + math.log(x) + math.sqrt(x) + math.sin(x) + math.cos(x) + math.tan(x)
    b = math.tanh(x) + math.sinh(x) + math.cosh(x) + math.log1p(x) + math.expm1(x)
    return a * b + math.atan(x)


def scalar_builtins(x):
    return abs(x - 1.0) + max(x, 0.5) * min(x, 2.0, 3.0 * x)


def test_builtins_on_scalars():
    h = 1e-6
    expected = (scalar_builtins(0.7 + h) - scalar_builtins(0.7 - h)) / (2 * h)
    assert grad(scalar_builtins)(0.7) == pytest.approx(expected, rel=1e-6)


def test_math_functions_on_scalars():
    h = 1e-6
    expected = (math_scalars(0.7 + h) - math_scalars(0.7 - h)) / (2 * h)
    assert grad(math_scalars)(0.7) == pytest.approx(expected, rel=1e-6)


def repeated_key(x):
    d = {"a": x, "a": x * 5.0}  # noqa: F601 (Python keeps the last value)
    return np.sum(d["a"])


def sum_with_start(x):
    return sum([np.sum(x), np.sum(x**2)], 1.0)


def comprehension_name_does_not_leak(x):
    v = x * 3.0
    ys = [v * 2 for v in x]
    return np.sum(v) + sum(ys)


@pytest.mark.parametrize("fn", [repeated_key, sum_with_start, comprehension_name_does_not_leak])
def test_python_semantics_kept(fn):
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(grad(fn)(x), central_difference(fn, [x], 0), rtol=1e-6)


# -- what stays refused --------------------------------------------------------------


def mutating_call(x):
    ys = [x]
    ys.extend([x * 2])
    return np.sum(ys[0])


def starred_from_array(x):
    first, *rest = x
    return first * np.sum(rest)


def dynamic_index(params, X, k):
    W, b = params[int(np.argmax(X[0])) - k]  # from an array's values: known at run time only
    return np.sum(X @ W + b)


def structure_in_loop(x):
    d = {"a": x}
    for _ in range(2):
        d = {"a": d["a"] * 2}
    return np.sum(d["a"])


def write_into_parameter(params):
    params["W"] = params["W"] * 2
    return np.sum(params["W"])


def try_block(x):
    try:
        y = np.log(x)
    except ValueError:
        y = x
    return np.sum(y)


def set_literal(x):
    s = {1, 2}
    return np.sum(x) * len(s)


def lambda_passed(x):
    return np.sum(sorted(x, key=lambda v: -v))


def sum_in_while_condition(x):
    s = x
    while sum(v for v in s) < 10:
        s = s * 2
    return np.sum(s)


def returns_generator(x):
    return (v * 2 for v in x)


def recursive(x):
    return x if x.size == 1 else recursive(x[1:])


def with_class(x):
    class Box:
        pass

    return np.sum(x)


def list_to_helper(x):
    ws = [x, x * 2]
    return l2_over_list(ws)


def zip_star_of_arrays(x, y):
    s = 0.0
    for a, b in zip(*[x, y]):  # noqa: B905
        s = s + a * b
    return s


LAYERS = [(np.eye(2), np.zeros(2))]
REFUSED = [
    (mutating_call, (np.ones(2),), "may change a value of this function in place", "ys.extend"),
    (starred_from_array, (np.ones(3),), "starred name needs a value of known length", "*rest"),
    (dynamic_index, (LAYERS, np.ones((1, 2)), 0), "not known while compiling", "params[int("),
    (structure_in_loop, (np.ones(2),), "assigned inside a loop or a branch", "d"),
    (write_into_parameter, ({"W": np.ones(2)},), "changes the parameter 'params'", "params"),
    (try_block, (np.ones(2),), "'try' is not supported", "try:"),
    (set_literal, (np.ones(2),), "set literals are not supported", "{1, 2}"),
    (lambda_passed, (np.ones(2),), "a lambda is supported only assigned to a name", "lambda"),
    (sum_in_while_condition, (np.ones(2),), "the condition of a while loop", "sum(v for v in s)"),
    (returns_generator, (np.ones(2),), "generator expressions are supported inside", "("),
    (recursive, (np.ones(2),), "recursion is not supported", "recursive(x[1:])"),
    (with_class, (np.ones(2),), "classes defined inside the function", "class Box"),
    (list_to_helper, (np.ones(2),), "passing a list of values with gradient", "ws"),
    (zip_star_of_arrays, (np.ones(2), np.ones(2)), "zip\\(\\*...\\) needs a structure", "zip(*"),
]


@pytest.mark.parametrize(
    ("fn", "args", "message", "snippet"), REFUSED, ids=[r[0].__name__ for r in REFUSED]
)
def test_what_stays_refused_is_located(fn, args, message, snippet):
    with pytest.raises(UnsupportedSyntaxError, match=wrapped(message)) as info:
        grad(fn)(*args)
    location = info.value.location
    assert location is not None and location.filename.endswith(".py")
    assert snippet in location.text[location.column :]
    assert info.value.hint


def joined(x):
    a, b = [x[0], x[1]], [x[2]]
    parts = a + b
    return sum(p * p for p in parts)


def appended_by_plus(x):
    a = [x[0], x[1]]
    parts = a + [x[2]]  # one item written out: appended, as ys.append(v)
    return sum(p * p for p in parts)


def repeated(x):
    parts = [x[0]] * 3
    return sum(p * p for p in parts)


def appended(x):
    parts = [x[0], x[1]]
    parts.append(x[2])
    return sum(p * p for p in parts)


def comprehended(x):
    parts = [x[0] for _ in range(3)]
    return sum(p * p for p in parts)


def constants_joined(x):
    weights = [1.0, 2.0] + [3.0]  # no gradient in the items: compiles
    return np.sum(x * np.array(weights))


def test_lists_joined_or_repeated_with_gradient_are_refused_where_written():
    # list + list and list * n of items with gradient: refused at the operator, located
    x = np.array([1.0, -2.0, 0.5])
    for fn, what, column in ((joined, "joining lists", 12), (repeated, "repeating a list", 12)):
        with pytest.raises(UnsupportedSyntaxError, match=what) as raised:
            grad(fn)(x)
        assert raised.value.location.column == column
    # what the hints say works, and lists of constants joined
    for fn in (appended, appended_by_plus, comprehended, constants_joined):
        np.testing.assert_allclose(grad(fn)(x), central_difference(fn, [x], 0), rtol=1e-7)
