"""Writes into arrays that other names share: every alias and view sees the write.

Each program writes in place into a local array that an alias (``z = y``) or a view
(``y.T``, ``y[1:]``, ``y.reshape(-1)``) shares, then reads the others. The compiler
gives them all new versions (``front.normalize.aliases``); the value must be numpy's and
the gradient must agree with central differences and with autograd on a *twin*: the
same function written without in-place writes (autograd cannot follow writes).
Writes that reach a parameter stay refused, at the user's line.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz.check import Loaded
from oracles import autograd_gradient, central_difference
from program_checks import assert_right_in_mode
from wrapped_text import flat

import autodiff_tutor as ad
from autodiff_tutor.errors import UnsupportedSyntaxError

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5], [0.9, -0.2, 0.6]])


def alias_add(x):
    y = x * 1.0
    z = y
    z += np.sin(x)
    return np.sum(y * y)


def alias_add_twin(x):
    y = x * 1.0 + np.sin(x)
    return np.sum(y * y)


def write_through_transpose(x):
    y = x + 0.0
    v = y.T
    v[0] = np.tanh(x[1])
    return np.sum(y * x) + np.sum(v)


def write_through_transpose_twin(x):
    v = np.concatenate([np.tanh(x[1])[None], x.T[1:]])
    return np.sum(v.T * x) + np.sum(v)


def base_write_seen_by_views(x):
    y = x * 2.0
    r = y.reshape(-1)
    c = y[:, 1]
    t = np.transpose(y)
    y *= x
    return np.sum(r[:4] ** 2) + np.sum(c * x[0]) + np.sum(t * x)


def base_write_seen_by_views_twin(x):
    y = x * 2.0 * x
    return np.sum(y.reshape(-1)[:4] ** 2) + np.sum(y[:, 1] * x[0]) + np.sum(y.T * x)


def view_of_a_view(x):
    y = x + 0.0
    t = np.transpose(y)
    row = t[1]
    row *= 3.0
    return np.sum(y * y) + np.sum(t[1])


def view_of_a_view_twin(x):
    y = x * np.array([1.0, 3.0, 1.0])
    return np.sum(y * y) + np.sum(y[:, 1])


def two_writes_in_turn(x):
    y = x - 1.0
    z = y
    v = y[1:]
    y[0] = x[2] * x[1]
    v += z[0]
    return np.sum(z * np.cos(x)) + np.sum(v)


def two_writes_in_turn_twin(x):
    first = x[2] * x[1]
    rest = x[1:] - 1.0 + first
    y = np.concatenate([first[None], rest])
    return np.sum(y * np.cos(x)) + np.sum(rest)


def scalar_element_is_a_copy(w):
    y = w * 1.0
    s = y[0]
    y[0] = 5.0 * w[1]
    return s * np.sum(y)


def scalar_element_is_a_copy_twin(w):
    y = np.concatenate([(5.0 * w[1])[None], w[1:]])
    return w[0] * np.sum(y)


def alias_without_gradient(x):
    m = np.zeros_like(x)  # no gradient flows through m, n
    n = m
    n += 1.0
    n[0] = 3.0
    return np.sum(m * x) + np.sum(n * np.sin(x))


def alias_without_gradient_twin(x):
    m = np.where(np.arange(3)[:, None] == 0, 3.0, np.ones((3, 3)))
    return np.sum(m * x) + np.sum(m * np.sin(x))


CASES = [
    (alias_add, alias_add_twin, X),
    (write_through_transpose, write_through_transpose_twin, X),
    (base_write_seen_by_views, base_write_seen_by_views_twin, X),
    (view_of_a_view, view_of_a_view_twin, X),
    (two_writes_in_turn, two_writes_in_turn_twin, X),
    (scalar_element_is_a_copy, scalar_element_is_a_copy_twin, X[0]),
    (alias_without_gradient, alias_without_gradient_twin, X),
]


@pytest.mark.parametrize(("fn", "twin", "x"), CASES, ids=[c[0].__name__ for c in CASES])
def test_every_name_sharing_the_array_sees_the_write(fn, twin, x):
    value, gradient = ad.value_and_grad(fn)(x.copy())
    assert np.isclose(value, fn(x.copy()), rtol=1e-12)
    assert np.isclose(twin(x.copy()), fn(x.copy()), rtol=1e-12)  # the twin is the same math
    np.testing.assert_allclose(gradient, central_difference(fn, [x], 0), atol=1e-6)
    np.testing.assert_allclose(gradient, autograd_gradient(twin, [x], 0), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("fn", "twin", "x"), CASES, ids=[c[0].__name__ for c in CASES])
def test_forward_mode_sees_the_write_too(fn, twin, x):
    direction = np.random.default_rng(3).normal(size=x.shape)
    value, slope = ad.jvp(fn, (x.copy(),), (direction,))
    assert np.isclose(value, fn(x.copy()), rtol=1e-12)
    expected = np.sum(autograd_gradient(twin, [x], 0) * direction)
    assert np.isclose(slope, expected, rtol=1e-10, atol=1e-12)


# -- numpy's view or copy depends on the memory layout: decided at run time ----------------


def reshaped_then_written(x):
    y = x * 1.0  # laid out like x: a transposed x gives a Fortran-ordered y
    r = y.reshape(-1)  # a view of a C-ordered y, a copy of a Fortran-ordered one
    y += 1.0
    return np.sum(r * r * x.reshape(-1))


def _difference(fn, x, eps=1e-6):
    """Central differences that keep ``x``'s memory layout (the oracle above does not)."""
    gradient = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(order="K"), x.copy(order="K")
        plus[i] += eps
        minus[i] -= eps
        gradient[i] = (fn(plus) - fn(minus)) / (2 * eps)
    return gradient


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_reshape_that_copied_does_not_see_the_write(order):
    x = np.asarray(X, order=order)
    value, gradient = ad.value_and_grad(reshaped_then_written)(x.copy(order="K"))
    assert np.isclose(value, reshaped_then_written(x.copy(order="K")), rtol=1e-12)
    np.testing.assert_allclose(gradient, _difference(reshaped_then_written, x), atol=1e-6)


