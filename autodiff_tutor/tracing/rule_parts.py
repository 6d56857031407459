"""Call a derivative rule for the inputs that need a gradient, and only those.

A rule returns one gradient per input, but a traced call usually needs fewer (in
``x ** 2`` only ``x`` is traced). The compiler inlines each input's formula
separately; tracing does the same with small functions cut from the rule's own
source: the rule's statements, then the one returned formula. Both read the one
parse of the rule's body (:mod:`autodiff_tutor.rules.formula`), so both modes
evaluate the same expression, and an unneeded formula (``log(x)`` for the
exponent of ``x ** 2`` at negative ``x``) is never computed, nor does it warn.

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
from collections.abc import Callable, Sequence
from typing import Any

from autodiff_tutor.rules.formula import parse
from autodiff_tutor.rules.record import Rule
from autodiff_tutor.syntax import copy_tree
from autodiff_tutor.tracing.higher import traced_globals, traced_rule


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
