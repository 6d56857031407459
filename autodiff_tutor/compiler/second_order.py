"""Refusals of second derivatives, located at the user's line.

A second derivative compiles the generated gradient function again (see
``compile_gradient_function``). When a step of it cannot be differentiated again (the
gradient of ``np.linalg.svdvals`` calls ``svd_grad``, which has no rule of its own), the
error would point into generated code the user never wrote. Each generated line
has its origin, the user's line it comes from (``line 8: np.linalg.svd(A)``, the
table :data:`~autodiff_tutor.locations.ORIGINS`): the refusal is moved there, keeping
its class, and says which generated step stops it.

>>> import numpy as np
>>> from autodiff_tutor import grad
>>> def f(A):
...     return np.sum(np.linalg.svdvals(A) ** 3)
>>> try:
...     grad(grad(f))(np.array([[2.0, 1.0], [0.0, 1.0]]))
... except Exception as error:
...     refusal = error
>>> refusal.location.line == f.__code__.co_firstlineno + 1, refusal.location.text.strip()
(True, 'return np.sum(np.linalg.svdvals(A) ** 3)')
>>> refusal.message.startswith("second derivatives through")
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from autodiff_tutor.compiler.front.desugar.attributes import APPEND, STORE
from autodiff_tutor.compiler.origins import Origin
from autodiff_tutor.errors import AutodiffError, Location
from autodiff_tutor.locations import ORIGINS

GENERATED = "<autodiff_tutor generated"
# the attribute a generated gradient function carries: the user's parsed function
ORIGIN_ATTRIBUTE = "_gradient_source_of"
F = TypeVar("F", bound=Callable[..., Any])


def at_users_line(stage: F) -> F:
    """Decorate a pipeline entry taking the function first: a refusal raised inside a
    generated gradient function is raised again at the user's line it comes from.

    >>> at_users_line(lambda fn: fn)(3)
    3
    """

    @functools.wraps(stage)
    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return stage(fn, *args, **kwargs)
        except AutodiffError as error:
            function = getattr(fn, "fn", fn)  # a parsed function's, or fn itself
            moved = _relocated(error, getattr(function, ORIGIN_ATTRIBUTE, None))
            if moved is None:
                raise
            raise moved from error

    return run  # type: ignore[return-value]


def users_line(location: Location) -> tuple[Origin, str] | None:
    """The user's origin of a line of generated code, through generated gradient
    functions (their lines run lines of the user's, at any order), and the generated
    code of that line; ``None`` for a line of no user's.

    >>> users_line(Location("<autodiff_tutor generated f #0>", 3, 0, "", 1)) is None
    True
    """
    found, code = None, None
    while location.filename in ORIGINS:
        entry = ORIGINS[location.filename].get(location.line)
        if entry is None:
            break
        found = entry[0].origin
        code = code or entry[0].code
        if not isinstance(found, Origin):
            return None
        location = found.location()
    return (found, code) if found is not None and code is not None else None


def _relocated(error: AutodiffError, parsed: Any) -> AutodiffError | None:
    where = error.location
    if parsed is None or where is None or not where.filename.startswith(GENERATED):
        return None
    found = users_line(where)
    if found is None:
        return None
    origin, code = found
    location = origin.location()
    if location.filename.startswith(GENERATED):
        return None
    what = str(origin).split(": ", 1)[-1]
    reason = error.message.splitlines()[0].split(", which", 1)[0]
    if code.startswith((f"{STORE}(", f"{APPEND}(")):  # self.nfev += 1, kept for its effect
        return type(error)(
            f"second derivatives of a function that writes into an attribute of its object "
            f"({location.text.strip()}) are not supported: the gradient keeps the write for "
            "its effect, and "
            "is not differentiated again through it",
            location,
            hint="first derivatives work (grad, jvp, vjp); for a second derivative, make "
            "the write outside the differentiated method (count the calls around it), or "
            "compare with finite differences of the gradient",
        )
    return type(error)(
        f"second derivatives through {what} are not supported: its gradient is computed "
        f"by the generated step '{code}', which cannot be differentiated again ({reason})",
        location,
        hint="first derivatives through it work (grad, jvp, vjp); for a second derivative, "
        "write this step with numpy operations whose gradients are differentiable again, "
        "or compare with finite differences of the gradient",
    )
