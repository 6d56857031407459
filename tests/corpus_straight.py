"""A corpus of straight-line numpy functions, each with a sampler of inputs.

Used by the compiler tests (against finite differences and autograd) and by the
tracing tests (both modes must agree). Every entry: (function, sampler) where the
sampler takes a numpy Generator and returns the argument tuple; the functions
return a scalar.
"""

import numpy as np

CORPUS = []


def case(*shapes, low=-2.0, high=2.0, positive=False):
    def decorate(fn):
        def sample(rng):
            args = []
            for shape in shapes:
                values = rng.uniform(low, high, size=shape)
                if positive:
                    values = np.abs(values) + 0.5
                args.append(values)
            return tuple(args)

        CORPUS.append((fn, sample))
        return fn

    return decorate


@case((2,))
def rosenbrock(x):
    return 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2


@case((3, 2), (2,), (4, 3))
def tanh_layer(W, b, X):
    h = np.tanh(X @ W + b)
    return np.sum(h * h)


@case((5,))
def polynomial(x):
    return np.sum(3 * x**3 - 2 * x**2 + x - 7)


@case((4,), (4,))
def elementwise_product(x, y):
    return np.sum(x * y / (1 + y * y))


@case((3, 4), positive=True)
def logs_and_roots(x):
    return np.sum(np.log(x) + np.sqrt(x) + np.log1p(x))


@case((3,))
def exponentials(x):
    return np.sum(np.exp(x) - np.expm1(0.5 * x))


@case((6,))
def trig(x):
    return np.sum(np.sin(x) * np.cos(x) + np.tan(0.3 * x))


@case((6,), low=-0.9, high=0.9)
def inverse_trig(x):
    return np.sum(np.arcsin(x) + np.arccos(x) * x + np.arctan(x))


@case((5,))
def hyperbolic(x):
    return np.sum(np.sinh(x) + np.cosh(x) * np.tanh(x))


@case((4,))
def absolute(x):
    return np.sum(np.abs(x) * x)


@case((4,), (4,))
def maximum_minimum(x, y):
    return np.sum(np.maximum(x, y) - 2 * np.minimum(x, 0.5 * y))


@case((5,))
def clipping(x):
    return np.sum(np.clip(x, -1.0, 1.0) * x)


@case((5,), (5,))
def where_select(x, y):
    return np.sum(np.where(x > 0, x * y, y * y))


@case((5,))
def squares_and_powers(x):
    return np.sum(np.square(x) + np.power(x, 4) + x**2.0)


@case((4,), positive=True)
def power_both(x):
    return np.sum(x**x)


@case((3, 4), (4, 2))
def matmul_function(a, b):
    return np.sum(np.matmul(a, b) ** 2)


@case((3,), (3,))
def dot_vectors(u, v):
    return np.dot(u, v) * np.dot(u, u)


@case((3, 4), (4,))
def matrix_vector(A, v):
    return np.sum(np.tanh(A @ v))


@case((4,), (4, 3))
def vector_matrix(v, B):
    return np.sum((v @ B) ** 2)


@case((2, 3, 4), (2, 4, 2))
def batched_matmul(a, b):
    return np.sum(np.sin(a @ b))


@case((3, 4))
def sums_with_axes(x):
    return np.sum(np.sum(x, axis=0) ** 2) + np.sum(x.sum(axis=-1, keepdims=True) * x)


@case((3, 4))
def means(x):
    return np.mean(x**2) + np.sum(x.mean(axis=1) ** 3)


@case((3, 4))
def maxima(x):
    return np.max(x) + np.sum(np.min(x, axis=0)) + np.sum(x.max(axis=1, keepdims=True) * x)


@case((3, 4))
def products(x):
    return np.prod(x) + np.sum(np.prod(x, axis=1))


@case((6,))
def reshaping(x):
    y = x.reshape(2, 3)
    z = np.reshape(y, (3, 2))
    return np.sum(z[0] * z[1] * z[2])


@case((2, 3))
def transposes(x):
    return np.sum(x.T @ x) + np.sum(np.transpose(x) * np.arange(6.0).reshape(3, 2))


@case((2, 3, 4))
def transpose_axes(x):
    return np.sum(np.transpose(x, (2, 0, 1)) * np.arange(24.0).reshape(4, 2, 3))