def test_the_generated_code_says_what_it_does():
    source = ad.differentiable(alias_add).forward_source()
    assert "shares_memory(z, y)" in source


# -- writes that reach the caller's array stay refused --------------------------------------


def write_through_a_view_of_a_parameter(x):
    v = x.T
    v[0] = 1.0
    return np.sum(x)


def write_through_an_alias_of_a_parameter(x):
    z = x
    z += 1.0
    return np.sum(x)


@pytest.mark.parametrize(
    "fn", [write_through_a_view_of_a_parameter, write_through_an_alias_of_a_parameter]
)
def test_a_write_reaching_a_parameter_is_refused_at_its_line(fn):
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.grad(fn)(X.copy())
    assert info.value.location.line == fn.__code__.co_firstlineno + 2
    assert "a parameter" in flat(str(info.value))


def scale_in_place(a, b):
    a *= b
    return a


def first_element_set(a):
    r = a.reshape(-1)
    r[0] = 0.5
    return a


def helper_writes_the_parameter_result_unused(x):
    s = scale_in_place(x, np.cos(x))  # noqa: F841 - a result nobody reads
    return np.sum(x * x)


def helper_writes_a_view_of_the_parameter_result_unused(x):
    r = first_element_set(x[0])  # noqa: F841 - a result nobody reads
    return np.sum(x * x)


def helper_writes_a_local_result_unused(x):
    y = x * 1.0
    s = scale_in_place(y, np.cos(x))  # noqa: F841 - a result nobody reads
    return np.sum(y * y)


