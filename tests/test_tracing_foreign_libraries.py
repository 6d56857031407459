"""Tracing meets another autodiff library (autograd, JAX, PyTorch): a traced value
handed to that library's code, or that library's value meeting a traced value, ends in
a located ``TracingForeignLibraryError`` that names both libraries and says what to
do; never in the other library's raw error, nor in a number neither library checked.

autograd is installed with the tests and is used as it comes. JAX and PyTorch are
not dependencies: their values are recognised by the module that defines their type,
so stand-in types whose ``__module__`` is ``torch`` or ``jaxlib._jax`` exercise the
same checks; the libraries' own ways of asking a value (``__torch_function__``,
``__jax_array__``) are called here as those libraries call them; and where JAX or
PyTorch is installed, the tests at the end run them for real.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.misc import flatten
from oracles import central_difference
from wrapped_text import flat

from autodiff_tutor.errors import (
    ForeignLibraryError,
    TracingError,
    TracingEscapeError,
    TracingForeignLibraryError,
)
from autodiff_tutor.tracing import evaluate, gradient, traced, value_and_gradient


def located_at(error, text):
    """The error points at the user's line in this file, at ``text``."""
    assert error.location is not None
    assert error.location.filename == __file__
    assert text in error.location.text
    start = error.location.column
    assert error.location.text[start : start + error.location.length] == text
    return True


def foreign_error(fn, *args, **kwargs):
    """The ``TracingForeignLibraryError`` that ``fn(*args)`` raises."""
    with pytest.raises(TracingForeignLibraryError) as info:
        fn(*args, **kwargs)
    error = info.value
    assert isinstance(error, TracingError) and isinstance(error, ForeignLibraryError)
    return error


def stand_in(module, name, data):
    """A value of a type defined in ``module`` (so recognised as that library's),
    holding ``data`` with an array's ``shape`` and ``dtype``."""
    kind = type(name, (), {"__module__": module, "shape": data.shape, "dtype": data.dtype})
    return kind()


# --- a traced value reaching autograd's code ---------------------------------------


def test_autograd_flatten_of_traced_parameters_is_refused_at_the_users_line():
    def loss(params):
        flat_params, unflatten = flatten(params)
        return np.sum(flat_params**2)

    error = foreign_error(value_and_gradient, loss, [np.ones(2), np.ones(3)])
    assert located_at(error, "flatten(params)")
    message = flat(error.message)
    assert "a traced value reached autograd's code (flatten)" in message
    assert "Tracing and autograd cannot follow each other's gradients" in message
    assert "np.concatenate([np.ravel(p) for p in params])" in flat(error.hint)
    assert "take the gradient with one library" in flat(error.hint)
    assert isinstance(error.__cause__, TypeError)  # autograd's own, one attribute away


def test_the_numpy_flatten_the_hint_gives_has_the_right_gradient():
    def loss(params):
        flat_params = np.concatenate([np.ravel(p) for p in params])
        return np.sum(np.sin(flat_params) * flat_params)

    params = [np.array([0.5, -1.0]), np.array([[2.0, 0.25, 1.5]])]
    value, grads = value_and_gradient(loss, params)

    def autograd_loss(a, b):
        flat_params, _ = flatten([a, b])
        return anp.sum(anp.sin(flat_params) * flat_params)

    assert value == pytest.approx(loss(params))
    for i in range(2):
        np.testing.assert_allclose(grads[i], autograd.grad(autograd_loss, i)(*params))
        np.testing.assert_allclose(
            grads[i], central_difference(lambda a, b: loss([a, b]), params, i), atol=1e-6
        )


def test_autograd_grad_of_a_traced_value_inside_evaluate_is_refused():
    def fun(x):
        slope = autograd.grad(lambda z: anp.sum(z**2))(x)
        return gradient(np.sum(slope * x), x)

    error = foreign_error(evaluate, fun, traced(np.ones(2)))
    assert located_at(error, "autograd.grad(lambda z: anp.sum(z**2))(x)")
    assert "autograd's code (autograd.grad)" in flat(error.message)


