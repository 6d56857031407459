"""The checks of the objects corpus: each program in the compiler (``value_and_grad``
called three times, so the specialized pair runs, or ``vjp`` with ``None`` seeds for
the outputs after the first; through ``differentiable()`` first where the program says
so), in tracing (``value_and_gradient``, or ``evaluate`` + ``gradient`` of the seeded
sum for a vjp) and in autograd (the program's module reading ``autograd.numpy`` as
``np``), each against central differences in float64. A training loop is checked at
every step, its attributes rebound between steps."""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import sys
from collections.abc import Callable, Iterator
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
from oracles import structured_central_difference

from autodiff_tutor import differentiable, value_and_grad, vjp
from autodiff_tutor.pytree import flatten
from autodiff_tutor.tracing import evaluate, gradient, traced, value_and_gradient
from corpus_objects import Program

LEARNING_RATE = 0.1


def build(p: Program) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The program's callable and arguments, seeded by its name."""
    return p.build(np.random.default_rng(sum(map(ord, p.name))))


def seed_like(p: Program, out: Any) -> np.ndarray:
    """The cotangent of a vjp program's first output, seeded by its name."""
    rng = np.random.default_rng(sum(map(ord, p.name)) + 1)
    return rng.normal(size=np.shape(out))


def owner(call: Any) -> Any:
    """The object whose attributes ``self.X`` names: a bound method's, a partial's
    function's, or the callable object itself."""
    while isinstance(call, functools.partial):
        call = call.func
    return call.__self__ if inspect.ismethod(call) else call


def position(call: Any, name: str) -> int:
    return list(inspect.signature(call).parameters).index(name)


def first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


def scalar(p: Program, call: Callable[..., Any], dout: Any) -> Callable[..., Any]:
    """The objective the oracles differentiate: the value, or the seeded sum of a vjp
    program's first output."""
    if p.kind == "grad":
        return call
    return lambda *args: anp.sum(first(call(*args)) * dout)


def entry_function(
    objective: Callable[..., Any], call: Any, args: tuple[Any, ...], entry: str
) -> tuple[Any, Callable[[Any], Any]]:
    """The entry's current value, and the objective as a function of it alone."""
    if entry.startswith("self."):
        obj, attribute = owner(call), entry.removeprefix("self.")

        def with_attribute(value: Any) -> Any:
            old = getattr(obj, attribute)
            setattr(obj, attribute, value)
            try:
                return objective(*args)
            finally:
                setattr(obj, attribute, old)

        return getattr(obj, attribute), with_attribute
    i = position(call, entry)
    return args[i], lambda value: objective(*args[:i], value, *args[i + 1 :])


def expected(p: Program, call: Any, args: tuple[Any, ...], dout: Any) -> list[list[np.ndarray]]:
    """Central differences, one list of leaf gradients per ``wrt`` entry."""
    objective = scalar(p, call, dout)
    result = []
    for entry in p.wrt:
        value, fn = entry_function(objective, call, args, entry)
        result.append(structured_central_difference(fn, [value], 0))
    return result


def leaves(value: Any) -> list[np.ndarray]:
    return [np.asarray(v, dtype=np.float64) for v in flatten(value)[0]]


def compare(p: Program, got: Any, want: list[list[np.ndarray]], step: int = 0) -> None:
    assert len(got) == len(p.wrt), f"one gradient per wrt entry, got {len(got)}"
    for entry, g, w in zip(p.wrt, got, want, strict=True):
        g = leaves(g)
        assert len(g) == len(w), f"d/d{entry}: one gradient per array"
        for a, b in zip(g, w, strict=True):
            np.testing.assert_allclose(
                a, b, rtol=1e-5, atol=1e-6, err_msg=f"d/d{entry} step {step}"
            )


