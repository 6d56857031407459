"""Primitives whose output carries no gradient: comparisons, rounding, masks, shapes.

Their derivative is zero almost everywhere and undefined at the jumps, so their
results are constants for both modes (a mask ``x > 0`` is a constant factor). They
have no rule record, only their names and the other spellings of those names (the
``operator`` module's, ``builtins``' and ``numpy``'s objects, array attributes).

>>> sorted(family.nondifferentiable)[:3]
['allclose', 'argmax', 'argmin']
>>> family.aliases["lt"], family.attributes["ndim"]
('less', 'ndim')
"""

import builtins

import numpy as np

from autodiff_tutor.rules.record import Family
from autodiff_tutor.runtime.helpers_indexing import indexed_len

family = Family("nondifferentiable")

family.declare_nondifferentiable(
    "sign",
    "floor",
    "ceil",
    "round",
    "rint",
    "trunc",
    "fix",
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
    "isinf",
    "signbit",
    # checks: ``assert np.allclose(a, b)`` reads values, its result is a boolean
    "allclose",
    "isclose",
    "array_equal",
    "array_equiv",
    "shape",
    "ndim",
    "size",
    "dtype",
    "len",
    # new arrays whose values do not depend on the arguments' values (only on shapes)
    "zeros_like",
    "ones_like",
    "empty_like",
    "zeros",
    "ones",
    "empty",
    "eye",
    "identity",
    # integer results: indices and counts carry no gradient
    "argmax",
    "argmin",
    "argsort",
    "nonzero",
    "count_nonzero",
    "searchsorted",
    "digitize",
    aliases={
        "lt": "less",
        "le": "less_equal",
        "gt": "greater",
        "ge": "greater_equal",
        "around": "round",
        "round_": "round",
        "eq": "equal",
        "ne": "not_equal",
        "and_": "bitwise_and",
        "or_": "bitwise_or",
        builtins.len: "len",
        indexed_len: "len",  # a loop over a sequence in generated code, compiled again
        np.sign: "sign",
    },
)
# array attributes that are not computations: ``x.shape`` is the primitive ``shape``
family.attributes.update({"shape": "shape", "ndim": "ndim", "size": "size", "dtype": "dtype"})
