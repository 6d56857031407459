"""Calls with structured arguments: a function whose parameters are lists, tuples or
dicts of arrays is compiled once per structure as a function of one parameter per
leaf (:func:`flatten_call`), and gradients come back in the argument's structure.
The structures themselves are in :mod:`autodiff_tutor.pytree`.

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> def f(p):
...     return np.sum(p["w"] * p["b"])
>>> p = {"w": np.ones(2), "b": np.arange(2.0)}
>>> flat = flatten_call(differentiable(f), ["p"], [p], {})
>>> flat.wrt
('p_w', 'p_b')
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from autodiff_tutor.api_checks import bind_arguments, located, wrt_entries
from autodiff_tutor.compiler.front.desugar.attributes import MUTATING
from autodiff_tutor.compiler.front.desugar.callees import assigned_names
from autodiff_tutor.compiler.front.source import ParsedFunction, parse_function
from autodiff_tutor.errors import ArgumentError, AutodiffError, NonDifferentiableInputError
from autodiff_tutor.pytree import (
    ObjectView,
    Treedef,
    entry_keys,
    flatten,
    flatten_count,
    holds_user_object,
    is_static,
    is_structure,
    unflatten,
)
from autodiff_tutor.runtime.backend import is_float_value
from autodiff_tutor.syntax import copy_tree


@dataclasses.dataclass
class StructuredFunction(ParsedFunction):
    """A parsed function whose structured parameters are given as leaves."""

    structures: dict[str, ast.expr] = dataclasses.field(default_factory=dict)
    #: int arguments the function was specialized on (they index a structure or bound
    #: a range over one: ``range(n_layers)``); their values are in the cache key
    statics: dict[str, int] = dataclasses.field(default_factory=dict)


def leaf_names(name: str, tree: Treedef, taken: set[str], statics: bool = False) -> list[str]:
    """One parameter name per leaf: ``params_0_1``, ``p_W`` (``statics``: one name per
    static part instead, ``self_act``).

    >>> leaf_names("p", flatten({"W": 1, "b": [2, 3]})[1], set())
    ['p_W', 'p_b_0', 'p_b_1']
    """
    names: list[str] = []

    def walk(node: Treedef, path: str) -> None:
        if node[0] in ("leaf", "static"):
            if (node[0] == "static") != statics:
                return
            candidate, n = path, 2
            while candidate in taken:
                candidate, n = f"{path}_{n}", n + 1
            taken.add(candidate)
            names.append(candidate)
            return
        keys = entry_keys(node)
        for i, (key, child) in enumerate(zip(keys, node[2], strict=True)):
            part = str(key) if str(key).isidentifier() else str(i)
            walk(child, f"{path}_{part}")

    walk(tree, name)
    return names


def static_values(tree: Treedef) -> list[Any]:
    """The static parts of ``tree`` (functions, callable objects), in order.

    >>> import numpy as np
    >>> static_values(flatten({"W": 1.0, "act": np.tanh}, statics=True)[1])
    [<ufunc 'tanh'>]
    """
    if tree[0] == "static":
        return [tree[1]]
    if tree[0] == "leaf":
        return []
    return [value for child in tree[2] for value in static_values(child)]


def literal(tree: Treedef, names: Sequence[str], statics: Sequence[str] = ()) -> ast.expr:
    """The structure as a Python literal of the leaf names (and of the names bound to
    its static parts); an object's dict display knows its class (``cls``)."""
    items, static_items = iter(names), iter(statics)

    def build(node: Treedef) -> ast.expr:
        if node[0] == "leaf":
            return ast.Name(next(items), ast.Load())
        if node[0] == "static":
            return ast.Name(next(static_items), ast.Load())
        children = [build(child) for child in node[2]]
        if node[0] in ("dict", "object"):
            entries = ast.Dict([ast.Constant(k) for k in node[1]], children)
            entries.is_object = node[0] == "object"  # self.W reads entries["W"]
            entries.cls = node[3] if node[0] == "object" else None  # self.f(): its method
            return entries
        return (ast.List if node[0] == "list" else ast.Tuple)(children, ast.Load())

    return build(tree)


