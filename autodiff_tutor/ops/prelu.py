"""PReLU, the parametric ReLU: a learnable slope ``alpha`` per channel for ``x <= 0``.

::

    f(x) = x           if x > 0
           alpha x     if x <= 0

``alpha`` is channel-wise (see :mod:`autodiff_tutor.ops.formats`), so its gradient
sums ``d_y * min(x, 0)`` over every axis but the channel axis. At the kink ``x == 0``
the backward uses the slope ``alpha`` (MATLAB's example code does: only ``x > 0`` gets slope
1), and ``d alpha`` gets ``0 * d_y`` there.

>>> import numpy as np
>>> X, alpha = np.array([[-2.0, 0.0, 3.0]]), np.full((1, 3), 0.25)
>>> PReLUFunction("BC")(X, alpha).tolist()
[[-0.5, 0.0, 3.0]]
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.ops.formats import (
    check_channel_parameters,
    check_format,
    data_format,
    labelled_like,
    reduce_to_channels,
)
from autodiff_tutor.ops.function import DifferentiableFunction
from autodiff_tutor.runtime.backend import array_module

__all__ = ["PReLUFunction", "prelu", "prelu_reference"]


class PReLUFunction(DifferentiableFunction):
    """PReLU as a :class:`DifferentiableFunction` for data in format ``fmt``.

    ``PReLUFunction(fmt)(X, alpha)``; the backward needs the inputs only.

    >>> import numpy as np
    >>> op = PReLUFunction("SCB")
    >>> X = np.array([-1.0, 2.0]).reshape(2, 1, 1)      # 2 positions, 1 channel, 1 obs
    >>> (_,), saved = op.op_forward(X, np.full((1, 1, 1), 0.5))
    >>> d_X, d_alpha = op.op_backward((np.ones((2, 1, 1)),), (True, True), saved)
    >>> d_X.ravel().tolist(), d_alpha.ravel().tolist()
    ([0.5, 1.0], [-1.0])
    """

    #: every gradient is a product or a sum made in ``backward``: a new array
    returns_new_arrays = True

    def __init__(self, fmt: str) -> None:
        super().__init__(num_outputs=1, save_inputs_for_backward=True, name="prelu")
        self.format = check_format(fmt)

    def forward(self, X: Any, alpha: Any) -> Any:
        """``x`` where positive, ``alpha * x`` elsewhere."""
        check_channel_parameters(self.format, X, self.name, alpha=alpha)
        xp = array_module(X)
        return xp.where(X > 0, X, alpha * X)

    def backward(
        self, dY: Any, compute_gradients: tuple[bool, ...], X: Any, alpha: Any
    ) -> tuple[Any, Any]:
        """Gradients for ``X`` and ``alpha`` (summed over all but the channel axis)."""
        xp = array_module(X, dY)
        dX = d_alpha = None
        if compute_gradients[0]:
            dX = xp.where(X > 0, dY, alpha * dY)
        if compute_gradients[1]:
            d_alpha = reduce_to_channels(dY * xp.minimum(X, 0), self.format)  # X where X <= 0
        return dX, d_alpha


def prelu(X: Any, alpha: Any, fmt: str | None = None) -> Any:
    """Apply PReLU to ``X`` in data format ``fmt`` (or the labels of a formatted ``X``,
    which the output keeps).

    >>> import numpy as np
    >>> from autodiff_tutor.ops.formats import formatted
    >>> prelu(np.array([[-4.0, 4.0]]), np.array([[0.5, 0.5]]), "BC").tolist()
    [[-2.0, 4.0]]
    >>> prelu(formatted(np.array([[-4.0, 4.0]]), "BC"), np.array([[0.5], [0.5]]))
    formatted(array([[-2.],
           [ 4.]]), 'CB')
    """
    fmt = data_format("prelu", X, fmt, alpha)
    return labelled_like(PReLUFunction(fmt)(X, alpha), X)


# the compiler calls the op itself: prelu.make_op(fmt).op_forward(X, alpha)
prelu.make_op = PReLUFunction
prelu.static_params = ("fmt",)


def prelu_reference(X: Any, alpha: Any) -> Any:
    """The PReLU forward as straight-line numpy with masks, for the compiler to read.

    >>> import numpy as np
    >>> prelu_reference(np.array([-2.0, 3.0]), 0.5).tolist()
    [-1.0, 3.0]
    """
    positive = (X > 0) * X
    negative = (X <= 0) * (alpha * X)
    return positive + negative
