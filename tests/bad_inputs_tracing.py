"""Bad inputs for the tracing mode (``traced``, ``evaluate``, ``gradient``,
``value_and_gradient``): each case is a call and what it must end in.

``ERROR`` means a located ``AutodiffError``; a function means a result, which the
function checks against numpy.
"""

from __future__ import annotations

import numpy as np
from bad_inputs_compiler import (
    ERROR,
    X,
    gradient_is,
    mean_of,
    pair,
    returns_none,
    returns_string,
    total,
    uses_asarray,
    uses_i0,
    uses_sort,
    vector,
)

from autodiff_tutor.tracing import evaluate, gradient, traced, value_and_gradient


def returns_tuple(x):
    return np.sum(x), np.sum(x)


def gradient_without_variables(x):
    y = np.sum(x)
    return gradient(y)


def gradient_of_vector(x):
    return gradient(np.sin(x), x)


def gradient_of_plain(x):
    return gradient(3.0, x)


def gradient_wrt_plain(x):
    return gradient(np.sum(x), np.ones(3))


def gradient_wrt_number(x):
    return gradient(np.sum(x), 1.0)


def nested_evaluate(x):
    return evaluate(total, x)


def float_escape(x):
    return float(np.sum(x)) * x


def item_escape(x):
    return np.sum(x).item() * x


def out_argument(x):
    y = x * 1.0
    np.add(y, 1.0, out=y)
    return np.sum(y)


def into_plain_element(x, out):
    out[0] = x[0]
    return np.sum(out * x)


def into_plain_inplace(x, out):
    out += x
    return np.sum(out)


def into_own_element(x):
    out = np.zeros(3)
    out[0] = x[0]
    return np.sum(out * x)


def into_own_inplace(x):
    out = np.zeros(3)
    out += x
    return np.sum(out)


def traced_as_index(x):
    return x[x[0]]


def traced_in_range(x):
    total = 0.0
    for i in range(np.sum(x)):
        total = total + i
    return total


def calls_gradient(x):
    y = np.sum(x * x)
    return gradient(y, x)


