"""Stage 6d, facts — what the probe saw of each name, and the rewrites it allows.

The probe of :mod:`.s6_specialize` also records, for every name the forward and the
backward bind, its *fact*: ``("array", shape, dtype)`` for a numpy array,
``("scalar", (), dtype)`` for a numpy scalar, the type's name for anything else, and
``None`` for a name that held values of two facts (a loop changing its shape). The
facts hold for every call with the same guard key, as the forms of the probed sites
do (a shape-static program). Three rewrites use them:

- *scalar seeds*: ``d_t = unreduce(d_out, t)`` of a whole-array sum spreads the scalar
  ``d_out`` over an array of ``t``'s shape; where every read of ``d_t`` is an operand
  of elementwise arithmetic whose result keeps its shape through another operand,
  ``d_out`` is read instead (numpy broadcasts it): no array, no pass;
- *first writes*: ``d_x = zeros_like(x)`` followed by ``d_x[:-1] += g`` writes
  ``d_x[:-1] = g`` (adding to zeros is writing);
- *method reductions* (forward): ``np.sum(t)`` of a numpy array is ``t.sum()``, the
  same reduction without the function's dispatch.

>>> tree = ast.parse("d_t = unreduce(d_out, t)\\nd_a = 2.0 * d_t * a").body
>>> facts = {"d_out": ("scalar", (), "float64"), "t": ("array", (3,), "float64"),
...          "a": ("array", (3,), "float64"), "d_a": ("array", (3,), "float64")}
>>> [ast.unparse(s) for s in scalar_seeds(tree, facts)]
['d_a = 2.0 * d_out * a']
"""

from __future__ import annotations

import ast
import copy
from typing import Any

import numpy as np

from autodiff_tutor.compiler.s6_simplify import _bound, _walk

#: The name of the function the probe calls to record a fact.
FACT_HELPER = "probe_fact"
_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def fact_of(value: Any) -> Any:
    """The fact recorded for ``value``.

    >>> fact_of(np.zeros((2, 3))), fact_of(np.float32(1.0)), fact_of([1])
    (('array', (2, 3), 'float64'), ('scalar', (), 'float32'), 'list')
    """
    if type(value) is np.ndarray:
        return ("array", value.shape, value.dtype.name)
    if isinstance(value, np.generic):
        return ("scalar", (), value.dtype.name)
    return type(value).__name__


def probe_fact(flags: dict[Any, Any], name: str, value: Any) -> None:
    """Record the fact of ``value`` under ``name`` (``None`` once two differ).

    >>> flags = {}
    >>> probe_fact(flags, "a", np.ones(2)); probe_fact(flags, "a", np.ones(3)); flags
    {'a': None}
    """
    fact = fact_of(value)
    flags[name] = fact if flags.get(name, fact) == fact else None


def record_facts(statements: list[ast.stmt], flags: str) -> list[ast.stmt]:
    """``statements`` (in place) with a ``probe_fact`` call after each statement that
    binds names, at every depth, recording into the dictionary named ``flags``.

    >>> tree = ast.parse("a = x * 2").body
    >>> print(ast.unparse(record_facts(tree, "site_flags")))
    a = x * 2
    probe_fact(site_flags, 'a', a)
    """
    out: list[ast.stmt] = []
    for statement in statements:
        for field in ("body", "orelse"):
            body = getattr(statement, field, None)
            if body and not isinstance(statement, ast.FunctionDef):
                setattr(statement, field, record_facts(body, flags))
        if isinstance(statement, ast.For):  # the loop variable, at the top of the body
            statement.body[:0] = _records(_bound(statement), flags)
            out.append(statement)
            continue
        out.append(statement)
        if isinstance(statement, (ast.Assign, ast.AugAssign)):
            out += _records(_bound(statement), flags)
    return out


def _records(names: list[str], flags: str) -> list[ast.stmt]:
    calls = []
    for name in dict.fromkeys(names):
        args = [ast.Name(flags, ast.Load()), ast.Constant(name), ast.Name(name, ast.Load())]
        calls.append(ast.Expr(ast.Call(ast.Name(FACT_HELPER, ast.Load()), args, [])))
    return [ast.fix_missing_locations(c) for c in calls]


# -- scalar seeds ------------------------------------------------------------------------


def scalar_seeds(
    statements: list[ast.stmt], facts: dict[str, Any], keep: set[str] = frozenset()
) -> list[ast.stmt]:
    """The backward reading the scalar itself where ``d_t = unreduce(g, t)`` spread a
    scalar over an array that only elementwise arithmetic reads (see the module);
    names in ``keep`` (returned gradients) stay arrays."""
    for statement in list(statements):
        found = _scalar_unreduce(statement, facts)
        if found is None or found[0] in keep:
            continue
        name, scalar, shape = found
        readers = [s for s in _walk(statements) if s is not statement and _reads(s, name)]
        rebound = [s for s in _walk(statements) if name in _bound(s)]
        if rebound != [statement] or not all(_broadcasts(s, name, shape, facts) for s in readers):
            continue
        statements.remove(statement)
        for reader in readers:
            _Replace(name, scalar).visit(reader)
    return statements


