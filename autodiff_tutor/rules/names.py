"""Which primitive a Python operator, function, method or attribute is.

The spellings of each primitive are facts of its record (``aliases``, ``method``,
``attribute``; see :mod:`~autodiff_tutor.rules.record`); this module reads them, and
adds Python's own syntax (``+`` is ``add``, ``<`` is ``less``).

Rules are keyed by the operation (``"tanh"``), not by the numpy object alone, so
``np.tanh(x)``, ``xp.tanh(x)`` with ``xp = array_module(x)``, ``cupy.tanh(x)`` and
``x.tanh``-style methods all find the same rule.

>>> import numpy as np, operator
>>> op_of_callable(np.tanh), op_of_callable(operator.mul), op_of_callable(abs)
('tanh', 'multiply', 'abs')
>>> op_of_method("sum"), op_of_attribute("T"), op_of_attribute("shape")
('sum', 'transpose', 'shape')
"""

from __future__ import annotations

import ast
import operator
import sys
from typing import Any

import numpy as np

from autodiff_tutor.rules.catalog import FAMILIES
from autodiff_tutor.rules.registry import RULES

#: numpy's conversions to an array (``np.asarray(x)``): the compiler keeps the value
#: they convert; tracing refuses them on a traced value, the escape they are there
CONVERSIONS = frozenset({"array", "asarray", "asanyarray", "ascontiguousarray"})
#: the conversions, and cupy's copy to the host: a value leaves the array library here
ESCAPES = CONVERSIONS | {"asnumpy"}

BINARY_OPERATORS: dict[type[ast.operator], str] = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "divide",
    ast.Pow: "power",
    ast.MatMult: "matmul",
    ast.BitAnd: "bitwise_and",
    ast.BitOr: "bitwise_or",
    ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder",
}

UNARY_OPERATORS: dict[type[ast.unaryop], str] = {
    ast.USub: "negative",
    ast.UAdd: "positive",
    ast.Not: "logical_not",
    ast.Invert: "invert",
}

COMPARISONS: dict[type[ast.cmpop], str] = {
    ast.Lt: "less",
    ast.LtE: "less_equal",
    ast.Gt: "greater",
    ast.GtE: "greater_equal",
    ast.Eq: "equal",
    ast.NotEq: "not_equal",
    ast.Is: "is",
    ast.IsNot: "is_not",
    ast.In: "in",
    ast.NotIn: "not_in",
}


def _spellings() -> tuple[dict[str, str], dict[int, str], set[str], dict[str, str]]:
    """Every other spelling of every primitive, read off the records and families:
    names in array libraries and ``operator`` (``"absolute"``, ``"mul"``), objects
    (``builtins.abs``), array methods (``x.sum()``) and attributes (``x.T``)."""
    aliases: dict[str, str] = {}
    objects: dict[int, str] = {}
    methods: set[str] = set()
    attributes: dict[str, str] = {}
    pairs = [(alias, op) for op, rule in RULES.items() for alias in rule.aliases]
    pairs += [(alias, op) for family in FAMILIES for alias, op in family.aliases.items()]
    for alias, op in pairs:
        if isinstance(alias, str):
            aliases[alias] = op
        else:
            objects[id(alias)] = op
    for op, rule in RULES.items():
        if rule.method:
            methods.add(op)
        if rule.attribute is not None:
            attributes[rule.attribute] = op
    for family in FAMILIES:
        attributes.update(family.attributes)
    return aliases, objects, methods, attributes


# Names that mean the same primitive in numpy, cupy and the array API standard
# (``"absolute"``), Python objects (``builtins.abs``), array methods that are
# primitives (``x.sum(axis=0)``: the same names as functions), and array attributes
# (``x.T`` is a transpose; ``x.shape`` carries no gradient).
ALIASES, _BY_OBJECT, METHODS, ATTRIBUTES = _spellings()

ARRAY_MODULE_ROOTS = ("numpy", "cupy", "cupyx", "array_api_strict", "array_api_compat")
# namespaces besides a library's top one and its linalg whose functions are named for
# what they compute
EXTRA_HOMES = (
    "cupyx.scipy.special",
    *(f"array_api_compat.{xp}{sub}" for xp in ("numpy", "cupy") for sub in ("", ".linalg")),
)


def canonical(name: str) -> str:
    """The primitive name for a function name in any array library.

    >>> canonical("absolute"), canonical("concat"), canonical("tanh")
    ('abs', 'concatenate', 'tanh')
    """
    name = name.removeprefix("cupy_")
    return ALIASES.get(name, name)


