"""The front doors (``grad``, ``value_and_grad``, ``vjp``, ``jvp``) refuse values of
another autodiff library (an autograd ``ArrayBox`` inside ``autograd.grad``, a JAX
array or tracer, a torch tensor) with a located ``ForeignLibraryError`` that names the
library and says what to do: the compiled code cannot follow that library's gradient,
nor that library the compiled derivative.

Calling a compiled function itself runs the user's plain function, which autograd
follows: that is not refused. autograd is installed with the tests; JAX's and
PyTorch's values are recognised by the module that defines their type, so stand-in
types defined "in" ``torch`` exercise the same check, and JAX and PyTorch run for real
where they are installed.
"""

import autograd
import numpy as np
import pytest
from oracles import autograd_gradient, central_difference
from wrapped_text import flat

from autodiff_tutor import differentiable, grad, jvp, value_and_grad, vjp
from autodiff_tutor.errors import ForeignLibraryError, TracingError


def loss(x):
    return np.sum(np.tanh(x) ** 2)


def weighted(x, c):
    return np.sum(np.tanh(x) * c)


X = np.array([0.5, -1.0, 2.0])


def refused(fn, *args):
    """The ``ForeignLibraryError`` that ``fn(*args)`` raises (not a tracing error)."""
    with pytest.raises(ForeignLibraryError) as info:
        fn(*args)
    assert not isinstance(info.value, TracingError)
    return info.value


def located_at(error, text):
    assert error.location is not None
    assert error.location.filename == __file__
    start = error.location.column
    assert error.location.text[start : start + error.location.length] == text
    return True


# --- autograd's boxes -----------------------------------------------------------------


def test_grad_of_an_autograd_box_is_refused_at_the_users_call():
    def outer(x):
        return grad(loss)(x)[0]

    error = refused(autograd.grad(outer), X)
    assert "the argument 'x' of loss is an autograd ArrayBox" in flat(error.message)
    assert "take the gradient with one library" in flat(error.hint)
    assert "call the plain function there" in flat(error.hint)
    assert located_at(error, "grad(loss)(x)")


def test_autograd_calling_a_gradient_function_directly_is_located_at_the_users_line():
    """autograd calls ``grad(loss)`` from its own code: the error points at the user's
    line that called autograd, not into autograd."""
    error = refused(lambda: autograd.grad(lambda x: np.sum(grad(loss)(x)))(X))
    assert located_at(error, "grad(loss)(x)")
    error = refused(lambda: autograd.grad(grad(loss))(X))
    assert located_at(error, "autograd.grad(grad(loss))(X)")


def test_a_box_is_refused_after_numpy_calls_took_the_fast_path():
    gradient = value_and_grad(loss)
    for _ in range(3):  # the later calls run the fast path
        value, slope = gradient(X)
    np.testing.assert_allclose(slope, autograd_gradient(loss, [X], 0))
    np.testing.assert_allclose(slope, central_difference(loss, [X], 0), atol=1e-6)
    refused(autograd.grad(lambda x: gradient(x)[0]), X)


def test_a_box_as_an_argument_not_differentiated_is_refused_too():
    gradient = grad(weighted)
    np.testing.assert_allclose(gradient(X, X), autograd_gradient(weighted, [X, X], 0))
    gradient(X, X)  # the fast path from now on
    error = refused(autograd.grad(lambda c: np.sum(gradient(X, c))), X)
    assert "the argument 'c' of weighted" in flat(error.message)


def test_vjp_and_jvp_refuse_boxes_as_arguments_seeds_and_tangents():
    refused(autograd.grad(lambda x: vjp(loss, x)[0]), X)  # refused, not a value nobody checks
    refused(autograd.grad(lambda s: vjp(loss, X)[1](s)[0][0]), 1.0)
    refused(autograd.grad(lambda x: jvp(loss, (x,), (np.ones(3),))[1]), X)
    refused(autograd.grad(lambda t: jvp(loss, (X,), (t,))[1]), np.ones(3))


def test_a_box_inside_a_list_argument_is_refused():
    def total(params):
        return np.sum(params[0] * params[1])

    refused(autograd.grad(lambda b: grad(total)([X, b])[0][0]), X)


def test_calling_a_compiled_function_itself_is_the_plain_function_autograd_follows():
    compiled = differentiable(loss)
    slope = autograd.grad(compiled)(X)
    np.testing.assert_allclose(slope, autograd_gradient(loss, [X], 0))
    np.testing.assert_allclose(slope, central_difference(loss, [X], 0), atol=1e-6)


# --- other libraries' values, recognised by their type's module -----------------------


def test_a_pytorch_stand_in_is_refused_with_the_conversion_that_works():
    tensor = type("Tensor", (), {"__module__": "torch", "shape": (3,), "dtype": np.float64})()
    error = refused(grad(loss), tensor)
    assert "the argument 'x' of loss is a PyTorch Tensor" in flat(error.message)
    assert "t.detach().cpu().numpy()" in flat(error.hint)


@pytest.fixture
def jax_numpy():
    jax = pytest.importorskip("jax")
    return jax, jax.numpy


def test_jax_arrays_and_tracers_are_refused(jax_numpy):
    jax, jnp = jax_numpy
    error = refused(grad(loss), jnp.asarray(X))
    assert "np.asarray(a)" in flat(error.hint)
    refused(jax.grad(lambda x: grad(loss)(x)[0]), jnp.asarray(X))


def test_torch_tensors_are_refused():
    torch = pytest.importorskip("torch")
    for tensor in (torch.tensor(X), torch.tensor(X, requires_grad=True)):
        error = refused(grad(loss), tensor)
        assert "PyTorch Tensor" in flat(error.message)
