"""Normalization of unpacking and of statements kept for their side effects.

- ``N, D = x.shape``, ``a, (b, c) = v``, ``first, *rest = v``: the right side is
  computed once into a name, then each target reads its item by position (a starred
  target reads a slice). A value that may carry gradient is read with ``getitem``
  steps, so gradients flow back into the unpacked value.
- ``print(...)``, ``assert ...``, ``raise ...`` and calls whose result is thrown away
  become *effect* steps: the user's statement runs once in the forward (reading the
  forward's values) and never in the backward.

A :class:`~.front.normalize.Part` of the normalizer, ``normalizer.effects``.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(x):
...     N, D = x.shape
...     print("rows", N)
...     return np.sum(x) / (N * D)
>>> print(front_end(f).program.source())
def f(x):
    t1 = x.shape
    N = t1[0]
    D = t1[1]
    print('rows', N)
    t2 = np.sum(x)
    t3 = N * D
    out = t2 / t3
    return out
"""

from __future__ import annotations

import ast
import builtins
import logging
import random
import warnings

import numpy as np

from autodiff_tutor.compiler.code import root_name
from autodiff_tutor.compiler.front.normalize import Part
from autodiff_tutor.compiler.ir import Step
from autodiff_tutor.runtime.helpers_indexing import entry_alone

# calls whose only effect is to report: they may read any value, gradient or not
REPORTING = {id(builtins.print), id(warnings.warn)}
REPORTING_MODULES = ("numpy.testing", "logging")
# calls that never change the values they are given: kept for their effect on the
# random state or a figure, or a check the compiled code makes (entry_alone, before
# ys[k] += v), they may read this function's values (np.random.seed(seed))
NEVER_WRITES = {id(np.random.seed), id(random.seed), id(entry_alone)}
NEVER_WRITES_MODULES = ("matplotlib",)
CONTEXT_METHODS = {"__enter__", "__exit__"}  # 'with' desugared into these two calls


