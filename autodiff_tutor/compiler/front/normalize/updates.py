"""Which augmented updates on a name need numpy's in-place check in the forward.

``y += v`` on an array updates it in place: numpy keeps ``y``'s dtype and shape and
refuses what does not fit (a float result into an integer array). The compiled code
makes a new version (``y_2 = y + v``), so its forward checks first,
``check_in_place(y, '+=', v)``, where ``y`` may be such an array. Where ``y`` is
certainly a Python number (rebound, never updated) or certainly floating-point (a float
result always fits, and so does any result it promotes to), the check can say nothing:
it is left out, and the generated code reads as the user wrote it.

What is certain is found from how each name is made (constants, arithmetic, numpy's
array makers without ``dtype=``, functions with a floating result, and operations that
keep their input's kind), over every definition of the name (a loop's or a branch's
join included), starting from "certain" and giving it up until nothing changes: the
largest answer every definition agrees with.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import front_end
>>> def f(x, n):
...     s = 0.0
...     a = np.arange(3)
...     for i in range(n):
...         s += x[i]
...         a += 1
...     return s + np.sum(a)
>>> [step.source() for step in front_end(f).program.all_steps() if step.augmented]
['a_3 = a_2 + 1']
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from autodiff_tutor.compiler.code import root_name
from autodiff_tutor.compiler.ir import Step
from autodiff_tutor.errors import UnsupportedSyntaxError

#: Binary operators whose result is floating when one operand is (numpy's promotion).
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
#: Primitives whose result is floating, whatever the kind of their input.
_FLOATING = {
    "exp",
    "log",
    "log2",
    "log10",
    "log1p",
    "expm1",
    "sqrt",
    "tanh",
    "sinh",
    "cosh",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "mean",
    "var",
    "std",
}
#: Primitives whose result has the kind of their input ``x``.
_KIND_KEEPING = {
    "getitem",
    "transpose",
    "reshape",
    "ravel",
    "copy",
    "squeeze",
    "expand_dims",
    "sum",
    "cumsum",
    "flip",
    "roll",
    "abs",
    "negative",
}
#: numpy's array makers whose result is float64 when no dtype is given, by the number
#: of positional arguments that leaves the dtype out.
_MAKERS = {np.zeros: 1, np.ones: 1, np.empty: 1, np.identity: 1, np.eye: 3}


def drop_needless_checks(steps: list[Step], evaluate: Callable[[ast.expr], Any]) -> None:
    """Clear ``augmented`` on each step of ``steps`` (every step of a program, in
    order) that updates a certain Python number or a certain floating value.
    ``evaluate`` gives the object a call's function names (``np.zeros``)."""
    definitions: dict[str, list[Step]] = {}
    for step in steps:
        for name in step.defined():
            definitions.setdefault(name, []).append(step)
    floats = {n for n, made in definitions.items() if all(len(s.defined()) == 1 for s in made)}

    def resolve(function: ast.expr) -> Any:  # a global's object; a local name is unknown
        if root_name(function) in definitions:
            raise UnsupportedSyntaxError("a name of this function")
        return evaluate(function)

    numbers = set(floats)
    changed = True
    while changed:  # give up what some definition does not assure, until nothing changes
        changed = False
        for name in sorted(floats | numbers):
            kinds = [_kinds(step, floats, numbers, resolve) for step in definitions[name]]
            if name in floats and not all(is_float for is_float, _ in kinds):
                floats.discard(name)
                changed = True
            if name in numbers and not all(is_number for _, is_number in kinds):
                numbers.discard(name)
                changed = True
    for step in steps:
        if step.augmented and isinstance(step.value, ast.BinOp):
            updated = step.value.left
            if isinstance(updated, ast.Name) and updated.id in floats | numbers:
                step.augmented = False


def _kinds(
    step: Step, floats: set[str], numbers: set[str], evaluate: Callable[[ast.expr], Any]
) -> tuple[bool, bool]:
    """Whether the value ``step`` makes is certainly floating, and certainly a Python
    number, given what ``floats`` and ``numbers`` hold for its operands."""
    value = step.value

    def float_atom(atom: ast.expr) -> bool:
        if isinstance(atom, ast.Constant):
            return isinstance(atom.value, float)
        return isinstance(atom, ast.Name) and atom.id in floats

    def number_atom(atom: ast.expr) -> bool:
        if isinstance(atom, ast.Constant):
            return isinstance(atom.value, (int, float))
        return isinstance(atom, ast.Name) and atom.id in numbers

    if isinstance(value, (ast.Constant, ast.Name)):
        return float_atom(value), number_atom(value)
    if isinstance(value, ast.BinOp) and isinstance(value.op, _ARITHMETIC):
        operands = (value.left, value.right)
        is_float = isinstance(value.op, ast.Div) or any(float_atom(a) for a in operands)
        return is_float, all(number_atom(a) for a in operands)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        return float_atom(value.operand), number_atom(value.operand)
    if "dtype" in step.options:
        return False, False
    if step.kind == "primitive" and step.op in _FLOATING:
        return True, False
    if step.kind == "primitive" and step.op in _KIND_KEEPING and "x" in step.inputs:
        return float_atom(step.inputs["x"]), False
    return _made_float(value, evaluate), False


def _made_float(value: ast.expr, evaluate: Callable[[ast.expr], Any]) -> bool:
    """Whether ``value`` is a call of numpy's array makers that gives float64
    (``np.zeros(n)``, ``np.full(n, 0.5)``: no ``dtype``)."""
    if not isinstance(value, ast.Call) or any(k.arg in ("dtype", None) for k in value.keywords):
        return False
    if any(isinstance(a, ast.Starred) for a in value.args):
        return False
    try:
        function = evaluate(value.func)
    except (UnsupportedSyntaxError, AttributeError):  # a local name, not numpy's
        return False
    if function is np.full:
        fill = value.args[1] if len(value.args) == 2 else None
        return isinstance(fill, ast.Constant) and isinstance(fill.value, float)
    positional = next((n for f, n in _MAKERS.items() if f is function), None)
    return positional is not None and len(value.args) <= positional
