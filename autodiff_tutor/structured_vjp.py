"""``vjp`` with structures: arguments that are lists, tuples or dicts of arrays, and
outputs that are lists of arrays.

A structured argument is flattened as ``grad`` flattens it
(:func:`autodiff_tutor.structured_calls.flatten_call`: one parameter per leaf, one
compilation per structure), and its gradient comes back in its structure. An output
that is a list takes a seed that is a list of the same length, one array per element
shaped like it.

>>> import numpy as np
>>> from autodiff_tutor import vjp
>>> def layer(p, x):
...     return np.tanh(x @ p["W"] + p["b"])
>>> p = {"W": np.eye(2), "b": np.zeros(2)}
>>> out, pullback = vjp(layer, p, np.zeros((1, 2)), wrt="p")
>>> (d_p,) = pullback(np.ones((1, 2)))
>>> d_p["b"].tolist()
[1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autodiff_tutor.api_checks import located
from autodiff_tutor.errors import ArgumentError, NonScalarOutputError
from autodiff_tutor.pytree import ObjectView, flatten, holds_user_object, is_static, is_structure
from autodiff_tutor.runtime.backend import is_float_value
from autodiff_tutor.structured_calls import (
    entry_names,
    flatten_call,
    refuse_structured_vjp,
    varargs_name,
)


def has_float_leaf(value: Any) -> bool:
    """Whether a structure holds a floating-point array or number (its leaves are
    differentiated by default, as a float argument is).

    >>> import numpy as np
    >>> has_float_leaf({"W": np.ones(2), "n": 3}), has_float_leaf([np.arange(2)])
    (True, False)
    """

    return is_structure(value) and any(is_float_value(leaf) for leaf in flatten(value)[0])


def structured_vjp(
    f: Any, args: Sequence[Any], kwargs: dict[str, Any], wrt: Any, api: Any
) -> tuple[Any, Callable[..., tuple[Any, ...]]] | None:
    """``vjp(f, *args, wrt=wrt, **kwargs)`` where an argument in ``wrt`` is a
    structure: the call flattened, and each gradient in its argument's structure
    (``None`` for leaves that are not floating-point). ``None`` when no argument in
    ``wrt`` is a structure. ``api`` gives ``differentiable`` and ``vjp``.

    >>> import numpy as np
    >>> from autodiff_tutor import api
    >>> def f(ws):
    ...     return ws[0] * ws[1]
    >>> out, pullback = structured_vjp(f, [[np.ones(2), 3 * np.ones(2)]], {}, None, api)
    >>> [g.tolist() for g in pullback(np.ones(2))[0]]
    [[3.0, 3.0], [1.0, 1.0]]
    """

    if getattr(f, "_gradient_of", None) is not None:
        return gradient_vjp(f, args, kwargs, wrt, api)
    compiled = api.differentiable(f)
    entries = api.float_params(compiled, args, kwargs) if wrt is None else wrt
    entries = [entries] if isinstance(entries, (int, str)) else list(entries)
    flat = flatten_call(compiled, entries, args, kwargs)
    if flat is None:
        return None
    out, pullback = api.vjp(flat.function, *flat.args, wrt=list(flat.wrt))

    def structured_pullback(*seeds: Any) -> tuple[Any, ...]:
        return flat.rebuild(pullback(*seeds))

    return out, structured_pullback


def gradient_vjp(
    f: Any, args: Sequence[Any], kwargs: dict[str, Any], wrt: Any, api: Any
) -> tuple[Any, Callable[..., tuple[Any, ...]]] | None:
    """``vjp(grad(g), ...)`` where an argument is an object seen as the structure of
    its attributes (``grad(model.loss)`` passes ``model`` so), a function the code is
    specialized on (``apply(np.tanh, x)``), or where ``wrt`` names
    an attribute (``"self.W"``): reverse over reverse through the call flattened as
    ``grad`` flattens it. The pullback's seeds have the structure of ``grad(g)``'s result, the
    gradients that of the entries of ``wrt``. ``None`` when no argument is such a
    value and no entry names an attribute (the arrays' path); a structure (a list,
    tuple or dict) among the arguments is refused.

    >>> import numpy as np
    >>> from autodiff_tutor import api, grad
    >>> class Quadratic:
    ...     def __init__(self):
    ...         self.W = np.array([1.0, 2.0])
    ...     def loss(self, x):
    ...         return np.sum(self.W**2 * x)
    >>> q = Quadratic()
    >>> out, pullback = api.vjp(grad(q.loss, wrt="self.W"), np.ones(2), wrt="self.W")
    >>> pullback(np.array([1.0, 0.0]))[0].tolist()   # the Hessian w.r.t. W, times a vector
    [2.0, 0.0]
    """

    refuse_structured_vjp(f, args)
    compiled, of_wrt = f._gradient_of
    asked_wrt = api.float_params(compiled, args, kwargs) if wrt is None else wrt
    of, asked = entry_names(compiled, of_wrt), entry_names(compiled, asked_wrt)
    dotted = any("." in entry for entry in (*of, *asked))
    specialized = (  # the compiled code specializes on these: the call is flattened
        isinstance(a, ObjectView) or is_static(a) or holds_user_object(a)
        for a in (*args, *kwargs.values())
    )
    varargs = varargs_name(compiled.signature) is not None  # flattened per count of *args
    if not (dotted or varargs or any(specialized)):
        return None
    every = of + [entry for entry in asked if entry not in of]
    flat = flatten_call(compiled, every, list(args), kwargs)
    if flat is None:
        return None
    # each entry's structure, with the position of each leaf among flat.wrt
    positions = flat.rebuild(tuple(range(len(flat.wrt))))
    wanted = [
        flat.wrt[i]
        for entry in asked
        for i in flatten(positions[every.index(entry)])[0]
        if i is not None
    ]
    gradient = api.grad(flat.function, list(flat.wrt))
    flat_out, flat_pullback = api.vjp(gradient, *flat.args, wrt=wanted)
    single = isinstance(of_wrt, (int, str))
    by_entry = flat.rebuild(flat_out)
    out = tuple(by_entry[every.index(entry)] for entry in of)

    def pullback(*seeds: Any) -> tuple[Any, ...]:
        if len(seeds) != len(of):
            raise located(
                ArgumentError,
                f"the gradient of {compiled.name} has {len(of)} output(s); pullback needs "
                f"one seed each, got {len(seeds)}",
            )
        flat_seeds: list[Any] = [None] * len(flat.wrt)
        for entry, seed in zip(of, seeds, strict=False):
            places = flatten(positions[every.index(entry)])[0]
            given = flatten(seed)[0] if seed is not None else [None] * len(places)
            for place, leaf in zip(places, given, strict=False):
                if place is not None:
                    flat_seeds[place] = leaf
        found = dict(zip(wanted, flat_pullback(*flat_seeds), strict=True))
        full = tuple(found.get(name) for name in flat.wrt)
        rebuilt = flat.rebuild(full)
        return tuple(rebuilt[every.index(entry)] for entry in asked)

    return (out[0] if single else out), pullback


def check_list_seed(
    seed: Any, out: list[Any], where: str, check: Callable[[Any, Any], Any]
) -> list[Any]:
    """The seed of an output that is a list: a list or tuple of the same length,
    each element checked against the output's element by ``check`` (nested lists
    likewise); ``None`` sends no gradient through any element (a zero seed each, as
    PyTorch's backward takes ``None``), as for the cache of ``(out, cache)``.

    >>> import numpy as np
    >>> check_list_seed([1.0, 2.0], [np.ones(()), np.ones(())], "the seed", lambda s, o: s)
    [1.0, 2.0]
    >>> check_list_seed(None, [np.ones(()), [np.ones(())]], "the seed", lambda s, o: s)
    [None, [None]]
    >>> check_list_seed(np.ones(2), [np.ones(2)], "the seed", lambda s, o: s)
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.ArgumentError: the seed is an array, but that output is a list ...
    """

    if seed is None:
        seed = [None] * len(out)
    if not isinstance(seed, (list, tuple)) or isinstance(seed, ObjectView):
        kind = "an array" if hasattr(seed, "shape") else f"a {type(seed).__name__}"
        raise located(
            ArgumentError,
            f"{where} is {kind}, but that output is a list of {len(out)} arrays",
            hint="give a list with one seed per element, each shaped like that element",
        )
    if len(seed) != len(out):
        raise located(
            ArgumentError,
            f"{where} has {len(seed)} elements, but that output is a list of {len(out)}",
            hint="give one seed per element of the list",
        )
    checked = []
    for i, (s, o) in enumerate(zip(seed, out, strict=True)):
        if isinstance(o, list):
            checked.append(check_list_seed(s, o, f"{where}, element {i},", check))
        else:
            checked.append(check(s, o))
    return checked


def leaves_of(value: Any) -> list[Any]:
    """The arrays of a value that may be a list (for checks on every element).

    >>> leaves_of([1.0, [2.0, 3.0]])
    [1.0, 2.0, 3.0]
    """
    return flatten(value)[0] if isinstance(value, list) else [value]


def values_by_key(keys: tuple[str, ...], seed: Any, where: str) -> Any:
    """The seed of a function returning a dict, as the list of its values in the
    order of ``keys`` (how the compiled function returns them). A seed that is not a
    dict is passed on as it is, for the list checks to judge.

    >>> values_by_key(("y", "loss"), {"loss": 1.0, "y": 2.0}, "the seed")
    [2.0, 1.0]
    """

    if not isinstance(seed, dict):
        return seed
    if set(seed) != set(keys):
        raise located(
            ArgumentError,
            f"{where} has the keys {sorted(seed)}, but the function returns the keys "
            f"{sorted(keys)}",
            hint="give a dict with one seed per returned key, shaped like its value",
        )
    return [seed[k] for k in keys]


def by_key(
    keys: tuple[str, ...] | None, out: Any, pullback: Callable[..., Any], name: str
) -> tuple[Any, Callable[..., Any]]:
    """``(out, pullback)`` of a function returning a dict (compiled as the list of its
    values, ``keys`` in order): the dict, and a pullback taking a dict seed. As given
    when ``keys`` is ``None``.

    >>> out, pullback = by_key(("a", "b"), [1.0, 2.0], lambda seed: seed, "f")
    >>> out, pullback({"b": 20.0, "a": 10.0})
    ({'a': 1.0, 'b': 2.0}, [10.0, 20.0])
    """
    if keys is None:
        return out, pullback

    def keyed_pullback(*seeds: Any) -> Any:
        if len(seeds) == 1:
            seeds = (values_by_key(keys, seeds[0], f"the seed of {name}"),)
        return pullback(*seeds)

    return dict(zip(keys, out, strict=True)), keyed_pullback


def refuse_structured_output(f: Any, out: list[Any]) -> None:
    """``grad`` of a function returning a list, or a dict (compiled as the list of
    its values): a located error naming what it returns.

    >>> from autodiff_tutor import differentiable
    >>> def f(a):
    ...     return {"u": a, "v": 2 * a}
    >>> refuse_structured_output(differentiable(f), [1.0, 2.0])
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.NonScalarOutputError: f returns a dict with the keys ['u', 'v']; ...
    """

    keys = f.front_end().program.output_keys
    what = f"a dict with the keys {list(keys)}" if keys else f"a list of {len(out)} values"
    raise located(
        NonScalarOutputError,
        f"{f.name} returns {what}; grad needs a single scalar output",
        hint="return the loss alone, or use vjp(f, *args) and give one seed of the same structure",
    )
