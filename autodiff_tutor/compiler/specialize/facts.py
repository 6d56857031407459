"""Stage 6d, facts — what the probe saw of each name, and the rewrites it allows.

The probe of :mod:`.specialize.probe` also records, for every name the forward and the
backward bind, its *fact*: ``("array", shape, dtype)`` for a numpy array,
``("scalar", (), dtype)`` for a numpy scalar, the type's name for anything else, and
``None`` for a name that held values of two facts (a loop changing its shape). The
facts hold for every call with the same guard key, as the forms of the probed sites
do (a shape-static program). Two rewrites use them here (and *first writes*,
:mod:`.specialize.first_writes`):

- *scalar seeds*: ``d_t = unreduce(d_out, t)`` of a whole-array sum spreads the scalar
  ``d_out`` over an array of ``t``'s shape; where every read of ``d_t`` is an operand
  of elementwise arithmetic whose result keeps its shape through another operand,
  ``d_out`` is read instead (numpy broadcasts it): no array, no pass;
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
import functools
import operator
from typing import Any

import numpy as np

from autodiff_tutor.compiler import code
from autodiff_tutor.runtime.guards import fact_of
from autodiff_tutor.syntax import copy_tree

#: The name of the function the probe calls to record a fact.
FACT_HELPER = "probe_fact"
_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def probe_fact(flags: dict[Any, Any], name: str, value: Any) -> None:
    """Record the fact of ``value`` under ``name`` (``None`` once two differ), and
    every fact seen under ``("kinds", name)``.

    >>> flags = {}
    >>> probe_fact(flags, "a", np.ones(2)); probe_fact(flags, "a", np.ones(3))
    >>> flags["a"], sorted(flags["kinds", "a"])
    (None, [('array', (2,), 'float64'), ('array', (3,), 'float64')])
    """
    fact = fact_of(value)
    flags[name] = fact if flags.get(name, fact) == fact else None
    flags.setdefault(("kinds", name), set()).add(fact)


def record_facts(statements: list[ast.stmt], flags: str) -> list[ast.stmt]:
    """``statements`` (in place) with a ``probe_fact`` call after each statement that
    binds names, at every depth, recording into the dictionary named ``flags``.

    >>> tree = ast.parse("a = x * 2").body
    >>> print(ast.unparse(record_facts(tree, "site_flags")))
    a = x * 2
    probe_fact(site_flags, 'a', a)
    """

    def recorded(statement: ast.stmt) -> list[ast.stmt]:
        records = _records(code.changed_names(statement), flags)
        if isinstance(statement, ast.For):  # the loop variable, at the top of the body
            statement.body[:0] = records
        elif isinstance(statement, (ast.Assign, ast.AugAssign)):
            return [statement, *records]
        return [statement]

    return code.rewrite_blocks(statements, recorded)


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
    """The backward reading the reduction's gradient itself where ``unreduce(g, t)``
    spread it over an array that only elementwise arithmetic reads (see the module):
    ``d_t = unreduce(g, t)`` (``d_t`` not in ``keep``: returned gradients stay arrays)
    and ``unreduce(...)`` as an operand."""
    for block in list(code.blocks(statements)):
        for statement in list(block):
            found = _named_spread(statement, facts)
            if found is None or found[0] in keep:
                continue
            name, small, shape = found
            readers = _later_readers(statements, block, statement, small, name)
            is_name = functools.partial(code.is_name, name=name)
            if readers and all(
                _broadcasts(s, is_name, shape, facts) or _kept_by_others(s, name, small, facts)
                for s in readers
            ):
                block.remove(statement)
                for reader in readers:
                    code.substituted(reader, {name: small})
    for statement in code.walk_statements(statements):
        root = getattr(statement, "value", None)
        for leaf in _operands(root) or [] if isinstance(root, ast.expr) else []:
            found = _spread(leaf, facts)
            if found is not None and _broadcasts(
                statement, functools.partial(operator.is_, leaf), found[1], facts
            ):
                _Swap(leaf, found[0]).visit(statement)
    return statements


def _later_readers(
    statements: list[ast.stmt],
    block: list[ast.stmt],
    statement: ast.stmt,
    small: ast.expr,
    name: str,
) -> list[ast.stmt] | None:
    """The statements reading ``name`` (bound once, by ``statement``): all of them
    later in ``block``, at its own level, with no statement until the last one binding
    a name that ``small`` reads (else ``None``: reading ``small`` there would differ)."""
    if [s for s in code.walk_statements(statements) if name in code.changed_names(s)] != [
        statement
    ]:
        return None
    everywhere = [
        s
        for s in code.walk_statements(statements)
        if s is not statement and any(code.mentions(part, name) for part in code.own_parts(s))
    ]
    start = block.index(statement) + 1
    positions = [i for i in range(start, len(block)) if code.mentions(block[i], name)]
    if not positions or len(everywhere) != len(positions):
        return None
    if any(isinstance(block[i], (ast.For, ast.While, ast.If)) for i in positions):
        return None  # read inside a loop or a branch: not a statement of this block
    inputs = code.names(small)
    for between in block[start : positions[-1]]:
        if any(
            set(code.changed_names(s)) & inputs or isinstance(s, ast.Expr)
            for s in code.walk_statements([between])
        ):
            return None
    return [block[i] for i in positions]


def _named_spread(statement: ast.stmt, facts: dict[str, Any]) -> Any:
    """``(d_t, g, shape)`` for ``d_t = unreduce(g, ...)`` that :func:`_spread` allows."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target = statement.targets[0]
    found = _spread(statement.value, facts)
    if found is None or not isinstance(target, ast.Name):
        return None
    return target.id, *found


