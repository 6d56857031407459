"""The wild corpus (``tests/corpus_wild/``): objectives written as course assignments,
scipy.optimize examples and notebooks write them, not for this project, in both modes
against central differences and autograd.

The compiler's ``value_and_grad`` is called three times (the first call checks and
compiles, later calls take the specialized fast path), tracing's
``value_and_gradient`` once; every gradient (dicts and lists of arrays included) is
compared with central differences in float64. An objective a mode cannot run today is
``xfail(strict=True)`` with the reason written on it.
"""

from __future__ import annotations

import contextlib
import io
import types
from typing import Any

import autograd
import autograd.numpy as anp
import autograd.scipy.special as aspecial
import numpy as np
import pytest
from corpus_params import marked
from corpus_wild import Wild, load_all
from oracles import structured_central_difference

from autodiff_tutor import value_and_grad
from autodiff_tutor.pytree import flatten
from autodiff_tutor.tracing import value_and_gradient

WILD = load_all()
BY_NAME = {w.name: w for w in WILD}
AUTOGRAD_NAMES = {"np": anp, "expit": aspecial.expit, "gammaln": aspecial.gammaln,
                  "logsumexp": aspecial.logsumexp}  # fmt: skip


def _inputs(w: Wild) -> tuple[Any, ...]:
    return w.sample(np.random.default_rng(sum(map(ord, w.name))))


def _names(w: Wild) -> list[str]:
    params = w.fn.__code__.co_varnames[: w.fn.__code__.co_argcount]
    return [params[i] for i in w.wrt]


def _leaves(value: Any) -> list[np.ndarray]:
    return [np.asarray(v, dtype=np.float64) for v in flatten(value)[0]]


def _marked(mode: str) -> list[Any]:
    return marked(WILD, mode)


def _check(w: Wild, args: tuple[Any, ...], value: Any, gradients: tuple[Any, ...]) -> None:
    with contextlib.redirect_stdout(io.StringIO()):  # the notebook habit of printing
        np.testing.assert_allclose(value, w.fn(*args), rtol=1e-12)
        for k, i in enumerate(w.wrt):
            want = structured_central_difference(w.fn, list(args), i)
            got = _leaves(gradients[k])
            assert len(got) == len(want), f"d/d{_names(w)[k]}: one gradient per array"
            for g, e in zip(got, want, strict=True):
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=f"d/d{_names(w)[k]}")


def test_the_corpus_is_large_and_varied() -> None:
    assert len(WILD) >= 40, len(WILD)
    assert len(BY_NAME) == len(WILD), "names are unique"
    assert {w.fn.__module__ for w in WILD} == {
        f"corpus_wild.{m}" for m in ("course", "science", "notebook")
    }


@pytest.mark.parametrize("name", _marked("compiler"))
def test_compiler_matches_finite_differences(name: str) -> None:
    w = BY_NAME[name]
    args = _inputs(w)
    both = value_and_grad(w.fn, wrt=_names(w))
    with contextlib.redirect_stdout(io.StringIO()):
        results = [both(*args) for _ in range(3)]  # compiled, then the fast path twice
    for value, gradients in results:
        _check(w, args, value, gradients)


@pytest.mark.parametrize("name", _marked("tracing"))
def test_tracing_matches_finite_differences(name: str) -> None:
    w = BY_NAME[name]
    args = _inputs(w)
    with contextlib.redirect_stdout(io.StringIO()):
        value, gradients = value_and_gradient(w.fn, *args, wrt=_names(w))
    _check(w, args, value, gradients)


@pytest.mark.parametrize("name", [w.name for w in WILD])
def test_finite_differences_agree_with_autograd(name: str) -> None:
    """The oracles agree with each other, so each mode is checked against both."""
    w = BY_NAME[name]
    if w.autograd:
        pytest.skip(f"autograd: {w.autograd}")
    fn = w.fn
    namespace = {**fn.__globals__, **AUTOGRAD_NAMES}
    fn = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    args = _inputs(w)
    with contextlib.redirect_stdout(io.StringIO()):
        for i in w.wrt:
            want = structured_central_difference(w.fn, list(args), i)
            got = _leaves(autograd.grad(fn, i)(*args))
            for g, e in zip(got, want, strict=True):
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
