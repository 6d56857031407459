"""The fuzz slice of ``make test``: a few hundred seeded random programs, each right in
every mode or refused with a located error (``make fuzz N=...`` runs a long campaign).

The seeds are ``0 .. SLICE - 1``, all of them, and ``RARE_SEEDS``. Constructs that hit a
known compiler or rules bug are left out of the generator by name, and each name points
at the strict xfail that reproduces the bug (``test_<subject>.test_name``, in the test
file of its subject, or the name of a test here for the bugs the fuzz families found):
when the fix lands, that xfail fails, and the construct comes back into the slice here.

The families ``object_method``, ``state_across_calls`` and ``index_tricks``, and those of
objects, methods and functions as values (``method_calls``, ``function_values``,
``static_structure``, ``varargs``, ``generated_names``) and of derivatives inside the
program (``nested_grad``), are checked below on a few seeds each (``--only``): their
programs are written, run, and are right in the modes no known bug touches. So are the
families drawn only when asked for: ``buffer_fill`` and ``conversion`` (integer buffers
among them) and ``multi_index_write``, which are never wrong.
"""

from __future__ import annotations

import functools
import importlib
import runpy

import numpy as np
import pytest
from fuzz import check, check_forms
from fuzz.campaign import KINDS, _reproducer, run
from fuzz.check import Loaded, Outcome, check_program
from fuzz.forms_calls import CALL_FAMILIES, NESTED_FAMILIES, CallForm, Piece
from fuzz.generator import ASKED_ONLY, CONSTRUCTS, Program, generate
from fuzz.minimize import minimize, still_fails

import autodiff_tutor as ad
from autodiff_tutor.compiler.specialize.probe import guard_key
from autodiff_tutor.errors import Location, TracingError, UnsupportedSyntaxError

SLICE = 320  # seeds 0..319
#: the first seed that writes a construct the slice draws rarely (prod_axes), or never
#: (nested_grad, drawn unasked in its own seeds only)
RARE_SEEDS = (749, 62_000_000)

#: construct left out of the slice -> the strict xfail of the bug it hits
KNOWN_BUG_CONSTRUCTS: dict[str, str] = {}
#: construct whose programs skip only the second-order check -> its strict xfail
KNOWN_BUG_HVP: dict[str, str] = {}


def test_every_left_out_construct_has_its_strict_xfail():
    for construct, name in {**KNOWN_BUG_CONSTRUCTS, **KNOWN_BUG_HVP}.items():
        assert construct in CONSTRUCTS
        module, _, test_name = name.rpartition(".")
        test = getattr(importlib.import_module(module), test_name) if module else globals()[name]
        marks = getattr(test, "pytestmark", [])
        assert any(m.name == "xfail" and m.kwargs.get("strict") for m in marks), name


@pytest.fixture(scope="module")
def summary():
    return run(
        [*range(SLICE), *RARE_SEEDS],
        exclude=frozenset(KNOWN_BUG_CONSTRUCTS),
        hvp_exclude=frozenset(KNOWN_BUG_HVP),
    )


def test_the_slice_is_right_or_refused_in_every_mode(summary):
    assert summary.bad() == 0, "\n" + summary.table()


def test_the_slice_checks_something_in_every_mode(summary):
    for mode in check.MODES:
        assert summary.totals[(mode, "right")] > 0, mode
    assert summary.invalid < SLICE // 10  # the generator writes valid numpy


def test_the_slice_covers_every_construct_it_keeps(summary):
    """Every construct but those drawn only when asked for (their test is below)."""
    used = {construct for (_, construct, _) in summary.counts}
    assert set(CONSTRUCTS) - set(KNOWN_BUG_CONSTRUCTS) - ASKED_ONLY - used == set()


# -- specialized pairs of while loops and helpers ----------------------------------------

