"""List, generator and dict comprehensions, lowered to loops by the compiler."""

import numpy as np

from corpus_python.common import Program


def weight_decay(ws):
    return 0.5 * sum([np.sum(w**2) for w in ws])


def sum_of_squares_generator(x):
    return sum(x[i] ** 2 for i in range(len(x)))


def stacked_features(x):
    features = np.stack([np.tanh(x * k) for k in range(1, 4)])
    return np.sum(features**2)


def nested_generator_trace(A, B):
    n = A.shape[0]
    return sum(sum(A[i, j] * B[j, i] for j in range(n)) for i in range(n))


def positive_part_energy(x):
    return sum(v * v for v in x if v > 0)


def squared_norms_by_name(params):
    norms = {name: np.sum(value**2) for name, value in params.items()}
    return norms["W"] + 0.1 * norms["b"]


def smooth_max_window(x):
    return max(np.sum(x[i : i + 2] ** 2) for i in range(3))


def array_of_terms(x):
    terms = np.array([x[0] * x[1], x[1] ** 2, np.sin(x[2])])
    return np.sum(terms * np.arange(1.0, 4.0))


def dot_by_zip(x, y):
    return sum(a * b for a, b in zip(x, y))  # noqa: B905


def list_then_len(x):
    parts = [np.exp(0.1 * k * x) for k in range(3)]
    return sum(parts[i] @ parts[i] for i in range(len(parts))) / len(parts)


PROGRAMS = [
    Program(weight_decay, lambda r: ([r.normal(size=(2, 2)), r.normal(size=3)],)),
    Program(sum_of_squares_generator, lambda r: (r.normal(size=4),)),
    Program(stacked_features, lambda r: (r.normal(size=3),)),
    Program(
        nested_generator_trace,
        lambda r: (r.normal(size=(3, 3)), r.normal(size=(3, 3))),
        wrt=(0, 1),
    ),
    Program(positive_part_energy, lambda r: (r.normal(size=5),)),
    Program(
        squared_norms_by_name,
        lambda r: ({"W": r.normal(size=(2, 3)), "b": r.normal(size=3)},),
        autograd=True,
    ),
    Program(smooth_max_window, lambda r: (r.normal(size=4),)),
    Program(
        array_of_terms,
        lambda r: (r.normal(size=3),),
        loop_free=True,
    ),
    Program(dot_by_zip, lambda r: (r.normal(size=4), r.normal(size=4)), wrt=(0, 1)),
    Program(list_then_len, lambda r: (r.normal(size=3),)),
]
