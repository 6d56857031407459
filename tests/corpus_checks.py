"""The checks of the public-styles corpus (``tests/corpus_public/``, run by
``tests/test_corpus_public.py``): an objective in the compiler (``value_and_grad``
called three times, so the specialized pair runs), in tracing (``value_and_gradient``)
and in autograd, each gradient compared with central differences in float64."""

from __future__ import annotations

import contextlib
import io
import types
from collections.abc import Callable
from typing import Any

import autograd
import autograd.numpy as anp
import autograd.scipy.special as aspecial
import autograd.scipy.stats as astats
import numpy as np
import pytest
from corpus_params import marked
from corpus_public import Objective
from oracles import structured_central_difference

from autodiff_tutor import value_and_grad
from autodiff_tutor.pytree import flatten
from autodiff_tutor.tracing import value_and_gradient

AUTOGRAD_NAMES = {"np": anp, "expit": aspecial.expit, "gammaln": aspecial.gammaln,
                  "logsumexp": aspecial.logsumexp, "norm": astats.norm}  # fmt: skip


def inputs(w: Objective) -> tuple[Any, ...]:
    """The objective's arguments, seeded by its name."""
    return w.sample(np.random.default_rng(sum(map(ord, w.name))))


def names(w: Objective) -> list[str]:
    """The names of the differentiated parameters."""
    params = w.fn.__code__.co_varnames[: w.fn.__code__.co_argcount]
    return [params[i] for i in w.wrt]


def _leaves(value: Any) -> list[np.ndarray]:
    return [np.asarray(v, dtype=np.float64) for v in flatten(value)[0]]


def _check(w: Objective, args: tuple[Any, ...], value: Any, gradients: tuple[Any, ...]) -> None:
    with contextlib.redirect_stdout(io.StringIO()):  # the notebook habit of printing
        np.testing.assert_allclose(value, w.fn(*args), rtol=1e-12)
        for k, i in enumerate(w.wrt):
            want = structured_central_difference(w.fn, list(args), i)
            got = _leaves(gradients[k])
            assert len(got) == len(want), f"d/d{names(w)[k]}: one gradient per array"
            for g, e in zip(got, want, strict=True):
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=f"d/d{names(w)[k]}")


def check_compiler(w: Objective) -> None:
    """``value_and_grad`` three times (compiled, then the fast path twice) against
    central differences."""
    args = inputs(w)
    both = value_and_grad(w.fn, wrt=names(w))
    with contextlib.redirect_stdout(io.StringIO()):
        results = [both(*args) for _ in range(3)]
    for value, gradients in results:
        _check(w, args, value, gradients)


def check_tracing(w: Objective) -> None:
    """Tracing's ``value_and_gradient`` against central differences."""
    args = inputs(w)
    with contextlib.redirect_stdout(io.StringIO()):
        value, gradients = value_and_gradient(w.fn, *args, wrt=names(w))
    _check(w, args, value, gradients)


def check_autograd(w: Objective) -> None:
    """The oracles agree with each other (autograd, its ``np`` and scipy functions
    swapped in, against central differences), so each mode is checked against both."""
    if w.autograd:
        pytest.skip(f"autograd: {w.autograd}")
    fn = w.fn
    namespace = {**fn.__globals__, **AUTOGRAD_NAMES}
    fn = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    fn.__kwdefaults__ = w.fn.__kwdefaults__
    args = inputs(w)
    with contextlib.redirect_stdout(io.StringIO()):
        for i in w.wrt:
            want = structured_central_difference(w.fn, list(args), i)
            got = _leaves(autograd.grad(fn, i)(*args))
            for g, e in zip(got, want, strict=True):
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def corpus_tests(corpus: list[Objective]) -> tuple[Callable[[str], None], ...]:
    """The three parametrized tests of a corpus, for a test module to name: each mode
    against central differences (``xfail(strict=True)`` with the entry's reason where
    it has one), and autograd against central differences."""
    by_name = {w.name: w for w in corpus}

    @pytest.mark.parametrize("name", marked(corpus, "compiler"))
    def compiler(name: str) -> None:
        check_compiler(by_name[name])

    @pytest.mark.parametrize("name", marked(corpus, "tracing"))
    def tracing(name: str) -> None:
        check_tracing(by_name[name])

    @pytest.mark.parametrize("name", [w.name for w in corpus])
    def oracles(name: str) -> None:
        check_autograd(by_name[name])

    return compiler, tracing, oracles
