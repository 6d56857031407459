"""Derivatives taken inside differentiated code: ``grad``, ``value_and_grad``, ``hvp`` and
``jvp`` called in a function that is itself differentiated, checked against central
differences of the function and against autograd running the same code with its own
``grad``; ``hessian`` called where it is made (one product per entry of its input);
``vjp`` as ``value, pullback = vjp(f, x, wrt=...)`` or ``vjp(...)[1](v)``;
the classic perturbation-confusion cases (an inner derivative of a lambda
that closes over the outer variable); and the calls that are refused, located."""

import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, grad, hessian, hvp, jvp, value_and_grad, vjp
from autodiff_tutor.errors import ArgumentError, NonDifferentiableInputError, UnsupportedSyntaxError


def _autograd_jvp(f, args, tangents):
    (position,) = [i for i, t in enumerate(tangents) if t is not None]
    return autograd.make_jvp(f, position)(*args)(tangents[position])


def _autograd_grad(f, wrt=0):
    return autograd.grad(f, tuple(wrt) if isinstance(wrt, list) else wrt)


def _autograd_value_and_grad(f, wrt=0):
    return autograd.value_and_grad(f, tuple(wrt) if isinstance(wrt, list) else wrt)


def _autograd_vjp(f, *args, wrt):
    positions = wrt if isinstance(wrt, list) else [wrt]

    def pullback(seed):
        return tuple(autograd.make_vjp(f, p)(*args)[0](seed) for p in positions)

    return f(*args), pullback


AUTOGRAD_NAMES = {
    "np": anp,
    "grad": _autograd_grad,
    "value_and_grad": _autograd_value_and_grad,
    "hvp": lambda f, wrt=0: autograd.hessian_vector_product(f, wrt),
    "hessian": lambda f, wrt=0: autograd.hessian(f, wrt),
    "jvp": _autograd_jvp,
    "vjp": _autograd_vjp,
}


def autograd_twin(fn):
    """``fn`` and every function of this module it may call, run on autograd: ``np``,
    ``grad``, ``value_and_grad``, ``hvp`` and ``jvp`` are autograd's."""
    namespace = dict(fn.__globals__)
    namespace.update(AUTOGRAD_NAMES)
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == __name__:
            namespace[name] = types.FunctionType(
                value.__code__, namespace, value.__name__, value.__defaults__, value.__closure__
            )
    for name, value in list(namespace.items()):
        if getattr(value, "_made_by", None) is grad:  # grad(f) made at module level
            function, wrt = value._recipe
            namespace[name] = _autograd_grad(namespace[function.__name__], wrt)
    return namespace[fn.__name__]


def check_against_oracles(fn, args, index, atol=1e-6):
    """The compiled gradient of ``fn`` w.r.t. ``args[index]`` equals central
    differences and autograd's gradient of the same code."""
    compiled = grad(fn, wrt=index)(*args)
    np.testing.assert_allclose(compiled, central_difference(fn, args, index), atol=atol)
    twin = autograd.grad(autograd_twin(fn), index)(*args)
    np.testing.assert_allclose(compiled, twin, rtol=1e-10, atol=1e-12)
    return compiled


# -- the programs -------------------------------------------------------------------------


def cubic_loss(w):
    return np.sum(np.tanh(w) ** 2 * w + 0.1 * w**3)


def hessian_vector_product(w, v):
    return np.sum(grad(cubic_loss)(w) * v)


def gradient_penalty(w):
    return cubic_loss(w) + 0.5 * np.sum(grad(cubic_loss)(w) ** 2)


def fit_loss(w, data):
    return np.sum((data * w - 1.0) ** 2)


def one_step_of_meta_learning(w, lr, data):
    adapted = w - lr * grad(fit_loss)(w, data)
    return fit_loss(adapted, data)


def convex(x):
    return np.sum(np.exp(x) - 2.0 * x)


def newton_steps(x):
    for _ in range(3):
        x = x - grad(convex)(x) / 4.0
    return np.sum(x * x)


def newton_steps_with_curvature(x):
    for _ in range(3):
        x = x - grad(convex)(x) / hvp(convex)(x, np.ones_like(x))
    return np.sum(x * x)


def value_and_gradient_inside(x):
    value, gradient = value_and_grad(convex)(x)
    return value * np.sum(gradient)


def tangent_inside(x):
    value, tangent = jvp(convex, (x,), (np.sin(x),))
    return value * tangent


def hvp_inside(x):
    return np.sum(hvp(cubic_loss)(x, x))