CASES = [
    # -- traced() -------------------------------------------------------------------
    ("traced-string", lambda: traced("abc"), ERROR),
    ("traced-none", lambda: traced(None), ERROR),
    ("traced-object-array", lambda: traced(np.array([1.0, "a"], dtype=object)), ERROR),
    ("traced-dict", lambda: traced({"x": 1.0}), ERROR),
    ("traced-int-array", lambda: evaluate(calls_gradient, traced(np.arange(3))), ERROR),
    ("traced-bool-array", lambda: evaluate(calls_gradient, traced(np.ones(2, bool))), ERROR),
    # -- evaluate and gradient ---------------------------------------------------------
    ("gradient-outside-evaluate", lambda: gradient(traced(1.0), traced(1.0)), ERROR),
    ("gradient-without-variables", lambda: evaluate(gradient_without_variables, traced(X)), ERROR),
    ("gradient-of-vector", lambda: evaluate(gradient_of_vector, traced(X)), ERROR),
    ("gradient-of-plain-number", lambda: evaluate(gradient_of_plain, traced(X)), ERROR),
    ("gradient-wrt-plain-array", lambda: evaluate(gradient_wrt_plain, traced(X)), ERROR),
    ("gradient-wrt-number", lambda: evaluate(gradient_wrt_number, traced(X)), ERROR),
    ("nested-evaluate", lambda: evaluate(nested_evaluate, traced(X)), ERROR),
    ("evaluate-not-callable", lambda: evaluate(3, traced(X)), ERROR),
    ("evaluate-too-many-arguments", lambda: evaluate(total, traced(X), X), ERROR),
    # -- value_and_gradient's wrt and arguments -----------------------------------------
    ("vag-wrt-float", lambda: value_and_gradient(total, X, wrt=0.5), ERROR),
    ("vag-wrt-unknown-name", lambda: value_and_gradient(total, X, wrt="z"), ERROR),
    ("vag-wrt-duplicate", lambda: value_and_gradient(pair, X, X, wrt=[0, 0]), ERROR),
    ("vag-wrt-out-of-range", lambda: value_and_gradient(total, X, wrt=3), ERROR),
    ("vag-wrt-bool", lambda: value_and_gradient(total, X, wrt=True), ERROR),
    ("vag-wrt-empty", lambda: value_and_gradient(pair, X, X, wrt=[]), ERROR),
    ("vag-no-arguments", lambda: value_and_gradient(total), ERROR),
    ("vag-too-many-arguments", lambda: value_and_gradient(total, X, X), ERROR),
    ("vag-int-array", lambda: value_and_gradient(total, np.arange(3)), ERROR),
    ("vag-string", lambda: value_and_gradient(total, "abc"), ERROR),
    ("vag-python-float", lambda: value_and_gradient(total, 3.0)[1], gradient_is(6.0)),
    ("vag-list", lambda: value_and_gradient(total, [1.0, 2.0])[1], gradient_is([2.0, 4.0])),
    # -- outputs --------------------------------------------------------------------
    ("vag-vector-output", lambda: value_and_gradient(vector, X), ERROR),
    ("vag-string-output", lambda: value_and_gradient(returns_string, X), ERROR),
    ("vag-none-output", lambda: value_and_gradient(returns_none, X), ERROR),
    ("vag-tuple-output", lambda: value_and_gradient(returns_tuple, X), ERROR),
    # -- special values and shapes ---------------------------------------------------
    ("vag-empty", lambda: value_and_gradient(total, np.zeros(0))[1], gradient_is(np.zeros(0))),
    (
        "vag-zero-size-2d",
        lambda: value_and_gradient(total, np.zeros((0, 2)))[1],
        gradient_is(np.zeros((0, 2))),
    ),
    (
        "vag-mean-of-empty",
        lambda: value_and_gradient(mean_of, np.zeros(0))[1],
        gradient_is(np.zeros(0)),
    ),
    (
        "vag-nan",
        lambda: value_and_gradient(total, np.array([np.nan, 1.0]))[1],
        gradient_is([np.nan, 2.0]),
    ),
    (
        "vag-inf",
        lambda: value_and_gradient(total, np.array([np.inf, 1.0]))[1],
        gradient_is([np.inf, 2.0]),
    ),
    (
        "vag-many-dimensions",
        lambda: value_and_gradient(total, np.ones((1,) * 32))[1],
        gradient_is(2.0),
    ),
    ("vag-large", lambda: value_and_gradient(total, np.ones(2_000_000))[1], gradient_is(2.0)),
    # -- escapes and writes -----------------------------------------------------------
    ("float-escape", lambda: value_and_gradient(float_escape, X), ERROR),
    ("item-escape", lambda: value_and_gradient(item_escape, X), ERROR),
    ("asarray-followed", lambda: value_and_gradient(uses_asarray, X)[1], gradient_is(1.0)),
    ("no-rule", lambda: value_and_gradient(uses_i0, X), ERROR),
    ("sort-in-place", lambda: value_and_gradient(uses_sort, X), ERROR),
    ("out-argument", lambda: value_and_gradient(out_argument, X)[1], gradient_is(1.0)),
    (
        "traced-into-plain-element",
        lambda: value_and_gradient(into_plain_element, X, np.zeros(3)),
        ERROR,
    ),
    (
        "traced-into-plain-in-place",
        lambda: value_and_gradient(into_plain_inplace, X, np.zeros(3)),
        ERROR,
    ),
    (
        "traced-into-own-element",
        lambda: value_and_gradient(into_own_element, X)[1],
        gradient_is([2 * X[0], 0.0, 0.0]),
    ),
    (
        "traced-into-own-in-place",
        lambda: value_and_gradient(into_own_inplace, X)[1],
        gradient_is(1.0),
    ),
    ("traced-as-index", lambda: value_and_gradient(traced_as_index, np.zeros(3)), ERROR),
    ("traced-in-range", lambda: value_and_gradient(traced_in_range, X), ERROR),
]
