"""SReLU, the S-shaped rectified linear unit: five inputs, a hand-written backward.

For each channel ``i``, with left/right thresholds ``tl``, ``tr`` and left/right
slopes ``al``, ``ar``::

    f(x) = tl + al (x - tl)    if x <= tl
           x                   if tl < x < tr
           tr + ar (x - tr)    if tr <= x

The thresholds and slopes are channel-wise: one value per channel, size 1 on every
other axis (see :mod:`autodiff_tutor.ops.formats`). The forward is written by cases,
with ``xp.where``, as the definition reads: the left piece where ``x <= tl``, else the
right piece where ``x >= tr``, else the middle piece. So the derivative at a threshold
is the one of the piece that includes it: at ``x == tl`` the slope is ``al``, at
``x == tr`` it is ``ar``. If the thresholds cross (``tl > tr``) the middle piece is
empty and the definition still decides every ``x``: the left piece up to ``tl``, the
right piece above it.

The forward returns the cases it took (two boolean masks) as memory values, so the
backward does not compare again. It follows MATLAB's formulas, with the gradients
returned in the order of the inputs ``(X, tl, al, tr, ar)`` (MATLAB's listing
returns them in the order ``X, tl, tr, al, ar``, which does not match their
``computeGradients`` flags; here the order is the inputs' order, always).

>>> import numpy as np
>>> X = np.array([[-2.0, 0.5, 3.0]])                      # one observation, 3 channels
>>> tl, al = np.full((1, 3), -1.0), np.full((1, 3), 0.1)
>>> tr, ar = np.full((1, 3), 1.0), np.full((1, 3), 0.5)
>>> SReLUFunction("BC")(X, tl, al, tr, ar).tolist()
[[-1.1, 0.5, 2.0]]
>>> srelu_reference(X, tl, al, tr, ar).tolist()
[[-1.1, 0.5, 2.0]]
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

__all__ = ["SRELU_PARAMETERS", "SReLUFunction", "srelu", "srelu_reference"]

#: The learnable parameters of SReLU, in the op's input order after ``X``.
SRELU_PARAMETERS = ("tl", "al", "tr", "ar")


class SReLUFunction(DifferentiableFunction):
    """SReLU as a :class:`DifferentiableFunction` for data in format ``fmt``.

    ``SReLUFunction(fmt)(X, tl, al, tr, ar)``. The backward gets the inputs and two
    memory values: the forward's cases, as masks (one byte per element).

    >>> import numpy as np
    >>> op = SReLUFunction("BC")
    >>> X = np.array([[-2.0, 0.5]])
    >>> p = [np.array([[v, v]]) for v in (-1.0, 0.1, 1.0, 0.5)]
    >>> outputs, saved = op.op_forward(X, *p)
    >>> [mask.tolist() for mask in saved.memory]      # left, right
    [[[True, False]], [[False, False]]]
    >>> d_X, d_tl, d_al, d_tr, d_ar = op.op_backward((np.ones((1, 2)),), (True,) * 5, saved)
    >>> d_X.tolist(), d_tl.tolist(), d_al.tolist()
    ([[0.1, 1.0]], [[0.9, 0.0]], [[-1.0, 0.0]])
    """

    #: every gradient is a product or a sum made in ``backward``: a new array
    returns_new_arrays = True

    def __init__(self, fmt: str) -> None:
        super().__init__(
            num_outputs=1, save_inputs_for_backward=True, num_memory_values=2, name="srelu"
        )
        self.format = check_format(fmt)

    def forward(self, X: Any, tl: Any, al: Any, tr: Any, ar: Any) -> tuple[Any, Any, Any]:
        """SReLU by cases (left piece, else right piece, else middle), then the cases.

        ``left`` is where ``X <= tl``; ``right`` where ``X >= tr`` and the left piece is
        not taken (both hold only when the thresholds cross: the left piece wins).
        """
        check_channel_parameters(self.format, X, self.name, tl=tl, al=al, tr=tr, ar=ar)
        xp = array_module(X)
        left = X <= tl
        right = (tr <= X) & ~left
        Y = xp.where(left, tl + al * (X - tl), xp.where(right, tr + ar * (X - tr), X))
        return Y, left, right  # the output, then the memory values

    def backward(
        self,
        dY: Any,
        compute_gradients: tuple[bool, ...],
        X: Any,
        tl: Any,
        al: Any,
        tr: Any,
        ar: Any,
        left: Any,
        right: Any,
    ) -> tuple[Any, ...]:
        """Gradients for ``X, tl, al, tr, ar``; parameters sum over all but the channel axis.

        ``left`` and ``right`` are the forward's cases (its memory values): nothing is
        compared again. ``dX`` is ``dY`` times the slope of the piece each element took
        (picked per element, then one product). ``dY_left`` is ``dY`` where the left
        piece is taken and 0 elsewhere (a mask as a number: multiplying by it is faster
        than ``xp.where`` on large arrays), ``dY_right`` likewise. Only what the
        requested gradients need is computed. ``1 - al`` is the same for every element
        of a channel, so ``d_tl`` sums first and multiplies the per-channel sum
        (``d_tr`` too): one pass over the data fewer.
        """
        want_X, want_tl, want_al, want_tr, want_ar = compute_gradients
        xp = array_module(X, dY)
        dX = d_tl = d_al = d_tr = d_ar = None
        if want_X:  # the slope of the piece each element took
            dX = dY * xp.where(left, al, xp.where(right, ar, 1.0))
        if want_tl or want_al:
            dY_left = dY * xp.astype(left, dY.dtype)
        if want_tr or want_ar:
            dY_right = dY * xp.astype(right, dY.dtype)
        if want_tl:
            d_tl = reduce_to_channels(dY_left, self.format) * (1 - al)
        if want_al:
            d_al = reduce_to_channels(dY_left * (X - tl), self.format)
        if want_tr:
            d_tr = reduce_to_channels(dY_right, self.format) * (1 - ar)
        if want_ar:
            d_ar = reduce_to_channels(dY_right * (X - tr), self.format)
        return dX, d_tl, d_al, d_tr, d_ar


def srelu(X: Any, tl: Any, al: Any, tr: Any, ar: Any, fmt: str | None = None) -> Any:
    """Apply SReLU to ``X`` in data format ``fmt`` (MATLAB's interface function).

    A formatted ``X`` (:func:`~autodiff_tutor.ops.formats.formatted`, or
    ``traced(X, fmt)``) says its own format, and the output has the same labels.

    >>> import numpy as np
    >>> from autodiff_tutor.ops.formats import formatted
    >>> p = [np.full((1, 1), v) for v in (-1.0, 0.1, 1.0, 0.5)]
    >>> srelu(np.array([[-3.0], [0.0], [5.0]]), *p, fmt="BC").ravel().tolist()
    [-1.2, 0.0, 3.0]
    >>> srelu(formatted(np.array([[-3.0, 0.0, 5.0]]), "CB"), *p)
    formatted(array([[-1.2,  0. ,  3. ]]), 'CB')
    """
    fmt = data_format("srelu", X, fmt, tl, al, tr, ar)
    return labelled_like(SReLUFunction(fmt)(X, tl, al, tr, ar), X)


# the compiler calls the op itself: srelu.make_op(fmt).op_forward(X, tl, al, tr, ar)
srelu.make_op = SReLUFunction
srelu.static_params = ("fmt",)


def srelu_reference(X: Any, tl: Any, al: Any, tr: Any, ar: Any) -> Any:
    """The SReLU forward as straight-line numpy with masks, for the compiler to read.

    No backward here: ``@differentiable`` derives one from this code, and the tests
    compare it with :class:`SReLUFunction`'s hand-written backward. It equals
    :class:`SReLUFunction`'s forward for ordered thresholds (``tl < tr``); if they
    cross, two masks hold between them and both outer pieces add up.

    >>> import numpy as np
    >>> float(srelu_reference(np.array(2.0), -1.0, 0.1, 1.0, 0.5))
    1.5
    """
    left = (X <= tl) * (tl + al * (X - tl))
    middle = ((tl < X) & (X < tr)) * X
    right = (tr <= X) * (tr + ar * (X - tr))
    return left + middle + right
