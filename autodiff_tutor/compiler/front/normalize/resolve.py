"""Name resolution for normalization: what does a call in the user's code call?

``np.tanh(x)`` resolves through the function's globals to the numpy ufunc, hence
the primitive ``tanh``; ``x.sum(axis=0)`` is the method form of ``sum``;
``xp.exp(x)`` with ``xp = array_module(x)`` is ``exp`` on whatever module ``xp`` is
at run time; ``float(x)`` and ``x.item()`` leave the differentiable world.

>>> import ast, numpy as np
>>> from autodiff_tutor.compiler.front.source import parse_function
>>> def f(x):
...     return np.linalg.norm(x)
>>> resolver = Resolver(parse_function(f), {"x": "x"})
>>> call = ast.parse("np.linalg.norm(x)", mode="eval").body
>>> resolver.callee(call).op
'norm'
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autodiff_tutor.compiler.code import root_name
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.errors import ReferenceCycleError, UnsupportedSyntaxError
from autodiff_tutor.protocol import is_differentiable_op
from autodiff_tutor.rules import names as opnames
from autodiff_tutor.rules.registry import is_nondifferentiable
from autodiff_tutor.runtime.backend import array_module

ESCAPE_BUILTINS = {builtins.float, builtins.int, builtins.bool, builtins.complex}
ESCAPE_FUNCTIONS = opnames.ESCAPES | {"extract_data"}  # and tracing's own escape
ESCAPE_METHODS = {"item", "tolist", "get", "__array__"}
MODULE_FACTORIES = {"array_module", "get_array_module", "array_namespace"}
# Python's scalar spellings of existing primitives (their rules work on floats too)
PAIRWISE = {id(builtins.max): "maximum", id(builtins.min): "minimum"}
# math.exp(x) & co. on scalars, compiled with the numpy rule of the same name (the
# compiler reads the source; tracing cannot follow math.*: lesson 04 shows the contrast).
SCALAR_MATH = {
    id(getattr(math, name)): name
    for name in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh",
                 "log1p", "expm1")
    if hasattr(math, name)
}  # fmt: skip
SCALAR_MATH[id(math.atan)] = "arctan"


@dataclass
class Callee:
    """What a call resolves to."""

    kind: str  # primitive | module_call | op_call | opaque | escape | static
    op: str | None = None
    obj: Any = None
    attr: str = ""
    receiver: ast.expr | None = None  # the array of a method call (x in x.sum())
    description: str = ""


class Resolver:
    """Resolves names and calls of one function (locals shadow globals)."""

    def __init__(
        self,
        parsed: ParsedFunction,
        current: dict[str, str],
        user_name: Callable[[str], str] | None = None,
    ):
        self.parsed = parsed
        self.namespace = parsed.namespace()
        self.current = current  # the normalizer's live map of local names
        # the name the user wrote for a version (x_2: x), from the normalizer
        self.user_name = user_name or (lambda name: name)
        self.module_locals: set[str] = set()  # xp = array_module(x): the values' module
        # mod = np: a module under a local name; def f(x, xp=np): a module parameter
        self.module_values: dict[str, Any] = module_parameters(parsed)
        self.locals = {
            n.id
            for n in ast.walk(parsed.tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.locals |= set(current)

    def is_global(self, name: str) -> bool:
        """Whether ``name`` refers to a global (not a parameter or local variable)."""
        return name not in self.locals and name not in self.current

    def callee(self, node: ast.Call) -> Callee:
        """Classify the call ``node`` (raises a located error for unknown names)."""
        func = node.func
        description = ast.unparse(func)
        if isinstance(func, ast.Attribute):
            root = root_name(func)
            if root is not None and not self.is_global(root):
                version = self.current.get(root, root)
                if version in self.module_locals:
                    return Callee("module_call", attr=func.attr, description=description)
                if version in self.module_values:  # mod.tanh(x) where mod = np
                    obj = self.evaluate(func, {root: self.module_values[version]})
                    return self._resolved(node, obj, description)
                return self._method(func, description)
            if root is None:
                return self._method(func, description)
        elif not isinstance(func, ast.Name):
            refusal = getattr(node, "derivative_refusal", None)
            if refusal is not None:  # grad(f)(x) of an f whose derivative is refused
                raise refusal
            raise UnsupportedSyntaxError(
                "this kind of call is not supported",
                self.parsed.location(func),
                hint="call a function by its name",
            )
        elif not self.is_global(func.id):
            user = self.user_name(func.id)  # the user's name, not its version
            raise UnsupportedSyntaxError(
                f"calling the local variable {user!r} is not supported",
                self.parsed.location(func),
                hint="call a function by the name it is defined with (def f, f = lambda, "
                "or a global), not through a variable that holds one of several",
            )
        return self._resolved(node, self.evaluate(func), description)

    def _resolved(self, node: ast.Call, obj: Any, description: str) -> Callee:
        """Classify a call of the object ``obj`` that the call's name refers to."""
        pair = PAIRWISE.get(id(obj))
        if pair is not None and len(node.args) == 2 and not node.keywords:
            # max(a, b) of two values: the maximum rule (ties split the gradient)
            return Callee("primitive", op=pair, obj=obj, description=description)
        if id(obj) in SCALAR_MATH:  # math.exp(x): the numpy rule
            return Callee("primitive", op=SCALAR_MATH[id(obj)], obj=obj, description=description)
        return classify(obj, description)

    def evaluate(self, node: ast.expr, names: dict[str, Any] | None = None) -> Any:
        """The value of a global dotted name such as ``np.linalg.norm`` (its first name
        looked up in ``names`` when given, else in the function's namespace)."""
        names = self.namespace if names is None else names
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise UnsupportedSyntaxError(
                    f"name {node.id!r} is not defined",
                    self.parsed.location(node),
                    hint="define it (or import it) before compiling the function",
                )
            return names[node.id]
        if isinstance(node, ast.Attribute):
            base = self.evaluate(node.value, names)
            try:
                return getattr(base, node.attr)
            except ReferenceCycleError as error:  # self.me.me.f: says why it cannot be read
                raise error.located_at(self.parsed.location(node)) from None
            except AttributeError:
                raise UnsupportedSyntaxError(
                    f"{ast.unparse(node.value)!r} has no attribute {node.attr!r}",
                    self.parsed.location(node),
                    hint="check the spelling",
                ) from None
        raise UnsupportedSyntaxError("cannot resolve this name", self.parsed.location(node))

    def is_nondifferentiable_call(self, node: ast.Call) -> bool:
        """Whether the call's result never carries gradient (``len(x)``, ``np.sign(x)``)."""
        try:
            callee = self.callee(node)
        except UnsupportedSyntaxError:
            return False
        if callee.kind == "module_call":
            return is_nondifferentiable(opnames.canonical(callee.attr))
        if callee.kind == "static":
            return True
        return (
            callee.kind == "primitive" and callee.op is not None and is_nondifferentiable(callee.op)
        )

    def computes_from_index(self, node: ast.expr) -> bool:
        """Whether subscripting ``node`` calls a function of the index (``np.r_[x, c]``,
        ``np.s_[...]``, an object with its own ``__getitem__``), rather than picking an
        item of an array, list, tuple or dict: such an object's result may then depend
        on the index differentiably. ``node`` is a global, or an attribute of a module
        (``mod.r_`` with ``mod = np``, ``xp.r_`` with ``xp = array_module(x)``).

        >>> import numpy as np
        >>> from autodiff_tutor.compiler.front.source import parse_function
        >>> def f(x):
        ...     return np.r_[x, x]
        >>> resolver = Resolver(parse_function(f), {"x": "x"})
        >>> node = ast.parse("np.r_", mode="eval").body
        >>> resolver.computes_from_index(node), resolver.computes_from_index(ast.Name("x"))
        (True, False)
        """
        known, obj = self.subscripted(node)
        return known and not is_container(obj)

    def subscripted(self, node: ast.expr) -> tuple[bool, Any]:
        """Whether the value of ``node`` (subscripted, or assigned) is known while
        compiling, and that value (``None`` for an attribute of the values' module, known
        at run time only: never a container, nor a module)."""
        root = root_name(node) if isinstance(node, ast.Name | ast.Attribute) else None
        if root is None:
            return False, None
        names = None
        if not self.is_global(root):
            version = self.current.get(root, root)
            if version in self.module_locals and isinstance(node, ast.Attribute):
                return True, None  # xp.r_ with xp = array_module(x)
            if version not in self.module_values:
                return False, None
            names = {root: self.module_values[version]}
        try:
            return True, self.evaluate(node, names)
        except UnsupportedSyntaxError:
            return False, None

    def note_module_local(self, target: str, value: ast.expr) -> None:
        """Remember ``target`` if ``value`` (a static value) is a module: the values'
        (``array_module(x)``), or a module by another name (``mod = np``)."""
        if self.makes_module(value):
            self.module_locals.add(target)
            return
        obj = self.subscripted(value)[1]
        if isinstance(obj, types.ModuleType):
            self.module_values[target] = obj

    def makes_module(self, value: ast.expr) -> bool:
        """Whether ``value`` is a call like ``array_module(x)`` that returns a module."""
        if not isinstance(value, ast.Call):
            return False
        try:
            callee = self.callee(value)
        except UnsupportedSyntaxError:
            return False
        return callee.kind == "static" and callee.attr == "module"

    def _method(self, func: ast.Attribute, description: str) -> Callee:
        if func.attr == "__array_namespace__":  # xp = x.__array_namespace__(): x's module
            return Callee("static", attr="module", receiver=func.value, description=description)
        if func.attr in ESCAPE_METHODS:
            return Callee("escape", attr=func.attr, receiver=func.value, description=description)
        op = opnames.op_of_method(func.attr)
        if op is None:
            return Callee("opaque", attr=func.attr, receiver=func.value, description=description)
        return Callee("primitive", op=op, receiver=func.value, description=description)


