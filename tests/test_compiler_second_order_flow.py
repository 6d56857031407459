"""Second derivatives through control flow: ``if`` on data, ``for`` (static and
data-dependent counts, over a sequence), ``while``, ``break``/``continue``, early
``return``, and lists appended in a loop.

Each program is differentiated twice, in both compositions: ``jvp(grad(f))``
(forward over reverse) and the ``vjp`` of ``grad(f)`` (reverse over reverse, the
gradient of the scalar ``<grad f(x), v>``), at inputs that take different paths.
Both must equal the Hessian-vector product of autograd (an independent AD library)
and central differences of the compiled gradient.
"""

import numpy as np
import pytest
from corpus_flow_jumps import while_inside_for
from oracles import with_autograd_numpy

from autodiff_tutor import differentiable, grad, jvp, vjp
from autodiff_tutor.runtime.stack import PathStack, Stack


def if_on_data(x):
    if np.sum(x) > 0:
        y = np.sin(x) * x
    else:
        y = np.exp(x) * 2.0
    return np.sum(y * y)


def for_static_count_with_branch(x):
    s = 0.0
    for _ in range(3):
        if np.sum(x) > 0:
            x = np.sin(x) * x
        else:
            x = x * 2.0
        s = s + np.sum(x * x)
    return s


def for_data_dependent_count(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.tanh(x * (i + 1)))
    return s


def for_over_the_rows(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i - 1]
    return s


def while_on_data(x):
    n = 0
    while np.sum(x * x) < 10.0:
        x = x * 1.5 + np.sin(x)
        n = n + 1
    return np.sum(np.tanh(x)) * n


def break_and_continue(x):
    s = 0.0
    for i in range(5):
        if i == 1:
            continue
        s = s + np.sum(np.exp(x * i * 0.1))
        if np.sum(x) * i > 2.0:
            break
    return s


def early_return(x):
    if np.sum(x) > 0.5:
        return np.sum(np.sin(x) ** 2)
    y = x * x
    return np.sum(y * x)


def nested_loops_with_a_branch(x):
    s = 0.0
    for i in range(2):
        for j in range(3):
            if np.sum(x) * (j - 1) > 0:
                s = s + np.sum(np.cos(x * j))
            else:
                s = s + np.sum(x**3) * i
        x = x * 0.9
    return s


def for_over_a_sequence(x):
    s = 0.0
    for row in x:
        s = s + np.sum(np.sin(row) * row)
    return s


def list_appended_in_a_loop(x):
    ys = []
    for i in range(3):
        if np.sum(x) > 0:
            ys.append(np.sin(x) * i)
        else:
            ys.append(x * x)
        x = x * 1.1
    return np.sum(np.stack(ys) ** 2)


def list_appended_then_read_by_index(x):
    parts = []
    for k in range(2):
        parts.append(np.exp(x * (k + 1)))
    s = np.sum(parts[0] * parts[1])
    for i in range(2):
        p = parts[i]
        s = s + np.sum(p * p)
    return s


X = np.array([0.3, 0.5])
# (program, the arguments at which to differentiate: one per path)
CASES = [
    (if_on_data, [(X,), (-X,)]),
    (for_static_count_with_branch, [(X,), (-X,)]),
    (for_data_dependent_count, [(X, 2), (X, 4), (X, 0)]),
    (for_over_the_rows, [(np.array([0.3, -0.2, 0.9]),), (X,)]),
    (while_on_data, [(X,), (np.array([2.0, 3.0]),), (np.array([0.1, -0.2]),)]),
    (while_inside_for, [(np.array([0.5, 2.5, -0.3]),), (np.array([2.5, 3.0]),)]),
    (break_and_continue, [(X,), (np.array([2.0, 1.0]),), (-X,)]),
    (early_return, [(X,), (X * 0.5,)]),
    (nested_loops_with_a_branch, [(X,), (-X,)]),
    (for_over_a_sequence, [(np.array([[0.3, -0.2], [0.9, 0.4], [0.1, 1.2]]),)]),
    (list_appended_in_a_loop, [(X,), (-X,)]),
    (list_appended_then_read_by_index, [(X,), (np.array([0.2, -1.1, 0.4]),)]),
]
IDS = [fn.__name__ for fn, _ in CASES]
V = np.array([0.7, -0.2])


