"""The front doors that take derivatives: ``grad``, ``value_and_grad``, ``vjp``,
``jvp``, and the second derivatives ``hvp`` and ``hessian``, each on the path
:mod:`autodiff_tutor.api` describes (later calls of ``value_and_grad`` run the pair
cached for their arguments' shapes: :func:`~autodiff_tutor.api.compiled.cached_call`).

``hvp`` and ``hessian`` are forward over reverse: the compiler writes the gradient of
``f`` as a plain function (``f_grad``), then differentiates that function again in
forward mode (``f_grad_jvp``). A Hessian-vector product costs about as much as a few
gradients; the Hessian is one product per entry of the input (fine for the small
inputs of a lesson, Newton's method on a few parameters).

``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``hvp`` and ``hessian`` called inside
differentiated code where they are made (``hvp(f)(x, v)``, ``hessian(f)(x)``)
stand for generated functions: the compiler's front end rewrites such a call into a
call of one (:mod:`.compiler.front.desugar.derivative_calls`), and
:class:`DerivativeMaker`, registered with the front end when the package is imported
(the front doors live above the compiler), tells the front doors apart and makes
those functions.

>>> import numpy as np
>>> @differentiable
... def rosenbrock(x):
...     return 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
>>> value, gradient = value_and_grad(rosenbrock)(np.array([-1.0, 2.0]))
>>> float(value), gradient.tolist()
(104.0, [396.0, 200.0])
>>> def f(x):
...     return np.sum(x ** 3)
>>> hessian(f)(np.array([1.0, 2.0])).tolist()
[[6.0, 0.0], [0.0, 12.0]]
>>> step = lambda x: np.sum(x - grad(f)(x) / 6.0)  # grad inside: x - x**2 / 2
>>> grad(step)(np.array([1.0, 2.0])).tolist()
[0.0, -1.0]
>>> class Model:
...     def __init__(self):
...         self.W = np.eye(2)
...     def loss(self, X):
...         return np.sum((X @ self.W) ** 2)
>>> grad(Model().loss, wrt="self.W")(np.ones((1, 2))).tolist()
[[2.0, 2.0], [2.0, 2.0]]
>>> def layer(p, x):
...     return np.tanh(x @ p["W"] + p["b"])
>>> p = {"W": np.eye(2), "b": np.zeros(2)}
>>> out, pullback = vjp(layer, p, np.zeros((1, 2)), wrt="p")
>>> pullback(np.ones((1, 2)))[0]["b"].tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autodiff_tutor.api.arguments import (
    bind_arguments,
    by_key,
    by_position,
    check_seed,
    check_seed_count,
    check_wrt,
    checked_input,
    checked_values,
    entry_names,
    flatten_call,
    float_params,
    gives_one,
    leaves_of,
    located,
    needs_flattening,
    numeric_array,
    one_or_all,
    owned,
    reads_keys,
    refuse_structured_vjp,
    runs_now,
    runs_the_same,
    shaped_like,
    specialized_on,
    static_defaults,
    unwrap,
    unwrap_call,
    varargs_name,
    wrt_entries,
)
from autodiff_tutor.api.compiled import (
    BoundDifferentiable,
    Differentiable,
    Wrt,
    cached_call,
    differentiable,
    run_pair,
)
from autodiff_tutor.compiler.failures import run_located
from autodiff_tutor.compiler.front.desugar.derivative_calls import (
    Made,
    Request,
    register_derivative_maker,
)
from autodiff_tutor.compiler.pipeline import Derivative, compile_gradient_function
from autodiff_tutor.errors import (
    ArgumentError,
    AutodiffError,
    NoDerivativeRuleError,
    UnsupportedSyntaxError,
    front_door,
)
from autodiff_tutor.pickling import MadeFunction
from autodiff_tutor.pytree import flatten, is_structure
from autodiff_tutor.runtime.backend import (
    COMPLEX_HINT,
    array_module,
    dtype_kind,
    is_float_value,
    shape_of,
)
from autodiff_tutor.runtime.stack import replayable

__all__ = ["grad", "hessian", "hvp", "jvp", "value_and_grad", "vjp"]


@front_door
def value_and_grad(
    f: Callable[..., Any], wrt: Wrt = 0, backend: str | None = None
) -> Callable[..., tuple[Any, Any]]:
    """A function returning ``(f(*args), gradient)`` of a scalar-valued ``f``.

    ``wrt`` picks the inputs by position or name; one gives one gradient, a list
    gives a tuple. ``backend="numba"`` runs it as fused loops from the second call
    (:mod:`.compiler.fused`; the extra ``autodiff_tutor[fused]``).

    >>> import numpy as np
    >>> def f(x, y):
    ...     return np.sum(x * y)
    >>> value, (dx, dy) = value_and_grad(f, wrt=["x", "y"])(np.ones(2), np.arange(2.0))
    >>> dx.tolist(), dy.tolist()
    ([0.0, 1.0], [1.0, 1.0])
    """
    if backend is not None:
        f = differentiable(f, backend=backend)
    unwrapped = unwrap(f, wrt)
    if unwrapped is not None:  # a bound method, a callable object, a functools.partial
        return MadeFunction(_following(f, wrt, unwrapped), value_and_grad, (f, wrt))
    compiled = differentiable(f)
    check_wrt(wrt)
    by_attribute = any(isinstance(e, str) and "." in e for e in wrt_entries(wrt) or ())
    checked: list[Derivative] = []  # the derivative, once a call went through the checks
    varargs = varargs_name(compiled.signature) is not None  # compiled per count of *args
    positional = by_position(compiled.signature)  # else each call binds its arguments
    one = isinstance(wrt, (int, str))  # one gradient, not a tuple (one_or_all, decided once)
    # per function flattened for the arguments' structures (an object's attributes, a
    # dict of arrays): its value_and_grad, kept so that its calls reach the cached pair
    flattened: dict[tuple[Any, tuple[str, ...]], Callable[..., Any]] = {}

    def value_and_gradient(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        # free unless the generated code raises: then located at the user's code
        return run_located(checked_call, args, kwargs)

    def checked_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
        if (checked or flattened) and not compiled.current():
            checked.clear()  # a name it reads was rebound: compiled again below
            flattened.clear()
        if checked and not kwargs and positional:  # the pair cached for these shapes
            result = cached_call(compiled, checked[0], args)
            if result is not None:
                return result[0], result[1][0] if one else one_or_all(result[1], wrt)
        keyed = reads_keys(compiled)  # ACTIVATIONS[activation], activation a string
        statics = static_defaults(compiled.signature)  # def h(x, act=np.tanh)
        if by_attribute or varargs or keyed or statics or _has_containers(args, kwargs):
            flat = flatten_call(compiled, wrt, args, kwargs)  # None: no structure in wrt
            if flat is not None:  # gradients in the structures of their arguments
                key = (flat.function, tuple(flat.wrt))
                if key not in flattened:
                    flattened[key] = value_and_grad(flat.function, list(flat.wrt))
                out, gradients = flattened[key](*flat.args)
                return out, flat.rebuild(gradients)
        try:
            derivative = compiled.derivative(wrt)
        except AutodiffError:  # an input that has no gradient is the first thing to say
            positions = [compiled.params.index(n) for n in compiled.wrt_names(wrt)]
            checked_values(compiled, positions, args, kwargs)
            raise
        values = checked_values(compiled, derivative.wrt_positions, args, kwargs)
        out, gradients = run_pair(compiled, derivative, values)
        if not by_attribute and not checked:
            checked.append(derivative)  # later calls run the pair cached for their shapes
        return out, one_or_all(gradients, wrt)

    value_and_gradient.__name__ = f"value_and_grad_{compiled.name}"
    return MadeFunction(value_and_gradient, value_and_grad, (f, wrt))  # pickles as this call


def _following(f: Any, wrt: Wrt, unwrapped: Any) -> Callable[..., tuple[Any, Any]]:
    """``value_and_grad`` of a bound method, callable object or partial ``f`` (seen as
    ``unwrapped``): that of what a call of ``f`` runs now, unwrapped again where that
    changed (``Objective.__call__`` replaced on the class, a partial's ``keywords``
    changed in place), as Python looks them up at each call."""
    made = [runs_now(f), unwrapped.value_and_grad(value_and_grad)]

    def value_and_gradient(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        runs = runs_now(f)
        if not runs_the_same(made[0], runs):
            made[:] = [runs, unwrap(f, wrt).value_and_grad(value_and_grad)]
        return made[1](*args, **kwargs)

    value_and_gradient.__name__ = made[1].__name__
    return value_and_gradient


def _takes_varargs(f: Any) -> bool:
    """Whether ``f`` is a def with ``*args`` (flattened per count of extra arguments;
    bound methods and partials are unwrapped before, others refused), or the gradient
    of one (``grad(f)``, differentiated again per count as well)."""
    gradient_of = getattr(f, "_gradient_of", None)
    if gradient_of is not None:
        return varargs_name(gradient_of[0].signature) is not None
    return inspect.isfunction(f) and varargs_name(inspect.signature(f)) is not None


def _static_defaults(f: Any) -> bool:
    """Whether a def (or the def ``grad`` made ``f`` of) has a default the compiled
    code is specialized on (see :func:`static_defaults`)."""
    gradient_of = getattr(f, "_gradient_of", None)
    if gradient_of is not None:
        return static_defaults(gradient_of[0].signature)
    return inspect.isfunction(f) and static_defaults(inspect.signature(f))


def _has_containers(args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    """Whether an argument is flattened (see :func:`needs_flattening`)."""
    return any(needs_flattening(v) for v in (*args, *kwargs.values()))


@front_door
def grad(f: Callable[..., Any], wrt: Wrt = 0, backend: str | None = None) -> Callable[..., Any]:
    """A function returning the gradient of a scalar-valued ``f`` w.r.t. ``wrt``.

    ``f`` is a def, a lambda, a bound method, a callable object or a partial; a
    ``*args`` parameter is compiled for the number of extra arguments each call gives.
    ``backend="numba"``: as :func:`value_and_grad`.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(np.tanh(x))
    >>> grad(f)(np.zeros(2)).tolist()
    [1.0, 1.0]
    >>> grad(lambda x, *args: np.sum(x * x) * len(args))(np.ones(2), 0.5, 0.5).tolist()
    [4.0, 4.0]
    """
    if backend is not None:
        f = differentiable(f, backend=backend)
    both = value_and_grad(f, wrt)

    def gradient(*args: Any, **kwargs: Any) -> Any:
        return both(*args, **kwargs)[1]

    unwrapped = unwrap(f, wrt)
    gradient.__name__ = f"grad_{differentiable(f).name if unwrapped is None else unwrapped.name}"
    made = MadeFunction(gradient, grad, (f, wrt))  # pickles as this call
    if unwrapped is None:
        made._gradient_of = (differentiable(f), wrt)  # so grad(grad(f)) can compile it
        return made
    made.__signature__ = inspect.signature(f)  # the parameters the call shows
    # so jvp, vjp and grad of it differentiate the def's gradient, the object passed
    # first (see arguments.unwrap)
    of = unwrapped.wrt[0] if unwrapped.single else unwrapped.wrt
    made.gradient_through = (f, grad(unwrapped.fn, of))
    return made


def pullback_of(f: Any, args: tuple[Any, ...], wrt: Wrt, kwargs: dict[str, Any]) -> Any:
    """The pullback of ``vjp(f, *args, wrt=wrt, **kwargs)``, made again (a pullback
    that was pickled).

    >>> import numpy as np
    >>> def f(x):
    ...     return 3 * x
    >>> pullback_of(f, (np.ones(2),), None, {})(np.array([1.0, 2.0]))[0].tolist()
    [3.0, 6.0]
    """
    return vjp(f, *args, wrt=wrt, **kwargs)[1]


@front_door
def vjp(
    f: Callable[..., Any], *args: Any, wrt: Wrt = None, **kwargs: Any
) -> tuple[Any, Callable[..., tuple[Any, ...]]]:
    """``(value, pullback)``: ``pullback(*seeds)`` gives one gradient per ``wrt`` input.

    ``wrt=None`` means every floating-point argument (the extra arguments of a
    ``*args`` parameter are held fixed unless ``wrt`` names it). Give one seed per
    output, shaped like that output. The pullback may be called many times (one row of
    a Jacobian each); an argument changed in place since ``vjp`` is refused (it would
    pull back at values the forward never saw). The pullback pickles as the call that
    made it: another process runs the forward again and pulls back the same numbers.

    >>> import numpy as np
    >>> def f(x):
    ...     return 2 * x
    >>> value, pullback = vjp(f, np.ones(3))
    >>> pullback(np.array([1.0, 2.0, 3.0]))[0].tolist()
    [2.0, 4.0, 6.0]
    """
    value, pullback = _vjp(f, *args, wrt=wrt, **kwargs)
    return value, MadeFunction(pullback, pullback_of, (f, args, wrt, kwargs))


def _vjp(f: Callable[..., Any], *args: Any, wrt: Wrt = None, **kwargs: Any) -> tuple[Any, Any]:
    """:func:`vjp`, its pullback not yet made to pickle."""
    unwrapped = unwrap_call(f, wrt, args, kwargs)
    if unwrapped is not None:  # a bound method, a callable object, a functools.partial
        return unwrapped.vjp(vjp, args, kwargs)
    if _has_containers(args, kwargs) or _takes_varargs(f) or _static_defaults(f):
        structured = structured_vjp(f, args, kwargs, wrt)  # lists, dicts of arrays
        if structured is not None:
            return structured
    compiled = differentiable(f)
    if wrt is None:
        wrt = float_params(compiled, args, kwargs)
    derivative, out, memory, values = run_located(compiled.forward_run, wrt, args, kwargs)
    outputs = out if derivative.returns_tuple else (out,)
    seen = _fingerprints(compiled.params, values)

    def pullback(*seeds: Any) -> tuple[Any, ...]:
        _check_unchanged(seen, compiled.name)
        check_seed_count(seeds, len(outputs), compiled.name)
        checked = [
            check_seed(compiled, i, s, o)
            for i, (s, o) in enumerate(zip(seeds, outputs, strict=True))
        ]
        given = [leaf for s in (*seeds, *checked) for leaf in leaves_of(s)]
        gradients = run_located(derivative.backward, *checked, replayable(memory))
        return owned(gradients, [*given, *values])

    return by_key(derivative.program.output_keys, out, pullback, compiled.name)


def _fingerprints(names: Sequence[str], values: Sequence[Any]) -> list[tuple[str, Any, int]]:
    """Each numpy array among ``values`` (the arguments vjp ran the forward on, which
    its memory may hold), its name and a checksum of its bytes."""
    return [
        (name, value, zlib.crc32(value.tobytes()))
        for name, value in zip(names, values, strict=False)
        if type(value) is np.ndarray
    ]


def _check_unchanged(seen: list[tuple[str, Any, int]], name: str) -> None:
    """Refuse a pullback whose forward's arguments were changed in place since (as
    PyTorch refuses a backward through a tensor modified in place): it would pull back
    at values the forward never saw."""
    for parameter, value, checksum in seen:
        if zlib.crc32(value.tobytes()) != checksum:
            raise located(
                ArgumentError,
                f"the array passed to {name} as {parameter!r} was changed in place after "
                "vjp returned this pullback, which would pull back at values the forward "
                "never saw",
                hint="call vjp again after the change, or change a copy (x = x * 10 "
                "rather than x *= 10)",
            )


def _refuse_complex_tangents(out: Any, out_dot: Any) -> None:
    """A complex tangent of a real output passed through complex values, which the
    rules (written for real numbers) do not differentiate: refused, never returned."""
    pairs = zip(out, out_dot, strict=False) if isinstance(out_dot, tuple) else [(out, out_dot)]
    for value, dot in pairs:
        if dtype_kind(dot) == "c" and dtype_kind(value) != "c":
            raise located(
                NoDerivativeRuleError,
                "the tangent of a real output passed through complex values: "
                "differentiating through complex numbers is not supported",
                hint=COMPLEX_HINT,
            )


@front_door
def jvp(f: Callable[..., Any], args: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``(f(*args), tangent of the output)``: forward mode along ``tangents``.

    Give one tangent per argument, ``None`` for arguments held fixed (integers,
    flags). The output tangent is the directional derivative ``J @ tangent``.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(x * x)
    >>> jvp(f, (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))
    (np.float64(5.0), np.float64(2.0))
    """
    return _jvp(f, args, tangents, {})


