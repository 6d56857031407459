"""Stage 6b, specialize — drop the helpers whose answer the argument shapes decide.

``unbroadcast(g, x)`` sums a gradient back down to the shape of ``x`` and casts it to
``x``'s dtype; where ``g`` already has that shape and dtype it returns ``g`` itself.
Which calls are such no-ops depends on the shapes and dtypes of the arguments, not
on their values, when the program is *shape-static* (:func:`shape_static`): no
branch, no ``while``, no custom operation, no mask, only shape-determined integers.

At a call with shapes and dtypes not seen before, the compiled pair is *probed*: a
copy of the backward whose helper calls record whether they returned their
gradient unchanged (:func:`probe_sites`) runs once. The *specialized* backward
(:func:`drop_sites`) writes the gradient itself at every call site that was a no-op
at every run, then is simplified (:mod:`.s6_simplify`); the memory stage then keeps
less. The specialized pair is used only for arguments of the same shapes, dtypes
and integer values (:func:`guard_key`); anything else runs the general code.

>>> import numpy as np
>>> tree = ast.parse("d_a = unbroadcast(d_t, t1)\\nd_b = unbroadcast(-d_t, t2)").body
>>> [ast.unparse(s) for s in probe_sites(tree)]  # doctest: +NORMALIZE_WHITESPACE
['d_a = probe_site(site_flags, 0, unbroadcast, d_t, t1)',
 'd_b = probe_site(site_flags, 1, unbroadcast, -d_t, t2)']
>>> [ast.unparse(s) for s in drop_sites(tree, {1})]
['d_a = unbroadcast(d_t, t1)', 'd_b = -d_t']
>>> guard_key((np.zeros((2, 3)), 4))
(((2, 3), dtype('float64')), (<class 'int'>, 4))
"""

from __future__ import annotations

import ast
import copy
from typing import Any

import numpy as np

from autodiff_tutor.compiler.ir import Branch, Loop, Program

#: Helpers that return their first argument unchanged when its shape and dtype are
#: already those of their second.
PROBED = ("unbroadcast", "cast_like")
#: The names the probed backward uses (a user's variable of that name: no probing).
PROBE_NAMES = ("probe_site", "site_flags")
#: Calls a shape-static program may make in its static steps (values that are not
#: differentiated): their results depend on shapes only.
_STATIC_CALLS = {"range", "len", "reversed", "enumerate", "zip"}
_SHAPE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "T"}
#: Operations whose output shape depends on the values of an integer operand.
_VALUE_SHAPED = {"repeat"}


def shape_static(program: Program) -> bool:
    """Whether every value's shape and dtype follow from the arguments' shapes, dtypes
    and integer values alone (so a probe's answer holds for every such call).

    >>> from autodiff_tutor.compiler.pipeline import front_end
    >>> def f(x):
    ...     return np.sum(x[1:] * x[:-1])
    >>> def g(x):
    ...     return np.sum(x[x > 0])
    >>> shape_static(front_end(f).program), shape_static(front_end(g).program)
    (True, False)
    """
    if set(PROBE_NAMES) & (program.defined_names() | set(program.params)):
        return False
    for node in _regions(program.steps):
        if isinstance(node, Branch) or (isinstance(node, Loop) and node.kind != "for"):
            return False
    masks: set[str] = set()
    for step in program.all_steps():
        if step.kind == "static":
            if _has_compare(step.value):
                masks.update(step.defined())
            elif not _static_value(step.value):
                return False
        elif step.kind == "primitive":
            if step.op in _VALUE_SHAPED:
                return False
            for option in step.options.values():  # axes, indices, shapes
                if not _static_value(option) or _reads(option) & masks:
                    return False
        elif step.kind != "copy":
            return False  # a custom operation or a helper: its shapes are its own
    return True


def _regions(nodes: list) -> list:
    found = []
    for node in nodes:
        if isinstance(node, (Branch, Loop)):
            found.append(node)
            found += _regions(node.body + (node.orelse if isinstance(node, Branch) else []))
    return found


def _has_compare(value: ast.expr) -> bool:
    return any(isinstance(n, (ast.Compare, ast.BoolOp)) for n in ast.walk(value))