@case((1, 3, 1))
def squeeze_expand(x):
    y = np.squeeze(x)
    z = np.expand_dims(y, axis=0)
    return np.sum(z * np.array([[1.0, 2.0, 3.0]]))


@case((3,), (2,))
def concatenating(x, y):
    z = np.concatenate([x, y, x], axis=0)
    return np.sum(z * np.arange(8.0))


@case((3,), (3,))
def stacking(x, y):
    s = np.stack([x, y], axis=1)
    return np.sum(s[:, 0] * s[:, 1]) + np.sum(np.stack((x, x * y)) ** 2)


@case((4,))
def euclidean_norm(x):
    return np.linalg.norm(x) + np.linalg.norm(x * 2)


@case((3, 4))
def norm_axis(x):
    return np.sum(np.linalg.norm(x, axis=1))


@case((4, 3))
def indexing(x):
    return np.sum(x[0]) + np.sum(x[1:] ** 2) + np.sum(x[:, 2]) * x[2, 1]


@case((3, 4))
def ellipsis_and_newaxis(x):
    col = x[..., None]
    return np.sum(col * col) + np.sum(x[None, :, 1:3])


@case((5,))
def fancy_index_repeats(x):
    picked = x[np.array([0, 0, 3, 4, 4])]
    return np.sum(picked * np.arange(5.0))


@case((4, 3))
def negative_axes(x):
    return np.sum(np.sum(x**2, axis=-1) * np.mean(x, axis=-2).sum())


@case((4, 3), (3,))
def broadcast_bias(x, b):
    return np.sum((x + b) ** 2 - b * x)


@case((4, 1), (1, 3))
def outer_broadcast(a, b):
    return np.sum(np.exp(a * b) / (1 + a + b))


@case((5,), (5,))
def unary_minus(x, y):
    return np.sum(-x * -y + (-x) ** 2)


@case((3,))
def scalar_mix(x):
    return 2.5 * np.sum(x) / 3 - 1.0 + np.sum(1 / (1 + x * x))


@case((6,), (), (), (), ())
def srelu_masks(x, tl, al, tr, ar):
    # the seeds' SReLU as plain numpy with masks (thresholds as scalars here)
    left = (x <= tl) * (tl + al * (x - tl))
    middle = ((tl < x) & (x < tr)) * x
    right = (x >= tr) * (tr + ar * (x - tr))
    return np.sum((left + middle + right) ** 2)


@case((2, 3, 4), (1, 3, 1))
def prelu_masks(x, alpha):
    y = np.maximum(x, 0) + alpha * np.minimum(x, 0)
    return np.sum(y * y)


@case((5, 4), (5, 4))
def softmax_cross_entropy(logits, targets):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(targets * log_probs, axis=1))


@case((4, 6), (6,), (6,))
def layer_norm(x, gamma, beta):
    mu = np.mean(x, axis=-1, keepdims=True)
    centered = x - mu
    var = np.mean(centered**2, axis=-1, keepdims=True)
    y = centered / np.sqrt(var + 1e-5) * gamma + beta
    return np.sum(y * np.arange(6.0))


@case((3, 5), (5,), (5, 2), (2,), (6, 3))
def small_mlp(W1, b1, W2, b2, X):
    hidden = np.tanh(X @ W1 + b1)
    scores = hidden @ W2 + b2
    return np.mean(scores**2)


@case((4,), (4,))
def huber_masks(pred, target):
    r = pred - target
    small = np.abs(r) <= 1.0
    return np.sum(small * 0.5 * r * r + (1 - small) * (np.abs(r) - 0.5))


@case((3,))
def reassignment(x):
    y = x * 2
    y = y + 1
    y = np.sin(y) * y
    x = x * y
    return np.sum(x)


@case((3,), (3,))
def augmented(x, y):
    z = x * y
    z += y
    z *= x
    z -= 2 * y
    z /= 1 + y * y
    return np.sum(z)


@case((4,), (2,))
def unused_input(x, unused):
    return np.sum(x * x)


@case((3, 3))
def astype_roundtrip(x):
    return np.sum(x.astype(np.float64) ** 2)