def _jvp(f: Callable[..., Any], args: Any, tangents: Any, keywords: dict[str, Any]) -> Any:
    """:func:`jvp`, with ``keywords`` passed to ``f`` and held fixed (a partial's stored
    keyword-only arguments)."""
    unwrapped = unwrap(f, None)
    if unwrapped is not None and isinstance(args, (list, tuple)):  # a bound method...
        return unwrapped.jvp(_jvp, args, tangents)
    if isinstance(args, (list, tuple)):  # lists, tuples, dicts of arrays: flattened
        structured = structured_jvp(f, args, tangents, keywords)  # (None where none is)
        if structured is not None:
            return structured
    compiled = differentiable(f)
    if not (isinstance(args, (list, tuple)) and isinstance(tangents, (list, tuple))):
        raise located(
            ArgumentError,
            "jvp takes the arguments and the tangents as two tuples, "
            f"not {type(args).__name__} and {type(tangents).__name__}",
            hint="write jvp(f, (x,), (dx,)) for a function of one argument",
        )
    args, tangents = tuple(args), tuple(tangents)
    if len(args) != len(tangents):
        raise located(
            ArgumentError,
            f"jvp needs one tangent per argument: {len(args)} arguments, {len(tangents)} tangents",
            hint="give None as the tangent of an argument that does not vary",
        )
    positions = [i for i, t in enumerate(tangents) if t is not None]
    if not positions:
        raise located(
            ArgumentError, "every tangent is None: there is no direction to differentiate along"
        )
    values = checked_values(compiled, (), args, keywords)  # none another library's
    dots = []
    for i in positions:  # each input checked, then its tangent
        name = compiled.params[i]
        value = values[i] = checked_input(compiled.name, name, values[i])
        tangent = numeric_array(tangents[i], value, f"the tangent of {name!r}")
        if shape_of(tangent) != shape_of(value):
            raise located(
                ArgumentError,
                f"the tangent of {name!r} has shape {shape_of(tangent)}, "
                f"but {name!r} has shape {shape_of(value)}",
            )
        dots.append(tangent)
    wrt = [compiled.params[i] for i in positions]
    function = compiled.tangent(wrt)
    out, out_dot = run_located(function.function, *values, *dots)
    _refuse_complex_tangents(out, out_dot)
    keys = compiled.front_end().program.output_keys  # f returns a dict
    if keys is not None:
        dot = owned(out_dot, [*dots, *values])
        return dict(zip(keys, out, strict=True)), dict(zip(keys, dot, strict=True))
    dot = owned(out_dot if isinstance(out_dot, tuple) else [out_dot], [*dots, *values])
    if isinstance(out_dot, tuple):
        return out, tuple(shaped_like(d, o) for d, o in zip(dot, out, strict=True))
    return out, shaped_like(dot[0], out)


