"""Which primitives return views: each record's ``view`` fact against numpy itself.

``Rule.view`` says whether numpy's result may share memory with the first input (a
write through either is then seen by the other); the compiler's alias tracking and its
put-back of writes read it. A primitive marked as a copy that numpy returns as a view
(``np.flip``) loses the writes through it, silently. So every record is checked
against numpy's own function, called on the inputs of its finite-difference cases
(``test_rules_numeric.CASES``), laid out in C order and in Fortran order: a record
without the mark must never share memory, one with it must share on some case.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_rules_numeric import CASES

from autodiff_tutor.rules.record import HELPER
from autodiff_tutor.rules.registry import all_rules

#: records with no numpy function to call, and why
NOT_NUMPY = {
    "setitem": "x[i] = v writes in place; the compiler and tracing follow it as assign_at",
    "make_list": "a Python list of arrays",
    "list_append": "a Python list of arrays",
    "list_setitem": "a Python list of arrays",
}


def _numpy_function(op: str) -> Callable[..., Any] | None:
    """numpy's function of the record's name (``np.flip``, ``np.linalg.svd``), if any."""
    for namespace in (np, np.linalg):
        function = getattr(namespace, op, None)
        if callable(function) and not isinstance(function, type):
            return function
    return None


def _is_numpys_own(function: Any) -> bool:
    module = getattr(function, "__module__", None) or ""
    return isinstance(function, np.ufunc) or module.split(".")[0] in ("numpy", "scipy")


def _call(op: str, case: Any, inputs: list[Any]) -> Callable[..., Any]:
    """The library's own call of the case: its primal when that is numpy's or scipy's
    function, else the array method or numpy's function of the record's name where it
    takes the case's arguments, else the table's spelling (``x[index]``,
    ``multivariate_normal.logpdf``, ``np.gradient``'s spacing by keyword)."""
    if _is_numpys_own(case.primal):
        return case.primal
    if all_rules()[op].method:
        return lambda x, *args, **options: getattr(x, op)(*args, **options)
    function = _numpy_function(op)
    try:
        inspect.signature(function).bind(*inputs, **case.options)
    except (TypeError, ValueError):  # no such function, or other arguments
        return case.primal
    return function


def _arrays(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in _arrays(item)]
    return []


def _laid_out(value: Any, order: str) -> Any:
    """``value`` (an input: an array, a list of arrays, an option) in memory ``order``."""
    if isinstance(value, list):
        return [_laid_out(v, order) for v in value]
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return np.asarray(value, order=order).copy(order=order)
    return value


def _checked_ops() -> list[str]:
    return [
        op
        for op, rule in sorted(all_rules().items())
        if op not in NOT_NUMPY and (rule.shape != HELPER or _numpy_function(op) is not None)
    ]


def _sharing(op: str) -> list[tuple[str, bool, bool]]:
    """For each case and layout: (label, whether every result shares memory with the
    first input, whether any result shares memory with any input)."""
    found = []
    for k, case in enumerate(CASES[op]):
        for order in ("C", "F"):
            inputs = _laid_out(case.sample(np.random.default_rng(k)), order)
            result = _call(op, case, inputs)(*inputs, **case.options)
            parts = _arrays(result) if isinstance(result, (list, tuple)) else _arrays([result])
            first = _arrays(inputs[0])
            every = bool(parts) and all(
                any(np.shares_memory(part, a) for a in first) for part in parts
            )
            anything = [a for value in inputs for a in _arrays(value)]
            some = any(np.shares_memory(part, a) for part in parts for a in anything)
            found.append((f"{case.label or k} ({order})", every, some))
    return found


@pytest.mark.parametrize("op", _checked_ops())
def test_the_view_fact_is_what_numpy_does(op):
    """A record marked a copy never shares memory with its inputs; one marked a view
    (``"view"``, ``"reshape"``) shares on some case, and a list of views
    (``"split"``) holds views only."""
    kind = all_rules()[op].view
    sharing = _sharing(op)
    assert sharing, f"{op}: no case to call numpy's function on"
    if not kind:
        shared = [label for label, _, some in sharing if some]
        assert not shared, f"{op}: numpy returns a view ({', '.join(shared)}), the record a copy"
    else:
        assert any(every for _, every, _ in sharing), f"{op}: marked {kind!r}, numpy copies"


def test_the_walk_leaves_out_only_what_numpy_has_no_function_for():
    """Every record is checked but the runtime helpers numpy has no function for and the
    few named here, each a record without a numpy function of its name."""
    left_out = set(all_rules()) - set(_checked_ops())
    helpers = {op for op, rule in all_rules().items() if rule.shape == HELPER}
    assert left_out == set(NOT_NUMPY) | {op for op in helpers if _numpy_function(op) is None}
    assert all(_numpy_function(op) is None for op in NOT_NUMPY)
    assert "unstack" in _checked_ops()  # a helper of stack's gradient, and np.unstack


# one call per primitive that may return a view, on a C-ordered (4, 6) array
VIEW_CALLS = {
    "getitem": lambda a: a[1:3],
    "reshape": lambda a: np.reshape(a, (6, 4)),
    "transpose": np.transpose,
    "squeeze": lambda a: np.squeeze(a[None]),
    "expand_dims": lambda a: np.expand_dims(a, 0),
    "ravel": np.ravel,
    "swapaxes": lambda a: np.swapaxes(a, 0, 1),
    "moveaxis": lambda a: np.moveaxis(a, 0, 1),
    "broadcast_to": lambda a: np.broadcast_to(a, (2, 4, 6)),
    "atleast_1d": np.atleast_1d,
    "atleast_2d": np.atleast_2d,
    "atleast_3d": np.atleast_3d,
    "diagonal": np.diagonal,
    "diag": np.diag,  # read-only; of a vector, a new array
    "flip": np.flip,
    "fliplr": np.fliplr,
    "flipud": np.flipud,
    "rot90": np.rot90,
    "split": lambda a: np.split(a, 2),
    "array_split": lambda a: np.array_split(a, 3),
    "hsplit": lambda a: np.hsplit(a, 2),
    "vsplit": lambda a: np.vsplit(a, 2),
    "dsplit": lambda a: np.dsplit(a.reshape(2, 3, 4), 2),
    "unstack": np.unstack,
}


def test_a_reshape_view_keeps_the_elements_in_order():
    """``"reshape"`` views are the input's elements in C order (the compiler puts a write
    through one back with ``v.reshape(y.shape)``); each view primitive is listed here."""
    a = np.arange(24.0).reshape(4, 6)
    marked = {op: rule.view for op, rule in all_rules().items() if rule.view}
    assert set(marked) == set(VIEW_CALLS)
    for op, kind in marked.items():
        result = VIEW_CALLS[op](a)
        parts = result if kind == "split" else [result]
        for part in parts:
            assert np.shares_memory(part, a), op
        if kind == "reshape":
            assert np.array_equal(np.ravel(result), np.ravel(a)), op
