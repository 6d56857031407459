"""Static structure: lists and dicts of parameters whose lengths and keys are known
when the function is called (``params[:-1]``, ``params[1:-1]``, ``params[i]`` for ``i``
in ``range(len(params) - 1)``, ``params[f"W{i}"]`` over a static loop), a structure
handed whole to a helper, a helper returning a list of arrays."""

import numpy as np

from corpus_objects import program


def _layers(rng, sizes):
    return [0.5 * rng.normal(size=(m, n)) for m, n in zip(sizes[:-1], sizes[1:])]


def hidden_then_output(weights, X, y):
    h = X
    for W in weights[:-1]:
        h = np.tanh(h @ W)
    return np.sum((h @ weights[-1] - y) ** 2)


@program("static_structure", wrt=("weights",))
def slice_all_but_last(rng):
    return hidden_then_output, (
        _layers(rng, (3, 4, 4, 2)),
        rng.normal(size=(5, 3)),
        rng.normal(size=(5, 2)),
    )


def middle_layers(weights, X):
    h = np.tanh(X @ weights[0])
    for W in weights[1:-1]:
        h = h + np.tanh(h @ W)  # residual blocks
    return np.sum((h @ weights[-1]) ** 2)


@program("static_structure", wrt=("weights",))
def slice_middle(rng):
    return middle_layers, (_layers(rng, (2, 3, 3, 3, 1)), rng.normal(size=(4, 2)))


def index_loop(params, X):
    a = X
    for i in range(len(params) - 1):
        a = np.tanh(a @ params[i])
    return np.mean(a @ params[len(params) - 1])


@program("static_structure", wrt=("params",))
def index_range_len_minus_one(rng):
    return index_loop, (_layers(rng, (3, 3, 2, 1)), rng.normal(size=(6, 3)))


def dict_net(params, X, y, num_layers):
    h = X
    for i in range(1, num_layers):
        h = np.tanh(h @ params[f"W{i}"] + params[f"b{i}"])
    scores = h @ params[f"W{num_layers}"] + params[f"b{num_layers}"]
    return np.mean((scores - y) ** 2)


def _dict_params(rng, sizes):
    params = {}
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        params[f"W{i}"] = 0.5 * rng.normal(size=(m, n))
        params[f"b{i}"] = np.zeros(n)
    return params


@program("static_structure", wrt=("params",))
def fstring_keys_static_loop(rng):
    return dict_net, (
        _dict_params(rng, (3, 4, 2)),
        rng.normal(size=(5, 3)),
        rng.normal(size=(5, 2)),
        2,
    )


def flatten_params(params):
    return np.concatenate([p.ravel() for p in params])


def l2_of_all(params, X):
    flat = flatten_params(params)
    return np.sum(np.tanh(X @ params[0]) ** 2) + 0.01 * np.sum(flat**2)


@program("static_structure", wrt=("params",))
def structure_handed_to_flattening_helper(rng):
    return l2_of_all, ([rng.normal(size=(3, 2)), rng.normal(size=2)], rng.normal(size=(4, 3)))


def split_params(params):
    return [p[0] for p in params], [p[1] for p in params]


def split_loss(params, x):
    Ws, bs = split_params(params)
    h = x
    for W, b in zip(Ws, bs):
        h = np.tanh(W @ h + b)
    return np.sum(h**2)


@program("static_structure", wrt=("params",))
def helper_returning_lists_of_arrays(rng):
    params = [(rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in range(2)]
    return split_loss, (params, rng.normal(size=3))


def unzip_loss(params, x):
    Ws, bs = zip(*params)
    h = x
    for k in range(len(Ws)):
        h = np.sin(Ws[k] @ h) + bs[k]
    return np.sum(h**2)


@program("static_structure", wrt=("params",))
def zip_star_of_structure(rng):
    params = [(rng.normal(size=(2, 2)), rng.normal(size=2)) for _ in range(3)]
    return unzip_loss, (params, rng.normal(size=2))


def layer_outputs(params, x):
    outputs = [x]
    for W in params:
        outputs.append(np.tanh(outputs[-1] @ W))
    return outputs


def activation_penalty(params, x):
    acts = layer_outputs(params, x)
    return sum(np.sum(a**2) for a in acts[1:])


@program("static_structure", wrt=("params",))
def helper_returns_list_of_activations(rng):
    return activation_penalty, (_layers(rng, (2, 3, 2)), rng.normal(size=(3, 2)))


def last_bias_free(params, X):
    *hidden, last = params
    h = X
    for W in hidden:
        h = np.tanh(h @ W)
    return np.sum(h @ last)


@program("static_structure", wrt=("params",))
def starred_unpacking_of_list(rng):
    return last_bias_free, (_layers(rng, (2, 2, 2, 1)), rng.normal(size=(3, 2)))
