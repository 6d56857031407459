"""The records of the primitives: one home each, and facts that agree with each other.

Every check walks the registry, so a new record is held to them with no new test.
"""

from __future__ import annotations

import ast
import inspect
import linecache
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
from oracles import central_difference

from autodiff_tutor import jvp
from autodiff_tutor.rules import names
from autodiff_tutor.rules.catalog import FAMILIES
from autodiff_tutor.rules.formula import parse
from autodiff_tutor.rules.record import ELEMENTWISE, HELPER, SELECTION, Family
from autodiff_tutor.rules.registry import all_rules, is_nondifferentiable, lookup
from autodiff_tutor.rules.symbolic_spec import ArrayRule, ScalarRule
from autodiff_tutor.tracing.gradient import formula_parts, input_gradients
from autodiff_tutor.verify.symbolic.algebra import FUNCTIONS


def test_every_spelling_names_a_primitive() -> None:
    """An alias, method or attribute that points nowhere would be a silent typo."""
    known = set(all_rules()) | {op for f in FAMILIES for op in f.nondifferentiable}
    spellings = {**names.ALIASES, **names.ATTRIBUTES}
    spellings.update({f"object {k}": op for k, op in names._BY_OBJECT.items()})
    spellings.update({f"method {m}": m for m in names.METHODS})
    unknown = {name: op for name, op in spellings.items() if op not in known}
    assert not unknown, f"spellings of no primitive: {unknown}"


def test_no_alias_is_the_name_of_a_rule() -> None:
    """``canonical`` would send that rule's own name elsewhere."""
    assert not set(names.ALIASES) & set(all_rules())


@pytest.mark.parametrize("op", sorted(all_rules()))
def test_record_facts_agree(op: str) -> None:
    rule = all_rules()[op]
    assert not is_nondifferentiable(op), f"{op}: a rule and non-differentiable"
    if rule.shape in (ELEMENTWISE, SELECTION):
        # elementwise: checked on scalars with its own sympy form, which the symbolic
        # translator then knows under every name of the op
        assert rule.sympy is not None, f"{op}: an elementwise record needs a sympy form"
        assert isinstance(rule.symbolic, ScalarRule), f"{op}: checked on scalars"
        for name in [op, *(a for a in rule.aliases if isinstance(a, str))]:
            assert name in FUNCTIONS, f"{op}: the translator does not know {name!r}"
        assert not rule.options, f"{op}: an elementwise op has no options"
    if rule.shape == ELEMENTWISE and len(rule.inputs) > 1:
        assert rule.broadcasting, f"{op}: a binary elementwise op broadcasts"
    for alias in rule.aliases:
        if isinstance(alias, str):
            assert names.canonical(alias) == op
        else:
            assert names.op_of_callable(alias) == op
    if rule.method:
        assert names.op_of_method(op) == op
    if rule.attribute:
        assert names.op_of_attribute(rule.attribute) == op


def test_the_array_library_names_find_the_record() -> None:
    assert names.op_of_callable(np.logaddexp) == "logaddexp"
    assert names.op_of_callable(np.absolute) == "abs" == names.op_of_callable(abs)
    assert names.canonical("cupy_tanh") == "tanh"
    assert lookup("logaddexp").shape == ELEMENTWISE


# --- the record type and its decorators -------------------------------------------------


def test_a_family_refuses_an_op_defined_twice() -> None:
    family = Family("example")
    family.defvjp("twice")(lambda g, x: 2 * g)
    with pytest.raises(ValueError, match="defined twice"):
        family.defvjp("twice")(lambda g, x: 2 * g)
    again = Family("run time", redefine=True)
    again.defvjp("twice")(lambda g, x: 2 * g)
    again.defvjp("twice")(lambda g, x: 3 * g)
    assert again.rules["twice"].vjp(1.0, 0.0) == 3.0


def test_a_rule_must_take_g_first() -> None:
    with pytest.raises(ValueError, match="first parameter must be 'g'"):
        Family("example").defvjp("bad")(lambda x, g: g)


def test_an_alias_string_for_a_tuple_is_refused() -> None:
    """``aliases=("neg")`` is a string: its letters would become spellings of the op."""
    with pytest.raises(ValueError, match="aliases is a tuple of names, not 'neg'"):
        Family("example").defvjp("negative", aliases=("neg"))(lambda g, x: -g)


