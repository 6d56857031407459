"""Call a derivative rule for the inputs that need a gradient, and only those, on
plain values or, for second derivatives, on traced ones.

A rule returns one gradient per input, but a traced call usually needs fewer (in
``x ** 2`` only ``x`` is traced). The compiler inlines each input's formula
separately; tracing does the same with small functions cut from the rule's own
source: the rule's statements, then the one returned formula. Both read the one
parse of the rule's body (:mod:`autodiff_tutor.rules.formula`), so both modes
evaluate the same expression, and an unneeded formula (``log(x)`` for the
exponent of ``x ** 2`` at negative ``x``) is never computed, nor does it warn.

For second derivatives (``gradient(y, x, higher_derivatives=True)``) a rule runs on
traced values, so that its computation is recorded; the runtime helpers it calls
(``unbroadcast``, ``scatter``...) are primitives with rules of their own, routed through
tracing (:func:`traced_rule`), so each is one recorded operation.

>>> import numpy as np
>>> from autodiff_tutor.rules.registry import lookup
>>> rule = lookup("power")
>>> args = {"g": 1.0, "out": 4.0, "xp": np, "x": np.float64(-2.0), "y": 2}
>>> input_gradients(rule, args, (True, False))
[np.float64(-4.0), None]
"""

from __future__ import annotations

import ast
import functools
import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

from autodiff_tutor.rules.formula import parse
from autodiff_tutor.rules.record import Rule
from autodiff_tutor.runtime import helpers, helpers_indexing
from autodiff_tutor.syntax import copy_tree
from autodiff_tutor.tracing.array import numpy_like


@functools.cache
def formula_parts(
    rule_fn: Callable[..., Any], traced: bool = False
) -> tuple[Callable[..., Any], ...] | None:
    """One function per returned formula, or ``None`` when the rule cannot be cut
    (``traced``: with the helpers routed through tracing).

    >>> from autodiff_tutor.rules.registry import lookup
    >>> [part.__name__ for part in formula_parts(lookup("power").vjp)]
    ['power_part0', 'power_part1']
    """
    try:
        formula = parse(rule_fn)
    except ValueError:
        return None
    if not formula.is_tuple:
        return None
    parts = []
    for i, returned in enumerate(formula.returned):
        part = ast.FunctionDef(
            name=f"{rule_fn.__name__}_part{i}",
            args=formula.tree.args,
            body=[*formula.statements, ast.Return(returned)],
            decorator_list=[],
            returns=None,
            type_comment=None,
        )
        ast.copy_location(part, formula.tree)
        module = ast.Module([copy_tree(part)], type_ignores=[])
        ast.increment_lineno(module, formula.first_line - 1)  # tracebacks show the rule
        module = ast.fix_missing_locations(module)
        namespace: dict[str, Any] = {}
        rule_globals = traced_globals(rule_fn) if traced else inspect.unwrap(rule_fn).__globals__
        exec(compile(module, formula.filename, "exec"), rule_globals, namespace)
        parts.append(namespace[part.name])
    return tuple(parts)


def input_gradients(
    rule: Rule, arguments: dict[str, Any], wanted: Sequence[bool], traced: bool = False
) -> list[Any]:
    """The rule's gradient for each input, ``None`` where ``wanted`` is false.

    ``arguments`` binds the rule's parameters by name (``g``, ``out``, ``xp``, the
    inputs and the options). A one-input rule returns its single gradient (for a
    sequence rule: the list of per-element gradients) as the only entry. ``traced``:
    the arguments are traced values and the helpers the rule calls are recorded.

    >>> import numpy as np
    >>> from autodiff_tutor.rules.registry import lookup
    >>> input_gradients(lookup("multiply"), {"g": 1.0, "x": 2.0, "y": 3.0}, (False, True))
    [None, 2.0]
    """
    names = _parameter_names(rule.vjp)
    arguments = {k: v for k, v in arguments.items() if k in names}
    vjp = traced_rule(rule.vjp) if traced else rule.vjp
    if len(rule.inputs) == 1:
        return [vjp(**arguments) if wanted[0] else None]
    parts = formula_parts(rule.vjp, traced)
    if parts is None or len(parts) != len(rule.inputs):
        return [g if w else None for g, w in zip(vjp(**arguments), wanted, strict=True)]
    return [part(**arguments) if w else None for part, w in zip(parts, wanted, strict=True)]


@functools.cache
def _parameter_names(rule_fn: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(rule_fn).parameters)


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
