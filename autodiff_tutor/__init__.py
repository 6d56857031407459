"""autodiff_tutor: automatic differentiation you can read, for teaching.

The public API is re-exported here; nothing else lives in this file.

- the compiler: ``differentiable``, ``grad``, ``value_and_grad``, ``vjp``, ``jvp``,
  ``hvp``, ``hessian``;
- the tracing mode: ``autodiff_tutor.tracing`` (``traced``, ``evaluate``, ``gradient``);
- custom operations: ``DifferentiableFunction``, ``srelu``, ``prelu``;
- checks: ``check_op``, ``check_layer``; layers and training: ``autodiff_tutor.nn``;
- a picture of the graph, forward and adjoint: ``graph(f, *args)``, ``graph(last_tape())``.

>>> import numpy as np
>>> from autodiff_tutor import differentiable, grad
>>> @differentiable
... def f(x):
...     return np.sum(np.sin(x))
>>> grad(f)(np.zeros(2)).tolist()
[1.0, 1.0]
"""

from autodiff_tutor import nn, tracing
from autodiff_tutor.api import (
    Differentiable,
    differentiable,
    grad,
    hessian,
    hvp,
    jvp,
    value_and_grad,
    vjp,
)
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.graphs import graph
from autodiff_tutor.ops import (
    DifferentiableFunction,
    PReLUFunction,
    SReLUFunction,
    dims,
    find_dims,
    formatted,
    prelu,
    prelu_reference,
    srelu,
    srelu_reference,
    strip_dims,
)
from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.tracing import extract_data, stop_gradient
from autodiff_tutor.verify import check_layer, check_op, verify_symbolic

__all__ = [
    "AutodiffError",
    "Differentiable",
    "DifferentiableFunction",
    "PReLUFunction",
    "SReLUFunction",
    "array_module",
    "check_layer",
    "check_op",
    "differentiable",
    "dims",
    "extract_data",
    "find_dims",
    "formatted",
    "grad",
    "graph",
    "hessian",
    "hvp",
    "jvp",
    "nn",
    "prelu",
    "prelu_reference",
    "srelu",
    "srelu_reference",
    "stop_gradient",
    "strip_dims",
    "tracing",
    "value_and_grad",
    "verify_symbolic",
    "vjp",
]
__version__ = "0.1.0"
