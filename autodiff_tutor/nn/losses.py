"""The cross-entropy loss, as an op with a hand-written backward, and ``one_hot``.

>>> import numpy as np
>>> P = np.array([[0.5, 0.5], [0.9, 0.1]])          # probabilities, format "BC"
>>> T = one_hot(np.array([0, 0]), 2)
>>> round(float(CrossEntropy()(P, T)), 4)              # mean of -log 0.5 and -log 0.9
0.3993
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.ops.formats import batch_axis, check_format
from autodiff_tutor.ops.function import DifferentiableFunction
from autodiff_tutor.runtime.backend import array_module

__all__ = ["CrossEntropy", "one_hot"]


def one_hot(labels: Any, num_classes: int, dtype: Any = None) -> Any:
    """One row per label with a 1 in the label's column (format ``"BC"``).

    >>> import numpy as np
    >>> one_hot(np.array([2, 0]), 3).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    xp = array_module(labels)
    dtype = dtype if dtype is not None else xp.float64
    classes = xp.reshape(xp.arange(num_classes), (1, num_classes))
    return xp.astype(xp.reshape(labels, (-1, 1)) == classes, dtype)


class CrossEntropy(DifferentiableFunction):
    """Mean cross-entropy ``-sum(T log P) / N`` of probabilities ``P`` and targets ``T``.

    ``N`` is the number of observations (the size of the ``B`` axis of ``fmt``).
    Probabilities are clipped at the dtype's smallest normal number, so an
    underflowed zero gives a large finite loss rather than ``nan``.

    >>> import numpy as np
    >>> loss = CrossEntropy()
    >>> P, T = np.array([[0.25, 0.75]]), np.array([[0.0, 1.0]])
    >>> (value,), saved = loss.op_forward(P, T)
    >>> d_P, d_T = loss.op_backward((np.float64(1.0),), (True, False), saved)
    >>> d_P.tolist(), d_T
    ([[-0.0, -1.3333333333333333]], None)
    """

    def __init__(self, fmt: str = "BC") -> None:
        super().__init__(save_inputs_for_backward=True, name="crossentropy")
        self.format = check_format(fmt)

    def _count(self, P: Any) -> int:
        b = batch_axis(self.format)
        return 1 if b is None else P.shape[b]

    def forward(self, P: Any, T: Any) -> Any:
        """The mean cross-entropy (a 0-d array)."""
        check_format(self.format, len(P.shape))
        xp = array_module(P)
        log_P = xp.log(xp.clip(P, xp.finfo(P.dtype).smallest_normal, 1.0))
        return -xp.sum(T * log_P) / self._count(P)

    def backward(self, dL: Any, compute_gradients: tuple[bool, ...], P: Any, T: Any) -> Any:
        """``dP = -dL T / P / N``; ``dT = -dL log P / N`` when asked for."""
        xp = array_module(P)
        clipped = xp.clip(P, xp.finfo(P.dtype).smallest_normal, 1.0)
        n = self._count(P)
        dP = -dL * T / clipped / n if compute_gradients[0] else None
        dT = -dL * xp.log(clipped) / n if compute_gradients[1] else None
        return dP, dT
