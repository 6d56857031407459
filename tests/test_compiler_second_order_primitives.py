"""Second derivatives through primitives whose gradients call runtime helpers
(``np.diff``: ``undo_diff``; ``np.pad``: ``unpad``; ``np.hstack`` and its kin:
``unjoin``; ``np.split`` and its kin: ``unsplit``; ``np.diag``: ``embed_diagonal``;
``np.take_along_axis``: ``untake_along_axis``; ``np.linalg.norm`` with an ord other
than Frobenius: ``norm_grad``; ``np.linalg.eigh``: ``eigh_grad``; ``np.linalg.svd``:
``svd_pullback``), and through ``np.linalg.det``, whose gradient reads a scalar by an
index (``(g * out)[..., None, None]``).

Each program's Hessian-vector product, forward over reverse (``jvp(grad f)``) and
reverse over reverse (``vjp(grad f)``), must compile and match central differences of
the compiled gradient and, where autograd has the primitive, autograd's ``H v``.
"""

import autograd
import numpy as np
import pytest
from oracles import with_autograd_numpy

from autodiff_tutor import grad, jvp, vjp
from autodiff_tutor.errors import NoDerivativeRuleError

WEIGHTS = np.array([0.3, -1.2, 0.8, 2.0, -0.5, 1.1])
PICKS = np.array([[2, 0], [1, 1], [0, 2]])


def diff_twice(x):
    return np.sum(np.sin(np.diff(x, n=2)) ** 2) + np.sum(np.diff(x) ** 3)


def diff_along_rows(X):
    return np.sum(np.cos(np.diff(X, axis=0)) * X[1:])


def pad_constant(X):
    padded = np.pad(X, ((1, 0), (2, 1)), "constant")  # autograd needs the mode
    return np.sum(np.tanh(padded) * np.pad(X, ((0, 1), (1, 2)), "constant") ** 2)


def pad_edge(x):
    return np.sum(np.pad(x, (2, 1), mode="edge") ** 3 * WEIGHTS[:5].repeat(2)[: x.size + 3])


def pad_reflect(x):
    return np.sum(np.sin(np.pad(x, (1, 2), mode="reflect")) ** 2)


def hstack_pieces(x):
    return np.sum(np.hstack([x, x * x, np.sin(x)]) ** 2 * WEIGHTS)


def vstack_rows(x):
    return np.sum(np.vstack([x, np.exp(x)]) ** 3)


def column_stack_columns(x):
    return np.sum(np.column_stack([x, x**2]) @ np.array([1.5, -0.5]) ** 2)


def split_halves(x):
    a, b = np.split(x, 2)
    return np.sum(a * b**2) + np.sum(np.sin(a))


def array_split_uneven(x):
    a, b, c = np.array_split(x, 3)
    return np.sum(a**3) + np.sum(b * np.cos(b)) + np.sum(c) ** 2


def diag_of_matrix(X):
    return np.sum(np.diag(X) ** 3) + np.sum(np.diag(X @ X, k=1) ** 2)


def diagonal_of_outer(x):
    return np.sum(np.sin(np.diagonal(np.outer(x, x[::-1]))))


def take_along_rows(X):
    return np.sum(np.take_along_axis(X, PICKS, axis=1) ** 3)


def det_squared(A):
    return np.linalg.det(A) ** 2 + np.linalg.det(A @ A)


def matrix_norms(W):
    return np.sum(W**2 * np.linalg.norm(W, 1)) + np.linalg.norm(np.sin(W), -np.inf) ** 2


def vector_norms(x):
    return np.linalg.norm(x, np.inf) * np.sum(x**3) + np.linalg.norm(x * x, 1)


def eigenvalues_cubed(X):
    w, _ = np.linalg.eigh(X + X.T)
    return np.sum(w**3)


def projection_on_top_eigenvectors(X):
    w, v = np.linalg.eigh(X + X.T)
    top = v[:, 1:]
    return np.sum((top @ top.T @ X) ** 2) + np.sum(np.sin(w))


def nuclear_norm(W):
    return np.sum(W**2) + np.linalg.norm(W, "nuc")


def spectral_norms(W):
    return np.linalg.norm(W, 2) * np.sum(W) + np.linalg.norm(W @ W.T + np.eye(3), -2) ** 2