def derivative_bound_once(x):
    gradient = grad(convex)
    return np.sum(gradient(x) * gradient(2.0 * x))


def scaled(x, y):
    return np.sum(np.sin(x * y))


def derivative_in_the_second_input(x, y):
    return np.sum(grad(scaled, wrt=1)(x, y) * x)


def both_gradients(x, y):
    gx, gy = grad(scaled, wrt=[0, 1])(x, y)
    return np.sum(gx * gy)


def value_and_both_gradients(x, y):
    value, (gx, gy) = value_and_grad(scaled, wrt=[0, 1])(x, y)
    return value * np.sum(gx + gy)


def quartic_step(x, s):
    return x - 0.1 * grad(lambda z: np.sum(s * z**4))(x)


def through_a_helper(x):
    return np.sum(quartic_step(x, 2.0) ** 2)


GLOBAL_GRADIENT = grad(cubic_loss)


def derivative_made_at_module_level(w):
    return np.sum(GLOBAL_GRADIENT(w) ** 2)


def hvp_in_the_second_input(x, y):
    """Along ``y``: the product's tangent is taken along ``y``, not ``x``."""
    return np.sum(hvp(scaled, wrt=1)(x, y, np.cos(x)) ** 2)


def hvp_of_a_lambda(x, y):
    """The lambda reads the caller's ``y``, lifted as its first input: the product is
    along the lambda's own input, not along ``y``."""
    return np.sum(hvp(lambda z: np.sum(np.sin(z * y) * z))(x, np.cos(x)) * y)


def product(x, y):
    return np.sin(x) * y**2


def pullback_inside(x, y):
    value, pullback = vjp(product, x, y, wrt=[0, 1])
    dx, dy = pullback(np.cos(x))
    return np.sum(value * dx) + np.sum(dy * y)


def pullback_applied_inside(x, y):
    (dy,) = vjp(product, x, y, wrt=1)[1](x * y)
    return np.sum(dy**2)


def hessian_inside(x):
    return np.sum(hessian(convex)(x) * np.outer(x, x))


def hessian_in_the_second_input(x, y):
    return np.sum(hessian(scaled, wrt=1)(x, y) ** 2)


def hessian_of_a_lambda(x, y):
    """The lambda reads the caller's ``y``: lifted, its Hessian in its own input."""
    return np.sum(hessian(lambda z: np.sum(np.sin(z * y) * z))(x) * y)


def matrix_loss(m):
    return np.sum(np.tanh(m @ m))


def hessian_of_a_matrix_input(m):
    return np.sum(hessian(matrix_loss)(m) ** 2)


W = np.array([0.3, -0.4, 0.8])
V = np.array([1.0, 0.5, -2.0])
DATA = np.array([1.0, 2.0, 0.5])

PROGRAMS = [
    (hessian_vector_product, (W, V), 0),
    (gradient_penalty, (W,), 0),
    (one_step_of_meta_learning, (W, np.float64(0.1), DATA), 0),
    (one_step_of_meta_learning, (W, np.float64(0.1), DATA), 1),
    (newton_steps, (np.array([1.0, 0.2]),), 0),
    (newton_steps_with_curvature, (np.array([1.0, 0.2]),), 0),
    (value_and_gradient_inside, (np.array([1.0, 0.5]),), 0),
    (tangent_inside, (np.array([1.0, 0.5]),), 0),
    (hvp_inside, (W,), 0),
    (derivative_bound_once, (np.array([0.4, -0.3]),), 0),
    (derivative_in_the_second_input, (W, V), 0),
    (derivative_in_the_second_input, (W, V), 1),
    (derivative_made_at_module_level, (W,), 0),
    (both_gradients, (W, V), 0),
    (both_gradients, (W, V), 1),
    (value_and_both_gradients, (W, V), 0),
    (through_a_helper, (W,), 0),
    (hvp_in_the_second_input, (W, V), 0),
    (hvp_in_the_second_input, (W, V), 1),
    (hvp_of_a_lambda, (W, V), 0),
    (hvp_of_a_lambda, (W, V), 1),
    (pullback_inside, (W, V), 0),
    (pullback_inside, (W, V), 1),
    (pullback_applied_inside, (W, V), 0),
    (pullback_applied_inside, (W, V), 1),
    (hessian_inside, (W,), 0),
    (hessian_in_the_second_input, (W, V), 0),
    (hessian_in_the_second_input, (W, V), 1),
    (hessian_of_a_lambda, (W, V), 0),
    (hessian_of_a_lambda, (W, V), 1),
    (hessian_of_a_matrix_input, (np.array([[0.3, -0.2], [0.5, 0.1]]),), 0),
]


