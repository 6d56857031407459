"""Normalization of conversions to arrays: ``np.array(x)``, ``np.asarray(x)``,
``np.asanyarray(x)`` and ``np.ascontiguousarray(x)`` of a value that carries gradient,
and the conversion numpy makes of a list passed where one array goes
(``np.sum([a, b])`` is ``np.sum(np.stack([a, b]))``).

The compiler reads the source, so it can follow them (tracing cannot: numpy converts
a traced value through ``__array__``, which must return a plain array). Each is a
primitive the registry already has: ``copy`` (gradient ``d_x += d_y``), or ``astype``
when a ``dtype`` is given (an integer or boolean dtype passes no gradient, as
``x.astype(int)``). numpy's memory semantics are kept: ``np.array(x)`` copies, but
``np.asarray(x)`` returns ``x`` itself when it already is such an array, so its result
is an alias of ``x`` (see :func:`shares_input`): a later write into it is a write into
``x``, refused or followed as for a view.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.conversions``.

>>> import ast
>>> shares_input(ast.parse("np.asarray(x)").body[0].value)
True
>>> shares_input(ast.parse("np.array(x)").body[0].value)
False
"""

from __future__ import annotations

import ast
import copy as copying
from typing import Any

from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.rules.names import CONVERSIONS

# the keywords each conversion takes besides its array (numpy 2); the rest are refused
_OPTIONS = {
    "array": ("dtype", "copy", "order", "subok"),
    "asarray": ("dtype", "order", "copy", "device"),
    "asanyarray": ("dtype", "order", "copy", "device"),
    "ascontiguousarray": ("dtype",),
}
# options that change no value, only where it lives (kept in the generated call)
_LAYOUT = {"order", "subok", "device"}


def conversion_name(call: ast.Call) -> str:
    """The conversion a call spells (``np.asarray`` -> ``"asarray"``), or ``""``."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name if name in CONVERSIONS else ""


def shares_input(call: ast.Call) -> bool:
    """Whether numpy may return the input array itself (or a view of it): every
    conversion but ``np.array`` with its default ``copy=True``, unless asked to copy."""
    name = conversion_name(call)
    if not name:
        return False
    copy = next((k.value for k in call.keywords if k.arg == "copy"), None)
    if isinstance(copy, ast.Constant):
        return copy.value is not True
    return name != "array"


class Conversions(Part):
    """``np.array(x)`` & co. of a value with gradient as a copy, a cast or an alias."""

    def conversion(self, node: ast.Call, target: str | None) -> ast.Name:
        """``y = np.array(x)``: a ``copy`` step (``astype`` with a dtype), whose forward
        line is the user's call."""
        name = conversion_name(node)
        description = ast.unparse(node.func)
        if len(node.args) > 2:
            self.normalizer.expressions.refuse(
                node.args[2],
                f"{description} with more than two positional arguments is not supported",
                "pass its options by keyword (dtype=..., order=...)",
            )
        options = dict(zip(("dtype",), node.args[1:], strict=False))
        for keyword in node.keywords:
            if keyword.arg not in _OPTIONS[name]:
                axes = "; for more axes use np.reshape or x[None]" if keyword.arg == "ndmin" else ""
                self.normalizer.expressions.refuse(
                    keyword.value,
                    f"the keyword '{keyword.arg}=' of {description} is not supported "
                    "on a value that carries gradient",
                    f"supported here: {', '.join(_OPTIONS[name])}{axes}",
                )
            options[keyword.arg] = keyword.value
        copy = options.get("copy")
        if copy is not None and not isinstance(copy, ast.Constant):
            self.normalizer.expressions.refuse(
                copy,
                f"the option 'copy' of {description} must be written as True, False or None "
                "here, so the compiler knows whether the result shares x's memory",
                "write copy=True (a new array) or leave it out",
            )
        source = self.normalizer.atom(node.args[0])
        dtype = options.get("dtype")
        kept = [k for k in node.keywords if k.arg in _LAYOUT or k.arg == "copy"]
        if dtype is not None:
            dtype = self.normalizer.calls.static_operand(dtype, "the dtype")
            kept.append(ast.keyword("dtype", dtype))
        value = ast.Call(self.normalizer.rename(node.func), [source], kept)
        op, given = ("copy", {}) if dtype is None else ("astype", {"dtype": dtype})
        return self.normalizer.calls.primitive(
            target, value, op, [source], given, node, {"x": source}
        )

    def stacked(self, value: ast.expr, node: ast.Call, callee: Any) -> ast.expr:
        """``np.stack(value)`` for a list of values with gradient passed where the rule
        takes one array (``np.sum([a, b])``, ``np.linalg.norm([a, b])``: numpy converts
        the list by stacking it); the module is the call's own (``np``, ``xp``)."""
        module = node.func.value if isinstance(node.func, ast.Attribute) else None
        while isinstance(module, ast.Attribute):  # np.linalg.norm: np
            module = module.value
        if isinstance(getattr(node.func, "value", None), ast.Attribute) and not (
            isinstance(module, ast.Name)
            and hasattr(self.normalizer.resolver.namespace.get(module.id), "stack")
        ):
            module = None
        if not isinstance(module, ast.Name) or callee.receiver is not None:
            self.normalizer.expressions.refuse(
                value,
                f"a list of values with gradient passed to {callee.description}",
                "stack it first: np.stack([...])",
            )
        stack = ast.Attribute(copying.deepcopy(module), "stack", ast.Load())
        return ast.copy_location(ast.Call(stack, [value], []), value)