def classify(obj: Any, description: str = "") -> Callee:
    """What calling ``obj`` is for the compiler: a custom op or a compiled function
    (``op_call``), a primitive with a rule, a function of the user's (``user_call``,
    compiled in turn), a call leaving the differentiable world (``escape``), ...

    >>> import numpy as np
    >>> classify(np.tanh).op, classify(float).kind, classify(print).kind
    ('tanh', 'escape', 'opaque')
    """
    if is_differentiable_op(obj):
        return Callee("op_call", obj=obj, description=description)
    if callable(getattr(obj, "make_op", None)):  # an interface function of a custom op
        return Callee("op_factory", obj=obj, description=description)
    if getattr(obj, "__name__", "") == "stop_gradient":
        return Callee("static", obj=obj, attr="stop_gradient", description=description)
    if obj is array_module or getattr(obj, "__name__", "") in MODULE_FACTORIES:
        return Callee("static", obj=obj, attr="module", description=description)
    if obj in ESCAPE_BUILTINS or (
        getattr(obj, "__name__", "") in ESCAPE_FUNCTIONS
        and (opnames.is_array_library_object(obj) or "tracing" in getattr(obj, "__module__", ""))
    ):
        return Callee("escape", obj=obj, description=description)
    op = opnames.op_of_callable(obj)
    if op is not None:
        return Callee("primitive", op=op, obj=obj, description=description)
    if is_user_function(obj):  # another function of the user's: compiled in turn
        return Callee("user_call", obj=obj, description=description)
    return Callee("opaque", obj=obj, description=description)


