"""Data-parallel training on a Dask cluster: gradients on the workers, the update here.

MATLAB's rule for training in parallel: a traced value sent to another process
arrives as plain data, without its trace, so each worker computes the gradient of its
own shard of the data, and the client combines them and updates the parameters. Here
the engine is Dask's ``distributed`` (the optional ``[parallel]`` extra): the same
code runs on a ``LocalCluster`` of processes on one machine and on a real cluster.

- :class:`ParallelGradient` is the value and gradient of a loss averaged over the
  rows of some data, each shard's computed on a worker by a function of yours: a
  compiled ``value_and_grad(loss)`` (sent to the workers by reference, or by value
  from a notebook: see :mod:`autodiff_tutor.pickling`), or a function that calls
  tracing's ``value_and_gradient`` there;
- :func:`train_parallel` is :func:`~autodiff_tutor.nn.train` with each mini-batch's
  gradient computed shard by shard on the workers.

The shards' results are combined in shard order, weighted by their rows, so a step's
result does not depend on which worker computed which shard, and a task whose worker
failed or vanished is run again by the engine on another one.

>>> import numpy as np
>>> from dask.distributed import Client, LocalCluster
>>> from autodiff_tutor import value_and_grad
>>> from autodiff_tutor.nn.parallel import ParallelGradient
>>> cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
...                        dashboard_address=None)
>>> client = Client(cluster)
>>> def mean_square(w, X):
...     return np.sum((X @ w) ** 2) / X.shape[0]
>>> X = np.arange(12.0).reshape(6, 2)
>>> both = ParallelGradient(client, value_and_grad(mean_square), X, shards=3)
>>> value, gradient = both(np.array([1.0, -1.0]))
>>> float(value), gradient.tolist()
(1.0, [-10.0, -12.0])
>>> client.close(); cluster.close()
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.locations import location
from autodiff_tutor.nn.losses import CrossEntropy
from autodiff_tutor.nn.network import Network
from autodiff_tutor.nn.optimizers import Adam, Optimizer
from autodiff_tutor.nn.training import History, batch_gradients, run_epochs
from autodiff_tutor.runtime.backend import array_module, shape_of

__all__ = [
    "ParallelGradient",
    "fresh",
    "shard_gradients",
    "train_parallel",
    "weighted_mean",
]


def weighted_mean(parts: Sequence[Any], weights: Sequence[float]) -> Any:
    """``sum(w * part) / sum(w)`` in the order given, for arrays and for tuples, lists
    and dicts of them (the gradients of several parameters).

    >>> import numpy as np
    >>> weighted_mean([(np.ones(2), 1.0), (np.zeros(2), 3.0)], [1, 3])
    (array([0.25, 0.25]), 2.5)
    """
    first = parts[0]
    if isinstance(first, dict):
        return {k: weighted_mean([p[k] for p in parts], weights) for k in first}
    if isinstance(first, (tuple, list)):
        columns = [weighted_mean([p[i] for p in parts], weights) for i in range(len(first))]
        return type(first)(columns)
    total = sum(weights)
    combined = first * (weights[0] / total)
    for part, weight in zip(parts[1:], weights[1:], strict=True):
        combined = combined + part * (weight / total)
    return combined


def _workers(client: Any) -> list[str]:
    workers = list(client.scheduler_info()["workers"])
    if not workers:
        raise ArgumentError(
            "the Dask client has no workers to compute on",
            location(),
            hint="start a cluster with workers, e.g. Client(LocalCluster(n_workers=2))",
        )
    return workers


def _placement(shards: int, workers: Sequence[str] | None) -> list[Any]:
    """Where each shard's task may run: anywhere (``None``), or the worker given."""
    if workers is None:
        return [None] * shards
    if len(workers) != shards:
        raise ArgumentError(
            f"workers names one worker per shard: {shards} shards, {len(workers)} workers",
            location(),
        )
    return [[w] for w in workers]


def _run(client: Any, fn: Callable[..., Any], tasks: list[tuple], placement: list[Any]) -> list:
    """``fn(*task)`` for each task on the workers, the results in the tasks' order
    (whoever computed them)."""
    futures = [
        client.submit(fn, *task, workers=where, pure=False)
        for task, where in zip(tasks, placement, strict=True)
    ]
    return client.gather(futures)


