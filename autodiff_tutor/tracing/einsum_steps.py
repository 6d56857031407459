"""``np.einsum`` calls the two-operand rule does not bind directly, traced as the
steps they are: three or more operands as two-operand einsums in turn, one operand as
the sum, transpose, trace or diagonal it is (the compiler makes the same steps; the
plans come from the einsum record's module).

>>> import numpy as np
>>> einsum_steps(np.einsum, ("ij,jk", np.eye(2), np.eye(2)), {}, None) is None  # the rule's
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autodiff_tutor.rules.einsum_plans import einsum_in_pairs, einsum_of_one
from autodiff_tutor.runtime.backend import array_module


def einsum_steps(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], call: Callable[..., Any]
) -> tuple[Any] | None:
    """``(result,)`` of ``np.einsum(*args)`` computed by ``call`` (tracing's
    ``call_function``) step by step, or ``None`` when the call is the rule's own case
    or one it refuses."""
    if kwargs or not args or not isinstance(args[0], str):  # subscripts: a literal, as numpy's
        return None
    subscripts = args[0]
    pairs = einsum_in_pairs(subscripts) if len(args) > 3 else None
    if pairs is not None and len(pairs) == len(args) - 2:
        result = args[1]
        for spec, operand in zip(pairs, args[2:], strict=True):
            result = call(fn, (spec, result, operand), {})
        return (result,)
    steps = einsum_of_one(subscripts) if len(args) == 2 else None
    if steps is None:
        return None
    result, xp = args[1], array_module(getattr(args[1], "_data", args[1]))
    for function, options in steps:
        result = call(getattr(xp, function), (result,), dict(options))
    return (result,)