@pytest.mark.parametrize(
    ("fn", "write"),
    [
        (helper_writes_the_parameter_result_unused, "a *= b"),
        (helper_writes_a_view_of_the_parameter_result_unused, "r[0] = 0.5"),
        (helper_writes_a_local_result_unused, "a *= b"),
    ],
)
def test_a_helper_writing_into_its_argument_is_refused_when_its_result_is_unused(fn, write):
    """The compiled code called the helper as the plain function (no gradient flows
    through its unused result): it wrote into the caller's array, which the compiled
    code read as unchanged, a silently wrong value and gradient (fuzz construct
    param_helper_write). The helper is read when the caller is compiled: refused there,
    at the helper's line, in reverse and forward mode."""
    for call in (
        lambda: ad.value_and_grad(fn)(X.copy()),
        lambda: ad.jvp(fn, (X.copy(),), (np.ones_like(X),)),
    ):
        with pytest.raises(UnsupportedSyntaxError) as info:
            call()
        assert info.value.location.filename == __file__
        assert write in info.value.location.text
        assert "would change, in place" in flat(str(info.value))


def result_of_a_clean_helper_unused(x):
    s = scale_by_two(x)  # noqa: F841 - a result nobody reads
    return np.sum(x * x)


def scale_by_two(a):
    return a * 2.0


def test_a_helper_whose_result_is_unused_still_compiles():
    value, gradient = ad.value_and_grad(result_of_a_clean_helper_unused)(X.copy())
    assert np.isclose(value, np.sum(X * X))
    np.testing.assert_allclose(gradient, 2 * X)


# -- what is not followed yet stays refused (never a stale value) ---------------------------


def write_in_a_branch(x):
    y = x * 1.0
    z = y
    if np.sum(x) > 0:
        z += x
    return np.sum(y * y)


def spread_then_written_in_a_loop(x):
    y = x * 1.0
    v = y.T
    y += 1.0  # v sees this write
    for _ in range(2):
        y += x  # and these (a loop body: not followed)
    return np.sum(v * v)


@pytest.mark.parametrize("fn", [write_in_a_branch, spread_then_written_in_a_loop])
def test_a_write_not_followed_is_refused_at_its_line(fn):
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.grad(fn)(X.copy())
    assert info.value.location.filename == __file__
    assert "shares it and is read after the write" in flat(str(info.value))


def element_read_then_written_in_a_loop(w):
    y = w * 1.0
    s = y[0]
    for _ in range(2):
        y[1] = y[1] * s
    return s + np.sum(y)


def element_copied_then_written_in_a_loop(w):
    y = w * 1.0
    s = y[0].copy()
    for _ in range(2):
        y[1] = y[1] * s
    return s + np.sum(y)


def element_copied_twin(w):
    return w[0] + w[0] + w[1] * w[0] * w[0] + w[2]


def test_an_element_read_is_not_blamed_as_a_view_and_the_hint_works():
    """``s = y[0]`` is a view of a 2-D y but a copy of one number of a 1-D y: the
    message says it *may* share y, and its hint (copy what you read) compiles right."""
    w = np.array([1.0, 2.0, 3.0])
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.grad(element_read_then_written_in_a_loop)(w)
    message = flat(str(info.value))
    assert "'s' may share it (an element read is a view unless it is a single number)" in message
    assert "s = y[0].copy()" in info.value.hint
    assert (
        info.value.location.line == element_read_then_written_in_a_loop.__code__.co_firstlineno + 4
    )
    fixed = element_copied_then_written_in_a_loop
    np.testing.assert_allclose(ad.grad(fixed)(w), central_difference(fixed, [w], 0), atol=1e-8)
    np.testing.assert_allclose(ad.grad(fixed)(w), autograd_gradient(element_copied_twin, [w], 0))


# -- every way numpy makes a view, written through either side -------------------------

