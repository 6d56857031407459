"""Elementwise primitives: arithmetic, exponentials, masks and selections (the
trigonometric and hyperbolic functions are in :mod:`autodiff_tutor.rules.trigonometric`).

Each primitive's record is one block: its reverse-mode rule (``@defvjp``, with its
sympy form, aliases and convention). Its tangent rule is that rule with ``g`` replaced
by each input's tangent (an elementwise Jacobian is diagonal, so its own transpose),
unless a ``@defjvp`` below it writes its own. Binary rules
are ``broadcasting``: the compiler sums each result back to its input's shape, so the
formulas stay the textbook ones. The family's shape class is ``ELEMENTWISE`` (the
output has its operands' shape and dtype); ``clip`` and ``where`` are ``SELECTION``.

>>> import numpy as np
>>> multiply(np.float64(1.0), 3.0, 4.0)
(np.float64(4.0), np.float64(3.0))
>>> multiply_tangent(3.0, 4.0, d_x=1.0, d_y=0.0)
4.0
"""

import builtins
import math

from autodiff_tutor.rules.record import ELEMENTWISE, SELECTION, Family
from autodiff_tutor.rules.symbolic_spec import ScalarRule

family = Family("elementwise", shape=ELEMENTWISE)
defvjp, defjvp = family.defvjp, family.defjvp

# --- arithmetic -------------------------------------------------------------


@defvjp("add", broadcasting=True, math="x + y", sympy=lambda sp, x, y: x + y)
def add(g, x, y):
    return g, g


@defvjp("subtract", broadcasting=True, math="x - y", sympy=lambda sp, x, y: x - y, aliases=("sub",))
def subtract(g, x, y):
    return g, -g


@defjvp("subtract")
def subtract_tangent(x, y, *, d_x, d_y):
    return d_x - d_y


@defvjp("multiply", broadcasting=True, math="x y", sympy=lambda sp, x, y: x * y, aliases=("mul",))
def multiply(g, x, y):
    return g * y, g * x


@defjvp("multiply")
def multiply_tangent(x, y, *, d_x, d_y):
    return d_x * y + x * d_y


@defvjp(
    "divide",
    broadcasting=True,
    math="x / y",
    sympy=lambda sp, x, y: x / y,
    aliases=("true_divide", "truediv"),
)
def divide(g, out, x, y):
    return g / y, -g * out / y


@defjvp("divide")
def divide_tangent(out, x, y, *, d_x, d_y):
    return d_x / y - out * d_y / y


@defvjp(
    "power",
    broadcasting=True,
    math="x^y",
    convention=(
        "d/dx of x**0 is 0, also at x = 0 (never 0 * x**-1); d/dy uses log(x), nan for"
        " x < 0, and 0 at x = 0 (the slope of 0**y for y > 0)"
    ),
    sympy=lambda sp, x, y: x**y,
    symbolic=ScalarRule(positive=("x",)),
    aliases=("pow", builtins.pow),
)
def power(g, out, xp, x, y):
    # the exponent y - 1, but 0 where y == 0: so never 0 * x**-1 (nan at x = 0)
    return (
        g * y * x ** ((y - (y != 0)) if isinstance(y, int | float) else xp.where(y == 0, y, y - 1)),
        g * out * xp.log(xp.where(x == 0, 1.0, x)),
    )


@defvjp("negative", math="-x", sympy=lambda sp, x: -x, aliases=("neg",))
def negative(g, x):
    return -g


@defvjp("positive", math="+x", sympy=lambda sp, x: x, aliases=("pos",))
def positive(g, x):
    return g


@defvjp("square", math="x^2", sympy=lambda sp, x: x**2)
def square(g, x):
    return 2 * g * x


# --- exponentials and logarithms ---------------------------------------------


@defvjp("exp", math="e^x", sympy=lambda sp, x: sp.exp(x))
def exp(g, out, x):
    return g * out


@defvjp("expm1", math="e^x - 1", sympy=lambda sp, x: sp.exp(x) - 1)
def expm1(g, out, x):
    return g * (out + 1)


@defvjp(
    "log",
    math="ln x",
    sympy=lambda sp, x: sp.log(x),
    symbolic=ScalarRule(positive=("x",)),
)
def log(g, x):
    return g / x


@defvjp(
    "log1p",
    math="ln(1 + x)",
    sympy=lambda sp, x: sp.log(1 + x),
    symbolic=ScalarRule(positive=("x",)),
)
def log1p(g, x):
    return g / (1 + x)


