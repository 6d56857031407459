"""Flow corpus: calls - nested helpers, closures, module-level helpers, differentiable functions."""

from __future__ import annotations

import numpy as np
from corpus_flow import PROGRAMS, Program, program, u

from autodiff_tutor.api import differentiable

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