def specialization_key(tree: Treedef) -> Any:
    """What a compilation for ``tree`` depends on: its shape, its objects' classes and
    its static parts, those two by identity (a class redefined under the same name, or
    another function passed, gets its own compilation).

    >>> import numpy as np
    >>> key = specialization_key(flatten([np.tanh], statics=True)[1])
    >>> key == specialization_key(flatten([np.tanh], statics=True)[1])
    True
    >>> key == specialization_key(flatten([np.sin], statics=True)[1])
    False
    """
    if tree[0] == "leaf":
        return "leaf"
    if tree[0] == "static":  # a string read as a key: by its value
        return ("static", tree[1] if type(tree[1]) is str else id(tree[1]))
    children = tuple(specialization_key(child) for child in tree[2])
    if tree[0] == "object":
        return ("object", tree[1], children, id(tree[3]))
    return (tree[0], repr(tree[1]), children)


@dataclasses.dataclass
class Flattened:
    """A call with its structured arguments flattened, and how to rebuild gradients."""

    function: Any  # a Differentiable of the flattened parameters
    wrt: tuple[str, ...]
    args: list[Any]
    rebuild: Callable[[tuple[Any, ...]], Any]


def flatten_call(compiled: Any, wrt: Any, args: Sequence[Any], kwargs: dict) -> Flattened | None:
    """``None`` when no argument in ``wrt`` is a structure (nor an object seen through
    :class:`ObjectView`); else the flattened call. ``wrt`` may name an attribute of an
    object parameter: ``"self.W"``."""

    entries = wrt_entries(wrt)
    picks: dict[str, set[str]] = {}
    if entries is not None:
        plain = []
        for entry in entries:
            if isinstance(entry, str) and "." in entry:
                param, attribute = entry.split(".", 1)
                picks.setdefault(param, set()).add(attribute)
                entry = param
            if entry not in plain:
                plain.append(entry)
        names = compiled.wrt_names(plain)
    else:
        names = compiled.wrt_names(None)
    values = bind_arguments(compiled, args, kwargs)
    varargs = varargs_name(compiled.signature)  # *args: a tuple as long as the call gives
    passed_whole = set(compiled.__dict__.get("holders", {}).values())  # self_object
    structured = {
        p: flatten(v, statics=True)
        for p, v in zip(compiled.params, values, strict=True)
        if p not in passed_whole
        and (
            (p in names and is_structure(v))
            or isinstance(v, ObjectView)
            or is_static(v)
            or holds_user_object(v)  # net.feedforward(x): its class and attributes known
            or p == varargs
        )
    }
    structured.update(  # activation="swish" read as a key: the function is made for it
        {p: ([], ("static", v)) for p, v in string_keys(compiled, values).items() if p not in names}
    )
    if not structured:
        return None
    statics = {
        p: v
        for p, v in zip(compiled.params, values, strict=True)
        if type(v) is int and p not in names and p in _index_parameters(compiled)
    }
    trees_key = tuple((p, specialization_key(t)) for p, (_, t) in structured.items())
    key = (names, trees_key, tuple(statics.items()))
    cache = compiled.__dict__.setdefault("_structured", {})
    # (an entry holds its trees' classes and static parts: their ids in key stay theirs)
    if key not in cache:
        trees = {p: t for p, (_, t) in structured.items()}
        cache[key] = _specialize(compiled, trees, statics)
    flat, leaves_of = cache[key]
    flat_args: list[Any] = []
    flat_wrt: list[str] = []
    groups: list[tuple[str, list[int] | None]] = []
    for param, value in zip(compiled.params, values, strict=True):
        if param in structured:
            leaves, tree = structured[param]
            tops = _top_keys(tree)
            floats = []
            for leaf_name, leaf, top in zip(leaves_of[param], leaves, tops, strict=True):
                flat_args.append(leaf)
                wanted = param in names and (param not in picks or top in picks[param])
                if wanted and is_float_value(leaf):
                    floats.append(len(flat_wrt))
                    flat_wrt.append(leaf_name)
                else:
                    floats.append(None)
            groups.append((param, floats))
            if param in flat.__dict__.get("holders", {}):  # its attributes are written
                flat_args.append(value.obj)
        else:
            flat_args.append(value)
            if param in names:
                groups.append((param, [len(flat_wrt)]))
                flat_wrt.append(param)
    for param, attributes in picks.items():
        missing = attributes - set(structured.get(param, (None, ("", ())))[1][1])
        if missing:
            raise TypeError(f"{param!r} has no attribute {sorted(missing)[0]!r} to differentiate")
    if not flat_wrt:
        _refuse_no_float(compiled.name, names)

    def rebuild(gradients: tuple[Any, ...]) -> Any:
        by_name = {}
        for param, positions in groups:
            picked = [gradients[i] if i is not None else None for i in positions]
            by_name[param] = (
                unflatten(structured[param][1], picked, statics=False)
                if param in structured
                else picked[0]
            )
        ordered = []
        for entry in entries if entries is not None else names:
            if isinstance(entry, int):
                entry = compiled.params[entry]
            param, _, attribute = entry.partition(".")
            ordered.append(by_name[param][attribute] if attribute else by_name[param])
        single = isinstance(wrt, (int, str)) or (wrt is None and len(ordered) == 1)
        return ordered[0] if single else tuple(ordered)

    return Flattened(flat, tuple(flat_wrt), flat_args, rebuild)


