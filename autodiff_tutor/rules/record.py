"""The record of one primitive, and the decorators a family module fills it with.

A primitive's facts live together, in its family's module (``elementwise.py``,
``reductions.py``, ...): one :class:`Rule` holds

- ``vjp``: the reverse-mode rule, a tiny function whose ``return`` expression the
  compiler inlines (``@family.defvjp``);
- ``jvp``: the forward-mode (tangent) rule, the same way (``@family.defjvp``), or
  derived from the vjp where the math says how (``tangent=``, :func:`derived_tangent`;
  an elementwise rule's by default);
- ``shape``: its shape class (:data:`ELEMENTWISE`, :data:`REDUCTION`, ...), which the
  compiler reads to know when a gradient needs no ``unbroadcast``;
- ``sympy``: its value on sympy scalars, which the symbolic checker differentiates,
  and ``symbolic``: how that check runs it (a
  :class:`~autodiff_tutor.rules.symbolic_spec.ScalarRule` or an
  :class:`~autodiff_tutor.rules.symbolic_spec.ArrayRule`, from
  :mod:`autodiff_tutor.rules.symbolic_spec`);
- ``convention``: the value it takes at kinks (listed in the book);
- ``math`` and ``latex``: its formula as text (``"max_i x_i"``) and, where the sympy
  form would not say it as well (a kink's ``Piecewise``, a reduction), in LaTeX
  (``\\max_i x_i``); elsewhere the LaTeX is made from the sympy form
  (:func:`autodiff_tutor.verify.symbolic.latex.rule_latex`);
- ``aliases``: the other names and objects that mean it (``"absolute"``,
  ``builtins.abs``), ``method`` (``x.sum()``) and ``attribute`` (``x.T``).

Rules' parameters follow one convention:

- ``g``: the gradient of the primitive's output (always first);
- ``out``: the primal output, when the derivative is cheaper from it (tanh, exp);
- ``xp``: the array module, when the formula calls array functions;
- then the primitive's own parameters, in its signature's order. Those without a
  default are the *inputs*, one returned gradient each (``None`` where an input is
  never differentiable, such as the condition of ``where``); those with a default
  are options (``axis``, ``keepdims``).

Tangent rules take ``out`` and ``xp`` as needed, the primal parameters in the vjp
rule's order and with its defaults, then one keyword-only ``d_<input>`` tangent per
input (so they may follow options: ``def sum_tangent(xp, x, axis=None, *, d_x)``), and
return the output tangent. An input that never carries a derivative (``where``'s
condition) still has a tangent parameter, ``d_condition=None``, that is not used.

**Inactive inputs.** The compiler passes no tangent for an input that does not depend
on the differentiated arguments. Two ways to inline a tangent rule then, both exact:

- a rule whose return expression is a *sum* (``+``, ``-``, unary ``-``) of terms that
  each name exactly one tangent (``d_x * y + x * d_y``) may have the terms of an
  inactive tangent dropped; the result then has the broadcast shape of the terms left,
  so a ``broadcasting`` rule's result must be broadcast to ``out``'s shape;
- any rule may have an inactive tangent replaced by zeros of its input's shape
  (``zeros_like(x)``; a list of zeros for a list input). Rules whose output or
  tangents are lists (``concatenate``, ``list_append``) never use ``+`` on lists, so
  a sum is always an array sum.

If every input is inactive, the output is inactive. Kinks follow the vjp rules'
conventions (``abs'(0) = 0``, ties of ``maximum`` and of ``max`` split equally, the
bounds of ``clip`` are inclusive), so forward and reverse mode agree everywhere.

This module imports no family and no registry: families import it, the catalog
imports the families, the registry reads the catalog.

>>> cubes = Family("example")
>>> @cubes.defvjp("cube", math="x^3", sympy=lambda sp, x: x**3)
... def cube(g, x):
...     return g * 3 * x * x
>>> @cubes.defjvp("cube")
... def cube_tangent(x, *, d_x):
...     return d_x * 3 * x * x
>>> rule = cubes.rules["cube"]
>>> rule.inputs, rule.shape, rule.jvp(2.0, d_x=1.0)
(('x',), 'other', 12.0)
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff_tutor.rules.formula import Formula, keep_source, parse, substitute
from autodiff_tutor.rules.symbolic_spec import ArrayRule, NumericOnly, ScalarRule
from autodiff_tutor.runtime import helpers
from autodiff_tutor.syntax import copy_tree

SPECIAL_PARAMETERS = ("g", "out", "xp")

# --- shape classes: what the compiler may assume about the output's shape -------------

ELEMENTWISE = "elementwise"
"""The output has the shape and dtype its array operands share (numbers aside)."""
SELECTION = "selection"
"""Elementwise with broadcasting, but the output's class is not inferred (``clip``'s
bounds, ``where``'s mask)."""
REDUCTION = "reduction"
"""Sums, means, extrema over axes (``axis``, ``keepdims``)."""
LINALG = "linalg"
"""Products that contract axes (``matmul``, ``dot``, ``norm``)."""
SHAPE = "shape"
"""Moves values without changing them (``reshape``, indexing, lists)."""
HELPER = "helper"
"""A runtime helper that generated backward code calls (second derivatives)."""
OTHER = "other"