def test_the_sympy_form_is_the_default_symbolic_primal() -> None:
    """The symbolic check runs ``xp.<op>``, which the checker's ``xp`` takes from the
    record's sympy form."""
    family = Family("example", shape=ELEMENTWISE)
    family.defvjp("cube", sympy=lambda sp, x: x**3)(lambda g, x: 3 * g * x * x)
    rule = family.rules["cube"]
    assert rule.shape == ELEMENTWISE and isinstance(rule.symbolic, ScalarRule)
    assert rule.symbolic.primal(SimpleNamespace(cube=lambda v: v**3), 2.0) == 8.0


def test_an_array_check_runs_the_primitive_or_the_helper_by_default() -> None:
    """An ``ArrayRule`` without a primal runs ``xp.<op>(*inputs, **options)``, or the
    runtime helper of a helper's rule; one shared by two records serves each its own."""
    family = Family("example")
    shared = ArrayRule(cases=[(((2, 3),), {"axis": 0})])
    for op in ("sum", "max"):
        family.defvjp(op, symbolic=shared)(lambda g, x, axis=None: g)
    family.defvjp("unstack", shape=HELPER, symbolic=shared)(lambda g, grad, axis=0: g)
    x = np.arange(6.0).reshape(2, 3)
    assert family.rules["sum"].symbolic.primal(np, x, axis=0).tolist() == [3.0, 5.0, 7.0]
    assert family.rules["max"].symbolic.primal(np, x, axis=0).tolist() == [3.0, 4.0, 5.0]
    assert len(family.rules["unstack"].symbolic.primal(np, x, axis=0)) == 2
    assert shared.primal is None


def negative_example(g, x):
    return -g


def product_example(g, xp, x, y, axes=2):
    return xp.tensordot(g, y, axes), xp.tensordot(x, g, axes)


def test_tangents_derived_from_the_vjp() -> None:
    """``tangent=`` writes the tangent rule from the vjp (its source readable, as a
    written one's); an elementwise rule gets the symmetric one unless a ``defjvp``
    replaces it; an unknown way is refused."""
    family = Family("example", shape=ELEMENTWISE)
    family.defvjp("negative", sympy=lambda sp, x: -x)(negative_example)
    assert inspect.getsource(family.rules["negative"].jvp) == (
        "def negative_tangent(x, *, d_x):\n    return -d_x\n"
    )
    family.defjvp("negative")(lambda x, *, d_x: -1.0 * d_x)
    assert family.rules["negative"].jvp(2.0, d_x=3.0) == -3.0
    products = Family("products")
    products.defvjp("tensordot", tangent="multilinear")(product_example)
    assert ast.unparse(parse(products.rules["tensordot"].jvp).expressions[0]) == (
        "xp.tensordot(d_x, y, axes) + xp.tensordot(x, d_y, axes)"
    )
    with pytest.raises(ValueError, match="tangent='sideways' is none of"):
        Family("example").defvjp("twice", tangent="sideways")(negative_example)


def test_a_tangent_is_derived_at_its_first_read() -> None:
    """Registering a rule does not build its derived tangent (loading the catalog
    stays cheap); the first read of ``jvp`` builds it, once, and a refusal of the
    derivation still comes at registration."""
    family = Family("example", shape=ELEMENTWISE)
    family.defvjp("negative")(negative_example)
    rule = family.rules["negative"]
    assert (rule.tangent, rule.written_jvp) == ("symmetric", None)
    assert rule.jvp is rule.jvp and rule.jvp(2.0, d_x=3.0) == -3.0
    assert rule.tangent == ""
    with pytest.raises(ValueError, match="<lambda>: not a def"):
        Family("example").defvjp("twice", tangent="linear")(lambda g, x: 2 * g)
    with pytest.raises(ValueError, match="no input has a gradient"):
        Family("example").defvjp("flat", tangent="multilinear")(no_gradient_example)
    family.defvjp("flat")(no_gradient_example)  # an elementwise rule's default: none
    assert family.rules["flat"].jvp is None is family.rules["flat"].jvp


def no_gradient_example(g, x, y):
    return None, None


def sin_of_flipped(x):
    return np.sum(np.sin(x) * np.flip(x))


