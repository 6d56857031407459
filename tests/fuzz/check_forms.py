"""Checks of programs that are objects, or whose state changes between calls (the
families ``object_method`` and ``state_across_calls`` that :mod:`fuzz.forms` writes).

The program is first run with plain numpy through its *states*: the first, then one
after each ``change_k(model, grads)``, given the gradient central differences found
at the state before (so every mode meets the same states, whatever it computes). At
each state the value and the references are kept: central differences in float64 of
every leaf of what ``wrt`` names (the method's argument, attributes of the object,
the arrays and numbers in its lists and dicts), trusted element by element, and a
directional difference for jvp. Then each mode replays the states in a copy of the
program of its own (nothing compiled is shared between modes):

- ``compiler``: ``value_and_grad`` (``grad`` for ``grad(model)``), made once for every
  call or made at each call as the form says, called twice at each state; after a
  change its result must also equal a *fresh compile*, made on a copy of the program
  brought to the same state;
- ``jvp``: ``jvp`` along a seeded direction at each state, and against a fresh compile
  after a change;
- ``tracing``: ``tracing.value_and_gradient`` with the same ``wrt`` (``"self"`` spelled
  as the list of the object's attributes with a gradient).

Second order (``hvp``) is checked on the programs of :mod:`fuzz.forms_calls`, loops
included, at their first state, against mixed second differences of the values. The
first state that is not
right decides the mode's outcome; after a change, its detail starts with the change's
kind (``attr_rebound: dself.W[1] = ...``): the first word of distinct failures.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import autodiff_tutor as ad
from autodiff_tutor import tracing
from fuzz import oracles
from fuzz.forms import Form
from fuzz.outcome import Loaded, Outcome, failure
from fuzz.structured import Leaf, as_reference, estimates, judge, judge_gradients, reference

VALUE_TOLERANCE = 1e-9  # the value, and a result against a fresh compile


@dataclass
class State:
    """One state of the program: how it was reached, and the references there."""

    change: str  # the kind of the change that led here ("" for the first state)
    grads: Any  # what that change was given
    value: float
    reference: Any  # Leaf, None, or a tuple, list or dict of them: the shape of the gradient
    directional: Leaf | None


class Run:
    """A copy of the program (its own namespace and object), brought from its first
    state through its changes."""

    def __init__(self, loaded: Loaded, form: Form, x: np.ndarray, w: np.ndarray):
        self.namespace = loaded.again()
        self.form = form
        self.model = self.namespace["make"](x.copy(), w.copy())
        self.inputs = (x, w)
        self.changes = 0

    @property
    def args(self) -> tuple[Any, ...]:
        """The arguments of a call at this state: ``inputs(x, w)`` where the program
        defines it (read anew: a change may pass another function, more ``*args``, a
        longer list), else ``x`` and ``w``."""
        inputs = self.namespace.get("inputs")
        if inputs is None:
            return self.inputs[: len(self.form.arguments)]
        return tuple(inputs(*(a.copy() for a in self.inputs)))

    @property
    def target(self) -> Any:
        """What is differentiated: ``f``, ``model.loss`` or ``model``."""
        if self.form.target == "f":
            return self.namespace["f"]
        return self.model.loss if self.form.target == "method" else self.model

    def advance(self, grads: Any) -> None:
        """Make the next change of the program's state."""
        self.changes += 1
        self.namespace[f"change_{self.changes}"](self.model, grads)

    @contextlib.contextmanager
    def kept(self) -> Iterator[None]:
        """Make one call at this state, then put the state back: a method may write into
        its object's attributes at every call (``self.W[0] *= 0.5``, as Python lets it),
        and every call, the references' and each mode's, starts from the same state."""
        model = self.model
        saved = (
            {k: copied(v) for k, v in vars(model).items()} if hasattr(model, "__dict__") else None
        )
        try:
            yield
        finally:
            if saved is not None:
                vars(self.model).update(saved)

    def value(self, args: tuple[Any, ...] | None = None) -> float:
        """The plain value at this state (at ``args``, else the program's inputs)."""
        with self.kept():
            return float(self.target(*[copied(a) for a in (args or self.args)]))

    def copies(self) -> tuple[Any, ...]:
        """The program's inputs, copied for one call."""
        return tuple(copied(a) for a in self.args)