def op_of_callable(fn: Any) -> str | None:
    """The primitive a callable object computes, or ``None`` if it is not one.

    >>> import math
    >>> op_of_callable(math.sqrt) is None
    True
    """
    if id(fn) in _BY_OBJECT:
        return _BY_OBJECT[id(fn)]
    if _from_scipy(fn) and not isinstance(fn, np.ufunc):
        return scipy_op(fn)
    if getattr(operator, getattr(fn, "__name__", ""), None) is fn:
        return canonical(fn.__name__)
    if isinstance(fn, np.ufunc) or (is_array_library_object(fn) and _in_home_module(fn)):
        return canonical(getattr(fn, "__name__", ""))
    if (getattr(fn, "__module__", None) or "").startswith("autodiff_tutor.runtime"):
        return fn.__name__  # helpers in generated code are primitives too (higher order)
    return None


def _in_home_module(fn: Any) -> bool:
    """Whether ``fn`` is its library's own function of its name: found under that name
    in the library's top namespace or its ``linalg`` (``np.sum``, ``cupy.linalg.norm``).
    Its name then says what it computes; a function of the same name elsewhere may
    compute something else (``np.polynomial.polynomial.polyval(x, c)`` takes its
    coefficients in the other order than ``np.polyval(p, x)``).

    >>> from numpy.polynomial import polynomial
    >>> _in_home_module(np.polyval), _in_home_module(polynomial.polyval)
    (True, False)
    """
    name = getattr(fn, "__name__", "")
    root = sys.modules.get((getattr(fn, "__module__", None) or "").split(".")[0])
    homes = (root, getattr(root, "linalg", None), *(sys.modules.get(m) for m in EXTRA_HOMES))
    return any(home is not None and getattr(home, name, None) is fn for home in homes)


def _from_scipy(fn: Any) -> bool:
    owner = getattr(fn, "__self__", None)
    module = getattr(fn, "__module__", None) or getattr(type(owner), "__module__", "") or ""
    return module.split(".")[0] == "scipy"


def scipy_op(fn: Any) -> str:
    """The primitive a scipy function or distribution method is: ``norm.logpdf`` is
    ``norm_logpdf``; a function is its public path (``scipy.linalg.expm``), which has
    no rule unless a record names the object, so the compiler refuses it at the call
    instead of reading scipy's source.

    >>> import scipy.stats, scipy.linalg
    >>> scipy_op(scipy.stats.norm.logpdf), scipy_op(scipy.stats.t.logpdf)
    ('norm_logpdf', 't_logpdf')
    >>> scipy_op(scipy.linalg.expm)
    'scipy.linalg.expm'
    """
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", "call")
    if owner is not None and type(owner).__module__.startswith("scipy.stats"):
        dist = getattr(owner, "name", None) or type(owner).__name__.removesuffix("_gen")
        return f"{dist}_{name}"
    public = []
    for part in (getattr(fn, "__module__", None) or "scipy").split("."):
        if part.startswith("_"):
            break
        public.append(part)
    return ".".join([*public, name])


def is_array_library_object(obj: Any) -> bool:
    """Whether ``obj`` comes from numpy, cupy or an array-API library.

    >>> is_array_library_object(np.exp), is_array_library_object(len)
    (True, False)
    """
    if isinstance(obj, np.ufunc):
        return True
    module = getattr(obj, "__module__", None) or ""
    if not module and hasattr(obj, "__name__") and type(obj).__name__ == "module":
        module = obj.__name__
    return module.split(".")[0] in ARRAY_MODULE_ROOTS


def is_array_module(obj: Any) -> bool:
    """Whether ``obj`` is an array module (``numpy``, ``numpy.linalg``, ``cupy``...).

    >>> is_array_module(np), is_array_module(np.linalg), is_array_module(len)
    (True, True, False)
    """
    return type(obj).__name__ == "module" and obj.__name__.split(".")[0] in ARRAY_MODULE_ROOTS


def op_of_method(name: str) -> str | None:
    """The primitive an array method computes (``x.sum()`` -> ``"sum"``).

    >>> op_of_method("argsort") is None
    True
    """
    return canonical(name) if name in METHODS else None


def op_of_attribute(name: str) -> str | None:
    """The primitive an array attribute reads (``x.T`` -> ``"transpose"``).

    >>> op_of_attribute("real") is None
    True
    """
    return ATTRIBUTES.get(name)


