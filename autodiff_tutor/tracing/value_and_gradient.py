"""``value_and_gradient``: trace a function and return its value and gradient, with
``wrt`` picking arguments by position or name, or a bound method's attributes (the
compiler's ``value_and_grad`` contract).

>>> value_and_gradient(lambda x: np.sum(x**2), np.arange(3.0))
(np.float64(5.0), array([0., 2., 4.]))
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np  # noqa: F401 - doctests

from autodiff_tutor.errors import ArgumentError, front_door
from autodiff_tutor.locations import location
from autodiff_tutor.pytree import flatten, is_structure, unflatten
from autodiff_tutor.runtime.backend import is_float_value
from autodiff_tutor.tracing import plain_arguments
from autodiff_tutor.tracing.evaluate import check_call, parameter_labels, trace_call
from autodiff_tutor.tracing.extract import extract_data
from autodiff_tutor.tracing.from_data import traced
from autodiff_tutor.tracing.gradient import take_gradient
from autodiff_tutor.tracing.traced_values import is_traced
from autodiff_tutor.tracing.user_code import rewired


@front_door
def value_and_gradient(
    fn: Callable[..., Any], *args: Any, wrt: int | str | Sequence[int | str] = 0
) -> tuple[Any, Any]:
    """Trace ``fn(*args)`` and return its value and its gradient w.r.t. ``wrt``.

    ``wrt`` picks arguments by position or parameter name, or attributes of a bound
    method's object (``wrt="self.W"`` for ``model.loss``, traced while it runs); one
    gives one gradient, a sequence gives a tuple. The arguments picked are traced for
    you; values are returned as plain arrays. A structure (a list, tuple or dict of
    arrays, nested) is traced array by array and its gradient has the same structure
    (``None`` for an integer array). (The same contract as the compiler's
    ``value_and_grad``, so both modes can be compared on the same programs.)

    >>> value_and_gradient(lambda x, y: np.sum(x * y), np.ones(2), np.arange(2.0), wrt=1)
    (np.float64(1.0), array([1., 1.]))
    >>> value_and_gradient(lambda p: np.sum(p["w"] * p["b"]), {"w": np.ones(2), "b": np.ones(2)})
    (np.float64(2.0), {'w': array([1., 1.]), 'b': array([1., 1.])})
    """
    check_call(fn, args, {})
    owner, attributes, plain_wrt = _attributes(fn, wrt)
    positions = [] if attributes and not plain_wrt else _positions(fn, len(args), plain_wrt)
    labels = parameter_labels(fn, len(args))
    names = ["the value", *(labels[i] for i in positions), *(f"self.{a}" for a in attributes)]
    args = tuple(_traced_leaves(a) if i in positions else a for i, a in enumerate(args))
    learnables = [_traced_leaves(getattr(owner, a)) for a in attributes]
    count = len(args)
    target = rewired(fn)  # numpy, scipy and math as tracing sees them

    def run(*inner: Any) -> tuple[Any, Any]:
        variables = [inner[i] for i in positions] + list(inner[count:])
        with _set_attributes(owner, dict(zip(attributes, inner[count:], strict=True))):
            y = target(*(plain_arguments.marked(a) for a in inner[:count]))
        grads = take_gradient(y, variables, names, False, untraced_none=True)
        return y, grads if len(variables) > 1 else (grads,)

    name = getattr(fn, "__name__", type(fn).__name__)
    variable_labels = labels + [f"self.{a}" for a in attributes]
    value, grads = trace_call(run, (*args, *learnables), {}, name, variable_labels)
    order = [("arg", i) for i in positions] + [("attribute", a) for a in attributes]
    entries = [wrt] if isinstance(wrt, (int, str)) else list(wrt)
    by_entry = dict(zip(order, grads, strict=True))
    grads = tuple(by_entry[_entry_key(fn, e, labels)] for e in entries)
    if isinstance(wrt, (int, str)):
        grads = grads[0]
    return extract_data(value), grads


def _entry_key(fn: Callable[..., Any], entry: Any, labels: list[str]) -> tuple[str, Any]:
    if isinstance(entry, str) and entry.startswith("self."):
        return ("attribute", entry[len("self.") :])
    return ("arg", _positions(fn, len(labels), entry)[0])


def _attributes(fn: Any, wrt: Any) -> tuple[Any, list[str], list[Any]]:
    """The object whose attributes ``wrt`` names (``"self.W"``), those attributes, and
    the other entries of ``wrt``."""
    entries = [wrt] if isinstance(wrt, (int, str)) else wrt
    if not isinstance(entries, (list, tuple)):
        return None, [], wrt
    named = [e for e in entries if isinstance(e, str) and e.startswith("self.")]
    if not named:
        return None, [], wrt
    owner = getattr(fn, "__self__", None) if inspect.ismethod(fn) else fn
    attributes = [e[len("self.") :] for e in named]
    missing = [a for a in attributes if owner is None or not hasattr(owner, a)]
    if missing or not (inspect.ismethod(fn) or not inspect.isfunction(fn)):
        raise ArgumentError(
            f"wrt={named[0]!r}: {getattr(fn, '__name__', 'the function')} has no attribute "
            f"{missing[0] if missing else attributes[0]!r} to differentiate",
            location(),
            hint="wrt='self.W' names an attribute of a bound method's object (model.loss) "
            "or of a callable object",
        )
    return owner, attributes, [e for e in entries if e not in named]


@contextlib.contextmanager
def _set_attributes(owner: Any, values: dict[str, Any]) -> Iterator[None]:
    """The traced values as the object's attributes while ``fn`` runs; the originals
    back afterwards (unless ``fn`` assigned the attribute itself)."""
    saved = {name: getattr(owner, name) for name in values}
    for name, value in values.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for name, value in values.items():
            if getattr(owner, name) is value:
                setattr(owner, name, saved[name])


def _traced_leaves(value: Any) -> Any:
    """``value`` traced; a structure (a list, tuple or dict of arrays) leaf by leaf,
    where a leaf that cannot have a gradient (integers) stays as it is."""
    if not is_structure(value):
        return value if is_traced(value) else traced(value)
    leaves, tree = flatten(value)
    return unflatten(
        tree, [traced(v) if is_float_value(v) and not is_traced(v) else v for v in leaves]
    )


def _positions(fn: Callable[..., Any], count: int, wrt: Any) -> list[int]:
    items = [wrt] if isinstance(wrt, (int, str)) else wrt
    if not isinstance(items, (list, tuple)) or not items:
        raise ArgumentError(
            f"wrt must be an argument position, a name, or a non-empty list of them, not {wrt!r}",
            location(),
            hint="for example wrt=0, wrt='x' or wrt=[0, 1]",
        )
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    positions = []
    for item in items:
        if isinstance(item, str):
            if item not in names[:count]:
                raise ArgumentError(f"wrt={item!r} is not a parameter of the function", location())
            item = names.index(item)
        if isinstance(item, bool) or not isinstance(item, int) or not -count <= item < count:
            raise ArgumentError(f"wrt={item!r} is out of range for {count} argument(s)", location())
        positions.append(item % count)
    if len(set(positions)) != len(positions):
        raise ArgumentError(f"wrt must name each argument at most once, got {wrt!r}", location())
    return positions


__all__ = ["value_and_gradient"]
