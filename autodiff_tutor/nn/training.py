"""A small training loop: mini-batches, a loss op, an optimizer, a progress bar.

``train`` returns a :class:`History` whose ``loss`` list (one mean loss per epoch) a
notebook can plot directly.

>>> import numpy as np
>>> from autodiff_tutor.nn import FullyConnected, Sequential, Softmax
>>> X = np.array([[-1.0], [-2.0], [1.0], [2.0]])
>>> y = np.array([0, 0, 1, 1])
>>> model = Sequential([FullyConnected(2), Softmax()]).initialize(X)
>>> history = train(model, X, y, optimizer=Adam(0.1), epochs=30, progress=False)
>>> len(history.loss), history.loss[-1] < history.loss[0], accuracy(model, X, y)
(30, True, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from autodiff_tutor.errors import ArgumentError, front_door
from autodiff_tutor.locations import location
from autodiff_tutor.nn.losses import CrossEntropy, one_hot
from autodiff_tutor.nn.network import Network
from autodiff_tutor.nn.optimizers import Adam, Optimizer
from autodiff_tutor.runtime.backend import array_module, ones_like, shape_of

__all__ = ["History", "accuracy", "train"]


@dataclass
class History:
    """What happened during training: the mean loss of every epoch.

    >>> History([1.0, 0.5]).final_loss
    0.5
    """

    loss: list[float] = field(default_factory=list)

    @property
    def final_loss(self) -> float:
        """The last epoch's loss."""
        return self.loss[-1]

    def plot(self, ax: Any = None) -> Any:
        """Plot the loss against the epoch with matplotlib; returns the axes."""
        import matplotlib.pyplot as plt

        ax = ax if ax is not None else plt.gca()
        ax.plot(range(1, len(self.loss) + 1), self.loss)
        ax.set_xlabel("epoch")
        ax.set_ylabel("loss")
        return ax


def _targets(y: Any, num_classes: int, dtype: Any) -> Any:
    """One-hot targets from integer labels; float targets are used as they are."""
    if len(shape_of(y)) == 1:
        return one_hot(y, num_classes, dtype)
    return y


def _labels(y: Any) -> Any:
    xp = array_module(y)
    return y if len(shape_of(y)) == 1 else xp.argmax(y, axis=1)


def accuracy(model: Network, X: Any, y: Any) -> float:
    """The fraction of observations whose most probable class is the label.

    ``y`` holds integer labels or one-hot rows.

    >>> import numpy as np
    >>> from autodiff_tutor.nn import Sequential, Softmax
    >>> model = Sequential([Softmax()]).initialize(np.zeros((1, 2)))
    >>> accuracy(model, np.array([[2.0, 0.0], [0.0, 2.0]]), np.array([0, 0]))
    0.5
    """
    xp = array_module(X)
    predicted = xp.argmax(model.predict(X), axis=1)
    hits = xp.astype(predicted == xp.astype(_labels(y), predicted.dtype), xp.float64)
    return float(xp.mean(hits))


@front_door
def train(
    model: Network,
    X: Any,
    y: Any,
    *,
    loss: Any = None,
    optimizer: Optimizer | None = None,
    epochs: int = 100,
    batch_size: int | None = None,
    progress: bool = True,
    seed: int = 0,
    autodiff: str | None = None,
) -> History:
    """Train ``model`` on ``X`` (format ``"BC"``) and labels or one-hot targets ``y``.

    ``loss`` is an op taking ``(P, T)`` (cross-entropy by default), ``optimizer`` an
    :class:`~autodiff_tutor.nn.SGD` or :class:`~autodiff_tutor.nn.Adam` (Adam with
    its defaults by default). Mini-batches of ``batch_size`` observations (all of
    them by default) are drawn in a seeded random order each epoch. With ``progress``
    a tqdm bar shows the epochs and the current loss. Layers without a backward are
    differentiated by ``autodiff`` (``"compiler"`` or ``"tracing"``; the model's own
    setting by default).

    >>> import numpy as np
    >>> from autodiff_tutor.nn import FullyConnected, Sequential, Softmax
    >>> X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    >>> model = Sequential([FullyConnected(2), Softmax()]).initialize(X)
    >>> len(train(model, X, y, epochs=3, progress=False).loss)
    3
    """
    loss = loss if loss is not None else CrossEntropy()
    optimizer = optimizer if optimizer is not None else Adam()
    xp = array_module(X)

    def step(rows: Any) -> float:
        index = xp.asarray(rows)
        X_batch, y_batch = xp.take(X, index, axis=0), xp.take(y, index, axis=0)
        value, grads = batch_gradients(model, loss, X_batch, y_batch, autodiff)
        optimizer.update(model, grads)
        return value * len(rows)

    return run_epochs(X, y, epochs, batch_size, seed, progress, "training", step)


def batch_gradients(
    model: Network, loss: Any, X_batch: Any, y_batch: Any, autodiff: str | None
) -> tuple[float, Any]:
    """The loss of one mini-batch and the model's gradients of it (one step of
    :func:`train`, one block of :func:`~autodiff_tutor.nn.parallel.train_parallel`).

    >>> import numpy as np
    >>> from autodiff_tutor.nn import FullyConnected, Sequential, Softmax
    >>> X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    >>> model = Sequential([FullyConnected(2), Softmax()]).initialize(X)
    >>> value, grads = batch_gradients(model, CrossEntropy(), X, y, None)
    >>> bool(np.isclose(value, np.log(2.0), atol=1.0))
    True
    """
    P, tape = model.record(X_batch, autodiff=autodiff)
    T = _targets(y_batch, shape_of(P)[1], P.dtype)
    (value,), saved = loss.op_forward(P, T)
    (dP, _) = loss.op_backward((ones_like(value),), (True, False), saved)
    return float(value), model.backward(tape, dP)


def run_epochs(
    X: Any,
    y: Any,
    epochs: int,
    batch_size: int | None,
    seed: int,
    progress: bool,
    description: str,
    step: Callable[[Any], float],
) -> History:
    """The loop :func:`train` and :func:`~autodiff_tutor.nn.parallel.train_parallel`
    share: check the sizes, draw each epoch's mini-batches in a seeded random order,
    call ``step(rows)`` (the batch's row numbers; it returns the batch's summed loss)
    and record each epoch's mean loss, with a tqdm bar when ``progress``.

    >>> import numpy as np
    >>> run_epochs(np.zeros((4, 1)), np.zeros(4), 2, 2, 0, False, "", len).loss
    [1.0, 1.0]
    """
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ArgumentError(f"epochs must be a positive integer, got {epochs!r}", location())
    n = shape_of(X)[0]
    if shape_of(y)[0] != n:
        raise ArgumentError(
            f"X has {n} observations but y has {shape_of(y)[0]}",
            location(),
            hint="one label (or one-hot row) per row of X",
        )
    batch_size = n if batch_size is None else batch_size
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ArgumentError(
            f"batch_size must be a positive integer, got {batch_size!r}", location()
        )
    rng = np.random.default_rng(seed)
    history = History()
    epoch_range: Any = range(epochs)
    bar = None
    if progress:
        epoch_range = bar = tqdm(epoch_range, desc=description, unit="epoch")
    for _ in epoch_range:
        order = rng.permutation(n)
        total = sum(step(order[start : start + batch_size]) for start in range(0, n, batch_size))
        history.loss.append(total / n)
        if bar is not None:
            bar.set_postfix(loss=f"{history.loss[-1]:.4f}")
    return history