VIEWS = [
    "y.T",
    "y.transpose()",
    "np.transpose(y, (1, 0))",
    "y.transpose(1, 0)",
    "y.swapaxes(0, 1)",
    "np.moveaxis(y, 0, 1)",
    "y.reshape(-1)",
    "np.ravel(y)",
    "y.T.reshape(-1)",  # a copy: numpy cannot flatten a transposed array without one
    "np.squeeze(y[None])",
    "np.expand_dims(y, 0)",
    "np.atleast_3d(y)",
    "y[...]",
    "y[1:, ::2]",
    "y[:, None, 1]",
    "y[np.array([0, 1])]",  # copies
    "y[y > 0]",
    "y.copy()",
    "np.flip(y)",
    "np.flip(y, 1)",
    "np.fliplr(y)",
    "np.flipud(y)",
    "np.rot90(y)",
    "np.rot90(y, 2, axes=(1, 0))",
    "np.rot90(y, k=-1)",
]
WRITES = ["y *= x", "y[0] = x[1] * 2.0", "v[0] = np.sin(x[0, 0])", "v *= 2.0"]


def _program(
    view: str, write: str, start: str = "x * 1.0", result: str = "np.sum(v * v) + np.sum(y * x)"
) -> Loaded:
    source = (
        "import numpy as np\n\n\ndef f(x):\n"
        f"    y = {start}\n"
        f"    v = {view}\n"
        f"    {write}\n"
        f"    return {result}\n"
    )
    return Loaded(source, seed=0)


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("view", VIEWS)
def test_a_write_through_a_view_or_its_array_in_both_modes(view, write):
    loaded = _program(view, write)
    fn = loaded.f
    value, gradient = ad.value_and_grad(fn)(X.copy())
    assert np.isclose(value, fn(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(fn, [X], 0), atol=1e-6)
    direction = np.random.default_rng(4).normal(size=X.shape)
    _, slope = ad.jvp(fn, (X.copy(),), (direction,))
    assert np.isclose(slope, np.sum(gradient * direction), rtol=1e-10)
    loaded.close()


def written_through_a_view_then_in_a_branch(x):
    y = x * 1.0
    v = y[1:]
    v[0] = 5.0 * x[0]
    if np.sum(x) > 0:
        y += x
        s = np.sum(v * v)
    else:
        s = np.sum(v)
    return s + np.sum(y)


def written_through_a_view_then_in_a_branch_twin(x):
    y = np.concatenate([x[:1], 5.0 * x[:1], x[2:]])
    if np.sum(x) > 0:
        y = y + x
        return np.sum(y[1:] * y[1:]) + np.sum(y)
    return np.sum(y[1:]) + np.sum(y)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_versions_made_by_a_write_are_fresh_after_a_later_branch(sign):
    """The put-back ``y_2 = assign_at(y, at[1:], v_2)`` makes a new array, so whether
    ``v_2`` is ``y_2[1:]`` is inherited from the first test, not asked again in the
    branch; and the branch's join of fresh versions is fresh: the program compiles."""
    fn, twin = written_through_a_view_then_in_a_branch, written_through_a_view_then_in_a_branch_twin
    x = sign * np.array([0.5, 1.0, 2.0])
    value, gradient = ad.value_and_grad(fn)(x.copy())
    assert np.isclose(value, fn(x.copy()), rtol=1e-12)
    assert np.isclose(twin(x.copy()), fn(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(fn, [x], 0), atol=1e-6)
    np.testing.assert_allclose(gradient, autograd_gradient(twin, [x], 0), rtol=1e-12)


def reshaped_after_an_update_with_another_layout(x, w):
    v1 = np.transpose(x) + 0.0  # Fortran-ordered
    v1 += np.sin(np.ones((4, 3)) * w[0])  # numpy keeps v1's layout; v1 + ... would not
    v2 = v1.reshape(-1)  # so this is a copy in numpy
    v1 *= 2.0
    return np.sum(v2 * v2)


def test_a_reshape_whose_layout_the_compiled_code_may_not_share_is_refused():
    """In numpy ``v1 += ...`` keeps v1's Fortran order, so its reshape is a copy; compiled
    as ``v1 + ...`` it would be C-ordered and its reshape a view that sees the next
    write (a value 4x off). Refused at that write, naming the update whose layout
    decides, with a hint whose rewrite compiles."""
    x, w = np.random.default_rng(0).normal(size=(3, 4)), np.ones(3)
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.value_and_grad(reshaped_after_an_update_with_another_layout)(x, w)
    assert info.value.location.line == (
        reshaped_after_an_update_with_another_layout.__code__.co_firstlineno + 4
    )
    # the message names the update whose layout decides, and the hint's rewrite compiles
    first = reshaped_after_an_update_with_another_layout.__code__.co_firstlineno
    text = flat(info.value.message)
    assert f"memory layout that 'v1 += ...' (line {first + 2}) leaves" in text
    assert f"write 'v1 += ...' on line {first + 2} as 'v1 = v1 + ...'" in flat(info.value.hint)


def reshaped_after_the_hints_rewrite(x, w):
    v1 = np.transpose(x) + 0.0
    v1 = v1 + np.sin(np.ones((4, 3)) * w[0])  # the hint's rewrite: numpy's own layout
    v2 = v1.reshape(-1)
    v1 *= 2.0
    return np.sum(v2 * v2)


def test_the_layout_hints_rewrite_is_differentiated():
    x, w = np.random.default_rng(0).normal(size=(3, 4)), np.array([0.4, 1.0, 1.0])
    value, (dx, dw) = ad.value_and_grad(reshaped_after_the_hints_rewrite, wrt=[0, 1])(x, w)
    assert np.isclose(value, reshaped_after_the_hints_rewrite(x.copy(), w.copy()), rtol=1e-12)
    fn = reshaped_after_the_hints_rewrite
    np.testing.assert_allclose(dx, central_difference(fn, [x, w], 0), atol=1e-6)
    np.testing.assert_allclose(dw, central_difference(fn, [x, w], 1), atol=1e-6)


def written_through_a_function_view(x):
    c = np.ones_like(x) * 2.0  # no gradient: the step keeps the call np.reshape(c, ...)
    v = np.reshape(c, (-1,))
    v *= 2.0
    return np.sum(v[:3] * x[0, :3]) + np.sum(np.tanh(x))


def test_a_function_view_without_gradient_written_is_differentiated():
    """``np.reshape(c, ...)`` of an array without gradient, written through: a call of
    numpy's function (not a method of an array named 'np'), differentiated right."""
    fn = written_through_a_function_view
    value, gradient = ad.value_and_grad(fn)(X.copy())
    assert np.isclose(value, fn(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(fn, [X], 0), atol=1e-6)


VIEWS_WITHOUT_GRADIENT = [
    "y.T",
    "np.transpose(y)",
    "np.reshape(y, (-1,))",
    "y.reshape(-1)",
    "np.expand_dims(y, 0)",
    "y[1:]",
    "y[0]",
    "y[[0, 1]]",  # a copy: the write is not seen (shares_memory says so at run time)
    "np.flip(y, 1)",
    "np.flipud(y)",
    "np.rot90(y, 3)",
]


@pytest.mark.parametrize("write", ["v *= 2.0", "v[0] = 3.0", "y += 1.0"])
@pytest.mark.parametrize("view", VIEWS_WITHOUT_GRADIENT)
def test_a_view_of_an_array_without_gradient_sees_writes_both_ways(view, write):
    """The array and its view carry no gradient, so the compiler keeps the user's
    expression (a step without gradient); a write through either is spread to the other
    as for arrays with gradient (``np.expand_dims(y, 0)`` included: the write reaches y)."""
    loaded = _program(view, write, start="np.ones_like(x) * 0.5")
    fn = loaded.f
    both = ad.value_and_grad(fn)
    for _ in range(2):  # the general pair, then the pair specialized on the shapes
        value, gradient = both(X.copy())
        assert np.isclose(value, fn(X.copy()), rtol=1e-12)
        np.testing.assert_allclose(gradient, central_difference(fn, [X], 0), atol=1e-6)
    loaded.close()


@pytest.mark.parametrize(
    "view", ["np.expand_dims(y, 0)[0]", "y.T[0]", "y.reshape(-1)[:3]", "np.asarray(y)[0]"]
)
def test_a_view_of_a_view_without_gradient_written_is_refused(view):
    """A view of a view of y, one expression without gradient, shares y's memory: the
    write through it is refused at the write, naming y."""
    with pytest.raises(UnsupportedSyntaxError) as info:
        loaded = _program(view, "v *= 2.0", "np.ones_like(x) * 0.5", "np.sum(y * x)")
        ad.value_and_grad(loaded.f)(X.copy())
    assert info.value.location.line == 7
    assert "'y' shares it and is read after the write" in flat(info.value.message)


def _scale_in_place(a, b):
    a *= b
    return np.sin(a) + a


class _WritesThroughAHelper:
    def __init__(self):
        self.params = {"w": np.linspace(0.2, 0.9, 4)}

    def loss(self, x):
        w = self.params["w"]
        unused = _scale_in_place(x, 0.1 * np.sum(np.sin(w)))  # noqa: F841 - its write counts
        return 0.1 * np.sum(x * x) + np.sum(w)


@pytest.mark.parametrize("wrt", ["x", "self.params"])
def test_a_method_whose_helper_writes_into_its_argument_is_refused(wrt):
    """A method compiled with its object's attributes as leaves reads the helpers it
    calls like any function: the helper's write into the caller's array (a value the
    compiled code would not see) is refused at the helper's line."""
    model = _WritesThroughAHelper()
    with pytest.raises(UnsupportedSyntaxError, match="would change, in place"):
        ad.value_and_grad(model.loss, wrt=wrt)(np.linspace(-1.0, 1.0, 4))


def transpose_view(x):
    t = x + 0.0
    v = np.transpose(t)
    t *= 2.0
    return np.sum(v * v)


def reshape_view(x):
    t = x + 0.0
    v = np.reshape(t, (-1,))
    t /= 2.0
    return np.sum(v * v)


def transpose_view_element_write(x):
    t = x + 0.0
    v = np.transpose(t)
    t[:, 0] = 1.5
    return np.sum(v * v)


def squeeze_view(x):
    t = x + 0.0
    v = np.squeeze(t[None])
    t *= 2.0
    return np.sum(v * v)


@pytest.mark.parametrize("mode", ["compiler", "jvp"])
@pytest.mark.parametrize(
    "fn", [transpose_view, reshape_view, squeeze_view, transpose_view_element_write]
)
def test_a_view_made_by_a_numpy_function_sees_an_update_of_its_array(mode, fn):
    """A view taken by a numpy function (``np.transpose``, ``np.reshape``,
    ``np.squeeze``), not a method or an index, is an alias too: an in-place update of
    its array (``t *= 2.0``, ``t[:, 0] = 1.5``) changes what it reads, in reverse and
    forward mode."""
    assert_right_in_mode(mode, fn, np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]]))


