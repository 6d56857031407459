"""``DifferentiableFunction``: an operation with a hand-written backward.

Subclass it, say in the constructor what the backward needs, and write two methods:

- ``forward(self, *inputs)`` returns the outputs, then the memory values (a bare
  value when there is only one);
- ``backward(self, *d_outputs, compute_gradients, *saved_inputs, *saved_outputs,
  *memory)`` receives, positionally: one gradient per output, the tuple of
  ``compute_gradients`` flags (one per input), then the inputs (if
  ``save_inputs_for_backward``), the outputs (if ``save_outputs_for_backward``) and
  the ``num_memory_values`` memory values. It returns one gradient per input (a bare
  value when there is one input), ``None`` where the flag is false. The gradients and
  saved inputs and outputs it receives are read-only numpy arrays: a gradient given is
  shared with other gradients, a saved input is the caller's array (write
  ``d_x = d_y * ...``, never ``d_y *= ...``); the memory values are the op's own.

Only what is declared is kept alive between the two passes. The object is called like
a function, and implements the shared protocol of :mod:`autodiff_tutor.protocol`
(``op_forward`` / ``op_backward``), so it is a primitive to the compiler, to the
tracing mode and to ``check_op``. ``op_backward`` validates what the backward
returned (count, shape, dtype, array module, ``None`` only where not requested) and
raises :class:`~autodiff_tutor.errors.BackwardOutputError` on a mismatch: nothing is
summed, broadcast or cast silently. Every mismatch is a :class:`GradientProblem` whose
``kind`` says which rule was broken (:func:`gradient_problems`), so that
``op_backward`` raises one clear error and ``check_op`` sorts the problems into its
categories. Arguments that ``forward`` or ``backward`` cannot
take fail with a clear :class:`~autodiff_tutor.errors.ArgumentError` (not a
``TypeError`` from inside), checked once per function and argument count.

>>> import numpy as np
>>> class Cube(DifferentiableFunction):
...     def __init__(self):
...         super().__init__(save_inputs_for_backward=True)
...     def forward(self, x):
...         return x * x * x
...     def backward(self, d_y, compute_gradients, x):
...         return 3 * x * x * d_y
>>> cube = Cube()
>>> cube(np.array([1.0, 2.0]))
array([1., 8.])
>>> op_vjp(cube, (np.array([1.0, 2.0]),), (np.ones(2),))[1]
(array([ 3., 12.]),)
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import (
    ArgumentError,
    AutodiffError,
    BackwardOutputError,
    ForwardOutputError,
    NoDerivativeRuleError,
    SourceUnavailableError,
)
from autodiff_tutor.locations import location
from autodiff_tutor.ops.formats import strip_dims
from autodiff_tutor.protocol import call_if_traced
from autodiff_tutor.runtime.backend import array_module, ones_like, shape_of

__all__ = [
    "DifferentiableFunction",
    "GradientProblem",
    "InputSpec",
    "Saved",
    "as_gradient_tuple",
    "describe_inputs",
    "gradient_problems",
    "is_array",
    "numpy_gradients_fine",
    "op_vjp",
    "same_numpy_inputs",
]


@dataclass(slots=True)
class Saved:
    """What an op keeps between forward and backward: exactly what it declared.

    ``specs`` records each input's name, shape, dtype and array module (not the
    input itself), so the backward's result can be validated.

    >>> import numpy as np
    >>> from autodiff_tutor.ops import PReLUFunction
    >>> _, saved = PReLUFunction("BC").op_forward(np.ones((2, 3)), np.ones((1, 3)))
    >>> [spec.name for spec in saved.specs], len(saved.inputs), saved.outputs
    (['X', 'alpha'], 2, ())
    """

    specs: tuple[InputSpec, ...]
    inputs: tuple[Any, ...] = ()
    outputs: tuple[Any, ...] = ()
    memory: tuple[Any, ...] = ()


def _read_only(value: Any) -> Any:
    """A read-only view of a numpy array (anything else as it is).

    >>> _read_only(np.ones(2)).flags.writeable
    False
    """
    if type(value) is np.ndarray and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


def _check_count(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ArgumentError(
            f"{what} must be an integer >= {minimum}, got {value!r}",
            hint="see DifferentiableFunction's docstring for the constructor options",
        )
    return value


class DifferentiableFunction:
    """Base class of operations with a hand-written backward (see the module docstring).

    >>> import numpy as np
    >>> class Scale(DifferentiableFunction):
    ...     def forward(self, x, a):
    ...         return a * x
    ...     def backward(self, d_y, compute_gradients):
    ...         return d_y, None        # wrong on purpose: d(a x)/dx is a, not 1
    >>> Scale(save_inputs_for_backward=False).name
    'Scale'
    """

    # Class-level defaults: a subclass that forgets super().__init__() still works.
    num_outputs: int = 1
    save_inputs_for_backward: bool = False
    save_outputs_for_backward: bool = False
    num_memory_values: int = 0
    #: ``True`` promises that ``backward`` returns each gradient as a new array of its
    #: own on every call: not an input, not a view, not one array for two gradients.
    #: ``value_and_grad``'s compiled fast path then hands them to the caller without
    #: checking (it checks, and copies where needed, when this is ``False``). Set it on
    #: the class that defines ``backward``: see :meth:`promises_new_arrays`.
    returns_new_arrays: bool = False

    def __init__(
        self,
        num_outputs: int = 1,
        save_inputs_for_backward: bool = False,
        save_outputs_for_backward: bool = False,
        num_memory_values: int = 0,
        name: str | None = None,
    ) -> None:
        self.num_outputs = _check_count(num_outputs, "num_outputs", 1)
        self.num_memory_values = _check_count(num_memory_values, "num_memory_values", 0)
        self.save_inputs_for_backward = bool(save_inputs_for_backward)
        self.save_outputs_for_backward = bool(save_outputs_for_backward)
        if name is not None:
            self.name = name

    # --- what the user writes --------------------------------------------------------

    def forward(self, *inputs: Any) -> Any:
        """Compute the outputs (then the memory values) from the inputs."""
        raise NotImplementedError(f"{type(self).__name__} must define forward(self, ...)")

    def backward(self, *args: Any) -> Any:
        """Compute one gradient per input (see the module docstring for the arguments)."""
        raise NotImplementedError(f"{type(self).__name__} must define backward(self, ...)")

    # --- the protocol ----------------------------------------------------------------

    @property
    def name(self) -> str:
        """The op's name in messages and generated code (the class name by default)."""
        return self.__dict__.get("_name", type(self).__name__)

    @name.setter
    def name(self, value: str) -> None:
        self.__dict__["_name"] = value

    def input_names(self, num_inputs: int) -> tuple[str, ...]:
        """Names of the inputs, from ``forward``'s signature (``input<i>`` for ``*args``).

        >>> import numpy as np
        >>> class F(DifferentiableFunction):
        ...     def forward(self, X, alpha):
        ...         return X * alpha
        >>> F().input_names(2)
        ('X', 'alpha')
        """
        names = list(positional_names(self.forward))
        names += [f"input{i}" for i in range(len(names), num_inputs)]
        return tuple(names[:num_inputs])

    def op_forward(self, *inputs: Any) -> tuple[tuple[Any, ...], Saved]:
        """Run ``forward``; return ``(outputs, saved)`` as the protocol asks."""
        bind_arguments(self.forward, inputs, "forward", self, lambda: "the op's inputs")
        result = self.forward(*inputs)
        num_outputs = self.num_outputs
        expected = num_outputs + self.num_memory_values
        if expected > 1 and type(result) is tuple and len(result) == expected:
            values = result  # the common case: outputs and memory values as declared
        else:
            values = self._split_forward_result(result, expected)
        outputs = values[:num_outputs]
        saved = Saved(
            self._describe(inputs),
            inputs if self.save_inputs_for_backward else (),
            outputs if self.save_outputs_for_backward else (),
            values[num_outputs:],
        )
        return outputs, saved

    def promises_new_arrays(self) -> bool:
        """Whether ``returns_new_arrays`` is promised by the class whose ``backward``
        runs: a subclass that overrides ``backward`` does not inherit the promise.

        >>> from autodiff_tutor.ops.srelu import SReLUFunction
        >>> class Mine(SReLUFunction):
        ...     def backward(self, *args):
        ...         return super().backward(*args)
        >>> SReLUFunction("BC").promises_new_arrays(), Mine("BC").promises_new_arrays()
        (True, False)
        """
        owner = next(c for c in type(self).__mro__ if "backward" in c.__dict__)
        return owner.__dict__.get("returns_new_arrays") is True

    def direct_calls(self, num_inputs: int) -> tuple[str, ...] | None:
        """The names of the memory values, for a caller that has checked one call through
        the protocol and calls ``forward``/``backward`` itself from then on (the
        compiler's pair specialized on shapes, which checks every output and gradient
        against the probed call); ``None`` where ``op_forward``/``op_backward`` are
        overridden or ``backward``'s signature does not name them.

        >>> from autodiff_tutor.ops.srelu import SReLUFunction
        >>> SReLUFunction("BC").direct_calls(5)
        ('left', 'right')
        """
        cls = type(self)
        if cls.op_forward is not DifferentiableFunction.op_forward or (
            cls.op_backward is not DifferentiableFunction.op_backward
        ):
            return None
        names = positional_names(self.backward)
        saved = num_inputs if self.save_inputs_for_backward else 0
        saved += self.num_outputs if self.save_outputs_for_backward else 0
        if len(names) != self.num_outputs + 1 + saved + self.num_memory_values:
            return None  # *args, defaults: the protocol call binds them
        return names[len(names) - self.num_memory_values :]

    def _describe(self, inputs: tuple[Any, ...]) -> tuple[InputSpec, ...]:
        """The inputs' specs: the last call's when the numpy inputs have the same shapes
        and dtypes (an op is called again and again on the same signature)."""
        last = self.__dict__.get("_last_specs")
        if last is not None and same_numpy_inputs(last, inputs):
            return last
        specs = describe_inputs(self.input_names(len(inputs)), inputs)
        self.__dict__["_last_specs"] = specs
        return specs

    def _split_forward_result(self, result: Any, expected: int) -> tuple[Any, ...]:
        if expected == 1:
            if isinstance(result, (tuple, list)):
                raise ForwardOutputError(
                    f"forward of {self.name!r} returned {len(result)} values, but the op "
                    "declares num_outputs=1 and num_memory_values=0, so it must return one "
                    "array",
                    hint="return the output alone, or declare the extra values with "
                    "num_outputs=... / num_memory_values=...",
                )
            return (result,)
        if not isinstance(result, (tuple, list)) or len(result) != expected:
            got = len(result) if isinstance(result, (tuple, list)) else 1
            raise ForwardOutputError(
                f"forward of {self.name!r} returned {got} value(s), but the op declares "
                f"num_outputs={self.num_outputs} and num_memory_values="
                f"{self.num_memory_values}, so it must return {expected}: the outputs, "
                "then the memory values",
                hint="return them as a tuple, outputs first",
            )
        return tuple(result)

    def op_backward_raw(
        self, d_outputs: tuple[Any, ...], compute_gradients: tuple[bool, ...], saved: Saved
    ) -> Any:
        """Call the user's ``backward`` and return its result unchecked.

        ``check_op`` uses this to sort problems into categories; everything else calls
        :meth:`op_backward`, which validates. When no gradient is requested the user's
        backward is not called at all.
        """
        d_outputs = self._d_outputs(d_outputs)
        flags = gradient_flags(compute_gradients, len(saved.specs), self)
        return self._run_backward(d_outputs, flags, saved)

    def _d_outputs(self, d_outputs: Any) -> tuple[Any, ...]:
        d_outputs = tuple(d_outputs)
        if len(d_outputs) != self.num_outputs:
            raise ArgumentError(
                f"op_backward of {self.name!r} got {len(d_outputs)} output gradient(s) "
                f"for {self.num_outputs} output(s)",
                hint="pass one gradient per output, in a tuple",
            )
        return d_outputs

    def _run_backward(
        self, d_outputs: tuple[Any, ...], flags: tuple[bool, ...], saved: Saved
    ) -> Any:
        if not any(flags):  # nothing requested: nothing to compute
            return (None,) * len(flags)
        args = (*d_outputs, flags, *saved.inputs, *saved.outputs, *saved.memory)
        bind_arguments(self.backward, args, "backward", self, lambda: self._backward_layout(saved))
        # read-only: a gradient given is shared with other gradients, an input is the
        # caller's, an output is read on; the memory values are the op's own
        shared = len(args) - len(saved.memory)
        views = [_read_only(a) if i < shared else a for i, a in enumerate(args)]
        try:
            result = self.backward(*views)
        except ValueError as error:
            if "read-only" not in str(error):
                raise
            raise BackwardOutputError(
                f"the backward of {self.name!r} writes into an array it is given (an "
                "output's gradient, a saved input or output) in place; those arrays are "
                "shared with other gradients and with your inputs",
                hint="compute a new array (d_x = d_y * 3 * x * x), not d_y *= ... or "
                "d_y[...] = ...",
            ) from None
        # a gradient given, returned as it is: the array itself, writable as before
        originals = {id(v): a for v, a in zip(views, args, strict=True) if v is not a}
        if isinstance(result, tuple):
            return tuple(originals.get(id(r), r) for r in result)
        return originals.get(id(result), result)

    def op_backward(
        self, d_outputs: tuple[Any, ...], compute_gradients: tuple[bool, ...], saved: Saved
    ) -> tuple[Any, ...]:
        """Run the user's ``backward`` and validate its result (one gradient per input):
        a mismatch raises :class:`~autodiff_tutor.errors.BackwardOutputError`.

        >>> import numpy as np
        >>> class Double(DifferentiableFunction):
        ...     def forward(self, x):
        ...         return 2 * x
        ...     def backward(self, d_y, compute_gradients):
        ...         return 2 * d_y
        >>> outputs, saved = Double().op_forward(np.ones(2))
        >>> Double().op_backward((np.ones(2),), (True,), saved)
        (array([2., 2.]),)
        >>> Double().op_backward((np.ones(3),), (True,), saved)
        Traceback (most recent call last):
            ...
        autodiff_tutor.errors.BackwardOutputError: ...
        """
        if type(d_outputs) is not tuple or len(d_outputs) != self.num_outputs:
            d_outputs = self._d_outputs(d_outputs)  # converted, or a clear error
        flags = gradient_flags(compute_gradients, len(saved.specs), self)
        result = self._run_backward(d_outputs, flags, saved)
        if type(result) is tuple and numpy_gradients_fine(saved.specs, flags, result):
            return result  # checked with a few comparisons: the common case
        problems = gradient_problems(self.name, saved.specs, flags, result)
        if problems:
            raise BackwardOutputError(
                "\n".join(p.message for p in problems),
                hint="a gradient has exactly its input's shape, dtype and array module; "
                "check_op(op, *inputs) runs every check and explains each one",
            )
        grads = as_gradient_tuple(result, len(saved.specs))
        assert grads is not None  # a wrong count is a problem above
        return grads

    def _backward_layout(self, saved: Saved) -> str:
        parts = [f"{self.num_outputs} output gradient(s)", "compute_gradients"]
        if self.save_inputs_for_backward:
            parts.append(f"{len(saved.inputs)} input(s)")
        if self.save_outputs_for_backward:
            parts.append(f"{len(saved.outputs)} output(s)")
        if self.num_memory_values:
            parts.append(f"{self.num_memory_values} memory value(s)")
        return ", then ".join(parts)

    def op_jvp(
        self, inputs: tuple[Any, ...], tangents: tuple[Any, ...]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """Forward mode (``jvp``) through the op: not available, a clear error instead.

        A custom op has a hand-written backward (reverse mode) and no forward-mode
        rule, so ``jvp`` cannot go through it; the error names the op and points at
        the user's call.
        """
        raise NoDerivativeRuleError(
            f"jvp cannot go through the custom op {self.name!r}: it has a hand-written "
            "backward (reverse mode) but no forward-mode (jvp) rule",
            location(),
            hint="use grad or vjp (reverse mode) for functions that call it, or write the "
            "computation with operations that have derivative rules",
        )

    op_jvp.unavailable = True  # the compiler refuses jvp through it at the user's call

    def __call__(self, *inputs: Any) -> Any:
        """Run forward and return the outputs only (a bare value for one output).

        Called on traced values (tracing mode), the op records itself on the trace,
        so its hand-written backward is the one used. Formatted inputs lose their
        labels (as in MATLAB: the op works on the data; an interface function such
        as :func:`~autodiff_tutor.ops.srelu.srelu` labels the output again).
        """
        try:
            traced, outputs = call_if_traced(self, inputs)
            if not traced:
                outputs = self.op_forward(*strip_dims(inputs))[0]
                outputs = outputs[0] if self.num_outputs == 1 else outputs
        except AutodiffError as error:  # located at the user's call of the op
            error.located_at(location())
            raise
        return outputs

    def source(self) -> str:
        """The source of ``forward`` and ``backward``, to show a student.

        >>> print(DifferentiableFunction().source().splitlines()[0].strip())
        def forward(self, *inputs: Any) -> Any:
        """
        parts = []
        for method in ("forward", "backward"):
            fn = getattr(type(self), method)
            try:
                parts.append(textwrap.dedent(inspect.getsource(fn)))
            except (OSError, TypeError) as exc:
                raise SourceUnavailableError(
                    f"the source of {type(self).__name__}.{method} cannot be found",
                    hint="define the class in a file or a notebook cell (not with exec)",
                ) from exc
        return "\n".join(parts)

    def __repr__(self) -> str:
        flags = []
        if self.save_inputs_for_backward:
            flags.append("save_inputs_for_backward=True")
        if self.save_outputs_for_backward:
            flags.append("save_outputs_for_backward=True")
        if self.num_memory_values:
            flags.append(f"num_memory_values={self.num_memory_values}")
        return (
            f"<{self.name}: {self.num_outputs} output(s){', ' if flags else ''}{', '.join(flags)}>"
        )


def op_vjp(
    op: Any,
    inputs: tuple[Any, ...],
    d_outputs: tuple[Any, ...] | None = None,
    compute_gradients: tuple[bool, ...] | None = None,
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Run any protocol op forward and backward: ``(outputs, d_inputs)``.

    ``d_outputs`` defaults to ones shaped like each output, ``compute_gradients`` to
    all true. Works for a :class:`DifferentiableFunction` and for compiled functions.

    >>> import numpy as np
    >>> from autodiff_tutor.ops.prelu import PReLUFunction
    >>> X, alpha = np.array([[-2.0, 3.0]]), np.array([[0.5, 0.5]])
    >>> outputs, (d_X, d_alpha) = op_vjp(PReLUFunction("BC"), (X, alpha))
    >>> outputs[0].tolist(), d_X.tolist(), d_alpha.tolist()
    ([[-1.0, 3.0]], [[0.5, 1.0]], [[-2.0, 0.0]])
    """
    outputs, saved = op.op_forward(*inputs)
    if d_outputs is None:
        d_outputs = tuple(ones_like(y) for y in outputs)
    if compute_gradients is None:
        compute_gradients = (True,) * len(inputs)
    return outputs, tuple(op.op_backward(tuple(d_outputs), tuple(compute_gradients), saved))


_SIGNATURES: dict[Any, inspect.Signature] = {}


def signature_of(fn: Any) -> inspect.Signature:
    """``inspect.signature(fn)``, computed once per function (ops call it every time).

    >>> class F:
    ...     def forward(self, X, alpha):
    ...         return X * alpha
    >>> list(signature_of(F().forward).parameters)
    ['X', 'alpha']
    """
    function = getattr(fn, "__func__", fn)
    key = (function, hasattr(fn, "__self__"))
    if key not in _SIGNATURES:
        _SIGNATURES[key] = inspect.signature(fn)
    return _SIGNATURES[key]


_BINDS: set[Any] = set()


def bind_arguments(fn: Any, args: tuple[Any, ...], method: str, op: Any, layout: Any) -> None:
    """Fail clearly when ``fn`` cannot take ``args`` (instead of a TypeError inside).

    Binding positional arguments depends on their count only, so a count that bound
    once is remembered and not bound again. ``layout()`` (the expected parameters, for
    the hint) is only built on an error.

    >>> class Op:
    ...     name = "square"
    ...     def forward(self, x):
    ...         return x * x
    >>> bind_arguments(Op().forward, (1.0, 2.0), "forward", Op(), lambda: "x")
    Traceback (most recent call last):
        ...
    autodiff_tutor.errors.ArgumentError: forward of 'square' cannot take the 2 argument(s)...
    """
    key = (getattr(fn, "__func__", fn), hasattr(fn, "__self__"), len(args))
    try:
        if key in _BINDS:
            return
        signature = signature_of(fn)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*args)
    except TypeError as exc:
        raise ArgumentError(
            f"{method} of {op.name!r} cannot take the {len(args)} argument(s) it is given: {exc}",
            hint=f"its parameters after self must be: {layout()}",
        ) from None
    _BINDS.add(key)


def positional_names(fn: Any) -> tuple[str, ...]:
    """The names of ``fn``'s positional parameters (none when it has no signature).

    >>> def forward(X, alpha, *rest, scale=1.0):
    ...     return X
    >>> positional_names(forward)
    ('X', 'alpha')
    """
    try:
        parameters = signature_of(fn).parameters.values()  # cached per function
    except (TypeError, ValueError):
        return ()
    return tuple(
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )


def gradient_flags(compute_gradients: Any, num_inputs: int, op: Any) -> tuple[bool, ...]:
    """``compute_gradients`` as a tuple of one bool per input of ``op`` (a clear error
    for another count).

    >>> class Op:
    ...     name = "op"
    >>> gradient_flags((True, 0), 2, Op()), gradient_flags(True, 1, Op())
    ((True, False), (True,))
    """
    if type(compute_gradients) is tuple and len(compute_gradients) == num_inputs:
        if all(type(f) is bool for f in compute_gradients):
            return compute_gradients  # the generated code's literal tuple: nothing to convert
    if isinstance(compute_gradients, bool):
        compute_gradients = (compute_gradients,)
    flags = tuple(bool(f) for f in compute_gradients)
    if len(flags) != num_inputs:
        raise ArgumentError(
            f"compute_gradients for {op.name!r} has {len(flags)} flag(s) for {num_inputs} input(s)",
            hint="pass one bool per input",
        )
    return flags


KINDS = ("count", "missing", "unrequested", "type", "shape", "dtype", "module")


def is_array(value: Any) -> bool:
    """Whether ``value`` is an array (or a numpy scalar): something with shape and dtype.

    >>> import numpy as np
    >>> is_array(np.zeros(2)), is_array(np.float32(1)), is_array(1.0)
    (True, True, False)
    """
    return hasattr(value, "shape") and hasattr(value, "dtype")


@dataclass(frozen=True)
class InputSpec:
    """What a gradient must look like for one input: name, shape, dtype, array module.

    Only these facts are kept between forward and backward, never the input itself
    (unless the op declares ``save_inputs_for_backward``).

    >>> import numpy as np
    >>> describe_inputs(("tl",), (np.zeros((1, 3)),))[0].label
    "input 0 ('tl')"
    """

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: Any
    module: Any
    array: bool

    @property
    def label(self) -> str:
        """``input 2 ('tl')``: how error messages name the input."""
        return f"input {self.index} ({self.name!r})"


def describe_inputs(names: tuple[str, ...], inputs: tuple[Any, ...]) -> tuple[InputSpec, ...]:
    """One :class:`InputSpec` per input.

    >>> import numpy as np
    >>> describe_inputs(("x",), (np.ones(2, np.float32),))[0].dtype
    dtype('float32')
    """
    key = _numpy_key(names, inputs)
    if key is not None and key in _SPECS:
        return _SPECS[key]  # ops describe their inputs on every call: reuse the description
    specs = []
    for i, (name, value) in enumerate(zip(names, inputs, strict=True)):
        array = is_array(value)
        specs.append(
            InputSpec(
                index=i,
                name=name,
                shape=shape_of(value),
                dtype=getattr(value, "dtype", None),
                module=array_module(value) if array else None,
                array=array,
            )
        )
    if key is not None:
        if len(_SPECS) >= _MAX_SPECS:
            _SPECS.clear()
        _SPECS[key] = tuple(specs)
    return tuple(specs)


_SPECS: dict[tuple[Any, ...], tuple[InputSpec, ...]] = {}
_MAX_SPECS = 256


def _numpy_key(names: tuple[str, ...], inputs: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What an :class:`InputSpec` reads of numpy inputs (``None`` for any other value)."""
    if len(names) != len(inputs):
        return None  # describe_inputs raises its error
    key: list[Any] = [tuple(names)]
    for value in inputs:
        if not isinstance(value, (np.ndarray, np.generic)):
            return None
        key.append((type(value), value.shape, value.dtype))
    return tuple(key)


@dataclass(frozen=True)
class GradientProblem:
    """One broken rule in what a backward returned; ``kind`` is one of ``KINDS``.

    >>> GradientProblem("shape", 1, "gradient for input 1 has shape (3,)").kind in KINDS
    True
    """

    kind: str
    index: int | None
    message: str


def as_gradient_tuple(result: Any, num_inputs: int) -> tuple[Any, ...] | None:
    """The backward's result as a tuple, or ``None`` when its count is wrong.

    A bare value is accepted when there is one input.

    >>> import numpy as np
    >>> as_gradient_tuple(np.ones(2), 1)[0].shape
    (2,)
    >>> as_gradient_tuple((1, 2), 3) is None
    True
    """
    if isinstance(result, (tuple, list)):
        return tuple(result) if len(result) == num_inputs else None
    return (result,) if num_inputs == 1 else None


def _count_message(op: str, result: Any, num_inputs: int) -> str:
    got = len(result) if isinstance(result, (tuple, list)) else 1
    return (
        f"backward of {op!r} returned {got} value(s) but the op has {num_inputs} input(s); "
        "it must return one gradient per input (None where compute_gradients is False)"
    )


def _reduce_hint(got: tuple[int, ...], want: tuple[int, ...]) -> str:
    """A hint when ``want`` is ``got`` summed over some axes (a forgotten reduction)."""
    if len(got) < len(want):
        return ""
    lead = len(got) - len(want)
    axes = list(range(lead))
    for i, n in enumerate(want):
        m = got[lead + i]
        if n == 1 and m != 1:
            axes.append(lead + i)
        elif n != m:
            return ""
    if not axes:
        return ""
    return (
        f"; it looks like a sum over axes {tuple(axes)} is missing (the input was broadcast, "
        "so its gradient collects every contribution: sum with keepdims=True, e.g. "
        "reduce_to_channels)"
    )


def _check_one(op: str, spec: InputSpec, grad: Any) -> list[GradientProblem]:
    where = f"backward of {op!r}: gradient for {spec.label}"
    if not spec.array:
        if shape_of(grad) != ():
            msg = f"{where} has shape {shape_of(grad)}, but the input is a scalar (shape ())"
            return [GradientProblem("shape", spec.index, msg)]
        return []
    if not is_array(grad):
        msg = (
            f"{where} is a {type(grad).__name__}, expected an array of shape {spec.shape} "
            f"and dtype {spec.dtype}"
        )
        return [GradientProblem("type", spec.index, msg)]
    problems = []
    got = shape_of(grad)
    if got != spec.shape:
        msg = f"{where} has shape {got}, but the input has shape {spec.shape}"
        msg += _reduce_hint(got, spec.shape)
        problems.append(GradientProblem("shape", spec.index, msg))
    module = array_module(grad)
    if module is not spec.module:
        msg = (
            f"{where} is an array of {getattr(module, '__name__', module)}, but the input is "
            f"an array of {getattr(spec.module, '__name__', spec.module)} (use "
            "xp = array_module(X) and xp.<function>, never numpy for the user's data)"
        )
        problems.append(GradientProblem("module", spec.index, msg))
    elif grad.dtype != spec.dtype:
        msg = (
            f"{where} has dtype {grad.dtype}, but the input has dtype {spec.dtype} "
            "(a gradient keeps its input's dtype: watch out for float64 constants)"
        )
        problems.append(GradientProblem("dtype", spec.index, msg))
    return problems


def same_numpy_inputs(specs: tuple[InputSpec, ...], inputs: tuple[Any, ...]) -> bool:
    """Whether ``inputs`` are numpy arrays that ``specs`` describe exactly (so the
    specs can be reused instead of describing the inputs again).

    Only a plain ``numpy.ndarray`` of the spec's shape and dtype matches; anything
    else (a scalar, another array library, another shape) says ``False``, and the
    caller describes the inputs in full.

    >>> import numpy as np
    >>> specs = describe_inputs(("x",), (np.ones(2),))
    >>> same_numpy_inputs(specs, (np.zeros(2),)), same_numpy_inputs(specs, (np.zeros(3),))
    (True, False)
    """
    return len(specs) == len(inputs) and all(
        type(value) is np.ndarray
        and spec.module is np
        and value.shape == spec.shape
        and value.dtype == spec.dtype
        for spec, value in zip(specs, inputs)  # noqa: B905 (lengths compared first)
    )


def numpy_gradients_fine(
    specs: tuple[InputSpec, ...], compute_gradients: tuple[bool, ...], result: Any
) -> bool:
    """Whether ``result`` surely breaks no rule, decided with a few comparisons: a tuple
    with ``None`` exactly where a gradient is not wanted and, where it is, a numpy
    array of its numpy input's shape and dtype.

    ``False`` means "look closer", not "wrong": :func:`gradient_problems` then checks
    in full and says what is wrong, if anything (a list instead of a tuple, a numpy
    scalar, another array library all take that path).

    >>> import numpy as np
    >>> specs = describe_inputs(("x", "w"), (np.ones(2), np.ones(3)))
    >>> numpy_gradients_fine(specs, (True, False), (np.ones(2), None))
    True
    >>> numpy_gradients_fine(specs, (True, True), (np.ones(2), np.ones(2)))
    False
    """
    if type(result) is not tuple or len(result) != len(specs):
        if len(specs) != 1 or type(result) is tuple:
            return False
        result = (result,)  # one input: a bare gradient
    if len(compute_gradients) != len(specs):
        return False
    for spec, wanted, grad in zip(specs, compute_gradients, result):  # noqa: B905
        if grad is None:
            if wanted:
                return False
        elif not (
            wanted
            and type(grad) is np.ndarray
            and spec.module is np
            and spec.array
            and grad.shape == spec.shape
            and grad.dtype == spec.dtype
        ):
            return False
    return True


def gradient_problems(
    op: str,
    specs: tuple[InputSpec, ...],
    compute_gradients: tuple[bool, ...],
    result: Any,
) -> list[GradientProblem]:
    """Every rule the backward's ``result`` breaks (empty when it is right).

    >>> import numpy as np
    >>> specs = describe_inputs(("x", "w"), (np.ones(2), np.ones(2)))
    >>> [p.kind for p in gradient_problems("f", specs, (True, False), (np.ones(2), None))]
    []
    >>> [p.kind for p in gradient_problems("f", specs, (True, False), (None, np.ones(2)))]
    ['missing', 'unrequested']
    """
    if numpy_gradients_fine(specs, compute_gradients, result):
        return []  # the common case, without building a message per gradient
    grads = as_gradient_tuple(result, len(specs))
    if grads is None:
        return [GradientProblem("count", None, _count_message(op, result, len(specs)))]
    problems = []
    for spec, wanted, grad in zip(specs, compute_gradients, grads, strict=True):
        where = f"backward of {op!r}: gradient for {spec.label}"
        if grad is None:
            if wanted:
                msg = f"{where} is None, but compute_gradients[{spec.index}] is True"
                problems.append(GradientProblem("missing", spec.index, msg))
        elif not wanted:
            msg = (
                f"{where} was computed although compute_gradients[{spec.index}] is False; "
                "return None there (the caller does not need it, so computing it is wasted "
                "work)"
            )
            problems.append(GradientProblem("unrequested", spec.index, msg))
        else:
            problems.extend(_check_one(op, spec, grad))
    # a wrong or missing gradient first: an unrequested one is wasted work, not a bug
    return sorted(problems, key=lambda problem: problem.kind == "unrequested")
