"""Second derivatives at the front door: ``hvp`` (a Hessian-vector product) and ``hessian``.

Both are forward over reverse: the compiler writes the gradient of ``f`` as a plain
function (``f_grad``), then differentiates that function again in forward mode
(``f_grad_jvp``). A Hessian-vector product costs about as much as a few gradients;
the Hessian is one product per entry of the input (fine for the small inputs of a
lesson, Newton's method on a few parameters). Both work inside a function that is
itself differentiated too, called where they are made (``hvp(f)(x, v)``,
``hessian(f)(x)``; see :mod:`.compiler.front.desugar.derivative_calls`).

>>> import numpy as np
>>> def f(x):
...     return np.sum(x ** 3)
>>> hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0])).tolist()
[6.0, 0.0]
>>> hessian(f)(np.array([1.0, 2.0])).tolist()
[[6.0, 0.0], [0.0, 12.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autodiff_tutor.api import differentiable, grad, jvp
from autodiff_tutor.api_checks import located
from autodiff_tutor.errors import ArgumentError, front_door
from autodiff_tutor.pickling import MadeFunction
from autodiff_tutor.runtime.backend import array_module, shape_of

__all__ = ["hessian", "hvp"]


def _position(f: Callable[..., Any], wrt: int | str, door: str) -> int:
    """The position of the one input ``wrt`` names."""
    if isinstance(wrt, bool) or not isinstance(wrt, (int, str)):
        raise located(
            ArgumentError,
            f"{door} takes one input to differentiate, by position or name; got wrt={wrt!r}",
            hint="for several inputs, pass them as one array, or take one block at a time",
        )
    params = differentiable(f).params
    names = differentiable(f).wrt_names(wrt)
    return params.index(names[0])


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

    def product(*args: Any) -> Any:
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
        return jvp(gradient, tuple(values), tuple(tangents))[1]

    product.__name__ = f"hvp_{differentiable(f).name}"
    return MadeFunction(product, hvp, (f, wrt))


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

    def second_derivatives(*args: Any) -> Any:
        x = args[_position(f, wrt, "hessian")]
        xp = array_module(x)
        shape = shape_of(x)
        size = int(xp.asarray(x).size)
        columns = []
        for i in range(size):
            basis = xp.zeros(size, dtype=xp.asarray(x).dtype)
            basis[i] = 1.0
            columns.append(xp.reshape(product(*args, xp.reshape(basis, shape)), (size,)))
        # the Hessian is symmetric: column i is row i
        return xp.reshape(xp.stack(columns), (*shape, *shape))

    second_derivatives.__name__ = f"hessian_{differentiable(f).name}"
    return MadeFunction(second_derivatives, hessian, (f, wrt))
