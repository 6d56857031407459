"""Differentiable functions: ``@differentiable`` and the object it makes, with the
compiled pairs it keeps.

A :class:`Differentiable` runs as the plain function, shows the code the compiler
writes for it (``show``, ``stages``), and is a differentiable operation of the shared
protocol (``op_forward`` / ``op_backward`` / ``op_jvp``), so it can be used inside
another compiled function or in the tracing mode. It keeps what it compiled: the
front end once, a forward/backward pair per ``wrt``, and, per pair, the pairs
specialized on the arguments' shapes and dtypes (:mod:`.compiler.specialized`), which
:func:`cached_call` runs once a call has gone through every check. The front doors
that take derivatives (``grad``, ``value_and_grad``, ``vjp``, ``jvp``) are in
:mod:`autodiff_tutor.api.derivatives`.

>>> import numpy as np
>>> def f(x):
...     return np.sum(x * x)
>>> compiled = differentiable(f)
>>> compiled(np.arange(3.0)), compiled.derivative(0) is compiled.derivative("x")
(np.float64(5.0), True)
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

from autodiff_tutor.api.arguments import (
    bind_arguments,
    bind_in_order,
    check_function,
    check_wrt,
    checked_values,
    flatten_call,
    flattened_functions,
    forget_flattened,
    gives_one,
    is_required,
    located,
    owned,
    plain_call,
    refuse_structured_output,
    scalar_seed,
    unwrap,
    wrt_entries,
)
from autodiff_tutor.compiler import fused
from autodiff_tutor.compiler.assumptions import Assumptions, assumed
from autodiff_tutor.compiler.failures import run_located
from autodiff_tutor.compiler.front.called import Call, calls_of_yours, may_write_in_place
from autodiff_tutor.compiler.front.source import ParsedFunction, function_name
from autodiff_tutor.compiler.pipeline import (
    Derivative,
    FrontEnd,
    TangentFunction,
    compile_derivative,
    compile_gradient_function,
    compile_tangent,
    front_end,
    front_end_of,
    stages,
)
from autodiff_tutor.compiler.specialized import specialized_pair
from autodiff_tutor.display import generated_code_html
from autodiff_tutor.errors import (
    ArgumentError,
    AutodiffError,
    UnsupportedSyntaxError,
    add_note,
    front_door,
)
from autodiff_tutor.pickling import by_reference, importable, with_sources
from autodiff_tutor.protocol import call_if_traced, register_op_factory
from autodiff_tutor.pytree import flatten
from autodiff_tutor.runtime.backend import is_float_value, ones_like
from autodiff_tutor.runtime.guards import GuardFailed
from autodiff_tutor.runtime.stack import replayable
from autodiff_tutor.specialization_header import header
from autodiff_tutor.tracing.traced_values import is_traced

Wrt = int | str | Sequence[int | str] | None


class Differentiable:
    """A function the compiler can differentiate; calling it runs the plain function,
    and ``backward_source()`` shows the backward the compiler writes for it.

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

    #: what runs its specialized pairs: "numpy", or "numba" (:mod:`.compiler.fused`)
    backend = "numpy"

    def __init__(self, fn: Callable[..., Any]):
        if not isinstance(self, BoundDifferentiable):
            check_function(fn)
        self.fn = fn
        self.signature = inspect.signature(fn)
        self._defaults = _defaults_of(fn)  # what the signature's defaults were read from
        self.params = list(self.signature.parameters)
        self.name = function_name(fn)
        self._cache: dict[tuple[str, ...], Derivative] = {}
        self._by_request: dict[Any, Derivative] = {}  # wrt as the caller wrote it
        self._tangent_cache: dict[tuple[str, ...], TangentFunction] = {}
        self._front: FrontEnd | None = None
        self._assumptions: Assumptions | None = None
        self.made_from: Derivative | None = None  # the pair a gradient function comes from
        self.gradient_function: Callable[..., Any] | None = None  # grad(f) it compiles
        #: the tree to compile where it is not ``fn``'s own source (structured parameters
        #: made leaves: :func:`~autodiff_tutor.api.arguments.flatten_call`)
        self.parsed: ParsedFunction | None = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:  # in tracing mode, the generated backward is used
            traced, outputs = call_if_traced(self, args)
            if traced:
                return outputs
        return self.fn(*args, **kwargs)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        """``@differentiable`` on a method: ``model.loss`` is a bound method of it, so
        ``model.loss(X)`` runs it and ``grad(model.loss, wrt="self.W")`` differentiates it.

        >>> import numpy as np
        >>> class Model:
        ...     W = np.ones(2)
        ...     @differentiable
        ...     def loss(self, x):
        ...         return np.sum(self.W * x * x)
        >>> Model().loss(np.ones(2))
        np.float64(2.0)
        """
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self) -> str:
        return f"<differentiable {self.name}{self.signature}>"

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        """Pickled by reference where its module's name for it is importable, else as
        its plain function and source, compiled again on loading (see
        :mod:`autodiff_tutor.pickling`); a gradient function as the ``grad`` it is of;
        on the backend it runs on.

        >>> import pickle
        >>> import cloudpickle
        >>> import numpy as np
        >>> @differentiable
        ... def f(x):
        ...     return np.sum(x ** 3)
        >>> copy = pickle.loads(cloudpickle.dumps(f))   # f is local here: sent by value
        >>> copy is f, copy(np.array([2.0])), copy.backward_source() == f.backward_source()
        (False, np.float64(8.0), True)
        """
        if importable(self):
            return by_reference(self)
        backend = () if self.backend == "numpy" else (self.backend,)
        if self.made_from is not None:  # differentiable(grad(f)): made again from grad(f)
            return differentiable, (self.gradient_function, *backend)
        return with_sources(differentiable, (self.fn, *backend))

    # -- compiled code ---------------------------------------------------------

    def current(self) -> bool:
        """Whether what was compiled still fits the names the function reads (see
        :mod:`.assumptions`); where it does not, every compiled pair is dropped, to be
        compiled again on the names' new values.

        >>> import numpy as np
        >>> act = np.tanh
        >>> @differentiable
        ... def f(x):
        ...     return np.sum(act(x))
        >>> f.derivative() is f.derivative(), f.current()
        (True, True)
        >>> first = f.derivative()
        >>> act = np.sin
        >>> f.current(), f.derivative() is first
        (False, False)
        """
        defaults, kwdefaults = _defaults_of(self.fn)  # no generator: before every call
        if defaults is not self._defaults[0] or kwdefaults is not self._defaults[1]:
            self.signature = inspect.signature(self.fn)  # f.__defaults__ = (...): read again
            self._defaults = defaults, kwdefaults
        elif self._assumptions is None or self._assumptions.hold():
            return True
        self._cache.clear()
        self._by_request.clear()
        self._tangent_cache.clear()
        forget_flattened(self)  # the flattened functions made from it
        self._front = None
        self._assumptions = None
        return False

    def forward_run(
        self, wrt: Wrt, args: Sequence[Any], kwargs: dict[str, Any] | None = None
    ) -> tuple[Derivative, Any, Any, list[Any]]:
        """The derivative for ``wrt`` and its forward run on the call's checked values:
        ``(derivative, out, memory, values)``; what ``vjp``, the stepper and the graph
        pictures start from.

        >>> import numpy as np
        >>> @differentiable
        ... def f(x):
        ...     return np.sum(x * x)
        >>> derivative, out, memory, values = f.forward_run(0, (np.array([1.0, 2.0]),))
        >>> out, derivative.backward(1.0, memory)
        (np.float64(5.0), (array([2., 4.]),))
        """
        derivative = self.derivative(wrt)
        values = checked_values(self, derivative.wrt_positions, args, kwargs or {})
        out, memory = derivative.forward(*values)
        return derivative, out, memory, values

    @front_door
    def derivative(self, wrt: Wrt = None) -> Derivative:
        """The compiled forward/backward pair for gradients w.r.t. ``wrt`` (cached
        while :meth:`current`)."""
        self.current()
        key = tuple(wrt) if isinstance(wrt, list) else wrt
        try:
            found = self._by_request.get(key)
        except TypeError:  # unhashable: not a valid wrt, which check_wrt says
            found = None
        if found is not None:  # the same request as before: checked then
            return found
        names = self.wrt_names(wrt)  # (checks wrt)
        if names not in self._cache:
            compiled = compile_derivative(self.fn, names, self.front_end())
            self._cache[names] = fused.attach(compiled, self.backend)
        self._by_request[key] = self._cache[names]
        return self._cache[names]

    def front_end(self) -> FrontEnd:
        """The parsed and normalized function: compiled once, whatever ``wrt`` (while
        :meth:`current`).

        The functions of yours it calls are read now too (see
        :mod:`.compiler.front.called`): the compiled code calls one as the plain
        function where no gradient flows through it (its result unused or without
        gradient, in an ``if`` or ``while`` test, a range, an index, an ``assert``), so
        a write into its arguments that it would refuse (``a *= 2`` on its parameter
        ``a``) must be refused here, or the caller's compiled code would silently read
        its arrays as if unchanged."""
        self.current()
        if self._front is None:
            self._assumptions = assumed(self.fn)  # taken before reading the names
            # first: a helper calling back finds it
            self._front = front_end(self.fn) if self.parsed is None else front_end_of(self.parsed)
            specialized = self._front.parsed  # what it assumed of the objects it reached
            self._assumptions = self._assumptions.extended(specialized.inlined, specialized.checks)
            pinned = self._front.program.static_globals  # ints an index or a range read
            self._assumptions = self._assumptions.pinned(pinned, self.fn)
            try:
                for call in calls_of_yours(self._front.program):
                    _read_called(self._front, call)
            except BaseException:
                self._front = None
                raise
        return self._front

    def wrt_names(self, wrt: Wrt) -> tuple[str, ...]:
        """Parameter names for ``wrt`` given by position, name, or a sequence of either.

        ``None`` means every parameter without a default value (``*args`` aside).
        """
        check_wrt(wrt)
        if wrt is None:
            parameters = self.signature.parameters
            return tuple(p for p in self.params if is_required(parameters[p]))
        names = []
        for item in wrt_entries(wrt):  # positions and names (check_wrt refused the rest)
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

    @front_door
    def tangent(self, wrt: Wrt = None) -> TangentFunction:
        """The compiled forward-mode (JVP) function for tangents along ``wrt`` (cached)."""
        self.current()
        names = self.wrt_names(wrt)
        if names not in self._tangent_cache:
            self._tangent_cache[names] = compile_tangent(self.fn, names, self.front_end())
        return self._tangent_cache[names]

    @front_door
    def jvp_source(self, wrt: Wrt = None) -> str:
        """The generated forward-mode function, as source."""
        return self.tangent(wrt).source

    @front_door
    def forward_source(self, wrt: Wrt = None) -> str:
        """The generated forward function, as source."""
        return self.heading() + self.derivative(wrt).forward_source

    @front_door
    def backward_source(self, wrt: Wrt = None) -> str:
        """The generated backward function, as source."""
        return self.heading() + self.derivative(wrt).backward_source

    @front_door
    def source(self, wrt: Wrt = None) -> str:
        """Forward and backward sources together (the protocol's ``source()``)."""
        head = self.heading()  # (first, as each of the two alone)
        derivative = self.derivative(wrt)
        return head + derivative.forward_source + "\n\n" + derivative.backward_source

    def heading(self) -> str:
        """What the code shown is headed by: nothing here; for a bound method, what it
        was specialized on (:class:`BoundDifferentiable`).

        >>> differentiable(lambda x: x).heading()
        ''
        """
        return ""

    @front_door
    def show(
        self,
        wrt: Wrt = None,
        stages: bool = False,
        specialized: bool | None = None,
        backend: str = "",
    ) -> None:
        """Print the generated forward and backward functions. Once ``grad`` or
        ``value_and_grad`` has met arguments, the pairs specialized on their shapes and
        dtypes (see :meth:`specialized_sources`), each headed by what it assumes;
        before, or with ``specialized=False``, the general pair, which runs for any
        shapes. With ``stages=True``, every stage's result in the order the compiler
        runs them; with ``backend="numba"``, beside each pair the fused kernel it runs as.

        >>> import numpy as np
        >>> from autodiff_tutor import value_and_grad
        >>> @differentiable
        ... def f(x):
        ...     return np.sum(x * x)
        >>> f.show()
        def f_forward(x):
            t1 = x * x
            out = np.sum(t1)
            return out, (x, like(t1))
        <BLANKLINE>
        def f_backward(d_out, memory):
            (x, t1) = memory
            d_t1 = unreduce(d_out, t1)  # line 3: np.sum(x * x)
            d_x = 2 * (d_t1 * x)        # line 3: x * x
            return (d_x,)
        >>> both = value_and_grad(f)
        >>> _ = both(np.ones(3)), both(np.ones(3))
        >>> f.show()
        # specialized for x: float64[3]
        def f_forward(x):
            out = (x * x).sum()
            return out, (x,)
        <BLANKLINE>
        # the backward of value_and_grad: the output's gradient is 1
        def f_backward(d_out, memory):
            (x,) = memory
            d_x = 2 * x  # line 3: x * x
            return (d_x,)
        <BLANKLINE>
        # the general pair, for any shapes: show(specialized=False)
        """
        if backend:
            print(fused.show_text(fused.with_backend(self, backend), wrt))
            return
        if stages:
            for stage, text in self.stages(wrt).items():
                print(f"── {stage} " + "─" * (60 - len(stage)))
                print(text)
            return
        texts = []
        if specialized is not False:  # wrt None: every wrt differentiated so far
            texts = self.specialized_sources(wrt) if wrt is not None else self.all_specialized()
        if texts:
            general = "# the general pair, for any shapes: show(specialized=False)"
            print("\n\n".join(texts) + ("" if specialized else "\n\n" + general))
        elif specialized:
            print("(no specialization yet)")
        else:
            print(self.source(wrt))

    @front_door
    def specialized_sources(self, wrt: Wrt = None) -> list[str]:
        """The forward and backward specialized on each argument signature met so far
        (after the first call with it), headed by that signature.

        >>> import numpy as np
        >>> from autodiff_tutor import value_and_grad
        >>> @differentiable
        ... def f(x):
        ...     return np.sum(x * x + x)
        >>> both = value_and_grad(f)
        >>> _ = both(np.ones(3)), both(np.ones(3))
        >>> print(f.specialized_sources()[0].splitlines()[0])
        # specialized for x: float64[3]
        """
        derivative = self.derivative(wrt)
        texts = []
        for key, pair in derivative.specializations.items():
            if pair is None:
                continue
            described = ", ".join(
                f"{p}: {_describe(k)}" for p, k in zip(self.params, key, strict=False)
            )
            texts.append(
                f"# specialized for {described}\n{pair.forward_source}\n\n"
                f"# the backward of value_and_grad: the output's gradient is 1\n"
                f"{pair.backward_source}"
            )
        return texts

    def all_specialized(self) -> list[str]:
        """:meth:`specialized_sources` of every ``wrt`` differentiated so far.

        >>> import numpy as np
        >>> from autodiff_tutor import value_and_grad
        >>> @differentiable
        ... def f(x, y):
        ...     return np.sum(x * y)
        >>> both = value_and_grad(f, wrt="y")
        >>> _ = both(np.ones(2), np.ones(2)), both(np.ones(2), np.ones(2))
        >>> [text.splitlines()[0] for text in f.all_specialized()]
        ['# specialized for x: float64[2], y: float64[2]']
        """
        own = [text for names in list(self._cache) for text in self.specialized_sources(names)]
        # the functions flattened from it for its arguments' structures (dicts, objects)
        flats = flattened_functions(self)
        return own + [text for flat in flats for text in flat.all_specialized()]

    @front_door
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
        return generated_code_html(self)

    # -- the differentiable-operation protocol -----------------------------------

    @property
    def num_outputs(self) -> int:
        return self.derivative().num_outputs

    def op_forward(self, *inputs: Any) -> tuple[tuple[Any, ...], Any]:
        """Run the generated forward; the saved memory remembers which inputs it serves."""
        wrt = tuple(p for p, v in zip(self.params, inputs, strict=False) if is_float_value(v))
        function, names, values = self._operation(wrt, inputs)
        derivative = function.derivative(list(names))
        out, memory = run_located(derivative.forward, *values)
        outputs = out if derivative.returns_tuple else (out,)
        return outputs, (names, derivative, memory)

    def op_jvp(
        self, inputs: tuple[Any, ...], tangents: tuple[Any, ...]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """Values and tangents of the outputs (forward mode through this function)."""
        wrt = tuple(p for p, t in zip(self.params, tangents, strict=False) if t is not None)
        if not wrt:
            outputs = self._run_plain(inputs)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            return outputs, tuple(ones_like(o) * 0 for o in outputs)
        function, names, values = self._operation(wrt, inputs)
        tangent = function.tangent(list(names))
        dots = [tangents[self.params.index(n)] for n in names]
        out, out_dot = run_located(tangent.function, *values, *dots)
        if tangent.returns_tuple:
            return tuple(out), tuple(out_dot)
        return (out,), (out_dot,)

    def op_backward(
        self, d_outputs: tuple[Any, ...], compute_gradients: tuple[bool, ...], saved: Any
    ) -> tuple[Any, ...]:
        """Gradients for every input (``None`` where ``compute_gradients`` is false)."""
        names, derivative, memory = saved  # the pair that made memory, even if recompiled
        backward = derivative.backward
        memory = replayable(memory)  # a second backward on one forward finds it whole
        gradients = dict(zip(names, run_located(backward, *d_outputs, memory), strict=True))
        flags = list(compute_gradients) + [False] * (len(self.params) - len(compute_gradients))
        return tuple(
            gradients.get(p) if flag else None for p, flag in zip(self.params, flags, strict=True)
        )

    def _operation(
        self, wrt: tuple[str, ...], inputs: Sequence[Any]
    ) -> tuple[Differentiable, tuple[str, ...], list[Any]]:
        """The compiled function an operation's call runs, the names of ``wrt`` among its
        parameters, and the values of the call with ``inputs``."""
        return self, wrt, bind_in_order(self, inputs)

    def _run_plain(self, inputs: Sequence[Any]) -> Any:
        """The function run as it is, on an operation's ``inputs``."""
        return self.fn(*bind_in_order(self, inputs))


def _of_flattened(method: str) -> Callable[..., Any]:
    """``method`` of a :class:`BoundDifferentiable`: that of the compiled function of
    its def, for the names of ``wrt`` among that function's parameters."""

    def run(self: BoundDifferentiable, wrt: Wrt = None) -> Any:
        function, names, _ = self.flattened(wrt)
        return getattr(function, method)(list(names))

    run.__name__ = run.__qualname__ = method
    return front_door(run)


class BoundDifferentiable(Differentiable):
    """``differentiable(model.loss)``, ``differentiable(Sigmoid())``,
    ``differentiable(functools.partial(f, a))``: a compiled function of the parameters
    the call shows (``x`` of ``model.loss(x)``). Calling it runs the method; ``grad``,
    ``value_and_grad`` (``wrt="self.W"`` too), ``vjp`` and ``jvp`` take it as they take
    ``model.loss``. The object is seen as the structure of its attributes
    (:class:`~autodiff_tutor.pytree.ObjectView`), which are read at every call and
    passed to the compiled code as parameters (``self_W``): a changed or rebound
    attribute is never stale, and a new set of attributes gets its own compilation.
    As an operation (in a trace, in another compiled function) its inputs are the
    visible parameters; the attributes are held fixed there.

    >>> import numpy as np
    >>> from autodiff_tutor import grad
    >>> class Model:
    ...     def __init__(self):
    ...         self.W = np.eye(2)
    ...     def loss(self, x):
    ...         return np.sum((x @ self.W) ** 2)
    >>> model = Model()
    >>> loss = differentiable(model.loss)
    >>> loss(np.ones(2)), grad(loss)(np.ones(2)).tolist()
    (np.float64(2.0), [2.0, 2.0])
    >>> model.W = 2 * np.eye(2)
    >>> grad(loss, wrt="self.W")(np.ones(2)).tolist()
    [[4.0, 4.0], [4.0, 4.0]]
    >>> print(loss.forward_source().splitlines()[1])
    #   self = a Model: attributes W read at each call (as self_W)
    """

    def __init__(self, target: Callable[..., Any]):
        self.bound_callable = target  # (what arguments.unwrap sees through)
        super().__init__(target)
        fn = self._unwrapped(None).fn
        called = fn.__name__ == "__call__" and not inspect.ismethod(target)
        self.name = type(target).__name__ if called else function_name(fn)  # Sigmoid()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and not self._holds_traced():  # traced attributes: traced in the body
            traced, outputs = call_if_traced(self, args)
            if traced:
                return outputs
        return self.bound_callable(*args, **kwargs)

    def _unwrapped(self, wrt: Wrt) -> Any:
        return unwrap(self.bound_callable, wrt)

    def _holds_traced(self) -> bool:
        """Whether an attribute or stored argument is a traced array."""
        return any(is_traced(leaf) for leaf in flatten(list(self._unwrapped(None).prefix))[0])

    def flattened(
        self, wrt: Wrt = None, args: Sequence[Any] | None = None
    ) -> tuple[Differentiable, tuple[str, ...], list[Any]]:
        """The compiled function of the underlying def with the object's attributes as
        parameters, the names of ``wrt`` among its parameters, and the values of a call
        with ``args`` (placeholders where none are given: the code shown by ``show``)."""
        unwrapped = self._unwrapped(wrt)
        inner = differentiable(unwrapped.fn)
        if args is None:
            required = [p for p in self.signature.parameters.values() if is_required(p)]
            args = [None] * len(required)
        values = [*unwrapped.prefix, *args]
        flat = flatten_call(inner, unwrapped.wrt, values, dict(unwrapped.keywords))
        if flat is None:  # a partial of a def: its stored arguments are parameters too
            bound = bind_arguments(inner, values, dict(unwrapped.keywords))
            return inner, inner.wrt_names(unwrapped.wrt), bound
        return flat.function, flat.wrt, flat.args

    def front_end(self) -> FrontEnd:
        return self.flattened()[0].front_end()

    derivative = _of_flattened("derivative")
    tangent = _of_flattened("tangent")
    stages = _of_flattened("stages")
    specialized_sources = _of_flattened("specialized_sources")

    def all_specialized(self) -> list[str]:
        return differentiable(self._unwrapped(None).fn).all_specialized()  # the method's def

    def heading(self) -> str:
        unwrapped = self._unwrapped(None)
        inner = differentiable(unwrapped.fn)
        given = dict(zip(inner.params, unwrapped.prefix, strict=False))
        given.update(unwrapped.keywords)
        return header(self.name, given, self.flattened()[0]) + "\n"

    # -- the differentiable-operation protocol: the visible parameters are its inputs

    def op_forward(self, *inputs: Any) -> tuple[tuple[Any, ...], Any]:
        if not any(is_float_value(v) for v in inputs):  # nothing to differentiate
            out = self._run_plain(inputs)
            return (out if isinstance(out, tuple) else (out,)), None
        return super().op_forward(*inputs)

    def op_backward(
        self, d_outputs: tuple[Any, ...], compute_gradients: tuple[bool, ...], saved: Any
    ) -> tuple[Any, ...]:
        if saved is None:  # no floating-point input
            return (None,) * len(self.params)
        return super().op_backward(d_outputs, compute_gradients, saved)

    def _operation(
        self, wrt: tuple[str, ...], inputs: Sequence[Any]
    ) -> tuple[Differentiable, tuple[str, ...], list[Any]]:
        return self.flattened(wrt, inputs)

    def _run_plain(self, inputs: Sequence[Any]) -> Any:
        return self.bound_callable(*inputs)


def _describe(key: Any) -> str:
    """One argument of a guard key, as a reader says it: ``float64[3, 4]``, ``int = 2``."""
    kind, detail = key if isinstance(key, tuple) else (key, None)
    if isinstance(kind, tuple):  # (shape, dtype) of an array
        return f"{detail}[{', '.join(map(str, kind))}]"
    return f"{kind.__name__} = {detail!r}" if isinstance(key, tuple) else kind.__name__


# The compiled wrapper is kept on the function itself: the two refer to each other
# and are freed together (a cache keyed by the function would keep it alive).
_WRAPPER = "_autodiff_tutor_differentiable"


def _read_called(front: FrontEnd, call: Call) -> None:
    """Read a function of yours that ``front``'s program calls: compiled in turn, or run
    as the plain function where it may write into its arguments. Its refusal is raised
    with a note that says where it is called."""
    node = call.node if hasattr(call.node, "lineno") else call.keeper.origin
    where = front.parsed.location(node)
    if call.function is None:  # h(x) with h a parameter: nothing to read
        name = front.program.user_name(call.node.func.id)  # not its version
        raise UnsupportedSyntaxError(
            f"calling the local variable {name!r} is not supported: the compiler cannot "
            "read the function it holds, which may change your arrays in place",
            where,
            hint="call a function by the name it is defined with (def f, or a global), "
            "not through a variable that holds one",
        )
    if not (call.compiled or may_write_in_place(call.function)):
        return  # run as the plain function, it leaves its arguments as they were
    try:
        differentiable(call.function).front_end()
    except AutodiffError as error:
        how = "" if call.compiled else ", which runs it as the plain function"
        add_note(
            error,
            f"{call.function.__name__} is called by {front.program.name}{how}:\n{where.render()}",
        )
        raise


def _remember(fn: Callable[..., Any], wrapper: Differentiable) -> Differentiable:
    try:
        fn.__dict__[_WRAPPER] = wrapper
    except (AttributeError, TypeError):
        pass  # no __dict__ (a bound method, made anew at each access): nothing to reuse
    return wrapper


@front_door
def differentiable(fn: Callable[..., Any] | None = None, backend: str = "numpy") -> Any:
    """Decorator: make ``fn`` differentiable by the source-to-source compiler;
    ``backend="numba"`` runs its specialized pairs as fused loops (:mod:`.compiler.fused`),
    also written ``@differentiable(backend="numba")``.

    ``fn`` is a def or a lambda; a bound method (``model.loss``), an object whose
    ``__call__`` is written in Python, or a ``functools.partial`` of one gives a
    :class:`BoundDifferentiable` of the parameters the call shows.

    >>> import numpy as np
    >>> @differentiable
    ... def cube(x):
    ...     return x ** 3
    >>> cube(2.0)
    8.0
    >>> square = lambda x: x * x
    >>> differentiable(square).name, differentiable(square)(3.0)
    ('square', 9.0)
    >>> differentiable(backend="numpy")(square).name  # the decorator with arguments
    'square'
    """
    if fn is None:  # @differentiable(backend=...): the decorator, given its options
        return functools.partial(differentiable, backend=backend)
    if backend != "numpy":
        return fused.with_backend(differentiable(fn), backend)
    if isinstance(fn, Differentiable):
        return fn
    gradient_of = getattr(fn, "_gradient_of", None)
    if gradient_of is None and unwrap(fn, None) is not None:
        return BoundDifferentiable(fn)  # a bound method, a callable object, a partial
    check_function(fn)
    known = getattr(fn, "__dict__", {}).get(_WRAPPER)
    if gradient_of is None:
        return known or _remember(fn, Differentiable(fn))
    # grad(f): differentiate its generated gradient function, made again where f's
    # own pair was (a name f reads was rebound)
    compiled, wrt = gradient_of
    derivative = compiled.derivative(wrt)
    if known is not None and known.made_from is derivative:
        return known
    plain = compile_gradient_function(derivative, gives_one(wrt, len(derivative.wrt)))
    wrapper = Differentiable(plain)
    wrapper.made_from = derivative
    wrapper.gradient_function = fn
    return _remember(fn, wrapper)


register_op_factory(differentiable)  # generated code calls user helpers through it


def run_pair(compiled: Differentiable, pair: Any, values: Sequence[Any]) -> tuple[Any, Any]:
    """Run a forward/backward ``pair`` (the general one, or one specialized on the
    arguments' shapes) on checked ``values`` with the seed 1 of the scalar output: the
    value and the gradients, arrays of the caller's own (:func:`owned`)."""
    out, memory = pair.forward(*values)
    if isinstance(out, list):  # a list, or a dict (compiled as its values)
        refuse_structured_output(compiled, out)
    seed = scalar_seed(compiled, out)  # a located error where out is not a scalar
    return out, owned(pair.backward(seed, memory), [seed, *values])


def cached_call(
    compiled: Differentiable, derivative: Derivative, args: tuple[Any, ...]
) -> tuple[Any, tuple[Any, ...]] | None:
    """A call of ``value_and_grad`` after one that went through every check: the pair
    specialized on the arguments' shapes and dtypes, cached on ``derivative`` (made at
    the second call with them, ``f.show(specialized=True)``), else the general pair.
    Where the specialization's guard key assures the checks (float arrays for ``wrt``,
    a float numpy scalar out), none runs again; else the call must be plain
    (:func:`plain_call`). Where a check inside the specialized code fails (a custom
    op's output of another shape, a branch going the other way), the specialization is
    dropped and the general pair runs the call. ``None``, before anything ran, hands
    the call to the checks.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(x * x)
    >>> compiled = differentiable(f)
    >>> out, (g,) = cached_call(compiled, compiled.derivative(0), (np.arange(3.0),))
    >>> float(out), g.tolist()
    (5.0, [0.0, 2.0, 4.0])
    """
    if len(args) != len(derivative.program.params):
        return None
    specialized = specialized_pair(derivative, args)
    try:
        if specialized is not None and specialized.seed is not None:
            out, memory = specialized.forward(*args)  # the guard key assures the checks
            if type(out) is type(specialized.seed):
                gradients = specialized.backward(specialized.seed, memory)
                if specialized.unsure:  # a custom op's gradients: are they fresh?
                    return out, owned(gradients, args, specialized.unsure)
                return out, gradients
            return out, owned(specialized.backward(scalar_seed(compiled, out), memory), args)
        if not plain_call(args, derivative.wrt_positions):
            return None
        return run_pair(compiled, specialized or derivative, args)
    except GuardFailed:  # a custom op's shape, a branch's path: not as probed
        derivative.specializations[specialized.key] = None  # general code for this key
        return run_pair(compiled, derivative, args)


def _defaults_of(fn: Any) -> tuple[Any, Any]:
    """The objects a function's defaults are read from (rebinding either is a change
    of its signature)."""
    return getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None)
