"""The compiler on control flow and calls (``corpus_flow*.py``), against independent oracles.

Every program runs at several seeds, chosen so that data-dependent branches, breaks and
``while`` trip counts differ between seeds (``test_seeds_take_the_paths_they_claim``
proves it). Gradients are compared with central finite differences in float64 and with
autograd (on a functional reference where the program writes into arrays).

A program the compiler mishandles is marked ``xfail(strict=True)`` with the reason
written on it (``bug`` in the corpus).
"""

from __future__ import annotations

import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from corpus_flow import Program, load_all
from oracles import central_difference
from program_checks import assert_right_in_mode

from autodiff_tutor.api import Differentiable, differentiable, grad, value_and_grad, vjp
from autodiff_tutor.errors import AutodiffError, InternalError, NonDifferentiableInputError

PROGRAMS = load_all()
BY_NAME = {p.name: p for p in PROGRAMS}


def seeds_of(program: Program) -> list[int]:
    return list(program.seeds)


def label_of(program: Program, seed: int) -> str | None:
    return program.path(*program.args(seed)) if program.path else None


def params(stage: str) -> list:
    """(program, seed) cases, with the known bugs marked for the ``stage`` they hit."""
    cases = []
    for program in PROGRAMS:
        for seed in seeds_of(program):
            hit = program.fails(label_of(program, seed)) and (
                stage == "run" or program.bug_at == "compile"
            )
            marks = [pytest.mark.xfail(strict=True, reason=program.bug)] if hit else []
            cases.append(pytest.param(program, seed, id=f"{program.name}-{seed}", marks=marks))
    return cases


def compile_params() -> list:
    return [
        pytest.param(
            p,
            id=p.name,
            marks=[pytest.mark.xfail(strict=True, reason=p.bug)]
            if p.bug_at == "compile" and p.bug
            else [],
        )
        for p in PROGRAMS
    ]


def float_args(args: tuple) -> list[int]:
    return [i for i, a in enumerate(args) if isinstance(a, (float, np.floating, np.ndarray))]


# -- autograd: the same functions, with numpy replaced by autograd.numpy everywhere ----------


def _rebuild(fn: types.FunctionType, namespace: dict) -> types.FunctionType:
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def autograd_version(fn):
    """``fn`` with ``np`` bound to autograd.numpy, in it and in the corpus helpers it calls."""
    module = fn.__globals__
    namespace = dict(module)
    namespace["np"] = anp
    for name, value in module.items():
        target = value.fn if isinstance(value, Differentiable) else value
        if isinstance(target, types.FunctionType) and target.__module__ == fn.__module__:
            namespace[name] = _rebuild(target, namespace)
    return _rebuild(fn, namespace)


# -- the corpus itself ---------------------------------------------------------------------


def test_corpus_is_large_and_varied():
    assert len(PROGRAMS) >= 45
    assert len({p.name for p in PROGRAMS}) == len(PROGRAMS)
    data_dependent = [p for p in PROGRAMS if p.path is not None]
    assert len(data_dependent) >= 15
    with_static = [p for p in PROGRAMS if len(p.wrt) < len(p.args(0))]
    assert len(with_static) >= 5
    assert sum(len(seeds_of(p)) for p in PROGRAMS) >= 150


@pytest.mark.parametrize("program", [p for p in PROGRAMS if p.path], ids=lambda p: p.name)
def test_seeds_take_the_paths_they_claim(program):
    labels = {seed: label_of(program, seed) for seed in seeds_of(program)}
    assert labels == program.seeds
    assert len(set(labels.values())) >= 2, "every seed takes the same path"


@pytest.mark.parametrize("program", [p for p in PROGRAMS if p.reference], ids=lambda p: p.name)
def test_functional_references_compute_the_same_function(program):
    """A reference is trusted only if it has the program's value and (by autograd) FD slope."""
    for seed in seeds_of(program):
        args = program.args(seed)
        np.testing.assert_allclose(program.reference(*args), program.fn(*args), rtol=1e-12)
        reference = autograd_version(program.reference)
        for index in program.wrt:
            expected = central_difference(program.fn, args, index)
            slope = autograd.grad(reference, index)(*args)
            np.testing.assert_allclose(slope, expected, rtol=1e-5, atol=1e-6)


# -- gradients against the oracles ----------------------------------------------------------