def varargs_name(signature: inspect.Signature) -> str | None:
    """The name of the ``*args`` parameter, if there is one.

    >>> varargs_name(inspect.signature(lambda self, x, *args: x))
    'args'
    """
    for name, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return name
    return None


def _refuse_no_float(function: str, names: Sequence[str]) -> None:
    """Structures asked for in ``wrt`` that hold no floating-point array."""

    raise located(
        NonDifferentiableInputError,
        f"cannot differentiate {function} with respect to {', '.join(map(repr, names))}: "
        "there is no floating-point array in it, and only those have gradients",
        hint="pass float arrays (np.asarray(v, dtype=float)), or leave it out of wrt",
    )


def _top_keys(tree: Treedef) -> list[Any]:
    """For each leaf, the key of the top-level entry it belongs to."""
    if tree[0] == "static":
        return []
    if tree[0] == "leaf":
        return [None]
    keys = entry_keys(tree)
    return [key for key, child in zip(keys, tree[2], strict=True) for _ in flatten_count(child)]


def string_keys(compiled: Any, values: Sequence[Any]) -> dict[str, str]:
    """The parameters given a string that the function reads as a key or an index
    (``ACTIVATIONS[activation]``): specialized on, by value, like a function passed."""
    if not reads_keys(compiled):
        return {}
    keys = _index_parameters(compiled)
    return {
        p: v for p, v in zip(compiled.params, values, strict=False) if type(v) is str and p in keys
    }


def reads_keys(compiled: Any) -> bool:
    """Whether a parameter of ``compiled`` is read in an index and never assigned (see
    :func:`_index_parameters`; ``False`` where its source cannot be read)."""

    try:
        return bool(_index_parameters(compiled))
    except (AutodiffError, OSError, TypeError):
        return False


def _index_parameters(compiled: Any) -> frozenset[str]:
    """The parameters that may hold an int the specialization resolves: read in an
    index or in a ``range(...)``, never assigned (``range(n_layers)``, ``params[k]``)."""
    found = compiled.__dict__.get("_index_parameters")
    if found is None:
        tree = parse_function(compiled.fn).tree
        places = [n.slice for n in ast.walk(tree) if isinstance(n, ast.Subscript)]
        places += [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "range"
        ]
        read = {n.id for p in places for n in ast.walk(p) if isinstance(n, ast.Name)}
        stored = assigned_names(ast.Module(tree.body, []))
        found = frozenset(read & set(compiled.params) - stored)
        compiled.__dict__["_index_parameters"] = found
    return found