def compare_value(got: Any, want: Any) -> None:
    for a, b in zip(leaves(got), leaves(want), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def step_attributes(p: Program, call: Any, gradients: Any) -> None:
    """A training step: each attribute in ``wrt`` rebound to a new array, then the
    model's own ``on_step_end()`` where it has one (a schedule that rebinds other
    attributes: a temperature, a penalty, an activation)."""
    obj = owner(call)
    if hasattr(obj, "on_step_end"):
        obj.on_step_end()
    for entry, g in zip(p.wrt, gradients, strict=True):
        attribute = entry.removeprefix("self.")
        value = getattr(obj, attribute)
        if isinstance(value, dict):
            setattr(obj, attribute, {k: v - LEARNING_RATE * g[k] for k, v in value.items()})
        elif isinstance(value, list):
            setattr(obj, attribute, [v - LEARNING_RATE * d for v, d in zip(value, g, strict=True)])
        else:
            setattr(obj, attribute, value - LEARNING_RATE * g)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    with contextlib.redirect_stdout(io.StringIO()):  # the habit of printing
        yield


def check_compiler(p: Program) -> None:
    """The compiler against central differences (three calls, or every step)."""
    with quiet():
        call, args = build(p)
        plain = call
        if p.differentiable:
            call = differentiable(call)
            compare_value(call(*args), plain(*args))
        if p.kind == "vjp":
            dout = seed_like(p, first(plain(*args)))
            for _ in range(3):
                out, pullback = vjp(call, *args, wrt=list(p.wrt))
                compare_value(first(out), first(plain(*args)))
                extra = len(out) - 1 if isinstance(out, tuple) else 0
                compare(p, pullback(dout, *[None] * extra), expected(p, plain, args, dout))
            return
        both = value_and_grad(call, wrt=list(p.wrt))
        for step in range(max(3, p.steps)):
            value, gradients = both(*args)
            compare_value(value, plain(*args))
            compare(p, gradients, expected(p, plain, args, None), step)
            if p.steps > 1:
                step_attributes(p, plain, gradients)


def check_tracing(p: Program) -> None:
    """Tracing against central differences (every step of a training loop)."""
    with quiet():
        call, args = build(p)
        if p.kind == "vjp":
            check_tracing_vjp(p, call, args)
            return
        for step in range(p.steps):
            value, gradients = value_and_gradient(call, *args, wrt=list(p.wrt))
            compare_value(value, call(*args))
            compare(p, gradients, expected(p, call, args, None), step)
            if p.steps > 1:
                step_attributes(p, call, gradients)


def check_tracing_vjp(p: Program, call: Any, args: tuple[Any, ...]) -> None:
    """``evaluate`` + ``gradient`` of the seeded sum of the first output: what a tracing
    user writes for a vjp; the attributes in ``wrt`` are traced while the call runs."""
    dout = seed_like(p, first(call(*args)))
    obj = owner(call)
    attributes = [e.removeprefix("self.") for e in p.wrt if e.startswith("self.")]
    positions = [position(call, e) for e in p.wrt if not e.startswith("self.")]
    count = len(args)

    def seeded(*inputs: Any) -> Any:
        saved = {a: getattr(obj, a) for a in attributes}
        for a, value in zip(attributes, inputs[count:], strict=True):
            setattr(obj, a, value)
        try:
            out = first(call(*inputs[:count]))
        finally:
            for a, value in saved.items():
                setattr(obj, a, value)
        variables = {("self." + a): v for a, v in zip(attributes, inputs[count:], strict=True)}
        variables.update({e: inputs[position(call, e)] for e in p.wrt if not e.startswith("self.")})
        return out, gradient(np.sum(out * dout), *[variables[e] for e in p.wrt])

    inputs = [traced(a) if i in positions else a for i, a in enumerate(args)]
    inputs += [traced(getattr(obj, a)) for a in attributes]
    out, gradients = evaluate(seeded, *inputs)
    gradients = gradients if len(p.wrt) > 1 else (gradients,)
    compare_value(out, first(call(*args)))
    compare(p, gradients, expected(p, call, args, dout))


@contextlib.contextmanager
def autograd_numpy(p: Program) -> Iterator[None]:
    """The program's module reads ``autograd.numpy`` as ``np`` meanwhile."""
    module = sys.modules[p.module]
    saved = module.np
    module.np = anp
    try:
        yield
    finally:
        module.np = saved


def check_autograd(p: Program) -> None:
    """autograd against central differences: the oracles agree with each other, so
    each mode is checked against both."""
    with quiet():
        call, args = build(p)
        dout = seed_like(p, first(call(*args))) if p.kind == "vjp" else None
        with autograd_numpy(p):
            boxed, boxed_args = build(p)
        for step in range(p.steps):
            want = expected(p, call, args, dout)
            got = []
            for entry in p.wrt:
                with autograd_numpy(p):
                    objective = scalar(p, boxed, dout)
                    value, fn = entry_function(objective, boxed, boxed_args, entry)
                    got.append(autograd.grad(fn)(value))
            compare(p, got, want, step)
            if p.steps > 1:
                step_attributes(p, call, got)
                step_attributes(p, boxed, got)