class ParallelGradient:
    """``(value, gradient)`` of a loss averaged over the rows of ``data``, each shard's
    computed on a Dask worker by ``value_and_grad(params, *shard)``.

    ``data`` (arrays with one row per observation) is split into ``shards`` blocks of
    rows (one per worker by default) and sent to every worker once (so that a task
    whose worker vanished can run again on another); each call
    scatters ``params``, runs one task per shard and combines the results in shard
    order, each weighted by its number of rows: the loss must be a *mean* over the
    rows. ``value_and_grad`` is a compiled ``value_and_grad(loss)``, or any function
    returning ``(value, gradient)``, for example one that calls tracing's
    ``value_and_gradient`` on the worker; its gradient may be an array or a tuple,
    list or dict of arrays. ``workers=[...]`` on a call pins shard ``k`` to the
    worker named ``k``-th (the result does not change).

    >>> import numpy as np
    >>> from dask.distributed import Client, LocalCluster
    >>> from autodiff_tutor.tracing import evaluate, gradient, traced
    >>> cluster = LocalCluster(n_workers=2, processes=False, dashboard_address=None)
    >>> client = Client(cluster)
    >>> def traced_mean_square(w, X):  # on the worker: the gradient inside evaluate
    ...     def loss_and_gradient(w):
    ...         loss = np.sum((X @ w) ** 2) / X.shape[0]
    ...         return loss, gradient(loss, w)
    ...     return evaluate(loss_and_gradient, traced(w))
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> value, slope = ParallelGradient(client, traced_mean_square, X)(np.array([1.0, -1.0]))
    >>> float(value), slope.tolist()
    (1.0, [-10.0, -12.0])
    >>> client.close(); cluster.close()
    """

    def __init__(
        self,
        client: Any,
        value_and_grad: Callable[..., tuple[Any, Any]],
        *data: Any,
        shards: int | None = None,
    ) -> None:
        if not data:
            raise ArgumentError("ParallelGradient needs data to split into shards", location())
        rows = shape_of(data[0])[0]
        if any(shape_of(d)[0] != rows for d in data):
            raise ArgumentError(
                "every data array needs one row per observation: "
                f"{[shape_of(d)[0] for d in data]} rows",
                location(),
            )
        shards = len(_workers(client)) if shards is None else shards
        if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= rows:
            raise ArgumentError(
                f"shards must be an integer from 1 to the {rows} rows, got {shards!r}", location()
            )
        self.client = client
        self.value_and_grad = value_and_grad
        blocks = np.array_split(np.arange(rows), shards)
        self.rows = [len(block) for block in blocks]
        pieces = [tuple(_take(d, block) for d in data) for block in blocks]
        # on every worker: a task whose worker vanished runs again on another
        self.shards = client.scatter(pieces, broadcast=True, hash=False)

    def __call__(self, params: Any, workers: Sequence[str] | None = None) -> tuple[Any, Any]:
        [shipped] = self.client.scatter([params], broadcast=True, hash=False)
        placement = _placement(len(self.shards), workers)
        tasks = [(self.value_and_grad, shipped, shard) for shard in self.shards]
        results = _run(self.client, _value_and_grad_of_shard, tasks, placement)
        values = [value for value, _ in results]
        gradients = [gradient for _, gradient in results]
        return weighted_mean(values, self.rows), weighted_mean(gradients, self.rows)


def _take(data: Any, rows: Any) -> Any:
    xp = array_module(data)
    return xp.take(data, xp.asarray(rows), axis=0)


def _value_and_grad_of_shard(
    value_and_grad: Callable[..., tuple[Any, Any]], params: Any, shard: tuple[Any, ...]
) -> tuple[Any, Any]:
    """On a worker: one shard's value and gradient, computed on fresh copies of the
    arrays (see :func:`fresh`)."""
    return value_and_grad(fresh(params), *fresh(shard))


def fresh(value: Any) -> Any:
    """Copies of the arrays in ``value`` (arrays, tuples, lists, dicts, objects),
    in memory allocated here.

    An array unpickled from a message may start at any byte of its buffer, and BLAS
    rounds a product of misaligned arrays differently (it peels the first elements
    off to align the rest): a shard's gradient would then depend on where its bytes
    landed, so on which worker computed it. Fresh copies are aligned as every array
    of this process is.

    >>> import numpy as np
    >>> shard = (np.ones(3), {"w": np.zeros(2)})
    >>> copied = fresh(shard)
    >>> copied[0] is shard[0], copied[1]["w"].tolist()
    (False, [0.0, 0.0])
    """
    return copy.deepcopy(value)


