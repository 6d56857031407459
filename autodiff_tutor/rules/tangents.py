"""Forward-mode (tangent) rules: one ``@defjvp`` per primitive of the registry.

A tangent rule returns the output tangent ``d_out`` given one tangent ``d_<input>`` per
input. Its parameters: ``out`` (the primal output) and ``xp`` (the array module) when
the formula needs them, the primal parameters in the vjp rule's order and with its
defaults (inputs, then options), then the tangents, keyword-only (so they may follow
options): ``def sum_(x, axis=None, keepdims=False, *, d_x)``. Call a rule with its
tangents by keyword. An input that never carries a derivative (``where``'s condition)
still has a tangent parameter, ``d_condition=None``, that the formula does not use.

**Inactive inputs.** The compiler passes no tangent for an input that does not depend
on the differentiated arguments. Two ways to inline a rule then, both exact:

- a rule whose return expression is a *sum* (``+``, ``-``, unary ``-``) of terms that
  each name exactly one tangent (``d_x * y + x * d_y``) may have the terms of an
  inactive tangent dropped; the result then has the broadcast shape of the terms left,
  so a ``broadcasting`` rule's result must be broadcast to ``out``'s shape
  (``d_x + d_y`` with only ``d_x`` active is ``d_x``, possibly smaller than ``out``);
- any rule may have an inactive tangent replaced by zeros of its input's shape
  (``zeros_like(x)``; a list of zeros for a list input). Rules whose output or
  tangents are lists (``concatenate``, ``list_append``) never use ``+`` on lists, so
  a sum is always an array sum.

If every input is inactive, the output is inactive. Kinks follow the vjp rules'
conventions (``abs'(0) = 0``, ties of ``maximum`` and of ``max`` split equally, the
bounds of ``clip`` are inclusive), so forward and reverse mode agree everywhere.

>>> import numpy as np
>>> multiply(3.0, 4.0, d_x=1.0, d_y=0.0)
4.0
>>> sum_(np, np.ones((2, 3)), axis=0, d_x=np.ones((2, 3))).tolist()
[2.0, 2.0, 2.0]
"""

from autodiff_tutor.rules import elementwise, linalg, reductions, shapes  # noqa: F401 (the vjps)
from autodiff_tutor.rules.registry import RULES, _checked, defjvp
from autodiff_tutor.runtime.backend import zeros_like
from autodiff_tutor.runtime.helpers import (
    assign_at,
    at,
    cast_like,
    inverse_axes,
    overwritten,
    prod_others,
    tie_share,
    untranspose,
)

# --- arithmetic -------------------------------------------------------------


@defjvp("add")
def add(x, y, *, d_x, d_y):
    return d_x + d_y


@defjvp("subtract")
def subtract(x, y, *, d_x, d_y):
    return d_x - d_y


@defjvp("multiply")
def multiply(x, y, *, d_x, d_y):
    return d_x * y + x * d_y


@defjvp("divide")
def divide(out, x, y, *, d_x, d_y):
    return d_x / y - out * d_y / y


@defjvp("power")
def power(out, xp, x, y, *, d_x, d_y):
    return d_x * y * x ** (y - 1) + d_y * out * xp.log(x)


@defjvp("negative")
def negative(x, *, d_x):
    return -d_x


@defjvp("positive")
def positive(x, *, d_x):
    return d_x


@defjvp("square")
def square(x, *, d_x):
    return 2 * d_x * x


# --- exponentials and logarithms ---------------------------------------------


@defjvp("exp")
def exp(out, x, *, d_x):
    return d_x * out


@defjvp("expm1")
def expm1(out, x, *, d_x):
    return d_x * (out + 1)


@defjvp("log")
def log(x, *, d_x):
    return d_x / x


@defjvp("log1p")
def log1p(x, *, d_x):
    return d_x / (1 + x)


@defjvp("sqrt")
def sqrt(out, x, *, d_x):
    return d_x / (2 * out)


# --- trigonometric and hyperbolic ----------------------------------------------


@defjvp("sin")
def sin(xp, x, *, d_x):
    return d_x * xp.cos(x)


@defjvp("cos")
def cos(xp, x, *, d_x):
    return -d_x * xp.sin(x)


@defjvp("tan")
def tan(out, x, *, d_x):
    return d_x * (1 + out * out)


@defjvp("arcsin")
def arcsin(xp, x, *, d_x):
    return d_x / xp.sqrt(1 - x * x)


@defjvp("arccos")
def arccos(xp, x, *, d_x):
    return -d_x / xp.sqrt(1 - x * x)


@defjvp("arctan")
def arctan(x, *, d_x):
    return d_x / (1 + x * x)


@defjvp("sinh")
def sinh(xp, x, *, d_x):
    return d_x * xp.cosh(x)


@defjvp("cosh")
def cosh(xp, x, *, d_x):
    return d_x * xp.sinh(x)


@defjvp("tanh")
def tanh(out, x, *, d_x):
    return d_x * (1 - out * out)