def test_autograd_on_plain_arrays_inside_evaluate_still_works():
    """Only a traced value in autograd's hands is refused: autograd on constants
    inside the traced function works, and its failures stay its own."""

    def fun(x):
        c = autograd.grad(lambda z: anp.sum(anp.sin(z)))(np.array([0.0, 1.0]))
        return gradient(np.sum(c * x**2), x)

    np.testing.assert_allclose(
        evaluate(fun, traced(np.array([1.0, 2.0]))), 2 * np.cos([0.0, 1.0]) * [1.0, 2.0]
    )

    def fails(x):
        return autograd.grad(lambda z: z * 2)(np.array([1.0, 1.0]))  # not a scalar function

    with pytest.raises(TypeError, match="scalar") as info:
        evaluate(fails, traced(1.0))
    assert not isinstance(info.value, ForeignLibraryError)


def test_the_users_own_escape_inside_a_function_autograd_calls_stays_an_escape():
    """autograd calling the user's function back is not autograd handling the traced
    value: ``float(x)`` there is the user's escape."""

    def fun(x):
        def inner(z):
            return anp.sum(z) * float(x)

        return autograd.grad(inner)(np.array([1.0, 1.0]))  # np.ones here is a buffer

    with pytest.raises(TracingEscapeError) as info:
        evaluate(fun, traced(2.0))
    assert not isinstance(info.value, ForeignLibraryError)
    assert located_at(info.value, "float(x)")


# --- autograd's values meeting traced values -------------------------------------


def _traced_loss_of(box, form):
    def loss(x):
        if form == "traced * box":
            return np.sum(x * box)
        if form == "box * traced":
            return np.sum(box * x)
        return np.sum(np.multiply(box, x))

    return value_and_gradient(loss, np.array([2.0, 3.0]))[0]


@pytest.mark.parametrize("form", ["traced * box", "box * traced", "np.multiply(box, x)"])
def test_a_traced_value_and_an_autograd_box_in_one_operation_are_refused(form):
    """Refused: autograd and tracing would each follow half of the computation, and a
    number would come out that neither checked."""
    error = foreign_error(autograd.grad(lambda b: _traced_loss_of(b, form)), np.ones(2))
    assert "an autograd ArrayBox" in flat(error.message)
    assert "take the gradient with one library" in flat(error.hint)
    text = {"traced * box": "x * box", "box * traced": "box * x"}.get(form, form)
    assert located_at(error, text)


def test_tracing_an_autograd_box_is_refused():
    def outer(b):
        return value_and_gradient(lambda z: np.sum(z**2), b)[0]

    error = foreign_error(autograd.grad(outer), np.ones(2))
    assert "traced() takes numpy, cupy or array-API arrays, not an autograd ArrayBox" in flat(
        error.message
    )
    assert located_at(error, "value_and_gradient(lambda z: np.sum(z**2), b)")
    with pytest.raises(TracingForeignLibraryError):
        autograd.grad(lambda b: np.sum(traced(b)))(np.ones(2))
    with pytest.raises(TracingForeignLibraryError):  # inside a list too
        autograd.grad(lambda b: value_and_gradient(lambda p: np.sum(p[0]), [b])[0])(np.ones(2))


# --- JAX's and PyTorch's values, recognised by their type's module ----------------


@pytest.mark.parametrize(
    ("module", "name", "library"),
    [("torch", "Tensor", "PyTorch"), ("jaxlib._jax", "ArrayImpl", "JAX")],
)
def test_other_libraries_values_are_refused_by_traced(module, name, library):
    value = stand_in(module, name, np.ones(2))
    error = foreign_error(traced, value)
    assert f"not a {library} {name}" in flat(error.message)
    assert located_at(error, "fn(*args, **kwargs)")


@pytest.mark.parametrize(
    ("module", "name", "library"),
    [("torch", "Tensor", "PyTorch"), ("jax._src.interpreters.ad", "JVPTracer", "JAX")],
)
def test_other_libraries_values_meeting_a_traced_value_are_refused(module, name, library):
    value = stand_in(module, name, np.ones(2))

    def loss(x):
        return np.sum(x + value)

    error = foreign_error(value_and_gradient, loss, np.ones(2))
    assert f"the + operator mixes a traced value with a {library} {name}" in flat(error.message)
    assert located_at(error, "x + value")