def _direction(x):
    return np.resize(V, np.shape(x))


def _autograd_hvp(fn, args, v):
    import autograd
    import autograd.numpy as anp

    plain = with_autograd_numpy(fn)

    def along(x):
        return anp.sum(autograd.grad(plain)(x, *args[1:]) * v)

    return autograd.grad(along)(args[0])


def _differences_of_the_gradient(gradient, args, v, eps=1e-6):
    rest = args[1:]
    return (gradient(args[0] + eps * v, *rest) - gradient(args[0] - eps * v, *rest)) / (2 * eps)


@pytest.mark.parametrize(("fn", "points"), CASES, ids=IDS)
def test_forward_over_reverse_matches_autograd_and_differences(fn, points):
    gradient = grad(fn, wrt=0)
    for args in points:
        v = _direction(args[0])
        tangents = (v, *[None] * (len(args) - 1))
        _, hv = jvp(gradient, args, tangents)
        np.testing.assert_allclose(hv, _autograd_hvp(fn, args, v), rtol=1e-9, atol=1e-12)
        expected = _differences_of_the_gradient(gradient, args, v)
        np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("fn", "points"), CASES, ids=IDS)
def test_reverse_over_reverse_matches_autograd_and_differences(fn, points):
    gradient = grad(fn, wrt=0)
    for args in points:
        v = _direction(args[0])
        for _ in range(2):  # the second call runs the pair specialized on the shapes
            _, pullback = vjp(gradient, *args, wrt=[0])
            (hv,) = pullback(v)  # v^T H = H v: the Hessian is symmetric
            np.testing.assert_allclose(hv, _autograd_hvp(fn, args, v), rtol=1e-9, atol=1e-12)
        expected = _differences_of_the_gradient(gradient, args, v)
        np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-7)


def scalar_loop(x):
    s = 0.0
    for _ in range(3):
        if x > 0:
            x = np.sin(x) * x
        else:
            x = x * 2.0
        s = s + x * x
    return s


@pytest.mark.parametrize("x", [0.7, 0.9, -0.4])
def test_second_and_third_derivatives_of_a_scalar_loop(x):
    import autograd

    plain = with_autograd_numpy(scalar_loop)
    second, third = grad(grad(scalar_loop)), grad(grad(grad(scalar_loop)))
    for _ in range(2):  # a first call, then the specialized pair
        assert second(x) == pytest.approx(autograd.grad(autograd.grad(plain))(x), rel=1e-10)
        expected = autograd.grad(autograd.grad(autograd.grad(plain)))(x)
        assert third(x) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    eps = 1e-5
    assert third(x) == pytest.approx((second(x + eps) - second(x - eps)) / (2 * eps), rel=1e-6)


def test_the_gradient_function_keeps_values_and_path_apart():
    """What the gradient pushes that may carry gradient goes on ``stack``, as a list;
    the branch tests on ``path``, which the second derivative replays as it is."""
    shown = differentiable(grad(for_static_count_with_branch)).fn.generated_source
    assert "stack = Stack()" in shown and "path = PathStack()" in shown
    assert "stack.push([x_5, t4, t5, s_2, x_2])" in shown
    assert "path.push((t2,))" in shown
    assert "(t2,) = path.pop()" in shown


def test_the_second_order_code_pushes_and_pops_gradients():
    """The backward of the gradient function keeps a stack of gradients: a pop's
    adjoint pushes the gradient of what was popped, a push's adjoint pops it."""
    backward = differentiable(grad(for_static_count_with_branch)).derivative(0).backward_source
    assert "dbar_stack = Stack()" in backward
    assert "dbar_stack.push(" in backward and "dbar_stack.pop()" in backward


def test_a_path_stack_is_a_stack():
    assert issubclass(PathStack, Stack)