@pytest.mark.parametrize(
    ("fn", "args", "index"),
    PROGRAMS,
    ids=[f"{fn.__name__}-{index}" for fn, _, index in PROGRAMS],
)
def test_a_derivative_inside_differentiated_code_compiles_through(fn, args, index):
    check_against_oracles(fn, list(args), index)


def test_the_inner_derivative_is_inlined_as_generated_code():
    """The gradient function of the inner derivative is inlined: no call of ``grad``
    and no protocol call of the inner function is left in the outer backward."""
    pair = differentiable(hessian_vector_product)
    code = "\n".join(
        line.split("#")[0] for line in (pair.forward_source() + pair.backward_source()).splitlines()
    )
    assert "grad(" not in code
    assert "op_forward" not in code
    assert "op_backward" not in code


# -- perturbation confusion ---------------------------------------------------------------


def x_times_inner_derivative(x):
    """d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1."""
    return x * grad(lambda y: x + y)(2.0)


def inner_derivative_of_a_product(x):
    """d/dy (x * y) = x, so d/dx of it is 1."""

    def product(y):
        return x * y

    return grad(product)(5.0)


def inner_derivative_at_the_outer_point(x):
    """d/dy (x * y**2) at y = x is 2 x**2; d/dx of it is 4 x."""
    return grad(lambda y: x * y**2)(x)


def inner_derivative_bound_to_a_name(x):
    """The inner lambda reads x where it is called: x = 3 x before the call."""
    inner = grad(lambda y: np.sin(x * y))
    x = 3.0 * x
    return inner(0.5)


@pytest.mark.parametrize(
    ("fn", "x", "expected"),
    [
        (x_times_inner_derivative, np.float64(3.0), 1.0),
        (inner_derivative_of_a_product, np.float64(3.0), 1.0),
        (inner_derivative_at_the_outer_point, np.float64(1.5), 6.0),
        (inner_derivative_bound_to_a_name, np.float64(0.7), None),
    ],
)
def test_nested_derivatives_do_not_confuse_their_perturbations(fn, x, expected):
    compiled = check_against_oracles(fn, [x], 0)
    if expected is not None:
        assert compiled == pytest.approx(expected, abs=1e-12)


def test_a_gradient_of_a_lambda_taking_a_gradient_of_a_lambda():
    """``grad(lambda x: grad(lambda y: ...)(x))``: two lambdas on one line."""
    second = grad(lambda x: grad(lambda y: x * y**3)(x))
    assert second(2.0) == pytest.approx(9 * 2.0**2)  # d/dy (x y**3) at y = x: 3 x**3
    third = grad(lambda x: grad(lambda x: x**4)(x))
    assert third(2.0) == pytest.approx(12 * 2.0**2)


# -- what is refused, located -------------------------------------------------------------


def vjp_without_wrt(x):
    value, pullback = vjp(product, x, x)
    return np.sum(pullback(x)[0])


def vjp_value_read_by_index(x):
    return np.sum(vjp(product, x, x, wrt=0)[0])


@pytest.mark.parametrize(
    ("fn", "words"),
    [(vjp_without_wrt, "wrt written out"), (vjp_value_read_by_index, "vjp called inside")],
)
def test_a_vjp_inside_written_otherwise_is_refused_at_its_call(fn, words):
    with pytest.raises(UnsupportedSyntaxError, match=words) as raised:
        grad(fn)(W)
    assert "vjp(product, x, x" in raised.value.location.text


class Cubic:
    def __init__(self):
        self.weights = np.array([1.0, 2.0])

    def loss(self, x):
        return np.sum(self.weights * x**3)


CUBIC = Cubic()


def method_inside(x):
    return np.sum(grad(CUBIC.loss)(x))


def method_through_a_lambda(x):
    return np.sum(grad(lambda z: CUBIC.loss(z))(x))


def test_a_method_is_refused_with_a_hint_that_works():
    x = np.array([0.3, -0.7])
    with pytest.raises(UnsupportedSyntaxError, match="reached through an object") as raised:
        grad(method_inside)(x)
    assert raised.value.location.text.strip() == "return np.sum(grad(CUBIC.loss)(x))"
    assert "grad(lambda x: CUBIC.loss(x))" in raised.value.hint
    np.testing.assert_allclose(grad(method_through_a_lambda)(x), 6.0 * CUBIC.weights * x)


