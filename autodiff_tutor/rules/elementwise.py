"""Rules of elementwise primitives: arithmetic, ufuncs, masks and selections.

Each function returns the gradient of every input given ``g``, the gradient of the
output. Binary rules are ``broadcasting``: the compiler sums each result back to its
input's shape, so the formulas stay the textbook ones.

>>> import numpy as np
>>> multiply(np.float64(1.0), 3.0, 4.0)
(np.float64(4.0), np.float64(3.0))
"""

from autodiff_tutor.rules.registry import defvjp, nondifferentiable

# --- arithmetic -------------------------------------------------------------


@defvjp("add", broadcasting=True, math="x + y")
def add(g, x, y):
    return g, g


@defvjp("subtract", broadcasting=True, math="x - y")
def subtract(g, x, y):
    return g, -g


@defvjp("multiply", broadcasting=True, math="x y")
def multiply(g, x, y):
    return g * y, g * x


@defvjp("divide", broadcasting=True, math="x / y")
def divide(g, out, x, y):
    return g / y, -g * out / y


@defvjp(
    "power",
    broadcasting=True,
    math="x^y",
    convention="d/dy uses log(x): nan for x < 0, -inf*0 = nan at x = 0",
)
def power(g, out, xp, x, y):
    return g * y * x ** (y - 1), g * out * xp.log(x)


@defvjp("negative", math="-x")
def negative(g, x):
    return -g


@defvjp("positive", math="+x")
def positive(g, x):
    return g


@defvjp("square", math="x^2")
def square(g, x):
    return 2 * g * x


# --- exponentials and logarithms ---------------------------------------------


@defvjp("exp", math="e^x")
def exp(g, out, x):
    return g * out


@defvjp("expm1", math="e^x - 1")
def expm1(g, out, x):
    return g * (out + 1)


@defvjp("log", math="ln x")
def log(g, x):
    return g / x


@defvjp("log1p", math="ln(1 + x)")
def log1p(g, x):
    return g / (1 + x)


@defvjp("sqrt", math="sqrt(x)", convention="sqrt'(0) = inf")
def sqrt(g, out, x):
    return g / (2 * out)


# --- trigonometric and hyperbolic ----------------------------------------------


@defvjp("sin", math="sin x")
def sin(g, xp, x):
    return g * xp.cos(x)


@defvjp("cos", math="cos x")
def cos(g, xp, x):
    return -g * xp.sin(x)


@defvjp("tan", math="tan x")
def tan(g, out, x):
    return g * (1 + out * out)


@defvjp("arcsin", math="arcsin x")
def arcsin(g, xp, x):
    return g / xp.sqrt(1 - x * x)


@defvjp("arccos", math="arccos x")
def arccos(g, xp, x):
    return -g / xp.sqrt(1 - x * x)


@defvjp("arctan", math="arctan x")
def arctan(g, x):
    return g / (1 + x * x)


@defvjp("sinh", math="sinh x")
def sinh(g, xp, x):
    return g * xp.cosh(x)


@defvjp("cosh", math="cosh x")
def cosh(g, xp, x):
    return g * xp.sinh(x)


@defvjp("tanh", math="tanh x")
def tanh(g, out, x):
    return g * (1 - out * out)


# --- kinks: abs, maximum, minimum, clip, where ----------------------------------


@defvjp("abs", math="|x|", convention="abs'(0) = 0 (sign(0) = 0)")
def abs_(g, xp, x):
    return g * xp.sign(x)


@defvjp(
    "maximum",
    broadcasting=True,
    math="max(x, y)",
    convention="ties x == y split the gradient: 1/2 to each input",
)
def maximum(g, xp, x, y):
    tie = xp.where(x == y, 0.5 * g, 0)
    return xp.where(x > y, g, 0) + tie, xp.where(y > x, g, 0) + tie


@defvjp(
    "minimum",
    broadcasting=True,
    math="min(x, y)",
    convention="ties x == y split the gradient: 1/2 to each input",
)
def minimum(g, xp, x, y):
    tie = xp.where(x == y, 0.5 * g, 0)
    return xp.where(x < y, g, 0) + tie, xp.where(y < x, g, 0) + tie


@defvjp(
    "clip",
    broadcasting=True,
    math="min(max(x, lo), hi)",
    convention="at x == lo or x == hi the gradient goes to x (bounds are inclusive)",
)
def clip(g, xp, x, a_min, a_max):
    inside = (x >= a_min) & (x <= a_max)
    return xp.where(inside, g, 0), xp.where(x < a_min, g, 0), xp.where(x > a_max, g, 0)


@defvjp("where", broadcasting=True, math="c ? x : y")
def where(g, xp, condition, x, y):
    return None, xp.where(condition, g, 0), xp.where(condition, 0, g)


nondifferentiable(
    "sign",
    "floor",
    "ceil",
    "round",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "invert",
    "isnan",
    "isfinite",
    "shape",
    "ndim",
    "size",
    "dtype",
    "len",
    "zeros_like",
    "ones_like",
    # integer results: indices and counts carry no gradient
    "argmax",
    "argmin",
    "argsort",
    "nonzero",
    "count_nonzero",
    "searchsorted",
    "digitize",
)