TANGENTS = (
    "symmetric",
    "symmetric in out's dtype",
    "linear",
    "linear by keyword",
    "multilinear",
    "multilinear by keyword",
)
"""The ways a tangent rule is derived from the vjp (``defvjp(..., tangent=...)``; see
:func:`derived_tangent`)."""


# --- the record ------------------------------------------------------------------------


@dataclass
class Rule:
    """A primitive's derivative rules and the facts about it (see the module docstring).

    >>> Rule("sin", lambda g, xp, x: g * xp.cos(x), ("x",), {}, False, True).shape
    'other'
    """

    op: str
    vjp: Callable[..., Any]
    inputs: tuple[str, ...]
    options: dict[str, Any]
    uses_out: bool
    uses_xp: bool
    broadcasting: bool = False
    sequence: bool = False
    list_result: bool = False
    fields: tuple[str, ...] = ()
    convention: str = ""
    written_jvp: Callable[..., Any] | None = field(default=None, repr=False)
    math: str = ""
    latex: str = ""
    check: Callable[..., None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    shape: str = OTHER
    sympy: Callable[..., Any] | None = None
    symbolic: ScalarRule | ArrayRule | NumericOnly | None = None
    aliases: tuple[Any, ...] = ()
    method: bool = False
    attribute: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    none_means: dict[str, Any] = field(default_factory=dict)
    view: str = ""
    #: how ``jvp`` derives from the vjp (one of :data:`TANGENTS`), at its first read;
    #: ``""`` once derived, or where ``defjvp`` wrote it
    tangent: str = ""

    @property
    def jvp(self) -> Callable[..., Any] | None:
        """The forward-mode (tangent) rule: written with ``defjvp``, derived from the
        vjp (``tangent``) the first time it is read, or ``None``.

        >>> def cube(g, x):
        ...     return g * 3 * x * x
        >>> Rule("cube", cube, ("x",), {}, False, False, tangent="symmetric").jvp(2.0, d_x=1.0)
        12.0
        """
        if self.tangent:
            # a ``tangent=`` was checked at registration (:func:`_derivation`); an
            # elementwise rule's default has none where its vjp is no formula the
            # derivation reads (a lambda). Built before it is set: a thread reading it
            # meanwhile builds it too, and never sees none.
            try:
                tangent = derived_tangent(self, self.tangent)
            except ValueError:
                tangent = None
            self.jvp = tangent
        return self.written_jvp

    @jvp.setter
    def jvp(self, fn: Callable[..., Any] | None) -> None:
        self.written_jvp = (
            fn if fn is None or self.check is None else checked(fn, self.check, self.options)
        )
        self.tangent = ""  # after: a reader that finds no tangent to derive finds this

    def check_options(self, options: dict[str, Any]) -> None:
        """Raise a clear error if the rule does not cover these option values (and the
        values of the inputs its check names, such as einsum's ``subscripts``)."""
        if self.check is not None:
            self.check(**{name: options[name] for name in self.checked_parameters()})

    def checked_parameters(self) -> list[str]:
        """The parameters the rule's ``check`` reads: options, or literal inputs.

        >>> Rule("f", lambda g, x: g, ("x",), {}, False, False).checked_parameters()
        []
        """
        return [] if self.check is None else list(inspect.signature(self.check).parameters)

    def signature_parameters(self) -> list[str]:
        """The primal parameters, inputs then options, as the primitive takes them."""
        return list(self.inputs) + list(self.options)


# --- a family module's decorators ---------------------------------------------------------


class Family:
    """The records of one family module, filled in by its decorators.

    ``shape`` is the family's default shape class. The catalog gathers the families;
    a family never registers anything globally. A family module that defines an op
    twice is an error; the registry's run-time family (``redefine=True``) lets a
    notebook cell that defines a rule run again.

    >>> Family("example").rules
    {}
    """

    def __init__(
        self,
        name: str,
        shape: str = OTHER,
        rules: dict[str, Rule] | None = None,
        nondifferentiable: set[str] | None = None,
        redefine: bool = False,
    ) -> None:
        self.name = name
        self.shape = shape
        self.redefine = redefine  # a rule defined again replaces the first (run time)
        self.rules: dict[str, Rule] = {} if rules is None else rules
        self.nondifferentiable: set[str] = set() if nondifferentiable is None else nondifferentiable
        # spellings of ops without a rule: names or objects (``"lt"`` -> ``"less"``)
        self.aliases: dict[Any, str] = {}
        self.attributes: dict[str, str] = {}  # array attributes of ops without a rule

    def defvjp(
        self,
        op: str,
        *,
        broadcasting: bool = False,
        sequence: bool = False,
        list_result: bool = False,
        fields: tuple[str, ...] = (),
        convention: str = "",
        math: str = "",
        latex: str = "",
        check: Callable[..., None] | None = None,
        shape: str | None = None,
        sympy: Callable[..., Any] | None = None,
        symbolic: ScalarRule | ArrayRule | NumericOnly | None = None,
        aliases: tuple[Any, ...] = (),
        method: bool = False,
        attribute: str | None = None,
        defaults: dict[str, Any] | None = None,
        none_means: dict[str, Any] | None = None,
        view: str = "",
        tangent: str = "",
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Record ``fn`` as the reverse-mode rule of primitive ``op``, with its facts.

        ``broadcasting`` asks the compiler to sum each gradient back to its input's
        shape (binary elementwise ops); ``sequence`` marks ops whose first input is a
        list of arrays (``concatenate``, ``stack``); ``list_result`` marks ops that
        return a list or a tuple of arrays (``split``, ``linalg.eigh``): their ``g`` is
        a list with one gradient per item (zeros for items nobody read), their tangent
        a list, and ``fields`` names the items of numpy's named tuple
        (``res.eigenvalues`` is ``res[0]``); ``convention`` documents the value
        taken at non-differentiable points; ``math``/``latex`` give its formula (text,
        and LaTeX where the sympy form would not say it well); ``check(**options)`` raises an
        ``AutodiffError`` for option values the formula does not cover
        (``svd(a, full_matrices=True)``): the rule then refuses, at the call, instead of
        returning a wrong gradient; a check may also read an input given as a literal
        (einsum's ``subscripts``).
        ``sympy(sp, *inputs)`` is the primitive on sympy scalars (``sp`` is sympy with
        numpy's ``where`` and comparisons); ``symbolic`` says how to check it (default
        for a rule with a sympy form: on scalars). ``aliases`` are other names
        (``"absolute"``) or objects (``builtins.abs``) for the same primitive.
        ``defaults`` are the values of inputs a call may leave out (``norm.cdf(x)``:
        ``loc=0.0, scale=1.0``); a call that gives them differentiates them.
        ``none_means`` are the values an input given as ``None`` stands for in the
        formulas (``clip``'s absent bound: ``-inf``, ``inf``), where they run on values
        (tracing; the compiler folds the ``None`` into the formula it writes).
        ``view`` says whether numpy's result may share memory with the first input (a
        write through either is then seen by the other): ``"view"`` (``transpose``,
        ``x[i]``, ``flip``), ``"reshape"`` (a view with the same elements in the same
        order), ``"split"`` (a list of views), ``"read"`` (a view numpy makes read-only,
        or a new array: ``diag`` of a matrix, of a vector; a write into the input is seen
        through it, a write through it never reaches the input); ``""`` for a new array
        (``tests/test_rules_views.py`` checks each record against numpy).
        ``tangent`` derives the forward-mode rule from this one (one of
        :data:`TANGENTS`, see :func:`derived_tangent`) instead of a ``defjvp`` below
        it; an elementwise rule's (shape ``ELEMENTWISE`` or ``SELECTION``) is
        ``"symmetric"`` unless a ``defjvp`` replaces it.

        >>> family = Family("example")
        >>> @family.defvjp("twice", math="2 x", aliases=("double",))
        ... def twice(g, x):
        ...     return 2 * g
        >>> family.rules["twice"].aliases
        ('double',)
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            params = inspect.signature(fn).parameters
            names = list(params)
            if not names or names[0] != "g":
                raise ValueError(f"rule {op!r}: first parameter must be 'g'")
            if op in self.rules and not self.redefine:
                raise ValueError(f"rule {op!r} is defined twice in family {self.name!r}")
            if isinstance(aliases, str):  # ("neg") for ("neg",): its letters would be names
                raise ValueError(f"rule {op!r}: aliases is a tuple of names, not {aliases!r}")
            primal = [n for n in names if n not in SPECIAL_PARAMETERS]
            inputs = tuple(n for n in primal if params[n].default is inspect.Parameter.empty)
            options = {n: params[n].default for n in primal if n not in inputs}
            kind = self.shape if shape is None else shape
            spec = symbolic or (ScalarRule() if sympy is not None else None)
            if isinstance(spec, ScalarRule | ArrayRule) and spec.primal is None:
                spec = dataclasses.replace(spec, primal=_by_name(op, kind == HELPER))
            self.rules[op] = Rule(
                op=op,
                vjp=fn if check is None else checked(fn, check, options),
                inputs=inputs,
                options=options,
                uses_out="out" in names,
                uses_xp="xp" in names,
                broadcasting=broadcasting,
                sequence=sequence,
                list_result=list_result,
                fields=tuple(fields),
                convention=convention,
                math=math,
                latex=latex,
                check=check,
                shape=kind,
                sympy=sympy,
                symbolic=spec,
                aliases=tuple(aliases),
                method=method,
                attribute=attribute,
                defaults=dict(defaults or {}),
                none_means=dict(none_means or {}),
                view=view,
            )
            rule = self.rules[op]
            if tangent:
                _derivation(rule, tangent)  # refused here, not at the tangent's first use
            # derived when first read (most rules never are); an elementwise rule's is
            # symmetric unless said otherwise
            default = "symmetric" if rule.shape in (ELEMENTWISE, SELECTION) else ""
            rule.tangent = tangent or default
            return fn

        return register

    def defjvp(self, op: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Record ``fn`` as the forward-mode (tangent) rule of ``op`` (defined above it).

        A rule that refuses some options (``norm``'s ``ord``) refuses them in both modes.

        >>> family = Family("example")
        >>> @family.defvjp("twice")
        ... def twice(g, x):
        ...     return 2 * g
        >>> @family.defjvp("twice")
        ... def twice_tangent(x, *, d_x):
        ...     return 2 * d_x
        >>> family.rules["twice"].jvp(1.0, d_x=0.5)
        1.0
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.rules[op].jvp = fn
            return fn

        return register

    def declare_nondifferentiable(self, *ops: str, aliases: dict[Any, str] | None = None) -> None:
        """Primitives whose output carries no gradient (comparisons, ``sign``...), and
        other names for them (``"lt"`` for ``"less"``).

        >>> family = Family("example")
        >>> family.declare_nondifferentiable("less", aliases={"lt": "less"})
        >>> sorted(family.nondifferentiable), family.aliases
        (['less'], {'lt': 'less'})
        """
        self.nondifferentiable.update(ops)
        self.aliases.update(aliases or {})


def derived_tangent(rule: Rule, how: str) -> Callable[..., Any]:
    """The tangent rule that ``how`` (one of :data:`TANGENTS`) derives from ``rule``'s
    vjp: a function with the tangent rules' signature (the options' defaults are the
    vjp's own objects), whose source (``inspect.getsource``) is its formula, kept on
    the function (:func:`~autodiff_tutor.rules.formula.keep_source`). Options passed by
    position to numpy's ``op`` must be its next positional parameters, in order.

    - ``"symmetric"``: each input's Jacobian is symmetric (elementwise ops: diagonal): the
      vjp with ``g`` replaced by each input's tangent, the terms added;
      ``"symmetric in out's dtype"``: each term cast, ``cast_like(term, out)`` (scipy's
      densities compute in float64; the family module imports ``cast_like``);
    - ``"linear"``: linear in its differentiable inputs together, the others only shape
      it: the primitive applied to their tangents, the options by position
      (``xp.flip(d_x, axis)``; a runtime helper calls itself: ``unjoin(d_grad, xs, how)``);
    - ``"multilinear"``: linear in each differentiable input on its own (products): the
      sum, over those inputs, of the primitive with that input replaced by its tangent
      (``xp.dot(d_x, y) + xp.dot(x, d_y)``);
    - ``"... by keyword"``: the options by keyword (``xp.sum(d_x, axis=axis, ...)``).

    >>> def cube(g, x):
    ...     return g * 3 * x * x
    >>> tangent = derived_tangent(Rule("cube", cube, ("x",), {}, False, False), "symmetric")
    >>> print(inspect.getsource(tangent), end="")
    def cube_tangent(x, *, d_x):
        return d_x * 3 * x * x
    >>> tangent(2.0, d_x=1.0)
    12.0
    """
    vjp, gradients = _derivation(rule, how)
    unused = [n for n, e in gradients.items() if isinstance(e, ast.Constant) and e.value is None]
    if how.startswith("symmetric"):
        terms = [
            substitute(e, {"g": ast.Name(f"d_{n}", ast.Load())})
            for n, e in gradients.items()
            if n not in unused
        ]
        if how.endswith("dtype"):
            out = ast.Name("out", ast.Load())
            terms = [ast.Call(ast.Name("cast_like", ast.Load()), [t, out], []) for t in terms]
        body = functools.reduce(lambda a, b: ast.BinOp(a, ast.Add(), b), terms)
        scope = inspect.unwrap(rule.vjp).__globals__  # the names the vjp's formula calls
    else:
        if rule.shape == HELPER:
            callee: ast.expr = ast.Name(rule.op, ast.Load())
            scope = {rule.op: getattr(helpers, rule.op)}
        else:
            callee = ast.Attribute(ast.Name("xp", ast.Load()), rule.op, ast.Load())
            scope = {}
        active = [n for n in rule.inputs if n not in unused]

        def call(moved: list[str]) -> ast.expr:
            names = [f"d_{n}" if n in moved else n for n in rule.inputs]
            if how.endswith("keyword"):
                keywords = [ast.keyword(n, ast.Name(n, ast.Load())) for n in rule.options]
            else:
                names, keywords = names + list(rule.options), []
            return ast.Call(callee, [ast.Name(n, ast.Load()) for n in names], keywords)

        calls = [call(active)] if how.startswith("linear") else [call([n]) for n in active]
        body = functools.reduce(lambda a, b: ast.BinOp(a, ast.Add(), b), calls)
    used = {n.id for n in ast.walk(body) if isinstance(n, ast.Name)}
    primal = [n for n in ("out", "xp") if n in used] + [*rule.inputs, *rule.options]
    name = f"{rule.op}_tangent"
    definition = ast.FunctionDef(
        name=name,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(n) for n in primal],
            kwonlyargs=[ast.arg(f"d_{n}") for n in rule.inputs],
            kw_defaults=[ast.Constant(None) if n in unused else None for n in rule.inputs],
            defaults=[_default_expression(vjp.tree, n) for n in rule.options],
        ),
        body=[ast.Return(body)],
        decorator_list=[],
        type_params=[],
        lineno=1,
    )
    text = ast.unparse(definition) + "\n"
    # compiled without the defaults' expressions, which name what the vjp's module sees:
    # the defaults are the vjp's own objects (np.inf, any object), set below
    compiled = copy_tree(definition)
    compiled.args.defaults = []
    first, second = text.splitlines()
    _place(compiled, 1, len(first))  # the formula's nodes carry the vjp's lines
    _place(compiled.body[0], 2, len(second), start=4)
    compiled.end_lineno = 2  # the def spans both
    filename = f"<{name}, derived from {rule.vjp.__name__}>"
    namespace: dict[str, Any] = {}
    module = ast.Module([compiled], type_ignores=[])
    exec(compile(module, filename, "exec"), scope, namespace)  # noqa: S102
    tangent = namespace[name]
    tangent.__defaults__ = tuple(rule.options.values()) or None
    # kept on the function: linecache, where inspect and parse read it, may be cleared
    keep_source(tangent, text)
    return tangent


def _derivation(rule: Rule, how: str) -> tuple[Formula, dict[str, ast.expr]]:
    """The vjp's formula and each input's gradient expression, for deriving ``rule``'s
    tangent the way ``how`` says; ``ValueError`` where it cannot be derived so."""
    if how not in TANGENTS:
        raise ValueError(f"rule {rule.op!r}: tangent={how!r} is none of {TANGENTS}")
    vjp = parse(rule.vjp)
    gradients = dict(zip(rule.inputs, vjp.expressions, strict=True))
    if all(isinstance(e, ast.Constant) and e.value is None for e in gradients.values()):
        raise ValueError(f"rule {rule.op!r}: no input has a gradient, so no tangent")
    positional = not how.startswith("symmetric") and not how.endswith("keyword")
    if positional and rule.shape != HELPER:
        _check_positions(rule, how)
    return vjp, gradients


def _place(tree: ast.AST, line: int, end: int, start: int = 0) -> None:
    """Put every node of ``tree`` on line ``line``, columns ``start`` to ``end``."""
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = line
            node.col_offset, node.end_col_offset = start, end


def _default_expression(tree: ast.FunctionDef, option: str) -> ast.expr:
    """The expression ``tree``'s ``def`` gives as the default of ``option``."""
    arguments = tree.args
    positional = arguments.posonlyargs + arguments.args
    with_default = positional[len(positional) - len(arguments.defaults) :] + arguments.kwonlyargs
    defaults = arguments.defaults + arguments.kw_defaults
    return dict(zip([a.arg for a in with_default], defaults, strict=True))[option]


def _check_positions(rule: Rule, how: str) -> None:
    """Refuse a derivation that passes ``rule``'s options by position to numpy's
    ``op`` where numpy's next positional parameters are not those options, in order
    (the tangent would then give each option's value to another parameter)."""
    try:
        parameters = inspect.signature(getattr(np, rule.op)).parameters.values()
    except (AttributeError, TypeError, ValueError):  # not numpy's, or no signature
        return
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    positional = [p.name for p in parameters if p.kind in kinds]
    taken = positional[len(rule.inputs) : len(rule.inputs) + len(rule.options)]
    if taken != list(rule.options):
        raise ValueError(
            f"rule {rule.op!r}: tangent={how!r} passes the options ({', '.join(rule.options)}) "
            f"by position, but numpy's {rule.op} takes ({', '.join(taken)}) there; order "
            f"them as numpy does, or use {how + ' by keyword'!r}"
        )


def _by_name(op: str, helper: bool) -> Callable[..., Any]:
    """``xp.<op>(*inputs, **options)``, the primal of a symbolic check on the checker's
    ``xp`` (a scalar rule's is its record's sympy form), or the runtime helper ``op``."""

    def primal(xp: Any, *inputs: Any, **options: Any) -> Any:
        return getattr(helpers if helper else xp, op)(*inputs, **options)

    return primal


def checked(fn: Callable[..., Any], check: Callable[..., None], options: dict[str, Any]):
    """``fn`` that first checks its option values (for direct calls, as tracing makes).

    >>> def positive_only(scale=1):
    ...     if scale < 0:
    ...         raise ValueError("scale must be positive")
    >>> scaled = checked(lambda g, x, scale=1: g * scale, positive_only, {"scale": 1})
    >>> scaled(1.0, 2.0, scale=-1)
    Traceback (most recent call last):
    ValueError: scale must be positive
    """
    signature = inspect.signature(fn)
    names = list(inspect.signature(check).parameters)  # options, or inputs it checks

    @functools.wraps(fn)
    def checked_fn(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        check(**{name: bound.arguments.get(name, options.get(name)) for name in names})
        return fn(*args, **kwargs)

    return checked_fn