# -- flips and rotations are views; np.unstack gives views; np.diag of a matrix too ------

W = np.array([1.0, 2.0, 3.0])


def write_through_flip(x):
    t = x * 2.0
    r = np.flip(t)
    r[0] = 0.0  # numpy: t[2] = 0
    return np.sum(t * W)


def write_base_read_flip(x):
    t = x * 2.0
    r = np.flip(t)
    t[0] = 0.0  # numpy: r[2] = 0
    return np.sum(r * W)


def write_through_rot90(x):
    t = x.reshape(1, 3) * 2.0
    r = np.rot90(t)  # (3, 1): r[0, 0] is t[0, 2]
    r[0, 0] = 0.0
    return np.sum(t * W)


def added_through_flipud(x):
    t = np.stack([x, x * x]) * 2.0
    r = np.flipud(t)
    r += x  # numpy: both rows of t
    return np.sum(t * np.stack([W, W * W]))


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
@pytest.mark.parametrize(
    "fn", [write_through_flip, write_base_read_flip, write_through_rot90, added_through_flipud]
)
def test_a_write_through_a_flip_or_a_rotation_reaches_its_array(mode, fn):
    """``np.flip``, ``np.fliplr``, ``np.flipud`` and ``np.rot90`` return views, as
    ``t[::-1]`` does: a write through the view changes its array, and a write into the
    array is seen through the view (the compiler puts the view back with the same flip,
    or the rotation the other way)."""
    assert_right_in_mode(mode, fn, np.array([0.5, 1.2, 0.7]))