#: The constructs of the specialization slice: shape-static programs (so that the second
#: and third calls run a specialized pair) with ``while`` loops whose values decide how
#: many iterations run, helpers and branches (which the specialized code checks).
SPECIALIZED = frozenset({"while", "helper", "if", "elementwise", "broadcast", "reduction"})
SPECIALIZED_SLICE = 80


def _iterations(loaded: Loaded, x: np.ndarray, w: np.ndarray) -> tuple[list[int], ...] | None:
    """The iteration counts a specialized pair kept in memory at ``x`` and at the third
    call's other values (``None`` where no specialized pair ran a ``while`` loop)."""
    both = ad.value_and_grad(loaded.f, wrt=[0, 1])
    both(x, w), both(x, w)
    pair = ad.differentiable(loaded.f).derivative([0, 1]).specializations.get(guard_key((x, w)))
    if pair is None or "while" not in pair.forward_source:
        return None
    counts = [[v for v in pair.forward(a, w)[1] if type(v) is int] for a in (x, x * 0.6 + 0.05)]
    return tuple(counts)


def test_while_loops_and_helpers_are_right_when_specialized():
    exclude = frozenset(CONSTRUCTS) - SPECIALIZED
    bad, varied, guarded, paths = [], 0, 0, 0
    for seed in range(SPECIALIZED_SLICE):
        program = generate(seed, exclude)
        bad += [(seed, o) for o in check_program(program, modes=("compiler",)) if o.kind != "right"]
        loaded = Loaded(program.source, program.seed)
        counts = _iterations(loaded, *program.inputs())
        varied += counts is not None and counts[0] != counts[1]
        pair = next(iter(ad.differentiable(loaded.f).derivative([0, 1]).specializations.values()))
        guarded += pair is not None and "expect_array(" in pair.forward_source
        paths += pair is not None and "expect_path(" in pair.forward_source
        loaded.close()
    assert not bad, bad
    assert varied >= 4  # the third call met another iteration count than the probe
    assert guarded >= 15 and paths >= 10  # helpers' outputs and branches' paths checked


# -- the checker can fail ---------------------------------------------------------------


def _program(body: str, result: str = "np.sum(v1 * v1)") -> Program:
    return Program(3, [], [body], [frozenset({"elementwise"})], result, False)


def test_a_wrong_gradient_is_caught(monkeypatch):
    real = ad.value_and_grad

    def off_by_a_bit(fn, wrt=0):
        both = real(fn, wrt)
        return lambda *a: (both(*a)[0], tuple(g * 1.001 for g in both(*a)[1]))

    monkeypatch.setattr(check.ad, "value_and_grad", off_by_a_bit)
    outcomes = check_program(_program("    v1 = np.tanh(x) * w\n"), modes=("compiler",))
    assert outcomes == [Outcome("compiler", "wrong", outcomes[0].detail)]


def test_a_wrong_value_is_caught(monkeypatch):
    real = ad.value_and_grad
    monkeypatch.setattr(
        check.ad, "value_and_grad", lambda fn, wrt=0: lambda *a: (0.5, real(fn, wrt)(*a)[1])
    )
    (outcome,) = check_program(_program("    v1 = np.sin(x)\n"), modes=("compiler",))
    assert outcome.kind == "wrong" and outcome.detail.startswith("value")


def test_the_tracing_check_judges_both_entry_points(monkeypatch):
    """``evaluate`` with ``gradient`` inside is judged as ``value_and_gradient`` is, and
    an entry point that refuses what the other answers, or answers another number, is a
    failure."""
    program = _program("    v1 = np.tanh(x) * w\n")
    assert check_program(program, modes=("tracing",)) == [Outcome("tracing", "right")]
    real = check._evaluate_and_gradient
    monkeypatch.setattr(
        check, "_evaluate_and_gradient", lambda f, x, w: (real(f, x, w)[0], [2 * x, w])
    )
    (outcome,) = check_program(program, modes=("tracing",))
    assert outcome.kind == "wrong" and outcome.detail.startswith("evaluate+gradient: dx")

    def refuse(f, x, w):  # located in the program: an acceptable refusal on its own
        raise TracingError("refused", Location(f.__code__.co_filename, 4, 4, "", 1))

    monkeypatch.setattr(check, "_evaluate_and_gradient", refuse)
    (outcome,) = check_program(program, modes=("tracing",))
    assert outcome.kind == "wrong" and "entry points differ" in outcome.detail


