"""Call a derivative rule for the inputs that need a gradient, and only those.

A rule returns one gradient per input, but a traced call usually needs fewer (in
``x ** 2`` only ``x`` is traced). The compiler inlines each input's formula
separately; tracing does the same with small functions cut from the rule's own
source: the rule's statements, then the one returned formula. So both modes
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
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from autodiff_tutor.rules.registry import Rule


@functools.cache
def _parts(rule_fn: Callable[..., Any]) -> tuple[Callable[..., Any], ...] | None:
    """One function per returned formula, or ``None`` when the rule cannot be cut."""
    try:
        lines, first_line = inspect.getsourcelines(rule_fn)
        tree = ast.parse(textwrap.dedent("".join(lines))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    ast.increment_lineno(tree, first_line - 1)
    if not isinstance(tree, ast.FunctionDef):
        return None
    last = tree.body[-1]
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Tuple)):
        return None
    parts = []
    for i, formula in enumerate(last.value.elts):
        part = ast.FunctionDef(
            name=f"{rule_fn.__name__}_part{i}",
            args=tree.args,
            body=[*tree.body[:-1], ast.Return(formula)],
            decorator_list=[],
            returns=None,
            type_comment=None,
        )
        ast.copy_location(part, tree)
        module = ast.fix_missing_locations(ast.Module([part], type_ignores=[]))
        namespace: dict[str, Any] = {}
        filename = inspect.getsourcefile(rule_fn) or "<rule>"
        exec(compile(module, filename, "exec"), rule_fn.__globals__, namespace)
        parts.append(namespace[part.name])
    return tuple(parts)


def input_gradients(rule: Rule, arguments: dict[str, Any], wanted: Sequence[bool]) -> list[Any]:
    """The rule's gradient for each input, ``None`` where ``wanted`` is false.

    ``arguments`` binds the rule's parameters by name (``g``, ``out``, ``xp``, the
    inputs and the options). A one-input rule returns its single gradient (for a
    sequence rule: the list of per-element gradients) as the only entry.

    >>> import numpy as np
    >>> from autodiff_tutor.rules.registry import lookup
    >>> input_gradients(lookup("multiply"), {"g": 1.0, "x": 2.0, "y": 3.0}, (False, True))
    [None, 2.0]
    """
    names = _parameter_names(rule.vjp)
    arguments = {k: v for k, v in arguments.items() if k in names}
    if len(rule.inputs) == 1:
        return [rule.vjp(**arguments) if wanted[0] else None]
    parts = _parts(rule.vjp)
    if parts is None or len(parts) != len(rule.inputs):
        return [g if w else None for g, w in zip(rule.vjp(**arguments), wanted, strict=True)]
    return [part(**arguments) if w else None for part, w in zip(parts, wanted, strict=True)]


@functools.cache
def _parameter_names(rule_fn: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(rule_fn).parameters)