def test_a_write_through_a_flip_is_numpys_value():
    """The bug hunt's numbers: numpy 5.8 with gradient [2, 4, 0] (a copy gave 10.0)."""
    value, gradient = ad.value_and_grad(write_through_flip)(np.array([0.5, 1.2, 0.7]))
    assert np.isclose(value, 5.8)
    np.testing.assert_allclose(gradient, [2.0, 4.0, 0.0])


def unstacked(x):
    t = np.stack([x, x * 2.0])
    a, b = np.unstack(t)  # views of t's rows
    a[1] = 0.0
    return np.sum(t[0] * W)


def unstacked_then_copied(x):
    t = np.stack([x, x * 2.0])
    a, b = np.unstack(t)
    a = a.copy()  # the hint's first way: t keeps its values
    a[1] = 0.0
    return np.sum(t[0] * W) + np.sum(a)


def unstacked_written_by_name(x):
    t = np.stack([x, x * 2.0])
    t[0, 1] = 0.0  # the hint's second way: the write into t itself
    a, b = np.unstack(t)
    return np.sum(t[0] * W) + np.sum(a)


def test_a_write_through_an_unstacked_row_is_refused_with_hints_that_work():
    """``np.unstack`` returns views of its input, as ``np.split`` does: a write through
    one, with the input read after it, is refused at the write (it was a copy, a wrong
    value). Both ways the hint gives compile and are right."""
    x = np.array([0.5, 1.2, 0.7])
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.value_and_grad(unstacked)(x)
    assert info.value.location.line == unstacked.__code__.co_firstlineno + 3
    assert "'t' shares it and is read after the write" in flat(info.value.message)
    assert "a = a.copy()" in flat(info.value.hint)
    for fn in (unstacked_then_copied, unstacked_written_by_name):
        assert_right_in_mode("compiler", fn, x)


