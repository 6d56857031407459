"""Rules of linear algebra: matmul (``@``), dot, and the 2-norm.

For 2-D operands the matmul gradients are the textbook ``g @ y.T`` and ``x.T @ g``;
``matmul_dx``/``matmul_dy`` also handle vectors and stacks of matrices.

>>> import numpy as np
>>> matmul(np.ones((2, 2)), np.eye(2), 2 * np.eye(2))[1].tolist()
[[1.0, 1.0], [1.0, 1.0]]
"""

from autodiff_tutor.errors import NoDerivativeRuleError
from autodiff_tutor.rules.registry import defvjp
from autodiff_tutor.runtime.helpers import dot_dx, dot_dy, matmul_dx, matmul_dy, unreduce


@defvjp("matmul", math="x @ y")
def matmul(g, x, y):
    return matmul_dx(g, x, y), matmul_dy(g, x, y)


@defvjp("dot", math="x . y")
def dot(g, x, y):
    return dot_dx(g, x, y), dot_dy(g, x, y)


def two_norm_only(ord=None, axis=None, keepdims=False):
    """The norm rule covers the 2-norm of vectors and the Frobenius norm of matrices."""
    # ord=2 is the vector 2-norm only along one axis (on a whole matrix it is the spectral norm)
    if ord not in (None, "fro") and not (ord == 2 and isinstance(axis, int)):
        raise NoDerivativeRuleError(
            f"no derivative rule for np.linalg.norm with ord={ord!r}",
            hint="the rule covers the 2-norm (ord=None, or 'fro' for matrices); "
            "write other norms with np.abs/np.max/np.sum",
        )


@defvjp(
    "norm",
    math="sqrt(sum_i x_i^2)",
    convention="at x = 0 the gradient is 0 (a valid subgradient)",
    check=two_norm_only,
)
def norm(g, out, xp, x, ord=None, axis=None, keepdims=False):
    return x * unreduce(g / xp.where(out == 0, 1, out), x, axis=axis, keepdims=keepdims)
