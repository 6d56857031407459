"""Second derivatives inside ``evaluate`` (MATLAB's ``EnableHigherDerivatives``).

``gradient(y, x, higher_derivatives=True)`` runs each derivative rule on the traced
values its record saved, so the backward pass is recorded on the trace like any
other computation and its result can be differentiated again. The rules call runtime
helpers (``unbroadcast``, ``scatter``...), which are primitives with rules of their
own: here they are routed through tracing, so each is one recorded operation. What
cannot be recorded is refused at the user's ``gradient`` call.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, gradient, traced
>>> def curvature(x):
...     slope = gradient(np.sum(x**3), x, higher_derivatives=True)  # 3 x^2
...     return gradient(np.sum(slope), x)  # 6 x
>>> evaluate(curvature, traced([1.0, 2.0]))
array([ 6., 12.])
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any

from autodiff_tutor.errors import TracingError
from autodiff_tutor.locations import location
from autodiff_tutor.runtime import helpers, helpers_indexing
from autodiff_tutor.tracing.namespace import numpy_like

traced_unbroadcast = numpy_like(helpers).unbroadcast  # broadcasting undone, recorded
ROUTED_MODULES = (helpers.__name__, helpers_indexing.__name__)
"""The modules whose helpers a rule run on traced values records as primitives."""


@functools.cache
def traced_globals(rule_fn: Callable[..., Any]) -> dict[str, Any]:
    """The rule's globals with the runtime helpers it calls (``unbroadcast``,
    ``scatter``...) routed through tracing, so that a rule run on traced values
    records the helpers as the primitives they are (higher derivatives)."""
    rule_globals = inspect.unwrap(rule_fn).__globals__
    routed = dict(rule_globals)
    for name, value in rule_globals.items():
        if value is helpers:
            routed[name] = numpy_like(helpers)
        elif inspect.isfunction(value) and value.__module__ in ROUTED_MODULES:
            if not _returns_a_list(value):  # a list is not one recorded value: those
                routed[name] = getattr(numpy_like(helpers), name)  # run on traced items
    return routed


def _returns_a_list(helper: Callable[..., Any]) -> bool:
    """Whether a runtime helper returns a list of arrays (``unstack``, ``split_like``).

    >>> _returns_a_list(helpers.unstack), _returns_a_list(helpers.unbroadcast)
    (True, False)
    """
    return str(inspect.signature(helper).return_annotation).startswith("list")


@functools.cache
def traced_rule(rule_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``rule_fn`` with its helpers routed through tracing (see :func:`traced_globals`).

    >>> import numpy as np
    >>> from autodiff_tutor.rules.registry import lookup
    >>> traced_rule(lookup("getitem").vjp)(g=1.0, x=np.zeros(3), index=1)  # plain: as before
    array([0., 1., 0.])
    """
    fn = inspect.unwrap(rule_fn)
    routed = types.FunctionType(
        fn.__code__, traced_globals(rule_fn), fn.__name__, fn.__defaults__, fn.__closure__
    )
    routed.__kwdefaults__ = fn.__kwdefaults__
    return routed


def higher_through_custom(record: Any) -> TracingError:
    """``gradient(..., higher_derivatives=True)`` through a custom op's record.

    >>> from types import SimpleNamespace
    >>> higher_through_custom(SimpleNamespace(op="srelu", where="f.py:3")).message[:40]
    'gradient(..., higher_derivatives=True): '
    """
    return TracingError(
        "gradient(..., higher_derivatives=True): the custom op "
        f"{record.op!r} ({record.where}) computes its backward pass with its own "
        "op_backward on plain arrays, which the trace cannot differentiate again.",
        location(),
        hint="take higher derivatives of functions made of numpy operations, or give "
        "the op's backward pass as numpy operations in a function of its own",
    )


def higher_through_rule(record: Any, error: Exception) -> TracingError:
    """``gradient(..., higher_derivatives=True)`` through a rule that tracing cannot
    run on traced values (it calls a function without a rule of its own).

    >>> from types import SimpleNamespace
    >>> record = SimpleNamespace(op="eigvalsh", where="f.py:3")
    >>> higher_through_rule(record, ValueError("no rule for eigh")).message[:60]
    "gradient(..., higher_derivatives=True): the derivative of 'e"
    """
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return TracingError(
        f"gradient(..., higher_derivatives=True): the derivative of {record.op!r} "
        f"({record.where}) cannot be recorded for a second derivative: its rule computes "
        f"with an operation that tracing cannot differentiate again ({reason}).",
        location(),
        hint=f"first derivatives through {record.op!r} work (without "
        "higher_derivatives=True); for second derivatives, write that step with other "
        "operations",
    )
