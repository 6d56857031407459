"""A user's parameter or variable named like a name the generated code uses for itself.

The generated code has names of its own: runtime helpers (``like``, ``unbroadcast``,
``unreduce``, ``zeros_like``, ``Stack``), the array module ``xp``, the memory stack
``stack``, the backward's ``memory``, the probe's ``site_flags``, and names it makes
(``d_x``, ``d_out``, ``t1``, ``result``), and the builtins it calls (``range``,
``reversed``, ``len``, ``zip``). A user's parameter or local of such a name is
compiled as written: the generated code takes another spelling for its own name
(``like_``, ``memory_``), and the user's names stay as written in the shown code.
Gradients are checked against central differences and autograd, in reverse mode
(general and specialized pairs), forward mode and second order.
"""

import importlib.util

import autograd
import numpy as np
import pytest
from oracles import (
    autograd_gradient,
    central_difference,
    structured_central_difference,
    with_autograd_numpy,
)

from autodiff_tutor import differentiable, grad, jvp, value_and_grad
from autodiff_tutor.compiler.emit import GENERATED_NAMES
from autodiff_tutor.errors import GradientEscapeError, UnsupportedSyntaxError


def loss_xp(xp):
    return np.sum(xp**2) + np.sum(np.tanh(xp) * xp)


def loss_memory(memory, size):
    return np.sum(np.sin(memory) * memory) * size


def layer(x, like, stack):
    s = np.sum(x * like, axis=0)  # broadcasting and a reduction: unbroadcast, unreduce
    for i in range(3):  # overwritten in a loop: the memory stack
        s = np.tanh(s * stack[i])
    return np.sum(s * s)


def gradient_names(x, d_x, d_out):
    t1 = x * d_x  # the compiler's temporaries are named t1, t2, ...
    t2 = np.sin(t1) + d_out
    out = np.sum(t2 * x)
    return out


def both_spellings(memory, memory_, like_):
    return np.sum(memory * memory * memory_ * like_ + np.cos(memory_))


def early_return(x, result):
    if np.sum(x) > 0:
        returned = np.sum(np.tanh(x * result))
        return returned
    return np.sum(x * x)


def builtins_as_parameters(x, range, len, zip, reversed):
    s = x
    i = 0
    while i < 3:  # replayed backward by a range of its count
        s = np.sin(s) * range
        i += 1
    for a in [s, x]:  # replayed backward in reverse, by index
        s = s * a * len
    return np.sum(s) * zip * reversed


RNG = np.random.default_rng(7)
V = RNG.normal(size=4)
M = RNG.normal(size=(2, 4))
CASES = [
    (loss_xp, (V,)),
    (loss_memory, (V, 1.5)),
    (layer, (M, V, RNG.normal(size=3))),
    (gradient_names, (V, RNG.normal(size=4), 0.3)),
    (both_spellings, (V, RNG.normal(size=4), RNG.normal(size=4))),
    (early_return, (np.abs(V), RNG.normal(size=4))),
    (builtins_as_parameters, (V, 0.9, 1.1, 0.8, 1.2)),
]
SECOND_ORDER = [loss_xp, loss_memory, gradient_names, both_spellings]


def _float_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]


