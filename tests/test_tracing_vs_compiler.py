"""Both modes of AD agree: tracing and the compiler give the same values and gradients
(to 1e-12) on every program of the compiler's corpora, since they call the same rules."""

import numpy as np
import pytest
from corpus_straight import CORPUS

from autodiff_tutor.api import value_and_grad
from autodiff_tutor.tracing import value_and_gradient

CORPORA = [("straight", fn, sample) for fn, sample in CORPUS]
IDS = [f"{corpus}-{fn.__name__}" for corpus, fn, _ in CORPORA]


@pytest.mark.parametrize(("corpus", "fn", "sample"), CORPORA, ids=IDS)
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.filterwarnings("ignore:.*does not depend on")  # unused inputs: zero, as compiled
def test_tracing_and_compiler_agree(corpus, fn, sample, seed):
    args = sample(np.random.default_rng(seed))
    wrt = list(range(len(args)))
    traced_value, traced_grads = value_and_gradient(fn, *args, wrt=wrt)
    compiled_value, compiled_grads = value_and_grad(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(traced_value, compiled_value, rtol=1e-12, atol=1e-12)
    for i, (t, c) in enumerate(zip(traced_grads, compiled_grads, strict=True)):
        assert np.shape(t) == np.shape(c), f"gradient {i}"
        assert np.asarray(t).dtype == np.asarray(c).dtype, f"gradient {i}"
        np.testing.assert_allclose(t, c, rtol=1e-12, atol=1e-12, err_msg=f"gradient {i}")