def diag_read_after_its_matrix_changed(x):
    t = x * 2.0
    d = np.diag(t)  # a read-only view of t's diagonal
    t[1, 1] = 0.0
    return np.sum(d * W) + np.sum(t)


def diag_of_a_vector_written(x):
    m = np.diag(x[0])  # a new matrix
    m[0, 1] = 3.0 * x[1, 1]
    m += x
    return np.sum(m * np.arange(9.0).reshape(3, 3))


def diag_of_a_vector_written_seen_through_its_transpose(x):
    m = np.diag(x[0])
    e = m.T
    m[0, 1] = 5.0 * x[1, 1]
    return np.sum(e * np.arange(9.0).reshape(3, 3))


@pytest.mark.parametrize("mode", ["compiler", "jvp", "tracing"])
@pytest.mark.parametrize(
    "fn",
    [
        diag_read_after_its_matrix_changed,
        diag_of_a_vector_written,
        diag_of_a_vector_written_seen_through_its_transpose,
    ],
)
def test_np_diag_of_a_matrix_sees_writes_and_of_a_vector_is_its_own(mode, fn):
    """``np.diag`` of a matrix is a (read-only) view, which sees a later write into the
    matrix; of a vector it is a new array, written into freely, also when the vector
    is a row of a parameter."""
    assert_right_in_mode(mode, fn, X.copy())
