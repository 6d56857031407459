"""What every corpus program entry carries."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from oracles import autograd_gradient, structured_central_difference

from autodiff_tutor.pytree import flatten


@dataclass
class Program:
    fn: Callable[..., Any]
    sample: Callable[[Any], tuple]
    wrt: tuple[int, ...] = (0,)
    loop_free: bool = False  # no for/while in the user's code (second-order candidates)
    autograd: bool = True  # autograd can run it as written (math.* on boxes cannot)
    refused: str = ""  # why the compiler refuses it (recorded as xfail strict)
    tracing: str = ""  # why tracing refuses it (a located error, checked in the tracing test)

    @property
    def name(self) -> str:
        return self.fn.__name__


def check_gradients(program: Program, args: tuple, gradients: tuple) -> None:
    """Each gradient has its argument's structure and matches central differences and
    (where autograd can run the program) autograd."""
    for index, gradient in zip(program.wrt, gradients, strict=True):
        assert same_structure(gradient, args[index])  # the same structure as the argument
        expected = structured_central_difference(program.fn, args, index)
        for got, want in zip(leaves_of(gradient), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if program.autograd:
            oracle = autograd_gradient(program.fn, args, index)
            for got, want in zip(leaves_of(gradient), leaves_of(oracle), strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


def leaves_of(value: Any) -> list[np.ndarray]:
    """The float64 arrays of a (structured) value, in order."""
    return [np.asarray(v, dtype=np.float64) for v in flatten(value)[0]]


def same_structure(a: Any, b: Any) -> bool:
    """Whether two values have the same structure (lists, tuples, dicts) and leaf count."""
    return flatten(a)[1][0] == flatten(b)[1][0] and len(flatten(a)[0]) == len(flatten(b)[0])