TARGET = np.array(
    [[0.5, -1.0, 0.2, 0.3], [1.5, 0.3, -0.7, 1.1], [0.1, 0.9, 1.2, -0.2], [-0.4, 0.6, 0.8, 0.0]]
)


def svd_low_rank_fit(X):
    u, s, vh = np.linalg.svd(X, full_matrices=False)
    low_rank = (u[:, :2] * s[:2]) @ vh[:2]
    return np.sum((low_rank - TARGET[: X.shape[0], : X.shape[1]]) ** 2) + np.sum(s**3)


def _matrix(rng):
    return (rng.normal(size=(3, 3)),)


PROGRAMS = [
    (diff_twice, lambda r: (r.normal(size=6),), True),
    (diff_along_rows, lambda r: (r.normal(size=(3, 2)),), True),
    (pad_constant, lambda r: (r.normal(size=(2, 3)),), True),
    (pad_edge, lambda r: (r.normal(size=4),), False),  # autograd pads constants only
    (pad_reflect, lambda r: (r.normal(size=4),), False),
    (hstack_pieces, lambda r: (r.normal(size=2),), True),
    (vstack_rows, lambda r: (r.normal(size=3),), True),
    (column_stack_columns, lambda r: (r.normal(size=3),), True),
    (split_halves, lambda r: (r.normal(size=6),), True),
    (array_split_uneven, lambda r: (r.normal(size=7),), True),
    (diag_of_matrix, _matrix, True),
    (diagonal_of_outer, lambda r: (r.normal(size=4),), False),  # autograd: axes -1, -2 only
    (take_along_rows, _matrix, False),  # autograd has no vjp for take_along_axis
    (det_squared, lambda r: (r.normal(size=(3, 3)) + 2 * np.eye(3),), True),
    (matrix_norms, lambda r: (r.normal(size=(3, 4)),), False),  # autograd: Frobenius and 2
    (vector_norms, lambda r: (r.normal(size=5),), False),  # autograd: no ord=1
    (nuclear_norm, lambda r: (r.normal(size=(4, 3)),), True),
    (spectral_norms, lambda r: (r.normal(size=(3, 4)),), False),  # autograd: no ord=2
    (eigenvalues_cubed, _matrix, True),
    (projection_on_top_eigenvectors, _matrix, True),
    (svd_low_rank_fit, _matrix, True),
    (svd_low_rank_fit, lambda r: (r.normal(size=(4, 3)),), True),  # tall
    (svd_low_rank_fit, lambda r: (r.normal(size=(3, 4)) - 1.0,), True),  # wide
]
IDS = [f"{fn.__name__}-{k}" for k, (fn, _, _) in enumerate(PROGRAMS)]


def differences_of_the_gradient(fn, x, v, eps=1e-5):
    gradient = grad(fn)
    return (gradient(x + eps * v) - gradient(x - eps * v)) / (2 * eps)


def autograd_hvp(fn, x, v):
    f = with_autograd_numpy(fn)
    return autograd.grad(lambda y: np.sum(autograd.grad(f)(y) * v))(x)


@pytest.mark.parametrize(("fn", "sample", "by_autograd"), PROGRAMS, ids=IDS)
def test_hessian_vector_products_match_both_oracles(fn, sample, by_autograd):
    (x,) = sample(np.random.default_rng(3))
    v = np.random.default_rng(4).normal(size=x.shape)
    gradient = grad(fn)
    _, forward_over_reverse = jvp(gradient, (x,), (v,))
    _, pullback = vjp(gradient, x)
    (reverse_over_reverse,) = pullback(v)  # the Hessian is symmetric
    expected = differences_of_the_gradient(fn, x, v)
    for got in (forward_over_reverse, reverse_over_reverse):
        assert np.shape(got) == x.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    if by_autograd:
        np.testing.assert_allclose(reverse_over_reverse, autograd_hvp(fn, x, v), rtol=1e-9)