def attribute_hint() -> str:
    """What to say when an attribute read has no derivative rule.

    >>> attribute_hint().split(";")[0]
    'the attributes an array has here are x.T, x.shape, x.ndim, x.size, x.dtype'
    """
    listed = ", ".join(f"x.{name}" for name in ATTRIBUTES)
    return (
        f"the attributes an array has here are {listed}; a np.linalg result also has its "
        "named fields (res.eigenvalues); compute with functions instead"
    )


INDEX_OBJECTS = ("r_", "c_", "s_", "index_exp", "mgrid", "ogrid")


def index_object_hint(obj: Any, index: ast.expr, attribute: str = "") -> str:
    """What to write instead of subscripting ``obj`` (numpy's ``np.r_``, ``np.c_``,
    ``np.s_``, ``np.index_exp``, ``np.mgrid``, ``np.ogrid``, or another object with its
    own ``__getitem__``) with ``index``, whose values carry gradient. ``obj`` is
    ``None`` for ``xp.r_`` with ``xp`` the values' module, known by its ``attribute``.

    >>> index = ast.parse("np.r_[x, 1.0, x]", mode="eval").body.slice
    >>> index_object_hint(np.r_, index).split(" (")[0]
    'write np.concatenate([x, [1.0], x])'
    >>> index_object_hint(None, ast.Tuple([ast.Name("x"), ast.Name("c")]), "c_").split(" (")[0]
    'write np.column_stack([x, c]) for 1-D and 2-D values'
    """
    if obj is None:
        name = attribute if attribute in INDEX_OBJECTS else None
    else:
        name = next((n for n in INDEX_OBJECTS if getattr(np, n) is obj), None)
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    numbers = [isinstance(i, ast.Constant) and isinstance(i.value, (int, float)) for i in items]
    plain = not any(
        isinstance(i, ast.Slice) or (isinstance(i, ast.Constant) and isinstance(i.value, str))
        for i in items
    )
    listed = ", ".join(
        f"[{ast.unparse(i)}]" if number else ast.unparse(i)
        for i, number in zip(items, numbers, strict=True)
    )
    if name == "r_" and plain:
        return (
            f"write np.concatenate([{listed}]) (np.r_ joins its items along the first axis, as "
            "np.concatenate does; a number s is [s] there)"
        )
    if name == "c_" and plain:
        return (
            f"write np.column_stack([{listed}]) for 1-D and 2-D values (np.c_ joins columns "
            "along the last axis: np.concatenate([...], axis=-1) for more dimensions)"
        )
    if name in ("r_", "c_"):
        return (
            "make the ranges with np.arange or np.linspace of constants, then join the parts "
            "with np.concatenate (np.r_) or np.column_stack (np.c_)"
        )
    if name in ("s_", "index_exp"):
        return (
            "it only builds an index (np.s_[x] is x itself): index with values that carry "
            "no gradient (integers, slices), or use the value directly"
        )
    if name in ("mgrid", "ogrid"):
        return (
            "np.mgrid[a:b:nj] is a + (b - a) * np.linspace(0.0, 1.0, n) (np.meshgrid of such "
            "axes for several): write the grid that way where a or b carries gradient"
        )
    return (
        "the compiler does not read its __getitem__: compute the value with numpy functions "
        "that have derivative rules, or cut the gradient with stop_gradient(...)"
    )


# ufunc methods that are a numpy function with a derivative rule
PLAIN_FORMS = {
    ("add", "reduce"): "np.sum(x, axis=0)",
    ("multiply", "reduce"): "np.prod(x, axis=0)",
    ("maximum", "reduce"): "np.max(x, axis=0)",
    ("minimum", "reduce"): "np.min(x, axis=0)",
    ("add", "accumulate"): "np.cumsum(x, axis=0)",
    ("multiply", "accumulate"): "np.cumprod(x, axis=0)",
}


def ufunc_method_hint(ufunc: str, method: str) -> str:
    """What to write instead of ``np.<ufunc>.<method>(x)`` on a traced value.

    >>> ufunc_method_hint("add", "reduce")
    'write the function form: np.sum(x, axis=0) rather than np.add.reduce(x, axis=0)'
    >>> ufunc_method_hint("maximum", "accumulate").split(";")[0]
    'np.maximum.accumulate has no function form with a derivative rule'
    """
    plain = PLAIN_FORMS.get((ufunc, method))
    if plain is not None:
        return f"write the function form: {plain} rather than np.{ufunc}.{method}(x, axis=0)"
    return (
        f"np.{ufunc}.{method} has no function form with a derivative rule; write it with "
        f"operations that have rules (np.{ufunc} step by step along the axis), or as a "
        "custom op with a hand-written backward (autodiff_tutor.ops.DifferentiableFunction)"
    )
