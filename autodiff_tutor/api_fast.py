"""The fast call of ``value_and_grad``: the common call with only the checks it needs.

Once a call of a function has gone through every check (:mod:`autodiff_tutor.api`),
later calls with every argument by position run :func:`fast_call`: the pair
specialized on the arguments' shapes and dtypes where there is one
(:mod:`.specialized`), else the general pair.

>>> import numpy as np
>>> from autodiff_tutor.compiled import differentiable
>>> def f(x):
...     return np.sum(x * x)
>>> compiled = differentiable(f)
>>> out, (g,) = fast_call(compiled, compiled.derivative(0), (np.arange(3.0),))
>>> float(out), g.tolist()
(5.0, [0.0, 2.0, 4.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from autodiff_tutor.api_checks import owned, scalar_seed
from autodiff_tutor.compiled import Differentiable
from autodiff_tutor.compiler.pipeline import Derivative
from autodiff_tutor.compiler.specialized import Specialized, specialized_pair
from autodiff_tutor.foreign_libraries import library_of
from autodiff_tutor.pytree import ObjectView, is_static, is_user_object
from autodiff_tutor.runtime.guards import GuardFailed

#: Arguments that may be structures: the general path flattens them.
CONTAINERS = (dict, list, tuple, ObjectView)


def fast_call(
    compiled: Differentiable, derivative: Derivative, args: tuple[Any, ...]
) -> tuple[Any, tuple[Any, ...]] | None:
    """The common call, with the checks it needs and no more: every argument by
    position, the ones in ``wrt`` float numpy arrays, none a structure, a float numpy
    scalar out, and gradients that are fresh arrays (else copied where needed, as
    :func:`owned` does). It runs the pair specialized on the arguments' shapes and
    dtypes where there is one (``f.show(specialized=True)``); where one of its checks
    fails (a custom op's output of another shape, a branch going the other way), the
    specialization is dropped and the general pair runs the call. ``None``, before
    anything ran, hands the call to the general path."""
    if len(args) != len(derivative.program.params):
        return None
    specialized = specialized_pair(derivative, args)
    try:
        if specialized is not None and specialized.seed is not None:
            out, memory = specialized.forward(*args)  # the guard key assures the checks below
            if type(out) is type(specialized.seed):
                gradients = specialized.backward(specialized.seed, memory)
                if specialized.unsure:  # a custom op's gradients: are they fresh?
                    return out, _fresh(gradients, args, specialized.unsure)
                return out, gradients
            return out, owned(specialized.backward(scalar_seed(compiled, out), memory), args)
        return _run_pair(compiled, derivative, specialized, args)
    except GuardFailed:  # a custom op's shape, a branch's path: not as probed
        derivative.specializations[specialized.key] = None  # general code for this key
        return _run_pair(compiled, derivative, None, args)


def _run_pair(
    compiled: Differentiable,
    derivative: Derivative,
    specialized: Specialized | None,
    args: tuple[Any, ...],
) -> tuple[Any, tuple[Any, ...]] | None:
    """The fast call of ``specialized`` (or the general pair) where the guard key does
    not assure the checks: they run here."""
    for value in args:
        if type(value) is not np.ndarray and (
            isinstance(value, CONTAINERS)
            or library_of(value) is not None
            or is_static(value)
            or is_user_object(value)
        ):
            return None  # a structure, a function, another library's value: the general path
    for i in derivative.wrt_positions:
        value = args[i]
        if type(value) is not np.ndarray or value.dtype.kind != "f":
            return None
    pair = specialized or derivative
    out, memory = pair.forward(*args)
    if isinstance(out, np.generic) and out.dtype.kind == "f":
        seed = out.dtype.type(1)
    else:
        seed = scalar_seed(compiled, out)  # a located error, or the seed of a 0-d array
    return out, _fresh(pair.backward(seed, memory), [seed, *args])


def _fresh(
    gradients: tuple[Any, ...], others: Sequence[Any], positions: Sequence[int] | None = None
) -> tuple[Any, ...]:
    """``gradients`` where each at ``positions`` (every one where ``None``; the others
    are new arrays the backward made) is a new writable numpy array of its own, none
    one of ``others`` or another gradient; else as :func:`owned` makes them (copied
    where needed)."""
    unsure = gradients if positions is None else [gradients[i] for i in positions]
    for g in unsure:
        if type(g) is not np.ndarray or g.base is not None or not g.flags.writeable:
            return owned(gradients, others)
    ids = set(map(id, unsure))
    if len(ids) != len(unsure) or not ids.isdisjoint(map(id, others)):
        return owned(gradients, others)  # a gradient is an argument, or two are one array
    return gradients