def test_a_derivative_with_wrt_computed_at_run_time_is_refused():
    def computed_wrt(x, k):
        return np.sum(grad(scaled, wrt=k)(x, x))

    with pytest.raises(UnsupportedSyntaxError, match="written out"):
        grad(computed_wrt)(np.ones(2), 1)


def branching(x):
    if np.sum(x) > 0:
        return np.sum(x**3)
    return np.sum(np.sin(x))


def slope_of_a_branching_function(x):
    return np.sum(grad(branching)(x) * x)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_an_inner_derivative_through_a_branch_is_differentiated_again(sign):
    """The inner function branches on data: its gradient replays the branch, and that
    replay is differentiated again (on either side of the branch)."""
    check_against_oracles(slope_of_a_branching_function, [sign * np.array([0.4, 0.7])], 0)


def test_a_changed_inner_function_gets_its_own_compilation():
    """The outer derivative assumed what ``grad(g)`` differentiates: a global rebound
    between calls is compiled again, never reused stale."""
    namespace = {"np": np, "grad": grad, "scale": 2.0}
    exec_lines = [
        "def inner(x):",
        "    return np.sum(scale * x ** 3)",
        "def outer(x):",
        "    return np.sum(grad(inner)(x) * x)",
    ]
    source = "\n".join(exec_lines) + "\n"
    import linecache

    filename = "<test_compiler_nested_grad changed inner>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - test source
    x = np.array([1.0, 2.0])
    outer_gradient = grad(namespace["outer"])
    np.testing.assert_allclose(outer_gradient(x), 9 * 2.0 * x**2)
    namespace["scale"] = 3.0
    np.testing.assert_allclose(outer_gradient(x), 9 * 3.0 * x**2)


def takes_its_own_gradient(x):
    if np.sum(x) > 10.0:
        return np.sum(x)
    return np.sum(grad(takes_its_own_gradient)(x * 2.0))


def test_a_derivative_of_the_function_itself_is_refused_at_its_call():
    with pytest.raises(UnsupportedSyntaxError, match="recursion") as raised:
        grad(takes_its_own_gradient)(np.ones(2))
    assert "grad(takes_its_own_gradient)(x * 2.0)" in raised.value.location.text


square = lambda x: x * x; cube = lambda x: square(x) * x  # noqa: E702, E731  # fmt: skip
squares_of_slopes = lambda x: grad(lambda y: y**3)(x) * grad(lambda y: y**3)(x)  # noqa: E731


def test_lambdas_of_the_same_parameters_on_one_line_are_told_apart():
    """``grad(grad(lambda x: ...))`` of a lambda calling another lambda of the same line
    and parameters: each is found by the positions of its code."""
    assert grad(grad(lambda x: square(x) * x))(2.0) == pytest.approx(12.0)
    np.testing.assert_allclose(grad(lambda x: np.sum(cube(x)))(np.array([1.0, 2.0])), [3, 12])
    # (3 x**2)**2 = 9 x**4: its derivative 36 x**3
    assert grad(squares_of_slopes)(2.0) == pytest.approx(36.0 * 8.0)


def lambda_with_a_default(x):
    return grad(lambda z, k=2.0: np.sum(k * z**2))(x)[0]


def test_a_lambda_with_defaults_is_refused_where_it_is_written():
    with pytest.raises(UnsupportedSyntaxError, match="takes defaults") as raised:
        grad(lambda_with_a_default)(np.array([1.0, 2.0]))
    assert "lambda z, k=2.0" in raised.value.location.text


HESSIAN_OF_CONVEX = hessian(convex)


def hessian_made_at_module_level(x):
    return np.sum(HESSIAN_OF_CONVEX(x))


def test_a_hessian_made_before_is_refused_at_its_call_too():
    with pytest.raises(UnsupportedSyntaxError, match="hessian called inside") as raised:
        grad(hessian_made_at_module_level)(np.ones(2))
    assert raised.value.location.text.strip() == "return np.sum(HESSIAN_OF_CONVEX(x))"


def branching_fit(w, data):
    if np.sum(w) > 0:
        return np.sum((data * w - 1.0) ** 2)
    return np.sum(w**2)


def step_size_only(lr):
    return branching_fit(W - lr * grad(branching_fit)(W, DATA), DATA)


def step_size_only_bound(lr):
    step = grad(branching_fit)
    return branching_fit(W - lr * step(W, DATA), DATA)