def test_an_unlocated_error_is_a_crash(monkeypatch):
    def refuse(fn, wrt=0):
        raise UnsupportedSyntaxError("no")  # no location: not an acceptable refusal

    monkeypatch.setattr(check.ad, "value_and_grad", refuse)
    (outcome,) = check_program(_program("    v1 = np.sin(x)\n"), modes=("compiler",))
    assert outcome.kind == "crash" and "unlocated" in outcome.detail


def test_a_located_refusal_is_accepted():
    program = _program("    v1 = x * 1.0\n    v1.sort()\n")
    (outcome,) = check_program(program, modes=("compiler",))
    assert outcome.kind == "refused"


def test_programs_are_seeded_and_load_with_their_source():
    program = generate(11, frozenset({"object_method", "state_across_calls"}))
    assert program.form is None and generate(11).blocks == program.blocks  # its own rng
    assert generate(11).source == generate(11).source
    loaded = Loaded(program.source, program.seed)
    x, w = program.inputs()
    assert np.isfinite(loaded.f(x, w))
    loaded.close()


def test_a_failure_is_minimized_to_the_block_that_causes_it(monkeypatch):
    program = Program(
        5,
        [],
        ["    v1 = np.sin(x)\n", "    v2 = np.cos(w)\n", "    v3 = np.floor(x) * x\n"],
        [frozenset({"elementwise"}), frozenset({"elementwise"}), frozenset({"cast"})],
        "np.sum(v1) + np.sum(v2) + np.sum(v3)",
        False,
    )
    failing = Outcome("compiler", "wrong", "value 1.0, expected 2.0")
    monkeypatch.setattr(
        "fuzz.minimize.check_program",
        lambda p, modes: [failing] if "floor" in p.source else [],
    )
    small = minimize(program, still_fails(failing))
    assert small.blocks == ["    v3 = np.floor(x) * x\n"] and small.constructs == {"cast"}


def test_a_kink_of_the_directional_difference_is_not_trusted():
    """At w[1] = 0, w * floor(w) has a kink whose slope jump is small along the
    direction (jvp's seeds 34 and 49), so both central steps agree on the average slope:
    the one-sided slopes show the kink, and the jvp is unchecked, not 'wrong'."""
    for seed in (34, 49):
        body = ["    v1 = w * np.floor(w)\n"]
        result = "np.sum(v1) + 0.1 * np.sum(x * x) + np.sum(w)"
        program = Program(seed, [], body, [frozenset({"cast"})], result, True)
        assert check_program(program, modes=("jvp",)) == [Outcome("jvp", "unchecked")]
        smooth = Program(seed, [], ["    v1 = w * np.sin(w)\n"], [frozenset()], result, True)
        assert check_program(smooth, modes=("jvp",)) == [Outcome("jvp", "right")]


# -- the families: objects, state changed between calls, index tricks -------------------

FAMILIES = ("object_method", "state_across_calls", "index_tricks", *CALL_FAMILIES)
FAMILIES += NESTED_FAMILIES
FAMILY_SEEDS = range(9_000_000, 9_000_004)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_writes_programs_that_run(family, tmp_path, capsys):
    """With ``--only`` a family, every program belongs to it, runs under plain numpy (at
    each of its states), and is checked in the modes that apply; a reproducer of an
    object or a program called across changes, where the compiler does not refuse it,
    runs as a script of its own."""
    for seed in FAMILY_SEEDS:
        program = generate(seed, require=frozenset({family}))
        assert family in program.constructs
        outcomes = check_program(program)
        assert {"compiler", "jvp", "tracing"} <= {o.mode for o in outcomes}, program.source
        assert all(o.kind in KINDS for o in outcomes)
        # a reproducer runs where the compiler answers (crashes of the newer families
        # are the campaign's to report)
        kind = outcomes[0].kind
        calls = (*CALL_FAMILIES, *NESTED_FAMILIES)
        runs = kind == "right" if family in calls else kind != "refused"
        if program.form is not None and runs:
            path = tmp_path / f"reproducer_{seed}.py"
            path.write_text(_reproducer("compiler", "right", program, program, outcomes[0]))
            runpy.run_path(str(path), run_name="__main__")
            assert "plain value:" in capsys.readouterr().out


