"""Structured parameters (pytrees) and local structures: lists, tuples, dicts, nested."""

import numpy as np

from corpus_python.common import Program


def mlp_pairs(params, X):
    h = X
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def mlp_dict(params, X):
    hidden = np.tanh(X @ params["W1"] + params["b1"])
    logits = hidden @ params["W2"] + params["b2"]
    return np.mean(logits**2)


def autoencoder_nested(params, X):
    code = np.tanh(X @ params["enc"]["W"])
    recon = code @ params["dec"]["W"] + params["dec"]["b"]
    return np.sum((recon - X) ** 2)


def l2_over_list(ws):
    total = 0.0
    for w in ws:
        total = total + np.sum(w**2)
    return total


def local_cache_dict(x):
    cache = {"z": x * 2.0, "a": np.tanh(x)}
    cache["out"] = cache["a"] * cache["z"]
    return np.sum(cache["out"])


def indexed_layers(params, X):
    h = X
    for i in range(len(params)):
        W, b = params[i]
        h = np.tanh(h @ W + b)
    return np.sum(h) + np.sum(params[0][0])


def items_penalty(params):
    total = 0.0
    for _name, value in params.items():
        total = total + np.sum(value**2)
    return total


def enumerate_depth_scaled(params, X):
    h = X
    for i, (W, b) in enumerate(params):
        h = np.sin(h @ W + b) * (i + 1)
    return np.sum(h)


def tuple_of_dicts(params, x):
    first, second = params
    y = np.tanh(first["w"] * x) + second["w"] * x**2
    return np.sum(y)


def values_sum(params):
    return sum(np.sum(np.exp(v)) for v in params.values())


def sorted_keys_penalty(params):
    total = 0.0
    for key in sorted(params):
        total = total * 0.5 + np.sum(np.sin(params[key]))
    return total


def transposed_pairs(params, X):
    Ws, bs = zip(*params)  # noqa: B905
    h = X
    for W in Ws:
        h = np.tanh(h @ W)
    return np.sum(h) + sum(np.sum(b**2) for b in bs)


def _layers(r, sizes=(3, 4, 2)):
    return [
        (r.normal(size=(m, n)) / np.sqrt(m), r.normal(size=n))
        for m, n in zip(sizes[:-1], sizes[1:], strict=True)
    ]


def _square_layers(r):
    return [(r.normal(size=(3, 3)) / 2, r.normal(size=3)) for _ in range(2)]


PROGRAMS = [
    Program(mlp_pairs, lambda r: (_layers(r), r.normal(size=(5, 3)))),
    Program(
        mlp_dict,
        lambda r: (
            {
                "W1": r.normal(size=(3, 4)),
                "b1": r.normal(size=4),
                "W2": r.normal(size=(4, 2)),
                "b2": r.normal(size=2),
            },
            r.normal(size=(5, 3)),
        ),
        loop_free=True,
    ),
    Program(
        autoencoder_nested,
        lambda r: (
            {
                "enc": {"W": r.normal(size=(3, 2))},
                "dec": {"W": r.normal(size=(2, 3)), "b": r.normal(size=3)},
            },
            r.normal(size=(4, 3)),
        ),
        loop_free=True,
    ),
    Program(l2_over_list, lambda r: ([r.normal(size=2), r.normal(size=(2, 2)), r.normal(size=3)],)),
    Program(local_cache_dict, lambda r: (r.normal(size=3),), loop_free=True),
    Program(indexed_layers, lambda r: (_square_layers(r), r.normal(size=(2, 3)))),
    Program(items_penalty, lambda r: ({"W": r.normal(size=(2, 2)), "b": r.normal(size=2)},)),
    Program(enumerate_depth_scaled, lambda r: (_square_layers(r), r.normal(size=(2, 3)))),
    Program(
        tuple_of_dicts,
        lambda r: (({"w": r.normal(size=3)}, {"w": r.normal(size=3)}), r.normal(size=3)),
        loop_free=True,
    ),
    Program(sorted_keys_penalty, lambda r: ({"z": r.normal(size=2), "a": r.normal(size=3)},)),
    Program(transposed_pairs, lambda r: (_square_layers(r), r.normal(size=(2, 3)))),
    Program(values_sum, lambda r: ({"a": r.normal(size=2), "b": r.normal(size=(2, 2))},)),
]
