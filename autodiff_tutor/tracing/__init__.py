"""The tracing mode: automatic differentiation by operator overloading, like
MATLAB's ``dlarray`` / ``dlfeval`` / ``dlgradient`` / ``extractdata``.

``traced(x)`` wraps an array; ``evaluate(fn, *args)`` runs ``fn`` with its traced
arguments recording every operation on a tape; inside, ``gradient(y, x)`` runs the
backward pass with the same derivative rules as the compiler. ``extract_data``
takes the plain data out (and stops the trace); ``stop_gradient`` says so on
purpose. The tape is data: ``last_tape()`` shows what tracing saw.

Writes in place follow numpy in arrays the function computes (``y = x * 2; y[0] = 1``,
``y += 1``, through views of ``y`` too). Writes into a *variable* of the trace (an
argument it traces, or ``new_variables``), or into a view of one, are refused with a
located error, as the compiler refuses writes into a parameter: the gradient would be
ambiguous (:mod:`~autodiff_tutor.tracing.operators`).

The function ``evaluate`` runs (and the functions it calls by name) sees numpy, scipy
and math as tracing knows them (:mod:`~autodiff_tutor.tracing.user_code`): arrays it
makes with ``np.zeros`` keep the traced values written into them, ``np.array([a, b])``
and ``np.asarray`` keep the trace, scipy's functions with rules use them, as MATLAB's
``dlarray`` goes wherever the computation goes; numpy itself is not changed.

>>> import numpy as np
>>> def loss(w, x):
...     y = np.sum(np.tanh(x @ w) ** 2)
...     return y, gradient(y, w)
>>> value, dw = evaluate(loss, traced(np.zeros(2)), np.ones((3, 2)))
>>> extract_data(value), dw
(np.float64(0.0), array([0., 0.]))
>>> [record.op for record in last_tape().records]
['matmul', 'tanh', 'power', 'sum']
"""

from autodiff_tutor.ops.formats import dims, find_dims, strip_dims
from autodiff_tutor.tracing.array import Traced, extract_data, numpy_like, stop_gradient, traced
from autodiff_tutor.tracing.dispatch import call_op
from autodiff_tutor.tracing.evaluate import evaluate, new_variables, value_and_gradient
from autodiff_tutor.tracing.gradient import gradient
from autodiff_tutor.tracing.tape import Tape, active_tape, last_tape, tape_of
from autodiff_tutor.tracing.traced_values import is_live, is_traced

__all__ = [
    "Tape",
    "Traced",
    "active_tape",
    "call_op",
    "dims",
    "evaluate",
    "extract_data",
    "find_dims",
    "gradient",
    "is_live",
    "is_traced",
    "last_tape",
    "new_variables",
    "numpy_like",
    "stop_gradient",
    "strip_dims",
    "tape_of",
    "traced",
    "value_and_gradient",
]
