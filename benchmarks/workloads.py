"""The benchmark workloads: plain numpy functions, their inputs, and their sizes.

Each workload is one scalar-valued numpy function (the code a user would write and
give to ``@differentiable``), a hand-written value-and-gradient for it (in
:mod:`benchmarks.handwritten`), and a way to make inputs of a given size. Every
workload comes in the sizes ``tiny`` (the smoke test), ``small`` (per-call overhead
dominates) and ``large`` (array work dominates).

The functions call numpy through the module-level name ``np`` only, so that
:func:`with_numpy` can run the very same code on another numpy-like module
(``autograd.numpy``, ``jax.numpy``).

>>> w = WORKLOADS["rosenbrock"]
>>> args = w.make_args(np.random.default_rng(0), "tiny")
>>> float(w.fn(*args)) > 0
True
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff_tutor import SReLUFunction, srelu_reference

SIZES = ("tiny", "small", "large", "issue-small", "issue-large")
#: The sizes of the performance issue (18): only some workloads have them.
ISSUE_SIZES = ("issue-small", "issue-large")

# ----------------------------------------------------------------------------------------
# The functions, as a user would write them.


def rosenbrock(x):
    a = x[1:] - x[:-1] ** 2
    b = 1.0 - x[:-1]
    return np.sum(100.0 * a * a + b * b)


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return -np.sum(Y * (z - lse)) / X.shape[0]


def scalar_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s * np.cos(x[i]) + x[i] * x[i]
    return s


def horner(coefficients, x):
    value = 0.0
    for c in coefficients:
        value = value * x + c
    return np.sum(value)


def newton_sqrt(a):
    y = a
    while np.max(np.abs(y * y - a)) > 1e-10:
        y = 0.5 * (y + a / y)
    return np.sum(y)


def rnn(Wh, Wx, b, xs, h0):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx + b)
        total = total + np.sum(h * h)
    return total


SRELU = SReLUFunction("BC")  # the custom op, with its hand-written backward


def srelu_net(W1, b1, tl, al, tr, ar, W2, X, Y):
    z = X @ W1 + b1
    a = SRELU(z, tl, al, tr, ar)
    r = a @ W2 - Y
    return np.sum(r * r) / X.shape[0]


def srelu_net_reference(W1, b1, tl, al, tr, ar, W2, X, Y):
    # the same network with SReLU written with masks, for libraries without the op
    z = X @ W1 + b1
    a = srelu_reference(z, tl, al, tr, ar)
    r = a @ W2 - Y
    return np.sum(r * r) / X.shape[0]


# ----------------------------------------------------------------------------------------
# Inputs


def _rosenbrock_args(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (rng.uniform(-1.5, 1.5, n),)


def _mlp_args(rng: np.random.Generator, batch: int, d: int, h: int, k: int) -> tuple[Any, ...]:
    W1 = rng.normal(0, 1 / np.sqrt(d), (d, h))
    W2 = rng.normal(0, 1 / np.sqrt(h), (h, k))
    Y = np.eye(k)[rng.integers(0, k, batch)]
    return (W1, rng.normal(0, 0.1, h), W2, rng.normal(0, 0.1, k), rng.normal(size=(batch, d)), Y)


def _scalar_loop_args(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (rng.uniform(-1.0, 1.0, n),)


def _horner_args(rng: np.random.Generator, n: int, deg: int) -> tuple[Any, ...]:
    return (rng.uniform(-1.0, 1.0, deg), rng.uniform(-1.0, 1.0, n))


def _newton_args(rng: np.random.Generator, n: int) -> tuple[Any, ...]:
    return (rng.uniform(0.5, 4.0, n),)


def _rnn_args(rng: np.random.Generator, T: int, batch: int, d: int, h: int) -> tuple[Any, ...]:
    Wh = rng.normal(0, 0.5 / np.sqrt(h), (h, h))
    Wx = rng.normal(0, 1 / np.sqrt(d), (d, h))
    return (Wh, Wx, rng.normal(0, 0.1, h), rng.normal(size=(T, batch, d)), np.zeros((batch, h)))


def _srelu_args(rng: np.random.Generator, batch: int, d: int, h: int, k: int) -> tuple[Any, ...]:
    W1 = rng.normal(0, 1 / np.sqrt(d), (d, h))
    channel = (1, h)
    tl = rng.uniform(-1.0, -0.2, channel)
    tr = rng.uniform(0.2, 1.0, channel)
    al, ar = rng.uniform(0.0, 0.3, channel), rng.uniform(0.3, 1.0, channel)
    W2 = rng.normal(0, 1 / np.sqrt(h), (h, k))
    X, Y = rng.normal(size=(batch, d)), rng.normal(size=(batch, k))
    return (W1, rng.normal(0, 0.1, h), tl, al, tr, ar, W2, X, Y)


# ----------------------------------------------------------------------------------------
# The registry


@dataclass
class Workload:
    """One benchmark workload.

    ``fn`` is the function users write (compiled by ``autodiff_tutor``, traced by its
    tracing mode, run as the plain forward); ``library_fn`` is the same math for the
    other libraries (it differs only where ``fn`` calls an ``autodiff_tutor`` custom
    op). ``sizes`` maps a size name to the keyword arguments of ``make``; ``wrt`` are
    the positions of the arguments to differentiate; ``jax`` says how jax runs it:
    ``"jit"`` (``jax.jit``), ``"eager"`` (a data-dependent ``while`` cannot be traced
    by ``jit``), or ``"skip"`` with the reason after a colon.
    """

    name: str
    fn: Callable[..., Any]
    make: Callable[..., tuple[Any, ...]]
    sizes: dict[str, dict[str, int]]
    wrt: tuple[int, ...]
    description: str
    library_fn: Callable[..., Any] | None = None
    jax: str = "jit"
    notes: list[str] = field(default_factory=list)

    def make_args(self, rng: np.random.Generator, size: str) -> tuple[Any, ...]:
        """Fresh inputs of the size named ``size``."""
        return self.make(rng, **self.sizes[size])

    def size_label(self, size: str) -> str:
        """``n=1000``-style label of a size."""
        return " ".join(f"{k}={v}" for k, v in self.sizes[size].items())

    @property
    def shared_fn(self) -> Callable[..., Any]:
        """The function other AD libraries run (``library_fn`` or ``fn``)."""
        return self.library_fn or self.fn


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload(
            "rosenbrock",
            rosenbrock,
            _rosenbrock_args,
            {
                "tiny": {"n": 6},
                "small": {"n": 100},
                "large": {"n": 1_000_000},
                "issue-small": {"n": 10},
                "issue-large": {"n": 1_000_000},
            },
            (0,),
            "Rosenbrock chain: vectorized sum over a long vector (slices, powers)",
        ),
        Workload(
            "mlp",
            mlp,
            _mlp_args,
            {
                "tiny": {"batch": 4, "d": 3, "h": 5, "k": 3},
                "small": {"batch": 32, "d": 10, "h": 16, "k": 4},
                "large": {"batch": 512, "d": 256, "h": 512, "k": 10},
                "issue-small": {"batch": 32, "d": 64, "h": 128, "k": 10},
                "issue-large": {"batch": 2048, "d": 784, "h": 512, "k": 10},
            },
            (0, 1, 2, 3),
            "one hidden tanh layer, softmax cross-entropy (stable log-sum-exp)",
        ),
        Workload(
            "scalar_loop",
            scalar_loop,
            _scalar_loop_args,
            {"tiny": {"n": 5}, "small": {"n": 30}, "large": {"n": 1000}},
            (0,),
            "Python loop over the elements of x: s = s * cos(x[i]) + x[i] ** 2",
            jax="skip: eager jax spends about 0.15 s per element here (about 2 minutes per "
            "call at n=1000) and jax.jit would unroll the Python loop into n steps",
        ),
        Workload(
            "horner",
            horner,
            _horner_args,
            {
                "tiny": {"n": 3, "deg": 4},
                "small": {"n": 4, "deg": 50},
                "large": {"n": 100_000, "deg": 20},
                "issue-small": {"n": 4, "deg": 50},
                "issue-large": {"n": 100_000, "deg": 20},
            },
            (0, 1),
            "Python loop over the coefficients: value = value * x + c (Horner's scheme)",
        ),
        Workload(
            "newton_while",
            newton_sqrt,
            _newton_args,
            {"tiny": {"n": 3}, "small": {"n": 10}, "large": {"n": 100_000}},
            (0,),
            "data-dependent while: Newton iterations for sqrt(a) until converged",
            jax="eager",
        ),
        Workload(
            "rnn",
            rnn,
            _rnn_args,
            {
                "tiny": {"T": 3, "batch": 2, "d": 3, "h": 4},
                "small": {"T": 10, "batch": 4, "d": 3, "h": 8},
                "large": {"T": 50, "batch": 64, "d": 64, "h": 256},
            },
            (0, 1, 2),
            "tanh RNN over T steps, loss summed over every step",
        ),
        Workload(
            "srelu_net",
            srelu_net,
            _srelu_args,
            {
                "tiny": {"batch": 4, "d": 3, "h": 5, "k": 2},
                "small": {"batch": 16, "d": 8, "h": 16, "k": 4},
                "large": {"batch": 1024, "d": 128, "h": 512, "k": 10},
            },
            (0, 1, 2, 3, 4, 5, 6),
            "linear -> SReLU custom op (hand-written backward) -> linear, squared error",
            library_fn=srelu_net_reference,
        ),
    ]
}


def with_numpy(fn: Callable[..., Any], module: Any) -> Callable[..., Any]:
    """A copy of ``fn`` whose global name ``np`` is ``module`` (autograd.numpy, jax.numpy).

    >>> class Fake:
    ...     sum = staticmethod(lambda v: "summed")
    >>> with_numpy(rosenbrock, Fake)(np.ones(3))
    'summed'
    """
    scope = dict(fn.__globals__)
    scope["np"] = module
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy
