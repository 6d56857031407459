"""References and results shaped like structures: the gradient of an array, a number,
or a list, tuple or dict of them (an object's attributes, ``wrt="self"``), judged leaf
by leaf (part of :mod:`fuzz.check_forms`).

A reference is a :class:`Leaf` (central differences in float64 and where they are
trusted) for every floating-point array or number, ``None`` for what has no gradient
(an int, a flag), in the structure of the value.

>>> import numpy as np
>>> value = {"W": np.ones(2), "steps": 2}
>>> ref = reference(value, lambda new: float(np.sum(new["W"] ** 2)))
>>> ref["steps"], np.round(ref["W"].expected, 6).tolist()
(None, [2.0, 2.0])
>>> judge({"W": np.array([2.0, 2.0]), "steps": None}, ref, "self", 1e-5)
('', 2)
>>> judge({"W": np.array([2.0, 0.0]), "steps": None}, ref, "self", 1e-5)[0]
"dself['W'][1] = np.float64(0.0), expected np.float64(2.0000000000...)"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fuzz import oracles


@dataclass
class Leaf:
    """The reference of one array (or number) of a gradient: estimate and trust mask."""

    expected: np.ndarray
    trusted: np.ndarray


def reference(value: Any, value_at: Callable[[Any], float]) -> Any:
    """References of the floating-point leaves of ``value`` (``None`` for the others),
    by differences of ``value_at`` (the program's value with ``value`` replaced)."""
    if isinstance(value, (list, tuple)):
        return type(value)(
            reference(v, lambda new, i=i: value_at(_replaced(value, i, new)))
            for i, v in enumerate(value)
        )
    if isinstance(value, dict):
        return {
            k: reference(v, lambda new, k=k: value_at({**value, k: new})) for k, v in value.items()
        }
    if not _is_float(value):
        return None
    number = isinstance(value, float)
    estimate, trusted = oracles.trusted_leaf_gradient(
        lambda leaf: value_at(float(leaf) if number else leaf), np.asarray(value, dtype=np.float64)
    )
    return Leaf(estimate, trusted)


def _replaced(items: list | tuple, i: int, new: Any) -> list | tuple:
    changed = list(items)
    changed[i] = new
    return type(items)(changed)


def _is_float(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def estimates(reference: Any) -> Any:
    """The gradient the references estimate (what the changes are given)."""
    if isinstance(reference, Leaf):
        return reference.expected.copy()
    if isinstance(reference, (list, tuple)):
        return type(reference)(estimates(r) for r in reference)
    if isinstance(reference, dict):
        return {k: estimates(r) for k, r in reference.items()}
    return None


def as_reference(result: Any) -> Any:
    """A result (of a fresh compile) as references trusted everywhere."""
    if isinstance(result, (list, tuple)):
        return type(result)(as_reference(r) for r in result)
    if isinstance(result, dict):
        return {k: as_reference(r) for k, r in result.items()}
    if result is None:
        return None
    leaf = np.asarray(result, dtype=np.float64)
    return Leaf(leaf, np.ones(leaf.shape, dtype=bool))


def judge(got: Any, reference: Any, label: str, tolerance: float) -> tuple[str, int]:
    """The first disagreement of ``got`` with ``reference`` (``""``: none), and how
    many elements were checked."""
    if reference is None:
        return ("" if got is None else f"d{label} is {type(got).__name__}, expected None"), 0
    if isinstance(reference, Leaf):
        if got is None:
            return f"d{label} is None, expected an array of shape {reference.expected.shape}", 0
        g = np.asarray(got, dtype=np.float64)
        if g.shape != reference.expected.shape:
            return f"d{label} has shape {g.shape}, expected {reference.expected.shape}", 0
        bad = reference.trusted & ~oracles.close(g, reference.expected, tolerance)
        bad |= ~np.isfinite(g)  # a nan/inf gradient of a finite program is never right
        if bad.any():
            i = tuple(int(k) for k in np.argwhere(bad)[0])
            return f"d{label}{list(i)} = {g[i]!r}, expected {reference.expected[i]!r}", 0
        return "", int(reference.trusted.sum())
    if isinstance(reference, dict):
        if not isinstance(got, dict) or set(got) != set(reference):
            keys = sorted(got) if isinstance(got, dict) else type(got).__name__
            return f"d{label} has keys {keys}, expected {sorted(reference)}", 0
        items = [(got[k], r, f"{label}[{k!r}]") for k, r in reference.items()]
    else:
        if not isinstance(got, (list, tuple)) or len(got) != len(reference):
            size = len(got) if isinstance(got, (list, tuple)) else type(got).__name__
            return f"d{label} has {size} items, expected {len(reference)}", 0
        pairs = enumerate(zip(got, reference, strict=True))
        items = [(g, r, f"{label}[{i}]") for i, (g, r) in pairs]
    checked = 0
    for g, r, where in items:
        detail, count = judge(g, r, where, tolerance)
        if detail:
            return detail, 0
        checked += count
    return "", checked


def root_label(wrt: Any) -> str:
    """How a gradient's root is named in a detail."""
    if isinstance(wrt, list):
        return ""  # the items say x, self.W: judged one by one below
    return {None: "x", 0: "x", 1: "w"}.get(wrt, wrt)


def judge_gradients(got: Any, reference: Any, wrt: Any, tolerance: float) -> tuple[str, int]:
    """:func:`judge` with the labels of ``wrt``'s entries."""
    if not isinstance(wrt, list):
        return judge(got, reference, root_label(wrt), tolerance)
    if not isinstance(got, tuple) or len(got) != len(wrt):
        return f"the gradients are {type(got).__name__}, expected a tuple of {len(wrt)}", 0
    checked = 0
    for g, r, entry in zip(got, reference, wrt, strict=True):
        detail, count = judge(g, r, root_label(entry), tolerance)
        if detail:
            return detail, 0
        checked += count
    return "", checked