@defvjp(
    "sqrt",
    math="sqrt(x)",
    convention="sqrt'(0) = inf; where the incoming gradient is 0 the result is 0, also at "
    "x = 0 (an unused sqrt(0), as on the diagonal of pairwise distances, gives 0, not 0/0)",
    sympy=lambda sp, x: sp.sqrt(x),
    symbolic=ScalarRule(positive=("x",)),
)
def sqrt(g, out, xp, x):
    return g / (2 * xp.where(g == 0, 1, out))


@defvjp(
    "logaddexp",
    broadcasting=True,
    math="ln(e^x + e^y)",
    convention="from the output, exp(x - out): never overflows; nan at x = y = -inf (0/0)",
    sympy=lambda sp, x, y: sp.log(sp.exp(x) + sp.exp(y)),
)
def logaddexp(g, out, xp, x, y):
    return g * xp.exp(x - out), g * xp.exp(y - out)


# --- kinks: abs, maximum, minimum, clip, where ----------------------------------
# Sympy forms are Piecewise, through numpy's where and comparisons (``sp.where``,
# ``sp.ge``), so the checker reads the regions off their conditions. Tangents have one
# term per tangent and region (a tie is its own term, at half weight), so that every
# term can be dropped; masks select with where (no bool * float promotion).


@defvjp(
    "abs",
    math="|x|",
    latex=r"\lvert x \rvert",
    convention="abs'(0) = 0 (sign(0) = 0)",
    sympy=lambda sp, x: sp.where(sp.ge(x, 0), x, -x),
    aliases=("absolute", "fabs", builtins.abs),
)
def abs_(g, xp, x):
    return g * xp.sign(x)


@defvjp(
    "maximum",
    broadcasting=True,
    math="max(x, y)",
    latex=r"\max(x, y)",
    convention="ties x == y split the gradient: 1/2 to each input",
    sympy=lambda sp, x, y: sp.where(sp.ge(x, y), x, y),
)
def maximum(g, xp, x, y):
    tie = xp.where(x == y, 0.5 * g, 0)
    return xp.where(x > y, g, 0) + tie, xp.where(y > x, g, 0) + tie


@defjvp("maximum")
def maximum_tangent(xp, x, y, *, d_x, d_y):
    tie = x == y
    return (
        xp.where(x > y, d_x, 0)
        + xp.where(y > x, d_y, 0)
        + xp.where(tie, 0.5 * d_x, 0)
        + xp.where(tie, 0.5 * d_y, 0)
    )


@defvjp(
    "minimum",
    broadcasting=True,
    math="min(x, y)",
    latex=r"\min(x, y)",
    convention="ties x == y split the gradient: 1/2 to each input",
    sympy=lambda sp, x, y: sp.where(sp.le(x, y), x, y),
)
def minimum(g, xp, x, y):
    tie = xp.where(x == y, 0.5 * g, 0)
    return xp.where(x < y, g, 0) + tie, xp.where(y < x, g, 0) + tie


@defjvp("minimum")
def minimum_tangent(xp, x, y, *, d_x, d_y):
    tie = x == y
    return (
        xp.where(x < y, d_x, 0)
        + xp.where(y < x, d_y, 0)
        + xp.where(tie, 0.5 * d_x, 0)
        + xp.where(tie, 0.5 * d_y, 0)
    )


def clip_sympy(sp, x, a_min=None, a_max=None):
    """``clip`` on sympy scalars: numpy's clip takes ``None`` for a missing bound."""
    low = x if a_min is None else sp.where(sp.ge(x, a_min), x, a_min)
    return low if a_max is None else sp.where(sp.le(low, a_max), low, a_max)


@defvjp(
    "clip",
    broadcasting=True,
    math="min(max(x, lo), hi)",
    latex=r"\min(\max(x, \mathrm{lo}), \mathrm{hi})",
    convention="at x == lo or x == hi the gradient goes to x (bounds are inclusive)",
    shape=SELECTION,
    sympy=clip_sympy,
    symbolic=ScalarRule(assume=lambda s: [s["a_min"] < s["a_max"]]),
    aliases=("clamp",),
    method=True,
    none_means={"a_min": -math.inf, "a_max": math.inf},  # numpy's clip: no bound
)
def clip(g, xp, x, a_min, a_max):
    inside = (x >= a_min) & (x <= a_max)
    return xp.where(inside, g, 0), xp.where(x < a_min, g, 0), xp.where(x > a_max, g, 0)


@defvjp(
    "where",
    broadcasting=True,
    math="c ? x : y",
    shape=SELECTION,
    sympy=lambda sp, condition, x, y: sp.where(condition, x, y),
    symbolic=ScalarRule(condition=("condition",)),
)
def where(g, xp, condition, x, y):
    return None, xp.where(condition, g, 0), xp.where(condition, 0, g)
