"""One check for a user program in every mode: its gradient by the compiler (grad),
by tracing (value_and_gradient) and by forward mode (jvp along ``direction``) against
central differences (float64), and autograd's gradient of ``twin`` (the same function
written with what autograd differentiates) against the same differences."""

import numpy as np
from oracles import autograd_gradient, central_difference

from autodiff_tutor import grad, jvp
from autodiff_tutor.tracing import value_and_gradient


def assert_gradient_in_every_mode(fn, twin, x, direction, tracing=True):
    want = central_difference(fn, [x], 0)
    np.testing.assert_allclose(fn(x), twin(x), rtol=1e-12)  # the twin is the same function
    np.testing.assert_allclose(autograd_gradient(twin, [x], 0), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grad(fn)(x), want, rtol=1e-6, atol=1e-9)
    if tracing:
        np.testing.assert_allclose(value_and_gradient(fn, x)[1], want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jvp(fn, (x,), (direction,))[1], want @ direction, rtol=1e-6)