# --- kinks: abs, maximum, minimum, clip, where ----------------------------------
# One term per tangent and region (a tie is its own term, at half weight), so that
# every term can be dropped; masks select with where (no bool * float promotion).


@defjvp("abs")
def abs_(xp, x, *, d_x):
    return d_x * xp.sign(x)


@defjvp("maximum")
def maximum(xp, x, y, *, d_x, d_y):
    tie = x == y
    return (
        xp.where(x > y, d_x, 0)
        + xp.where(y > x, d_y, 0)
        + xp.where(tie, 0.5 * d_x, 0)
        + xp.where(tie, 0.5 * d_y, 0)
    )


@defjvp("minimum")
def minimum(xp, x, y, *, d_x, d_y):
    tie = x == y
    return (
        xp.where(x < y, d_x, 0)
        + xp.where(y < x, d_y, 0)
        + xp.where(tie, 0.5 * d_x, 0)
        + xp.where(tie, 0.5 * d_y, 0)
    )


@defjvp("clip")
def clip(xp, x, a_min, a_max, *, d_x, d_a_min, d_a_max):
    inside = (x >= a_min) & (x <= a_max)
    return (
        xp.where(inside, d_x, 0) + xp.where(x < a_min, d_a_min, 0) + xp.where(x > a_max, d_a_max, 0)
    )


@defjvp("where")
def where(xp, condition, x, y, *, d_condition=None, d_x, d_y):
    return xp.where(condition, d_x, 0) + xp.where(condition, 0, d_y)


# --- linear algebra ------------------------------------------------------------------


@defjvp("matmul")
def matmul(x, y, *, d_x, d_y):
    return d_x @ y + x @ d_y


@defjvp("dot")
def dot(xp, x, y, *, d_x, d_y):
    return xp.dot(d_x, y) + xp.dot(x, d_y)


@defjvp("norm")
def norm(out, xp, x, ord=None, axis=None, keepdims=False, *, d_x):
    return xp.sum(x * d_x, axis=axis, keepdims=keepdims) / xp.where(out == 0, 1, out)


# --- reductions ----------------------------------------------------------------------


@defjvp("sum")
def sum_(xp, x, axis=None, keepdims=False, *, d_x):
    return xp.sum(d_x, axis=axis, keepdims=keepdims)


@defjvp("mean")
def mean(xp, x, axis=None, keepdims=False, *, d_x):
    return xp.mean(d_x, axis=axis, keepdims=keepdims)


@defjvp("max")
def max_(out, xp, x, axis=None, keepdims=False, *, d_x):
    share = tie_share(x, out, axis=axis, keepdims=keepdims)
    return xp.sum(d_x * share, axis=axis, keepdims=keepdims)


@defjvp("min")
def min_(out, xp, x, axis=None, keepdims=False, *, d_x):
    share = tie_share(x, out, axis=axis, keepdims=keepdims)
    return xp.sum(d_x * share, axis=axis, keepdims=keepdims)


@defjvp("prod")
def prod(xp, x, axis=None, keepdims=False, *, d_x):
    return xp.sum(d_x * prod_others(x, axis=axis), axis=axis, keepdims=keepdims)


# --- shapes: the tangent moves exactly as the values do ------------------------------


@defjvp("reshape")
def reshape(xp, x, shape=None, *, d_x):
    return xp.reshape(d_x, shape)


@defjvp("squeeze")
def squeeze(xp, x, axis=None, *, d_x):
    return xp.squeeze(d_x, axis=axis)


@defjvp("expand_dims")
def expand_dims(xp, x, axis=None, *, d_x):
    return xp.expand_dims(d_x, axis=axis)


@defjvp("transpose")
def transpose(x, axes=None, *, d_x):
    return d_x.T if axes is None else untranspose(d_x, inverse_axes(axes))


@defjvp("concatenate")
def concatenate(xp, xs, axis=0, *, d_xs):
    return xp.concatenate(d_xs, axis=axis)


@defjvp("stack")
def stack(xp, xs, axis=0, *, d_xs):
    return xp.stack(d_xs, axis=axis)


@defjvp("getitem")
def getitem(x, index=None, *, d_x):
    return d_x[index]


@defjvp("setitem")
def setitem(x, value, index=None, *, d_x, d_value):
    return overwritten(d_x, at[index]) + assign_at(zeros_like(x), at[index], d_value)


@defjvp("list_append")
def list_append(xs, x, *, d_xs, d_x):
    return [*d_xs, d_x]


@defjvp("make_list")
def make_list(xs, *, d_xs):
    return d_xs


@defjvp("astype")
def astype(out, x, dtype=None, *, d_x):
    return cast_like(d_x, out)


@defjvp("copy")
def copy(x, *, d_x):
    return d_x


def _refuse_like_the_vjp() -> None:
    """A rule that refuses some options (``norm``'s ``ord``) refuses them in both modes."""
    for rule in RULES.values():
        if rule.check is not None and rule.jvp is not None:
            if getattr(rule.jvp, "__wrapped__", None) is None:
                rule.jvp = _checked(rule.jvp, rule.check, rule.options)


_refuse_like_the_vjp()
