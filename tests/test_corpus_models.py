"""The model corpus (``tests/corpus_models/``) in both modes, against two oracles.

Each objective is differentiated by the compiler (``grad``) and by tracing
(``value_and_gradient``) with respect to its ``wrt`` arguments, in float64, and
compared with central differences and with autograd (the independent AD library;
scipy's functions replaced by autograd's own). A model that one mode cannot run is
``xfail(strict=True)`` for that mode, with the reason written on the model.
"""

from __future__ import annotations

import types
from typing import Any

import autograd
import autograd.numpy as anp
import autograd.scipy.special as aspecial
import autograd.scipy.stats as astats
import numpy as np
import pytest
from corpus_models import Model, load_all
from corpus_params import marked
from oracles import central_difference

from autodiff_tutor import grad
from autodiff_tutor.tracing import value_and_gradient

MODELS = load_all()
BY_NAME = {m.name: m for m in MODELS}

# autograd cannot run programs that write into arrays (out[i, j] = ...): their
# gradients are checked against finite differences only
AUTOGRAD_CANNOT = {
    "conv2d_valid_loops": "writes into an array (out[i, j] = ...)",
    "max_pool_2x2": "writes into an array (pooled[i, j] = ...)",
    "conv1d_with_flip": "writes into an array (out[t] = ...)",
    "softmax_cross_entropy": "autograd has no vjp for np.take_along_axis",
    "multiclass_svm_hinge": "autograd has no vjp for np.take_along_axis",
    "matrix_log_barrier": "autograd has no vjp for np.linalg.eigvalsh",
    "cosine_contrastive_loss": "autograd returns a gradient of the wrong shape (4, 4, 3) here",
    "spectral_norm_regression": "autograd has no gradient of the matrix norm ord=2",
}

AUTOGRAD_NAMES = {
    "np": anp,
    "expit": aspecial.expit,
    "logsumexp": aspecial.logsumexp,
    "gammaln": aspecial.gammaln,
    "norm": astats.norm,
    "t": astats.t,
    "multivariate_normal": astats.multivariate_normal,
    "softmax": lambda x, axis=None: anp.exp(x - aspecial.logsumexp(x, axis=axis, keepdims=True)),
    "log_softmax": lambda x, axis=None: x - aspecial.logsumexp(x, axis=axis, keepdims=True),
}


def _inputs(m: Model) -> tuple[Any, ...]:
    return m.sample(np.random.default_rng(sum(map(ord, m.name))))


def _names(m: Model) -> list[str]:
    params = m.fn.__code__.co_varnames[: m.fn.__code__.co_argcount]
    return [params[i] for i in m.wrt]


def _marked(mode: str) -> list[Any]:
    return marked(MODELS, mode)


def _check(m: Model, got: Any) -> None:
    args = _inputs(m)
    for k, i in enumerate(m.wrt):
        want = central_difference(m.fn, list(args), i)
        np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-6, err_msg=f"d/d{_names(m)[k]}")


def test_the_corpus_is_large_and_varied() -> None:
    assert len(MODELS) >= 40, len(MODELS)
    assert len(BY_NAME) == len(MODELS), "model names are unique"


@pytest.mark.parametrize("name", _marked("compiler"))
def test_compiler_matches_finite_differences(name: str) -> None:
    m = BY_NAME[name]
    got = grad(m.fn, wrt=_names(m))(*_inputs(m))
    _check(m, got if isinstance(got, (list, tuple)) else [got])


@pytest.mark.parametrize("name", _marked("tracing"))
def test_tracing_matches_finite_differences(name: str) -> None:
    m = BY_NAME[name]
    _, got = value_and_gradient(m.fn, *_inputs(m), wrt=_names(m))
    _check(m, got if isinstance(got, (list, tuple)) else [got])


@pytest.mark.parametrize("name", [m.name for m in MODELS])
def test_finite_differences_agree_with_autograd(name: str) -> None:
    """The oracles agree with each other, so each mode is checked against both."""
    m = BY_NAME[name]
    if name in AUTOGRAD_CANNOT:
        pytest.skip(f"autograd: {AUTOGRAD_CANNOT[name]}")
    namespace = {**m.fn.__globals__, **AUTOGRAD_NAMES}
    fn = types.FunctionType(m.fn.__code__, namespace, m.fn.__name__, m.fn.__defaults__)
    args = _inputs(m)
    for i in m.wrt:
        want = central_difference(m.fn, list(args), i)
        got = autograd.grad(fn, i)(*args)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
