"""Helpers for the rules of ``einsum_operand`` (the gradient of a two-operand
``np.einsum``, in :mod:`~autodiff_tutor.runtime.helpers_arrays`), so that second
derivatives go through ``np.einsum``.

``einsum_operand(s, g, x, y, 0)`` is linear in ``g`` and in the partner ``y``, and
depends on ``x`` only through its shape: with ``E(x, y) = np.einsum(s, x, y)`` it is
``A_y^T g`` (``A_y`` the linear map ``x -> E(x, y)``). So its vjp in ``g`` is
``E(c, y)`` (:func:`einsum_replaced`), in ``y`` the gradient of ``<E(c, y), g>``
(:func:`einsum_partner`), in ``x`` zero; and likewise for operand 1.

>>> import numpy as np
>>> x, y = np.ones((2, 3)), np.arange(3.0)
>>> einsum_replaced("ij,j->i", np.full((2, 3), 2.0), x, y, 0).tolist()
[6.0, 6.0]
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.runtime.backend import array_module, zeros_like
from autodiff_tutor.runtime.helpers_arrays import einsum_operand

__all__ = ["einsum_along", "einsum_partner", "einsum_replaced"]


def einsum_replaced(subscripts: Any, c: Any, x: Any, y: Any, which: int) -> Any:
    """``np.einsum(subscripts, x, y)`` with operand ``which`` replaced by ``c``.

    >>> import numpy as np
    >>> einsum_replaced("i,i->", np.ones(2), np.zeros(2), np.arange(2.0), 1).tolist()
    0.0
    """
    xp = array_module(c)
    operands = (c, y) if which == 0 else (x, c)
    return xp.einsum(str(subscripts), *operands)


def einsum_partner(
    subscripts: Any, g: Any, c: Any, x: Any, y: Any, which: int, position: int
) -> Any:
    """The vjp, with the cotangent ``c``, of ``einsum_operand(subscripts, g, x, y,
    which)`` in operand ``position``: zeros for the operand ``which`` itself (only its
    shape counts), else the gradient of ``<E(c, y), g>`` in ``y`` (or of
    ``<E(x, c), g>`` in ``x``).

    >>> import numpy as np
    >>> x, y = np.ones((2, 3)), np.arange(3.0)
    >>> einsum_partner("ij,j->i", np.ones(2), np.ones((2, 3)), x, y, 0, 1).tolist()
    [2.0, 2.0, 2.0]
    """
    if position == which:
        return zeros_like(x if which == 0 else y)
    if which == 0:
        return einsum_operand(subscripts, g, c, y, 1)
    return einsum_operand(subscripts, g, x, c, 0)


def einsum_along(subscripts: Any, g: Any, x: Any, y: Any, which: int, t: Any, position: int) -> Any:
    """The tangent of ``einsum_operand(subscripts, g, x, y, which)`` along ``t``, the
    tangent of operand ``position``: zeros for the operand ``which`` itself, else the
    gradient with the partner replaced by ``t`` (it is linear in the partner).

    >>> import numpy as np
    >>> x, y = np.ones((2, 3)), np.arange(3.0)
    >>> einsum_along("ij,j->i", np.ones(2), x, y, 0, np.ones(3), 1).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    if position == which:
        return zeros_like(x if which == 0 else y)
    if which == 0:
        return einsum_operand(subscripts, g, x, t, 0)
    return einsum_operand(subscripts, g, t, y, 1)
