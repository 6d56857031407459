"""Run one generated program through every mode and classify each outcome.

Modes: ``compiler`` (``value_and_grad`` w.r.t. ``x`` and ``w``), ``jvp`` (the
compiler's forward mode against a directional difference), ``hvp`` (second order,
through branches and loops too: the compiled gradient's vjp against differences of
the gradient) and ``tracing`` (``tracing.value_and_gradient``, and ``evaluate`` with
``gradient`` inside: both must give the same kind of answer).

Programs that are objects, or whose state changes between calls, are checked by
:mod:`fuzz.check_forms` (compiler, jvp and tracing, through every state).

Kinds: ``right`` (value and every checkable gradient element agree with the
oracles), ``refused`` (an ``AutodiffError`` located in the program's own source),
``wrong`` (a value or derivative that disagrees), ``crash`` (any other exception, or
an ``AutodiffError`` without a location in the program), ``unchecked`` (right value,
but no oracle could judge any derivative element).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import autodiff_tutor as ad
from autodiff_tutor import tracing
from fuzz import check_forms, oracles
from fuzz.generator import Program
from fuzz.outcome import Loaded, Outcome, failure, located

__all__ = ["Loaded", "Outcome", "check_program", "located"]

MODES = ("compiler", "jvp", "hvp", "tracing")
#: Modes a campaign runs only when asked (``--modes ...,fused``): ``fused`` is the
#: compiler's gradient on the numba backend (a compile of a few tenths of a second per
#: program; needs the ``fused`` extra), for the programs that are plain functions (the
#: object and state forms are not: the backend takes a def or a lambda).
OPTIONAL_MODES = ("fused",)
VALUE_TOLERANCE = 1e-9


def _judge_gradients(
    mode: str, got: list[Any], reference: list[tuple[np.ndarray, np.ndarray]], names: list[str]
) -> Outcome:
    checked = 0
    for g, (expected, trusted), name in zip(got, reference, names, strict=True):
        g = np.asarray(g, dtype=np.float64)
        if g.shape != expected.shape:
            return Outcome(mode, "wrong", f"d{name} has shape {g.shape}, expected {expected.shape}")
        bad = trusted & ~oracles.close(g, expected)
        if not np.all(np.isfinite(g)):
            bad |= ~np.isfinite(g)  # a nan/inf gradient of a finite program is never right
        if bad.any():
            i = tuple(int(k) for k in np.argwhere(bad)[0])
            return Outcome(mode, "wrong", f"d{name}{list(i)} = {g[i]!r}, expected {expected[i]!r}")
        checked += int(trusted.sum())
    return Outcome(mode, "right" if checked else "unchecked")


def gradient_reference(
    program: Program, loaded: Loaded, x: np.ndarray, w: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(expected, trusted mask) per argument: autograd where it applies, differences else."""
    reference = [oracles.trusted_gradient(loaded.f, (x, w), i) for i in (0, 1)]
    if not program.autograd_ok or program.kink_inputs:
        return reference
    try:
        found = oracles.autograd_gradients(loaded.namespace, (x, w))
    except Exception:  # noqa: BLE001 - autograd cannot follow this program: differences only
        return reference
    exact = [np.asarray(e, dtype=np.float64) for e in found]
    if not _oracles_agree(exact, reference):
        return reference  # autograd and stable differences disagree: trust neither blindly
    return [(e, np.ones(e.shape, dtype=bool)) for e in exact]


def _oracles_agree(exact: list[Any], reference: list[tuple[np.ndarray, np.ndarray]]) -> bool:
    """Autograd's gradients have the inputs' shapes and agree with trusted differences
    (autograd gets some wrong: ``np.linalg.norm(w, axis=0, keepdims=True)`` of a vector)."""
    pairs = zip(exact, reference, strict=True)
    return all(e.shape == d.shape and np.all(oracles.close(e, d)[t]) for e, (d, t) in pairs)