class Effects(Part):
    """Lowering of unpacking assignments and of effect statements."""

    # -- unpacking -------------------------------------------------------------------

    def unpack_value(self, target: ast.Tuple | ast.List, value: ast.expr) -> None:
        """``a, b = value`` for any value: compute it once, then read item by item."""
        whole = self.normalizer.atom(value)
        if not isinstance(whole, ast.Name):
            self.normalizer.reject(
                value, "this value cannot be unpacked", "unpack a tuple, list or array"
            )
        listed = len(value.elts) if isinstance(value, (ast.Tuple, ast.List)) else None
        self._unpack_from(target, whole, value, listed)

    def _unpack_from(
        self,
        target: ast.Tuple | ast.List,
        whole: ast.Name,
        node: ast.AST,
        listed: int | None = None,
    ) -> None:
        """``listed``: the length of a value written out here (a starred name gets a list of
        its middle items, as in Python; from an array Python gives a list of rows, which
        is not compiled)."""
        elements = target.elts
        starred = [i for i, e in enumerate(elements) if isinstance(e, ast.Starred)]
        if len(starred) > 1:
            self.normalizer.reject(target, "only one starred name per unpacking", "")
        if starred and listed is None:
            self.normalizer.reject(
                elements[starred[0]],
                "a starred name needs a value of known length (a tuple or list written out, "
                "or a structured parameter)",
                "for an array, read its parts: first, rest = x[0], x[1:]",
            )
        count = len(elements)
        for i, element in enumerate(elements):
            if isinstance(element, ast.Starred):
                if listed < count - 1:
                    self.normalizer.reject(
                        target, f"cannot unpack {listed} values into {count - 1} or more", ""
                    )
                self.normalizer.resolver.locals.add(whole.id)
                middle = range(i, listed - (count - 1 - i))
                items = [ast.Subscript(whole, ast.Constant(j), ast.Load()) for j in middle]
                self.normalizer.assign(element.value, ast.List(items, ast.Load()))
                continue
            index = ast.Constant(i - count if starred and i > starred[0] else i)
            if isinstance(element, ast.Name):
                version = self.normalizer.version_name(element.id)
                self._item(version, whole, index, node)
                self.normalizer.current[element.id] = version
            elif isinstance(element, (ast.Tuple, ast.List)):
                inner = self._item(None, whole, index, node)
                self._unpack_from(element, inner, node)
            else:  # y[i], obj.attr: read the item into a name, then assign it
                item = self._item(None, whole, index, node)
                self.normalizer.resolver.locals.add(item.id)
                self.normalizer.assign(element, item)

    def _item(self, target: str | None, whole: ast.Name, index: ast.expr, node) -> ast.Name:
        item = ast.Subscript(whole, index, ast.Load())
        if whole.id in self.normalizer.may_carry:
            return self.normalizer.calls.primitive(
                target, item, "getitem", [whole], {"index": index}, node
            )
        return self.normalizer.emit(Step(target, item, "static"))

    # -- effects ---------------------------------------------------------------------

    def effect(self, node: ast.stmt) -> None:
        """A statement run once in the forward for its effect (print, assert, raise)."""
        if isinstance(node, ast.Expr):
            self._check_effect_call(node.value)
        for inner in ast.walk(node):
            if isinstance(inner, ast.Lambda):  # its parameters would not be renamed
                self.normalizer.reject(
                    inner,
                    "a lambda inside print/assert/raise is not supported",
                    "define the function before this line",
                )
        statement = self.normalizer.rename(node)
        reads = sorted(
            {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)} - set(vars(builtins))
        )
        value = ast.Tuple([ast.Name(n, ast.Load()) for n in reads], ast.Load())
        self.normalizer.emit(
            Step(self.normalizer.fresh("effect"), value, "effect", statement=statement)
        )

    def _check_effect_call(self, call: ast.expr) -> None:
        """A call kept for its effect must not change a local value in place."""
        if not isinstance(call, ast.Call):
            self.normalizer.reject(
                call,
                "an expression statement is not supported: its value would be thrown away",
                "assign the result to a name, or remove the line",
            )
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in CONTEXT_METHODS:
            return
        if self._changes_nothing(func):
            return
        root = root_name(func)
        local_method = root is not None and not self.normalizer.resolver.is_global(root)
        reads_local = any(
            isinstance(n, ast.Name) and not self.normalizer.resolver.is_global(n.id)
            for arg in [*call.args, *(k.value for k in call.keywords)]
            for n in ast.walk(arg)
        )
        if local_method or reads_local:
            self.normalizer.reject(
                call,
                "an expression statement is not supported: its value would be thrown away, "
                "and the call may change a value of this function in place",
                "assign the result to a name; in-place methods (x.sort(), x.fill(), "
                "ys.extend(...)) are not differentiable; print, warnings.warn and "
                "np.testing checks are fine",
            )

    def _changes_nothing(self, func: ast.expr) -> bool:
        """Calls that report (``print``, a logger's) or change no value they are given
        (``np.random.seed``, plotting): see ``REPORTING`` and ``NEVER_WRITES``."""
        obj = self.global_callee(func)
        if obj is None:
            return False
        module = getattr(obj, "__module__", "") or ""
        return (
            id(obj) in REPORTING | NEVER_WRITES
            or module.startswith(REPORTING_MODULES + NEVER_WRITES_MODULES)
            or isinstance(getattr(obj, "__self__", None), logging.Logger)
        )

    def global_callee(self, func: ast.expr) -> object | None:
        """What ``func`` calls, when it is read from a global (``np.random.seed``)."""
        root = root_name(func)
        if root is None or not self.normalizer.resolver.is_global(root):
            return None
        try:
            return self.normalizer.resolver.evaluate(func)
        except Exception:  # a local's method, or a name the resolver cannot see
            return None
