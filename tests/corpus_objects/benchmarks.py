"""Optimization benchmark classes as benchmark suites write them: a base class holding
the dimension and bounds, each problem a subclass with ``fun(self, x, *args)`` (the
extra arguments an optimizer may pass through), counting evaluations in ``nfev``."""

import numpy as np

from corpus_objects import program


class Benchmark:
    def __init__(self, dimensions=2):
        self.N = dimensions
        self.nfev = 0
        self._bounds = [(-5.0, 5.0)] * dimensions

    def fun(self, x, *args):
        raise NotImplementedError


class Rosenbrock(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)


class Rastrigin(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return 10.0 * self.N + np.sum(x**2.0 - 10.0 * np.cos(2.0 * np.pi * x))


class Ackley(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        u = np.sum(x**2)
        v = np.sum(np.cos(2 * np.pi * x))
        return -20.0 * np.exp(-0.2 * np.sqrt(u / self.N)) - np.exp(v / self.N) + 20.0 + np.e


class Beale(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return (
            (1.5 - x[0] + x[0] * x[1]) ** 2
            + (2.25 - x[0] + x[0] * x[1] ** 2) ** 2
            + (2.625 - x[0] + x[0] * x[1] ** 3) ** 2
        )


class StyblinskiTang(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return np.sum(x**4 - 16 * x**2 + 5 * x) / 2.0


class ShiftedSphere(Benchmark):
    """A problem whose data the optimizer passes as ``*args``."""

    def fun(self, x, *args):
        self.nfev += 1
        shift, scale = args
        return scale * np.sum((x - shift) ** 2)


class WeightedLeastSquares(Benchmark):
    def fun(self, x, *args):
        A, b = args[0], args[1]
        weights = args[2] if len(args) > 2 else np.ones(b.shape[0])
        r = A @ x - b
        return np.sum(weights * r**2)


class Trid(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        return np.sum((x - 1) ** 2) - np.sum(x[1:] * x[:-1])


class Griewank(Benchmark):
    def fun(self, x, *args):
        self.nfev += 1
        i = np.arange(1.0, x.size + 1.0)
        return np.sum(x**2 / 4000.0) - np.prod(np.cos(x / np.sqrt(i))) + 1.0


@program("varargs", wrt=("x",))
def rosenbrock_fun(rng):
    return Rosenbrock(4).fun, (rng.uniform(-1, 1, 4),)


@program("varargs", wrt=("x",))
def rastrigin_fun(rng):
    return Rastrigin(3).fun, (rng.uniform(-2, 2, 3),)


@program("varargs", wrt=("x",))
def ackley_fun(rng):
    return Ackley(2).fun, (rng.uniform(-2, 2, 2),)


@program("varargs", wrt=("x",))
def beale_fun(rng):
    return Beale().fun, (rng.uniform(-1, 1, 2),)


@program("varargs", wrt=("x",), differentiable=True)
def styblinski_tang_differentiable(rng):
    return StyblinskiTang(3).fun, (rng.uniform(-3, 3, 3),)


@program("varargs", wrt=("x",))
def shifted_sphere_with_args(rng):
    return ShiftedSphere(3).fun, (rng.normal(size=3), rng.normal(size=3), 0.5)


@program("varargs", wrt=("x",))
def weighted_least_squares_two_args(rng):
    A = rng.normal(size=(5, 3))
    return WeightedLeastSquares().fun, (rng.normal(size=3), A, rng.normal(size=5))


@program("varargs", wrt=("x",))
def weighted_least_squares_three_args(rng):
    A = rng.normal(size=(4, 2))
    return WeightedLeastSquares().fun, (rng.normal(size=2), A, rng.normal(size=4), rng.random(4))


@program("varargs", wrt=("x",))
def trid_fun(rng):
    return Trid(5).fun, (rng.normal(size=5),)


@program("varargs", wrt=("x",))
def griewank_fun(rng):
    return Griewank(3).fun, (rng.uniform(-3, 3, 3),)
