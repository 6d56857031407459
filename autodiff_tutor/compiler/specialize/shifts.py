"""Stage 6e, shifts — the stabilizing maximum of a softmax, a log-softmax or a
log-sum-exp has no gradient.

``lse = log(sum(exp(z - m), axis)) + m`` is the same function of ``z`` for every
``m``: the maximum ``m = max(z, axis, keepdims=True)`` subtracted for stability
changes only the rounding. Its two gradient contributions (through ``z - m`` and
through ``+ m``) cancel exactly in exact arithmetic, so the backward that computes
them, adds them and sends the (rounding-sized) difference back through ``max``
(``tie_share``) does passes whose result is zero. The same holds where ``t = z - m``
is read only by a softmax or a log-softmax along ``axis``: both are the same for ``t +
c`` (``c`` constant along ``axis``), so the gradient reaching ``t`` sums to zero along
``axis``, and ``m``'s gradient is minus that sum. :func:`shift_names` finds such ``m``
in a program (and no other: ``log(sum(exp(z - m)))`` alone depends on ``m``);
:func:`drop_shift_gradients` removes their gradient statements from a backward, or
leaves it as it is when the gradient is read anywhere else.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(z):
...     m = np.max(z, axis=1, keepdims=True)
...     return np.sum(np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m)
>>> sorted(shift_names(front_end(f).program))
['m']
>>> tree = ast.parse("d_m = unbroadcast(d_lse, m)\\nd_z = d_z + d_t4\\n"
...                  "d_m = d_m + unbroadcast(-d_t4, m)\\n"
...                  "d_z += unreduce(d_m, z, axis=1) * tie_share(z, m, axis=1)").body
>>> [ast.unparse(s) for s in drop_shift_gradients(tree, {"m"}, "d_")]
['d_z = d_z + d_t4']
"""

from __future__ import annotations

import ast
import copy

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.ir import Program, Step

_SPREADS = ("unreduce", "unbroadcast")


def shift_names(program: Program) -> set[str]:
    """Names ``m = max(z, axis=a, keepdims=True)`` whose gradient is zero: read only by
    ``t = z - m`` and a function of ``t`` that is the same for ``t + c`` (``c``
    constant along ``a``), so the gradient reaching ``t`` sums to zero along ``a`` and
    so does ``m``'s, minus that sum. The forms, each value read only by the next step
    of its chain, every name defined once and none of them returned but the last:

    - ``lse = log(sum(exp(t), axis=a, keepdims=True)) + m`` (``m`` read by both):
      ``log(sum(exp(z)))`` whatever ``m`` is;
    - log-softmax ``t - log(sum(exp(t), axis=a, keepdims=True))``: ``t + c`` gives
      ``t + c - (log(sum(exp(t))) + c)``;
    - softmax ``exp(t) / sum(exp(t), axis=a, keepdims=True)`` (one ``exp`` or two):
      ``exp(c)`` cancels.

    Any other reader (``log(sum(exp(t)))`` alone is not shift invariant) keeps the
    gradient."""
    steps = {s.target: s for s in program.steps if isinstance(s, Step)}
    defined, readers = program.bindings(), {}
    for step in program.all_steps():
        for value in step.inputs.values():
            for node in ast.walk(value):
                if isinstance(node, ast.Name):
                    readers.setdefault(node.id, []).append(step)
    chains = _Chains(steps, readers, defined, set(program.outputs))
    found = set()
    for m, step in steps.items():
        if step.op not in ("max", "amax") or _option(step, "keepdims") != "True":
            continue
        z, axis = _input(step, "x"), _option(step, "axis")
        users = readers.get(m, [])
        if z is None or defined.get(z, 0) > 1 or not chains.once(m, len(users)):
            continue
        shift = next((u for u in users if u.op == "subtract" and _input(u, "y") == m), None)
        if shift is None or _input(shift, "x") != z or not chains.once(shift.target, None):
            continue
        t = shift.target
        if len(users) == 2 and chains.log_sum_exp_plus(t, m, axis, users):
            found.add(m)
        elif len(users) == 1 and (chains.log_softmax(t, axis) or chains.softmax(t, axis)):
            found.add(m)
    return found


