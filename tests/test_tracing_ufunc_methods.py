"""A numpy ufunc method on a traced value (``np.add.reduce``, ``np.maximum.accumulate``)
is refused at the call with a hint that names its function form when there is one (and
that form keeps the gradient), and says so when there is none."""

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor.errors import TracingError
from autodiff_tutor.tracing import evaluate, gradient, traced


def raised(fn, *args):
    with pytest.raises(TracingError) as info:
        evaluate(fn, *args)
    return info.value


def test_a_ufunc_method_names_its_function_form_or_says_there_is_none():
    def summed(x):
        return gradient(np.add.reduce(x * x), x)

    error = raised(summed, traced([1.0, 2.0]))
    assert "np.sum(x, axis=0) rather than np.add.reduce" in error.hint
    assert error.location.filename == __file__
    # the function form it names keeps the gradient
    got = evaluate(lambda x: gradient(np.sum(x * x, axis=0), x), traced([1.0, 2.0]))
    np.testing.assert_allclose(
        got, central_difference(lambda v: np.sum(v * v), [np.array([1.0, 2.0])], 0)
    )

    def running_max(x):
        return gradient(np.sum(np.maximum.accumulate(x)), x)

    error = raised(running_max, traced([1.0, 2.0]))
    assert "has no function form" in error.hint and "np.sum" not in error.hint