@pytest.mark.parametrize(("program", "seed"), params("run"))
def test_gradients_match_finite_differences(program, seed):
    args = program.args(seed)
    value, gradients = value_and_grad(program.fn, wrt=list(program.wrt))(*args)
    np.testing.assert_allclose(value, program.fn(*args), rtol=1e-12)
    for index, gradient in zip(program.wrt, gradients, strict=True):
        assert np.shape(gradient) == np.shape(args[index]), f"gradient {index} has a wrong shape"
        assert np.asarray(gradient).dtype == np.float64
        expected = central_difference(program.fn, args, index)
        np.testing.assert_allclose(gradient, expected, rtol=program.fd_rtol, atol=1e-6)


@pytest.mark.parametrize(("program", "seed"), params("run"))
def test_gradients_match_autograd(program, seed):
    args = program.args(seed)
    gradients = grad(program.fn, wrt=list(program.wrt))(*args)
    reference = autograd_version(program.reference or program.fn)
    for index, gradient in zip(program.wrt, gradients, strict=True):
        expected = autograd.grad(reference, index)(*args)
        np.testing.assert_allclose(gradient, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("program", compile_params())
def test_generated_code_compiles_and_shows(program, capsys):
    compiled = differentiable(program.fn)
    wrt = list(program.wrt)
    forward, backward = compiled.forward_source(wrt), compiled.backward_source(wrt)
    compile(forward, "<forward>", "exec")
    compile(backward, "<backward>", "exec")
    compiled.show(wrt)
    shown = capsys.readouterr().out
    assert f"def {program.name}_forward(" in shown and forward in shown
    assert f"def {program.name}_backward(" in shown and backward in shown


# -- the tape: loops with break and data-dependent while save and replay ---------------------


@pytest.mark.parametrize(
    "name",
    [
        "cumulative_product_until_threshold",
        "nested_loop_inner_break",
        "newton_sqrt_while",
        "while_data_dependent_count",
        "kepler_newton_break",
    ],
)
def test_break_and_while_use_the_memory_stack(name):
    program = BY_NAME[name]
    compiled = differentiable(program.fn)
    forward = compiled.forward_source(list(program.wrt))
    backward = compiled.backward_source(list(program.wrt))
    assert "stack.push(" in forward
    assert "stack.pop()" in backward
    loop_lines = [line for line in backward.splitlines() if line.lstrip().startswith("for ")]
    assert loop_lines, "the backward replays the iterations in a loop"


def test_while_trip_count_changes_the_gradient_path():
    """Two inputs with different trip counts both match the implicit derivative 1/(2 sqrt a)."""
    program = BY_NAME["newton_sqrt_while"]
    for seed in seeds_of(program):
        (a,) = program.args(seed)
        np.testing.assert_allclose(grad(program.fn)(a), 0.5 / np.sqrt(a), rtol=1e-9)


def test_bisection_then_newton_gives_the_implicit_derivative():
    program = BY_NAME["bisection_then_newton"]
    for seed in seeds_of(program):
        (a,) = program.args(seed)
        t = program.fn(a)
        np.testing.assert_allclose(t**3 + t - a, 0.0, atol=1e-12)
        np.testing.assert_allclose(grad(program.fn)(a), 1.0 / (3 * t * t + 1), rtol=1e-9)


# -- dtypes and static arguments ------------------------------------------------------------

FLOAT32_PROGRAMS = [
    "piecewise_if_elif",
    "huber_loop",
    "horner",
    "nested_if",
    "while_with_break",
    "loop_with_continue",
    "kepler_newton_break",
    "nested_helper_in_loop",
]


@pytest.mark.parametrize("name", FLOAT32_PROGRAMS)
def test_float32_in_float32_out(name):
    program = BY_NAME[name]
    args = program.args(0)
    args32 = tuple(
        np.asarray(a, dtype=np.float32) if i in program.wrt else a for i, a in enumerate(args)
    )
    gradients32 = grad(program.fn, wrt=list(program.wrt))(*args32)
    gradients64 = grad(program.fn, wrt=list(program.wrt))(*args)
    for index, g32, g64 in zip(program.wrt, gradients32, gradients64, strict=True):
        assert np.asarray(g32).dtype == np.float32, f"gradient {index} is {np.asarray(g32).dtype}"
        assert np.shape(g32) == np.shape(args[index])
        scale = max(1.0, float(np.max(np.abs(g64))))
        np.testing.assert_allclose(g32, g64, atol=1e-4 * scale)


STATIC = [p for p in PROGRAMS if len(float_args(p.args(0))) < len(p.args(0)) and not p.bug]


@pytest.mark.parametrize("program", STATIC, ids=lambda p: p.name)
def test_static_arguments_are_never_differentiated(program):
    args = program.args(seeds_of(program)[0])
    static = [i for i in range(len(args)) if i not in float_args(args)]
    value, pullback = vjp(program.fn, *args)  # wrt=None: every floating-point argument
    gradients = pullback(np.float64(1.0))
    assert len(gradients) == len(float_args(args))
    expected = grad(program.fn, wrt=float_args(args))(*args)
    for gradient, reference in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(gradient, reference, rtol=1e-12)
    with pytest.raises(NonDifferentiableInputError, match="only floating-point values"):
        grad(program.fn, wrt=static[0])(*args)


# -- random draws that do not depend on a differentiated value -------------------------------


def noisy_loop(x, n):
    s = x
    for _ in range(n):
        s = s * np.random.uniform(0.5, 1.5, size=3) + 0.1 * np.sin(s)
    return np.sum(s * s)


def test_random_draws_off_the_gradient_path_use_the_forward_draws():
    """The backward replays the draws the forward made (saved on the tape), not new ones:
    a draw whose arguments carry no gradient is a constant, and the value and gradient
    are those of the function with the forward's draws written in."""
    x = np.array([0.3, -0.8, 1.1])
    np.random.seed(7)
    value, gradient = value_and_grad(noisy_loop)(x, 3)
    np.random.seed(7)
    draws = [np.random.uniform(0.5, 1.5, size=3) for _ in range(3)]

    def replay(y):
        s = y
        for draw in draws:
            s = s * draw + 0.1 * np.sin(s)
        return np.sum(s * s)

    np.testing.assert_allclose(value, replay(x), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(replay, (x,), 0), rtol=1e-6)


# -- closures are read when the function runs, like Python does ------------------------------


def test_rebound_closure_variable_is_seen_by_the_compiled_gradient():
    w = np.array([1.0, 2.0])
    x = np.array([0.5, -1.0])

    def loss(x):
        return np.sum((w * x) ** 2)

    for _ in range(3):
        np.testing.assert_allclose(grad(loss)(x), 2 * w * w * x, rtol=1e-12)
        w = w * 0.5


# -- aliasing and in-place updates: rejected with a location, or exactly Python's result -------


def alias_in_loop_then_add_in_place(x):
    s = x * 0.5
    for _ in range(2):
        t = s
        s += 1.0
    return np.sum(s * t)


def append_then_add_in_place(x):
    s = x * 0.5
    hs = []
    for _ in range(2):
        hs.append(s)
        s += 1.0
    return np.sum(np.stack(hs) * x)


def write_then_append(x):
    s = x * 0.5
    hs = []
    for _ in range(2):
        s[0] = s[0] * 2
        hs.append(s)
    return np.sum(np.stack(hs) * x)


def rnn_in_place_state(W, xs):
    h = np.zeros(W.shape[0])
    hs = []
    for x in xs:
        h *= 0.5
        h += np.tanh(W @ x)
        hs.append(h)
    return np.sum(np.stack(hs) * np.arange(1.0, 4.0))


def sort_result_assigned(x):
    y = x * 2
    z = y.sort()  # noqa: F841
    return np.sum(y * np.arange(3.0))


def copyto_result_assigned(x):
    y = np.zeros(3)
    w = np.copyto(y, x)  # noqa: F841
    return np.sum(y * x)


IN_PLACE = [
    alias_in_loop_then_add_in_place,
    append_then_add_in_place,
    write_then_append,
    rnn_in_place_state,
    sort_result_assigned,
    copyto_result_assigned,
]


@pytest.mark.parametrize("fn", IN_PLACE)
def test_in_place_updates_are_rejected_or_exact(fn):
    """Never a silent difference from Python: a located error, or Python's value and gradient."""
    if fn is rnn_in_place_state:
        rng = np.random.default_rng(3)
        args = (rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2)))
    else:
        args = (np.array([0.9, -0.4, 0.1]),)  # not sorted
    try:
        value, gradient = value_and_grad(fn)(*args)
    except AutodiffError as error:
        assert not isinstance(error, InternalError), f"the toolkit failed:\n{error}"
        assert error.location is not None and error.location.filename == __file__
        return
    np.testing.assert_allclose(value, fn(*(np.copy(a) for a in args)), rtol=1e-12)
    expected = central_difference(fn, args, 0)
    np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-6)


def loop_variable_after_zero_trips(x):
    acc = 0.0
    n = 0
    for i in range(n):
        acc = acc + np.sum(x * i)
    return acc + np.sum(x)


def test_a_loop_that_runs_zero_times():
    """A loop over ``range(0)`` runs no iteration: the values it would assign keep
    the ones from before it, and the gradient is that of the code after it."""
    x = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])
    assert_right_in_mode("compiler", loop_variable_after_zero_trips, x)
