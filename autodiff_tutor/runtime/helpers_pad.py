"""Helpers for the rule of ``np.pad``: its ``pad_width`` read per axis, the modes the
rule covers, and :func:`unpad`, the gradient (the padding cut off, or added back onto
the values it copies).

>>> import numpy as np
>>> unpad(np.arange(5.0), 1).tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.runtime.backend import array_module, cast_like

PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")  # those np.pad's rule covers

__all__ = ["pad_mode_covered", "pad_widths", "unpad"]


def pad_widths(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    """``np.pad``'s ``pad_width`` as one ``(before, after)`` pair per axis.

    >>> pad_widths(1, 2), pad_widths(((1, 2),), 2), pad_widths((1, 2), 1)
    ([(1, 1), (1, 1)], [(1, 2), (1, 2)], [(1, 2)])
    """
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (ndim, 2))
    return [(int(a), int(b)) for a, b in widths]


def unpad(g: Any, pad_width: Any, mode: str = "constant") -> Any:
    """The gradient of ``np.pad(x, pad_width, mode)``: the part of ``g`` that is not
    padding, plus, for the modes that copy ``x``'s values outward (``"edge"``,
    ``"reflect"``, ``"symmetric"``, ``"wrap"``), the padding added back onto the
    values it copies, one axis at a time.

    >>> unpad(np.ones(5), 1, "edge").tolist()
    [2.0, 1.0, 2.0]
    """
    pad_mode_covered(mode)
    widths = pad_widths(pad_width, len(g.shape))
    if mode == "constant":
        return g[tuple(slice(a, n - b) for (a, b), n in zip(widths, g.shape, strict=True))]
    xp = array_module(g)
    for axis, (a, b) in enumerate(widths):
        n = g.shape[axis] - a - b
        source = np.pad(np.arange(n), (a, b), mode=mode)  # where each entry was copied from
        copies = cast_like(xp.asarray((source[:, None] == np.arange(n)).astype(np.int8)), g)
        g = xp.moveaxis(xp.tensordot(g, copies, axes=([axis], [0])), -1, axis)
    return g


def pad_mode_covered(mode: str = "constant") -> str:
    """``np.pad``'s mode when the pad rule covers it, else a refusal (at the call: the
    rule's check).

    >>> pad_mode_covered("wrap")
    'wrap'
    """
    if mode not in PAD_MODES:
        raise NoDerivativeRuleError(
            f"no derivative rule for np.pad with mode={mode!r}",
            hint=f"the pad rule covers the modes {', '.join(map(repr, PAD_MODES))}; pad "
            "by hand with np.concatenate and slices for the others",
        )
    return mode
