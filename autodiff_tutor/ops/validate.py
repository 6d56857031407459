"""Checking what a backward function returned, against what its inputs were.

A backward must return one gradient per input: ``None`` where ``compute_gradients``
is false, otherwise an array of the input's shape, dtype and array module. Nothing is
summed, broadcast or cast behind the user's back: every mismatch becomes a
:class:`GradientProblem` whose ``kind`` says which rule was broken, so that
``op_backward`` can raise one clear error and ``check_op`` can sort the problems into
its categories.

>>> import numpy as np
>>> specs = describe_inputs(("x",), (np.ones((2, 3)),))
>>> [p.kind for p in gradient_problems("double", specs, (True,), (np.ones(3),))]
['shape']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.runtime.backend import array_module, shape_of

__all__ = [
    "GradientProblem",
    "InputSpec",
    "as_gradient_tuple",
    "describe_inputs",
    "gradient_problems",
    "is_array",
    "numpy_gradients_fine",
    "same_numpy_inputs",
]

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
