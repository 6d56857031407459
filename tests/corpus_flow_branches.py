"""Flow corpus: data-dependent branches (if/elif/else, a if c else b, and/or/not)."""

from __future__ import annotations

import numpy as np
from corpus_flow import program, u


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
    for a, b in zip(x, y):  # noqa: B905 (plain zip: the shorter wins, as in Python)
        s = s + (a * b if a > b else b - a * a)
    return s
