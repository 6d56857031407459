"""What tracing reaches, corpus by corpus: every program of the compiler's corpora
(models, public, python, objects) and of the course-assignment corpus that tracing
refuses, and why, in one list. Each corpus's own test marks these ``xfail(strict=True)``
(so a refusal that stops happening, or a new one, fails there); this test keeps the list
in one place and holds tracing to at least 95% of each corpus."""

import corpus_assignments
import corpus_models
import corpus_public
import pytest
from corpus_objects import load_all as objects
from corpus_objects.today import TRACING as OBJECTS_REFUSED
from corpus_python import PROGRAMS as PYTHON

#: corpus -> program -> why tracing refuses it (located errors, all of them)
REFUSED = {
    "models": {},
    "public": {
        "gp_nll_cho_solve": "scipy.linalg.cho_factor has no derivative rule",
        "bincount_and_add_at": "np.bincount has no derivative rule",
        "unpack_rows_flip_roll": "x.flat has no derivative rule",
        "float_cast_result": "float() of a value that carries gradient: a true escape",
    },
    "python": {},
    "objects": {},
    "assignments": {
        "layer_method_fills_its_output": "np.zeros made in a method: numpy's own array there",
        "float32_cast_of_a_value": "np.float32(t) converts (and rounds) the traced value",
    },
}


def _refused() -> dict[str, dict[str, str]]:
    return {
        "models": {m.name: m.tracing for m in corpus_models.load_all() if m.tracing},
        "public": {o.fn.__name__: o.tracing for o in corpus_public.load_all() if o.tracing},
        "python": {p.name: p.tracing for p in PYTHON if p.tracing},
        "objects": dict(OBJECTS_REFUSED),
        "assignments": {p.name: p.tracing for p in corpus_assignments.load_all() if p.tracing},
    }


def _sizes() -> dict[str, int]:
    return {
        "models": len(corpus_models.load_all()),
        "public": len(corpus_public.load_all()),
        "python": len(PYTHON),
        "objects": len(objects()),
        "assignments": len(corpus_assignments.load_all()),
    }


def test_these_are_all_the_programs_tracing_refuses():
    refused = _refused()
    assert {c: sorted(r) for c, r in refused.items()} == {c: sorted(r) for c, r in REFUSED.items()}


@pytest.mark.parametrize("corpus", list(REFUSED))
def test_tracing_reaches_95_percent_of_each_corpus(corpus):
    size = _sizes()[corpus]
    assert size - len(REFUSED[corpus]) >= 0.95 * size, (corpus, size, REFUSED[corpus])
