"""Primitives with several results (``np.split`` and its kin, ``np.linalg.slogdet``,
``eigh``, ``svd``), matrix norms and N-d ``np.dot``, used as a student writes them:
unpacked (``a, b = np.split(x, 2)``), indexed (``parts[0]``), some results unused.

Each program runs through the compiler (``grad`` and forward mode ``jvp``) and tracing
(``value_and_gradient``), against central differences in float64 and autograd (where
autograd has the rule). Where the derivative does not exist (svd's full_matrices=True
vectors of a rectangular matrix) the refusal is an ``AutodiffError`` at the user's line.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import grad, jvp
from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.tracing import evaluate, gradient, traced, value_and_gradient

# --- the programs -------------------------------------------------------------------------


def halves(x):
    a, b = np.split(x, 2)
    return np.sum(a * b)


def uneven_pieces(x):
    parts = np.array_split(x, 3, axis=1)
    return np.sum(parts[0] ** 2) + np.sum(np.sin(parts[2]))


def columns_and_rows(x):
    first, rest = np.hsplit(x, [1])
    top, bottom = np.vsplit(x, 2)
    return np.sum(first * 2.0) + np.sum(np.exp(rest)) + np.sum(top * bottom)


def depth_split(x):
    a, b = np.dsplit(x, 2)
    return np.sum(a**2 * b)


def gaussian_log_normalizer(a):
    sign, logdet = np.linalg.slogdet(a @ a.T + np.eye(3))
    return 0.5 * logdet + sign


def eigen_energy(a):
    w, v = np.linalg.eigh(a + a.T)
    return np.sum(w**2) + np.sum(v[:, 0] ** 2 * np.arange(4.0))


def top_eigenvalue(a):
    w, _ = np.linalg.eigh(a @ a.T)
    return w[-1]


def low_rank_fit(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    fit = np.sum(s**2) + np.sum((u[:, 0] * u[:, 1]) ** 2)
    return fit + np.sum(vh[0, :3] ** 2 * np.arange(3.0)) + np.sum(u[-1] ** 4)


def singular_values(a):
    return np.sum(np.linalg.svdvals(a) ** 3)


def matrix_norms(a):
    return (
        np.linalg.norm(a, "nuc")
        + np.linalg.norm(a, 2)
        + np.linalg.norm(a, 1)
        + np.linalg.norm(a, -np.inf)
        + np.linalg.norm(a, -2)
    )


def batched_norms(x):
    return np.sum(np.linalg.norm(x, np.inf, axis=(1, 2), keepdims=True) * x)


def tensor_dot(x, y):
    return np.sum(np.sin(np.dot(x, y)))


def rng_inputs(*shapes):
    rng = np.random.default_rng(len(shapes) * 7 + sum(map(len, shapes)))
    return [rng.normal(size=s) for s in shapes]


# (program, inputs, autograd has its rules)
PROGRAMS = [
    (halves, rng_inputs((6,)), True),
    (uneven_pieces, rng_inputs((2, 7)), True),
    (columns_and_rows, rng_inputs((4, 3)), True),
    (depth_split, rng_inputs((2, 3, 4)), True),
    (gaussian_log_normalizer, rng_inputs((3, 3)), True),
    (eigen_energy, rng_inputs((4, 4)), True),
    (top_eigenvalue, rng_inputs((3, 3)), True),
    (low_rank_fit, rng_inputs((4, 3)), True),
    (low_rank_fit, [np.random.default_rng(1).normal(size=(3, 4))], True),
    (singular_values, rng_inputs((3, 4)), False),
    (matrix_norms, rng_inputs((3, 3)), False),
    (batched_norms, rng_inputs((2, 3, 4)), False),
    (tensor_dot, rng_inputs((2, 3, 4), (5, 4, 2)), True),
]

IDS = [f"{fn.__name__}-{'x'.join(map(str, args[0].shape))}" for fn, args, _ in PROGRAMS]


def _names(fn):
    return list(fn.__code__.co_varnames[: fn.__code__.co_argcount])


@pytest.mark.parametrize(("fn", "args", "_"), PROGRAMS, ids=IDS)
def test_compiler_and_tracing_match_finite_differences(fn, args, _) -> None:
    names = _names(fn)
    compiled = grad(fn, wrt=names)(*args)
    _, by_tracing = value_and_gradient(fn, *args, wrt=names)
    for i, name in enumerate(names):
        want = central_difference(fn, args, i)
        message = f"{fn.__name__}: d/d{name}"
        np.testing.assert_allclose(compiled[i], want, rtol=1e-5, atol=1e-6, err_msg=message)
        np.testing.assert_allclose(by_tracing[i], compiled[i], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("fn", "args", "_"), PROGRAMS, ids=IDS)
def test_forward_mode_matches_a_directional_difference(fn, args, _) -> None:
    rng = np.random.default_rng(5)
    directions = [rng.normal(size=a.shape) for a in args]
    value, tangent = jvp(fn, tuple(args), tuple(directions))
    h = 1e-6
    up = fn(*[a + h * d for a, d in zip(args, directions, strict=True)])
    down = fn(*[a - h * d for a, d in zip(args, directions, strict=True)])
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert tangent == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize(
    ("fn", "args"),
    [(fn, args) for fn, args, has in PROGRAMS if has],
    ids=[i for i, (_, _, has) in zip(IDS, PROGRAMS, strict=True) if has],
)
def test_autograd_agrees(fn, args) -> None:
    names = _names(fn)
    compiled = grad(fn, wrt=names)(*args)
    for i in range(len(names)):
        np.testing.assert_allclose(compiled[i], autograd_gradient(fn, args, i), rtol=1e-7)


# --- results nobody reads, views, refusals --------------------------------------------------


def test_unread_pieces_get_zero_gradient_in_both_modes() -> None:
    def first_piece(x):
        parts = np.split(x, 3)
        return np.sum(parts[0] ** 2)

    x = np.arange(1.0, 7.0)
    want = np.array([2.0, 4.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(grad(first_piece)(x), want)
    np.testing.assert_array_equal(value_and_gradient(first_piece, x)[1], want)


def test_a_traced_piece_sees_a_later_write_into_its_input() -> None:
    """np.split's pieces are views: numpy's pieces see a later in-place write, so the
    traced ones must too (value and gradient)."""

    def written_after(x):
        y = x * 1.0
        a, b = np.split(y, 2)
        y[0] = 10.0 * x[1]
        return np.sum(a * b)

    x = np.array([1.0, 2.0, 3.0, 4.0])
    value, g = value_and_gradient(written_after, x)
    assert value == pytest.approx(written_after(x))
    np.testing.assert_allclose(g, central_difference(written_after, [x], 0), rtol=1e-6)


def test_svd_of_all_vectors_is_refused_at_the_users_line_in_both_modes() -> None:
    def full(a):
        u, s, vh = np.linalg.svd(a)
        return np.sum(u)

    a = np.ones((3, 2))
    with pytest.raises(AutodiffError, match="full_matrices=True") as compiled:
        grad(full)(a)
    assert "u, s, vh = np.linalg.svd(a)" in str(compiled.value)
    with pytest.raises(AutodiffError, match="full_matrices=True") as by_tracing:
        evaluate(lambda t: gradient(full(t), t), traced(a))
    assert "u, s, vh = np.linalg.svd(a)" in str(by_tracing.value)


def test_eigenvectors_of_a_repeated_eigenvalue_have_no_gradient() -> None:
    """The documented behaviour: the eigenvalues' gradient is defined at a repeated
    eigenvalue, the eigenvectors' is not (inf/nan, never a finite wrong number)."""

    def eigenvalues(a):
        w, v = np.linalg.eigh(a)
        return np.sum(w * np.arange(3.0))

    def eigenvector(a):
        w, v = np.linalg.eigh(a)
        return np.sum(v[:, 0] * np.arange(3.0))

    a = np.diag([1.0, 1.0, 3.0])
    assert np.all(np.isfinite(grad(eigenvalues)(a)))
    with np.errstate(invalid="ignore"):
        assert not np.all(np.isfinite(grad(eigenvector)(a)))
        assert not np.all(np.isfinite(value_and_gradient(eigenvector, a)[1]))