def _scalar_unreduce(statement: ast.stmt, facts: dict[str, Any]) -> Any:
    """``(d_t, g, shape)`` for ``d_t = unreduce(g, t)`` spreading a scalar ``g`` over a
    float array ``t`` of the same dtype; ``None`` for anything else."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value = statement.targets[0], statement.value
    if not (isinstance(target, ast.Name) and isinstance(value, ast.Call)):
        return None
    func = value.func
    if not (isinstance(func, ast.Name) and func.id == "unreduce") or value.keywords:
        return None
    if len(value.args) != 2 or not all(isinstance(a, ast.Name) for a in value.args):
        return None
    scalar, array = (facts.get(a.id) for a in value.args)
    if not (isinstance(scalar, tuple) and isinstance(array, tuple)):
        return None
    if scalar[0] != "scalar" or array[0] != "array" or scalar[2] != array[2]:
        return None
    if np.dtype(array[2]).kind != "f":
        return None
    return target.id, value.args[0], array[1]


def _broadcasts(statement: ast.stmt, name: str, shape: tuple[int, ...], facts: dict) -> bool:
    """Whether every read of ``name`` in ``statement`` is an operand of elementwise
    arithmetic, and the result keeps ``shape`` without it: an in-place update
    (``d_x[1:] += ...``, ``d_x[:-1] = ...``: the target's shape) or a name of that shape
    among the other operands."""
    if isinstance(statement, ast.AugAssign):
        root, target, in_place = statement.value, statement.target, True
    elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        root, target = statement.value, statement.targets[0]
        in_place = isinstance(target, ast.Subscript)
    else:
        return False
    changed = target.value if isinstance(target, ast.Subscript) else target
    if not isinstance(changed, ast.Name) or (in_place and _shape(facts.get(changed.id)) is None):
        return False  # an update in place of an array: it keeps its shape
    operands = _operands(root)
    if operands is None or not any(_is(o, name) for o in operands):
        return False
    if _reads(ast.Module([ast.Expr(o) for o in operands if not _is(o, name)], []), name):
        return False  # read inside a call or an index: not elementwise
    if in_place:
        return True
    if _shape(facts.get(target.id)) != shape:
        return False
    return any(
        isinstance(o, ast.Name) and not _is(o, name) and _shape(facts.get(o.id)) == shape
        for o in operands
    )


def _operands(node: ast.expr) -> list[ast.expr] | None:
    """The leaves of a tree of ``+ - * /`` and negations (``None`` if ``node`` is not
    such a tree with at least one operator)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE):
        return _leaves(node.left) + _leaves(node.right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _leaves(node.operand)
    return None


def _leaves(node: ast.expr) -> list[ast.expr]:
    inner = _operands(node)
    return [node] if inner is None else inner


def _shape(fact: Any) -> Any:
    return fact[1] if isinstance(fact, tuple) and fact[0] == "array" else None


def _is(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


class _Replace(ast.NodeTransformer):
    def __init__(self, old: str, new: ast.expr):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id == self.old and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.new)
        return node


# -- first writes ------------------------------------------------------------------------


def first_writes(statements: list[ast.stmt], facts: dict[str, Any]) -> list[ast.stmt]:
    """``d_x = zeros_like(x)`` then ``d_x[s] += g`` (the next statement of the block
    that reads ``d_x``): ``d_x[s] = g``. Only where every recorded value is real (an
    assignment of a complex value to a real array would drop its imaginary part where
    ``+=`` fails loudly).

    >>> tree = ast.parse("d_x = zeros_like(x)\\nd_x[1:] += g\\nd_x[:-1] += h").body
    >>> print(ast.unparse(first_writes(tree, {"d_x": ("array", (3,), "float64")})))
    d_x = zeros_like(x)
    d_x[1:] = g
    d_x[:-1] += h
    """
    if any(isinstance(f, tuple) and np.dtype(f[2] or "f8").kind == "c" for f in facts.values()):
        return statements
    for i, statement in enumerate(statements):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        fresh = isinstance(value, ast.Call) and ast.unparse(value.func) == "zeros_like"
        if not (isinstance(target, ast.Name) and fresh and _shape(facts.get(target.id))):
            continue  # an array (a list of zeros would alias what is written into it)
        follower = next((s for s in statements[i + 1 :] if _reads(s, target.id)), None)
        if (
            isinstance(follower, ast.AugAssign)
            and isinstance(follower.op, ast.Add)
            and isinstance(follower.target, ast.Subscript)
            and _is(follower.target.value, target.id)
            and not _reads(follower.value, target.id)
            and not _reads(follower.target.slice, target.id)
        ):
            write = ast.Assign([follower.target], follower.value)
            write.origin = getattr(follower, "origin", "")
            statements[statements.index(follower)] = ast.fix_missing_locations(
                ast.copy_location(write, follower)
            )
    return statements


# -- method reductions -------------------------------------------------------------------

#: numpy functions whose array method takes the same arguments in the same order.
_METHODS = ("sum", "max", "min", "prod", "mean")


def method_reductions(
    statements: list[ast.stmt], facts: dict[str, Any], scope: dict[str, Any]
) -> list[ast.stmt]:
    """``np.sum(t, ...)`` -> ``t.sum(...)`` where ``t`` was a numpy array and ``np.sum``
    (looked up in ``scope``, the user's globals) is numpy's.

    >>> tree = ast.parse("out = np.sum(t7)").body
    >>> facts = {"t7": ("array", (9,), "float64")}
    >>> print(ast.unparse(method_reductions(tree, facts, {"np": np})))
    out = t7.sum()
    """
    return [_Methods(facts, scope).visit(s) for s in statements]


class _Methods(ast.NodeTransformer):
    def __init__(self, facts: dict[str, Any], scope: dict[str, Any]):
        self.facts, self.scope = facts, scope

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return node
        if func.attr not in _METHODS or not node.args or not isinstance(node.args[0], ast.Name):
            return node
        module = self.scope.get(func.value.id)
        if getattr(module, func.attr, None) is not getattr(np, func.attr):
            return node
        if _shape(self.facts.get(node.args[0].id)) is None:
            return node
        method = ast.Attribute(node.args[0], func.attr, ast.Load())
        return ast.copy_location(ast.Call(method, node.args[1:], node.keywords), node)