def check_compiler(
    loaded: Loaded, x, w, value, reference, other=None, backend: str | None = None
) -> Outcome:
    """``value_and_grad`` w.r.t. both inputs, called twice: the first call runs the
    general pair, the second the pair specialized on the input shapes (where the
    program is shape-static); both are judged. ``other``: ``(x, w, value, reference)``
    at other values of the same shapes, for a third call (the specialized pair again,
    where a ``while`` loop may run another number of times, a helper give another
    shape, a branch go the other way). With ``backend="numba"`` (mode ``fused``) the
    second and third calls run the fused kernel where the pair is lowered."""
    mode = "compiler" if backend is None else "fused"
    make = ad.value_and_grad if backend is None else partial(ad.value_and_grad, backend=backend)
    both = None
    calls = [("first", x, w, value, reference), ("second", x, w, value, reference)]
    calls += [("third, at other values", *other)] if other else []
    for call, x, w, value, reference in calls:
        try:
            both = both or make(loaded.f, wrt=[0, 1])
            got_value, grads = both(x.copy(), w.copy())
        except Exception as error:  # noqa: BLE001 - classifying every exception is the point
            return failure(mode, error, loaded.filename)
        if not oracles.close(got_value, value, VALUE_TOLERANCE):
            detail = f"value {got_value!r}, expected {value!r} ({call} call)"
            return Outcome(mode, "wrong", detail)
        outcome = _judge_gradients(mode, list(grads), reference, ["x", "w"])
        if outcome.kind != "right":
            return Outcome(outcome.mode, outcome.kind, f"{outcome.detail} ({call} call)")
    return outcome


def check_tracing(loaded: Loaded, x, w, value, reference) -> Outcome:
    """Both entry points of tracing w.r.t. both inputs: ``value_and_gradient``, and
    ``evaluate`` of a function that asks ``gradient(y, x, w)`` inside. Each is judged
    against the oracles, and they must agree (both right, or both refused)."""
    first = _judge_tracing(loaded, x, w, value, reference, _value_and_gradient)
    second = _judge_tracing(loaded, x, w, value, reference, _evaluate_and_gradient)
    if second.kind in ("wrong", "crash"):
        return Outcome("tracing", second.kind, f"evaluate+gradient: {second.detail}")
    answered = {first.kind, second.kind} & {"right", "unchecked"}
    if first.kind in ("wrong", "crash") or not answered or first.kind == second.kind:
        return first
    if "refused" in (first.kind, second.kind):  # one entry point refuses what the other takes
        detail = f"entry points differ: value_and_gradient {first.kind}, evaluate {second.kind}"
        return Outcome("tracing", "wrong", f"{detail} ({first.detail or second.detail})")
    return first


def _value_and_gradient(f: Callable[..., Any], x, w) -> tuple[Any, list[Any]]:
    got_value, grads = tracing.value_and_gradient(f, x, w, wrt=[0, 1])
    return got_value, list(grads)


def _evaluate_and_gradient(f: Callable[..., Any], x, w) -> tuple[Any, list[Any]]:
    def run(x, w):
        y = f(x, w)
        return y, tracing.gradient(y, x, w)

    y, grads = tracing.evaluate(run, tracing.traced(x), tracing.traced(w))
    return tracing.extract_data(y), list(grads)


def _judge_tracing(loaded: Loaded, x, w, value, reference, entry) -> Outcome:
    try:
        got_value, grads = entry(loaded.f, x.copy(), w.copy())
    except Exception as error:  # noqa: BLE001
        return failure("tracing", error, loaded.filename)
    if not oracles.close(got_value, value, VALUE_TOLERANCE):
        return Outcome("tracing", "wrong", f"value {got_value!r}, expected {value!r}")
    return _judge_gradients("tracing", grads, reference, ["x", "w"])


def check_jvp(loaded: Loaded, x, w, value, seed: int) -> Outcome:
    """``jvp`` along a seeded random direction, against a directional difference."""
    rng = np.random.default_rng(seed + 1)
    dx, dw = rng.normal(size=x.shape), rng.normal(size=w.shape)
    try:
        got_value, tangent = ad.jvp(loaded.f, (x.copy(), w.copy()), (dx, dw))
    except Exception as error:  # noqa: BLE001
        return failure("jvp", error, loaded.filename)
    if not oracles.close(got_value, value, VALUE_TOLERANCE):
        return Outcome("jvp", "wrong", f"value {got_value!r}, expected {value!r}")
    expected, trusted = oracles.directional(loaded.f, (x, w), (dx, dw))
    return _judge_gradients("jvp", [tangent], [(np.asarray(expected), np.asarray(trusted))], ["t"])