def through_the_weights(w):
    return branching_fit(w - 0.1 * grad(branching_fit)(w, DATA), DATA)


@pytest.mark.parametrize("fn", [step_size_only, step_size_only_bound])
def test_an_inner_derivative_no_gradient_flows_through_runs_as_written(fn):
    """Its function has a branch and the outer derivative does not go through it."""
    check_against_oracles(fn, [np.float64(0.1)], 0)


def test_an_inner_derivative_a_gradient_flows_through_is_differentiated_again():
    """One step of gradient descent on a branching loss, differentiated w.r.t. the
    starting weights: the gradient flows through grad(branching_fit)."""
    check_against_oracles(through_the_weights, [W], 0)


def elementwise(x):
    return np.sin(x)


def gradient_of_a_vector_function(x):
    return np.sum(grad(elementwise)(x))


def test_a_gradient_of_a_function_with_a_vector_output_is_refused():
    """grad refuses a non-scalar output at the front door; inside compiled code too,
    never the gradient of its sum."""
    from autodiff_tutor.errors import NonScalarOutputError

    with pytest.raises(NonScalarOutputError, match="shape \\(2,\\)") as raised:
        grad(gradient_of_a_vector_function)(np.array([0.3, 0.5]))
    assert raised.value.location.text.strip() == "return np.sum(grad(elementwise)(x))"


def _closure_step(x, w):
    def bump(s):
        return np.sum(np.cos(s) * w) + np.sum(x * x)  # reads this helper's x and w

    w = w + 0.1 * grad(bump)(w)
    return np.sum(np.sin(x) * w) + np.sum(w * w)


def _inner_loss(a):
    return np.sum(np.sin(a) * a + 0.1 * a**3)


def _aliased_derivative_step(x, w):
    dg = grad(_inner_loss)  # a derivative bound to a name of the helper's
    w = w - 0.05 * dg(w) * dg(0.5 * w)
    return np.sum(np.sin(x) * w) + 0.1 * np.sum(x * x) + np.sum(w)


def _lambda_step(x, w):
    w = w + 0.1 * grad(lambda s: np.sum(np.cos(s) * w * x))(w)  # reads x and w
    return np.sum(np.sin(x) * w) + np.sum(w * w)


def _tangent_step(x, w):
    def bump(s):
        return np.sin(s) * x

    _, t = jvp(bump, (w,), (np.cos(w),))
    return np.sum(np.sin(x) * t) + np.sum(w * w * t)


def through_a_helper_with_a_lambda(x, w):
    return _lambda_step(x, w)


def through_a_helper_with_a_tangent(x, w):
    return _tangent_step(x, w)


def through_a_helper_with_a_closure(x, w):
    return _closure_step(x, w)


def through_a_helper_with_an_aliased_derivative(x, w):
    return _aliased_derivative_step(x, w)


@pytest.mark.parametrize(
    "fn",
    [
        through_a_helper_with_a_closure,
        through_a_helper_with_a_lambda,
        through_a_helper_with_a_tangent,
        through_a_helper_with_an_aliased_derivative,
    ],
)
@pytest.mark.parametrize("index", [0, 1])
def test_second_derivatives_inline_a_helper_taking_derivatives_of_its_own(fn, index):
    """A module helper that differentiates a def closing over its own names, or calls a
    derivative bound to a local name, is inlined for second derivatives: hvp matches
    central differences of the compiled gradient and autograd running the same code."""
    x, w = np.array([0.3, -0.7, 1.1]), np.array([0.5, 0.2, -0.4])
    v = np.array([0.1, 0.4, -0.3])
    args = [x, w]
    got = hvp(fn, wrt=index)(x, w, v)
    gradient = grad(fn, wrt=index)
    eps = 1e-6
    plus, minus = list(args), list(args)
    plus[index], minus[index] = args[index] + eps * v, args[index] - eps * v
    differences = (gradient(*plus) - gradient(*minus)) / (2 * eps)
    np.testing.assert_allclose(got, differences, rtol=1e-6, atol=1e-8)
    twin = autograd_twin(fn)
    expected = autograd.hessian_vector_product(twin, index)(x, w, v)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_a_def_reading_a_name_the_calling_helper_rebinds_is_refused():
    """``grad(g)`` inside a nested def that binds ``x`` itself, ``g`` closing over the
    outer ``x``: passing the helper's ``x`` would be wrong, so it is refused, located."""

    def shadowed(x, w):
        def g(a):
            return np.sum(a * a * x)

        def h(x):
            return np.sum(grad(g)(x))

        return h(w * 2.0)

    with pytest.raises(UnsupportedSyntaxError, match="a name this helper binds too"):
        grad(shadowed)(np.array([0.3, -0.7]), np.array([0.5, 0.2]))