def test_a_derived_tangents_source_survives_a_cleared_linecache() -> None:
    """A derived tangent's source is kept on the function: after a tool clears
    ``linecache`` (and before any parse of it), the rules' parse and
    ``inspect.getsource`` still read it, as they read a written rule's, and forward
    mode through the op (a symmetric and a linear tangent) agrees with central
    differences."""
    linecache.clearcache()
    parse.cache_clear()  # as in a process whose linecache was cleared before a first parse
    assert ast.unparse(parse(lookup("sin").jvp).expressions[0]) == "d_x * xp.cos(x)"
    assert inspect.getsource(lookup("sin").jvp) == (
        "def sin_tangent(xp, x, *, d_x):\n    return d_x * xp.cos(x)\n"
    )
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    _, tangent = jvp(sin_of_flipped, (x,), (v,))
    assert np.isclose(tangent, central_difference(sin_of_flipped, [x], 0) @ v, atol=1e-6)


@dataclass(frozen=True)
class Factor:
    value: float


def capped_example(g, xp, x, cap=np.inf):
    return xp.where(x < cap, g, 0.0)


def scaled_example(g, xp, x, factor=Factor(3.0)):
    return xp.scaled(g, factor=factor)


def test_a_derived_tangent_takes_the_vjps_default_objects() -> None:
    """An option default without a literal (``np.inf``, an object whose repr names a
    class the tangent cannot see) is the vjp's own object in the derived tangent, and
    its source shows it as the vjp's source writes it."""
    family = Family("example", shape=ELEMENTWISE)
    family.defvjp("capped")(capped_example)
    capped = family.rules["capped"].jvp
    assert inspect.signature(capped).parameters["cap"].default is capped_example.__defaults__[0]
    assert inspect.getsource(capped) == (
        "def capped_tangent(xp, x, cap=np.inf, *, d_x):\n    return xp.where(x < cap, d_x, 0.0)\n"
    )
    assert capped(np, np.array([1.0, 5.0]), 2.0, d_x=np.ones(2)).tolist() == [1.0, 0.0]
    assert capped(np, np.array([1e300]), d_x=np.ones(1)).tolist() == [1.0]
    family.defvjp("scaled", tangent="linear by keyword")(scaled_example)
    scaled = family.rules["scaled"].jvp
    xp = SimpleNamespace(scaled=lambda x, factor: factor.value * x)
    assert scaled(xp, 1.0, d_x=2.0) == 6.0
    assert inspect.signature(scaled).parameters["factor"].default is scaled_example.__defaults__[0]


def roll_swapped(g, xp, x, axis=None, shift=0):
    return xp.roll(g, -shift, axis)


def test_options_by_position_must_be_numpys_positions() -> None:
    """A tangent derived with options by position calls ``xp.<op>`` with them in the
    vjp's order: they must be numpy's next positional parameters (``roll(a, shift,
    axis)``), or the derivation is refused, naming the rule; by keyword, any order
    is right."""
    with pytest.raises(ValueError, match="rule 'roll'.*shift, axis"):
        Family("example").defvjp("roll", tangent="linear")(roll_swapped)
    family = Family("example")
    family.defvjp("roll", tangent="linear by keyword")(roll_swapped)
    tangent = family.rules["roll"].jvp
    assert tangent(np, np.arange(3.0), None, 1, d_x=np.arange(3.0)).tolist() == [2.0, 0.0, 1.0]


# --- the rule grammar, parsed once ------------------------------------------------------


def mixed(g, xp, x, y):
    both = g * x
    return both * y, both


def not_a_formula(g, x):
    if x:
        return g
    return -g


def test_one_parse_serves_the_inliner_and_tracing() -> None:
    formula = parse(mixed)
    assert parse(mixed) is formula  # parsed once
    assert [ast.unparse(e) for e in formula.expressions] == ["g * x * y", "g * x"]
    assert [ast.unparse(e) for e in formula.returned] == ["both * y", "both"]
    first, second = formula_parts(mixed)
    assert first(g=2.0, xp=np, x=3.0, y=5.0) == 30.0 and second(2.0, np, 3.0, 5.0) == 6.0


def test_a_body_outside_the_grammar_is_refused_by_the_parse() -> None:
    with pytest.raises(ValueError, match="only assignments and one return"):
        parse(not_a_formula)
    assert formula_parts(not_a_formula) is None  # tracing then calls the whole rule


def test_tracing_calls_only_the_wanted_formula() -> None:
    rule = lookup("power")
    args = {"g": 1.0, "out": 4.0, "xp": np, "x": np.float64(-2.0), "y": 2}
    with np.errstate(invalid="raise"):  # log(-2) is never computed
        assert input_gradients(rule, args, (True, False)) == [-4.0, None]