def test_pytorch_asking_a_traced_value_through_torch_function_is_refused():
    """PyTorch's functions and tensor operators call ``__torch_function__`` of their
    arguments' types, as here."""

    def sin(x):
        return np.sin(x)

    def fun(x):
        return type(x).__torch_function__(sin, (type(x),), (x,), {})

    error = foreign_error(evaluate, fun, traced(1.0))
    assert "PyTorch's sin was given a traced value" in flat(error.message)
    assert located_at(error, "type(x).__torch_function__(sin, (type(x),), (x,), {})")


def test_jax_asking_a_traced_value_for_jax_array_is_refused():
    """JAX looks ``__jax_array__`` up on every value it does not know, as here."""

    def fun(x):
        return getattr(x, "__jax_array__", None)

    error = foreign_error(evaluate, fun, traced(1.0))
    assert "JAX was given a traced value" in flat(error.message)
    assert located_at(error, 'getattr(x, "__jax_array__", None)')


def test_exporting_through_dlpack_is_an_escape_while_traced_and_the_data_after():
    """``__dlpack__`` (how PyTorch's ``torch.tensor(x)`` takes another library's
    array) gives the data off the trace, and is refused on it, as ``__array__`` is."""
    x = traced(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(np.from_dlpack(x), [1.0, 2.0])
    with pytest.raises(TracingEscapeError):
        evaluate(lambda t: np.from_dlpack(t), x)


# --- JAX and PyTorch themselves, where installed ----------------------------------


@pytest.fixture
def jax_numpy():
    jax = pytest.importorskip("jax")
    return jax, jax.numpy


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_jax_functions_of_traced_values_are_refused(jax_numpy):
    jax, jnp = jax_numpy

    def through_jnp(x):
        return np.sum(jnp.sin(x))

    def through_grad(x):
        return np.sum(jax.grad(lambda z: jnp.sum(z**2))(x))

    def mixed(x):
        return np.sum(jnp.ones(2) * x)

    for fn, text in [
        (through_jnp, "jnp.sin(x)"),
        (through_grad, "jax.grad(lambda z: jnp.sum(z**2))(x)"),
        (mixed, "jnp.ones(2) * x"),
    ]:
        error = foreign_error(value_and_gradient, fn, np.ones(2))
        assert "JAX" in error.message
        assert located_at(error, text)


def test_jax_values_given_to_tracing_are_refused(jax_numpy):
    jax, jnp = jax_numpy
    foreign_error(value_and_gradient, lambda z: np.sum(z**2), jnp.ones(2))

    def outer(b):
        return value_and_gradient(lambda z: np.sum(z**2), b)[0]

    foreign_error(jax.grad(outer), np.ones(2))


def test_pytorch_functions_of_traced_values_are_refused(torch):
    def through_sin(x):
        return np.sum(torch.sin(x))

    def through_tensor(x):
        return np.sum(torch.tensor(x))

    def tensor_times(x):
        return np.sum(torch.ones(2, dtype=torch.float64) * x)

    def times_tensor(x):
        return np.sum(x * torch.ones(2, dtype=torch.float64))

    for fn, text in [
        (through_sin, "torch.sin(x)"),
        (through_tensor, "torch.tensor(x)"),
        (tensor_times, "torch.ones(2, dtype=torch.float64) * x"),
        (times_tensor, "x * torch.ones(2, dtype=torch.float64)"),
    ]:
        error = foreign_error(value_and_gradient, fn, np.ones(2))
        assert "PyTorch" in error.message
        assert located_at(error, text)


def test_pytorch_tensors_given_to_tracing_are_refused(torch):
    for tensor in (
        torch.ones(2, dtype=torch.float64),
        torch.ones(2, dtype=torch.float64, requires_grad=True),
    ):
        error = foreign_error(value_and_gradient, lambda z: np.sum(z**2), tensor)
        assert "t.detach().cpu().numpy()" in flat(error.hint)