class _Chains:
    """The consumers of a shifted value ``t`` that :func:`shift_names` proves shift
    invariant."""

    def __init__(self, steps: dict[str, Step], readers: dict, defined: dict, outputs: set):
        self.steps, self.readers, self.defined, self.outputs = steps, readers, defined, outputs

    def once(self, name: str, readers: int | None) -> bool:
        """Defined once at the top level, not returned, read by ``readers`` steps
        (``None``: any number) all at the top level."""
        users = self.readers.get(name, [])
        top = all(self.steps.get(u.target) is u for u in users)
        counted = readers is None or len(users) == readers
        return self.defined.get(name) == 1 and name not in self.outputs and top and counted

    def _only_reader(self, name: str, op: str, key: str = "x") -> Step | None:
        """The one step reading ``name``, with ``op`` and ``name`` as its ``key``."""
        users = self.readers.get(name, [])
        if not self.once(name, 1) or users[0].op != op or _input(users[0], key) != name:
            return None
        return users[0]

    def _log_sum_exp(self, t: str, axis: str | None) -> Step | None:
        """The step ``log(s)`` of ``e = exp(t)``, ``s = sum(e, axis, keepdims=True)``,
        each read only by the next (``t`` may have other readers)."""
        exp = next((u for u in self.readers.get(t, []) if u.op == "exp"), None)
        if exp is None or _input(exp, "x") != t:
            return None
        total = self._only_reader(exp.target, "sum")
        if total is None or not _sums_along(total, axis):
            return None
        return self._only_reader(total.target, "log")

    def log_sum_exp_plus(self, t: str, m: str, axis: str | None, users: list[Step]) -> bool:
        """``log(sum(exp(t), axis, keepdims=True)) + m``, ``t`` read only by ``exp``."""
        if len(self.readers.get(t, [])) != 1:
            return False
        log = self._log_sum_exp(t, axis)
        if log is None or not self.once(log.target, 1):
            return False
        total = self.readers[log.target][0]
        return total in users and total.op == "add" and _operands(total) == {log.target, m}

    def log_softmax(self, t: str, axis: str | None) -> bool:
        """``t - log(sum(exp(t), axis, keepdims=True))``, ``t`` read by both only."""
        users = self.readers.get(t, [])
        log = self._log_sum_exp(t, axis)
        if len(users) != 2 or log is None:
            return False
        difference = self._only_reader(log.target, "subtract", "y")
        return difference is not None and _input(difference, "x") == t and difference in users

    def softmax(self, t: str, axis: str | None) -> bool:
        """``exp(t) / sum(exp(t), axis, keepdims=True)``: every reader of ``t`` an
        ``exp``, whose values are read by one sum (along ``axis``) and one division
        of one of them by that sum, and by nothing else."""
        exps = self.readers.get(t, [])
        if not exps or any(e.op != "exp" or _input(e, "x") != t for e in exps):
            return False
        if not all(self.once(e.target, None) for e in exps):
            return False
        values = {e.target for e in exps}
        users = {id(u): u for v in values for u in self.readers.get(v, [])}.values()
        sums = [u for u in users if u.op == "sum"]
        divides = [u for u in users if u.op == "divide"]
        if len(sums) != 1 or len(divides) != 1 or len(users) != 2:
            return False
        total, ratio = sums[0], divides[0]
        return (
            _sums_along(total, axis)
            and _input(total, "x") in values
            and _input(ratio, "x") in values
            and _input(ratio, "y") == total.target
            and self._only_reader(total.target, "divide", "y") is ratio
        )


def _sums_along(step: Step, axis: str | None) -> bool:
    return _option(step, "axis") == axis and _option(step, "keepdims") == "True"


def _operands(step: Step) -> set[str | None]:
    return {_input(step, "x"), _input(step, "y")}


def _input(step: Step, key: str) -> str | None:
    value = step.inputs.get(key)
    return value.id if isinstance(value, ast.Name) else None


def _option(step: Step, key: str) -> str | None:
    value = step.options.get(key)
    return ast.unparse(value) if value is not None else None


def drop_shift_gradients(
    statements: list[ast.stmt], names: set[str], prefix: str
) -> list[ast.stmt]:
    """``statements`` without those that compute the gradient of each name in
    ``names`` (bind ``d_m``) or add it back through the maximum (``d_z += d_m *
    ...``, or ``d_z = a + d_m * ...``, which becomes ``d_z = a``; ``d_m`` spread by
    ``unreduce``/``unbroadcast`` allowed); unchanged for a name whose gradient another
    statement reads."""
    for name in names:
        gradient = prefix + name
        kept = []
        for statement in statements:
            if _binds(statement, gradient) or _adds_product_of(statement, gradient):
                continue
            kept.append(_without_added_product(statement, gradient))
        if not any(code.mentions(s, gradient) for s in kept if s is not None):
            statements = [s for s in kept if s is not None]
    return statements


def _without_added_product(statement: ast.stmt, name: str) -> ast.stmt | None:
    """``x = a + <a product with the factor name>``: ``x = a`` (``None`` for ``x =
    x + ...``, which changes nothing); any other statement as it is."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return statement
    target, value = statement.targets[0], statement.value
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return statement
    for product, other in ((value.right, value.left), (value.left, value.right)):
        if code.mentions(other, name) or not any(
            _is_factor(f, name) for f in code.factors(product)
        ):
            continue
        if isinstance(target, ast.Name) and isinstance(other, ast.Name) and other.id == target.id:
            return None
        kept = copy.copy(statement)  # the same origin (the user's line)
        kept.value = other
        return kept
    return statement


def _binds(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, ast.AugAssign):
        return isinstance(statement.target, ast.Name) and statement.target.id == name
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    return len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == name


def _adds_product_of(statement: ast.stmt, name: str) -> bool:
    """``x += <a product with the factor name>`` (zero when ``name`` is zero)."""
    if not (isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add)):
        return False
    if code.mentions(statement.target, name):
        return False
    return any(_is_factor(f, name) for f in code.factors(statement.value))


def _is_factor(node: ast.expr, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name
    spread = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    if spread and node.func.id in _SPREADS and node.args:
        return isinstance(node.args[0], ast.Name) and node.args[0].id == name
    return False