def structured_vjp(
    f: Any, args: Sequence[Any], kwargs: dict[str, Any], wrt: Any
) -> tuple[Any, Callable[..., tuple[Any, ...]]] | None:
    """``vjp(f, *args, wrt=wrt, **kwargs)`` where an argument in ``wrt`` is a
    structure: the call flattened, and each gradient in its argument's structure
    (``None`` for leaves that are not floating-point). ``None`` when no argument in
    ``wrt`` is a structure.

    >>> import numpy as np
    >>> def f(ws):
    ...     return ws[0] * ws[1]
    >>> out, pullback = structured_vjp(f, [[np.ones(2), 3 * np.ones(2)]], {}, None)
    >>> [g.tolist() for g in pullback(np.ones(2))[0]]
    [[3.0, 3.0], [1.0, 1.0]]
    """

    if getattr(f, "_gradient_of", None) is not None:
        return gradient_vjp(f, args, kwargs, wrt)
    compiled = differentiable(f)
    entries = wrt_entries(float_params(compiled, args, kwargs) if wrt is None else wrt)
    flat = flatten_call(compiled, entries, args, kwargs)
    if flat is None:
        return None
    out, pullback = vjp(flat.function, *flat.args, wrt=list(flat.wrt))

    def structured_pullback(*seeds: Any) -> tuple[Any, ...]:
        return flat.rebuild(pullback(*seeds))

    return out, structured_pullback