def _reads(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _static_value(value: ast.expr) -> bool:
    """Constants, names, shapes and lengths: no integer computed from array values."""
    if isinstance(value, (ast.Constant, ast.Name)):
        return True
    if isinstance(value, ast.Attribute):
        return value.attr in _SHAPE_ATTRIBUTES
    if isinstance(value, ast.Subscript):
        return _shape_expression(value.value) and _static_value(value.slice)
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(_static_value(e) for e in value.elts)
    if isinstance(value, ast.Slice):
        parts = (value.lower, value.upper, value.step)
        return all(p is None or _static_value(p) for p in parts)
    if isinstance(value, ast.BinOp):
        return _static_value(value.left) and _static_value(value.right)
    if isinstance(value, ast.UnaryOp):
        return _static_value(value.operand)
    if isinstance(value, ast.Call):
        known = isinstance(value.func, ast.Name) and value.func.id in _STATIC_CALLS
        return known and not value.keywords and all(_static_value(a) for a in value.args)
    return False


def _shape_expression(value: ast.expr) -> bool:
    """``x.shape`` (or a tuple constant): indexing it gives a shape-determined integer."""
    if isinstance(value, ast.Attribute):
        return value.attr == "shape"
    return isinstance(value, ast.Constant)


def guard_key(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What a specialization depends on: each numpy array's shape and dtype, each
    number's type, and the value of integers, strings, flags and ``None``; ``None``
    for arguments of any other kind (or boolean arrays, which can select elements):
    those calls run the general code."""
    key: list[Any] = []
    for value in args:
        kind = type(value)
        if kind is np.ndarray:
            if value.dtype.kind not in "fiu":
                return None
            key.append((value.shape, value.dtype))
        elif kind in (float, np.float64, np.float32):
            key.append(kind)
        elif kind in (int, bool, str) or value is None:
            key.append((kind, value))
        else:
            return None
    return tuple(key)


class _Sites(ast.NodeTransformer):
    """Numbers the probed helper calls in one fixed order (the same for both uses)."""

    def __init__(self, drop: set[int] | None):
        self.drop = drop  # None: probe every site
        self.count = 0

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in PROBED) or len(node.args) != 2:
            return node
        if node.keywords:
            return node
        site = self.count
        self.count += 1
        if self.drop is None:
            flags = ast.Name(PROBE_NAMES[1], ast.Load())
            return ast.Call(
                ast.Name(PROBE_NAMES[0], ast.Load()),
                [flags, ast.Constant(site), func, *node.args],
                [],
            )
        return node.args[0] if site in self.drop else node


def _transformed(statements: list[ast.stmt], drop: set[int] | None) -> list[ast.stmt]:
    keep = {id(s.replays): s.replays for s in _walk(statements) if hasattr(s, "replays")}
    sites = _Sites(drop)
    out = [sites.visit(copy.deepcopy(s, dict(keep))) for s in statements]
    return [ast.fix_missing_locations(s) for s in out]


def _walk(statements: list[ast.stmt]):
    for statement in statements:
        yield statement
        for field in ("body", "orelse"):
            yield from _walk(getattr(statement, field, []) or [])


def probe_sites(statements: list[ast.stmt]) -> list[ast.stmt]:
    """A copy of the backward whose probed helper calls record, by site number,
    whether each returned its gradient unchanged (:func:`probe_site`)."""
    return _transformed(statements, None)


def drop_sites(statements: list[ast.stmt], identity: set[int]) -> list[ast.stmt]:
    """A copy of the backward with the helper calls at ``identity`` sites replaced by
    their gradient argument."""
    return _transformed(statements, identity)


def probe_site(flags: dict[int, bool], site: int, helper: Any, g: Any, x: Any) -> Any:
    """Run ``helper(g, x)`` and record at ``site`` whether it gave ``g`` back (at
    every run of that site).

    >>> flags = {}
    >>> from autodiff_tutor.runtime.helpers import unbroadcast
    >>> _ = probe_site(flags, 0, unbroadcast, np.ones(2), np.zeros(2))
    >>> _ = probe_site(flags, 1, unbroadcast, np.ones((3, 2)), np.zeros(2))
    >>> flags
    {0: True, 1: False}
    """
    result = helper(g, x)
    flags[site] = flags.get(site, True) and result is g
    return result