def copied(value: Any) -> Any:
    """The arrays of ``value`` copied, in lists, tuples and dicts; other objects (a
    function, a callable object, a sub-object) kept as they are: their identity is what
    a compiled function may be specialized on, and a copy would hide a stale one."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, tuple)):
        return type(value)(copied(v) for v in value)
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    return value


def states(
    loaded: Loaded, form: Form, x: np.ndarray, w: np.ndarray, modes: tuple[str, ...], seed: int
) -> list[State] | None:
    """The program's states with their references (``None``: plain numpy fails or gives
    a value that is not finite at some state: the generator's fault, skipped)."""
    run = Run(loaded, form, x, w)
    found, grads = [], None
    for k, change in enumerate(("", *(c.kind for c in form.changes))):
        if k:
            run.advance(grads)
        value = run.value()
        if not np.isfinite(value):
            return None
        needed = {"compiler", "tracing"} & set(modes) or k < len(form.changes)
        reference = gradient_reference(run, form.wrt) if needed else None
        directional = None
        if "jvp" in modes:
            estimate, trusted = _directional(run, direction(run, seed))
            directional = Leaf(np.asarray(estimate), np.asarray(trusted))
        found.append(State(change, grads, value, reference, directional))
        grads = estimates(reference)
    return found


def direction(run: Run, seed: int) -> tuple[Any, ...]:
    """The seeded direction of jvp (one per argument of the target: ``None`` for one
    that does not vary, a function, an int; a structure of them for a list or dict)."""
    rng = np.random.default_rng(seed + 1)
    return tuple(_tangent(rng, a) for a in run.args)


def _tangent(rng: np.random.Generator, value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return rng.normal(size=value.shape)
    if isinstance(value, (list, tuple)):
        return type(value)(_tangent(rng, v) for v in value)
    if isinstance(value, dict):
        return {k: _tangent(rng, v) for k, v in value.items()}
    return None


def _directional(run: Run, along: tuple[Any, ...]) -> tuple[float, bool]:
    """The directional difference of the program's value along ``along``."""
    args = run.args
    return oracles.trusted_difference(
        lambda t: run.value(tuple(_moved(a, d, t) for a, d in zip(args, along, strict=True)))
    )


def _moved(value: Any, tangent: Any, t: float) -> Any:
    """``value + t * tangent``, leaf by leaf (a leaf without a tangent stays)."""
    if tangent is None:
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_moved(v, d, t) for v, d in zip(value, tangent, strict=True))
    if isinstance(value, dict):
        return {k: _moved(v, tangent[k], t) for k, v in value.items()}
    return value + t * tangent


# -- references -------------------------------------------------------------------------


def gradient_reference(run: Run, wrt: Any) -> Any:
    """The reference gradient of what ``wrt`` names, in the shape the API returns it."""
    if isinstance(wrt, list):
        return tuple(gradient_reference(run, entry) for entry in wrt)
    if wrt == "self":
        return {a: reference(v, _attribute_at(run, a)) for a, v in vars(run.model).items()}
    if isinstance(wrt, str) and wrt.startswith("self."):
        name = wrt[len("self.") :]
        return reference(getattr(run.model, name), _attribute_at(run, name))
    params = getattr(run.form, "params", ("x", "w"))
    index = 0 if wrt is None else params.index(wrt) if isinstance(wrt, str) else wrt
    return reference(run.args[index], _argument_at(run, index))


def _attribute_at(run: Run, name: str):
    def value_at(new: Any) -> float:
        original = getattr(run.model, name)
        setattr(run.model, name, new)
        try:
            return run.value()
        finally:
            setattr(run.model, name, original)

    return value_at


def _argument_at(run: Run, index: int):
    def value_at(new: Any) -> float:
        args = list(run.args)
        args[index] = new
        return run.value(tuple(args))

    return value_at


# -- calls of each mode -----------------------------------------------------------------