@pytest.mark.parametrize(("fn", "args"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_reverse_mode_matches_differences_and_autograd(fn, args):
    f = differentiable(fn)
    wrt = _float_positions(args)
    expected = [central_difference(fn, list(args), i) for i in wrt]
    for i, e in zip(wrt, expected, strict=True):
        np.testing.assert_allclose(autograd_gradient(fn, args, i), e, rtol=1e-6, atol=1e-8)
    gradients = grad(f, wrt=wrt)(*args)
    gradients = gradients if isinstance(gradients, tuple) else (gradients,)
    for got, e in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(got, e, rtol=1e-6, atol=1e-8)
    both = value_and_grad(f, wrt=wrt)
    for _ in range(3):  # the general pair, then the pair specialized on shapes
        value, gradients = both(*args)
        gradients = gradients if isinstance(gradients, tuple) else (gradients,)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-13)
        for got, e in zip(gradients, expected, strict=True):
            np.testing.assert_allclose(got, e, rtol=1e-6, atol=1e-8)
    assert f.derivative(wrt).specializations, "the specialized pair was made"


@pytest.mark.parametrize(("fn", "args"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_forward_mode_matches_differences(fn, args):
    f = differentiable(fn)
    tangents = tuple(RNG.normal(size=a.shape) if isinstance(a, np.ndarray) else 0.0 for a in args)
    value, tangent = jvp(f, args, tangents)
    expected = sum(
        np.sum(central_difference(fn, list(args), i) * tangents[i]) for i in _float_positions(args)
    )
    np.testing.assert_allclose(value, fn(*args), rtol=1e-13)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", SECOND_ORDER, ids=lambda fn: fn.__name__)
def test_second_order_matches_autograd(fn):
    args = dict((fn, a) for fn, a in CASES)[fn]
    v = RNG.normal(size=np.shape(args[0]))
    _, hvp = jvp(grad(fn), args, (v,) + tuple(np.zeros_like(a) for a in args[1:]))
    expected = autograd.hessian_vector_product(with_autograd_numpy(fn), 0)(*args, v)
    np.testing.assert_allclose(hvp, expected, rtol=1e-6, atol=1e-8)


def test_the_shown_code_keeps_the_users_names():
    f = differentiable(layer)
    grad(f, wrt=[0, 1, 2])(*dict(CASES)[layer])
    forward, backward = f.forward_source([0, 1, 2]), f.backward_source([0, 1, 2])
    jvp_source = f.jvp_source([0, 1])
    shown = forward + backward + jvp_source
    assert "__user" not in shown
    assert forward.startswith("def layer_forward(x, like, stack):")
    assert "stack_ = Stack()" in forward  # the memory stack, renamed around the user's
    assert "like_(" in forward  # the helper, renamed around the user's 'like'
    assert "stack[i]" in forward  # the user's own names, as written
    assert "def layer_backward(d_out, memory):" in backward  # no clash: its own name
    assert "d_like = unreduce(" in backward or "d_like = unbroadcast(" in backward
    assert "def layer_jvp(x, like, stack, x_dot, like_dot):" in jvp_source
    memory = differentiable(loss_memory)
    assert "def loss_memory_backward(d_out, memory_):" in memory.backward_source()
    assert "d_memory = " in memory.backward_source()
    spellings = differentiable(both_spellings)
    assert "def both_spellings_backward(d_out, memory__):" in spellings.backward_source()


def test_errors_name_the_users_variables():
    def writes(x, like):
        like[0] = 1.0
        return np.sum(x * like)

    with pytest.raises(UnsupportedSyntaxError, match=r"like\[\.\.\.\] = \.\.\.") as caught:
        grad(writes)(V, V.copy())
    assert "__user" not in str(caught.value)
    assert "like = like.copy()" in caught.value.hint

    def escapes(x):
        size = x * 2.0
        return float(size) * np.sum(x)

    with pytest.raises(GradientEscapeError, match="float turns 'size' into a plain value"):
        grad(escapes)(np.ones(1))


def escapes_through_a_name_with_digits(w):
    total_2 = np.sum(w * w)
    return float(total_2)


def calls_a_loop_variable_with_digits(w):
    fns = []
    for k in range(3):
        g = lambda v, k=k: np.sin(v * (k + 1))  # noqa: E731
        fns.append(g)
    total = 0.0
    for f_1 in fns:
        total = total + np.sum(f_1(w))
    return total


def test_errors_name_a_variable_whose_name_ends_in_digits_as_written():
    """A user's name ending in ``_<digits>`` (``total_2``, ``f_1``) is not taken for a
    version of another name (``total``, ``f``) in an error: the message names it as
    written, from the map of versions to the user's names."""
    with pytest.raises(GradientEscapeError, match="float turns 'total_2' into a plain value"):
        grad(escapes_through_a_name_with_digits)(np.ones(3))
    with pytest.raises(UnsupportedSyntaxError, match="calling the local variable 'f_1' is not"):
        grad(calls_a_loop_variable_with_digits)(np.ones(3))


def layers(stack, size):
    h = size
    for W in stack:  # a list of weights named like the memory stack
        h = np.tanh(h @ W)
    return np.sum(h * h)


def dense(memory, x):
    return np.sum(np.tanh(x @ memory["W"]) * memory["b"])


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (layers, ([RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2))], RNG.normal(size=(2, 3)))),
        (dense, ({"W": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}, RNG.normal(size=(2, 3)))),
    ],
    ids=["layers", "dense"],
)
def test_a_structured_parameter_named_like_a_generated_name(fn, args):
    expected = structured_central_difference(fn, list(args), 0)
    by_autograd = autograd.grad(with_autograd_numpy(fn), 0)(*args)
    leaves = by_autograd if isinstance(by_autograd, list) else list(by_autograd.values())
    for leaf, e in zip(leaves, expected, strict=True):
        np.testing.assert_allclose(leaf, e, rtol=1e-6, atol=1e-8)
    both = value_and_grad(fn)
    for _ in range(3):
        value, gradient = both(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-13)
        got = gradient if isinstance(gradient, list) else list(gradient.values())
        for leaf, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(leaf, e, rtol=1e-6, atol=1e-8)


def _module_of_every_name(tmp_path):
    """A module with, for each name the generated code uses, a function taking it as
    a parameter and one binding it as a local variable (written to a file: the
    compiler reads source)."""
    names = sorted(n for n in GENERATED_NAMES if n.isidentifier())
    lines = ["import numpy as np", ""]
    for n in names:
        lines += [f"def p_{n}(x, {n}):", f"    return np.sum(np.sin(x) * {n} * x)", ""]
        lines += [f"def l_{n}(x):", f"    {n} = np.sin(x) * 2.0", f"    return np.sum({n} * x)", ""]
    path = tmp_path / "every_generated_name.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("every_generated_name", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return names, module


def test_every_generated_name_as_a_parameter_and_a_local(tmp_path):
    names, module = _module_of_every_name(tmp_path)
    x = np.linspace(0.1, 0.9, 3)
    expected = 2.0 * (np.cos(x) * x + np.sin(x))
    for n in names:
        p, local = getattr(module, f"p_{n}"), getattr(module, f"l_{n}")
        for fn, args in ((p, (x, 2.0)), (local, (x,))):
            f = differentiable(fn)
            np.testing.assert_allclose(grad(f, wrt=0)(*args), expected, err_msg=n)
            both = value_and_grad(f, wrt=0)
            for _ in range(3):
                np.testing.assert_allclose(both(*args)[1], expected, err_msg=n)
            tangent = jvp(f, args, (np.ones_like(x),) + (0.0,) * (len(args) - 1))[1]
            np.testing.assert_allclose(tangent, np.sum(expected), err_msg=n)
            assert "__user" not in f.backward_source(0) + f.forward_source(0), n


def parameter_named_xp(x, xp):
    return np.sum(x * xp)


def test_a_parameter_named_xp_is_differentiated_with_the_others():
    """A second parameter named ``xp`` (the name of the generated code's array module)
    keeps its name and gets its gradient beside the first's."""
    x = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])
    value, grads = value_and_grad(parameter_named_xp, wrt=[0, 1])(x, 2 * x)
    assert np.isclose(value, np.sum(2 * x * x))
    assert np.allclose(grads[0], 2 * x) and np.allclose(grads[1], x)
