"""Checks of gradients: numeric (``check_op``, ``check_layer``, finite differences) and
symbolic (``verify_symbolic``: sympy proves a backward right region by region).

>>> import numpy as np
>>> from autodiff_tutor.verify import numerical_gradient
>>> numerical_gradient(lambda x: x * x, np.array([3.0]))[0].round(8).tolist()
[6.0]
"""

from autodiff_tutor.verify.checks import check_layer, check_op
from autodiff_tutor.verify.numeric import numerical_gradient
from autodiff_tutor.verify.report import CheckEntry, CheckReport
from autodiff_tutor.verify.symbolic import verify_compiled, verify_symbolic
from autodiff_tutor.verify.symbolic_report import KinkCheck, RegionCheck, SymbolicReport
from autodiff_tutor.verify.symbolic_rules import check_rule, verify_rule

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
