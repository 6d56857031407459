"""Every numpy name, reached by a value that carries gradient, is differentiated right or
refused with a located error: in the compiler (reverse mode), forward mode (``jvp``) and
tracing. Never a silent zero, never a wrong number.

The walk is in :mod:`numpy_namespace_probes`: programs that reach every public name of
numpy and numpy.linalg, the ufunc methods, ndarray's methods and attributes and the
scipy functions with rules. Each program's gradient is checked against central
differences, and what each mode does is what the rules say it must (a name with a
rule is differentiated, one without is refused, a non-differentiable one gives a
constant), except where :data:`EXPECTED` says otherwise, and why.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.polynomial import polynomial
from numpy_namespace_probes import OUT_OF_SCOPE, build, walked_names
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, grad, jvp
from autodiff_tutor.errors import (
    AutodiffError,
    InternalError,
    NoDerivativeRuleError,
    TracingError,
    TracingEscapeError,
    UnsupportedSyntaxError,
)
from autodiff_tutor.rules.registry import is_nondifferentiable, lookup
from autodiff_tutor.runtime.backend import array_module
from autodiff_tutor.tracing import value_and_gradient

PROBES, MISSING, PROGRAMS = build()
MODES = ("compiler", "jvp", "tracing")
RIGHT, REFUSED = "right", "refused"
# numpy's own C code refuses a traced value before any dispatch: a TypeError, no value
NUMPY_REFUSES = "numpy's TypeError"

# probes whose outcome (compiler, jvp, tracing) is not the rules' default, and why
EXPECTED: dict[str, tuple[tuple[str, str, str], str]] = {}


def _expect(outcomes: tuple[str, str, str], reason: str, *names: str) -> None:
    EXPECTED.update(dict.fromkeys(names, (outcomes, reason)))


_expect(
    (RIGHT, RIGHT, RIGHT),
    "the compiler reads np.array(x) as a copy; tracing's numpy (the traced function's own) "
    "keeps the traced value",
    *("array", "asarray", "asanyarray", "ascontiguousarray"),
)
_expect(
    (REFUSED, REFUSED, RIGHT),
    "the compiler refuses these; tracing's numpy joins np.r_/np.c_ pieces with "
    "np.concatenate, casts with astype, and makes np.full of a traced value a sum",
    *("r_", "r_ #2", "c_", "full", "double", "float64", "int32", "int64", "int_", "intc"),
    *("intp", "long"),
)
_expect(
    (RIGHT, RIGHT, REFUSED),
    "no numbers come out; tracing refuses the conversion to numpy they make",
    *("array2string", "array_repr", "array_str", "common_type", "einsum_path"),
    *("min_scalar_type", "mintypecode", "result_type", "ndarray.base", "ndarray.ctypes"),
    *("ndarray.data", "ndarray.dumps", "ndarray.tobytes"),
)
_expect(
    (RIGHT, RIGHT, REFUSED),
    "a plain array's method converts a traced argument: tracing refuses (np.dot(c, x) works)",
    "constant.dot",
)
_expect(
    (REFUSED, REFUSED, RIGHT),
    "the compiler joins a list (written out or built with append); tracing, like numpy, "
    "joins the rows of an array",
    *("concatenate #2", "concat #2", "stack #2", "hstack #2", "vstack #2", "dstack #2"),
    "column_stack #2",
)
_expect(
    (REFUSED, REFUSED, RIGHT),
    "np.s_[x] is x itself: the compiler refuses an index object of a value with gradient",
    *("s_", "index_exp"),
)
_expect(
    (REFUSED, REFUSED, RIGHT),
    "a deprecated spelling of np.vstack without a rule; tracing follows its np.vstack",
    "row_stack",
)
_expect(
    (REFUSED, REFUSED, RIGHT),
    "the compiler does not pass a lambda on; tracing runs it on traced values",
    "fromfunction",
)
_expect(
    (RIGHT, RIGHT, RIGHT),
    "both modes follow np.fill_diagonal(a, v) as the write a[k, k] = v",
    "fill_diagonal",
)
_expect(
    (REFUSED, REFUSED, RIGHT),
    "its value (None) kept: the compiler refuses it but as a statement; tracing writes",
    "fill_diagonal as a value",
)
_expect(
    (REFUSED, REFUSED, REFUSED),
    "writes in place (the compiler's fence refuses it; tracing refuses it or its argument)",
    *("constant.put", "ndarray.setflags"),
)
_expect((REFUSED, REFUSED, RIGHT), "flags in place: the compiler's fence", "constant.setflags")
_expect((REFUSED,) * 3, "x is the index here, which carries no gradient", "constant.take")
_expect((REFUSED,) * 3, "full_matrices=True: the rule covers full_matrices=False", "linalg.svd #2")
_expect(
    (REFUSED, REFUSED, NUMPY_REFUSES),
    "numpy itself refuses a value that is not an ndarray here (bmat returns None, "
    "frombuffer needs a buffer, ndarray.conj(out) an ndarray out)",
    *("bmat", "frombuffer", "constant.conj", "constant.conjugate"),
)


def expected(probe) -> tuple[str, str, str]:
    """What the compiler, jvp and tracing must give for ``probe``."""
    if probe.name in EXPECTED:
        return EXPECTED[probe.name][0]
    if probe.complex_result:
        return (REFUSED,) * 3  # complex gradients are refused in every mode
    if "return np.sum(x * x)" in probe.body:  # no numbers come out: nothing to lose
        return (RIGHT,) * 3
    if probe.op is not None and lookup(probe.op) is not None:
        # tracing's scipy (the traced function's own) goes to the same rules
        return (RIGHT, RIGHT, RIGHT)
    if probe.op is not None and is_nondifferentiable(probe.op):
        return (RIGHT, RIGHT, REFUSED)  # a constant; tracing refuses an untraced result
    return (REFUSED,) * 3


def outcome(mode: str, fn, x: np.ndarray, central: np.ndarray | None) -> str:
    """RIGHT, REFUSED (a located AutodiffError), NUMPY_REFUSES, or what went wrong."""
    tangent = np.linspace(1.0, -0.5, x.size).reshape(x.shape)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if mode == "compiler":
                got = grad(differentiable(fn))(x.copy())
            elif mode == "jvp":
                got = jvp(differentiable(fn), (x.copy(),), (tangent,))[1]
            else:
                got = value_and_gradient(fn, x.copy())[1]
    except InternalError as error:  # located, but one the user should report
        return f"internal error {error}"
    except AutodiffError as error:
        return REFUSED if error.location is not None else f"unlocated {error!r}"
    except TypeError as error:
        return NUMPY_REFUSES if mode == "tracing" else f"crash TypeError: {error}"
    except Exception as error:  # a crash is no answer either
        return f"crash {type(error).__name__}: {error}"
    if central is None:
        return f"a value {got!r} for a complex result"
    if mode == "jvp":
        central = np.sum(central * tangent)
    if np.shape(got) != np.shape(central):
        return f"wrong shape {np.shape(got)}"
    right = np.allclose(np.asarray(got, dtype=float), central, rtol=1e-5, atol=1e-6)
    return RIGHT if right else f"wrong {got!r}, central differences {central!r}"


def outcomes(probe) -> tuple[str, str, str]:
    """What each mode gives for ``probe``, its gradient checked by central differences."""
    fn = getattr(PROGRAMS, probe.function)
    central = None
    if not probe.complex_result:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            central = central_difference(fn, (probe.x,), 0)
    return tuple(outcome(mode, fn, probe.x, central) for mode in MODES)


def test_every_public_name_is_probed_or_out_of_scope():
    """A name no program reaches (a numpy to come) must say why, in OUT_OF_SCOPE."""
    assert MISSING == []
    assert set(OUT_OF_SCOPE) <= set(walked_names()) | {"linalg.test"}
    assert set(EXPECTED) <= {p.name for p in PROBES}  # no stale exception


@pytest.mark.parametrize("probe", PROBES, ids=[p.name for p in PROBES])
def test_name_is_differentiated_or_refused(probe):
    """Right against central differences, or refused at the line, as the rules say."""
    found = dict(zip(MODES, outcomes(probe), strict=True))
    want = dict(zip(MODES, expected(probe), strict=True))
    assert found == want, probe.body


# --- what the walk found wrong, each against central differences (and autograd) -----------

C = np.array([1.0, 2.0])
X = np.array([0.5, -1.0])
NINE = np.arange(1.0, 10.0)


def joined_by_r(x):
    return np.sum(np.r_[x, C, x] ** 2)


def joined_by_concatenate(x):  # the hint's rewrite of joined_by_r
    return np.sum(np.concatenate([x, C, x]) ** 2)


def columns_by_c(x):
    return np.sum(np.c_[x, C] ** 2)


def columns_by_column_stack(x):  # the hint's rewrite of columns_by_c
    return np.sum(np.column_stack([x, C]) ** 2)


def number_joined_by_r(x):
    return np.sum(np.r_[x, 1.0] ** 2)


def index_of_x(x):
    return np.sum(np.s_[x] ** 2)


def grid_from_x(x):
    return np.sum(np.mgrid[x[0] : 2.0 : 3j] ** 2)


def grid_from_linspace(x):  # the hint's rewrite of grid_from_x
    return np.sum((x[0] + (2.0 - x[0]) * np.linspace(0.0, 1.0, 3)) ** 2)


def joined_by_a_module_default(x, xp=np):
    return np.sum(xp.r_[x, C, x] ** 2)


def joined_by_the_values_module(x):
    xp = array_module(x)
    return np.sum(xp.r_[x, C, x] ** 2)


def polynomial_made_from_x(x):
    return np.poly1d(x)(0.5)


@pytest.mark.parametrize(
    ("fn", "hint"),
    [
        (joined_by_r, "np.concatenate([x, C, x])"),
        (joined_by_a_module_default, "np.concatenate([x, C, x])"),
        (joined_by_the_values_module, "np.concatenate([x, C, x])"),
        (columns_by_c, "np.column_stack([x, C])"),
        (number_joined_by_r, "np.concatenate([x, [1.0]])"),
        (index_of_x, "np.s_[x] is x itself"),
        (grid_from_x, "a + (b - a) * np.linspace(0.0, 1.0, n)"),
    ],
)
def test_index_objects_of_values_with_gradient_are_refused_at_the_subscript(fn, hint):
    """np.r_[x, c, x] and its kind call a function of their index: not constants
    (gradient 0, tangent 0) but refused in both modes, at the subscript, with a rewrite
    that keeps the meaning."""
    for differentiate in (grad(differentiable(fn)), lambda x: jvp(fn, (x,), (np.ones(2),))):
        with pytest.raises(UnsupportedSyntaxError, match="computes a value from its index") as e:
            differentiate(X)
        assert e.value.location.filename == __file__
        assert "[" in e.value.location.text[e.value.location.column :]
        assert hint in e.value.hint


@pytest.mark.parametrize(
    ("fn", "rewrite"),
    [
        (joined_by_r, joined_by_concatenate),
        (columns_by_c, columns_by_column_stack),
        (grid_from_x, grid_from_linspace),
    ],
)
def test_the_hinted_rewrites_compute_the_same_and_differentiate_right(fn, rewrite):
    """The hint's rewrite is the same function, and it compiles to the right gradient."""
    for x in (X, np.array([1.5, 0.25])):
        assert rewrite(x) == pytest.approx(fn(x))
        expected = central_difference(fn, (x,), 0)
        np.testing.assert_allclose(grad(rewrite)(x), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(autograd_gradient(rewrite, (x,), 0), expected, rtol=1e-6)


def index_objects_of_constants(x):
    return np.sum(x * np.r_[C, 1.0]) + np.sum(x[:2] * np.c_[C, C][:, 0])


def test_index_objects_of_constants_still_compile():
    """Only an index with gradient is refused: np.r_ of constants is a constant."""
    expected = central_difference(index_objects_of_constants, (np.ones(3),), 0)
    np.testing.assert_allclose(grad(index_objects_of_constants)(np.ones(3)), expected, atol=1e-8)


def test_a_function_made_from_a_value_with_gradient_is_refused():
    """np.poly1d(x)(0.5) calls a function made from x: not a constant (gradient 0) but
    refused, at the call."""
    with pytest.raises(UnsupportedSyntaxError, match="this kind of call") as caught:
        grad(polynomial_made_from_x)(np.array([1.0, 2.0, 3.0]))
    assert caught.value.location.filename == __file__


def coefficients_last(x):
    return np.sum(polynomial.polyval(x, np.array([1.0, 2.0, 3.0])))


def test_a_numpy_function_is_its_primitive_only_under_its_own_name():
    """numpy.polynomial.polynomial.polyval(x, c) is not np.polyval(p, x), whose
    arguments come the other way round (read as it, the gradient would be [14, 6, 3]
    where central differences say [3.8, 5, 7.4]). The compiler refuses it (no rule);
    tracing follows it."""
    x = np.array([0.4, 1.0, 1.6])
    with pytest.raises(NoDerivativeRuleError, match="polyval") as caught:
        grad(coefficients_last)(x)
    assert caught.value.location.filename == __file__
    expected = central_difference(coefficients_last, (x,), 0)
    np.testing.assert_allclose(value_and_gradient(coefficients_last, x)[1], expected, rtol=1e-6)


def triangles_of_a_vector(v):
    weights = np.linspace(0.5, 1.5, 9).reshape(3, 3)
    return np.sum(np.tril(v, -1) * weights) + np.sum(np.triu(v) * weights**2)


def test_triangles_of_a_vector():
    """np.tril of a 1-D vector repeats it into the rows of a square: its gradient has
    the vector's shape (3,), not the square's (3, 3). (autograd returns the square, so
    central differences alone judge.)"""
    v = np.array([0.3, -0.5, 0.9])
    expected = central_difference(triangles_of_a_vector, (v,), 0)
    np.testing.assert_allclose(grad(triangles_of_a_vector)(v), expected, rtol=1e-6)
    np.testing.assert_allclose(value_and_gradient(triangles_of_a_vector, v)[1], expected, rtol=1e-6)
    tangent = np.array([1.0, -2.0, 0.5])
    _, dot = jvp(triangles_of_a_vector, (v,), (tangent,))
    assert dot == pytest.approx(np.sum(expected * tangent))


@pytest.mark.parametrize("join", ["concatenate", "stack", "hstack", "vstack", "dstack"])
def test_tracing_joins_the_rows_of_an_array(join):
    """np.concatenate(m) joins m's rows, as numpy iterates it: tracing's gradient is
    that of the joined rows, not zeros. (autograd has no gradient of np.dstack.)"""

    def joined(m):
        y = getattr(np, join)(m)
        return np.sum(y**2 * NINE.reshape(y.shape))

    m = np.arange(9.0).reshape(3, 3) / 4
    expected = central_difference(joined, (m,), 0)
    np.testing.assert_allclose(value_and_gradient(joined, m)[1], expected, rtol=1e-6)
    if join != "dstack":
        np.testing.assert_allclose(autograd_gradient(joined, (m,), 0), expected, rtol=1e-6)


def cast_by_function(x):
    return np.sum(np.astype(x, np.float64) * x)


def test_np_astype_compiles():
    """np.astype(x, dtype, /) takes dtype by position only: the compiled call passed it
    by keyword, an internal error."""
    x = np.array([0.3, -1.2])
    expected = central_difference(cast_by_function, (x,), 0)
    np.testing.assert_allclose(grad(cast_by_function)(x), expected, rtol=1e-6)
    assert jvp(cast_by_function, (x,), (np.ones(2),))[1] == pytest.approx(np.sum(expected))


def put_kept(x):
    y = x * 1.0
    _ = np.put(y, [0], 2.0 * x[1])
    return np.sum(y * y)


def fill_diagonal_kept(x):
    a = np.outer(x, x)
    r = np.fill_diagonal(a, 0.0)  # noqa: F841 - its value, None, kept
    return np.sum(a * a)


@pytest.mark.parametrize(("fn", "name"), [(put_kept, "put"), (fill_diagonal_kept, "fill_")])
def test_writes_in_place_kept_as_values_are_refused(fn, name):
    """np.put(y, ...) or np.fill_diagonal(a, v) whose value (None) is assigned writes
    into its array: refused at the call, located, not compiled as a call that changes
    nothing."""
    with pytest.raises(UnsupportedSyntaxError, match=f"'{name}") as caught:
        grad(fn)(np.array([0.3, 0.7, 0.5]))
    assert caught.value.location.filename == __file__
    if fn is fill_diagonal_kept:
        assert "as a statement of its own" in caught.value.hint


def test_tracing_refuses_dlpack_and_traced_method_options():
    """np.from_dlpack(x), and x.take(t) of a traced t, are located refusals (not an
    AttributeError or an IndexError from inside)."""
    with pytest.raises(TracingEscapeError, match="from_dlpack") as caught:
        value_and_gradient(lambda x: np.sum(np.from_dlpack(x)), X)
    assert caught.value.location is not None
    with pytest.raises(TracingError, match="indices") as caught:
        value_and_gradient(lambda x: np.sum(x.take([x, x])), np.array([0.3, 0.8]))
    assert caught.value.location is not None
