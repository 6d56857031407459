"""A textbook ``Network`` class (``sizes``, lists of ``biases`` and ``weights``,
``feedforward`` and ``cost``), and code that calls methods of its own object or of
another object inside the differentiated code: ``self.fn(z)``, ``net.feedforward(x)``
in a free function, ``model.loss(w)``, a parameter parser's ``get``, an object built
inside the loss."""

import numpy as np

from corpus_objects import program


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


class QuadraticCost:
    @staticmethod
    def fn(a, y):
        return 0.5 * np.sum((a - y) ** 2)


class CrossEntropyCost:
    @staticmethod
    def fn(a, y):
        return np.sum(-y * np.log(a) - (1 - y) * np.log(1 - a))


class Network:
    def __init__(self, sizes, rng, cost=QuadraticCost):
        self.num_layers = len(sizes)
        self.sizes = sizes
        self.biases = [rng.normal(size=(y, 1)) for y in sizes[1:]]
        self.weights = [rng.normal(size=(y, x)) / np.sqrt(x) for x, y in zip(sizes[:-1], sizes[1:])]
        self.cost = cost

    def feedforward(self, a):
        for b, w in zip(self.biases, self.weights):
            a = sigmoid(np.dot(w, a) + b)
        return a

    def total_cost(self, x, y):
        return self.cost.fn(self.feedforward(x), y)


@program("methods_inside", wrt=("x",))
def network_total_cost(rng):
    net = Network([3, 4, 2], rng)
    return net.total_cost, (rng.normal(size=(3, 1)), rng.random((2, 1)))


@program("methods_inside", wrt=("self.weights",))
def network_cost_wrt_weights(rng):
    net = Network([2, 3, 2], rng, cost=CrossEntropyCost)
    return net.total_cost, (rng.normal(size=(2, 1)), rng.uniform(0.1, 0.9, (2, 1)))


def evaluate_net(x, y, net):
    a = net.feedforward(x)
    return np.mean((a - y) ** 2)


@program("methods_inside", wrt=("x",))
def free_function_calls_net_feedforward(rng):
    net = Network([4, 3, 1], rng)
    return evaluate_net, (rng.normal(size=(4, 5)), rng.random((1, 5)), net)


class Neuron:
    def __init__(self, fn):
        self.fn = fn

    def activate(self, w, x):
        return self.fn(np.dot(w, x))


@program("methods_inside", wrt=("w",))
def stored_function_called_as_self_fn(rng):
    neuron = Neuron(np.tanh)

    def response(w, x):
        return np.sum(neuron.activate(w, x) ** 2)

    return response, (rng.normal(size=3), rng.normal(size=(3, 4)))


class Problem:
    def __init__(self, A, b):
        self.A = A
        self.b = b

    def loss(self, w):
        return np.sum((self.A @ w - self.b) ** 2)

    def regularized(self, w, lam):
        return self.loss(w) + lam * np.sum(w**2)


@program("methods_inside", wrt=("w",))
def method_calls_own_method(rng):
    problem = Problem(rng.normal(size=(5, 3)), rng.normal(size=5))
    return problem.regularized, (rng.normal(size=3), 0.1)


def total_objective(w, problems):
    return sum(p.loss(w) for p in problems)


@program("methods_inside", wrt=("w",))
def function_calls_model_loss(rng):
    problems = [Problem(rng.normal(size=(4, 2)), rng.normal(size=4)) for _ in range(3)]
    return total_objective, (rng.normal(size=2), problems)


class WeightsParser:
    """Packs named blocks into one flat vector (as autodiff examples do)."""

    def __init__(self):
        self.idxs_and_shapes = {}
        self.N = 0

    def add_shape(self, name, shape):
        start = self.N
        self.N += int(np.prod(shape))
        self.idxs_and_shapes[name] = (slice(start, self.N), shape)

    def get(self, vect, name):
        idxs, shape = self.idxs_and_shapes[name]
        return np.reshape(vect[idxs], shape)


def _parser():
    parser = WeightsParser()
    parser.add_shape("W", (3, 2))
    parser.add_shape("b", (2,))
    return parser


def parsed_loss(weights, X, y, parser):
    W = parser.get(weights, "W")
    b = parser.get(weights, "b")
    logits = np.tanh(X @ W + b)
    return np.sum((logits - y) ** 2)


@program("methods_inside", wrt=("weights",))
def weights_parser_get(rng):
    parser = _parser()
    return parsed_loss, (
        rng.normal(size=parser.N),
        rng.normal(size=(4, 3)),
        rng.normal(size=(4, 2)),
        parser,
    )


class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, h):
        return h @ self.W + self.b


def two_layer_loss(W1, W2, X):
    layer1 = Affine(W1, 0.1)  # objects built inside the loss
    layer2 = Affine(W2, 0.0)
    h = np.tanh(layer1(X))
    return np.sum(layer2(h) ** 2)


@program("methods_inside", wrt=("W1", "W2"))
def objects_built_inside_loss(rng):
    return two_layer_loss, (
        rng.normal(size=(3, 4)),
        rng.normal(size=(4, 2)),
        rng.normal(size=(5, 3)),
    )


def layer_stack_loss(x, layers):
    h = x
    for layer in layers:
        h = np.tanh(layer(h))
    return np.sum(h**2)


@program("methods_inside", wrt=("x",))
def layer_objects_called_as_layer_h(rng):
    layers = [Affine(rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in range(3)]
    return layer_stack_loss, (rng.normal(size=(2, 3)), layers)
