"""Assignments that convert: lists of values made arrays, casts, np.r_ / np.c_, .dot."""

import math

import numpy as np

from corpus_assignments import FLOAT32, assignment


@assignment(lambda rng: (np.float64(rng.normal()),))
def unit_circle_point_from_list(angle):
    p = np.array([np.cos(angle), np.sin(angle)])
    target = np.array([0.3, 0.8])
    return np.sum((p - target) ** 2)


@assignment(lambda rng: (rng.normal(size=3),), autograd=False)
def rotation_matrix_from_nested_lists(params):
    c, s = np.cos(params[0]), np.sin(params[0])
    rotation = np.array([[c, -s], [s, c]])
    v = np.asarray([params[1], params[2]])
    return np.sum((rotation @ v) ** 2) + np.sum(rotation)


@assignment(lambda rng: (rng.normal(size=4),), autograd=False)
def asarray_at_the_top(x):
    x = np.asarray(x, dtype=float)
    return np.sum(np.log1p(x**2))


@assignment(lambda rng: (rng.normal(size=2),))
def rosenbrock_list_of_terms(x):
    terms = [100.0 * (x[1] - x[0] ** 2) ** 2, (1 - x[0]) ** 2]
    return np.sum(np.array(terms))


@assignment(lambda rng: (rng.normal(size=3), rng.normal(size=2)), wrt=(0, 1))
def r_concatenates_parameters(a, b):
    theta = np.r_[a, b, 1.0]
    return np.sum(theta**2 * np.arange(1.0, 7.0))


@assignment(lambda rng: (rng.normal(size=(5, 2)), rng.normal(size=3)), wrt=(1,))
def c_adds_bias_column(X, w):
    design = np.c_[np.ones(X.shape[0]), X]
    return np.mean((design @ w - 1.0) ** 2)


@assignment(lambda rng: (rng.normal(size=4), rng.normal(size=4)), wrt=(0, 1))
def c_stacks_traced_columns(u, v):
    pairs = np.c_[u, v]
    return np.sum(pairs @ np.array([1.0, -2.0]) ** 2) + np.sum(pairs**2)


@assignment(lambda rng: (rng.normal(size=3),), autograd=False)
def float64_cast_of_a_scalar(x):
    scale = np.float64(x[0])
    return np.sum(scale * x) + np.float64(2.0) * x[1]


@assignment(lambda rng: (rng.normal(size=5),))
def int64_cast_as_a_count(x):
    n = np.int64(x.shape[0])
    return np.sum(x**2) / n


@assignment(lambda rng: (np.abs(rng.normal(size=4)) + 0.5,))
def float32_then_back(x):
    y = np.float64(np.float32(2.0)) * x
    return np.sum(np.sqrt(y))


@assignment(lambda rng: (rng.normal(size=(6, 3)), rng.normal(size=3)), wrt=(1,))
def least_squares_with_dot_method(X, w):
    residual = X.dot(w) - 1.0
    return residual.dot(residual) / X.shape[0]


@assignment(lambda rng: (rng.normal(size=(6, 3)), rng.normal(size=3)), wrt=(1,), autograd=False)
def dot_method_of_own_design_matrix(X, w):
    design = np.ones((6, 3))
    design[:, 1:] = X[:, 1:]
    return np.sum(np.tanh(design.dot(w)))


@assignment(lambda rng: (rng.normal(size=2),), autograd=False)
def math_functions_on_scalars(x):
    a = math.exp(x[0]) + math.sin(x[1]) * math.sqrt(4.0)
    return a * math.log(1.0 + x[0] ** 2)


@assignment(lambda rng: (rng.normal(size=3),))
def list_comprehension_into_array(x):
    values = np.array([x[i] * (i + 1) for i in range(3)])
    return np.sum(np.exp(values))


@assignment(lambda rng: (rng.normal(size=2), rng.normal(size=2)), wrt=(0, 1))
def tuple_of_points_into_array(p, q):
    segment = np.array((p, q))
    return np.sum(np.diff(segment, axis=0) ** 2)


@assignment(lambda rng: (rng.normal(size=3),))
def mixed_constants_and_values(x):
    v = np.array([1.0, x[0], 2.0 * x[1], 0.0, x[2] ** 2])
    return np.sum(v * np.arange(5.0)) + np.prod(v[:3])


@assignment(lambda rng: (rng.normal(size=(2, 2)),), autograd=False)
def copy_then_write(a):
    b = np.array(a)
    b[0, 0] = 0.0
    return np.sum(b**2) + np.sum(a)


@assignment(lambda rng: (rng.normal(size=4),), autograd=False)
def astype_float_of_values(x):
    y = np.asarray(x).astype(np.float64)
    return np.sum(y**3)


@assignment(lambda rng: (rng.normal(size=3),), tracing=FLOAT32, autograd=False)
def float32_cast_of_a_value(x):
    return np.sum(x**2) * np.float32(x[0])