def test_objects_are_right_or_refused_in_every_mode():
    """Bound methods and callable objects (``wrt="self.W"``, ``"self"``, the method's
    argument, ``grad(model)``) through the compiler, jvp and tracing, called twice."""
    exclude = frozenset({"state_across_calls", "index_tricks"})
    bad, right = [], set()
    for seed in range(9_000_000, 9_000_012):
        program = generate(seed, exclude, frozenset({"object_method"}))
        for outcome in check_program(program):
            bad += [(seed, outcome)] if outcome.kind not in ("right", "refused") else []
            if outcome.kind == "right" and outcome.mode == "compiler":
                right.add(repr(program.form.wrt))
    assert not bad, bad
    assert {"'self'", "'self.W'", "None", "0"} <= right  # each way of asking was checked


#: programs of functions and closures called across changes of globals, cells and helpers
FUNCTION_STATE_SEEDS = (9_000_008, 9_000_010, 9_000_012, 9_000_016, 9_000_042, 9_000_045, 9_000_065)


def test_functions_are_right_after_globals_cells_and_helpers_change():
    """Between calls of one compiled function: a closure cell rebound (a loop bound, an
    array), a helper redefined, global arrays changed in place and rebound, a global
    float, list and dict rebound or changed: each call equals a fresh compile and the
    differences, in every mode."""
    for seed in FUNCTION_STATE_SEEDS:
        program = generate(seed, frozenset({"index_tricks"}), frozenset({"state_across_calls"}))
        assert program.form.holder in ("function", "closure") and program.form.made == "once"
        outcomes = check_program(program)
        assert [o.kind for o in outcomes] == ["right"] * 3, outcomes


def _first_result_forever(fn, wrt=0):
    """A stand-in for ``ad.value_and_grad`` whose function keeps its first result."""
    both, first = _REAL_VALUE_AND_GRAD(fn, wrt), []

    def call(*args):
        first[:] = first or [both(*args)]
        return first[0]

    return call


_REAL_VALUE_AND_GRAD = ad.value_and_grad


def test_a_stale_compiled_function_is_caught(monkeypatch):
    """A compiled function that keeps giving its first result is wrong after the first
    change of state, and the detail starts with that change's kind."""
    monkeypatch.setattr(check_forms.ad, "value_and_grad", _first_result_forever)
    program = generate(9_000_016, frozenset({"index_tricks"}), frozenset({"state_across_calls"}))
    (outcome,) = check_program(program, modes=("compiler",))
    assert outcome.kind == "wrong"
    assert outcome.detail.startswith(program.form.changes[0].kind + ": ")


#: programs whose object has an attribute rebound between calls of one compiled method
STALE_SEEDS = (9_000_005, 9_000_014, 9_000_019, 9_000_023, 9_000_028)


def test_a_method_compiled_once_is_right_after_its_object_changes():
    """``value_and_grad(model.loss, wrt=...)`` made once, called after ``model.W = ...``,
    a list or dict attribute replaced, a number, loop bound or flag rebound: each call
    equals a fresh compile and the differences."""
    for seed in STALE_SEEDS:
        program = generate(seed, frozenset({"index_tricks"}), frozenset({"state_across_calls"}))
        assert program.form.holder == "object" and program.form.made == "once"
        (outcome,) = check_program(program, modes=("compiler",))
        assert outcome.kind == "right", (seed, outcome)