def cubes(y):
    return np.sum(y**3)


def squares_of_cubes_gradient(x):
    g = grad(cubes, wrt=None)(x)
    return np.sum(g * g)


def scaled_cubes_gradient(x):
    def scaled(y):
        return np.sum(y**3 * x)

    return np.sum(grad(scaled, wrt=None)(x))


def weighted_cubes(p):
    return np.sum(p["w"] ** 3) * p["b"]


def test_wrt_none_of_one_input_is_one_gradient_everywhere() -> None:
    """``grad(f, wrt=None)`` of a function of one input gives that input's gradient,
    not a 1-tuple: inside differentiated code (a def, a closure over the outer
    variable), and under ``jvp`` of it (an array, a dict), as the front door gives."""
    x = np.array([1.0, 2.0, -0.5])
    for outer in (squares_of_cubes_gradient, scaled_cubes_gradient):
        np.testing.assert_allclose(
            grad(outer)(x), central_difference(outer, [x], 0), rtol=1e-6, atol=1e-8
        )
    v = np.array([0.5, -1.0, 2.0])
    gradient, tangent = jvp(grad(cubes, wrt=None), (x,), (v,))
    np.testing.assert_allclose(gradient, 3 * x**2)
    np.testing.assert_allclose(tangent, 6 * x * v)
    p = {"w": np.array([1.0, 2.0]), "b": 3.0}
    dp = {"w": np.array([1.0, -1.0]), "b": 0.5}
    gradient, tangent = jvp(grad(weighted_cubes, wrt=None), (p,), (dp,))
    assert set(gradient) == set(tangent) == {"w", "b"}
    np.testing.assert_allclose(tangent["w"], 6 * p["w"] * dp["w"] * 3.0 + 3 * p["w"] ** 2 * 0.5)
    np.testing.assert_allclose(tangent["b"], np.sum(3 * p["w"] ** 2 * dp["w"]))


def cubed_times(x, y):
    return np.sum(x**3 * y)


HVP_OF_EVERY_INPUT = hvp(cubed_times, wrt=None)


def hvp_of_every_input(x):
    return np.sum(hvp(cubed_times, wrt=None)(x, x, np.ones(2)) * x)


def hvp_of_a_list(x):
    return np.sum(hvp(cubed_times, wrt=[0])(x, x, np.ones(2)) * x)


def hessian_of_every_input(x):
    return np.sum(hessian(cubes, wrt=None)(x))


def hvp_made_of_every_input(x):
    return np.sum(HVP_OF_EVERY_INPUT(x, x, np.ones(2)) * x)


@pytest.mark.parametrize(
    "fn", [hvp_of_every_input, hvp_of_a_list, hessian_of_every_input, hvp_made_of_every_input]
)
def test_hvp_and_hessian_of_several_inputs_are_refused_as_the_front_door_refuses(fn):
    """``hvp`` and ``hessian`` differentiate one input: ``wrt=None`` or a list is
    refused inside differentiated code with the front door's own error, located at the
    call, and not read as the first input."""
    x = np.array([0.5, 2.0])
    with pytest.raises(ArgumentError) as inside:
        grad(fn)(x)
    assert "one input to differentiate, by position or name" in inside.value.message
    assert inside.value.location.filename == __file__
    with pytest.raises(ArgumentError) as outside:
        fn(x)
    assert inside.value.message == outside.value.message


def penalized(w, x, lam=0.1, p=2):
    return np.sum((x @ w) ** 2) + lam * np.sum(w**p)


def penalized_by_keyword(w, x, *, lam=0.1, p=2):
    return np.sum((x @ w) ** 2) + lam * np.sum(w**p)


MIXING = np.array([[1.0, 2.0], [0.5, -0.3]])


def squared_gradient_of_penalized(w):
    return np.sum(grad(penalized)(w, MIXING, lam=0.5) ** 2)


def squared_gradient_of_penalized_by_keyword(w):
    return np.sum(grad(penalized_by_keyword)(w, MIXING, lam=0.5) ** 2)