def check_hvp(loaded: Loaded, x, w, seed: int) -> Outcome:
    """Second order: the vjp of the compiled gradient (w.r.t. ``x``) is ``H v``,
    checked against central differences of autograd's gradient along ``v``."""
    rng = np.random.default_rng(seed + 2)
    v = rng.normal(size=x.shape)
    try:
        _, pullback = ad.vjp(ad.grad(loaded.f, wrt=0), x.copy(), w.copy(), wrt=[0])
        (hv,) = pullback(v.copy())
    except Exception as error:  # noqa: BLE001
        return failure("hvp", error, loaded.filename)

    def gradient_along(t: float) -> np.ndarray:
        return np.asarray(oracles.autograd_gradients(loaded.namespace, (x + t * v, w))[0])

    h1, h2 = oracles.STEPS
    try:
        confirmed = _autograd_confirmed(loaded, x, w, gradient_along(0.0))
        coarse = (gradient_along(h1) - gradient_along(-h1)) / (2 * h1)
        expected = (gradient_along(h2) - gradient_along(-h2)) / (2 * h2)
    except Exception as error:  # noqa: BLE001 - autograd cannot follow it: no oracle
        return Outcome("hvp", "unchecked", f"autograd failed: {type(error).__name__}")
    trusted = oracles.close(coarse, expected, 10 * oracles.AGREE)
    if not confirmed:  # autograd's gradient is wrong here: second differences of f
        expected, trusted = oracles.hessian_vector(lambda z: float(loaded.f(z, w.copy())), x, v)
    return _judge_gradients("hvp", [hv], [(expected, trusted)], ["Hv"])


def _autograd_confirmed(loaded: Loaded, x, w, gradient: np.ndarray) -> bool:
    """Whether autograd's gradient w.r.t. ``x`` agrees with central differences wherever
    those are trusted (autograd has wrong rules of its own: the norm along an axis with
    ``keepdims=True``)."""
    expected, trusted = oracles.trusted_gradient(loaded.f, (x, w), 0)
    return bool(np.all(oracles.close(gradient, expected) | ~trusted))


def check_program(
    program: Program, modes: tuple[str, ...] = MODES, hvp_exclude: frozenset[str] = frozenset()
) -> list[Outcome]:
    """Every applicable mode's outcome on ``program`` (empty if plain numpy fails).

    ``hvp_exclude``: constructs whose programs skip the second-order check.
    """
    try:
        loaded = Loaded(program.source, program.seed)
    except Exception:  # noqa: BLE001 - an invalid program (a minimizer's candidate): skipped
        return []
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if program.form is not None:
                return check_forms.check_form_program(program, loaded, modes, hvp_exclude)
            return _check_loaded(program, loaded, modes, hvp_exclude)
    finally:
        loaded.close()


#: Constructs whose specialized pair may meet other values in a call of the same
#: shapes than at its probe: another number of ``while`` iterations, a helper's output,
#: a branch going the other way.
VALUE_DEPENDENT = {"while", "helper", "if"}


def _other_values(program: Program, loaded: Loaded, x, w) -> tuple[Any, ...] | None:
    """``(x, w, value, reference)`` at other values of the same shapes, for programs
    with a :data:`VALUE_DEPENDENT` construct (``None`` for the others)."""
    if not program.constructs & VALUE_DEPENDENT:
        return None
    x = x * 0.6 + 0.05  # smaller: a data-dependent while loop runs another number of times
    try:
        value = float(loaded.f(x.copy(), w.copy()))
    except Exception:  # noqa: BLE001 - invalid at these values: no third call
        return None
    if not np.isfinite(value):
        return None
    return x, w, value, gradient_reference(program, loaded, x, w)


def _check_loaded(
    program: Program, loaded: Loaded, modes: tuple[str, ...], hvp_exclude: frozenset[str]
) -> list[Outcome]:
    x, w = program.inputs()
    try:
        value = float(loaded.f(x.copy(), w.copy()))
    except Exception:  # noqa: BLE001 - an invalid program (the generator's fault): skipped
        return []
    if not np.isfinite(value):
        return []
    outcomes = []
    needs_reference = {"compiler", "fused", "tracing"} & set(modes)
    reference = gradient_reference(program, loaded, x, w) if needs_reference else []
    other = _other_values(program, loaded, x, w) if {"compiler", "fused"} & set(modes) else None
    if "compiler" in modes:
        outcomes.append(check_compiler(loaded, x, w, value, reference, other))
    if "fused" in modes:
        outcomes.append(check_compiler(loaded, x, w, value, reference, other, backend="numba"))
    if "jvp" in modes:
        outcomes.append(check_jvp(loaded, x, w, value, program.seed))
    second_order = program.autograd_ok and not program.kink_inputs
    if "hvp" in modes and second_order and not (program.constructs & hvp_exclude):
        outcomes.append(check_hvp(loaded, x, w, program.seed))
    if "tracing" in modes:
        outcomes.append(check_tracing(loaded, x, w, value, reference))
    return outcomes