def _spread(node: ast.expr, facts: dict[str, Any]) -> Any:
    """:func:`_spread_alone`, or ``(g * c, shape)`` for ``unreduce(g, t, ...) * c``
    with ``c`` made of Python numbers (a mean's ``1 / n``, :mod:`.specialize.scalars`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and _numbers(node.right):
        found = _spread_alone(node.left, facts)
        if found is not None:
            return ast.BinOp(found[0], ast.Mult(), node.right), found[1]
        return None
    return _spread_alone(node, facts)


def _numbers(node: ast.expr) -> bool:
    """Arithmetic of Python numbers only (``1 / 8``)."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE):
        return _numbers(node.left) and _numbers(node.right)
    return False


def _spread_alone(node: ast.expr, facts: dict[str, Any]) -> Any:
    """``(g, shape)`` for ``unreduce(g, t, ...)`` over a float array ``t`` of ``shape``
    where ``g`` broadcasts to ``t`` as it is: a numpy scalar (``g`` made of numpy
    values, of Python numbers at most partly), or an array of ``t``'s dimensions
    (``keepdims=True``, or no ``axis``); ``None`` for anything else."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    if node.func.id != "unreduce" or len(node.args) != 2:
        return None
    options = {k.arg: k.value for k in node.keywords}
    if set(options) - {"axis", "keepdims"} or not isinstance(node.args[1], ast.Name):
        return None
    if not all(isinstance(v, (ast.Constant, ast.Tuple)) for v in options.values()):
        return None
    keepdims = isinstance(options.get("keepdims"), ast.Constant) and options["keepdims"].value
    array = facts.get(node.args[1].id)
    if not (isinstance(array, tuple) and array[0] == "array" and np.dtype(array[2]).kind == "f"):
        return None
    small = _shape_of(node.args[0], facts)
    if small is None or small == "weak":
        return None
    try:
        if np.broadcast_shapes(small, array[1]) != array[1]:
            return None
    except ValueError:
        return None
    if small and "axis" in options and not keepdims:
        return None  # a reduced axis left out: unreduce puts it back first
    return node.args[0], array[1]


def _shape_of(node: ast.expr, facts: dict[str, Any]) -> Any:
    """The shape of elementwise arithmetic of recorded numpy values and Python numbers
    (``"weak"`` for Python numbers only, ``None`` for anything else)."""
    if isinstance(node, ast.Constant):
        return "weak" if type(node.value) in (int, float) else None
    if isinstance(node, ast.Name):
        fact = facts.get(node.id)
        if fact in ("int", "float"):
            return "weak"
        return fact[1] if isinstance(fact, tuple) and fact[0] in ("array", "scalar") else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _shape_of(node.operand, facts)
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE)):
        return None
    sides = [_shape_of(node.left, facts), _shape_of(node.right, facts)]
    if None in sides:
        return None
    shapes = [side for side in sides if side != "weak"]
    try:
        return np.broadcast_shapes(*shapes) if shapes else "weak"
    except ValueError:
        return None


def _broadcasts(statement: ast.stmt, spread: Any, shape: tuple[int, ...], facts: dict) -> bool:
    """Whether every operand ``spread`` picks in ``statement`` is an operand of
    elementwise arithmetic whose result keeps ``shape`` without it: an in-place update
    of an array (``d_x[1:] += ...``, ``d_x[:-1] = ...``) or a name of that shape among
    the other operands."""
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
    if operands is None or not any(spread(o) for o in operands):
        return False
    others = [o for o in operands if not spread(o)]
    if any(spread(n) for o in others for n in ast.walk(o)):
        return False  # read inside a call or an index: not elementwise
    if in_place:
        return True
    if _shape(facts.get(target.id)) != shape:
        return False
    return any(isinstance(o, ast.Name) and _shape(facts.get(o.id)) == shape for o in others)


def _kept_by_others(statement: ast.stmt, name: str, small: ast.expr, facts: dict) -> bool:
    """Whether every read of ``name`` in ``statement`` is an operand of elementwise
    arithmetic whose shape stays the same with ``small`` in its place (``X.T @ (2 *
    (d_t * r))``: ``r`` has the shape, ``d_t`` only repeats a number over it)."""
    reads = [n for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id == name]
    covered = 0
    for root in _elementwise_roots(statement):
        hits = [leaf for leaf in _leaves(root) if code.is_name(leaf, name)]
        if hits:
            before = _shape_of(root, facts)
            after = _shape_of(code.substituted(copy_tree(root), {name: small}), facts)
            if before in (None, "weak") or before != after:
                return False
            covered += len(hits)
    return 0 < covered == len(reads)


def _elementwise_roots(node: ast.AST):
    """The largest trees of ``+ - * /`` and negations in ``node``, outermost first."""
    if _operands(node) is not None:
        yield node
        for leaf in _leaves(node):
            for child in ast.iter_child_nodes(leaf):
                yield from _elementwise_roots(child)
        return
    for child in ast.iter_child_nodes(node):
        yield from _elementwise_roots(child)


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


class _Swap(ast.NodeTransformer):
    """One node (by identity) for another."""

    def __init__(self, old: ast.expr, new: ast.expr):
        self.old, self.new = old, new

    def visit(self, node: ast.AST) -> ast.AST:
        return self.new if node is self.old else super().visit(node)


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
    >>> tree = ast.parse("out = np.sum(2.0 * t7 + 1.0)").body
    >>> print(ast.unparse(method_reductions(tree, facts, {"np": np})))
    out = (2.0 * t7 + 1.0).sum()
    """
    return [_Methods(facts, scope).visit(s) for s in statements]


class _Methods(ast.NodeTransformer):
    def __init__(self, facts: dict[str, Any], scope: dict[str, Any]):
        self.facts, self.scope = facts, scope

    def _array(self, node: ast.expr) -> bool:
        """A numpy array (or scalar): a name that held one, or arithmetic reading one."""
        if isinstance(node, ast.Name):
            return _shape(self.facts.get(node.id)) is not None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self._array(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (*_ELEMENTWISE, ast.Pow)):
            sides = (node.left, node.right)
            return any(self._array(n) for n in sides) and all(
                isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp)) for n in sides
            )
        return False

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return node
        if func.attr not in _METHODS or not node.args or not self._array(node.args[0]):
            return node
        module = self.scope.get(func.value.id)
        if getattr(module, func.attr, None) is not getattr(np, func.attr):
            return node
        method = ast.Attribute(node.args[0], func.attr, ast.Load())
        return ast.copy_location(ast.Call(method, node.args[1:], node.keywords), node)