def compiled(run: Run) -> Any:
    """The compiled function the user makes: ``(value, gradient)`` at the arguments
    (the value ``None`` for ``grad(model)``, which gives the gradient alone)."""
    form = run.form
    if form.target == "call" and form.wrt is None:
        gradient = ad.grad(run.target)
        return lambda *args: (None, gradient(*args))
    target = ad.differentiable(run.target) if form.made == "differentiable" else run.target
    return ad.value_and_grad(target, wrt=form.wrt if form.wrt is not None else 0)


def tracing_call(run: Run, reference: Any) -> tuple[Any, Any]:
    """``tracing.value_and_gradient`` asked for what the compiler is asked, the result
    in the compiler's shape (``"self"``: the attributes with a gradient, by name)."""
    with run.kept():
        return _tracing_call(run, reference)


def _tracing_call(run: Run, reference: Any) -> tuple[Any, Any]:
    wrt = run.form.wrt
    if wrt != "self":
        return tracing.value_and_gradient(run.target, *run.copies(), wrt=0 if wrt is None else wrt)
    names = [a for a, r in reference.items() if r is not None]
    value, grads = tracing.value_and_gradient(
        run.target, *run.copies(), wrt=[f"self.{a}" for a in names]
    )
    by_name = dict(zip(names, grads, strict=True))
    return value, {a: by_name.get(a) for a in reference}


def jvp_call(run: Run, seed: int) -> tuple[Any, Any]:
    """``jvp`` of the target along the seeded direction."""
    with run.kept():
        return ad.jvp(run.target, run.copies(), direction(run, seed))


def check_form_program(
    program: Any, loaded: Loaded, modes: tuple[str, ...], hvp_exclude: frozenset[str] = frozenset()
) -> list[Outcome]:
    """Every applicable mode's outcome (empty where plain numpy fails at some state);
    ``hvp_exclude``: constructs whose programs skip the second-order check."""
    form = program.form
    x, w = program.inputs()
    try:
        found = states(loaded, form, x, w, modes, program.seed)
    except Exception:  # noqa: BLE001 - an invalid program (the generator's fault): skipped
        return []
    if found is None:
        return []
    checks = {"compiler": _compiler, "jvp": _jvp, "tracing": _tracing}
    if _second_order(program) and not program.constructs & hvp_exclude:
        checks["hvp"] = _hvp
    return [checks[m](loaded, program, found) for m in modes if m in checks]


def _second_order(program: Any) -> bool:
    """Programs of :mod:`fuzz.forms_calls` without planted kinks, whose first argument
    is an array, get a second-order check at their first state."""
    return hasattr(program.form, "loop_free") and not program.kink_inputs


def _hvp(loaded: Loaded, program: Any, found: list[State]) -> Outcome:
    """The vjp of the compiled gradient w.r.t. the first argument is ``H v`` (its jvp
    where an argument is a structure, which vjp of a gradient refuses by design):
    checked against mixed second differences of the program's values (no gradient of
    anybody's)."""
    run = Run(loaded, program.form, *program.inputs())
    args = run.args
    v = np.random.default_rng(program.seed + 2).normal(size=np.shape(args[0]))
    try:
        with run.kept():
            copies = run.copies()
            if any(isinstance(a, (list, tuple, dict)) for a in copies):
                # vjp of a gradient takes arrays (documented): H v by forward over reverse
                tangents = (v.copy(), *[None] * (len(copies) - 1))
                _, hv = ad.jvp(ad.grad(run.target, wrt=0), tuple(copies), tangents)
            else:
                _, pullback = ad.vjp(ad.grad(run.target, wrt=0), *copies, wrt=[0])
                (hv,) = pullback(v.copy())
    except Exception as error:  # noqa: BLE001 - classifying every exception is the point
        outcome = failure("hvp", error, loaded.filename)
        return Outcome("hvp", outcome.kind, outcome.detail + " (first state)")
    expected, trusted = oracles.hessian_vector(
        lambda z: run.value((z, *args[1:])), np.asarray(args[0], dtype=np.float64), v
    )
    detail, checked = judge(hv, Leaf(expected, trusted), "Hv", oracles.TOLERANCE)
    if detail:
        return Outcome("hvp", "wrong", detail + " (first state)")
    return Outcome("hvp", "right" if checked else "unchecked")


