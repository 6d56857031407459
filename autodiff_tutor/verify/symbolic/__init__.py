"""Symbolic checks: sympy proves a backward right, region by region, and judges its kinks.

In the order the check runs:

- :mod:`.algebra`: numpy's elementwise semantics on sympy scalars (masks as numbers,
  kinks as ``Piecewise``; the primitives' sympy forms come from their rule records);
- :mod:`.translate`: numpy source of a forward or backward, translated to sympy one
  element at a time;
- :mod:`.regions`: the regions of a piecewise function; :mod:`.check`: the backward
  against the derivative of the forward in each region; :mod:`.kinks`: what the
  backward does on the boundaries; :mod:`.runs`: the code itself run with numpy at
  points of each region and boundary (where numpy's values are not sympy's reading);
- :mod:`.functions`: ``verify_symbolic`` and ``verify_compiled`` (a user's functions);
  :mod:`.rules`: every rule of the registry;
- :mod:`.report`: the result, as data, text and HTML.

>>> verify_rule("abs").passed
True
"""

from autodiff_tutor.verify.symbolic.functions import verify_compiled, verify_symbolic
from autodiff_tutor.verify.symbolic.report import KinkCheck, RegionCheck, SymbolicReport
from autodiff_tutor.verify.symbolic.rules import check_rule, verify_rule

__all__ = [
    "KinkCheck",
    "RegionCheck",
    "SymbolicReport",
    "check_rule",
    "verify_compiled",
    "verify_rule",
    "verify_symbolic",
]
