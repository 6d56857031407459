"""The front doors that take derivatives: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``.

Thin wrappers over the compiler: they bind arguments, check what the user asked for
(:mod:`autodiff_tutor.api_checks`) and run the code compiled, once per function and
``wrt``, by a :class:`~autodiff_tutor.compiled.Differentiable` (re-exported here with
``differentiable``); later calls of ``value_and_grad`` take the fast path
(:mod:`autodiff_tutor.api_fast`).

>>> import numpy as np
>>> @differentiable
... def rosenbrock(x):
...     return 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
>>> value, gradient = value_and_grad(rosenbrock)(np.array([-1.0, 2.0]))
>>> float(value), gradient.tolist()
(104.0, [396.0, 200.0])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autodiff_tutor.api_checks import (
    bind_arguments,
    check_wrt,
    located,
    numeric_array,
    owned,
    refuse_foreign,
    scalar_seed,
    wrt_entries,
)
from autodiff_tutor.api_fast import CONTAINERS, fast_call
from autodiff_tutor.callables import unwrap_call
from autodiff_tutor.compiled import Differentiable, Wrt, differentiable
from autodiff_tutor.compiler.failures import relocate, run_located
from autodiff_tutor.compiler.pipeline import Derivative
from autodiff_tutor.errors import (
    ArgumentError,
    NoDerivativeRuleError,
    NonDifferentiableInputError,
    front_door,
)
from autodiff_tutor.pickling import MadeFunction
from autodiff_tutor.pytree import is_static, is_user_object
from autodiff_tutor.runtime.backend import (
    COMPLEX_HINT,
    array_module,
    dtype_kind,
    is_float_value,
    ones_like,
    shape_of,
)
from autodiff_tutor.structured_calls import reads_keys, varargs_name
from autodiff_tutor.structured_vjp import (
    by_key,
    check_list_seed,
    has_float_leaf,
    leaves_of,
    refuse_structured_output,
)

__all__ = ["Differentiable", "differentiable", "grad", "jvp", "value_and_grad", "vjp"]


def _prepare_input(f: Differentiable, name: str, value: Any) -> Any:
    """Check (and for Python numbers and lists, convert) a value to differentiate."""
    from autodiff_tutor.structured_calls import refuse_structure

    refuse_structure(f.name, name, value)  # grad and value_and_grad flatten them first
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise located(
                NonDifferentiableInputError,
                f"cannot differentiate {f.name} with respect to {name!r}: its value is a "
                f"{type(value).__name__} that is not a rectangular array of numbers ({error})",
                hint="pass a float array; several arrays (weights and biases) go in as "
                "separate arguments",
            ) from None
    elif isinstance(value, float):
        value = np.float64(value)
    if is_float_value(value) and dtype_kind(value) != "c":
        return value
    kind = getattr(getattr(value, "dtype", None), "name", type(value).__name__)
    if dtype_kind(value) == "c":
        raise located(
            NonDifferentiableInputError,
            f"cannot differentiate {f.name} with respect to {name!r}: its value is complex "
            f"({kind}), and gradients through complex numbers are not supported",
            hint=f"pass the real and imaginary parts of {name!r} as two float arrays",
        )
    raise located(
        NonDifferentiableInputError,
        f"cannot differentiate {f.name} with respect to {name!r}: its value is of type {kind}, "
        "and only floating-point values have gradients",
        hint=f"pass a float array (for example np.asarray({name}, dtype=float)) "
        f"or leave {name!r} out of wrt",
    )


def _run_forward(
    f: Differentiable, wrt: Wrt, args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[Derivative, Any, Any, list[Any]]:
    derivative = f.derivative(wrt)
    if not kwargs and len(args) == len(f.params):
        values = list(args)  # the common call: every argument by position
    else:
        values = bind_arguments(f, args, kwargs)
    for name, value in zip(f.params, values, strict=True):
        if type(value) is not np.ndarray:  # an autograd ArrayBox, a torch tensor: refused
            refuse_foreign(f"the argument {name!r} of {f.name}", value)
    for i in derivative.wrt_positions:
        value = values[i]
        if not (type(value) is np.ndarray and value.dtype.kind == "f"):  # the fast path
            values[i] = _prepare_input(f, f.params[i], value)
    out, memory = derivative.forward(*values)
    return derivative, out, memory, values


def _unpack(gradients: tuple[Any, ...], wrt: Wrt) -> Any:
    return (
        gradients[0]
        if isinstance(wrt, (int, str)) or (wrt is None and len(gradients) == 1)
        else gradients
    )


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
    unwrapped = _unwrap_callable(f, wrt)
    if unwrapped is not None:  # a bound method, a callable object, a functools.partial
        return MadeFunction(unwrapped.value_and_grad(value_and_grad), value_and_grad, (f, wrt))
    compiled = differentiable(f)
    check_wrt(wrt)
    by_attribute = any(isinstance(e, str) and "." in e for e in wrt_entries(wrt) or ())
    fast: list[Derivative] = []  # the derivative, once a call took the fast path
    one = isinstance(wrt, (int, str))  # one input: its gradient alone
    varargs = varargs_name(compiled.signature) is not None  # compiled per count of *args

    def value_and_gradient(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        try:  # free unless the generated code raises: then located at the user's code
            if fast and not compiled.current():
                fast.clear()  # a name it reads was rebound: compiled again below
            if fast and not kwargs:
                result = fast_call(compiled, fast[0], args)
                if result is not None:
                    if one or wrt is None:
                        return result[0], result[1][0] if one else _unpack(result[1], wrt)
                    return result  # a list of inputs: the tuple of their gradients
            keyed = reads_keys(compiled)  # ACTIVATIONS[activation], activation a string
            if by_attribute or varargs or keyed or _has_containers(args, kwargs):
                structured = _structured_value_and_grad(compiled, wrt, args, kwargs)
                if structured is not None:
                    return structured
            derivative, out, memory, values = _run_forward(compiled, wrt, args, kwargs)
            if isinstance(out, list):  # a list, or a dict (compiled as its values)
                refuse_structured_output(compiled, out)
            seed = scalar_seed(compiled, out)
            gradients = owned(derivative.backward(seed, memory), [seed, *values])
        except Exception as error:
            located = relocate(error)
            if located is None:
                raise
            raise located from error
        if not by_attribute and not fast:
            fast.append(derivative)  # checked once: later calls of this shape skip the checks
        return out, _unpack(gradients, wrt)

    value_and_gradient.__name__ = f"value_and_grad_{compiled.name}"
    return MadeFunction(value_and_gradient, value_and_grad, (f, wrt))  # pickles as this call


def _takes_varargs(f: Any) -> bool:
    """Whether ``f`` is a def with ``*args`` (flattened per count of extra arguments)."""
    if not inspect.isfunction(f):
        return False  # bound methods and partials are unwrapped before; others refused
    return varargs_name(inspect.signature(f)) is not None


def _has_containers(args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    """Whether an argument may be a structure (lists, tuples, dicts, objects' views), or
    a function the compiled code is specialized on (``apply(np.tanh, x)``)."""
    return any(
        isinstance(v, CONTAINERS) or is_static(v) or is_user_object(v)
        for v in (*args, *kwargs.values())
    )


def _unwrap_callable(f: Any, wrt: Wrt) -> Any:
    """Bound methods, callable objects and partials (see :mod:`autodiff_tutor.callables`)."""
    from autodiff_tutor import callables

    return callables.unwrap(f, wrt)


def _structured_value_and_grad(
    compiled: Differentiable, wrt: Wrt, args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[Any, Any] | None:
    """Lists, tuples and dicts of arrays in ``wrt``: gradients in the same structure
    (see :mod:`autodiff_tutor.structured_calls`); ``None`` when there are none."""
    from autodiff_tutor.structured_calls import flatten_call

    flat = flatten_call(compiled, wrt, args, kwargs)
    if flat is None:
        return None
    out, gradients = value_and_grad(flat.function, list(flat.wrt))(*flat.args)
    return out, flat.rebuild(gradients)


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

    unwrapped = _unwrap_callable(f, wrt)
    if unwrapped is not None:
        gradient.__name__ = both.__name__.replace("value_and_grad_", "grad_")
        made = MadeFunction(gradient, grad, (f, wrt))
        made.__signature__ = inspect.signature(f)  # the parameters the call shows
        # so jvp, vjp and grad of it differentiate the def's gradient, the object
        # passed first (see callables.unwrap)
        of = unwrapped.wrt[0] if unwrapped.single else unwrapped.wrt
        made.gradient_through = (f, grad(unwrapped.fn, of))
        return made

    gradient.__name__ = f"grad_{differentiable(f).name}"
    made = MadeFunction(gradient, grad, (f, wrt))  # pickles as this call
    made._gradient_of = (differentiable(f), wrt)  # so grad(grad(f)) can compile it
    return made


def _pullback_pickles(
    vjp: Callable[..., tuple[Any, Callable[..., Any]]],
) -> Callable[..., tuple[Any, Callable[..., Any]]]:
    """``vjp`` whose pullback pickles as the call that made it (the function, the
    arguments and ``wrt``): another process runs the forward again and pulls back the
    same numbers."""

    @functools.wraps(vjp)
    def pickled_pullback(f: Any, *args: Any, wrt: Wrt = None, **kwargs: Any) -> tuple[Any, Any]:
        value, pullback = vjp(f, *args, wrt=wrt, **kwargs)
        return value, MadeFunction(pullback, pullback_of, (f, args, wrt, kwargs))

    return pickled_pullback


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
@_pullback_pickles
def vjp(
    f: Callable[..., Any], *args: Any, wrt: Wrt = None, **kwargs: Any
) -> tuple[Any, Callable[..., tuple[Any, ...]]]:
    """``(value, pullback)``: ``pullback(*seeds)`` gives one gradient per ``wrt`` input.

    ``wrt=None`` means every floating-point argument (the extra arguments of a
    ``*args`` parameter are held fixed unless ``wrt`` names it). Give one seed per
    output, shaped like that output.

    >>> import numpy as np
    >>> def f(x):
    ...     return 2 * x
    >>> value, pullback = vjp(f, np.ones(3))
    >>> pullback(np.array([1.0, 2.0, 3.0]))[0].tolist()
    [2.0, 4.0, 6.0]
    """
    unwrapped = unwrap_call(f, wrt, args, kwargs)
    if unwrapped is not None:  # a bound method, a callable object, a functools.partial
        return unwrapped.vjp(vjp, args, kwargs)
    if _has_containers(args, kwargs) or _takes_varargs(f):
        from autodiff_tutor import api
        from autodiff_tutor.structured_vjp import structured_vjp

        structured = structured_vjp(f, args, kwargs, wrt, api)  # lists, dicts of arrays
        if structured is not None:
            return structured
    compiled = differentiable(f)
    if wrt is None:
        wrt = float_params(compiled, args, kwargs)
    derivative, out, memory, values = run_located(_run_forward, compiled, wrt, args, kwargs)
    outputs = out if derivative.returns_tuple else (out,)

    def pullback(*seeds: Any) -> tuple[Any, ...]:
        if len(seeds) != len(outputs):
            raise located(
                ArgumentError,
                f"{compiled.name} has {len(outputs)} output(s); pullback needs one seed each, "
                f"got {len(seeds)}",
            )
        checked = [
            _check_seed(compiled, i, s, o)
            for i, (s, o) in enumerate(zip(seeds, outputs, strict=True))
        ]
        given = [leaf for s in (*seeds, *checked) for leaf in leaves_of(s)]
        return owned(run_located(derivative.backward, *checked, memory), [*given, *values])

    return by_key(derivative.program.output_keys, out, pullback, compiled.name)


def float_params(f: Differentiable, args: Sequence[Any], kwargs: dict[str, Any]) -> list[str]:
    """The parameters given floating-point values (or lists) in this call: the default
    ``wrt`` of ``vjp``.

    >>> import numpy as np
    >>> def f(x, n):
    ...     return x * n
    >>> float_params(differentiable(f), (np.ones(2), 3), {})
    ['x']
    """
    values = bind_arguments(f, args, kwargs)
    held = varargs_name(f.signature)  # *args: held fixed unless named in wrt
    names = [
        p
        for p, v in zip(f.params, values, strict=True)
        if p != held and (is_float_value(v) or isinstance(v, list) or has_float_leaf(v))
    ]
    if not names:
        raise located(
            NonDifferentiableInputError,
            f"{f.name} has no floating-point argument to differentiate",
            hint="pass float arrays, or name the inputs with wrt=...",
        )
    return names


def _check_seed(f: Differentiable, index: int, seed: Any, out: Any) -> Any:
    if isinstance(out, list):  # a list of arrays: a list of seeds
        where = f"the seed for output {index} of {f.name}"
        return check_list_seed(seed, out, where, lambda s, o: _check_seed(f, index, s, o))
    xp = array_module(out)
    if seed is None:
        return xp.zeros_like(out) if shape_of(out) else ones_like(out) * 0
    seed = numeric_array(seed, out, f"the seed for output {index} of {f.name}")
    if shape_of(seed) != shape_of(out):
        raise located(
            ArgumentError,
            f"the seed for output {index} of {f.name} has shape {shape_of(seed)}, "
            f"but that output has shape {shape_of(out)}",
            hint="give a seed with the output's shape",
        )
    return seed


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
    unwrapped = _unwrap_callable(f, None)
    if unwrapped is not None and isinstance(args, (list, tuple)):  # a bound method...
        return unwrapped.jvp(_jvp, args, tangents)
    if isinstance(args, (list, tuple)) and (_has_containers(args, {}) or _takes_varargs(f)):
        from autodiff_tutor import api
        from autodiff_tutor.structured_calls import structured_jvp

        # lists, tuples, dicts of arrays
        structured = structured_jvp(f, args, tangents, api, keywords)
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
    wrt = [p for p, t in zip(compiled.params, tangents, strict=False) if t is not None]
    if not wrt:
        raise located(
            ArgumentError, "every tangent is None: there is no direction to differentiate along"
        )
    values = bind_arguments(compiled, args, keywords)
    for name, value in zip(compiled.params, values, strict=True):
        refuse_foreign(f"the argument {name!r} of {compiled.name}", value)
    dots = []
    for name, arg, tangent in zip(compiled.params, values, tangents, strict=False):
        if tangent is None:
            continue
        value = _prepare_input(compiled, name, arg)
        tangent = numeric_array(tangent, value, f"the tangent of {name!r}")
        if shape_of(tangent) != shape_of(value):
            raise located(
                ArgumentError,
                f"the tangent of {name!r} has shape {shape_of(tangent)}, "
                f"but {name!r} has shape {shape_of(value)}",
            )
        dots.append(tangent)
        values[compiled.params.index(name)] = value
    function = compiled.tangent(wrt)
    out, out_dot = run_located(function.function, *values, *dots)
    _refuse_complex_tangents(out, out_dot)
    keys = compiled.front_end().program.output_keys  # f returns a dict
    if keys is not None:
        dot = owned(out_dot, [*dots, *values])
        return dict(zip(keys, out, strict=True)), dict(zip(keys, dot, strict=True))
    if isinstance(out_dot, tuple):
        return out, owned(out_dot, [*dots, *values])
    return out, owned([out_dot], [*dots, *values])[0]