def test_values_joined_by_r_and_c_are_refused_by_the_compiler_and_followed_by_tracing():
    """``np.r_[a, b]``, ``np.r_[a, 0.5, b]``, ``np.c_[a, b]``, ``np.c_[m, np.ones(n)]`` of
    values that carry gradient: the compiler refuses them at the subscript (never the
    silent zero gradient of the joined values); tracing's numpy joins them with
    np.concatenate, and its gradient is judged right against the oracles."""
    for join in ("np.r_[w, np.sin(w)]", "np.r_[w, 0.5, w * w]", "np.c_[x, np.ones(3)]"):
        program = _program(f"    v1 = {join}\n")
        kinds = {
            o.mode: o.kind for o in check_program(program, modes=("compiler", "jvp", "tracing"))
        }
        assert kinds == {"compiler": "refused", "jvp": "refused", "tracing": "right"}, join


#: seeds of the buffer-filling and conversion families (tracing), and how many
BUFFER_SEEDS = range(63_000_000, 63_000_060)


def test_buffers_and_conversions_are_right_or_refused_in_tracing():
    """The families drawn only when asked for: arrays the program makes and fills
    (np.zeros, np.empty, np.full; row by row, by slices, +=, out=) and conversions
    (np.array of lists of values, np.asarray, np.mean of a list, np.float64) are never
    wrong in tracing, and most are right."""
    require = frozenset({"buffer_fill", "conversion"})
    kinds = []
    for seed in BUFFER_SEEDS:
        program = generate(seed, require=require)
        assert program.constructs & require
        (outcome,) = check_program(program, modes=("tracing",))
        assert outcome.kind in ("right", "refused"), (seed, outcome)
        kinds.append(outcome.kind)
    assert kinds.count("right") >= 0.7 * len(kinds), kinds.count("right")


def test_integer_buffers_are_never_wrong():
    """The integer and boolean buffers of ``buffer_fill`` (filled with integers made
    from values of the program, a float written into one now and then) are right or
    refused in the compiler and in tracing, never wrong."""
    require = frozenset({"buffer_fill", "conversion"})
    programs = [generate(seed, require=require) for seed in BUFFER_SEEDS]
    integer = [p for p in programs if "_counts = " in p.source]
    assert len(integer) >= 5
    for program in integer:
        for outcome in check_program(program, modes=("compiler", "tracing")):
            assert outcome.kind in ("right", "refused"), (program.seed, outcome)


MULTI_INDEX_SEEDS = range(64_000_000, 64_000_030)


def test_writes_at_several_integer_arrays_are_right_or_refused_in_every_mode():
    """The family drawn only when asked for: writes whose index names positions with
    several integer arrays, ``np.ix_``, a mask beside an array or negative integers (a
    position named twice now and then, which every mode refuses) are never wrong in
    any mode, and many are right."""
    require = frozenset({"multi_index_write"})
    compiler = []
    for seed in MULTI_INDEX_SEEDS:
        program = generate(seed, require=require)
        assert program.constructs & require
        outcomes = check_program(program)
        assert all(o.kind in ("right", "refused", "unchecked") for o in outcomes), seed
        compiler.append(outcomes[0].kind)
    assert compiler.count("right") >= 0.4 * len(compiler), compiler


#: programs whose method writes into its own attribute at every call (tracing follows
#: the write, as Python does; the compiler refuses it)
STATEFUL_SEEDS = (40_002_900, 40_006_719)


def test_every_call_of_a_stateful_method_starts_from_the_same_state():
    """A method that changes ``self.W`` in place at every call has a value that drifts
    call after call: the references and each mode are judged at the same state (each
    call puts the object's attributes back), so tracing, which follows the write as
    Python does, is right, and the compiler refuses the write into its parameter."""
    for seed in STATEFUL_SEEDS:
        program = generate(seed)
        assert program.form.holder == "object" and "object_method" in program.constructs
        kinds = {o.mode: o.kind for o in check_program(program)}
        assert kinds == {"compiler": "refused", "jvp": "refused", "tracing": "right"}, seed


