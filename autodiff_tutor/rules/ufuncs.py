"""More elementwise ufuncs: base-2 and base-10 exponentials and logarithms, cube root,
reciprocal, ``sinc``, ``hypot``, ``arctan2``, ``logaddexp2``, ``fmax`` and ``fmin``.

The same shape of record as :mod:`~autodiff_tutor.rules.elementwise` (a reverse-mode
rule with its sympy form; its tangent rule derived, or written below it); kept apart so
that each module stays short. Poles and kinks are written in each record's ``convention``.

>>> import numpy as np
>>> float(log2(np.float64(1.0), np, np.float64(2.0)))  # d/dx log2(x) = 1 / (x ln 2)
0.72...
"""

from autodiff_tutor.rules.record import ELEMENTWISE, Family
from autodiff_tutor.rules.symbolic_spec import ScalarRule

# ln 2 is written ``xp.log(x * 0 + 2)``: exact for sympy, and in x's dtype for numpy
# (a numpy float64 constant would turn float32 gradients into float64)

family = Family("ufuncs", shape=ELEMENTWISE)
defvjp, defjvp = family.defvjp, family.defjvp


# --- exponentials and logarithms in other bases ---------------------------------------


@defvjp("exp2", math="2^x", sympy=lambda sp, x: 2**x)
def exp2(g, out, xp, x):
    return g * out * xp.log(out * 0 + 2)


@defvjp(
    "log2",
    math="log_2 x",
    sympy=lambda sp, x: sp.log(x) / sp.log(2),
    symbolic=ScalarRule(positive=("x",)),
)
def log2(g, xp, x):
    return g / (x * xp.log(x * 0 + 2))


@defvjp(
    "log10",
    math="log_10 x",
    sympy=lambda sp, x: sp.log(x) / sp.log(10),
    symbolic=ScalarRule(positive=("x",)),
)
def log10(g, xp, x):
    return g / (x * xp.log(x * 0 + 10))


@defvjp(
    "logaddexp2",
    broadcasting=True,
    math="log_2(2^x + 2^y)",
    latex=r"\log_2(2^x + 2^y)",
    convention="from the output, 2^(x - out): never overflows; nan at x = y = -inf",
    sympy=lambda sp, x, y: sp.log(2**x + 2**y) / sp.log(2),
)
def logaddexp2(g, out, xp, x, y):
    return g * xp.exp2(x - out), g * xp.exp2(y - out)


# --- powers ------------------------------------------------------------------------------


@defvjp(
    "cbrt",
    math="x^(1/3)",
    convention="cbrt'(0) = inf (a vertical tangent)",
    sympy=lambda sp, x: sp.cbrt(x),
    symbolic=ScalarRule(positive=("x",)),
)
def cbrt(g, out, x):
    return g / (3 * out * out)


@defvjp(
    "reciprocal",
    math="1 / x",
    convention="a pole at x = 0 (inf)",
    sympy=lambda sp, x: 1 / x,
    symbolic=ScalarRule(positive=("x",)),
)
def reciprocal(g, out, x):
    return -g * out * out


# --- sinc, hypot, arctan2 ---------------------------------------------------------------


@defvjp(
    "sinc",
    math="sin(pi x) / (pi x)",
    convention="sinc'(0) = 0, the limit: at x = 0 the formula is (cos 0 - 1) / 1",
    sympy=lambda sp, x: sp.sin(sp.pi * x) / (sp.pi * x),
    symbolic=ScalarRule(positive=("x",)),  # proved for x > 0 (sinc is even); 0 by its limit
)
def sinc(g, out, xp, x):
    return g * (xp.cos(xp.pi * x) - out) / xp.where(x == 0, 1, x)


@defvjp(
    "hypot",
    broadcasting=True,
    math="sqrt(x^2 + y^2)",
    convention="at x = y = 0 the gradient is 0 (a subgradient, as norm's)",
    sympy=lambda sp, x, y: sp.sqrt(x**2 + y**2),
)
def hypot(g, out, xp, x, y):
    safe = xp.where(out == 0, 1, out)
    return g * x / safe, g * y / safe


@defvjp(
    "arctan2",
    broadcasting=True,
    math="atan2(x, y) (the angle of the point (y, x))",
    latex=r"\operatorname{atan2}(x, y)\ \text{(the angle of the point } (y, x) \text{)}",
    convention="at x = y = 0 the gradient is 0; across the branch cut (y < 0, x = 0) "
    "the derivative is the one-sided one",
    sympy=lambda sp, x, y: sp.atan2(x, y),
)
def arctan2(g, xp, x, y):
    r2 = xp.where((x == 0) & (y == 0), 1, x * x + y * y)
    return g * y / r2, -g * x / r2


@defjvp("arctan2")
def arctan2_tangent(xp, x, y, *, d_x, d_y):
    r2 = xp.where((x == 0) & (y == 0), 1, x * x + y * y)
    return d_x * y / r2 - d_y * x / r2


# --- fmax, fmin: maximum and minimum that skip nan -------------------------------------


@defvjp(
    "fmax",
    broadcasting=True,
    math="max(x, y), ignoring nan",
    latex=r"\max(x, y)\ \text{ignoring nan}",
    convention="ties x == y split the gradient: 1/2 to each; where one input is nan, "
    "the gradient goes to the other (the one fmax returns)",
    sympy=lambda sp, x, y: sp.where(sp.ge(x, y), x, y),
)
def fmax(g, xp, x, y):
    tie = xp.where(x == y, 0.5 * g, 0)
    return xp.where((x > y) | (y != y), g, 0) + tie, xp.where((y > x) | (x != x), g, 0) + tie


@defjvp("fmax")
def fmax_tangent(xp, x, y, *, d_x, d_y):
    tie = x == y
    return (
        xp.where((x > y) | (y != y), d_x, 0)
        + xp.where((y > x) | (x != x), d_y, 0)
        + xp.where(tie, 0.5 * d_x, 0)
        + xp.where(tie, 0.5 * d_y, 0)
    )


@defvjp(
    "fmin",
    broadcasting=True,
    math="min(x, y), ignoring nan",
    latex=r"\min(x, y)\ \text{ignoring nan}",
    convention="ties x == y split the gradient: 1/2 to each; where one input is nan, "
    "the gradient goes to the other (the one fmin returns)",
    sympy=lambda sp, x, y: sp.where(sp.le(x, y), x, y),
)
def fmin(g, xp, x, y):
    tie = xp.where(x == y, 0.5 * g, 0)
    return xp.where((x < y) | (y != y), g, 0) + tie, xp.where((y < x) | (x != x), g, 0) + tie


@defjvp("fmin")
def fmin_tangent(xp, x, y, *, d_x, d_y):
    tie = x == y
    return (
        xp.where((x < y) | (y != y), d_x, 0)
        + xp.where((y < x) | (x != x), d_y, 0)
        + xp.where(tie, 0.5 * d_x, 0)
        + xp.where(tie, 0.5 * d_y, 0)
    )