def is_user_function(obj: Any) -> bool:
    """Whether ``obj`` is a function of the user's (compiled in turn when called).

    >>> def h(a):
    ...     return a[0]
    >>> h.__module__ = "course"  # as if written in the user's module
    >>> is_user_function(h), is_user_function(math.tanh), is_user_function(len)
    (True, False, False)
    """
    module = getattr(obj, "__module__", "") or ""
    return (
        inspect.isfunction(obj)
        and obj.__name__ != "<lambda>"
        and not module.startswith("autodiff_tutor")
        and not opnames.is_array_library_object(obj)
    )


def is_container(obj: Any) -> bool:
    """Whether subscripting ``obj`` picks one of its items, which the index selects but
    does not compute: an array of any library, a sequence, a mapping, or a class
    (``list[int]``).

    >>> import numpy as np
    >>> is_container(np.ones(2)), is_container({"a": 1}), is_container(np.r_)
    (True, True, False)
    """
    array_like = hasattr(obj, "shape") and hasattr(obj, "dtype")
    return array_like or isinstance(obj, Sequence | Mapping | type)


def module_parameters(parsed: ParsedFunction) -> dict[str, Any]:
    """The parameters whose default is a module (``def f(x, xp=np)``, the array-API
    habit), with that module: a call such as ``xp.sum(y)`` is the module's function
    (another array module passed in has functions of the same names and meanings),
    by the compiler's name for each parameter (a stand-in for ``xp``, see
    :mod:`.front.names`).

    >>> import numpy as np
    >>> from autodiff_tutor.compiler.front.source import parse_function
    >>> def f(x, xp=np):
    ...     return xp.sum(x)
    >>> module_parameters(parse_function(f))["xp"] is np
    True
    """
    try:
        parameters = inspect.signature(parsed.fn).parameters
    except (TypeError, ValueError):
        return {}
    return {
        parsed.own_name(name): p.default
        for name, p in parameters.items()
        if isinstance(p.default, types.ModuleType)
    }
