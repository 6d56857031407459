"""A list of values with gradient passed where a function takes one array
(``np.sum([a, b])``, ``np.max([...])``, ``np.linalg.norm([...])``): numpy stacks the
list, and so does the compiler (an ``np.stack`` step at the user's line). Checked in
both compiler modes against central differences and autograd (on the stacked twin:
autograd wants the stack written); tracing stacks the list given to a numpy function
with a rule too; given to a ufunc (``np.exp(ys)``), numpy converts it in C, and tracing
refuses it, naming np.stack."""

import numpy as np
import pytest
from program_checks import assert_gradient_in_every_mode

from autodiff_tutor import differentiable, grad
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.tracing import value_and_gradient

X = np.array([0.3, -1.2, 0.8])


def sum_of_comprehension(x):
    return np.sum([xi**2 for xi in x])


def mean_of_two(x):
    return np.mean([np.sin(x), x**2], axis=0).sum()


def max_of_picks(x):
    return np.max([x[0], x[1] * 2, x[2]])


def norm_of_list(x):
    return np.linalg.norm([x[0], 3.0 * x[1]])


def exp_of_appended(x):
    ys = []
    for i in range(3):
        ys.append(x * i)
    return np.sum(np.exp(ys))


def tanh_of_tuple(x):
    return np.sum(np.tanh((x[0], x[1])))


TWINS = {
    sum_of_comprehension: lambda x: np.sum(np.stack([xi**2 for xi in x])),
    mean_of_two: lambda x: np.mean(np.stack([np.sin(x), x**2]), axis=0).sum(),
    max_of_picks: lambda x: np.max(np.stack([x[0], x[1] * 2, x[2]])),
    norm_of_list: lambda x: np.linalg.norm(np.stack([x[0], 3.0 * x[1]])),
    exp_of_appended: lambda x: np.sum(np.exp(np.stack([x * i for i in range(3)]))),
    tanh_of_tuple: lambda x: np.sum(np.tanh(np.stack((x[0], x[1])))),
}


#: a list given to a ufunc: numpy converts it in C, where tracing cannot follow
UFUNC_LISTS = (exp_of_appended, tanh_of_tuple)


@pytest.mark.parametrize("fn", list(TWINS), ids=lambda f: f.__name__)
def test_a_list_where_an_array_goes_is_stacked(fn):
    direction = np.array([0.5, -1.0, 2.0])
    tracing = fn not in UFUNC_LISTS
    assert_gradient_in_every_mode(fn, TWINS[fn], X, direction, tracing=tracing)


def test_the_generated_code_shows_the_stack():
    source = differentiable(norm_of_list).source()
    assert "np.stack([" in source and "unstack(" in source


@pytest.mark.parametrize("fn", UFUNC_LISTS, ids=lambda f: f.__name__)
def test_tracing_refuses_a_list_given_to_a_ufunc_and_names_np_stack(fn):
    with pytest.raises(AutodiffError) as caught:
        value_and_gradient(fn, X)
    assert "np.stack([...])" in caught.value.hint
    assert caught.value.location.filename == __file__


def test_a_bare_function_name_with_a_list_is_refused_with_a_hint():
    from numpy import mean as average_of

    def bare(x):
        return average_of([x[0], x[1]])

    with pytest.raises(AutodiffError, match="a list of values with gradient") as caught:
        grad(bare)(X)
    assert "np.stack([...])" in caught.value.hint
    assert caught.value.location.filename == __file__
