"""Numeric checks: finite differences in float64 that notice kinks, and ``check_op`` /
``check_layer`` (what MATLAB's checkLayer and PyTorch's gradcheck test).

- :mod:`.differences`: central differences, probes of one element near a kink;
- :mod:`.checks`: ``check_op``, category by category; :mod:`.layer_check`: ``check_layer``;
- :mod:`.gradients`: the "finite differences" and "kinks" categories;
- :mod:`.gpu`: the "GPU" category (cupy, when there is a GPU);
- :mod:`.common`: helpers the categories share; :mod:`.report`: the result.

>>> import numpy as np
>>> numerical_gradient(lambda x: np.sum(x**3), np.array([2.0]))[0].round(6).tolist()
[12.0]
"""

from autodiff_tutor.verify.numeric.checks import check_op
from autodiff_tutor.verify.numeric.differences import numerical_gradient, probe_input
from autodiff_tutor.verify.numeric.layer_check import check_layer
from autodiff_tutor.verify.numeric.report import CheckEntry, CheckReport

__all__ = [
    "CheckEntry",
    "CheckReport",
    "check_layer",
    "check_op",
    "numerical_gradient",
    "probe_input",
]