def _specialize(
    compiled: Any, trees: dict[str, Treedef], statics: dict[str, int]
) -> tuple[Any, dict[str, list[str]]]:
    """A Differentiable of ``compiled``'s function with structured parameters as leaves."""

    parsed = parse_function(compiled.fn)
    tree = copy_tree(parsed.tree)
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    taken |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    taken |= set(parsed.namespace())  # a static part's name hides none of the function's
    leaves_of: dict[str, list[str]] = {}
    structures: dict[str, ast.expr] = {}
    values: dict[str, Any] = {}  # the static parts, by the names the code reads them by
    arguments: list[ast.arg] = []
    holders: dict[str, str] = {}  # an object parameter -> the parameter passing it whole
    given = tree.args  # in the order of the parameters (compiled.params)
    vararg = [given.vararg] if given.vararg is not None else []
    for argument in [*given.posonlyargs, *given.args, *vararg, *given.kwonlyargs]:
        name, structure = argument.arg, trees.get(argument.arg)
        if structure is not None and structure[0] == "static":  # a function passed
            leaves_of[name] = []
            values[name] = structure[1]  # read as a name the function sees, as a global
        elif structure is not None:
            names = leaf_names(name, structure, taken)
            static_names = leaf_names(name, structure, taken, statics=True)
            values.update(zip(static_names, static_values(structure), strict=True))
            leaves_of[name] = names
            structures[name] = literal(structure, names, static_names)
            arguments += [ast.copy_location(ast.arg(n), argument) for n in names]
            if structure[0] == "object" and name in written_objects(tree):
                holder = leaf_names(f"{name}_object", ("leaf",), taken)[0]
                structures[name].holder = holder  # self.calls += 1 writes into it
                holders[name] = holder
                arguments.append(ast.copy_location(ast.arg(holder), argument))
        else:
            arguments.append(argument)
    # every value is given, by position, in that order (*args as its items)
    tree.args = ast.arguments(
        posonlyargs=[],
        args=arguments,
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=given.kwarg,
        defaults=[],
    )
    flat_parsed = StructuredFunction(
        **{f.name: getattr(parsed, f.name) for f in dataclasses.fields(ParsedFunction)},
        structures=structures,
        statics=statics,
    )
    flat_parsed.tree = tree
    flat_parsed.values = {**parsed.values, **values}
    flat = type(compiled)(compiled.fn)  # a Differentiable, as compiled is
    flat.params = [a.arg for a in arguments]
    flat.signature = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in flat.params]
    )
    flat.parsed = flat_parsed  # compiled, checked and guarded as any function
    flat.holders = holders
    return flat, leaves_of


def written_objects(tree: ast.FunctionDef) -> set[str]:
    """The parameters whose attributes the function writes (``self.nfev += 1``,
    ``self.history.append(v)``): the object itself is passed too, so that the compiled
    forward makes the write, as Python does (see :mod:`.front.desugar.attributes`).

    >>> tree = ast.parse("def fun(self, x):\\n    self.nfev += 1\\n    return x").body[0]
    >>> written_objects(tree)
    {'self'}
    """

    written = set()
    for node in ast.walk(tree):
        target = node
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATING
        ):
            target = node.func.value  # self.history.append(v)
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and (isinstance(target.ctx, ast.Store) or target is not node)
        ):
            written.add(target.value.id)
    return written


def structured_jvp(
    f: Any,
    args: Sequence[Any],
    tangents: Sequence[Any],
    api: Any,
    keywords: dict[str, Any] | None = None,
) -> tuple | None:
    """``jvp(f, args, tangents)`` (``keywords``: passed too, held fixed) where an
    argument is a structure (its tangent has the same structure; ``None`` leaves for
    integer arrays), also for ``f = grad(g)``: the call is flattened into one array
    per leaf, and a gradient and its tangent come back in the argument's structure.
    ``None`` when no argument is a structure. ``api`` gives ``differentiable``,
    ``grad`` and ``jvp`` (the API passes itself).

    >>> import numpy as np
    >>> from autodiff_tutor import api, grad
    >>> def loss(p):
    ...     return np.sum(p["w"] ** 3)
    >>> p = {"w": np.array([1.0, 2.0])}
    >>> structured_jvp(grad(loss), [p], [{"w": np.array([1.0, 0.0])}], api)[1]
    {'w': array([6., 0.])}
    """

    pairs = list(zip(args, tangents, strict=False))
    gradient_of = getattr(f, "_gradient_of", None)
    compiled = gradient_of[0] if gradient_of is not None else api.differentiable(f)
    varargs = varargs_name(compiled.signature)
    if (
        not any(
            is_structure(a) or isinstance(a, ObjectView) or is_static(a) or holds_user_object(a)
            for a in args
        )
        and varargs is None
    ) or any(is_structure(a) and t is not None and not is_structure(t) for a, t in pairs):
        return None  # an array tangent for a structure: taken as one stacked array
    values = bind_arguments(compiled, args, keywords or {})
    given = list(tangents)
    if varargs is not None:  # the tangents of the extra arguments, as *args is: a tuple
        at = compiled.params.index(varargs)
        extra = tuple(given[at:])
        given = given[:at] + [extra if any(t is not None for t in extra) else None]
    given += [None] * (len(values) - len(given))
    varying = [p for p, t in zip(compiled.params, given, strict=True) if t is not None]
    of = entry_names(compiled, gradient_of[1]) if gradient_of is not None else []
    every = varying + [p for p in of if p not in varying]
    flat = flatten_call(compiled, every, list(args), keywords or {})
    if flat is None:
        return None
    flat_tangents = []
    for param, value, tangent in zip(compiled.params, values, given, strict=True):
        if (
            isinstance(value, ObjectView)
            or is_static(value)
            or holds_user_object(value)
            or (param in every and is_structure(value))
            or param == varargs
        ):
            leaves = flatten(value, statics=True)[0]
            dots = flatten(tangent)[0] if tangent is not None else [None] * len(leaves)
            if len(dots) != len(leaves):
                raise located(
                    ArgumentError,
                    f"the tangent of {param!r} has {len(dots)} arrays, {param!r} has {len(leaves)}",
                    hint=f"give the tangent of {param!r} the same structure as {param!r}",
                )
            pairs = zip(leaves, dots, strict=True)
            flat_tangents += [d if is_float_value(v) else None for v, d in pairs]
            if param in flat.function.__dict__.get("holders", {}):
                flat_tangents.append(None)  # the object itself, whose attributes it writes
        else:
            flat_tangents.append(tangent)
    if gradient_of is None:
        return api.jvp(flat.function, flat.args, flat_tangents)
    gradient = api.grad(flat.function, list(flat.wrt))
    gradients, gradient_dots = api.jvp(gradient, flat.args, flat_tangents)
    pick = [every.index(p) for p in of]
    by_entry = flat.rebuild(gradients), flat.rebuild(gradient_dots)
    chosen = [tuple(entries[i] for i in pick) for entries in by_entry]
    if isinstance(gradient_of[1], (int, str)):
        return chosen[0][0], chosen[1][0]
    return chosen[0], chosen[1]