@pytest.mark.parametrize(
    "outer", [squared_gradient_of_penalized, squared_gradient_of_penalized_by_keyword]
)
def test_a_gradient_takes_the_functions_defaults_and_keyword_only_parameters(outer):
    """``grad(f)`` of a function with defaults (positional or keyword-only) is called
    as ``f`` is: inside differentiated code with some left out, under ``hvp``, and
    compiled again (``differentiable(grad(f))``)."""
    w, v = np.array([0.5, -1.0]), np.array([1.0, 0.3])
    np.testing.assert_allclose(grad(outer)(w), central_difference(outer, [w], 0), rtol=1e-6)
    f = penalized if outer is squared_gradient_of_penalized else penalized_by_keyword
    hessian_of_f = 2 * MIXING.T @ MIXING + 0.2 * np.eye(2)
    np.testing.assert_allclose(hvp(f)(w, MIXING, v), hessian_of_f @ v)
    np.testing.assert_allclose(differentiable(grad(f))(w, MIXING), grad(f)(w, MIXING))


def constant():
    return 1.0


def test_the_gradient_of_a_function_of_no_inputs_is_an_empty_tuple():
    assert grad(constant, wrt=None)() == ()
    assert differentiable(grad(constant, wrt=None))() == ()


ROW = np.array([1.0, 2.0, 3.0])


def gradient_of_a_closure_by_a_captured_name(x):
    def inner(z):
        return np.sum(z * x**2)

    return np.sum(grad(inner, wrt="x")(ROW))


def gradient_of_a_lambda_by_a_captured_name(x):
    return np.sum(grad(lambda z: np.sum(z * x**2), wrt="x")(ROW))


def gradient_of_a_closure_out_of_range(x):
    def inner(z):
        return np.sum(z * x**2)

    return np.sum(grad(inner, wrt=-2)(ROW))


def gradient_of_a_module_function_out_of_range(x):
    return np.sum(grad(cubed_times, wrt=5)(x, x))


@pytest.mark.parametrize(
    ("outer", "words"),
    [
        (gradient_of_a_closure_by_a_captured_name, "wrt='x' is not a parameter of inner"),
        (gradient_of_a_lambda_by_a_captured_name, "wrt='x' is not a parameter of lambda_"),
        (gradient_of_a_closure_out_of_range, "wrt=-2 is out of range: inner has 1"),
        (gradient_of_a_module_function_out_of_range, "wrt=5 is out of range: cubed_times"),
    ],
)
def test_a_wrt_that_names_no_parameter_is_refused_at_the_call(outer, words):
    """A closure's ``wrt`` names its own parameters only (the variables it reads from
    around it are not), as the call outside differentiated code says: refused where
    Python refuses it, never a gradient with respect to the captured variable, and
    located at the derivative call in the user's file."""
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(ArgumentError, match=words) as inside:
        grad(outer)(x)
    assert inside.value.location.filename == __file__
    assert "wrt=" in inside.value.location.text
    with pytest.raises(ArgumentError, match=words):
        outer(x)


def cubes_scaled(x, *, s=3.0):
    return np.sum(x**3) * s


DIRECTION = np.array([1.0, 0.5, -2.0])


def directional_by_jvp(x):
    return np.sum(jvp(cubes_scaled, (x,), (DIRECTION,))[1] * x)


def curvature_by_hvp(x):
    return np.sum(hvp(cubes_scaled)(x, DIRECTION, s=2.0) * x)


def curvature_by_hessian(x):
    return np.sum(hessian(cubes_scaled)(x))


@pytest.mark.parametrize("outer", [directional_by_jvp, curvature_by_hvp, curvature_by_hessian])
def test_forward_mode_inside_takes_keyword_only_parameters(outer):
    """``jvp``, ``hvp`` and ``hessian`` of a function with a keyword-only parameter,
    inside differentiated code, leaving it out or passing it by keyword, as outside;
    a float32 input keeps its dtype through ``hessian``."""
    x = np.array([0.5, -1.0, 2.0])
    value, gradient = value_and_grad(outer)(x)
    assert np.isclose(value, outer(x))
    np.testing.assert_allclose(gradient, central_difference(outer, [x], 0), rtol=1e-6)
    if outer is curvature_by_hessian:
        assert value_and_grad(outer)(x.astype(np.float32))[0].dtype == np.float32
    assert np.allclose(hvp(cubes_scaled)(x, DIRECTION, s=2.0), 12.0 * x * DIRECTION)
    assert np.allclose(hessian(cubes_scaled)(x, s=2.0), np.diag(12.0 * x))


def pullback_with_a_repeated_wrt(x):
    value, pullback = vjp(cubed_times, x, ROW, wrt=[0, 0])
    return np.sum(pullback(1.0)[0])