def _walk(mode: str, loaded: Loaded, program: Any, found: list[State], call) -> Outcome:
    """Replay the states in a copy of the program; ``call(run, k, state)`` judges one
    state (a detail where it is not right, and the elements checked)."""
    x, w = program.inputs()
    run, checked = Run(loaded, program.form, x, w), 0
    for k, state in enumerate(found):
        where = f"{state.change}: " if k else ""
        try:
            if k:
                run.advance(state.grads)
            detail, count = call(run, k, state)
        except Exception as error:  # noqa: BLE001 - classifying every exception is the point
            outcome = failure(mode, error, loaded.filename)
            return Outcome(mode, outcome.kind, where + outcome.detail + _at(k, program.form))
        if detail:
            return Outcome(mode, "wrong", where + detail + _at(k, program.form))
        checked += count
    return Outcome(mode, "right" if checked else "unchecked")


def _at(k: int, form: Form) -> str:
    made = {"once": "compiled once", "each": "compiled at each call"}.get(
        form.made, "compiled once through differentiable()"
    )
    return f" (first state; {made})" if not k else f" (after change {k}; {made})"


def _fresh(loaded: Loaded, program: Any, found: list[State], k: int) -> Run:
    """A copy of the program brought to state ``k``, nothing compiled yet."""
    run = Run(loaded, program.form, *program.inputs())
    for state in found[1 : k + 1]:
        run.advance(state.grads)
    return run


def _compiler(loaded: Loaded, program: Any, found: list[State]) -> Outcome:
    form, made = program.form, []

    def call(run: Run, k: int, state: State) -> tuple[str, int]:
        checked = 0
        for _ in ("first", "second"):
            fn = made[0] if made else compiled(run)
            if form.made != "each":  # once, or once through differentiable()
                made[:1] = [fn]
            with run.kept():
                value, grads = fn(*run.copies())
            if value is not None and not oracles.close(value, state.value, VALUE_TOLERANCE):
                return f"value {value!r}, expected {state.value!r}", 0
            detail, count = judge_gradients(grads, state.reference, form.wrt, oracles.TOLERANCE)
            if detail:
                return detail, 0
            checked += count
        if k:  # a fresh compile on this state must agree, where the differences cannot say
            try:
                fresh_run = _fresh(loaded, program, found, k)
                with fresh_run.kept():
                    fresh_value, fresh = compiled(fresh_run)(*fresh_run.copies())
            except Exception:  # noqa: BLE001 - the fresh compile refuses: the differences judge
                return "", checked
            if value is not None and not oracles.close(value, fresh_value, VALUE_TOLERANCE):
                return f"value {value!r}, a fresh compile gives {fresh_value!r}", 0
            detail, _ = judge_gradients(grads, as_reference(fresh), form.wrt, VALUE_TOLERANCE)
            if detail:
                return detail.replace("expected", "a fresh compile gives"), 0
        return "", checked

    return _walk("compiler", loaded, program, found, call)


def _jvp(loaded: Loaded, program: Any, found: list[State]) -> Outcome:
    def call(run: Run, k: int, state: State) -> tuple[str, int]:
        value, tangent = jvp_call(run, program.seed)
        if not oracles.close(value, state.value, VALUE_TOLERANCE):
            return f"value {value!r}, expected {state.value!r}", 0
        detail, checked = judge(tangent, state.directional, "t", oracles.TOLERANCE)
        if detail or not k:
            return detail, checked
        try:
            fresh_run = _fresh(loaded, program, found, k)
            _, fresh = jvp_call(fresh_run, program.seed)
        except Exception:  # noqa: BLE001 - the fresh compile refuses: the differences judge
            return "", checked
        detail, _ = judge(tangent, as_reference(fresh), "t", VALUE_TOLERANCE)
        return detail.replace("expected", "a fresh compile gives"), checked

    return _walk("jvp", loaded, program, found, call)


def _tracing(loaded: Loaded, program: Any, found: list[State]) -> Outcome:
    def call(run: Run, k: int, state: State) -> tuple[str, int]:
        value, grads = tracing_call(run, state.reference)
        if not oracles.close(value, state.value, VALUE_TOLERANCE):
            return f"value {value!r}, expected {state.value!r}", 0
        return judge_gradients(grads, state.reference, program.form.wrt, oracles.TOLERANCE)

    return _walk("tracing", loaded, program, found, call)


