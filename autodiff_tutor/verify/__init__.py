"""Checks of gradients, in two parts:

- :mod:`~autodiff_tutor.verify.numeric`: finite differences that notice kinks, and the
  ``check_op`` / ``check_layer`` categories (shapes, dtypes, finite differences, kinks,
  GPU) with their report;
- :mod:`~autodiff_tutor.verify.symbolic`: sympy proves a backward right region by
  region (``verify_symbolic``), and every derivative rule of the registry
  (``verify_rule``): translation of numpy code to sympy, regions, kinks, report.

>>> import numpy as np
>>> from autodiff_tutor.verify import numerical_gradient
>>> numerical_gradient(lambda x: x * x, np.array([3.0]))[0].round(8).tolist()
[6.0]
"""

from autodiff_tutor.verify.numeric.checks import check_op
from autodiff_tutor.verify.numeric.differences import numerical_gradient
from autodiff_tutor.verify.numeric.layer_check import check_layer
from autodiff_tutor.verify.numeric.report import CheckEntry, CheckReport
from autodiff_tutor.verify.symbolic.functions import verify_compiled, verify_symbolic
from autodiff_tutor.verify.symbolic.report import KinkCheck, RegionCheck, SymbolicReport
from autodiff_tutor.verify.symbolic.rules import check_rule, verify_rule

__all__ = [
    "CheckEntry",
    "CheckReport",
    "KinkCheck",
    "RegionCheck",
    "SymbolicReport",
    "check_layer",
    "check_op",
    "check_rule",
    "numerical_gradient",
    "verify_compiled",
    "verify_rule",
    "verify_symbolic",
]