NORM_ALONG_AN_AXIS = (
    "    v1 = np.linalg.norm(x + np.mean(x, axis=1, keepdims=True), axis=1, keepdims=True)\n"
)


def test_a_hessian_vector_product_is_judged_where_autograd_is_wrong():
    """autograd's gradient of ``norm(..., axis=1, keepdims=True)`` is wrong (it would
    make a right H v look wrong): where central differences do not confirm autograd's
    gradient, H v is checked against second differences of the program's values."""
    program = _program(NORM_ALONG_AN_AXIS)
    loaded = Loaded(program.source, program.seed)
    x, w = program.inputs()
    namespace_gradient = check.oracles.autograd_gradients(loaded.namespace, (x, w))[0]
    assert not check._autograd_confirmed(loaded, x, w, np.asarray(namespace_gradient))
    loaded.close()
    assert check_program(program, modes=("hvp",)) == [Outcome("hvp", "right")]


def test_a_wrong_hessian_vector_product_is_caught_by_second_differences(monkeypatch):
    real = ad.vjp

    def off_by_a_bit(fn, *args, **kwargs):
        value, pullback = real(fn, *args, **kwargs)
        return value, lambda *seeds: tuple(1.001 * g for g in pullback(*seeds))

    monkeypatch.setattr(check.ad, "vjp", off_by_a_bit)
    (outcome,) = check_program(_program(NORM_ALONG_AN_AXIS), modes=("hvp",))
    assert outcome.kind == "wrong", outcome


# -- objects, methods and functions as values -------------------------------------------

#: programs of forms_calls whose compiled function, made once, at each call or through
#: differentiable(), is right through changes of what it is given: (seed, family, kinds)
CALL_STATE_SEEDS = (
    (9_100_011, "function_values", "function_argument_changed"),
    (9_100_093, "function_values", "list_entry_swapped"),
    (9_100_006, "function_values", "default_changed"),
    (9_100_089, "function_values", "lambda_redefined"),
    (9_100_001, "function_values", "partial_keyword_changed"),  # a module's partial
    (9_100_023, "function_values", "partial_keyword_changed"),  # the partial differentiated
    (9_100_257, "method_calls", "instance_shadows_method"),
    (9_100_073, "method_calls", "method_replaced"),
    (9_100_007, "method_calls", "subobject_replaced"),
    (9_100_001, "method_calls", "partial_keyword_changed"),  # a partial in an attribute
    (9_100_106, "method_calls", "module_global_rebound"),
    (9_100_033, "method_calls", "module_loop_count_changed"),
    (9_100_023, "method_calls", "module_array_rebound"),
    (9_100_018, "method_calls", "call_replaced"),
    (9_100_019, "method_calls", "subobject_replaced"),  # an object with __slots__
    (9_100_006, "method_calls", "enum_attr_changed"),
    (9_100_081, "method_calls", "subobject_attr_rebound"),  # read through a reference cycle
    (9_100_120, "method_calls", "subobject_replaced"),  # an entry added to a dict of objects
    (9_100_007, "static_structure", "list_length_changed"),
    (9_100_001, "varargs", "varargs_count_changed"),
    (9_100_019, "varargs", "varargs_count_changed"),
    (9_100_127, "varargs", "partial_keyword_changed"),
    (9_100_011, "varargs", "call_replaced"),
)


