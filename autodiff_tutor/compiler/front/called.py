"""The functions of the user's that a normalized program calls, and where.

A function of yours called where gradient flows through its result is compiled in
turn (an ``op_call`` step, ``differentiable(h)(x)``). Called anywhere else (an ``if``
or ``while`` test, a loop's range, an index, an ``assert`` or ``print``, any value the
program keeps whole because no gradient flows through it), the compiled code runs it
as the plain function. Either way it runs on the caller's arrays: a write of its into
an argument (``a *= w``) changes them behind the compiled code's back, which reads
them as unchanged. The front door reads these functions
(:meth:`~autodiff_tutor.api.compiled.Differentiable.front_end`), where such a write is
refused; :func:`may_write_in_place` says which of those run plainly need reading.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def scale(a, w):
...     a *= w
...     return a
>>> scale.__module__ = "course"  # as if written in the user's module
>>> def f(x, w):
...     if np.sum(scale(x, w)) > 0:
...         return np.sum(x * x)
...     return np.sum(x)
>>> [(c.function.__name__, c.compiled) for c in calls_of_yours(front_end(f).program)]
[('scale', False)]
>>> def double(a):
...     return 2.0 * a
>>> may_write_in_place(scale), may_write_in_place(double)
(True, False)
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autodiff_tutor.compiler.code import resolve
from autodiff_tutor.compiler.front.desugar.attributes import MUTATING
from autodiff_tutor.compiler.front.fence import in_place_call
from autodiff_tutor.compiler.front.normalize.resolve import classify, is_user_function
from autodiff_tutor.compiler.front.source import parse_function
from autodiff_tutor.compiler.ir import Loop, Program, Step, expressions_in
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.locations import is_user_file


@dataclass(frozen=True)
class Call:
    """One call of a function of the user's in a program."""

    #: the function called; ``None`` for a local variable called (a function passed
    #: in), which is not known while compiling
    function: Callable[..., Any] | None
    node: ast.AST  # the call, as the user wrote it (its location, where it has one)
    keeper: Step | Loop  # the step or loop that keeps it
    compiled: bool  # compiled in turn (an op_call), rather than run as the plain function


def calls_of_yours(program: Program) -> list[Call]:
    """Every call of a function of the user's in ``program``: the ones compiled in turn,
    and the ones inside what the program keeps whole, run as the plain function."""
    local = program.defined_names()
    found: list[Call] = []
    for expression, keeper in expressions_in(program.steps):
        if expression is getattr(keeper, "value", None) and _compiled_in_turn(keeper):
            found.append(Call(keeper.callee, keeper.origin or expression, keeper, True))
        for node in ast.walk(expression):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Name) and node.func.id in local:
                found.append(Call(None, node, keeper, False))
                continue
            function = _function_of_yours(resolve(node.func, program.namespace))
            if function is not None:
                found.append(Call(function, node, keeper, False))
    return found


def may_write_in_place(fn: Callable[..., Any], seen: frozenset[int] = frozenset()) -> bool:
    """Whether ``fn`` may change, in place, an array or list it is given: its source has
    a write into an element or attribute (``a[0] = v``, ``a *= v``), an in-place method
    or ``out=``, a call of a function passed to it or of another function of the user's
    that may; or it has no source to tell. ``False`` means it cannot: run as the plain
    function, it leaves its arguments as they were."""
    if id(fn) in seen:
        return False
    try:
        parsed = parse_function(fn)
    except AutodiffError:
        return True  # no source: it may do anything
    namespace = parsed.namespace()
    local = {a.arg for a in ast.walk(parsed.tree) if isinstance(a, ast.arg)}
    local |= {n.id for n in ast.walk(parsed.tree) if isinstance(n, ast.Name) and _stored(n)}
    for node in ast.walk(parsed.tree):
        if isinstance(node, ast.AugAssign) or (
            isinstance(node, (ast.Subscript, ast.Attribute)) and _stored(node)
        ):
            return True
        if not isinstance(node, ast.Call):
            continue
        if in_place_call(node, namespace) is not None:
            return True
        # a list's or a dict's method that changes it
        if isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING:
            return True
        if isinstance(node.func, ast.Name) and node.func.id in local:
            return True  # a function passed in, or defined inside: not known here
        called = _function_of_yours(resolve(node.func, namespace))
        if called is not None and may_write_in_place(called, seen | {id(fn)}):
            return True
    return False


def _compiled_in_turn(step: Step) -> bool:
    """A step ``differentiable(helper)(...)``: a function of the user's, compiled in turn
    (not a custom op, nor an op factory such as ``srelu``)."""
    func = getattr(step.value, "func", None) if step.kind == "op_call" else None
    return (
        isinstance(func, ast.Call)
        and isinstance(func.func, ast.Name)
        and func.func.id == "differentiable"
        and inspect.isfunction(step.callee)
    )


def _function_of_yours(obj: Any) -> Callable[..., Any] | None:
    """The function of the user's that calling ``obj`` runs: itself, or the function of a
    ``@differentiable`` one; ``None`` for what the compiler calls otherwise (a primitive
    with a rule, a library's function, a method: operations it does not see into)."""
    try:
        kind = classify(obj).kind if callable(obj) else None
    except TypeError:  # an unhashable callable object: not a function
        return None
    if kind == "op_call":  # a compiled function of yours: what it compiled
        obj = getattr(obj, "fn", None)
    elif kind != "user_call":
        return None
    code = getattr(obj, "__code__", None)
    return obj if is_user_function(obj) and code and is_user_file(code.co_filename) else None


def _stored(node: ast.AST) -> bool:
    return isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))