def driver(program: Any, mode: str, inputs: str) -> str:
    """The end of a reproducer of such a program: the inputs, then ``mode``'s calls
    through the states (the changes given the gradient the compiler gives), each
    printed next to the plain value."""
    form = program.form
    if hasattr(form, "inputs"):
        return _call_driver(program, mode, inputs)
    args = ", ".join(form.arguments)
    target = {"f": "f", "method": "model.loss", "call": "model"}[form.target]
    single = form.target == "call" and form.wrt is None
    made = f"ad.grad({target})" if single else f"ad.value_and_grad({target}, wrt={form.wrt!r})"
    lines = ["", "", "import autodiff_tutor as ad  # noqa: E402"]
    lines.append("from autodiff_tutor import tracing  # noqa: E402")
    lines += inputs.strip("\n").splitlines() + ["model = make(x, w)"]
    if mode == "compiler" and form.made == "once":
        lines.append(f"compiled = {made}")
        made = "compiled"
    if mode == "jvp":
        lines.append(f"rng = np.random.default_rng({program.seed + 1})")
        lines.append(f"direction = tuple(rng.normal(size=a.shape) for a in ({args},))")
    for k in range(len(form.changes) + 1):
        if k:
            lines.append(f"change_{k}(model, grads)  # {form.changes[k - 1].kind}")
        lines.append(f'print("plain value:", {target}({args}))')
        if mode == "jvp":
            lines.append(f'print("jvp:", ad.jvp({target}, ({args},), direction))')
        elif mode == "tracing":
            wrt = 0 if form.wrt in (None, "self") else form.wrt
            call = f"tracing.value_and_gradient({target}, {args}, wrt={wrt!r})"
            lines.append(f'print("tracing:", {call})')
        lines += [f"result = {made}({args})", f'print("{made}:", result)']
        lines.append("grads = result" if single else "grads = result[1]")
    return "\n".join(lines) + "\n"


def _call_driver(program: Any, mode: str, inputs: str) -> str:
    """:func:`driver` for a program of :mod:`fuzz.forms_calls`: its arguments are
    ``inputs(x, w)``, read again after each change."""
    form = program.form
    target = {"f": "f", "method": "model.loss", "call": "model"}[form.target]
    made = target if form.made != "differentiable" else f"ad.differentiable({target})"
    made = f"ad.value_and_grad({made}, wrt={form.wrt!r})"
    lines = ["", "", "import autodiff_tutor as ad  # noqa: E402"]
    lines.append("from autodiff_tutor import tracing  # noqa: E402")
    lines += inputs.strip("\n").splitlines() + ["model = make(x, w)"]
    if mode == "compiler" and form.made != "each":
        lines.append(f"compiled = {made}")
        made = "compiled"
    for k in range(len(form.changes) + 1):
        if k:
            lines.append(f"change_{k}(model, grads)  # {form.changes[k - 1].kind}")
        lines += ["args = inputs(x, w)", f'print("plain value:", {target}(*args))']
        if mode == "jvp":
            lines.append(f"rng = np.random.default_rng({program.seed + 1})")
            tangents = "rng.normal(size=a.shape) if isinstance(a, np.ndarray) else None"
            lines.append(f"direction = tuple({tangents} for a in args)")
            lines.append(f'print("jvp:", ad.jvp({target}, args, direction))')
        elif mode == "tracing":
            call = f"tracing.value_and_gradient({target}, *args, wrt={form.wrt!r})"
            lines.append(f'print("tracing:", {call})')
        elif mode == "hvp":
            lines.append(f"v = np.random.default_rng({program.seed + 2}).normal(size=x.shape)")
            vjp = f"ad.vjp(ad.grad({target}, wrt=0), *args, wrt=[0])"
            lines.append(f'print("hvp:", {vjp}[1](v))')
        lines += [f"result = {made}(*args)", f'print("{made}:", result)', "grads = result[1]"]
    return "\n".join(lines) + "\n"