@pytest.mark.parametrize(("seed", "family", "kind"), CALL_STATE_SEEDS)
def test_calls_are_right_after_what_they_are_given_changes(seed, family, kind):
    """Between calls of one compiled function: another function passed, a module lambda
    redefined, a method replaced on the class or shadowed by an instance attribute, a
    callable sub-object replaced, an enum attribute's member, an attribute read through
    a reference cycle, a dict of objects grown, a longer or shorter list, another number
    of ``*args``, a list of functions changed, a default rebound, a partial's keyword
    changed in place, a global of another module whose class's method the code calls,
    the target's ``__call__`` replaced on its class: each call equals a fresh compile
    and the differences."""
    program = generate(seed, require=frozenset({family}))
    assert kind in [c.kind for c in program.form.changes]
    (outcome,) = check_program(program, modes=("compiler",))
    assert outcome.kind == "right", outcome


def test_a_stale_specialization_of_a_call_is_caught(monkeypatch):
    """A compiled function that keeps its first result is wrong after another function
    is passed, and the detail starts with that change's kind."""
    monkeypatch.setattr(check_forms.ad, "value_and_grad", _first_result_forever)
    for seed, family in ((9_100_011, "function_values"), (9_100_019, "varargs")):
        program = generate(seed, require=frozenset({family}))
        (outcome,) = check_program(program, modes=("compiler",))
        assert outcome.kind == "wrong", outcome
        assert outcome.detail.startswith(program.form.changes[0].kind + ": "), outcome


def test_a_wrong_gradient_of_a_call_is_caught(monkeypatch):
    """A gradient off by 0.1% (of ``x``, and of a dict argument leaf by leaf) is wrong."""
    real = ad.value_and_grad

    def scaled(grads):
        if isinstance(grads, (list, tuple)):
            return type(grads)(scaled(g) for g in grads)
        if isinstance(grads, dict):
            return {k: scaled(g) for k, g in grads.items()}
        return grads * 1.001

    def off_by_a_bit(fn, wrt=0):
        both = real(fn, wrt)
        return lambda *a: (both(*a)[0], scaled(both(*a)[1]))

    monkeypatch.setattr(check_forms.ad, "value_and_grad", off_by_a_bit)
    for seed, family in ((9_100_011, "function_values"), (9_100_007, "static_structure")):
        program = generate(seed, require=frozenset({family}))
        (outcome,) = check_program(program, modes=("compiler",))
        assert outcome.kind == "wrong" and outcome.detail.startswith("dx"), outcome


def _call_program(piece: Piece, **form: object) -> Program:
    """``v1 = np.tanh(x) * w`` in a method of ``Model`` reading ``piece`` first."""
    call = CallForm("method_calls", "object", "method", "self.W", (piece,), **form)
    body = ["    v1 = np.tanh(x) * w\n"]
    return Program(3, [], body, [frozenset({"elementwise"})], "np.sum(v1 * v1)", False, call)


RECURSIVE = Piece(
    ("w = self.rec(w, 2)",),
    methods="    def rec(self, a, n):\n        if n == 0:\n            return a\n"
    "        return self.rec(np.tanh(a), n - 1)\n",
)


def test_a_recursive_method_is_a_located_refusal():
    """What stays refused (a method calling itself) is refused at the program's line in
    the compiler and jvp, and tracing, which runs Python, is right."""
    program = _call_program(RECURSIVE, params=("x",), inputs="(x,)")
    kinds = {o.mode: o.kind for o in check_program(program, modes=("compiler", "jvp", "tracing"))}
    assert kinds == {"compiler": "refused", "jvp": "refused", "tracing": "right"}


def test_a_method_calling_methods_is_right_in_every_mode():
    """A loss calling a chain of methods of ``self`` (``forward`` -> ``affine``,
    ``squash``), differentiated w.r.t. ``self.W``: right in the compiler, jvp and
    tracing, and its reproducer runs as a script."""
    chain = Piece(
        ("w = self.forward(w)",),
        init=("self.b = 0.1 * np.ones(4)",),
        methods="    def forward(self, a):\n        return self.squash(self.affine(a))\n\n"
        "    def affine(self, a):\n        return a * self.W + self.b\n\n"
        "    def squash(self, a):\n        return np.tanh(a)\n",
    )
    program = _call_program(chain, params=("x",), inputs="(x,)")
    outcomes = check_program(program, modes=("compiler", "jvp", "tracing"))
    assert [o.kind for o in outcomes] == ["right"] * 3, outcomes