def test_named_fields_of_a_result_read_its_items_in_both_modes() -> None:
    """``res.eigenvalues``, ``res.logabsdet``, ``res.S``: numpy's named tuples, read by
    field name (the compiler reads them as ``res[0]``...); an attribute that is no field
    of the value's primitive stays a located refusal."""

    def by_fields(a):
        b = a @ a.T + np.eye(2)
        res = np.linalg.eigh(b)
        det = np.linalg.slogdet(b)
        return np.sum(res.eigenvalues**2) + det.logabsdet + np.sum(np.linalg.svd(a, False).S)

    def not_a_field(a):
        res = np.linalg.eigh(a)
        return np.sum(res.S)

    a = np.array([[2.0, 0.3], [0.1, 1.5]])
    want = central_difference(by_fields, [a], 0)
    np.testing.assert_allclose(grad(by_fields)(a), want, rtol=1e-6)
    np.testing.assert_allclose(value_and_gradient(by_fields, a)[1], want, rtol=1e-6)
    with pytest.raises(AutodiffError, match="'.S' is not differentiable") as refused:
        grad(not_a_field)(a)
    assert refused.value.location is not None


def test_an_einsum_the_rule_does_not_cover_is_refused_at_the_call_in_both_modes() -> None:
    """A diagonal in einsum: refused at the user's line, not unlocated in the backward;
    '...' with broadcasting, and subscripts held in a variable, differentiate."""

    def diagonal(a):
        return np.sum(np.einsum("ii,i->i", a, a[0]))

    def batched(a):
        return np.sum(np.einsum("...ij,...jk->...ik", a[None] * np.ones((3, 1, 1)), a) ** 2)

    def spec_in_a_variable(a):
        spec = "ij,jk->ik"
        return np.sum(np.einsum(spec, a, a))

    a = np.array([[1.0, 0.5], [-0.3, 2.0]])
    for run in (lambda f: grad(f)(a), lambda f: value_and_gradient(f, a)):
        with pytest.raises(AutodiffError, match="einsum") as refused:
            run(diagonal)
        assert refused.value.location is not None
        assert refused.value.location.filename == __file__
    for fn in (batched, spec_in_a_variable):
        want = central_difference(fn, [a], 0)
        np.testing.assert_allclose(grad(fn)(a), want, rtol=1e-6)
        np.testing.assert_allclose(value_and_gradient(fn, a)[1], want, rtol=1e-6)