def hessian_out_of_range(x):
    return np.sum(hessian(cubed_times, wrt=5)(x, ROW))


@pytest.mark.parametrize(
    ("outer", "words"),
    [
        (pullback_with_a_repeated_wrt, "wrt names a parameter twice: ['x', 'x']"),
        (hessian_out_of_range, "wrt=5 is out of range: cubed_times has 2 parameters ['x', 'y']"),
    ],
)
def test_a_bad_wrt_of_vjp_or_hessian_inside_is_refused_as_outside(outer, words):
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(ArgumentError) as inside:
        grad(outer)(x)
    assert inside.value.message == words
    assert inside.value.location.filename == __file__
    with pytest.raises(ArgumentError) as outside:
        outer(x)
    assert outside.value.message == words


def hessian_by_keyword(x):
    return np.sum(hessian(cubed_times)(x, y=ROW) * x)


def test_hessian_inside_takes_arguments_by_keyword():
    x = np.array([0.5, -1.0, 2.0])
    by_position = hessian(cubed_times)(x, ROW)
    np.testing.assert_allclose(hessian(cubed_times)(x=x, y=ROW), by_position)
    np.testing.assert_allclose(hessian(cubed_times)(x, y=ROW), by_position)
    value, gradient = value_and_grad(hessian_by_keyword)(x)
    assert np.isclose(value, hessian_by_keyword(x))
    np.testing.assert_allclose(gradient, central_difference(hessian_by_keyword, [x], 0), rtol=1e-6)


def jvp_of_a_lambda_given_too_many(x):
    return np.sum(jvp(lambda z: np.sum(z * x), (ROW, x), (ROW, None))[1])


def test_jvp_of_a_closure_given_too_many_arguments_is_refused_as_outside():
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(ArgumentError) as inside:
        grad(jvp_of_a_lambda_given_too_many)(x)
    with pytest.raises(ArgumentError) as outside:
        jvp_of_a_lambda_given_too_many(x)
    assert inside.value.message == outside.value.message
    assert inside.value.location.filename == __file__


def squashed_energy(x, squash):
    return np.sum(squash(x) ** 2)


def squashed_by_default(x, squash=np.sin):
    return np.sum(squash(x) ** 2)


def squash_then_scale(squash, x, scale):
    return scale * np.sum(squash(x) ** 3)


def cubed(z):
    return z**3


def gradient_of_a_function_passed(x):
    return np.sum(grad(squashed_energy)(x, np.sin) * x)


def gradient_of_a_function_default(x):
    return np.sum(grad(squashed_by_default)(x) * x)


def gradient_of_a_def_passed_by_keyword(x):
    return np.sum(grad(squashed_energy)(x, squash=cubed) * x)


def gradient_wrt_after_the_function(x):
    return np.sum(grad(squash_then_scale, wrt=1)(np.tanh, x, 2.0) ** 2)


def value_and_gradient_of_a_function_passed(x):
    value, g = value_and_grad(squashed_energy)(x, np.tanh)
    return value * np.sum(g)


def product_of_a_function_passed(x):
    return np.sum(hvp(squashed_energy)(x, np.sin, x) * x)


@pytest.mark.parametrize(
    "fn",
    [
        gradient_of_a_function_passed,
        gradient_of_a_function_default,
        gradient_of_a_def_passed_by_keyword,
        gradient_wrt_after_the_function,
        value_and_gradient_of_a_function_passed,
        product_of_a_function_passed,
    ],
)
def test_a_derivative_of_a_def_given_a_function(fn):
    """The function given (or the default) is resolved while compiling: the inner
    derivative is of a lambda calling the def with it (it was refused: "calling the
    local variable 'squash'")."""
    x = np.array([0.3, -0.7, 1.1])
    expected = central_difference(fn, [x], 0)
    for _ in range(2):
        np.testing.assert_allclose(grad(fn)(x), expected, rtol=1e-6, atol=1e-8)


def differentiates_the_function_itself(x):
    return np.sum(grad(squashed_energy, wrt=1)(x, np.sin))


def test_a_derivative_with_respect_to_the_function_given_is_refused_as_outside():
    with pytest.raises(NonDifferentiableInputError) as raised:
        grad(differentiates_the_function_itself)(np.array([0.3, -0.7]))
    assert "with respect to 'squash': it is given a function" in " ".join(str(raised.value).split())
    assert "grad(squashed_energy, wrt=1)(x, np.sin)" in raised.value.location.text
