"""autodiff_tutor: automatic differentiation you can read, for teaching.

The public API is re-exported here; nothing else lives in this file.

>>> import numpy as np
>>> from autodiff_tutor import differentiable, grad
>>> @differentiable
... def f(x):
...     return np.sum(np.sin(x))
>>> grad(f)(np.zeros(2)).tolist()
[1.0, 1.0]
"""

from autodiff_tutor.api import Differentiable, differentiable, grad, jvp, value_and_grad, vjp
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.runtime.backend import array_module

__all__ = [
    "AutodiffError",
    "Differentiable",
    "array_module",
    "differentiable",
    "grad",
    "jvp",
    "value_and_grad",
    "vjp",
]
__version__ = "0.1.0"