def gradient_vjp(
    f: Any, args: Sequence[Any], kwargs: dict[str, Any], wrt: Any
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
    >>> class Quadratic:
    ...     def __init__(self):
    ...         self.W = np.array([1.0, 2.0])
    ...     def loss(self, x):
    ...         return np.sum(self.W**2 * x)
    >>> q = Quadratic()
    >>> out, pullback = vjp(grad(q.loss, wrt="self.W"), np.ones(2), wrt="self.W")
    >>> pullback(np.array([1.0, 0.0]))[0].tolist()   # the Hessian w.r.t. W, times a vector
    [2.0, 0.0]
    """

    refuse_structured_vjp(f, args)
    compiled, of_wrt = f._gradient_of
    asked_wrt = float_params(compiled, args, kwargs) if wrt is None else wrt
    of, asked = entry_names(compiled, of_wrt), entry_names(compiled, asked_wrt)
    dotted = any("." in entry for entry in (*of, *asked))
    varargs = varargs_name(compiled.signature) is not None  # flattened per count of *args
    given = (*args, *kwargs.values())
    statics = static_defaults(compiled.signature)  # def h(x, act=np.tanh)
    if not (dotted or varargs or statics or any(specialized_on(a) for a in given)):
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
    gradient = grad(flat.function, list(flat.wrt))
    flat_out, flat_pullback = vjp(gradient, *flat.args, wrt=wanted)
    single = gives_one(of_wrt, len(of))
    by_entry = flat.rebuild(flat_out)
    out = tuple(by_entry[every.index(entry)] for entry in of)

    def pullback(*seeds: Any) -> tuple[Any, ...]:
        check_seed_count(seeds, len(of), f"the gradient of {compiled.name}")
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


def structured_jvp(
    f: Any, args: Sequence[Any], tangents: Sequence[Any], keywords: dict[str, Any] | None = None
) -> tuple | None:
    """``jvp(f, args, tangents)`` (``keywords``: passed too, held fixed) where an
    argument is a structure (its tangent has the same structure; ``None`` leaves for
    integer arrays), also for ``f = grad(g)``: the call is flattened into one array
    per leaf, and a gradient and its tangent come back in the argument's structure.
    ``None`` when no argument is a structure.

    >>> import numpy as np
    >>> def loss(p):
    ...     return np.sum(p["w"] ** 3)
    >>> p = {"w": np.array([1.0, 2.0])}
    >>> structured_jvp(grad(loss), [p], [{"w": np.array([1.0, 0.0])}])[1]
    {'w': array([6., 0.])}
    """

    gradient_of = getattr(f, "_gradient_of", None)
    compiled = gradient_of[0] if gradient_of is not None else differentiable(f)
    varargs = varargs_name(compiled.signature)
    flattened = varargs is not None or static_defaults(compiled.signature)
    if (not any(is_structure(a) or specialized_on(a) for a in args) and not flattened) or any(
        is_structure(a) and t is not None and not is_structure(t)
        for a, t in zip(args, tangents, strict=False)
    ):
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
    flat_tangents = []  # laid out as flat.args
    for param, tangent in zip(compiled.params, given, strict=True):
        leaves = flat.leaves.get(param)
        if leaves is None:
            flat_tangents.append(tangent)
            continue
        dots = flatten(tangent)[0] if tangent is not None else [None] * len(leaves)
        if len(dots) != len(leaves):
            raise located(
                ArgumentError,
                f"the tangent of {param!r} has {len(dots)} arrays, {param!r} has {len(leaves)}",
                hint=f"give the tangent of {param!r} the same structure as {param!r}",
            )
        flat_tangents += [
            d if is_float_value(v) else None for v, d in zip(leaves, dots, strict=True)
        ]
        if param in flat.function.__dict__.get("holders", {}):
            flat_tangents.append(None)  # the object itself, whose attributes it writes
    if gradient_of is None:
        return jvp(flat.function, flat.args, flat_tangents)
    gradient = grad(flat.function, list(flat.wrt))
    gradients, gradient_dots = jvp(gradient, flat.args, flat_tangents)
    by_entry = flat.rebuild(gradients), flat.rebuild(gradient_dots)
    chosen = [tuple(entries[every.index(p)] for p in of) for entries in by_entry]
    if gives_one(gradient_of[1], len(of)):
        return chosen[0][0], chosen[1][0]
    return chosen[0], chosen[1]


def _position(f: Callable[..., Any], wrt: int | str, door: str) -> int:
    """The position of the one input ``wrt`` names."""
    if isinstance(wrt, bool) or not isinstance(wrt, (int, str)):
        raise located(
            ArgumentError,
            f"{door} takes one input to differentiate, by position or name; got wrt={wrt!r}",
            hint="for several inputs, pass them as one array, or take one block at a time",
        )
    if isinstance(wrt, str) and "." in wrt:  # "self.W": an attribute, not a parameter
        raise located(
            ArgumentError,
            f"{door} takes wrt by the position or name of a parameter; wrt={wrt!r} names "
            "an attribute of an object",
            hint=f"the Hessian times v: vjp(grad(f, wrt={wrt!r}), *args, wrt={wrt!r})[1](v) "
            f"for the bound method f; or pass {wrt.split('.')[-1]} to f as an argument",
        )
    compiled = differentiable(f)
    return compiled.params.index(compiled.wrt_names(wrt)[0])


@front_door
def hvp(f: Callable[..., Any], wrt: int | str = 0) -> Callable[..., Any]:
    """A function of ``(*args, v)`` giving the Hessian of a scalar-valued ``f`` with
    respect to the input ``wrt``, times ``v`` (shaped like that input): forward mode
    over the compiled gradient, ``jvp(grad(f, wrt), args, v)``.

    >>> import numpy as np
    >>> def f(x, y):
    ...     return np.sum(x * x * y)
    >>> hvp(f, wrt="x")(np.array([1.0, 2.0]), 3.0, np.array([1.0, 1.0])).tolist()
    [6.0, 6.0]
    """
    gradient = grad(f, wrt)

    def product(*args: Any, **keywords: Any) -> Any:
        if not args:
            raise located(ArgumentError, "hvp(f) is called with the arguments of f, then v")
        *values, vector = args
        position = _position(f, wrt, "hvp")
        tangents = [None] * len(values)
        if position >= len(values):
            raise located(
                ArgumentError,
                f"hvp(f) is called with the arguments of f, then v: got {len(args)} "
                "values, too few for the input it differentiates",
            )
        tangents[position] = vector
        return _jvp(gradient, tuple(values), tuple(tangents), keywords)[1]

    product.__name__ = f"hvp_{differentiable(f).name}"
    return MadeFunction(product, hvp, (f, wrt))


def _positional_through(
    f: Callable[..., Any], position: int, args: tuple[Any, ...], keywords: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call ``f(*args, **keywords)`` with its arguments up to ``position`` given by
    position (defaults written in), the others by keyword."""
    signature = differentiable(f).signature
    try:
        bound = signature.bind(*args, **keywords)
    except TypeError as error:
        raise located(ArgumentError, f"cannot call {differentiable(f).name}: {error}") from None
    bound.apply_defaults()
    first = list(signature.parameters)[: position + 1]
    rest = {k: v for k, v in bound.arguments.items() if k not in first}
    return tuple(bound.arguments[p] for p in first), rest


@front_door
def hessian(f: Callable[..., Any], wrt: int | str = 0) -> Callable[..., Any]:
    """A function giving the Hessian of a scalar-valued ``f`` with respect to the
    input ``wrt``: shaped ``x.shape + x.shape`` for that input ``x``, one
    Hessian-vector product (:func:`hvp`) per entry of ``x``.

    >>> import numpy as np
    >>> def f(x):
    ...     return x[0] * x[1] ** 2
    >>> hessian(f)(np.array([1.0, 3.0])).tolist()
    [[0.0, 6.0], [6.0, 2.0]]
    """
    product = hvp(f, wrt)

    def second_derivatives(*args: Any, **keywords: Any) -> Any:
        position = _position(f, wrt, "hessian")
        if position >= len(args):  # x by keyword: the arguments up to it by position
            args, keywords = _positional_through(f, position, args, keywords)
        x = args[position]
        if isinstance(x, (list, tuple)) and not is_structure(x):  # [1.0, 2.0]: one array
            x = np.asarray(x, dtype=float)
            args = (*args[:position], x, *args[position + 1 :])
        if is_structure(x):
            name = differentiable(f).params[position]
            raise located(
                ArgumentError,
                f"hessian takes an array for {name!r}, not a {type(x).__name__}: the "
                "Hessian is a matrix over the entries of one array",
                hint=f"take hvp(f)({name}, v) for each direction v, given in the "
                f"structure of {name}",
            )
        xp = array_module(x)
        shape = shape_of(x)
        size = int(xp.asarray(x).size)
        columns = [  # one product per basis vector, a row of the identity
            xp.reshape(product(*args, xp.reshape(basis, shape), **keywords), (size,))
            for basis in xp.eye(size, dtype=xp.asarray(x).dtype)
        ]
        # the Hessian is symmetric: column i is row i
        return xp.reshape(xp.stack(columns), (*shape, *shape))

    second_derivatives.__name__ = f"hessian_{differentiable(f).name}"
    return MadeFunction(second_derivatives, hessian, (f, wrt))


_DOORS = {id(door): door.__name__ for door in (grad, value_and_grad, jvp, vjp, hvp, hessian)}


class DerivativeMaker:
    """What the front end asks (see :func:`.derivative_calls.register_derivative_maker`)."""

    def kind(self, value: Any) -> str | None:
        """The kind of front door ``value`` is, ``"made"`` for a function one made."""
        if isinstance(value, MadeFunction):
            made_by = _DOORS.get(id(value._made_by))
            if made_by == "hessian":
                return made_by  # refused inside compiled code, as hessian(f)(x) is
            return "made" if made_by in ("grad", "value_and_grad", "hvp") else None
        return _DOORS.get(id(value))

    def made(self, value: MadeFunction) -> tuple[str, Any, Any]:
        """``(kind, f, wrt)`` of ``grad(f, wrt)`` made before."""
        function, wrt = value._recipe
        return _DOORS[id(value._made_by)], function, wrt

    def __init__(self) -> None:
        self._making: set[int] = set()  # the functions whose derivative is being made

    def make(self, request: Request) -> Made | None:
        """The generated function ``request`` asks for; ``None`` for a function the
        compiler differentiates only through its object (a bound method, a partial).
        A derivative of a function taken inside itself (at any depth) is refused: its
        generated code would have to contain itself."""
        key = id(request.function) if request.lifted is None else id(request.lifted)
        if key in self._making:
            raise UnsupportedSyntaxError(
                f"{request.kind} of {getattr(request.function, '__name__', 'a function')} "
                "is taken inside the code it differentiates (a recursion), which the "
                "compiler cannot write out",
                hint="take the derivative outside, or write the recursion as a loop",
            )
        self._making.add(key)
        try:
            return self._make(request)
        finally:
            self._making.discard(key)

    def _make(self, request: Request) -> Made | None:
        compiled = self._compiled(request)
        if compiled is None:
            return None
        if request.kind == "jvp":
            return Made(compiled.tangent(request.wrt).function)
        derivative = compiled.derivative(request.wrt)
        single = gives_one(request.wrt, len(derivative.wrt))
        if request.kind == "hvp":
            gradient = compile_gradient_function(derivative, True)
            # along the input differentiated (hvp(f, wrt=1)(x, y, v): along y, not x)
            along = derivative.wrt_positions[0]
            return Made(Differentiable(gradient).tangent(along).function, pick=1)
        value = request.kind == "value_and_grad"
        return Made(compile_gradient_function(derivative, single, value))

    def _compiled(self, request: Request) -> Differentiable | None:
        if request.lifted is None:
            compiled = differentiable(request.function)
            return None if isinstance(compiled, BoundDifferentiable) else compiled
        parsed = request.parsed
        lifted = Differentiable(parsed.fn)  # read in the caller's names, located there
        lifted.name = parsed.tree.name
        lifted.params = list(request.params)
        lifted.signature = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in lifted.params]
        )
        lifted.parsed = parsed
        return lifted


register_derivative_maker(DerivativeMaker())
