"""The derivative functions that ``grad``, ``value_and_grad``, ``hvp`` and ``jvp`` called
inside differentiated code stand for.

The compiler's front end rewrites such a call into a call of a generated function
(:mod:`.compiler.front.desugar.derivative_calls`); this module tells the front doors
apart and makes those functions, registering itself with the front end when the
package is imported (the front doors live above the compiler):

- ``grad(f, wrt)``: ``f_grad``, forward, seed and backward in a row;
- ``value_and_grad(f, wrt)``: ``f_value_and_grad``, returning the value first;
- ``hvp(f, wrt)``: the tangent function of ``f_grad`` (forward over reverse), its
  tangent picked;
- ``jvp(f, ...)``: the tangent function of ``f``.

>>> import numpy as np
>>> from autodiff_tutor import grad
>>> def f(x):
...     return np.sum(x ** 3)
>>> step = lambda x: np.sum(x - grad(f)(x) / 6.0)  # grad inside: x - x**2 / 2
>>> grad(step)(np.array([1.0, 2.0])).tolist()
[0.0, -1.0]
"""

from __future__ import annotations

import inspect
from typing import Any

from autodiff_tutor import api, api_second_order
from autodiff_tutor.compiled import BoundDifferentiable, Differentiable, differentiable
from autodiff_tutor.compiler.front.desugar.derivative_calls import (
    Made,
    Request,
    register_derivative_maker,
)
from autodiff_tutor.compiler.pipeline import compile_gradient_function
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.pickling import MadeFunction

_DOORS = {
    id(api.grad): "grad",
    id(api.value_and_grad): "value_and_grad",
    id(api.jvp): "jvp",
    id(api.vjp): "vjp",
    id(api_second_order.hvp): "hvp",
    id(api_second_order.hessian): "hessian",
}


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
        single = isinstance(request.wrt, (int, str))
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