def entry_names(compiled: Any, wrt: Any) -> list[str]:
    """The entries of ``wrt`` by name, an attribute as it is written (``"self.W"``).

    >>> from autodiff_tutor import differentiable
    >>> entry_names(differentiable(lambda self, x: x), [1, "self.W"])
    ['x', 'self.W']
    """

    entries = wrt_entries(wrt)
    if entries is None:
        return list(compiled.wrt_names(None))
    return [compiled.params[e] if isinstance(e, int) else e for e in entries]


def refuse_structured_vjp(f: Any, args: Sequence[Any]) -> None:
    """``vjp(grad(g), ...)`` with a structure among the arguments: refused at the call
    (``jvp(grad(g), ...)`` takes structures).

    >>> import numpy as np
    >>> from autodiff_tutor import grad
    >>> refuse_structured_vjp(grad(lambda p: p), [{"w": np.ones(2)}])
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.NonDifferentiableInputError: vjp of a gradient takes arrays, ...
    """

    if getattr(f, "_gradient_of", None) is not None and any(is_structure(a) for a in args):
        raise located(
            NonDifferentiableInputError,
            "vjp of a gradient takes arrays, and an argument here is a structure (a list, "
            "tuple or dict of arrays)",
            hint="use jvp(grad(f), args, tangents) for a Hessian-vector product (it takes "
            "structures; the Hessian is symmetric), or pass the arrays as separate arguments",
        )


def refuse_structure(function: str, name: str, value: Any) -> None:
    """Where structures are not flattened (jvp with an array as a structure's
    tangent, vjp of a gradient), say so.

    >>> import numpy as np
    >>> refuse_structure("f", "params", {"W": np.ones(2)})
    Traceback (most recent call last):
    ...
    autodiff_tutor.errors.NonDifferentiableInputError: cannot differentiate f ...
    """

    if isinstance(value, dict) or (is_structure(value) and _ragged(value)):
        raise located(
            NonDifferentiableInputError,
            f"cannot differentiate {function} with respect to {name!r} here: it is a "
            "structure (a list, tuple or dict of arrays); grad, value_and_grad and vjp "
            "take structures, jvp takes them with a tangent of the same structure, and "
            "vjp of a gradient takes arrays",
            hint=f"give the tangent of {name!r} the structure of {name!r}, or pass its "
            "arrays as separate arguments",
        )


def _ragged(value: Any) -> bool:
    """Whether a list of arrays cannot be stacked into one array (np.asarray fails)."""
    import numpy as np

    try:
        return np.asarray(value).dtype == object
    except ValueError:
        return True
