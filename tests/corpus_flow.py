"""A corpus of programs with control flow and calls, each with a sampler of inputs.

Used by ``test_compiler_flow.py`` (against finite differences and autograd). Every
entry is a :class:`Program`: a scalar-valued function, a sampler (a numpy Generator
in, the argument tuple out), the positions of the arguments to differentiate (the
others are static: loop counts, flags), and the seeds to run it at.

Where the control flow depends on the data, ``path`` computes, in plain Python and
independently of the program, which way a given input goes (the branch taken, where
a loop breaks, how many times a ``while`` runs), and ``seeds`` maps each seed to the
path it must take: the tests assert both, so the corpus provably covers every branch
it claims to. The comment above each such program says which seed takes which path.

Programs that write into arrays in place cannot be run by autograd; they carry a
``reference``: the same function written without in-place writes (the tests check
that it returns the program's value before trusting its autograd gradient).

``bug`` marks a program the compiler mishandles today (see the report in the test
module); ``bug_on`` restricts it to the paths that fail, ``bug_at`` says whether it
fails when compiling or when running.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff_tutor.api import differentiable

# Known compiler bugs (reproducers in the helper's report); remove the mark when fixed.
B_GUARD_THEN_LOOP = (
    "compiler bug B19: after an early 'return x[0]', '+=' inside a later loop is rejected as "
    "a write to a shared array"
)
B_SWAP = (
    "compiler bug B17: 's, t = t, s' reads the right side after rebinding the first target "
    "(silently wrong value and gradient)"
)


@dataclass
class Program:
    """One corpus entry; see the module docstring."""

    fn: Callable[..., Any]
    sample: Callable[[np.random.Generator], tuple[Any, ...]]
    wrt: tuple[int, ...] = (0,)
    seeds: dict[int, str] | tuple[int, ...] = (0, 1, 2)
    path: Callable[..., str] | None = None
    reference: Callable[..., Any] | None = None
    bug: str = ""
    bug_on: frozenset[str] | None = None
    bug_at: str = "run"  # "compile" or "run"
    fd_rtol: float = 1e-5
    tags: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.fn.__name__

    def args(self, seed: int) -> tuple[Any, ...]:
        return self.sample(np.random.default_rng(seed))

    def fails(self, label: str | None) -> bool:
        """Whether the known bug hits the run with path ``label``."""
        return bool(self.bug) and (self.bug_on is None or label in self.bug_on)


PROGRAMS: list[Program] = []


def program(sample: Callable[[np.random.Generator], tuple[Any, ...]], **options: Any):
    """Register the decorated function as a corpus program."""

    def decorate(fn):
        PROGRAMS.append(Program(fn, sample, **options))
        return fn

    return decorate


def u(rng: np.random.Generator, *shape: int, low: float = -2.0, high: float = 2.0):
    """Uniform floats of ``shape`` (a numpy float64 scalar when there is no shape)."""
    if not shape:
        return np.float64(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape)


# ----------------------------------------------------------------------------------------
# Module-level helpers, constants and differentiable functions called by the programs.

TOLERANCE = 1e-12
MAX_STEPS = 60
LEAK = 0.1


def softplus(v):
    return np.log1p(np.exp(v))


def leaky_clip(v, lo=-1.0, hi=1.0):
    """Clip with a small slope outside [lo, hi]; one return, branches inside."""
    if v > hi:
        out = hi + LEAK * (v - hi)
    elif v < lo:
        out = lo + LEAK * (v - lo)
    else:
        out = v
    return out


def euler_steps(y, rate, n):
    for _ in range(n):
        y = y + 0.1 * (rate * np.sin(y) - y)
    return y


def moments(v):
    return np.sum(v), np.sum(v * v)


@differentiable
def energy(v):
    if np.sum(v) > 0:
        e = np.sum(v**3)
    else:
        e = np.sum(np.exp(v))
    return e


@differentiable
def sum_and_square(v):
    return np.sum(np.tanh(v)), np.sum(v * v)


def make_scaled_tanh(scale):
    def scaled(x):
        s = x
        for _ in range(2):
            s = np.tanh(scale * s)
        return np.sum(s)

    return scaled


def make_weighted_poly(weights, degree):
    def weighted_poly(x):
        total = 0.0
        power = x
        for k in range(degree):
            total = total + weights[k] * np.sum(power)
            power = power * x
        return total

    return weighted_poly


# ----------------------------------------------------------------------------------------
# Branches


# seed 0 takes the middle piece, 2 the left (x < -1), 4 the right (x >= 1)
@program(
    lambda rng: (u(rng, low=-3, high=3),),
    seeds={0: "middle", 2: "left", 4: "right"},
    path=lambda x: "left" if x < -1 else ("middle" if x < 1 else "right"),
)
def piecewise_if_elif(x):
    if x < -1:
        y = -2 * x - 1
    elif x < 1:
        y = x * x * np.exp(0.3 * x)
    else:
        y = np.log(x) + np.sin(x)
    return y


# seeds 0, 3 normalize (sum of squares > 4), 2 and 5 scale
@program(
    lambda rng: (u(rng, 3),),
    seeds={0: "normalize", 2: "scale", 3: "normalize", 5: "scale"},
    path=lambda x: "normalize" if np.sum(x * x) > 4 else "scale",
)
def branch_on_norm(x):
    r2 = np.sum(x * x)
    if r2 > 4:
        y = x / np.sqrt(r2)
    else:
        y = 0.5 * x
    return np.sum(np.tanh(y) * x)


def _signs(x):
    positive = int(np.sum(np.asarray(x) > 0))
    return "all positive" if positive == np.size(x) else ("mixed" if positive else "none")


# seed 0 and 1: mixed signs (both sides of the conditional expression); seed 5 all positive
@program(
    lambda rng: (u(rng, 4, low=-1, high=3),),
    seeds={0: "mixed", 1: "mixed", 5: "all positive"},
    path=_signs,
)
def conditional_expression_in_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + (x[i] ** 2 if x[i] > 0 else np.sin(x[i]) * s)
    return s


def _and_or(x):
    return "cubic" if (x[0] > 0 and x[1] < 0) or not x[2] > -1 else "quadratic"


# seeds 0, 1 cubic; 2, 3 quadratic
@program(
    lambda rng: (u(rng, 3),),
    seeds={0: "cubic", 1: "cubic", 2: "quadratic", 3: "quadratic"},
    path=_and_or,
)
def and_or_not_condition(x):
    if (x[0] > 0 and x[1] < 0) or not x[2] > -1:
        y = np.sum(x**3)
    else:
        y = np.sum(x**2) * x[0]
    return y


def _nested(x, y):
    if np.sum(x) > 0:
        return "x+ y+" if np.sum(y) > 0 else "x+ y-"
    return "x-"


# seeds 0: x-, 1: x+ y+, 4: x+ y-
@program(
    lambda rng: (u(rng, 3), u(rng, 3)),
    wrt=(0, 1),
    seeds={0: "x-", 1: "x+ y+", 4: "x+ y-"},
    path=_nested,
)
def nested_if(x, y):
    z = x * y
    if np.sum(x) > 0:
        if np.sum(y) > 0:
            z = z * np.exp(x)
        else:
            z = z + y * y
    else:
        z = np.cos(z)
    return np.sum(z)


def _flag_path(x, use_tanh):
    return f"{'tanh' if use_tanh else 'sin'}, {'big' if x[0] > 0.5 else 'small'}"


# the flag is static (drawn): seeds 0: sin, big; 1: tanh, small; 2: sin, small; 4: tanh, big
@program(
    lambda rng: (u(rng, 3), bool(rng.integers(0, 2))),
    seeds={0: "sin, big", 1: "tanh, small", 2: "sin, small", 4: "tanh, big"},
    path=_flag_path,
)
def branch_with_flag(x, use_tanh):
    y = np.tanh(x) if use_tanh else np.sin(x)
    if x[0] > 0.5:
        y = y * x[0]
    return np.sum(y * y)


# seeds 0, 1: the if runs; 2, 3: it does not
@program(
    lambda rng: (u(rng, 3),),
    seeds={0: "taken", 1: "taken", 2: "skipped", 3: "skipped"},
    path=lambda x: "taken" if x[1] > x[2] else "skipped",
)
def one_sided_if(x):
    y = x * 2.0
    if x[1] > x[2]:
        z = np.exp(x)
        y = y * z
    return np.sum(y)


def _huber_path(r, delta):
    return f"{int(np.sum(np.abs(r) <= delta))} of {np.size(r)} inside"


# a static delta; residuals inside it take the quadratic branch: seed 0 has 1 of 5 inside,
# seed 1 has 2, seed 6 has 4 (so every seed takes both branches)
@program(
    lambda rng: (u(rng, 5, low=-2.5, high=2.5), 1.0),
    seeds={0: "1 of 5 inside", 1: "2 of 5 inside", 6: "4 of 5 inside"},
    path=_huber_path,
)
def huber_loop(r, delta):
    total = 0.0
    for v in r:
        if np.abs(v) <= delta:
            total = total + 0.5 * v * v
        else:
            total = total + delta * (np.abs(v) - 0.5 * delta)
    return total


# seeds 0, 1 return early (x[0] > 0), seeds 2, 3 fall through
@program(
    lambda rng: (u(rng, 3),),
    seeds={0: "early", 1: "early", 2: "late", 3: "late"},
    path=lambda x: "early" if x[0] > 0 else "late",
)
def early_return_if(x):
    if x[0] > 0:
        return np.sum(x**3)
    return np.sum(np.sin(x) * x)


# seeds 0, 1: elementwise maximum through a branch on every element, with mixed signs
@program(lambda rng: (u(rng, 4), u(rng, 4)), wrt=(0, 1))
def select_by_compare(x, y):
    s = 0.0
    for a, b in zip(x, y):  # noqa: B905 (the compiler's zip has no strict=, bug B12)
        s = s + (a * b if a > b else b - a * a)
    return s


# ----------------------------------------------------------------------------------------
# Loops with a static trip count


@program(lambda rng: (u(rng, 3, 3, low=-0.6, high=0.6), u(rng, 3, 2), u(rng, 4, 2)), wrt=(0, 1, 2))
def rnn_final_state(W, U, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x)
    return np.sum(h * h)


@program(
    lambda rng: (u(rng, 3, 3, low=-0.6, high=0.6), u(rng, 3, 2), u(rng, 4, 2)),
    wrt=(0, 1, 2),
)
def rnn_stack_states(W, U, xs):
    h = np.zeros(W.shape[0])
    hs = []
    for x in xs:
        h = np.tanh(W @ h + U @ x)
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


@program(lambda rng: (u(rng, 5), u(rng)), wrt=(0, 1))
def horner(coefficients, x):
    value = 0.0
    for c in coefficients:
        value = value * x + c
    return value


@program(lambda rng: (u(rng, 3, low=0.5, high=1.5), int(rng.integers(1, 5))))
def power_by_loop(x, n):
    y = x
    for _ in range(n):
        y = y * x
    return np.sum(y)


@program(lambda rng: (u(rng, 4), u(rng, 3)), wrt=(0, 1))
def zip_unequal_lengths(x, y):
    s = 0.0
    for a, b in zip(x, y):  # noqa: B905 (shorter wins, like Python)
        s = s + a * np.exp(b)
    return s


@program(lambda rng: (u(rng, 4),))
def enumerate_from_one(x):
    s = 0.0
    for i, v in enumerate(x, start=1):
        s = s + i * v * v
    return s


@program(lambda rng: (u(rng, 4),))
def enumerate_weights(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + (i + 1) * v * v - np.sin(i * v)
    return s


@program(lambda rng: (u(rng, 3, 3), u(rng, 3)), wrt=(0, 1))
def nested_loops_quadratic_form(A, x):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + x[i] * A[i, j] * x[j]
    return s


@program(lambda rng: (u(rng, 6),))
def reversed_range_with_step(x):
    s = 0.0
    for i in range(len(x) - 1, -1, -2):
        s = 0.5 * s + x[i] * x[i]
    return s


@program(lambda rng: (u(rng, 3, 4),))
def rows_of_matrix(X):
    total = 0.0
    previous = X[0]
    for row in X:
        total = total + np.sum(row * previous)
        previous = np.tanh(row)
    return total


@program(lambda rng: (u(rng, 4), u(rng)), wrt=(0, 1))
def tuple_swap_recurrence(x, a):
    p, q = a, 1.0
    for v in x:
        p, q = q, p + q * v
    return p * q


@program(lambda rng: (u(rng, 2), int(rng.integers(1, 4))), bug=B_SWAP)
def swap_then_swaps_in_loop(x, n):
    a = x[0] * 1.0
    b = np.sin(x[1])
    a, b = b, a
    for _ in range(n):
        a, b = b, a
        a = a * np.cos(b)
    return a + 2.0 * b


@program(lambda rng: (u(rng, 2), u(rng, 6, 2), u(rng, 6), int(rng.integers(2, 5))), wrt=(0, 1, 2))
def unrolled_gradient_descent(w, X, y, steps):
    for _ in range(steps):
        residual = X @ w - y
        w = w - 0.05 * (X.T @ residual)
    return np.sum((X @ w - y) ** 2)


@program(lambda rng: (u(rng, 3, low=0.2, high=1.0), u(rng, low=0.5, high=2.0), 5), wrt=(0, 1))
def euler_with_nested_helper(y, rate, n):
    def velocity(v):
        return rate * np.sin(v) - v * v

    for _ in range(n):
        y = y + 0.1 * velocity(y)
    return np.sum(y)


@program(lambda rng: (u(rng, 4, low=0.5, high=1.5),))
def augmented_assignments(x):
    h = x * 1.0
    s = 0.0
    for i in range(3):
        h *= x
        h += np.sin(h)
        h /= 1.5
        s += np.sum(h)
        s -= 0.1 * x[i]
    return s


@program(
    lambda rng: (u(rng, 3), u(rng, 3, low=0.5, high=1.0), u(rng, 2)),
    wrt=(0, 1, 2),
)
def nested_loops_over_arrays(x, scale, shift):
    total = 0.0
    for a in x:
        for b in shift:
            total = total + np.tanh(a * scale + b)[0] * b
    return total


# ----------------------------------------------------------------------------------------
# Loops with break / continue / data-dependent trip counts


def _skip_path(x):
    negatives = int(np.sum(x < 0))
    return "some skipped" if negatives else "none skipped"


# seeds 0, 1: some elements skipped by continue; seed 5 none
@program(
    lambda rng: (u(rng, 4, low=-0.5, high=2.0),),
    seeds={0: "some skipped", 1: "some skipped", 5: "none skipped"},
    path=_skip_path,
)
def loop_with_continue(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s = s + np.sqrt(v + 1.0) * v
    return s


def _break_at(x):
    product = 1.0
    for i, v in enumerate(x):
        product = product * (1.0 + v)
        if product > 2.0:
            return f"break at {i}"
    return "no break"


# seed 0 never breaks, seed 1 breaks at 3, seed 4 at 2, seed 5 at 1
@program(
    lambda rng: (u(rng, 4, low=-0.2, high=0.6),),
    seeds={0: "no break", 1: "break at 3", 4: "break at 2", 5: "break at 1"},
    path=_break_at,
)
def cumulative_product_until_threshold(x):
    product = 1.0
    for v in x:
        product = product * (1.0 + v)
        if product > 2.0:
            break
    return product * np.sum(x)


def _inner_breaks(X):
    return f"{int(np.sum(np.any(X < 0, axis=1)))} inner breaks"


# the inner loop breaks on a negative entry: in 2 rows for seed 0, 1 for 1, 3 for 3, 0 for 6
@program(
    lambda rng: (u(rng, 3, 3, low=-1, high=3),),
    seeds={0: "2 inner breaks", 1: "1 inner breaks", 3: "3 inner breaks", 6: "0 inner breaks"},
    path=_inner_breaks,
)
def nested_loop_inner_break(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] < 0:
                break
            s = s + X[i, j] ** 2 * (i + 1)
    return s


def _newton_iterations(a):
    x, k = a, 0
    while np.abs(x * x - a) > TOLERANCE and k < MAX_STEPS:
        x, k = 0.5 * (x + a / x), k + 1
    return f"{k} steps"


# the number of Newton steps depends on a: seeds 0: 7, 1: 6, 3: 5
@program(
    lambda rng: (u(rng, low=0.5, high=30.0),),
    seeds={0: "7 steps", 1: "6 steps", 3: "5 steps"},
    path=_newton_iterations,
)
def newton_sqrt_while(a):
    x = a
    k = 0
    while np.abs(x * x - a) > TOLERANCE and k < MAX_STEPS:
        x = 0.5 * (x + a / x)
        k += 1
    return x


def _kepler_steps(mean_anomaly, eccentricity):
    E, k = mean_anomaly, 0
    while k < 50:
        step = (E - eccentricity * np.sin(E) - mean_anomaly) / (1 - eccentricity * np.cos(E))
        E, k = E - step, k + 1
        if np.abs(step) < 1e-13:
            break
    return f"{k} steps"


# Kepler's equation E - e sin E = M by Newton with a break; seeds 0: 5, 1: 6, 3: 4 steps
@program(
    lambda rng: (u(rng, low=0.1, high=3.0), u(rng, low=0.05, high=0.8)),
    wrt=(0, 1),
    seeds={0: "5 steps", 1: "6 steps", 3: "4 steps"},
    path=_kepler_steps,
)
def kepler_newton_break(mean_anomaly, eccentricity):
    E = mean_anomaly
    k = 0
    while k < 50:
        step = (E - eccentricity * np.sin(E) - mean_anomaly) / (1 - eccentricity * np.cos(E))
        E = E - step
        k += 1
        if np.abs(step) < 1e-13:
            break
    return E


def _fixed_point_steps(a):
    x, previous, k = np.cos(a), a, 0
    while np.abs(x - previous) > 1e-12 and k < 200:
        previous, x, k = x, np.cos(a * x), k + 1
    return f"{k} steps"


# x = cos(a x) iterated to a tolerance; seeds 0: 32, 1: 25, 2: 17 steps
@program(
    lambda rng: (u(rng, low=0.3, high=1.0),),
    seeds={0: "32 steps", 1: "25 steps", 2: "17 steps"},
    path=_fixed_point_steps,
)
def fixed_point_counter_and_tolerance(a):
    x = np.cos(a)
    previous = a
    k = 0
    while np.abs(x - previous) > 1e-12 and k < 200:
        previous = x
        x = np.cos(a * x)
        k = k + 1
    return x


def _growth_steps(x):
    s, k = 1.0, 0
    while s < 10.0:
        s, k = s * (1.0 + x * x), k + 1
    return f"{k} steps"


# grows until s >= 10: the trip count is data dependent; seeds 0: 3, 1: 4, 2: 6, 3: 8
@program(
    lambda rng: (u(rng, low=0.5, high=1.5),),
    seeds={0: "3 steps", 1: "4 steps", 2: "6 steps", 3: "8 steps"},
    path=_growth_steps,
)
def while_data_dependent_count(x):
    s = 1.0
    while s < 10.0:
        s = s * (1.0 + x * x)
    return s


def _trips_per_element(x):
    trips = []
    for v in x:
        t, k = v, 0
        while t < 2.0:
            t, k = t * 1.5 + 0.1 * np.sin(t), k + 1
        trips.append(str(k))
    return "+".join(trips)


# a while per element of a for: trips per element are 1+2+4 for seed 0, 1+0+3 for 1, 0+1+0 for 4
@program(
    lambda rng: (u(rng, 3, low=0.3, high=2.5),),
    seeds={0: "1+2+4", 1: "1+0+3", 4: "0+1+0"},
    path=_trips_per_element,
)
def while_inside_for(x):
    s = 0.0
    for v in x:
        t = v
        while t < 2.0:
            t = t * 1.5 + 0.1 * np.sin(t)
        s = s + t * t
    return s


# the while only runs when x > 0: seeds 0, 1 run it, 2, 3 skip it
@program(
    lambda rng: (u(rng, low=-1.5, high=1.5),),
    seeds={0: "taken", 1: "taken", 2: "skipped", 3: "skipped"},
    path=lambda x: "taken" if x > 0 else "skipped",
)
def while_inside_if(x):
    t = x
    if x > 0:
        while t < 2.0:
            t = t * 1.5 + 0.1 * np.sin(t)
    return t * t


# bisection (comparisons only, no gradient) then one Newton step: the Newton step makes the
# gradient the implicit derivative of the root of t^3 + t - a. Always 40 halvings.
@program(lambda rng: (u(rng, low=-5.0, high=5.0),))
def bisection_then_newton(a):
    lo = -3.0
    hi = 3.0
    k = 0
    while k < 40:
        mid = 0.5 * (lo + hi)
        if mid**3 + mid - a > 0:
            hi = mid
        else:
            lo = mid
        k += 1
    t = 0.5 * (lo + hi)
    return t - (t**3 + t - a) / (3 * t * t + 1)


# continue on every third step; the skipping does not depend on data
@program(lambda rng: (u(rng, low=-1.0, high=1.0), u(rng, 3)), wrt=(0, 1))
def while_with_continue(x, w):
    k = 0
    s = x
    while k < 6:
        k += 1
        if k % 3 == 0:
            continue
        s = np.sin(s) + x * np.sum(w)
    return s


def _while_break_path(x):
    s, k = x, 0
    while k < 10:
        s = s * 1.3 + 0.2
        if s > 3.0:
            return f"break after {k}"
        k += 1
    return "ran out"


# seeds 0: break after 5, 2: ran out (s never passes 3), 4: break after 2
@program(
    lambda rng: (u(rng, low=-2.0, high=1.5),),
    seeds={0: "break after 5", 2: "ran out", 4: "break after 2"},
    path=_while_break_path,
)
def while_with_break(x):
    s = x
    k = 0
    while k < 10:
        s = s * 1.3 + 0.2
        if s > 3.0:
            break
        k += 1
    return s * s


def _first_above(x):
    for i in range(len(x)):
        if x[i] > 1.0:
            return f"return at {i}"
    return "no return"


# early return inside the loop: seed 0 never, 1 returns at 1, 2 at 2, 4 at 0
@program(
    lambda rng: (u(rng, 4, low=-1.0, high=1.6),),
    seeds={0: "no return", 1: "return at 1", 2: "return at 2", 4: "return at 0"},
    path=_first_above,
)
def early_return_in_loop(x):
    acc = 0.0
    for i in range(len(x)):
        acc = acc + x[i] * x[i]
        if x[i] > 1.0:
            return acc * x[i]
    return acc


# a guard clause, then an iterative loop with augmented assignments: seeds 4, 5 return at the
# guard, 0, 1 run the loop
@program(
    lambda rng: (u(rng, 3, low=-1.0, high=2.0),),
    seeds={0: "loop", 1: "loop", 4: "guard", 5: "guard"},
    path=lambda x: "guard" if np.sum(x) > 2.0 else "loop",
    bug=B_GUARD_THEN_LOOP,
    bug_at="compile",
)
def guard_clause_then_loop(x):
    if np.sum(x) > 2.0:
        return x[0]
    t = x * 1.0
    k = 0
    while k < 3:
        t += 0.5 * np.sin(t)
        k += 1
    return np.sum(t * t)


def _nested_return(X):
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] * X[j, i] > 2.0:
                return "early"
    return "late"


# early return from inside two loops: seeds 1, 3 return early, 0, 2 finish
@program(
    lambda rng: (u(rng, 3, 3),),
    seeds={0: "late", 1: "early", 2: "late", 3: "early"},
    path=_nested_return,
)
def early_return_in_nested_loops(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            s = s + np.tanh(X[i, j]) * X[j, i]
            if X[i, j] * X[j, i] > 2.0:
                return s
    return s * 2.0


@program(lambda rng: (u(rng, 3), int(rng.integers(1, 4))))
def reset_inside_for_loop(x, n):
    s = np.sum(x * x)
    for _ in range(n):
        s = 1.0
    return s * np.sum(x)


@program(lambda rng: (u(rng, 3),))
def array_reset_inside_while(x):
    y = np.tanh(x)
    k = 0
    while k < 2:
        y = np.zeros(3)
        k += 1
    return np.sum((y + x) ** 2)


@program(lambda rng: (u(rng, 4),))
def loop_variable_after_loop(x):
    s = 0.0
    for v in x:
        s = s + v * v
    return s * v


# ----------------------------------------------------------------------------------------
# Array writes and lists


def _cumsum_reference(x):
    return np.sum(np.cumsum(x) ** 2)


@program(lambda rng: (u(rng, 5),), reference=_cumsum_reference)
def cumulative_sum_writes(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] + x[i]
    return np.sum(y * y)


def _thomas_reference(lower, diagonal, upper, rhs):
    n = diagonal.shape[0]
    c = [upper[0] / diagonal[0]]
    d = [rhs[0] / diagonal[0]]
    for i in range(1, n):
        denominator = diagonal[i] - lower[i - 1] * c[i - 1]
        c.append(upper[i] / denominator if i < n - 1 else 0.0)
        d.append((rhs[i] - lower[i - 1] * d[i - 1]) / denominator)
    x = [d[n - 1]]
    for i in range(n - 2, -1, -1):
        x.insert(0, d[i] - c[i] * x[0])
    return np.sum(np.array(x) * np.arange(1.0, n + 1))


def _tridiagonal_sample(rng):
    n = 5
    return (
        u(rng, n - 1, low=-1, high=1),
        u(rng, n, low=3, high=4),
        u(rng, n - 1, low=-1, high=1),
        u(rng, n),
    )


# Thomas algorithm for a diagonally dominant tridiagonal system, written element by element
@program(
    _tridiagonal_sample,
    wrt=(0, 1, 2, 3),
    reference=_thomas_reference,
    bug_at="compile",
)
def tridiagonal_solve(lower, diagonal, upper, rhs):
    n = diagonal.shape[0]
    c = np.zeros(n)
    d = np.zeros(n)
    c[0] = upper[0] / diagonal[0]
    d[0] = rhs[0] / diagonal[0]
    for i in range(1, n):
        denominator = diagonal[i] - lower[i - 1] * c[i - 1]
        if i < n - 1:
            c[i] = upper[i] / denominator
        d[i] = (rhs[i] - lower[i - 1] * d[i - 1]) / denominator
    x = np.zeros(n)
    x[n - 1] = d[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = d[i] - c[i] * x[i + 1]
    return np.sum(x * np.arange(1.0, n + 1))


def _column_update_reference(A):
    columns = [A[:, j] * A[:, (j + 1) % 3] for j in range(3)]
    return np.sum(np.stack(columns, axis=1) ** 2)


@program(
    lambda rng: (u(rng, 4, 3),),
    reference=_column_update_reference,
)
def column_augmented_writes(A):
    y = np.zeros((4, 3))
    for j in range(3):
        y[:, j] += A[:, j] * A[:, (j + 1) % 3]
    return np.sum(y**2)


def _slice_write_reference(x):
    y = np.concatenate([x[:1] * 2.0, np.sin(x[:-1]) * x[1:]])
    return np.sum(y * y) + y[-1]


@program(lambda rng: (u(rng, 5),), reference=_slice_write_reference)
def slice_writes(x):
    y = x * 2.0
    y[1:] = np.sin(x[:-1]) * x[1:]
    return np.sum(y * y) + y[-1]


def _branch_write_reference(x):
    first = x[0] * x[1] if x[0] > 0 else 0.0
    return (first + 1.0) ** 2 + np.sum(x[1:] ** 2) * x[2]


# seeds 0, 1 write (x[0] > 0); 2, 3 keep the zero
@program(
    lambda rng: (u(rng, 3),),
    seeds={0: "write", 1: "write", 2: "keep", 3: "keep"},
    path=lambda x: "write" if x[0] > 0 else "keep",
    reference=_branch_write_reference,
)
def write_in_branch(x):
    y = np.zeros(3)
    if x[0] > 0:
        y[0] = x[0] * x[1]
    y[1:] = x[1:] * x[1:]
    return (y[0] + 1.0) ** 2 + np.sum(y[1:]) * x[2]


def _overwrite_reference(x):
    return np.sum((x * x)[1:] ** 2) + 25.0 + 0.0 * x[0]


@program(lambda rng: (u(rng, 4),), reference=_overwrite_reference)
def overwritten_element_gets_no_gradient(x):
    y = x * x
    y[0] = 5.0
    return np.sum(y * y)


def _matrix_rows_reference(W, X):
    return np.sum(np.tanh(X @ W.T) * np.arange(1.0, 4.0))


@program(
    lambda rng: (u(rng, 3, 2), u(rng, 4, 2)),
    wrt=(0, 1),
    reference=_matrix_rows_reference,
)
def matrix_rows_written_in_loop(W, X):
    H = np.zeros((X.shape[0], W.shape[0]))
    for i in range(X.shape[0]):
        H[i] = np.tanh(W @ X[i])
    return np.sum(H * np.arange(1.0, 4.0))


@program(lambda rng: (u(rng, 4),))
def list_append_then_array(x):
    squares = []
    for v in x:
        squares.append(v * v if v > 0 else -v)
    return np.sum(np.array(squares) * x)


@program(lambda rng: (u(rng, 3), u(rng, 2)), wrt=(0, 1))
def list_append_then_concatenate(x, y):
    pieces = []
    for k in range(3):
        pieces.append(x * (k + 1))
        pieces.append(np.sin(y) * k)
    return np.sum(np.concatenate(pieces) ** 2)


@program(lambda rng: (u(rng, 3), u(rng, 3)), wrt=(0, 1))
def list_append_outside_loops(x, y):
    rows = []
    rows.append(x * y)
    rows.append(np.exp(x) - y)
    rows.append(x)
    return np.sum(np.stack(rows, axis=0) * np.arange(9.0).reshape(3, 3))


# ----------------------------------------------------------------------------------------
# Calls: nested helpers, closures, module-level helpers, other differentiable functions


@program(lambda rng: (u(rng, 4),))
def nested_helper_in_loop(x):
    def bump(v):
        return np.exp(-v * v)

    s = 0.0
    for v in x:
        s = s + bump(v) * v
    return s


@program(lambda rng: (u(rng, 3), u(rng, 3)), wrt=(0, 1), bug_at="compile")
def nested_helpers_calling_each_other(x, y):
    def square(v):
        return v * v

    def energy_of(a, b):
        return np.sum(square(a - b) + square(a) * 0.5)

    total = 0.0
    for k in range(3):
        total = total + energy_of(x * k, y)
    return total


@program(lambda rng: (u(rng, 3),))
def nested_helper_defaults_and_keywords(x):
    def scaled_power(v, p=2, scale=1.0):
        return scale * v**p

    return (
        np.sum(scaled_power(x))
        + np.sum(scaled_power(x, 3, scale=0.5))
        + np.sum(scaled_power(x, scale=-2.0))
    )


# the helper's branch is decided per element: seeds 0 and 1 have mixed signs
@program(lambda rng: (u(rng, 4),))
def nested_helper_with_branch(x):
    def ramp(v):
        if v > 0:
            out = v * v
        else:
            out = 0.1 * v
        return out

    s = 0.0
    for v in x:
        s = s + ramp(v)
    return s


_scaled_tanh = make_scaled_tanh(1.7)
_weighted_poly = make_weighted_poly(np.array([1.0, -0.5, 0.25, 2.0]), 3)

PROGRAMS.append(Program(_scaled_tanh, lambda rng: (u(rng, 3),), tags={"closure"}))
PROGRAMS.append(Program(_weighted_poly, lambda rng: (u(rng, 3),), tags={"closure"}))


# seeds cover all three sides of leaky_clip across the elements (mixed inputs)
@program(lambda rng: (u(rng, 5, low=-3.0, high=3.0),))
def module_helper_with_branches(x):
    s = 0.0
    for v in x:
        s = s + leaky_clip(v * 1.5, hi=2.0) * softplus(v)
    return s


@program(lambda rng: (u(rng, 3, low=0.2, high=1.5), u(rng, low=0.5, high=2.0)), wrt=(0, 1))
def module_helper_with_loop(y, rate):
    return np.sum(euler_steps(y, rate, 4) * y)


@program(lambda rng: (u(rng, 4),))
def module_helper_returning_tuple(x):
    total, squares = moments(np.tanh(x))
    return total * squares


# energy() branches on np.sum(v): seeds 0, 1 take both branches across the two calls
@program(lambda rng: (u(rng, 3),))
def differentiable_called_in_loop(x):
    s = 0.0
    for k in range(2):
        s = s + energy(x * (k - 0.5))
    return s


@program(lambda rng: (u(rng, 3), u(rng, 3)), wrt=(0, 1))
def differentiable_returning_tuple(x, y):
    a, b = sum_and_square(x * y)
    return a * b + a


@program(lambda rng: (u(rng, 3, low=-1.0, high=1.0),))
def global_constants_in_loop(x):
    s = x
    k = 0
    while k < MAX_STEPS // 20:
        s = s - LEAK * np.sin(s)
        k += 1
    return np.sum(s * s)
