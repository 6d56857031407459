"""Second derivatives inside ``evaluate`` (MATLAB's ``EnableHigherDerivatives``):
``gradient(y, x, higher_derivatives=True)`` records the backward pass, so a gradient
of (a function of) the gradient is a Hessian-vector product. Checked on every
program of the everyday-Python corpus that tracing runs (loops, structures, helpers
included) against central differences of the first derivative, and against
autograd's Hessian-vector product where autograd can run the program."""

import autograd
import numpy as np
import pytest
from corpus_python import PROGRAMS
from corpus_python.common import leaves_of
from oracles import with_autograd_numpy

from autodiff_tutor import differentiable
from autodiff_tutor.errors import TracingError
from autodiff_tutor.pytree import flatten, unflatten
from autodiff_tutor.tracing import call_op, evaluate, gradient, traced, value_and_gradient

TRACED = [p for p in PROGRAMS if not p.tracing]


def traced_leaves(value):
    leaves, tree = flatten(value)
    return unflatten(tree, [traced(v) if np.asarray(v).dtype.kind == "f" else v for v in leaves])


def directions_like(value, rng):
    return [rng.normal(size=np.shape(v)) for v in flatten(value)[0]]


def moved(value, directions, step):
    leaves, tree = flatten(value)
    return unflatten(tree, [v + step * d for v, d in zip(leaves, directions, strict=True)])


def traced_hvp(fn, args, index, directions):
    def run(*inner):
        g = gradient(fn(*inner), inner[index], higher_derivatives=True)
        pairs = zip(flatten(g)[0], directions, strict=True)
        return gradient(sum(np.sum(d * v) for d, v in pairs), inner[index])

    call = list(args)
    call[index] = traced_leaves(args[index])
    return leaves_of(evaluate(run, *call))


@pytest.mark.filterwarnings("ignore:.*does not depend on")  # piecewise-linear programs
@pytest.mark.filterwarnings("ignore:Output seems independent of input")  # autograd, same
@pytest.mark.parametrize("program", TRACED, ids=[p.name for p in TRACED])
def test_hessian_vector_products_match_differences_of_the_gradient(program):
    args = program.sample(np.random.default_rng(3))
    index = program.wrt[0]
    directions = directions_like(args[index], np.random.default_rng(4))
    got = traced_hvp(program.fn, args, index, directions)
    eps = 1e-5
    ends = []
    for step in (eps, -eps):
        call = list(args)
        call[index] = moved(args[index], directions, step)
        ends.append(leaves_of(value_and_gradient(program.fn, *call, wrt=index)[1]))
    for g, plus, minus in zip(got, *ends, strict=True):
        np.testing.assert_allclose(g, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)
    if program.autograd and not isinstance(args[index], (list, tuple, dict)):
        fn = with_autograd_numpy(program.fn)

        def directional(*call):
            return np.sum(autograd.grad(fn, index)(*call) * directions[0])

        want = autograd.grad(directional, index)(*args)
        np.testing.assert_allclose(got[0], want, rtol=1e-8, atol=1e-10)


def test_a_third_derivative():
    def third(x):
        d1 = gradient(np.sum(np.sin(x) * x), x, higher_derivatives=True)
        d2 = gradient(np.sum(d1), x, higher_derivatives=True)
        return gradient(np.sum(d2), x)  # d3/dx3 of x sin(x) = -3 sin(x) - x cos(x)

    x = np.array([0.2, 1.3])
    np.testing.assert_allclose(evaluate(third, traced(x)), -3 * np.sin(x) - x * np.cos(x))


def test_a_constant_gradient_has_zero_second_derivative():
    def second(x):
        d1 = gradient(np.sum(3.0 * x), x, higher_derivatives=True)
        return gradient(np.sum(d1 * d1), x)

    np.testing.assert_array_equal(evaluate(second, traced(np.ones(2))), [0.0, 0.0])


def test_differentiating_a_plain_gradient_names_higher_derivatives():
    def second(x):
        d1 = gradient(np.sum(x**3), x)
        return gradient(np.sum(d1), x)

    with pytest.raises(TracingError) as raised:
        evaluate(second, traced(np.ones(2)))
    assert "higher_derivatives=True" in raised.value.hint
    assert raised.value.location.text.strip() == "return gradient(np.sum(d1), x)"


def test_higher_derivatives_through_a_custom_op_are_refused_at_the_call():
    @differentiable
    def cube(x):
        return x * x * x

    def second(x):
        d1 = gradient(np.sum(call_op(cube, x)), x, higher_derivatives=True)
        return gradient(np.sum(d1), x)

    with pytest.raises(TracingError, match="op_backward") as raised:
        evaluate(second, traced(np.array([0.5, -1.0])))
    assert "higher_derivatives=True" in raised.value.location.text


def slogdet_loss(x):
    sign, log_det = np.linalg.slogdet(np.reshape(x, (2, 2)) + 3 * np.eye(2))
    return log_det * sign


def eigenvalue_loss(w):
    values, _ = np.linalg.eigh(np.outer(w, w) + np.diag(np.array([1.0, 2.0, 3.0])))
    return np.sum(values**2)


@pytest.mark.parametrize(
    ("fn", "x", "reason"),
    [
        (
            slogdet_loss,
            np.array([1.2, 0.3, -0.4, 0.9]),
            "(numpy.asarray() turns a traced value into a plain number or array that the "
            "trace cannot follow)",
        ),
        (
            eigenvalue_loss,
            np.array([0.3, -0.4, 0.8]),
            "(running the rule on traced values raised TypeError)",
        ),
    ],
)
def test_a_rule_tracing_cannot_record_again_is_refused_with_its_whole_reason(fn, x, reason):
    """Not a sentence cut at a line break, nor an internal error's words."""

    def second(x):
        return gradient(np.sum(gradient(fn(x), x, higher_derivatives=True)), x)

    with pytest.raises(TracingError) as raised:
        evaluate(second, traced(x))
    assert reason in " ".join(raised.value.message.split())
