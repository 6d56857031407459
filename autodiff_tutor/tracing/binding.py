"""Match a library call's arguments to a derivative rule's parameters.

``np.sum(a, axis=0, keepdims=True)`` and the rule ``sum(g, x, axis=None,
keepdims=False)`` name things differently; the call's signature says which argument
is which. The first parameters of the call are the rule's inputs, in order; the
rest are matched by name (with a few aliases such as ``min`` for ``a_min``).
Anything else that is passed (``dtype=``, ``where=``) is reported, never ignored.

>>> import numpy as np
>>> from autodiff_tutor.rules.registry import lookup
>>> bind(np.sum, lookup("sum"), (np.ones(3),), {"keepdims": True}).options
{'keepdims': True}
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff_tutor.rules.registry import Rule

# call parameter name -> rule parameter name
NAME_ALIASES = {"min": "a_min", "max": "a_max", "newshape": "shape", "x1": "x", "x2": "y"}


_EMPTY = inspect.Parameter.empty


@dataclass
class Bound:
    """A call matched to a rule: the rule's inputs and options, and what did not fit.

    >>> Bound([1.0], {"axis": 0}).unsupported
    []
    """

    inputs: list[Any]
    options: dict[str, Any]
    unsupported: list[str] = field(default_factory=list)


@functools.lru_cache(maxsize=512)
def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _is_default(value: Any, parameter: inspect.Parameter | None) -> bool:
    if value is None or value is np._NoValue:
        return True
    if parameter is None or parameter.default is _EMPTY:
        return False
    try:
        return bool(value == parameter.default)
    except Exception:  # arrays compare elementwise: not a default
        return False


def bind(fn: Any, rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Bound | None:
    """Match ``fn(*args, **kwargs)`` to ``rule``; ``None`` if the call does not bind.

    ``fn`` gives the parameter names; ufuncs (no Python signature) take their inputs
    positionally.

    >>> import numpy as np
    >>> from autodiff_tutor.rules.registry import lookup
    >>> b = bind(np.clip, lookup("clip"), (np.ones(2),), {"min": 0.0})
    >>> b.inputs[1:], b.unsupported
    ([0.0, inf], [])
    """
    if isinstance(fn, np.ufunc) or _signature(fn) is None:
        return _bind_positional(rule, args, kwargs)
    signature = _signature(fn)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None
    parameters = [
        p
        for p in signature.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    arguments = dict(bound.arguments)
    for p in signature.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(arguments.pop(p.name, {}))
        elif p.kind is inspect.Parameter.VAR_POSITIONAL and arguments.get(p.name):
            return _bind_positional(rule, args, kwargs)  # np.atleast_2d(*arys), np.einsum
    by_name = {p.name: p for p in signature.parameters.values()}
    missing = _stand_ins(rule)
    inputs: dict[str, Any] = {}
    for name, parameter in zip(rule.inputs, parameters, strict=False):
        if parameter.name in arguments:
            inputs[name] = arguments.pop(parameter.name)
    options: dict[str, Any] = {}
    unsupported: list[str] = []
    for given, value in arguments.items():
        target = NAME_ALIASES.get(given, given)
        if target in rule.inputs and target not in inputs:
            inputs[target] = value
        elif target in rule.options:
            options[target] = value
        elif not _is_default(value, by_name.get(given)):
            unsupported.append(given)
    values = []
    for name in rule.inputs:
        value = inputs.get(name)
        if value is None and name in missing:
            value = missing[name]
        elif name not in inputs:
            return None
        values.append(value)
    return Bound(values, options, unsupported)


def _stand_ins(rule: Rule) -> dict[str, Any]:
    """The values that stand for an input left out or given as ``None`` (the forward
    keeps the original call): the rule's ``defaults`` and ``none_means``.

    >>> from autodiff_tutor.rules.registry import lookup
    >>> _stand_ins(lookup("clip")), _stand_ins(lookup("norm_cdf"))
    ({'a_min': -inf, 'a_max': inf}, {'loc': 0.0, 'scale': 1.0})
    """
    return {**rule.defaults, **rule.none_means}


def _bind_positional(rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Bound | None:
    count = len(rule.inputs)
    if len(args) < count:  # norm.logpdf(x, mu): scipy's default scale, or scale= by name
        missing, rest = _stand_ins(rule), rule.inputs[len(args) :]
        if not all(name in missing or name in kwargs for name in rest):
            return None
        kwargs = dict(kwargs)
        args = (*args, *(kwargs.pop(name) if name in kwargs else missing[name] for name in rest))
    options = dict(zip(rule.options, args[count:], strict=False))
    unsupported = [n for n, v in kwargs.items() if n not in rule.options and v is not None]
    options.update({n: v for n, v in kwargs.items() if n in rule.options})
    if len(args) > count + len(rule.options):
        return None
    return Bound(list(args[:count]), options, unsupported)