def shard_gradients(
    model: Network, loss: Any, X: Any, y: Any, rows: Any, autodiff: str | None
) -> tuple[float, dict[tuple[str, str], Any]]:
    """On a worker: the mean loss of ``model`` on the rows ``rows`` of ``X`` and ``y``
    and its gradients, ``{(node, name): gradient}`` (the pass
    :func:`~autodiff_tutor.nn.train` makes for a batch).

    >>> import numpy as np
    >>> from autodiff_tutor.nn import CrossEntropy, FullyConnected, Sequential, Softmax
    >>> X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    >>> model = Sequential([FullyConnected(2), Softmax()]).initialize(X)
    >>> value, grads = shard_gradients(model, CrossEntropy(), X, y, np.array([1]), None)
    >>> sorted(grads)
    [('FullyConnected', 'W'), ('FullyConnected', 'b')]
    """
    model = fresh(model)  # and the worker's shared copy is left as it came
    X_batch, y_batch = _take(X, rows), _take(y, rows)  # new arrays
    return batch_gradients(model, loss, X_batch, y_batch, autodiff)


def train_parallel(
    client: Any,
    model: Network,
    X: Any,
    y: Any,
    *,
    loss: Any = None,
    optimizer: Optimizer | None = None,
    epochs: int = 100,
    batch_size: int | None = None,
    shards: int | None = None,
    progress: bool = True,
    seed: int = 0,
    autodiff: str | None = None,
    workers: Sequence[str] | None = None,
) -> History:
    """:func:`~autodiff_tutor.nn.train` with each mini-batch's gradient computed on the
    Dask workers of ``client``: the same batches (seeded the same way), each split
    into ``shards`` blocks (one per worker by default). ``X`` and ``y`` are sent to
    every worker once; each step sends the model, each worker computes the mean loss
    of its block and its gradients (:func:`shard_gradients`: compiled or traced as
    ``autodiff`` says), and the client averages them in block order, weighted by
    rows, and updates the model with ``optimizer``. ``loss`` must be a mean over the
    observations (cross-entropy by default). ``workers=[...]`` pins block ``k`` to
    the ``k``-th worker named. A tqdm bar shows the epochs and the loss.

    A layer that draws random numbers (dropout) draws them on the workers' copies,
    so its draws differ from :func:`~autodiff_tutor.nn.train`'s.

    >>> import numpy as np
    >>> from dask.distributed import Client, LocalCluster
    >>> from autodiff_tutor.nn import FullyConnected, Sequential, Softmax, accuracy
    >>> cluster = LocalCluster(n_workers=2, processes=False, dashboard_address=None)
    >>> client = Client(cluster)
    >>> X = np.array([[-1.0], [-2.0], [1.0], [2.0]])
    >>> y = np.array([0, 0, 1, 1])
    >>> model = Sequential([FullyConnected(2), Softmax()]).initialize(X)
    >>> history = train_parallel(client, model, X, y, optimizer=Adam(0.1), epochs=20,
    ...                          progress=False)
    >>> history.loss[-1] < history.loss[0], accuracy(model, X, y)
    (True, 1.0)
    >>> client.close(); cluster.close()
    """
    shards = len(_workers(client)) if shards is None else shards
    loss = loss if loss is not None else CrossEntropy()
    optimizer = optimizer if optimizer is not None else Adam()
    X_shipped, y_shipped = client.scatter([X, y], broadcast=True, hash=False)

    def step(rows: Any) -> float:
        blocks = [b for b in np.array_split(rows, shards) if len(b)]
        [shipped] = client.scatter([model], broadcast=True, hash=False)
        placement = _placement(shards, workers)[: len(blocks)]
        tasks = [(shipped, loss, X_shipped, y_shipped, block, autodiff) for block in blocks]
        results = _run(client, shard_gradients, tasks, placement)
        sizes = [len(b) for b in blocks]
        optimizer.update(model, weighted_mean([g for _, g in results], sizes))
        return sum(value * r for (value, _), r in zip(results, sizes, strict=True))

    return run_epochs(X, y, epochs, batch_size, seed, progress, "training in parallel", step)
