"""Special functions that the scipy rules' formulas call: ``digamma`` and ``trigamma``.

Each takes its module from its argument: scipy for numpy arrays, ``cupyx.scipy`` for
cupy arrays, and sympy for the symbolic checker's values (symbols, object arrays), so
one formula serves every backend and the proof.

>>> round(float(digamma(1.0)), 6)  # minus the Euler-Mascheroni constant
-0.577216
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["digamma", "trigamma"]


def _special(x: Any) -> Any:
    module = type(x).__module__.split(".")[0]
    if module == "cupy":
        import cupyx.scipy.special as special  # the GPU twin of scipy.special

        return special
    import scipy.special as special

    return special


def _symbolic(x: Any) -> bool:
    """sympy values, object arrays of them, or the checker's wrapped values (``.expr``)."""
    if isinstance(x, np.ndarray):
        return x.dtype == object
    return type(x).__module__.split(".")[0] == "sympy" or hasattr(x, "expr")


def _polygamma(k: int, x: Any) -> Any:
    import sympy as sp

    def one(v: Any) -> Any:
        if hasattr(v, "expr"):  # the symbolic checker's wrapper: keep it wrapped
            return type(v)(sp.polygamma(k, v.expr))
        return sp.polygamma(k, v)

    if isinstance(x, np.ndarray):
        return np.vectorize(one, otypes=[object])(x)
    return one(x)


def digamma(x: Any) -> Any:
    """psi(x) = d/dx ln Gamma(x)."""
    if _symbolic(x):
        return _polygamma(0, x)
    return _special(x).digamma(x)


def trigamma(x: Any) -> Any:
    """psi'(x) = d/dx digamma(x).

    >>> round(float(trigamma(1.0)), 6)  # pi^2 / 6
    1.644934
    """
    if _symbolic(x):
        return _polygamma(1, x)
    return _special(x).polygamma(1, x).astype(np.result_type(x, np.float32))
