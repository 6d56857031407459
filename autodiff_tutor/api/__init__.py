"""The front door: ``differentiable``, ``grad``, ``value_and_grad``, ``vjp``, ``jvp``,
``hvp`` and ``hessian``, one path for every call: bind the arguments and flatten
their structures (:mod:`.arguments`), run the pair compiled and cached for them
(:mod:`.compiled`), give the derivatives back in the arguments' structure
(:mod:`.derivatives`, the public functions).

>>> import numpy as np
>>> from autodiff_tutor.api import grad
>>> grad(lambda x: np.sum(x * x))(np.array([1.0, 2.0])).tolist()
[2.0, 4.0]
"""

from autodiff_tutor.api.compiled import Differentiable, differentiable
from autodiff_tutor.api.derivatives import grad, hessian, hvp, jvp, value_and_grad, vjp

__all__ = [
    "Differentiable",
    "differentiable",
    "grad",
    "hessian",
    "hvp",
    "jvp",
    "value_and_grad",
    "vjp",
]
