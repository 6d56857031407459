"""The derivative-rule registry: one small function per primitive.

A rule is a plain Python function whose single ``return`` expression the compiler
inlines into the generated backward, so the generated code shows the math. Its
parameters follow one convention:

- ``g``: the gradient of the primitive's output (always first);
- ``out``: the primal output, when the derivative is cheaper from it (tanh, exp);
- ``xp``: the array module, when the formula calls array functions;
- then the primitive's own parameters, in its signature's order. Those without a
  default are the *inputs*, one returned gradient each (``None`` where an input is
  never differentiable, such as the condition of ``where``); those with a default
  are options (``axis``, ``keepdims``).

Forward-mode (tangent) rules follow the same convention with ``d_<input>`` tangent
parameters instead of ``g`` and return the output tangent.

>>> rule = lookup("tanh")
>>> rule.inputs, rule.uses_out
(('x',), True)
>>> import numpy as np
>>> rule.vjp(np.float64(2.0), np.tanh(0.5), 0.5)  # called directly, as tracing does
np.float64(1.57...)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SPECIAL_PARAMETERS = ("g", "out", "xp")


@dataclass
class Rule:
    """A primitive's derivative: its reverse-mode rule and metadata."""

    op: str
    vjp: Callable[..., Any]
    inputs: tuple[str, ...]
    options: dict[str, Any]
    uses_out: bool
    uses_xp: bool
    broadcasting: bool = False
    sequence: bool = False
    convention: str = ""
    jvp: Callable[..., Any] | None = None
    math: str = ""
    check: Callable[..., None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def check_options(self, options: dict[str, Any]) -> None:
        """Raise a clear error if the rule does not cover these option values."""
        if self.check is not None:
            self.check(**options)

    def signature_parameters(self) -> list[str]:
        """The primal parameters, inputs then options, as the primitive takes them."""
        return list(self.inputs) + list(self.options)


RULES: dict[str, Rule] = {}
NONDIFFERENTIABLE: set[str] = set()


def defvjp(
    op: str,
    *,
    broadcasting: bool = False,
    sequence: bool = False,
    convention: str = "",
    math: str = "",
    check: Callable[..., None] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the reverse-mode rule of primitive ``op``.

    ``broadcasting`` asks the compiler to sum each gradient back to its input's
    shape (binary elementwise ops); ``sequence`` marks ops whose first input is a list
    of arrays (``concatenate``, ``stack``); ``convention`` documents the value taken
    at non-differentiable points; ``check(**options)`` raises an :class:`AutodiffError`
    for option values the formula does not cover (``norm(x, ord=1)``): the rule
    then refuses instead of returning a wrong gradient.

    >>> @defvjp("cube_example", math="3 x^2")
    ... def cube_example(g, x):
    ...     return g * 3 * x * x
    >>> lookup("cube_example").inputs
    ('x',)
    >>> del RULES["cube_example"]
    """

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        params = inspect.signature(fn).parameters
        names = list(params)
        if not names or names[0] != "g":
            raise ValueError(f"rule {op!r}: first parameter must be 'g'")
        primal = [n for n in names if n not in SPECIAL_PARAMETERS]
        inputs = tuple(n for n in primal if params[n].default is inspect.Parameter.empty)
        options = {
            n: params[n].default for n in primal if params[n].default is not inspect.Parameter.empty
        }
        vjp = fn
        if check is not None:
            vjp = _checked(fn, check, options)
        RULES[op] = Rule(
            op=op,
            vjp=vjp,
            inputs=inputs,
            options=options,
            uses_out="out" in names,
            uses_xp="xp" in names,
            broadcasting=broadcasting,
            sequence=sequence,
            convention=convention,
            math=math,
            check=check,
        )
        return fn

    return register


def _checked(fn: Callable[..., Any], check: Callable[..., None], options: dict[str, Any]):
    """``fn`` that first checks its option values (for direct calls, as tracing makes)."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        check(**{name: bound.arguments.get(name, default) for name, default in options.items()})
        return fn(*args, **kwargs)

    return checked


def defjvp(op: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the forward-mode (tangent) rule of ``op``.

    Parameters: ``out`` and ``xp`` as for :func:`defvjp`, the primal parameters,
    and a ``d_<input>`` tangent for each input (``None`` when that input is inactive).

    >>> @defvjp("twice_example")
    ... def twice_example(g, x):
    ...     return 2 * g
    >>> @defjvp("twice_example")
    ... def twice_example_tangent(x, d_x):
    ...     return 2 * d_x
    >>> lookup("twice_example").jvp(1.0, 0.5)
    1.0
    >>> del RULES["twice_example"]
    """

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        RULES[op].jvp = fn
        return fn

    return register


def nondifferentiable(*ops: str) -> None:
    """Declare primitives whose output carries no gradient (comparisons, ``sign``...).

    >>> is_nondifferentiable("less")
    True
    """
    NONDIFFERENTIABLE.update(ops)


def is_nondifferentiable(op: str) -> bool:
    """Whether ``op``'s output never carries gradient.

    >>> is_nondifferentiable("tanh")
    False
    """
    return op in NONDIFFERENTIABLE


def lookup(op: str) -> Rule | None:
    """The rule registered for ``op``, or ``None``.

    >>> lookup("no_such_op") is None
    True
    """
    _load_rule_modules()
    return RULES.get(op)


def all_rules() -> dict[str, Rule]:
    """Every registered rule, by op name (the registry walk of the tests uses this).

    >>> "matmul" in all_rules()
    True
    """
    _load_rule_modules()
    return dict(RULES)


_loaded = False


def _load_rule_modules() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from autodiff_tutor.rules import (  # noqa: F401  (registration side effects)
            elementwise,
            helper_rules,
            linalg,
            reductions,
            shapes,
            tangents,
        )