# -- bugs the families of objects and functions as values found (strict xfails) ---------


class _Quadratic:
    def __init__(self):
        self.W = np.linspace(0.5, 1.5, 4)

    def loss(self, x):
        return np.sum(np.tanh(x * self.W) ** 2)


def _scaled_sum(x, w, *args, scale=1.0):
    return np.sum(np.tanh(x * w) * scale) * (1.0 + len(args))


class _Squashed:
    def __init__(self):
        self.W = np.linspace(0.5, 1.5, 4)

    @staticmethod
    def squash(a):
        return a / (1.0 + a * a)

    def loss(self, x):
        return np.sum(_Squashed.squash(x * self.W))


X4 = np.array([0.3, -0.2, 0.5, 1.0])
V4 = np.array([1.0, 0.5, -0.3, 0.2])


def test_second_order_of_a_bound_method_is_right():
    """H v of a bound method's loss w.r.t. its argument, by ``vjp`` of its ``grad``,
    against mixed second differences of its values."""
    model = _Quadratic()
    _, pullback = ad.vjp(ad.grad(model.loss, wrt=0), X4.copy(), wrt=[0])
    (hv,) = pullback(V4.copy())
    expected, trusted = check.oracles.hessian_vector(model.loss, X4, V4)
    assert trusted.all() and np.all(check.oracles.close(hv, expected))


def test_jvp_of_a_partial_of_a_varargs_function():
    """``jvp`` of a partial (a keyword-only argument stored) of ``f(x, w, *args,
    scale=1.0)`` called with one extra argument and with none, against a directional
    difference."""
    f = functools.partial(_scaled_sum, scale=0.7)
    for extras in ((0.5,), ()):
        value, tangent = ad.jvp(f, (X4, V4, *extras), (V4, X4, *(None for _ in extras)))
        expected, trusted = check.oracles.directional(
            lambda a, b, extras=extras: f(a, b, *extras), (X4, V4), (V4, X4)
        )
        assert trusted and np.isclose(value, f(X4, V4, *extras))
        assert np.isclose(tangent, expected)


def test_a_ufunc_staticmethod_swapped_in_is_followed():
    """A loss compiled once and called, then ``Class.squash = staticmethod(np.cos)``:
    the next call follows the new function."""
    model = _Squashed()
    both = ad.value_and_grad(model.loss, wrt=0)
    both(X4.copy())
    original = _Squashed.__dict__["squash"]
    try:
        _Squashed.squash = staticmethod(np.cos)
        for _ in range(2):
            value, gradient = both(X4.copy())
            assert np.isclose(value, model.loss(X4))
            np.testing.assert_allclose(gradient, -np.sin(X4 * model.W) * model.W, rtol=1e-12)
    finally:
        _Squashed.squash = original


def test_the_fused_mode_checks_the_numba_backend_and_can_fail(monkeypatch):
    """``--modes fused`` runs ``value_and_grad(..., backend="numba")``: a program the
    backend lowers is right, and a wrong value from that backend is caught."""
    pytest.importorskip("numba")
    program = _program("    v1 = np.tanh(x) * w\n")  # lowered: fused by numba
    assert check_program(program, modes=("fused",)) == [Outcome("fused", "right", "")]
    real = ad.value_and_grad

    def fused_off(fn, wrt=0, backend=None):
        both = real(fn, wrt, backend=backend)
        return lambda *a: (both(*a)[0] + (0.5 if backend == "numba" else 0.0), both(*a)[1])

    monkeypatch.setattr(check.ad, "value_and_grad", fused_off)
    (compiled,) = check_program(program, modes=("compiler",))
    (fused,) = check_program(program, modes=("fused",))
    assert compiled.kind == "right" and fused.kind == "wrong"