def test_a_norm_at_repeated_singular_values_is_refused_at_the_users_line():
    """ord='nuc' has the gradient u vh, made of singular vectors, which have no
    derivative where two singular values are equal: the second derivative is refused
    where the norm is written, in both compositions (its first derivative works)."""
    W = np.array([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    gradient = grad(nuclear_norm)
    u, _, vh = np.linalg.svd(W, full_matrices=False)
    np.testing.assert_allclose(gradient(W), 2 * W + u @ vh, rtol=1e-12)
    line = nuclear_norm.__code__.co_firstlineno + 1
    for second in (
        lambda: jvp(gradient, (W,), (np.ones_like(W),)),
        lambda: vjp(gradient, W)[1](np.ones_like(W)),
    ):
        with pytest.raises(NoDerivativeRuleError) as caught:
            second()
        assert caught.value.location.line == line
        assert "ord='nuc'" in caught.value.message
        assert "repeated or zero singular value" in caught.value.message
        assert "finite differences of the gradient" in caught.value.hint


def cubic_vector_norm(x):
    return np.linalg.norm(x, 3) * np.sum(x)


def test_a_vector_norm_whose_gradient_curves_with_x_is_refused_at_the_users_line():
    """ord=3 has the gradient sign(x) (|x| / norm)^2, which curves with x: no rule
    writes that curvature, so the second derivative is refused where the norm is."""
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(NoDerivativeRuleError) as caught:
        jvp(grad(cubic_vector_norm), (x,), (np.ones_like(x),))
    assert caught.value.location.line == cubic_vector_norm.__code__.co_firstlineno + 1
    assert "ord=3" in caught.value.message


@pytest.mark.parametrize(
    ("fn", "X", "reason"),
    [
        (eigenvalues_cubed, np.eye(3), "repeated eigenvalue"),
        (
            svd_low_rank_fit,
            np.array([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]),
            "repeated or zero singular value",
        ),
    ],
    ids=["eigh_at_a_repeated_eigenvalue", "svd_at_repeated_singular_values"],
)
def test_a_decomposition_without_a_derivative_is_refused_at_the_users_line(fn, X, reason):
    """At a repeated eigenvalue (eigh) or repeated singular values (svd) the vectors
    have no derivative: the second derivative is refused where the decomposition is
    called (not NaN), in both compositions, while distinct values work
    (above)."""
    gradient = grad(fn)
    line = fn.__code__.co_firstlineno + 1
    for second in (
        lambda: jvp(gradient, (X,), (np.ones_like(X),)),
        lambda: vjp(gradient, X)[1](np.ones_like(X)),
    ):
        with pytest.raises(NoDerivativeRuleError) as caught:
            second()
        assert caught.value.location.line == line
        assert reason in caught.value.message


def prod_over_two_axes(x):
    v1 = np.prod(x, axis=(0, 1), keepdims=True)
    return np.sum(v1 * v1)


def prod_over_the_outer_axes(x):
    return np.sum(np.sin(np.prod(x, axis=(0, -1))))


def prod_over_one_axis(x):
    return np.sum(np.prod(x, axis=1) ** 2)


@pytest.mark.parametrize(
    ("fn", "shape"),
    [
        (prod_over_two_axes, (3, 4)),
        (prod_over_the_outer_axes, (2, 3, 2)),
        (prod_over_one_axis, (3, 4)),
    ],
)
def test_second_order_of_prod_over_axes(fn, shape):
    """``np.prod`` over one axis or a tuple of axes (the tangent of its ``prod_others``
    helper takes either): forward over reverse and reverse over reverse agree with
    autograd's Hessian and with central differences of the gradient."""
    x = np.random.default_rng(0).uniform(0.5, 1.5, size=shape) * np.sign(
        np.random.default_rng(1).normal(size=shape)
    )
    direction = np.random.default_rng(2).normal(size=shape)
    _, got = jvp(grad(fn), (x,), (direction,))
    hessian = autograd.hessian(with_autograd_numpy(fn))(x)
    expected = np.tensordot(hessian, direction, axes=direction.ndim)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    _, pullback = vjp(grad(fn), x)  # reverse over reverse: the Hessian is symmetric
    np.testing.assert_allclose(pullback(direction)[0], expected, rtol=1e-9, atol=1e-12)
    h = 1e-6
    gradient = grad(fn)
    differences = (gradient(x + h * direction) - gradient(x - h * direction)) / (2 * h)
    np.testing.assert_allclose(got, differences, rtol=1e-5, atol=1e-6)
