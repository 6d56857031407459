"""Flow corpus: break, continue, early return, while loops with data-dependent trip counts."""

from __future__ import annotations

import numpy as np
from corpus_flow import program, u

TOLERANCE = 1e-12
MAX_STEPS = 60


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
