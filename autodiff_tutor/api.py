"""The front doors: ``differentiable``, ``grad``, ``value_and_grad``, ``vjp``.

Thin wrappers over the compiler: they bind arguments, check what the user asked
for, and cache the compiled code per function and ``wrt`` choice.

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
    check_function,
    check_wrt,
    is_float_value,
    is_number_like,
    located,
    numeric_array,
    owned,
)
from autodiff_tutor.compiler.pipeline import (
    Derivative,
    FrontEnd,
    TangentFunction,
    compile_derivative,
    compile_gradient_function,
    compile_tangent,
    front_end,
    stages,
)
from autodiff_tutor.errors import (
    ArgumentError,
    NonDifferentiableInputError,
    NonScalarOutputError,
)
from autodiff_tutor.protocol import register_op_factory
from autodiff_tutor.runtime.backend import array_module, ones_like, shape_of

Wrt = int | str | Sequence[int | str] | None


class Differentiable:
    """A function the compiler can differentiate; calling it runs the plain function.

    It is also a differentiable operation (``op_forward`` / ``op_backward``), so it
    can be used inside another compiled function or in the tracing mode.

    >>> import numpy as np
    >>> @differentiable
    ... def f(x):
    ...     return np.sum(x * x)
    >>> f(np.array([1.0, 2.0]))
    np.float64(5.0)
    >>> print(f.backward_source())
    def f_backward(d_out, memory):
        (x, t1) = memory
        d_t1 = unreduce(d_out, t1)  # line 3: np.sum(x * x)
        d_x = 2 * (d_t1 * x)        # line 3: x * x
        return (d_x,)
    """

    def __init__(self, fn: Callable[..., Any]):
        check_function(fn)
        self.fn = fn
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters)
        self.name = fn.__name__
        self._cache: dict[tuple[str, ...], Derivative] = {}
        self._by_request: dict[Any, Derivative] = {}  # wrt as the caller wrote it
        self._tangent_cache: dict[tuple[str, ...], TangentFunction] = {}
        self._front: FrontEnd | None = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from autodiff_tutor.tracing import call_op, is_traced

        if not kwargs and any(is_traced(value) for value in args):
            return call_op(self, *args)  # in tracing mode, the generated backward is used
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<differentiable {self.name}{self.signature}>"

    # -- compiled code ---------------------------------------------------------

    def derivative(self, wrt: Wrt = None) -> Derivative:
        """The compiled forward/backward pair for gradients w.r.t. ``wrt`` (cached)."""
        check_wrt(wrt)
        key = tuple(wrt) if isinstance(wrt, list) else wrt
        found = self._by_request.get(key)
        if found is not None:  # the same request as before: no checks to repeat
            return found
        names = self.wrt_names(wrt)
        if names not in self._cache:
            self._cache[names] = compile_derivative(self.fn, names, self.front_end())
        self._by_request[key] = self._cache[names]
        return self._cache[names]

    def front_end(self) -> FrontEnd:
        """The parsed and normalized function: compiled once, whatever ``wrt``."""
        if self._front is None:
            self._front = front_end(self.fn)
        return self._front

    def wrt_names(self, wrt: Wrt) -> tuple[str, ...]:
        """Parameter names for ``wrt`` given by position, name, or a sequence of either.

        ``None`` means every parameter without a default value.
        """
        check_wrt(wrt)
        if wrt is None:
            defaults = self.signature.parameters
            return tuple(p for p in self.params if defaults[p].default is inspect.Parameter.empty)
        items = [wrt] if isinstance(wrt, (int, str)) else list(wrt)
        names = []
        for item in items:
            if isinstance(item, bool) or not isinstance(item, (int, str)):
                raise located(ArgumentError, f"wrt entries are positions or names, got {item!r}")
            if isinstance(item, int):
                if not -len(self.params) <= item < len(self.params):
                    raise located(
                        ArgumentError,
                        f"wrt={item} is out of range: {self.name} has "
                        f"{len(self.params)} parameters {self.params}",
                    )
                item = self.params[item]
            elif item not in self.params:
                raise located(
                    ArgumentError,
                    f"wrt={item!r} is not a parameter of {self.name}; "
                    f"its parameters are {self.params}",
                )
            names.append(item)
        if len(set(names)) != len(names):
            raise located(ArgumentError, f"wrt names a parameter twice: {names}")
        return tuple(names)

    def tangent(self, wrt: Wrt = None) -> TangentFunction:
        """The compiled forward-mode (JVP) function for tangents along ``wrt`` (cached)."""
        names = self.wrt_names(wrt)
        if names not in self._tangent_cache:
            self._tangent_cache[names] = compile_tangent(self.fn, names, self.front_end())
        return self._tangent_cache[names]

    def jvp_source(self, wrt: Wrt = None) -> str:
        """The generated forward-mode function, as source."""
        return self.tangent(wrt).source

    def forward_source(self, wrt: Wrt = None) -> str:
        """The generated forward function, as source."""
        return self.derivative(wrt).forward_source

    def backward_source(self, wrt: Wrt = None) -> str:
        """The generated backward function, as source."""
        return self.derivative(wrt).backward_source

    def source(self, wrt: Wrt = None) -> str:
        """Forward and backward sources together (the protocol's ``source()``)."""
        return self.forward_source(wrt) + "\n\n" + self.backward_source(wrt)

    def show(self, wrt: Wrt = None, stages: bool = False) -> None:
        """Print the generated forward and backward functions; with ``stages=True``,
        every stage's result in the order the compiler runs them."""
        if not stages:
            print(self.source(wrt))
            return
        for stage, text in self.stages(wrt).items():
            print(f"── {stage} " + "─" * (60 - len(stage)))
            print(text)

    def stages(self, wrt: Wrt = None) -> dict[str, str]:
        """Each compiler stage's result, as text: source, normalize, activity, adjoint,
        memory, forward, optimize, emit.

        >>> import numpy as np
        >>> @differentiable
        ... def f(x):
        ...     return np.sum(np.exp(x))
        >>> print(f.stages("x")["optimize"])
            d_t1 = unreduce(d_out, t1)  # line 3: np.sum(np.exp(x))
            d_x = d_t1 * t1             # line 3: np.exp(x)
        """
        return stages(self.fn, self.wrt_names(wrt))

    def _repr_html_(self) -> str:
        from autodiff_tutor.display import generated_code_html

        return generated_code_html(self)

    # -- the differentiable-operation protocol -----------------------------------

    @property
    def num_outputs(self) -> int:
        return self.derivative().num_outputs

    def op_forward(self, *inputs: Any) -> tuple[tuple[Any, ...], Any]:
        """Run the generated forward; the saved memory remembers which inputs it serves."""
        wrt = tuple(p for p, v in zip(self.params, inputs, strict=False) if is_float_value(v))
        derivative = self.derivative(wrt)
        values = bind_arguments(self, inputs, {})
        out, memory = derivative.forward(*values)
        outputs = out if derivative.returns_tuple else (out,)
        return outputs, (wrt, memory)

    def op_jvp(
        self, inputs: tuple[Any, ...], tangents: tuple[Any, ...]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """Values and tangents of the outputs (forward mode through this function)."""
        values = bind_arguments(self, inputs, {})
        wrt = tuple(p for p, t in zip(self.params, tangents, strict=False) if t is not None)
        if not wrt:
            outputs = self.fn(*values)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            return outputs, tuple(ones_like(o) * 0 for o in outputs)
        tangent = self.tangent(wrt)
        dots = [t for t in tangents if t is not None]
        out, out_dot = tangent.function(*values, *dots)
        if tangent.returns_tuple:
            return tuple(out), tuple(out_dot)
        return (out,), (out_dot,)

    def op_backward(
        self, d_outputs: tuple[Any, ...], compute_gradients: tuple[bool, ...], saved: Any
    ) -> tuple[Any, ...]:
        """Gradients for every input (``None`` where ``compute_gradients`` is false)."""
        wrt, memory = saved
        gradients = dict(zip(wrt, self.derivative(wrt).backward(*d_outputs, memory), strict=True))
        flags = list(compute_gradients) + [False] * (len(self.params) - len(compute_gradients))
        return tuple(
            gradients.get(p) if flag else None for p, flag in zip(self.params, flags, strict=True)
        )


# The compiled wrapper is kept on the function itself: the two refer to each other
# and are freed together (a cache keyed by the function would keep it alive).
_WRAPPER = "_autodiff_tutor_differentiable"


def _remember(fn: Callable[..., Any], wrapper: Differentiable) -> Differentiable:
    try:
        fn.__dict__[_WRAPPER] = wrapper
    except (AttributeError, TypeError):
        pass  # no __dict__ (a bound method, made anew at each access): nothing to reuse
    return wrapper


def differentiable(fn: Callable[..., Any]) -> Differentiable:
    """Decorator: make ``fn`` differentiable by the source-to-source compiler.

    >>> import numpy as np
    >>> @differentiable
    ... def cube(x):
    ...     return x ** 3
    >>> cube(2.0)
    8.0
    """
    if isinstance(fn, Differentiable):
        return fn
    check_function(fn)
    known = getattr(fn, "__dict__", {}).get(_WRAPPER)
    if known is not None:
        return known
    gradient_of = getattr(fn, "_gradient_of", None)
    if gradient_of is not None:  # grad(f): differentiate its generated gradient function
        compiled, wrt = gradient_of
        single = isinstance(wrt, (int, str))
        plain = compile_gradient_function(compiled.derivative(wrt), single)
        return _remember(fn, Differentiable(plain))
    return _remember(fn, Differentiable(fn))


def _prepare_input(f: Differentiable, name: str, value: Any) -> Any:
    """Check (and for Python numbers and lists, convert) a value to differentiate."""
    from autodiff_tutor.pytree import refuse_structure

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
    if is_float_value(value):
        return value
    kind = getattr(getattr(value, "dtype", None), "name", type(value).__name__)
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
    for i in derivative.wrt_positions:
        value = values[i]
        if not (type(value) is np.ndarray and value.dtype.kind == "f"):  # the fast path
            values[i] = _prepare_input(f, f.params[i], value)
    out, memory = derivative.forward(*values)
    return derivative, out, memory, values


def _scalar_seed(f: Differentiable, out: Any) -> Any:
    if isinstance(out, np.generic) and out.dtype.kind == "f":  # the usual scalar loss
        return out.dtype.type(1)
    if not isinstance(out, tuple) and not is_number_like(out):
        raise located(
            NonScalarOutputError,
            f"{f.name} returns {type(out).__name__}"
            + (f" of dtype {out.dtype}" if hasattr(out, "dtype") else "")
            + "; grad needs a single scalar number (a float or a 0-d float array)",
            hint="return the loss as a number, e.g. np.sum(...)",
        )
    if isinstance(out, tuple):
        raise located(
            NonScalarOutputError,
            f"{f.name} returns {len(out)} values; grad needs a single scalar output",
            hint="use vjp(f, *args) and give one seed per output",
        )
    size = 1
    for n in shape_of(out):
        size *= n
    if size != 1:
        raise located(
            NonScalarOutputError,
            f"{f.name} returns an array of shape {shape_of(out)}; a gradient needs a scalar "
            "output (or a seed saying how to weigh each element)",
            hint="reduce it (np.sum, np.mean) or use vjp(f, *args) and call pullback(seed)",
        )
    return ones_like(out)


def _unpack(gradients: tuple[Any, ...], wrt: Wrt) -> Any:
    return (
        gradients[0]
        if isinstance(wrt, (int, str)) or (wrt is None and len(gradients) == 1)
        else gradients
    )


def value_and_grad(f: Callable[..., Any], wrt: Wrt = 0) -> Callable[..., tuple[Any, Any]]:
    """A function returning ``(f(*args), gradient)`` of a scalar-valued ``f``.

    ``wrt`` picks the inputs by position or name; one gives one gradient, a list
    gives a tuple.

    >>> import numpy as np
    >>> def f(x, y):
    ...     return np.sum(x * y)
    >>> value, (dx, dy) = value_and_grad(f, wrt=["x", "y"])(np.ones(2), np.arange(2.0))
    >>> dx.tolist(), dy.tolist()
    ([0.0, 1.0], [1.0, 1.0])
    """
    unwrapped = _unwrap_callable(f, wrt)
    if unwrapped is not None:  # a bound method, a callable object, a functools.partial
        return unwrapped.value_and_grad(value_and_grad)
    compiled = differentiable(f)

    def value_and_gradient(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        structured = _structured_value_and_grad(compiled, wrt, args, kwargs)
        if structured is not None:
            return structured
        derivative, out, memory, values = _run_forward(compiled, wrt, args, kwargs)
        seed = _scalar_seed(compiled, out)
        gradients = owned(derivative.backward(seed, memory), [seed, *values])
        return out, _unpack(gradients, wrt)

    value_and_gradient.__name__ = f"value_and_grad_{compiled.name}"
    return value_and_gradient


def _unwrap_callable(f: Any, wrt: Wrt) -> Any:
    """Bound methods, callable objects and partials (see :mod:`autodiff_tutor.callables`)."""
    from autodiff_tutor import callables

    return callables.unwrap(f, wrt)


def _structured_value_and_grad(
    compiled: Differentiable, wrt: Wrt, args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[Any, Any] | None:
    """Lists, tuples and dicts of arrays in ``wrt``: gradients in the same structure
    (see :mod:`autodiff_tutor.pytree`); ``None`` when there are none."""
    from autodiff_tutor import pytree

    check_wrt(wrt)
    flat = pytree.flatten_call(compiled, wrt, args, kwargs)
    if flat is None:
        return None
    out, gradients = value_and_grad(flat.function, list(flat.wrt))(*flat.args)
    return out, flat.rebuild(gradients)


def grad(f: Callable[..., Any], wrt: Wrt = 0) -> Callable[..., Any]:
    """A function returning the gradient of a scalar-valued ``f`` w.r.t. ``wrt``.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(np.tanh(x))
    >>> grad(f)(np.zeros(2)).tolist()
    [1.0, 1.0]
    """
    both = value_and_grad(f, wrt)

    def gradient(*args: Any, **kwargs: Any) -> Any:
        return both(*args, **kwargs)[1]

    if _unwrap_callable(f, wrt) is not None:
        gradient.__name__ = both.__name__.replace("value_and_grad_", "grad_")
        return gradient

    gradient.__name__ = f"grad_{differentiable(f).name}"
    gradient._gradient_of = (differentiable(f), wrt)  # so grad(grad(f)) can compile it
    return gradient


def vjp(
    f: Callable[..., Any], *args: Any, wrt: Wrt = None, **kwargs: Any
) -> tuple[Any, Callable[..., tuple[Any, ...]]]:
    """``(value, pullback)``: ``pullback(*seeds)`` gives one gradient per ``wrt`` input.

    ``wrt=None`` means every floating-point argument. Give one seed per output,
    shaped like that output.

    >>> import numpy as np
    >>> def f(x):
    ...     return 2 * x
    >>> value, pullback = vjp(f, np.ones(3))
    >>> pullback(np.array([1.0, 2.0, 3.0]))[0].tolist()
    [2.0, 4.0, 6.0]
    """
    compiled = differentiable(f)
    if wrt is None:
        wrt = float_params(compiled, args, kwargs)
    derivative, out, memory, values = _run_forward(compiled, wrt, args, kwargs)
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
        return owned(derivative.backward(*checked, memory), [*seeds, *checked, *values])

    return out, pullback


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
    names = [
        p for p, v in zip(f.params, values, strict=True) if is_float_value(v) or isinstance(v, list)
    ]
    if not names:
        raise located(
            NonDifferentiableInputError,
            f"{f.name} has no floating-point argument to differentiate",
            hint="pass float arrays, or name the inputs with wrt=...",
        )
    return names


def _check_seed(f: Differentiable, index: int, seed: Any, out: Any) -> Any:
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
    values = bind_arguments(compiled, args, {})
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
    out, out_dot = function.function(*values, *dots)
    if isinstance(out_dot, tuple):
        return out, owned(out_dot, [*dots, *values])
    return out, owned([out_dot], [*dots, *values])[0]


register_op_factory(differentiable)  # generated code calls user helpers through it
