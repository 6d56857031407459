"""Checks of gradients: numeric (``check_op``, ``check_layer``, finite differences).

>>> import numpy as np
>>> from autodiff_tutor.verify import numerical_gradient
>>> numerical_gradient(lambda x: x * x, np.array([3.0]))[0].round(8).tolist()
[6.0]
"""

from autodiff_tutor.verify.checks import check_layer, check_op
from autodiff_tutor.verify.numeric import numerical_gradient
from autodiff_tutor.verify.report import CheckEntry, CheckReport

__all__ = ["CheckEntry", "CheckReport", "check_layer", "check_op", "numerical_gradient"]
