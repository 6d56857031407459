"""The specialized pipeline: a derivative's pair again, specialized on argument shapes.

At a ``value_and_grad`` call with argument shapes and dtypes not seen before
(:func:`specialized_pair`), a shape-static program's pair is probed and compiled again
(:func:`compile_specialized`): ``adjoint -> optimize -> specialize -> simplify -> memory
-> slots -> forward -> emit``. See :mod:`.specialize.probe` for what is probed and guarded.

>>> import numpy as np
>>> from autodiff_tutor.compiler.pipeline import compile_derivative
>>> def f(x, w):
...     return np.sum(x * w + w)
>>> pair = specialized_pair(compile_derivative(f, ["x", "w"]), (np.ones(3), np.ones(3)))
>>> "unbroadcast" in pair.backward_source
False
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.compiler.activity import analyze
from autodiff_tutor.compiler.code import is_in_place_check, names, rewrite_blocks
from autodiff_tutor.compiler.emit import (
    RUNTIME,
    Generated,
    compile_pair,
)
from autodiff_tutor.compiler.front.source import ParsedFunction
from autodiff_tutor.compiler.ir import Program, counted_loops
from autodiff_tutor.compiler.pipeline import Derivative, generate_checked
from autodiff_tutor.compiler.reverse.adjoint import gradient_prefix
from autodiff_tutor.compiler.reverse.forward import release_dead
from autodiff_tutor.compiler.reverse.memory import Memory
from autodiff_tutor.compiler.reverse.slots import slot_numbers
from autodiff_tutor.compiler.specialize.direct_ops import direct_op_calls
from autodiff_tutor.compiler.specialize.facts import (
    method_reductions,
    record_facts,
    scalar_seeds,
)
from autodiff_tutor.compiler.specialize.first_writes import first_writes
from autodiff_tutor.compiler.specialize.inplace import IN_PLACE_FROM, in_place
from autodiff_tutor.compiler.specialize.into_slots import into_slots
from autodiff_tutor.compiler.specialize.owned import not_made_here, owned_before_updates
from autodiff_tutor.compiler.specialize.paths import (
    branch_tests,
    path_program,
    paths_of,
    record_paths,
)
from autodiff_tutor.compiler.specialize.probe import (
    drop_sites,
    guard_key,
    probe_sites,
    rematerialize,
    shape_static,
    value_params,
)
from autodiff_tutor.compiler.specialize.regions import (
    guard_calls,
    guard_gradients,
    loops_settled,
    shapes_vary,
    while_counters,
)
from autodiff_tutor.compiler.specialize.scalars import scalars_first, sizes_known
from autodiff_tutor.compiler.specialize.shifts import drop_shift_gradients, shift_names
from autodiff_tutor.compiler.specialize.simplify import inline, simplify
from autodiff_tutor.compiler.specialize.stacked import stacked_products
from autodiff_tutor.compiler.specialize.unit_seed import unit_seed
from autodiff_tutor.runtime.backend import ones_like
from autodiff_tutor.runtime.guards import fact_of
from autodiff_tutor.syntax import copy_tree


@dataclass
class Specialized:
    """A forward/backward pair for one guard key: argument shapes, dtypes, integers.
    Its backward is that of ``value_and_grad``, for the output gradient 1 (see
    :mod:`.specialize.unit_seed`): run it with no other seed."""

    key: tuple[Any, ...]
    forward: Callable[..., Any]
    backward: Callable[..., Any]
    forward_source: str
    backward_source: str
    #: The seed of the output (a float numpy scalar's 1) where the guard key alone
    #: assures what ``value_and_grad``'s cached call checks (float arrays for ``wrt``, a
    #: float numpy scalar out); ``None``: the call checks them.
    seed: Any
    #: The positions of the returned gradients the backward does not make as new arrays
    #: of its own (:func:`.specialize.owned.not_made_here`, a custom op's for one): the call
    #: checks those alone.
    unsure: tuple[int, ...]
    #: The kernel another backend runs this pair as (``show(backend="numba")``), and
    #: what became of the lowering (fused, or why not).
    fused_source: str = ""
    fused_note: str = ""


def compile_specialized(derivative: Derivative, args: Sequence[Any]) -> Specialized | None:
    """The pair specialized on the shapes and dtypes of ``args`` (a scalar output's
    gradient): probed, then rewritten by the passes of :mod:`.specialize` in the order
    below (each module says what it rewrites and why that keeps the values). ``None``
    when the program is not shape-static, a ``while`` loop did not settle in the probe
    (see :mod:`.specialize.regions`) or ``args`` are of a kind the guard does not know
    (see :mod:`.specialize.probe`)."""
    program, parsed = derivative.program, derivative.parsed
    key = guard_key(tuple(args))
    if key is None or not shape_static(program):
        return None
    by_value = value_params(program)
    if any(
        hasattr(a, "shape") for p, a in zip(program.params, args, strict=False) if p in by_value
    ):
        return None  # an array whose values may decide shapes: the key does not hold them
    probe, flags, out = _probe(derivative, args)
    if branch_tests(program):  # the path the probe took, its tests checked (specialize.paths)
        path = path_program(program, paths_of(flags))
        if path is None:
            return None
        activity = analyze(path, parsed, list(derivative.wrt))
        derivative = dataclasses.replace(
            derivative, program=path, activity=activity, specializations={}
        )
        program = path
        # probed again: the sites are numbered in the path's own backward, not in the
        # backward of both arms (the same number names another call there)
        probe, flags, out = _probe(derivative, args)
    forms = {site: form for site, form in flags.items() if isinstance(site, int) and form}
    facts = {name: fact for name, fact in flags.items() if isinstance(name, str)}
    kinds = {
        key[1]: seen for key, seen in flags.items() if isinstance(key, tuple) and key[0] == "kinds"
    }
    if not loops_settled(probe.forward, probe.backward, while_counters(program), facts):
        return None  # a while loop that did not run, or changed a value's shape
    if shapes_vary(program, facts):
        return None  # a value a while loop or a custom op changes decides a shape

    shifts, prefix = shift_names(program), gradient_prefix(program)
    counted = {loop.iterations for loop in counted_loops(program)}

    def specialize(backward: list[ast.stmt], keep: set[str]) -> list[ast.stmt]:
        backward = drop_shift_gradients(drop_sites(backward, forms), shifts, prefix)
        backward = first_writes(backward, facts, counted)
        backward = simplify(rematerialize(backward, program), keep)
        backward = scalar_seeds(sizes_known(backward, facts), facts, keep)
        backward = simplify(unit_seed(backward, probe.seeds[0], facts), keep)
        backward = scalars_first(backward, facts)  # 2 * d_out / n * r: one pass
        backward = owned_before_updates(backward, facts)  # d += e never changes another
        guarded = guard_gradients(backward, facts)  # what custom ops' backwards return
        unknown.extend([] if guarded is not None else [True])
        return backward if guarded is None else guarded

    unknown: list[bool] = []  # a custom op's gradient of no single fact: no guard

    def slots(program: Program, backward: list[ast.stmt], memory: Memory) -> None:
        slot_numbers(program, backward, memory, facts, kinds)  # numbers of counted loops

    specialized: Generated = generate_checked(derivative, specialize, slots)
    # y += v: the probe checked that numpy could update y in place; the key holds the
    # dtypes and shapes that decided it, so every call this pair runs passes too
    specialized.forward = rewrite_blocks(
        specialized.forward, lambda s: [] if is_in_place_check(s) else [s]
    )
    guarded = guard_calls(specialized.forward, program, facts)  # custom ops' outputs
    if unknown or guarded is None:
        return None
    scope = _scope(derivative.parsed, program)
    memory = specialized.memory
    guarded, specialized.backward, memory.names = direct_op_calls(
        guarded, specialized.backward, memory.names, scope, facts
    )
    if _largest(args) < RELEASE_FROM:  # small steps: one product after a loop (specialize.stacked)
        specialized.backward = stacked_products(specialized.backward, counted, facts)
    stored = [specialized.memory.kept(m) for m in specialized.memory.names]
    returned = {*specialized.outputs, *program.params, *names(*stored)}
    forward = inline(guarded, returned)  # one expression: numpy reuses temporaries
    specialized.forward = method_reductions(forward, facts, scope)
    # another backend lowers the pair as it is here: expressions, before numpy's memory rewrites
    plain = copy_tree(specialized) if derivative.lowering is not None else None
    if _largest(args) >= RELEASE_FROM:  # free dead intermediates early: a lower peak
        kept = {*specialized.memory.names, *specialized.outputs}
        specialized.forward = release_dead(specialized.forward, kept)
    if _largest(args) >= IN_PLACE_FROM:  # large temporaries updated in place (specialize.inplace)
        facts = _facts_of(specialized, derivative, args)
        scope = {**scope, **RUNTIME}
        specialized.forward = in_place(specialized.forward, facts, scope, IN_PLACE_FROM)
        specialized.backward = in_place(specialized.backward, facts, scope, IN_PLACE_FROM)
        specialized.backward = into_slots(specialized.backward, scope)
    forward, backward = compile_pair(parsed.name, specialized, parsed)
    forward_src, backward_src = forward.generated_source, backward.generated_source
    seed = None
    out_fact = fact_of(out)
    wrt_floats = all(
        type(args[i]) is np.ndarray and args[i].dtype.kind == "f" for i in derivative.wrt_positions
    )
    if wrt_floats and out_fact[0] == "scalar" and np.dtype(out_fact[2]).kind == "f":
        seed = out.dtype.type(1)
    unsure = not_made_here(specialized.backward, specialized.gradients, facts, scope)
    pair = Specialized(key, forward, backward, forward_src, backward_src, seed, unsure)
    if plain is not None:
        return derivative.lowering(pair, plain, args, scope, derivative.wrt_positions)
    return pair


def _probe(derivative: Derivative, args: Sequence[Any]) -> tuple[Generated, dict, Any]:
    """Run the probed pair once on ``args``: the probe's trees, what it recorded (forms
    by site number, facts by name, paths by ``("path", test)``), and the output."""
    program = derivative.program
    probe = generate_checked(derivative, lambda backward, keep: probe_sites(backward))
    probe.forward = record_paths(probe.forward, branch_tests(program), "site_flags")
    flags, out = _recorded_run(probe, derivative, "probe", args)
    return probe, flags, out


def _facts_of(pair: Generated, derivative: Derivative, args: Sequence[Any]) -> dict[str, Any]:
    """The fact of every name ``pair`` binds, from running a copy of it once on
    ``args`` (the facts of the code that runs, after every rewrite of the probed one)."""
    return _recorded_run(copy_tree(pair), derivative, "facts", args)[0]


def _recorded_run(
    pair: Generated, derivative: Derivative, suffix: str, args: Sequence[Any]
) -> tuple[dict[Any, Any], Any]:
    """Run ``pair`` (changed in place: it records the fact of every name it binds into
    ``site_flags``) once on ``args`` with the seed 1: what it recorded, and the output."""
    params = list(pair.params)
    pair.forward = record_facts(pair.forward, "site_flags")
    pair.backward = record_facts(pair.backward, "site_flags")
    pair.params = [*params, "site_flags"]
    pair.seeds = [*pair.seeds, "site_flags"]
    name = f"{derivative.parsed.name}_{suffix}"
    forward, backward = compile_pair(name, pair, derivative.parsed)
    flags: dict[Any, Any] = {p: fact_of(a) for p, a in zip(params, args, strict=False)}
    out, memory = forward(*args, flags)
    seed = ones_like(out)
    flags[pair.seeds[0]] = fact_of(seed)
    backward(seed, flags, memory)
    return flags, out


def _scope(parsed: ParsedFunction, program: Any) -> dict[str, Any]:
    """What the generated forward's free names refer to: the user function's closure
    values and globals (and stand-ins, :mod:`.front.names`), less the names the function
    binds itself."""
    scope = parsed.namespace()
    for name in program.defined_names() | set(program.params):
        scope.pop(name, None)
    return scope


#: Arguments with at least this many elements get a specialized forward that frees
#: its dead intermediates (``del``) as it goes.
RELEASE_FROM = 1 << 16


def _largest(args: Sequence[Any]) -> int:
    return max((getattr(a, "size", 1) for a in args), default=0)


#: Specializations kept per derivative; calls with further shapes run the general pair.
MAX_SPECIALIZATIONS = 8


def specialized_pair(derivative: Derivative, args: Sequence[Any]) -> Specialized | None:
    """The specialized pair for the shapes and dtypes of ``args`` (made at the first
    call with them), or ``None``: run the general pair.

    The common call (numpy arrays only, shapes and dtypes seen before) is found by
    its arrays' shapes and dtypes alone: that is the key :func:`guard_key` made for
    them, and no other argument's key entry looks like it. Any other call (a new
    key, another kind of argument) takes the full :func:`guard_key`."""
    # each array's shape and dtype, None for another argument (one argument without a
    # list: this runs before every cached call)
    if len(args) == 1:
        first = args[0]
        arrays = ((first.shape, first.dtype) if type(first) is np.ndarray else None,)
    else:
        arrays = tuple([(a.shape, a.dtype) if type(a) is np.ndarray else None for a in args])
    found = derivative.specializations.get(arrays, False)
    if found is not False:
        return found
    key = guard_key(tuple(args))
    if key is None:
        return None
    found = derivative.specializations.get(key, False)
    if found is not False:
        return found
    if len(derivative.specializations) >= MAX_SPECIALIZATIONS:
        return None
    try:
        found = compile_specialized(derivative, args)
    except Exception:  # the probe failed: the general code runs (and reports the error)
        found = None
    derivative.specializations[key] = found
    return found
