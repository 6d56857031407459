"""Trigonometric and hyperbolic primitives (elementwise), one record each.

>>> import numpy as np
>>> float(tanh(np.float64(1.0), np.tanh(0.5), 0.5))  # from the output: 1 - tanh(x)^2
0.7864477329659274
"""

from autodiff_tutor.rules.record import ELEMENTWISE, Family

family = Family("trigonometric", shape=ELEMENTWISE)
defvjp = family.defvjp


@defvjp("sin", math="sin x", sympy=lambda sp, x: sp.sin(x))
def sin(g, xp, x):
    return g * xp.cos(x)


@defvjp("cos", math="cos x", sympy=lambda sp, x: sp.cos(x))
def cos(g, xp, x):
    return -g * xp.sin(x)


@defvjp("tan", math="tan x", sympy=lambda sp, x: sp.tan(x))
def tan(g, out, x):
    return g * (1 + out * out)


@defvjp(
    "arcsin",
    math="arcsin x",
    sympy=lambda sp, x: sp.asin(x),
    aliases=("asin",),
)
def arcsin(g, xp, x):
    return g / xp.sqrt(1 - x * x)


@defvjp(
    "arccos",
    math="arccos x",
    sympy=lambda sp, x: sp.acos(x),
    aliases=("acos",),
)
def arccos(g, xp, x):
    return -g / xp.sqrt(1 - x * x)


@defvjp(
    "arctan",
    math="arctan x",
    sympy=lambda sp, x: sp.atan(x),
    aliases=("atan",),
)
def arctan(g, x):
    return g / (1 + x * x)


@defvjp("sinh", math="sinh x", sympy=lambda sp, x: sp.sinh(x))
def sinh(g, xp, x):
    return g * xp.cosh(x)


@defvjp("cosh", math="cosh x", sympy=lambda sp, x: sp.cosh(x))
def cosh(g, xp, x):
    return g * xp.sinh(x)


@defvjp("tanh", math="tanh x", sympy=lambda sp, x: sp.tanh(x))
def tanh(g, out, x):
    return g * (1 - out * out)
